"""The Spark engine on a cluster.

Settings (no Spark needed): Spark's own configuration (spark-submit, spark-defaults.conf, hive-site.xml,
PYSPARK_SUBMIT_ARGS) wins over the project's local defaults, which apply only where it says nothing;
catalog locations may be URIs; child processes and dbt's session get the same configuration.

The cluster (``make test-cluster``; marked ``cluster``, needs the [spark] extra and Java 17): see
test_the_demo_on_a_standalone_cluster_equals_postgres below.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

import pytest
from rich.console import Console

from demo import generator
from demo.job import run_demo
from tests.test_spark_demo import SCORES, rules
from warehouse.dbt import run_dbt
from warehouse.engine import DEFAULT_CATALOG, LOG4J_CONFIG, SparkSettings, dbt_env, project_conf, spark_conf
from warehouse.errors import ConfigurationError
from warehouse.export import export
from warehouse.settings import PROJECT_ROOT
from warehouse.spark_defaults import parse_submit_args, read_properties
from warehouse.target import Target


def settings_with(tmp_path: Path, defaults: str = "", files: dict[str, str] | None = None, **environ):
    """SparkSettings made from an environment whose Spark configuration folder holds `defaults` as its
    spark-defaults.conf (and `files`)."""
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "spark-defaults.conf").write_text(defaults)
    for name, text in (files or {}).items():
        (conf / name).write_text(text)
    return SparkSettings.from_environment({"SPARK_CONF_DIR": str(conf), **environ})


def test_spark_defaults_files_are_read_as_spark_reads_them(tmp_path):
    path = tmp_path / "spark-defaults.conf"
    path.write_text(
        "# a comment\n"
        "! another\n"
        "spark.master   spark://h:7077\n"
        "spark.executor.memory=2g\n"
        "spark.sql.shuffle.partitions : 400\n"
        "spark.driver.extraJavaOptions -Da=1 \\\n"
        "    -Db=2\n"
        "\n"
        "spark.empty\n"
    )
    assert read_properties(path) == {
        "spark.master": "spark://h:7077",
        "spark.executor.memory": "2g",
        "spark.sql.shuffle.partitions": "400",
        "spark.driver.extraJavaOptions": "-Da=1 -Db=2",
        "spark.empty": "",
    }
    assert read_properties(tmp_path / "absent.conf") == {}


def test_pyspark_submit_args_are_read_as_spark_submit_reads_them(tmp_path):
    args = (
        "--master spark://h:7077 --conf spark.sql.shuffle.partitions=400 --executor-memory=1g "
        "--archives env.tar.gz#env -c 'spark.driver.extraJavaOptions=-Da=1 -Db=2' --verbose pyspark-shell"
    )
    assert parse_submit_args(args) == (
        None,
        {
            "spark.master": "spark://h:7077",
            "spark.sql.shuffle.partitions": "400",
            "spark.executor.memory": "1g",
            "spark.archives": "env.tar.gz#env",
            "spark.driver.extraJavaOptions": "-Da=1 -Db=2",
        },
    )
    with pytest.raises(ConfigurationError, match="'--jars-typo' is not a spark-submit option"):
        parse_submit_args("--jars-typo x pyspark-shell")
    with pytest.raises(ConfigurationError, match="expected KEY=VALUE"):
        parse_submit_args("--conf spark.master pyspark-shell")
    # --properties-file replaces spark-defaults.conf, the options go over it
    other = tmp_path / "other.conf"
    other.write_text("spark.master local[1]\nspark.executor.cores 3\n")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.executor.memory 8g\n")
    environ = {"SPARK_CONF_DIR": str(conf), "PYSPARK_SUBMIT_ARGS": f"--properties-file {other} --master yarn"}
    assert dict(SparkSettings.from_environment(environ).cluster) == {
        "spark.master": "yarn",
        "spark.executor.cores": "3",
    }


def test_nothing_configured_gives_the_local_defaults(tmp_path):
    settings = settings_with(tmp_path, SHERLIIC_SPARK_DIR=str(tmp_path / "catalog"))
    conf = spark_conf(settings)
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.sql.shuffle.partitions"] == "8" and conf["spark.ui.enabled"] == "false"
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "catalog" / "spark-warehouse")
    assert (
        f"databaseName={tmp_path / 'catalog' / 'metastore_db'};"
        in (conf["spark.hadoop.javax.jdo.option.ConnectionURL"])
    )
    java_options = conf["spark.driver.extraJavaOptions"].split()
    assert f"-Dderby.system.home={tmp_path / 'catalog'}" in java_options
    assert f"-Dlog4j.configurationFile={LOG4J_CONFIG}" in java_options


def test_the_clusters_settings_win_over_the_local_defaults(tmp_path):
    defaults = (
        "spark.master spark://h:7077\n"
        "spark.sql.warehouse.dir s3a://bucket/sherliic\n"
        "spark.hadoop.hive.metastore.uris thrift://metastore:9083\n"
        "spark.sql.ansi.enabled true\n"
        "spark.pyspark.python python3.11\n"
        "spark.driver.extraJavaOptions -Dx=1\n"
    )
    args = "--conf spark.sql.shuffle.partitions=400 pyspark-shell"
    settings = settings_with(tmp_path, defaults, PYSPARK_SUBMIT_ARGS=args)
    ours = project_conf(settings)
    for key in ("spark.master", "spark.sql.warehouse.dir", "spark.hadoop.javax.jdo.option.ConnectionURL"):
        assert key not in ours, key
    # the cluster's own defaults where it sets none: not the local mode's (8 partitions, no web UI)
    for key in ("spark.sql.shuffle.partitions", "spark.ui.enabled", "spark.sql.ansi.enabled"):
        assert key not in ours, key
    conf = spark_conf(settings)
    assert conf["spark.master"] == "spark://h:7077"
    assert conf["spark.sql.shuffle.partitions"] == "400"
    assert conf["spark.sql.ansi.enabled"] == "true"
    assert conf["spark.pyspark.python"] == settings.python_for_workers() == "python3.11"
    # the project's logging is added to the driver's Java options, not put in their place; no Derby
    assert conf["spark.driver.extraJavaOptions"].startswith("-Dx=1 -Dlog4j.configurationFile=")
    assert "derby" not in conf["spark.driver.extraJavaOptions"]


def test_a_master_alone_keeps_the_project_catalog(tmp_path):
    """A cluster's master with no catalog settings: the project's catalog, the cluster's partitions."""
    settings = settings_with(tmp_path, "spark.master spark://h:7077\n", SHERLIIC_SPARK_DIR=str(tmp_path))
    conf = project_conf(settings)
    assert "spark.master" not in conf
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "spark-warehouse")
    assert "spark.sql.shuffle.partitions" not in conf and "spark.ui.enabled" not in conf


def test_the_projects_explicit_settings_win(tmp_path):
    settings = settings_with(
        tmp_path,
        "spark.master spark://h:7077\nspark.sql.shuffle.partitions 400\n",
        SHERLIIC_SPARK_MASTER="local[1]",
        SHERLIIC_SPARK_SHUFFLE_PARTITIONS="3",
    )
    conf = spark_conf(settings)
    assert (conf["spark.master"], conf["spark.sql.shuffle.partitions"]) == ("local[1]", "3")


def test_configuration_files_of_the_cluster_are_respected(tmp_path):
    files = {"hive-site.xml": "<configuration/>", "log4j2.properties": "rootLogger.level = info\n"}
    conf = project_conf(settings_with(tmp_path, files=files))
    assert "spark.hadoop.javax.jdo.option.ConnectionURL" not in conf
    assert "spark.driver.extraJavaOptions" not in conf


def test_the_catalog_may_be_a_uri(tmp_path):
    metastore = "spark.hadoop.hive.metastore.uris thrift://metastore:9083\n"
    settings = settings_with(tmp_path, metastore, SHERLIIC_SPARK_DIR="hdfs://namenode/sherliic/")
    assert settings.catalog_dir == "hdfs://namenode/sherliic/"
    assert spark_conf(settings)["spark.sql.warehouse.dir"] == "hdfs://namenode/sherliic/spark-warehouse"
    # the embedded metastore is a local Derby database: it cannot live at a URI
    with pytest.raises(ConfigurationError, match="configure a shared one"):
        project_conf(settings_with(tmp_path, SHERLIIC_SPARK_DIR="s3a://bucket/sherliic"))
    local = settings_with(tmp_path, SHERLIIC_SPARK_DIR=f"file://{tmp_path}/catalog")
    assert local.catalog_dir == tmp_path / "catalog"
    assert SparkSettings.from_environment({}).catalog_dir == DEFAULT_CATALOG


def test_children_and_dbt_get_the_same_configuration(tmp_path):
    defaults = "spark.master spark://h:7077\nspark.executor.memory 1g\n"
    args = "--conf 'spark.driver.extraJavaOptions=-Da=1 -Db=2' pyspark-shell"
    settings = settings_with(tmp_path, defaults, PYSPARK_SUBMIT_ARGS=args)
    target = Target(engine="spark", spark=settings)
    parent = {"SPARK_CONF_DIR": str(tmp_path / "conf"), "PYSPARK_GATEWAY_SECRET": "s", "PATH": "/bin"}
    child = target.environment(parent)
    assert "PYSPARK_GATEWAY_SECRET" not in child  # a child never attaches to this process's JVM
    assert Target.from_environment(child) == target
    _, passed = parse_submit_args(child["PYSPARK_SUBMIT_ARGS"])
    assert passed == dict(settings.cluster)
    # dbt's session: the whole configuration, Spark's and the project's
    dbt = dbt_env(settings)
    assert shlex.split(dbt["PYSPARK_SUBMIT_ARGS"])[-1] == "pyspark-shell"
    assert parse_submit_args(dbt["PYSPARK_SUBMIT_ARGS"])[1] == spark_conf(settings)
    assert "PYSPARK_GATEWAY_SECRET" not in target.dbt_env(parent)


# -- the cluster -----------------------------------------------------------------------------------------
SPARK_MODULES = ("pyspark", "dbt.adapters.spark", "pyhive")
needs_cluster = pytest.mark.skipif(
    any(importlib.util.find_spec(module) is None for module in SPARK_MODULES) or shutil.which("java") is None,
    reason="the cluster test needs the [spark] extra (make spark-deps: pyspark, dbt-spark, PyHive), Java 17",
)
WORKER_MEMORY = "2g"  # each worker: 1 core, 2 GiB; each executor 1 GiB + 512 MiB overhead fits in it
SUBMIT_SCRIPT = PROJECT_ROOT / "warehouse" / "spark" / "submit.py"
LOAD_APP = "sherliic-load"
THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
START_TIMEOUT = 600  # seconds for a daemon or server to come up on a loaded machine


def spark_home() -> Path:
    """The installed pyspark package, which is a Spark distribution of its own (bin/spark-class ...)."""
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(
    condition,
    what: str,
    timeout: float = START_TIMEOUT,
    process: subprocess.Popen | None = None,
    poll: float = 1.0,
):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what}: the process ended with exit code {process.returncode}")
        time.sleep(poll)
    raise AssertionError(f"{what}: not within {timeout} s")


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def python_worker(pid: int) -> bool:
    try:
        return b"pyspark.daemon" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def run_logged(root: Path, name: str, argv: list[str], env: dict[str, str]) -> None:
    log = root / "logs" / f"{name}.log"
    with log.open("w") as out:
        code = subprocess.run(argv, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    assert code == 0, f"{name} failed:\n" + log.read_text()[-3000:]


def children(pid: int) -> list[int]:
    """Every descendant of a process (Linux /proc)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Cluster:
    """A standalone cluster on this machine from the installed pyspark: a master and workers, each a
    process group of its own (a worker's executors and their Python workers belong to it), each worker
    with a working directory of its own. Everything started is stopped by stop()."""

    def __init__(self, root: Path, conf_dir: Path):
        self.root, self.conf_dir = root, conf_dir
        self.port, self.web_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen] = {}
        (root / "logs").mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SPARK_CONF_DIR": str(self.conf_dir),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "512m",
            # a master's REST server takes a fixed port (6066): not needed, and another test may hold it
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        }

    def start(self, name: str, argv: list[str], cwd: Path | None = None) -> subprocess.Popen:
        log = (self.root / "logs" / f"{name}.log").open("w")
        process = subprocess.Popen(
            argv, cwd=cwd, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes[name] = process
        return process

    def start_master(self) -> None:
        spark_class = str(spark_home() / "bin" / "spark-class")
        argv = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
        process = self.start("master", [*argv, "--port", str(self.port), "--webui-port", str(self.web_port)])
        wait_for(lambda: self.state() is not None, "the master", process=process)

    def start_worker(self, name: str) -> None:
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        argv = [str(spark_home() / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker", self.url]
        argv += ["--host", "127.0.0.1", "--cores", "1", "--memory", WORKER_MEMORY]
        argv += ["--work-dir", str(folder), "--webui-port", str(free_port())]
        self.start(name, argv, cwd=folder)

    def state(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as answer:
                return json.load(answer)
        except OSError:
            return None

    def wait_for_workers(self, n: int) -> None:
        wait_for(lambda: (self.state() or {}).get("aliveworkers") == n, f"{n} workers alive")

    def stop(self, *names: str) -> None:
        """SIGTERM the named process groups (default: all), SIGKILL what is left after 30 s."""
        for name in names or list(self.processes):
            process = self.processes[name]
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill(name)
            self.processes.pop(name, None)

    def worker_running_python(self) -> str | None:
        """The worker one of whose executors runs a Python worker (a Python task), if any."""
        for name, process in self.processes.items():
            if name.startswith("worker") and any(python_worker(pid) for pid in children(process.pid)):
                return name
        return None

    def kill(self, name: str) -> None:
        """SIGKILL a process group: a worker goes with its executors and their Python workers."""
        process = self.processes.pop(name)
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def event_logs(folder: Path) -> list[tuple[str, list[dict]]]:
    """(application name, events) of every application's event log, in the order they started."""
    logs = []
    for app in sorted(folder.iterdir()):
        events = [json.loads(line) for part in sorted(app.glob("events_*")) for line in part.open()]
        start = next(e for e in events if e["Event"] == "SparkListenerApplicationStart")
        logs.append((start["App Name"], events))
    return logs


def spark_properties(events: list[dict]) -> dict[str, str]:
    update = next(e for e in events if e["Event"] == "SparkListenerEnvironmentUpdate")
    properties = update["Spark Properties"]
    return dict(properties.items() if isinstance(properties, dict) else properties)


def task_executors(events: list[dict]) -> set[str]:
    return {
        e["Task Info"]["Executor ID"]
        for e in events
        if e["Event"] == "SparkListenerTaskEnd" and e["Task End Reason"]["Reason"] == "Success"
    }


def spark_defaults(root: Path, master: str) -> str:
    """The cluster's spark-defaults.conf: the master, the shared catalog (warehouse folder and metastore),
    executors that fit a worker, event logs for the checks. Nothing of the project's environment."""
    catalog = root / "catalog"
    return "\n".join(
        [
            f"spark.master {master}",
            f"spark.sql.warehouse.dir {(catalog / 'spark-warehouse').as_uri()}",
            "spark.hadoop.javax.jdo.option.ConnectionURL "
            f"jdbc:derby:;databaseName={catalog / 'metastore_db'};create=true",
            f"spark.driver.extraJavaOptions -Dderby.system.home={catalog}",
            "spark.executor.memory 1g",
            "spark.executor.memoryOverhead 512m",
            "spark.sql.shuffle.partitions 4",
            "spark.ui.enabled false",
            "spark.eventLog.enabled true",
            f"spark.eventLog.dir {(root / 'events').as_uri()}",
            "spark.eventLog.compress false",
            "",
        ]
    )


def submit_argv(root: Path, command: list[str], *options: str) -> list[str]:
    """docs/spark.md's recipe: the project's code and spaCy's model travel to the executors in the
    packed folder (make spark-package), whose Python has nothing else; the driver runs this venv."""
    return [
        str(spark_home() / "bin" / "spark-submit"),
        "--archives",
        f"{root / 'dist' / 'sherliic-executor.tar.gz'}#sherliic",
        "--conf",
        "spark.executorEnv.PYTHONPATH=sherliic",
        "--conf",
        f"spark.pyspark.python={root / 'worker-python' / 'bin' / 'python'}",
        "--conf",
        f"spark.pyspark.driver.python={sys.executable}",
        *options,
        str(SUBMIT_SCRIPT),
        *command,
    ]


@needs_cluster
@pytest.mark.cluster
def test_the_demo_on_a_standalone_cluster_equals_postgres(fresh_target: Target, tmp_path: Path):
    """make test-cluster: a master and two workers (separate processes, working directories of their
    own); the project packed by `make spark-package` for workers whose Python has nothing installed;
    the demo's types and corpus loaded by spark-submit (a worker killed in the middle of the corpus
    load), dbt through the Thrift server (ANSI mode on, Spark 4's default), the export through a
    session whose master is only in spark-defaults.conf: the release files equal Postgres'."""
    root = tmp_path
    conf_dir, events = root / "conf", root / "events"
    conf_dir.mkdir()
    events.mkdir()
    cluster = Cluster(root, conf_dir)
    (conf_dir / "spark-defaults.conf").write_text(spark_defaults(root, cluster.url))
    quiet = Console(file=io.StringIO())
    try:
        cluster.start_master()
        cluster.start_worker("worker-1")
        cluster.start_worker("worker-2")
        # the workers' Python: an interpreter with nothing installed
        subprocess.run(
            [sys._base_executable, "-m", "venv", "--without-pip", root / "worker-python"], check=True
        )
        package = subprocess.Popen(
            ["make", "--no-print-directory", "spark-package", f"DIST={root / 'dist'}"],
            cwd=PROJECT_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        # meanwhile: the reference, the same demo corpus on Postgres
        on_postgres = run_demo(
            fresh_target, size=generator.MIN_SIZE, out_dir=root / "demo", processes=1, console=quiet
        )
        postgres_files = export(fresh_target, root / "export-postgres").out_dir
        assert package.wait() == 0, package.stderr.read()
        cluster.wait_for_workers(2)

        spark_env = {**cluster.env(), "SHERLIIC_ENGINE": "spark"}
        types = ["sherliic-extract", "types", "--format", "tsv", "--type-source", "demo", "--replace"]
        run_logged(
            root, "load-types", submit_argv(root, [*types, str(root / "demo" / "types.tsv")]), spark_env
        )

        # the corpus, --conf over spark-defaults.conf; the worker whose executor runs the first Python
        # task (the extraction) is killed while it runs, and comes back after the load
        corpus = ["sherliic-extract", "corpus", "--format", "jsonl", "--corpus", "demo", "--replace"]
        argv = submit_argv(
            root, [*corpus, str(root / "demo" / "corpus.jsonl")], "--conf", "spark.sql.shuffle.partitions=3"
        )
        with (root / "logs" / "load-corpus.log").open("w") as log:
            load = subprocess.Popen(argv, cwd=root, env=spark_env, stdout=log, stderr=subprocess.STDOUT)
        # killed as soon as its first Python worker exists: that worker runs a task (a few seconds of
        # spaCy), which the executor's loss then fails (a later kill could miss a task that had ended)
        victim = wait_for(
            lambda: cluster.worker_running_python(), "a Python task on a worker", process=load, poll=0.1
        )
        cluster.kill(victim)
        assert load.wait(timeout=3600) == 0, (root / "logs" / "load-corpus.log").read_text()[-3000:]
        cluster.start_worker(victim)

        # each application ran on the cluster with its settings: spark-defaults.conf's, the --conf over them
        types_events, corpus_events = [
            events for name, events in event_logs(root / "events") if name == LOAD_APP
        ]
        warehouse = (root / "catalog" / "spark-warehouse").as_uri()
        for app, partitions in ((types_events, "4"), (corpus_events, "3")):
            properties = spark_properties(app)
            assert properties["spark.master"] == cluster.url
            assert properties["spark.sql.warehouse.dir"].rstrip("/") == warehouse.rstrip("/")
            assert properties["spark.sql.shuffle.partitions"] == partitions
            assert task_executors(app) and "driver" not in task_executors(app)
        assert any(e["Event"] == "SparkListenerExecutorRemoved" for e in corpus_events), "no executor lost"
        lost = [e for e in corpus_events if e["Event"] == "SparkListenerTaskEnd"]
        assert any(e["Task End Reason"]["Reason"] == "ExecutorLostFailure" for e in lost), "no task lost"
        assert (root / "catalog" / "metastore_db").is_dir()

        # dbt through the cluster's Thrift server (ANSI mode on, its default), then the server stops: the
        # embedded Derby metastore admits one process at a time
        port = free_port()
        options = [
            "--hiveconf",
            f"hive.server2.thrift.port={port}",
            "--hiveconf",
            "hive.server2.thrift.bind.host=127.0.0.1",
        ]
        thrift = cluster.start(
            "thrift-server",
            [str(spark_home() / "bin" / "spark-submit"), "--class", THRIFT_SERVER, *options],
            cwd=root,
        )
        wait_for(lambda: port_open(port), "the Thrift server", process=thrift)
        spark_target = Target.from_environment(spark_env, engine="spark")
        thrift_env = {"SHERLIIC_SPARK_THRIFT_HOST": "127.0.0.1", "SHERLIIC_SPARK_THRIFT_PORT": str(port)}
        run_dbt(
            spark_target,
            ["--quiet", "run", "--target", "spark_thrift"],
            {"corpora": ["demo"]},
            env=thrift_env,
        )
        cluster.stop("thrift-server")

        # the export: a session started by pyspark itself, the master only in spark-defaults.conf
        command = [
            str(Path(sys.executable).parent / "sherliic-export"),
            "--engine",
            "spark",
            "--out",
            str(root / "export-spark"),
        ]
        run_logged(root, "export", command, spark_env)
        ((_, export_events),) = [item for item in event_logs(root / "events") if item[0] == "sherliic-marts"]
        assert spark_properties(export_events)["spark.master"] == cluster.url
        assert task_executors(export_events) and "driver" not in task_executors(export_events)
    finally:
        cluster.stop()

    spark_files = root / "export-spark"
    for name in ("teg.tsv", "teg-untyped.tsv", "relation_index.tsv", "entity_index.tsv", "type_index.json"):
        assert (spark_files / name).read_bytes() == (postgres_files / name).read_bytes(), name
    spark_rules, postgres_rules = rules(spark_files / "rules.tsv"), rules(postgres_files / "rules.tsv")
    assert len(spark_rules) == len(postgres_rules) == on_postgres.n_candidates > 20
    for s, p in zip(spark_rules, postgres_rules, strict=True):
        assert {k: v for k, v in s.items() if k not in SCORES} == {
            k: v for k, v in p.items() if k not in SCORES
        }
        for key in SCORES:
            assert math.isclose(float(s[key]), float(p[key]), rel_tol=1e-9), (key, s, p)

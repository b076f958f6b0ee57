"""A standalone Spark cluster on this machine, from the installed pyspark (a master and two workers, each a
process of its own with its own working directory), and the demo built on it as a cluster user builds it:
the project packed for workers whose Python has nothing installed (`make spark-package`), the loads by
spark-submit, dbt through the cluster's Thrift server, the export through a session whose master is only in
spark-defaults.conf. Used by tests/test_spark_demo.py (`make test-cluster`); needs the [spark] extra and
Java 17."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from builds.runner import run_dbt
from demo import generator
from demo.job import DemoSummary, run_demo
from release.export import export
from warehouse.settings import PROJECT_ROOT
from warehouse.target import Target

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
        (root / "local").mkdir(exist_ok=True)

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SPARK_CONF_DIR": str(self.conf_dir),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "512m",
            # scratch space of the driver, workers and executors (shipped archives, shuffle files) inside
            # the test's folder: a worker killed on purpose cannot clean up, and /tmp kept 0.1-0.3 GB a run
            "SPARK_LOCAL_DIRS": str(self.root / "local"),
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


@dataclass(frozen=True)
class ClusterDemo:
    """What building the demo on the cluster left: its folder (logs/, events/, catalog/), the same demo on
    Postgres with its release files, and the release files exported from the cluster's catalog."""

    root: Path
    master: str  # the cluster's spark:// URL
    on_postgres: DemoSummary
    postgres_files: Path
    spark_files: Path

    @property
    def catalog(self) -> Path:
        return self.root / "catalog"


def build_demo_on_cluster(root: Path, postgres: Target) -> ClusterDemo:
    """The demo's types and corpus loaded by spark-submit (the worker running the first extraction task
    killed in the middle of the corpus load), dbt through the Thrift server (ANSI mode on, Spark 4's
    default), the export through a session whose master is only in spark-defaults.conf; the same demo on
    `postgres` meanwhile. Everything started is stopped before it returns."""
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
            postgres, size=generator.MIN_SIZE, out_dir=root / "demo", processes=1, console=quiet
        )
        postgres_files = export(postgres, root / "export-postgres").out_dir
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
    finally:
        cluster.stop()
    return ClusterDemo(root, cluster.url, on_postgres, postgres_files, root / "export-spark")

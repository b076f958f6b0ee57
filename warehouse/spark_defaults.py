"""What Spark's own configuration sets, read once at a command's edge (:meth:`SparkSettings.from_environment
<warehouse.engine.SparkSettings.from_environment>`), so that a cluster's settings win over the project's
local defaults:

- under ``spark-submit`` (the process is the driver of a submitted application, PYSPARK_GATEWAY_PORT is
  set): the driver JVM's configuration, which holds spark-submit's options and ``--conf`` values and
  spark-defaults.conf;
- otherwise (pyspark starts its JVM itself): spark-defaults.conf of SPARK_CONF_DIR (else
  ``$SPARK_HOME/conf``, SPARK_HOME defaulting to the installed pyspark) and the options of
  PYSPARK_SUBMIT_ARGS, which pyspark's launcher passes to spark-submit.

A child process never attaches to this process's JVM: it gets the same configuration through
PYSPARK_SUBMIT_ARGS (:func:`submit_args`), from which it reads it back here.
"""

from __future__ import annotations

import importlib.util
import shlex
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

from warehouse.errors import ConfigurationError

# spark-submit's options with a value and the property each sets (SparkSubmitArguments)
SUBMIT_OPTIONS = {
    "--master": "spark.master",
    "--deploy-mode": "spark.submit.deployMode",
    "--name": "spark.app.name",
    "--jars": "spark.jars",
    "--packages": "spark.jars.packages",
    "--exclude-packages": "spark.jars.excludes",
    "--repositories": "spark.jars.repositories",
    "--py-files": "spark.submit.pyFiles",
    "--files": "spark.files",
    "--archives": "spark.archives",
    "--driver-memory": "spark.driver.memory",
    "--driver-java-options": "spark.driver.extraJavaOptions",
    "--driver-library-path": "spark.driver.extraLibraryPath",
    "--driver-class-path": "spark.driver.extraClassPath",
    "--driver-cores": "spark.driver.cores",
    "--executor-memory": "spark.executor.memory",
    "--executor-cores": "spark.executor.cores",
    "--total-executor-cores": "spark.cores.max",
    "--num-executors": "spark.executor.instances",
    "--queue": "spark.yarn.queue",
    "--principal": "spark.kerberos.principal",
    "--keytab": "spark.kerberos.keytab",
}
SUBMIT_FLAGS = ("--verbose", "-v", "--supervise")
# one application's identity, never handed on to another application (a child process's)
APPLICATION_KEYS = (
    "spark.app.name",
    "spark.app.id",
    "spark.app.submitTime",
    "spark.app.startTime",
    "spark.driver.host",
    "spark.driver.port",
    "spark.executor.id",
    "spark.submit.deployMode",
    "spark.pyspark.driver.python",
)
PYSPARK_SHELL = "pyspark-shell"  # the launcher's resource name: PYSPARK_SUBMIT_ARGS must end with it


# files of Spark's configuration folder that configure what the project would otherwise set
CONF_FILES = ("hive-site.xml", "log4j2.properties")


def cluster_conf(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Every property Spark's own configuration sets for a session started by this process, sorted."""
    if "PYSPARK_GATEWAY_PORT" in environ:
        conf = submitted_conf()
    else:
        properties_file, options = parse_submit_args(environ.get("PYSPARK_SUBMIT_ARGS", ""))
        # spark-submit reads --properties-file instead of spark-defaults.conf
        conf = {**read_properties(properties_file or defaults_file(environ)), **options}
    return tuple(sorted((k, v) for k, v in conf.items() if k not in APPLICATION_KEYS))


def quiet_pyspark_warnings() -> None:
    """pyspark 4.3 warns on import and on every pandas conversion that pandas 3 is "not yet fully
    supported", and its own toPandas code passes pandas 3's deprecated `copy=`; the constraints pin the
    pandas the engine tests pass with, so neither warning says anything a user can act on."""
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated", module="pyspark")


def submitted_conf() -> dict[str, str]:
    """The configuration of the driver JVM spark-submit started (its options, --conf, spark-defaults.conf)."""
    quiet_pyspark_warnings()
    from pyspark import SparkConf, SparkContext  # the [spark] extra: only in a spark-submit driver

    SparkContext._ensure_initialized()  # attaches to spark-submit's JVM (PYSPARK_GATEWAY_PORT)
    return dict(SparkConf().getAll())


def conf_files(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Which of CONF_FILES Spark's configuration folder holds (a hive-site.xml configures the
    metastore, a log4j2.properties the logging)."""
    folder = conf_dir(environ)
    return tuple(name for name in CONF_FILES if folder is not None and (folder / name).is_file())


def conf_dir(environ: Mapping[str, str]) -> Path | None:
    """Spark's configuration folder: SPARK_CONF_DIR, else $SPARK_HOME/conf (SPARK_HOME: the installed
    pyspark package when unset, as its launcher does)."""
    if environ.get("SPARK_CONF_DIR"):
        return Path(environ["SPARK_CONF_DIR"])
    home = environ.get("SPARK_HOME")
    if not home:
        spec = importlib.util.find_spec("pyspark")
        if spec is None or spec.origin is None:
            return None
        home = str(Path(spec.origin).parent)
    return Path(home) / "conf"


def defaults_file(environ: Mapping[str, str]) -> Path | None:
    """The spark-defaults.conf spark-submit reads."""
    folder = conf_dir(environ)
    return None if folder is None else folder / "spark-defaults.conf"


def read_properties(path: Path | None) -> dict[str, str]:
    """A Java properties file as Spark reads spark-defaults.conf: `key value`, `key=value` or
    `key:value` per line, `#`/`!` comments, a trailing backslash continues a line; values trimmed."""
    if path is None or not path.is_file():
        return {}
    properties: dict[str, str] = {}
    for line in logical_lines(path.read_text(encoding="utf-8").splitlines()):
        key, value = split_property(line)
        properties[key] = value.strip()
    return properties


def logical_lines(lines: Iterable[str]) -> list[str]:
    joined: list[str] = []
    pending = ""
    for raw in lines:
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes: the line goes on
            pending += line[:-1]
            continue
        joined.append(pending + line)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def split_property(line: str) -> tuple[str, str]:
    """(key, value) of one logical line: the key ends at the first unescaped whitespace, `=` or `:`."""
    i = 0
    while i < len(line) and line[i] not in " \t\f=:":
        i += 2 if line[i] == "\\" else 1
    key = line[:i].replace("\\", "")
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def parse_submit_args(text: str) -> tuple[Path | None, dict[str, str]]:
    """PYSPARK_SUBMIT_ARGS read: its --properties-file (None: spark-defaults.conf is read) and the
    properties its options set."""
    words = shlex.split(text)
    if words and words[-1] == PYSPARK_SHELL:
        words = words[:-1]
    properties_file: Path | None = None
    options: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        name, has_value, inline = word.partition("=")
        if word in SUBMIT_FLAGS:
            i += 1
            continue
        if name not in (*SUBMIT_OPTIONS, "--conf", "-c", "--properties-file"):
            raise ConfigurationError(
                f"PYSPARK_SUBMIT_ARGS: {word!r} is not a spark-submit option this project reads; "
                "give it as --conf KEY=VALUE"
            )
        if has_value and name.startswith("--"):
            value, i = inline, i + 1
        elif i + 1 < len(words):
            value, i = words[i + 1], i + 2
        else:
            raise ConfigurationError(f"PYSPARK_SUBMIT_ARGS: {name} needs a value")
        if name in ("--conf", "-c"):
            key, equals, setting = value.partition("=")
            if not equals:
                raise ConfigurationError(f"PYSPARK_SUBMIT_ARGS: --conf {value!r}: expected KEY=VALUE")
            options[key] = setting
        elif name == "--properties-file":
            properties_file = Path(value)
        else:
            options[SUBMIT_OPTIONS[name]] = value
    return properties_file, options


def submit_args(conf: Mapping[str, str]) -> str:
    """PYSPARK_SUBMIT_ARGS that start a child's JVM with these properties."""
    return " ".join([*(f"--conf {shlex.quote(f'{k}={v}')}" for k, v in sorted(conf.items())), PYSPARK_SHELL])

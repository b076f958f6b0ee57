"""The Spark engine's settings and session (a Target with engine "spark"; `pip install -e '.[spark]'`,
Java 17).

Spark's own configuration wins (warehouse.spark_defaults reads it at the command's edge): spark-submit's
options, spark-defaults.conf and hive-site.xml of SPARK_CONF_DIR, PYSPARK_SUBMIT_ARGS, a session the
caller built. The project adds its defaults only for what that leaves unset:
- anywhere: the catalog folder (SHERLIIC_SPARK_DIR, default `.spark/`; a folder or a URI such as
  hdfs:///sherliic or s3a://bucket/sherliic) holds the warehouse (`spark-warehouse/`) and, when it is a
  local folder, the embedded Derby metastore (`metastore_db/`, one process at a time) and derby.log;
  ANSI mode off and UTC timestamps (as dbt-spark's session), no console progress bars, Spark's errors only;
- in local mode only (the master is local): `local[2]`, 8 shuffle partitions, no web UI.
SHERLIIC_SPARK_MASTER and SHERLIIC_SPARK_SHUFFLE_PARTITIONS are explicit choices and win over both.
The same settings reach dbt's session (dbt_env: PYSPARK_SUBMIT_ARGS) and child processes
(SparkSettings.environment), so loaders, dbt and the export see one catalog.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from warehouse import spark_defaults
from warehouse.errors import ConfigurationError
from warehouse.settings import PROJECT_ROOT

DEFAULT_SPARK_MASTER = "local[2]"
LOG_LEVELS = ("off", "fatal", "error", "warn", "info", "debug", "trace", "all")  # log4j2's
DEFAULT_CATALOG = PROJECT_ROOT / ".spark"
LOG4J_CONFIG = Path(__file__).parent / "spark" / "log4j2.properties"
METASTORE_KEYS = (
    "spark.hadoop.hive.metastore.uris",
    "spark.hive.metastore.uris",
    "spark.hadoop.javax.jdo.option.ConnectionURL",
)
WAREHOUSE_KEYS = ("spark.sql.warehouse.dir", "spark.hadoop.hive.metastore.warehouse.dir")
URI = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]+:")  # a scheme of two letters or more (not a drive letter)


@dataclass(frozen=True)
class SparkSettings:
    """The Spark engine's settings: the project's own (SHERLIIC_SPARK_*) and what Spark's configuration
    sets (``cluster``: property -> value, ``conf_files``: see warehouse.spark_defaults)."""

    catalog_dir: Path | str = DEFAULT_CATALOG  # a local folder (Path) or a URI (str: hdfs:, s3a:, ...)
    master: str | None = None  # None: Spark's configured master, else local[2]
    shuffle_partitions: str | None = None  # None: Spark's configured value, else 8 in local mode
    log_level: str = "error"
    dbt_threads: int = 2
    cluster: tuple[tuple[str, str], ...] = ()
    conf_files: tuple[str, ...] = ()
    worker_python: str | None = None  # PYSPARK_PYTHON

    def __post_init__(self) -> None:
        object.__setattr__(self, "catalog_dir", catalog_location(self.catalog_dir))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> SparkSettings:
        threads = environ.get("SHERLIIC_SPARK_DBT_THREADS", "2")
        if not threads.isdigit() or int(threads) < 1:
            raise ConfigurationError(f"SHERLIIC_SPARK_DBT_THREADS={threads!r}: expected a positive integer")
        partitions = environ.get("SHERLIIC_SPARK_SHUFFLE_PARTITIONS") or None
        if partitions is not None and (not partitions.isdigit() or int(partitions) < 1):
            raise ConfigurationError(
                f"SHERLIIC_SPARK_SHUFFLE_PARTITIONS={partitions!r}: expected a positive integer"
            )
        log_level = environ.get("SHERLIIC_SPARK_LOG_LEVEL") or "error"
        if log_level.lower() not in LOG_LEVELS:
            raise ConfigurationError(
                f"SHERLIIC_SPARK_LOG_LEVEL={log_level!r}: expected one of {', '.join(LOG_LEVELS)}"
            )
        return cls(
            catalog_dir=environ.get("SHERLIIC_SPARK_DIR") or DEFAULT_CATALOG,
            master=environ.get("SHERLIIC_SPARK_MASTER") or None,
            shuffle_partitions=partitions,
            log_level=log_level,
            dbt_threads=int(threads),
            cluster=spark_defaults.cluster_conf(environ),
            conf_files=spark_defaults.conf_files(environ),
            worker_python=environ.get("PYSPARK_PYTHON") or None,
        )

    def environment(self) -> dict[str, str | None]:
        """The variables from which :meth:`from_environment` makes these settings again (None: the
        variable must be unset), for a child process's environment. A child never attaches to this
        process's JVM (a spark-submit driver's): Spark's configuration reaches it in PYSPARK_SUBMIT_ARGS."""
        return {
            "SHERLIIC_SPARK_DIR": str(self.catalog_dir),
            "SHERLIIC_SPARK_MASTER": self.master,
            "SHERLIIC_SPARK_SHUFFLE_PARTITIONS": self.shuffle_partitions,
            "SHERLIIC_SPARK_LOG_LEVEL": self.log_level,
            "SHERLIIC_SPARK_DBT_THREADS": str(self.dbt_threads),
            "PYSPARK_SUBMIT_ARGS": spark_defaults.submit_args(dict(self.cluster)) if self.cluster else None,
            "PYSPARK_GATEWAY_PORT": None,
            "PYSPARK_GATEWAY_SECRET": None,
            "PYSPARK_PYTHON": self.worker_python,
        }

    @property
    def local_catalog(self) -> bool:
        return isinstance(self.catalog_dir, Path)

    def location(self, name: str) -> str:
        """A folder of the catalog, as a path (local catalog) or a URI."""
        if isinstance(self.catalog_dir, Path):
            return str(self.catalog_dir / name)
        return f"{self.catalog_dir.rstrip('/')}/{name}"

    def effective_master(self) -> str:
        return self.master or dict(self.cluster).get("spark.master") or DEFAULT_SPARK_MASTER

    def python_for_workers(self) -> str:
        """The interpreter of Spark's Python workers: Spark's spark.pyspark.python, else PYSPARK_PYTHON,
        else this process's (the project's venv: right in local mode and where workers mirror it)."""
        return dict(self.cluster).get("spark.pyspark.python") or self.worker_python or sys.executable


def catalog_location(value: Path | str) -> Path | str:
    """A local folder as an absolute Path (also from a file: URI), any other URI as it is."""
    if isinstance(value, Path):
        return value.resolve()
    if URI.match(value):
        parsed = urlparse(value)
        if parsed.scheme != "file":
            return value
        value = parsed.path
    return Path(value).resolve()


def project_conf(settings: SparkSettings) -> dict[str, str]:
    """What the project sets on a session: its defaults where Spark's configuration says nothing, and its
    explicit settings (SHERLIIC_SPARK_MASTER, SHERLIIC_SPARK_SHUFFLE_PARTITIONS) over it."""
    cluster = dict(settings.cluster)
    master = settings.effective_master()
    conf: dict[str, str] = {}
    if settings.master or "spark.master" not in cluster:
        conf["spark.master"] = master
    if not any(key in cluster for key in WAREHOUSE_KEYS):
        conf["spark.sql.warehouse.dir"] = settings.location("spark-warehouse")
    java_options = []
    if not any(key in cluster for key in METASTORE_KEYS) and "hive-site.xml" not in settings.conf_files:
        if not settings.local_catalog:
            raise ConfigurationError(
                f"the Spark catalog {settings.catalog_dir} is not a local folder, so the embedded metastore "
                "cannot live there: configure a shared one (spark.hadoop.hive.metastore.uris or "
                "spark.hadoop.javax.jdo.option.ConnectionURL in spark-defaults.conf, or a hive-site.xml)"
            )
        home = settings.location("")
        conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = (
            f"jdbc:derby:;databaseName={settings.location('metastore_db')};create=true"
        )
        java_options.append(f"-Dderby.system.home={home.rstrip('/')}")  # derby.log there, not in the cwd
    theirs = cluster.get("spark.driver.extraJavaOptions", "")
    if owns_logging(settings):
        # Spark's start-up WARN lines are nothing a local user can act on: errors only by default
        java_options += [
            f"-Dlog4j.configurationFile={LOG4J_CONFIG}",
            f"-Dsherliic.spark.log.level={settings.log_level}",
        ]
    if java_options:
        conf["spark.driver.extraJavaOptions"] = " ".join([theirs, *java_options]).strip()
    defaults = {
        # dbt-spark's session turns ANSI mode off (integer overflow wraps, x/0 is null); loaders match it
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # Spark's stage bars would interleave with the project's own progress bars on stderr
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": settings.python_for_workers(),
    }
    if master.startswith("local"):
        # 200 shuffle partitions of a few rows each cost more than the work
        defaults.update({"spark.sql.shuffle.partitions": "8", "spark.ui.enabled": "false"})
    conf.update({key: value for key, value in defaults.items() if key not in cluster})
    if settings.shuffle_partitions:
        conf["spark.sql.shuffle.partitions"] = settings.shuffle_partitions
    return conf


def make_catalog_dir(settings: SparkSettings, conf: Mapping[str, str]) -> None:
    """Create the local catalog folder if the project's configuration puts the warehouse or Derby there."""
    keys = ("spark.sql.warehouse.dir", "spark.hadoop.javax.jdo.option.ConnectionURL")
    if settings.local_catalog and any(key in conf for key in keys):
        settings.catalog_dir.mkdir(parents=True, exist_ok=True)


def owns_logging(settings: SparkSettings) -> bool:
    """Whether the project sets Spark's logging (not when Spark's configuration folder or the driver's
    Java options configure log4j)."""
    theirs = dict(settings.cluster).get("spark.driver.extraJavaOptions", "")
    return "log4j2.properties" not in settings.conf_files and "log4j" not in theirs


def spark_conf(settings: SparkSettings) -> dict[str, str]:
    """The session's whole configuration: Spark's own plus what the project adds (project_conf)."""
    return {**dict(settings.cluster), **project_conf(settings)}


def dbt_env(settings: SparkSettings) -> dict[str, str]:
    """Variables of dbt's process for the profile's `spark` target (a session in dbt's process): the
    session's whole configuration goes to the JVM pyspark starts there, in PYSPARK_SUBMIT_ARGS."""
    conf = spark_conf(settings)
    make_catalog_dir(settings, project_conf(settings))
    return {
        "PYSPARK_SUBMIT_ARGS": spark_defaults.submit_args(conf),
        "SHERLIIC_SPARK_DBT_THREADS": str(settings.dbt_threads),
    }


def require_spark_extra() -> None:
    """ConfigurationError (one line naming `make spark-deps`) unless the [spark] extra is installed."""
    try:
        import pyspark  # noqa: F401 - the [spark] extra; imported only on this engine
    except ModuleNotFoundError as missing:
        raise ConfigurationError(
            f"the spark engine (--engine spark, SHERLIIC_ENGINE=spark) needs the [spark] extra, and "
            f"{missing.name} is not installed: install it with `make spark-deps` (pip install -e "
            "'.[spark]'; Java 17), or use the postgres engine"
        ) from None


def spark_session(settings: SparkSettings, app_name: str = "sherliic"):
    """The process's Spark session (created on first call) on the settings' catalog. A session that is
    already active (e.g. built by the caller with its own settings) is used as it is."""
    require_spark_extra()
    from pyspark.sql import SparkSession  # the [spark] extra; imported only on this engine

    spark_defaults.quiet_pyspark_warnings()
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    conf = project_conf(settings)
    make_catalog_dir(settings, conf)
    builder = SparkSession.builder.appName(app_name)
    if "spark.sql.catalogImplementation" not in dict(settings.cluster):
        builder = builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # spark.pyspark.python reaches spark-submit's launcher only: the RDD and UDF workers of a session
    # started from Python run SparkContext.pythonExec (PYSPARK_PYTHON when the context started, else
    # `python3` on the PATH, which need not be the venv's)
    session.sparkContext.pythonExec = settings.python_for_workers()
    if owns_logging(settings):  # also where the JVM started without the project's log4j options
        session.sparkContext.setLogLevel(settings.log_level.upper())
    return session

"""The Spark engine's settings and session (a Target with engine "spark"; `pip install -e '.[spark]'`,
Java 17): local mode by default, with its catalog in `.spark/` (SHERLIIC_SPARK_DIR):
  .spark/metastore_db/     the embedded Derby metastore (table names -> Parquet locations). Derby
                           allows ONE process at a time: run loaders and dbt one after the other.
  .spark/spark-warehouse/  the tables' Parquet files (raw.* and the dbt models' schemas).
  .spark/derby.log         Derby's log (derby.system.home), instead of the current directory.
The same settings reach dbt through its environment (dbt_project/profiles.yml, target `spark`) and
spark_session() below, so loaders and dbt see one catalog.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from warehouse.errors import ConfigurationError
from warehouse.settings import PROJECT_ROOT

DEFAULT_SPARK_MASTER = "local[2]"
LOG4J_CONFIG = Path(__file__).parent / "spark" / "log4j2.properties"


@dataclass(frozen=True)
class SparkSettings:
    """The Spark engine's own settings (SHERLIIC_SPARK_*); warehouse.engine turns them into a session."""

    catalog_dir: Path = PROJECT_ROOT / ".spark"
    master: str | None = None  # None: spark-submit's or spark-defaults.conf's master, else local[2]
    shuffle_partitions: str | None = None  # None: the local default (8)
    log_level: str = "error"
    dbt_threads: int = 2

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
        return cls(
            catalog_dir=Path(environ.get("SHERLIIC_SPARK_DIR") or PROJECT_ROOT / ".spark").resolve(),
            master=environ.get("SHERLIIC_SPARK_MASTER") or None,
            shuffle_partitions=partitions,
            log_level=environ.get("SHERLIIC_SPARK_LOG_LEVEL") or "error",
            dbt_threads=int(threads),
        )

    def environment(self) -> dict[str, str | None]:
        """The SHERLIIC_SPARK_* variables from which :meth:`from_environment` makes these settings again
        (None: the variable must be unset), for a child process's environment."""
        return {
            "SHERLIIC_SPARK_DIR": str(self.catalog_dir),
            "SHERLIIC_SPARK_MASTER": self.master,
            "SHERLIIC_SPARK_SHUFFLE_PARTITIONS": self.shuffle_partitions,
            "SHERLIIC_SPARK_LOG_LEVEL": self.log_level,
            "SHERLIIC_SPARK_DBT_THREADS": str(self.dbt_threads),
        }


def spark_conf(settings: SparkSettings) -> dict[str, str]:
    """Session settings shared by dbt (profile `spark`) and spark_session()."""
    root = settings.catalog_dir
    return {
        "spark.master": settings.master or DEFAULT_SPARK_MASTER,
        "spark.sql.warehouse.dir": str(root / "spark-warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"
        ),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={root} -Dlog4j.configurationFile={LOG4J_CONFIG} "
            f"-Dsherliic.spark.log.level={settings.log_level}"
        ),
        # dbt-spark forces ANSI mode off (integer overflow wraps, x/0 is null); loaders match it
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # local mode: 200 shuffle partitions of a few rows each cost more than the work
        "spark.sql.shuffle.partitions": settings.shuffle_partitions or "8",
        "spark.ui.enabled": "false",
        # Spark's stage bars would interleave with the project's own progress bars on stderr
        "spark.ui.showConsoleProgress": "false",
    }


def dbt_env(settings: SparkSettings) -> dict[str, str]:
    """Variables the profile's `spark` target reads (server_side_parameters)."""
    conf = spark_conf(settings)
    settings.catalog_dir.mkdir(parents=True, exist_ok=True)
    return {
        "SHERLIIC_SPARK_MASTER": conf["spark.master"],
        "SHERLIIC_SPARK_WAREHOUSE_DIR": conf["spark.sql.warehouse.dir"],
        "SHERLIIC_SPARK_METASTORE_URL": conf["spark.hadoop.javax.jdo.option.ConnectionURL"],
        "SHERLIIC_SPARK_DRIVER_OPTIONS": conf["spark.driver.extraJavaOptions"],
        "SHERLIIC_SPARK_SHUFFLE_PARTITIONS": conf["spark.sql.shuffle.partitions"],
        "SHERLIIC_SPARK_DBT_THREADS": str(settings.dbt_threads),
    }


def spark_session(settings: SparkSettings, app_name: str = "sherliic"):
    """The process's Spark session (created on first call) on the settings' catalog."""
    from pyspark import SparkConf  # the [spark] extra; imported only on this engine
    from pyspark.sql import SparkSession

    # pyspark 4.3 warns on every pandas conversion that pandas 3 is "not yet fully supported", and its
    # own toPandas code passes pandas 3's deprecated `copy=`; the constraints pin the pandas the engine
    # tests pass with, so neither warning says anything a user can act on
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated", module="pyspark")
    settings.catalog_dir.mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder.appName(app_name).enableHiveSupport()
    # Spark's Python workers (the distributed extraction) run this interpreter: the project's venv
    python = os.environ.get("PYSPARK_PYTHON", sys.executable)
    builder = builder.config("spark.pyspark.python", python)
    # spark-submit's options and spark-defaults.conf win (a cluster's master, metastore)
    submitted = {key for key, _ in SparkConf().getAll()} if "PYSPARK_GATEWAY_PORT" in os.environ else set()
    for key, value in spark_conf(settings).items():
        if key in submitted and not (key == "spark.master" and settings.master):
            continue
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # the conf above reaches spark-submit's launcher only: the RDD and UDF workers of a session started
    # from Python run SparkContext.pythonExec (PYSPARK_PYTHON when the context started, else `python3` on
    # the PATH, which need not be the venv's)
    session.sparkContext.pythonExec = python
    return session

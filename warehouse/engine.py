"""Which engine the warehouse runs on: SHERLIIC_ENGINE=postgres (default) or spark.

Postgres: the embedded server or DATABASE_URL (warehouse.server). Spark: an in-process Spark session
(`pip install -e '.[spark]'`, Java 17) in local mode by default, with its catalog in `.spark/`:
  .spark/metastore_db/     the embedded Derby metastore (table names -> Parquet locations). Derby
                           allows ONE process at a time: run loaders and dbt one after the other.
  .spark/spark-warehouse/  the tables' Parquet files (raw.* and the dbt models' schemas).
  .spark/derby.log         Derby's log (derby.system.home), instead of the current directory.
The same settings reach dbt through the environment (dbt_project/profiles.yml, target `spark`) and
spark_session() below, so loaders and dbt see one catalog.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from warehouse.settings import PROJECT_ROOT

ENGINE_VARIABLE = "SHERLIIC_ENGINE"
ENGINES = ("postgres", "spark")
DBT_TARGETS = {"postgres": "default", "spark": "spark"}
DEFAULT_SPARK_MASTER = "local[2]"
MASTER_VARIABLE = "SHERLIIC_SPARK_MASTER"
LOG4J_CONFIG = Path(__file__).parent / "spark" / "log4j2.properties"


def current_engine() -> str:
    """The engine named by SHERLIIC_ENGINE (default postgres); a clear error for anything else."""
    engine = os.environ.get(ENGINE_VARIABLE, "postgres").strip().lower() or "postgres"
    if engine not in ENGINES:
        raise ValueError(f"{ENGINE_VARIABLE}={engine!r}: expected one of {', '.join(ENGINES)}")
    return engine


def dbt_target(engine: str | None = None) -> str:
    """The dbt target (dbt_project/profiles.yml) of an engine."""
    return DBT_TARGETS[engine or current_engine()]


def spark_dir() -> Path:
    """Folder of the local Spark catalog: metastore, warehouse files, Derby log (git-ignored)."""
    return Path(os.environ.get("SHERLIIC_SPARK_DIR", PROJECT_ROOT / ".spark")).resolve()


def spark_conf() -> dict[str, str]:
    """Session settings shared by dbt (profile `spark`) and spark_session()."""
    root = spark_dir()
    return {
        "spark.master": os.environ.get(MASTER_VARIABLE, DEFAULT_SPARK_MASTER),
        "spark.sql.warehouse.dir": str(root / "spark-warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={root / 'metastore_db'};create=true"
        ),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={root} -Dlog4j.configurationFile={LOG4J_CONFIG} "
            f"-Dsherliic.spark.log.level={os.environ.get('SHERLIIC_SPARK_LOG_LEVEL', 'error')}"
        ),
        # dbt-spark forces ANSI mode off (integer overflow wraps, x/0 is null); loaders match it
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        # local mode: 200 shuffle partitions of a few rows each cost more than the work
        "spark.sql.shuffle.partitions": os.environ.get("SHERLIIC_SPARK_SHUFFLE_PARTITIONS", "8"),
        "spark.ui.enabled": "false",
        # Spark's stage bars would interleave with the project's own progress bars on stderr
        "spark.ui.showConsoleProgress": "false",
    }


def spark_dbt_env() -> dict[str, str]:
    """Variables the profile's `spark` target reads (server_side_parameters)."""
    conf = spark_conf()
    spark_dir().mkdir(parents=True, exist_ok=True)
    return {
        "SHERLIIC_SPARK_MASTER": conf["spark.master"],
        "SHERLIIC_SPARK_WAREHOUSE_DIR": conf["spark.sql.warehouse.dir"],
        "SHERLIIC_SPARK_METASTORE_URL": conf["spark.hadoop.javax.jdo.option.ConnectionURL"],
        "SHERLIIC_SPARK_DRIVER_OPTIONS": conf["spark.driver.extraJavaOptions"],
        "SHERLIIC_SPARK_SHUFFLE_PARTITIONS": conf["spark.sql.shuffle.partitions"],
    }


def spark_session(app_name: str = "sherliic"):
    """The process's Spark session (created on first call) on the project's catalog."""
    from pyspark.sql import SparkSession  # the [spark] extra; imported only on this engine

    # pyspark 4.3 warns on every pandas conversion that pandas 3 is "not yet fully supported", and its
    # own toPandas code passes pandas 3's deprecated `copy=`; the constraints pin the pandas the engine
    # tests pass with, so neither warning says anything a user can act on
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated", module="pyspark")
    spark_dir().mkdir(parents=True, exist_ok=True)
    # Spark's Python workers (the distributed extraction) run this interpreter: the project's venv
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).enableHiveSupport()
    submitted = _submitted_conf()
    for key, value in spark_conf().items():
        if key in submitted and not (key == "spark.master" and MASTER_VARIABLE in os.environ):
            continue  # spark-submit's options and spark-defaults.conf win (a cluster's master, metastore)
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _submitted_conf() -> set[str]:
    """Settings given to spark-submit (which starts this process with a gateway to its JVM)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return set()
    from pyspark import SparkConf

    return {key for key, _ in SparkConf().getAll()}

"""The Spark engine on a cluster.

Settings (no Spark needed): Spark's own configuration (spark-submit, spark-defaults.conf, hive-site.xml,
PYSPARK_SUBMIT_ARGS) wins over the project's local defaults, which apply only where it says nothing;
catalog locations may be URIs; child processes and dbt's session get the same configuration.

The cluster itself (``make test-cluster``): tests/test_spark_demo.py builds the demo on a standalone
cluster (tests/spark_cluster.py).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from warehouse.engine import DEFAULT_CATALOG, LOG4J_CONFIG, SparkSettings, dbt_env, project_conf, spark_conf
from warehouse.errors import ConfigurationError
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

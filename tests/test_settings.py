"""Every setting is checked when a command starts, and no entry point answers bad input with a traceback or
shows a password (issue 21).

The sweep runs every console script of pyproject.toml and every `python -m` module of the Makefile as a
user would (a subprocess), with bad settings and bad paths, and fails on a traceback, a password in the
output, or anything but one `error:` line with exit code 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.context import RESOURCE_VARIABLES
from tests.test_cli_style import MODULES, SCRIPTS, _command, _env
from tests.test_layout import SOURCE_PACKAGES
from warehouse import db_cli, server
from warehouse.api import read_mart
from warehouse.command_line import check_settings
from warehouse.errors import ConfigurationError, error_message
from warehouse.settings import PROFILE_VARIABLES, PROJECT_ROOT, SETTINGS, check_environment
from warehouse.target import Target

PASSWORD = "hunter2"


# -- the SHERLIIC_* names -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"SHERLIIC_ENIGNE": "spark"},
            "unknown setting SHERLIIC_ENIGNE in the environment; did you mean SHERLIIC_ENGINE?",
        ),
        ({"SHERLIIC_PG_DATA": "/x"}, "did you mean SHERLIIC_PGDATA?"),
        ({"SHERLIIC_SPARK_THREADS": "2"}, "did you mean SHERLIIC_SPARK_DBT_THREADS?"),
        (
            {"SHERLIIC_NOTHING_LIKE_IT": "1"},
            "unknown setting SHERLIIC_NOTHING_LIKE_IT in the environment; "
            "the known ones: SHERLIIC_BERANT_I, ",
        ),
        ({"SHERLIIC_OUT": ""}, "SHERLIIC_OUT is set but empty: unset it for the default, or give a value"),
        ({"SHERLIIC_ENGINE": " "}, "SHERLIIC_ENGINE is set but empty"),
    ],
)
def test_an_unknown_or_empty_setting_is_one_line(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        check_environment(environ)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_known_settings_and_other_variables_pass() -> None:
    check_environment(
        {name: "1" for name in SETTINGS} | {"SHERLIIC_BUILD_CONTEXT": "", "PATH": "", "LM_THREADS": "2"}
    )


GENERATED = frozenset({"target", "logs", "dbt_packages", "dbt_internal_packages"})  # dbt's own output


def _names_read_by_the_project() -> set[str]:
    """Every SHERLIIC_* name the project reads from an environment: looked up in a mapping by the Python
    code (tests included), read by the dbt profile or the Makefile, a rule file's variable, or part of a
    Target's environment (what a child process receives)."""
    names: set[str] = set(RESOURCE_VARIABLES)
    names |= {name for name in Target().environment({}) if name.startswith("SHERLIIC_")}
    lookup = re.compile(r"""environ(?:\.get)?[(\[]\s*["'](SHERLIIC_\w+)["']""")
    for package in (*SOURCE_PACKAGES, "examples", "tests"):
        for path in (PROJECT_ROOT / package).glob("**/*.py"):
            names |= set(lookup.findall(path.read_text(encoding="utf-8")))
    for path in (PROJECT_ROOT / "dbt_project").glob("**/*.*"):
        if (
            path.suffix in (".yml", ".sql")
            and path.is_file()
            and not GENERATED.intersection(path.relative_to(PROJECT_ROOT / "dbt_project").parts)
        ):
            text = path.read_text(encoding="utf-8")
            names |= set(re.findall(r"""env_var\(\s*['"](SHERLIIC_\w+)['"]""", text))
    names |= set(re.findall(r"\$\((SHERLIIC_\w+)\)", (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")))
    return names


def test_the_list_of_settings_is_every_name_the_project_reads() -> None:
    read = _names_read_by_the_project()
    assert {"SHERLIIC_ENGINE", "SHERLIIC_CHIRPS", "SHERLIIC_BUILD_CONTEXT", "SHERLIIC_TEST"} <= read
    assert read - set(SETTINGS) - PROFILE_VARIABLES == set(), "read but not in warehouse/settings.py"
    assert set(SETTINGS) | PROFILE_VARIABLES == read, "listed in warehouse/settings.py but read nowhere"


# -- the values --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (f"postgresql://alice:{PASSWORD}@[::1/sherliic", "Invalid IPv6 URL"),
        (f"postgresql://alice:{PASSWORD}@db.example:99999/x", "the port is not a number"),
        (
            f"postgresql://alice:{PASSWORD}@db.example/x?nosuchoption=1",
            'invalid URI query parameter: "nosuchoption"',
        ),
        (f"postgresql://alice:{PASSWORD}%zz@db.example/x", "invalid percent-encoded token"),
        (f" postgresql://alice:{PASSWORD}@db.example/x", 'missing "=" after'),
        (f"mysql://alice:{PASSWORD}@db.example/x", "mysql://alice:***@db.example/x: expected postgresql://"),
        (f"notaurl{PASSWORD}", "database URL <not a URL>"),
    ],
)
def test_a_bad_database_url_is_one_line_without_its_password(url: str, problem: str) -> None:
    for check in (lambda: Target.from_environment({"DATABASE_URL": url}), lambda: Target.postgres(url)):
        with pytest.raises(ConfigurationError) as raised:
            check()
        assert problem in str(raised.value), str(raised.value)
        assert PASSWORD not in str(raised.value) and "\n" not in str(raised.value)


def test_a_connection_option_refused_on_connect_hides_the_password() -> None:
    url = f"postgresql://alice:{PASSWORD}@127.0.0.1:9/x?connect_timeout=soon"
    with pytest.raises(ConfigurationError, match="bad value for connect_timeout") as raised:
        Target.postgres(url).connect()
    assert PASSWORD not in str(raised.value)


def test_redact_never_raises_and_never_shows_a_password() -> None:
    for url in (
        f"postgresql://alice:{PASSWORD}@[::1/db",
        f"postgresql://alice:{PASSWORD}@h/db?password={PASSWORD}",
        f"postgresql://alice:{PASSWORD}@h:99999/db",
        "postgresql://postgres:@/sherliic?host=/tmp/x",
    ):
        assert PASSWORD not in server.redact(url)
    assert (
        server.redact("postgresql://postgres:@/sherliic?host=/tmp/x")
        == "postgresql://postgres:@/sherliic?host=/tmp/x"
    )
    assert server.hide_passwords("bad token abc", "postgresql://u:abc@h/d") == (
        "(details hidden: they would show the password)"
    )


def test_spark_settings_are_checked() -> None:
    with pytest.raises(
        ConfigurationError, match="SHERLIIC_SPARK_LOG_LEVEL='loud': expected one of off, fatal"
    ):
        Target.from_environment({"SHERLIIC_SPARK_LOG_LEVEL": "loud"})
    assert Target.from_environment({"SHERLIIC_SPARK_LOG_LEVEL": "WARN"}).spark.log_level == "WARN"


def test_a_flag_wins_over_a_bad_variable() -> None:
    environ = {"DATABASE_URL": "notaurl"}
    check_settings(["init", "--database-url", "postgresql://u@h/d"], environ)
    check_settings(["--database-url=postgresql://u@h/d", "init"], environ)
    with pytest.raises(ConfigurationError, match="<not a URL>"):
        check_settings(["init"], environ)
    check_settings(["run", "--build", "trial"], {"SHERLIIC_BUILD": "Not A Name"})
    with pytest.raises(ConfigurationError, match="build name 'Not A Name'"):
        check_settings(["run"], {"SHERLIIC_BUILD": "Not A Name"})


def test_os_errors_are_the_path_and_the_reason() -> None:
    assert error_message(NotADirectoryError(20, "Not a directory", "out/file/sub")) == (
        "out/file/sub: Not a directory"
    )
    assert (
        error_message(FileNotFoundError("shared data folder not found: x"))
        == "shared data folder not found: x"
    )


# -- every entry point, as a user runs it ------------------------------------------------------------------
# a command of each entry point that works on the warehouse (the settings are checked before it runs)
COMMANDS: dict[str, list[str]] = {
    "sherliic-db": ["init"],
    "sherliic-extract": ["summary"],
    "sherliic-demo": ["--out", "{tmp}/demo"],
    "sherliic-dbt": ["run", "--select", "marts"],
    "sherliic-export": ["--out", "{tmp}/export"],
    "sherliic-baselines": ["all", "--no-load", "--out", "{tmp}/baselines"],
    "sherliic-annotate": ["import", "{tmp}/results.csv"],
    "lm.cli": ["run", "--no-load", "--out", "{tmp}/lm"],
    "sherliic-lm": ["run", "--no-load", "--out", "{tmp}/lm"],
    "baselines.probe": ["--out", "{tmp}/probe"],
    "baselines.combination": ["--out", "{tmp}/combination"],
    "baselines.noisy_labels": [],
    "benchmarks.fidelity": [],
    "benchmarks.bench_extract": ["--n", "1", "--out", "{tmp}/bench"],
    "benchmarks.bench_candidates": ["--sizes", "1000", "--out", "{tmp}/bench"],
    "benchmarks.bench_spark": ["--sizes", "1000", "--out", "{tmp}/bench"],
    "benchmarks.bench_baselines": ["--relations", "10", "--out", "{tmp}/bench"],
    "benchmarks.synthetic_teg": ["--instances", "1000"],
    "warehouse.spark_raw": ["copy"],
}
BAD_SETTINGS = {
    "database URL of another scheme": (
        {"DATABASE_URL": f"mysql://alice:{PASSWORD}@db.example/x"},
        "error: database URL mysql://alice:***@db.example/x: expected postgresql://",
    ),
    "malformed database URL": (
        {"DATABASE_URL": f"postgresql://alice:{PASSWORD}@[::1/x"},
        "error: database URL postgresql://***@[::1/x: Invalid IPv6 URL",
    ),
    "bogus engine": (
        {"SHERLIIC_ENGINE": "bogus"},
        "error: SHERLIIC_ENGINE='bogus': expected one of postgres, spark",
    ),
    "misspelt setting": (
        {"SHERLIIC_ENIGNE": "spark"},
        "error: unknown setting SHERLIIC_ENIGNE in the environment",
    ),
}


def run_entry(name: str, args: list[str], tmp_path: Path, **env: str | None) -> subprocess.CompletedProcess:
    command = [*_command(name), *(arg.replace("{tmp}", str(tmp_path)) for arg in args)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=_env(**env), cwd=PROJECT_ROOT
    )


def assert_one_clean_line(result: subprocess.CompletedProcess, expected: str) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output[-3000:]
    assert PASSWORD not in output, output[-3000:]
    assert result.returncode == 2, output[-3000:]
    assert result.stderr.splitlines() == [result.stderr.strip()] and result.stderr.startswith(expected), (
        output[-3000:]
    )


def test_the_sweep_covers_every_entry_point() -> None:
    assert set(COMMANDS) == set(SCRIPTS) | set(MODULES)


def _sweep() -> list[tuple[str, str]]:
    """(entry point, case): every entry point with a bogus engine (SHERLIIC_ENGINE=bogus in every command)
    and with one of the other bad settings in turn (each of them reaches several entry points)."""
    others = sorted(case for case in BAD_SETTINGS if case != "bogus engine")
    return [
        (name, case)
        for index, name in enumerate(sorted(COMMANDS))
        for case in ("bogus engine", others[index % len(others)])
    ]


@pytest.mark.parametrize(("name", "case"), _sweep())
def test_every_entry_point_checks_its_settings_first(tmp_path: Path, name: str, case: str) -> None:
    environ, expected = BAD_SETTINGS[case]
    assert_one_clean_line(run_entry(name, COMMANDS[name], tmp_path, **environ), expected)


def test_every_database_url_problem_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    for url, expected in (
        (
            f"postgresql://alice:{PASSWORD}@db.example:port/x",
            "error: database URL postgresql://alice:***@db.example:port/x: the port",
        ),
        (
            f"postgresql://alice:{PASSWORD}@db.example/x?sslmode=maybe&x=1",
            "error: database URL postgresql://alice:***@",
        ),
        (
            f"postgresql://alice:{PASSWORD}@127.0.0.1:9/x",
            "error: cannot connect to the database at postgresql://alice:***@127.0.0.1:9/x",
        ),
    ):
        result = run_entry("sherliic-export", ["--database-url", url, "--out", "{tmp}/export"], tmp_path)
        assert_one_clean_line(result, expected)


AT_PASSWORD = "hunter2@Tr0ub4dor"  # libpq ends a password at its first '@': the rest would be the host


@pytest.mark.parametrize("name", ["sherliic-db", "sherliic-extract", "sherliic-export"])
def test_an_at_sign_in_the_password_shows_no_part_of_it(tmp_path: Path, name: str) -> None:
    url = f"postgresql://alice:{AT_PASSWORD}@127.0.0.1:1/x"
    expected = "error: database URL postgresql://alice:***@127.0.0.1:1/x: an '@' in the user name or password"
    for result in (
        run_entry(name, COMMANDS[name], tmp_path, DATABASE_URL=url),
        run_entry(name, [*COMMANDS[name], "--database-url", url], tmp_path),
    ):
        for part in AT_PASSWORD.split("@"):
            assert part not in result.stdout + result.stderr
        assert_one_clean_line(result, expected)
    with pytest.raises(ConfigurationError, match="must be written %40") as raised:
        read_mart("relations", database_url=url)
    assert not any(part in str(raised.value) for part in AT_PASSWORD.split("@"))


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("sherliic-export", ["--out", "{tmp}/a_file/sub"], "error: {tmp}/a_file/sub: Not a directory"),
        (
            "sherliic-export",
            ["--out", "{tmp}/folder"],
            "error: {tmp}/folder/teg.tsv: is a folder, not a file",
        ),
        (
            "sherliic-annotate",
            ["export-dataset", "--out", "{tmp}/a_file/sub"],
            "error: {tmp}/a_file/sub: Not a directory",
        ),
        (
            "sherliic-annotate",
            ["check-templates", "--dev", "{tmp}/missing.tsv"],
            "error: {tmp}/missing.tsv: No such file",
        ),
        ("sherliic-annotate", ["import", "{tmp}/missing.csv"], "error: {tmp}/missing.csv: file not found"),
        (
            "sherliic-annotate",
            ["sample", "--batch", "../../escape"],
            "error: batch name '../../escape': use letters",
        ),
        (
            "sherliic-extract",
            ["corpus", "--format", "jsonl", "{tmp}/missing.jsonl"],
            "error: {tmp}/missing.jsonl: file not found",
        ),
        (
            "sherliic-baselines",
            [
                "load",
                "{tmp}/missing.tsv",
                "--format",
                "sherliic_tsv",
                "--dataset",
                "sherliic",
                "--split",
                "dev",
            ],
            "error: {tmp}/missing.tsv: file not found",
        ),
        (
            "baselines.probe",
            ["--shared-data", "{tmp}", "--out", "{tmp}/probe"],
            "error: {tmp}/sherliic/dev.tsv: No such file",
        ),
    ],
)
def test_bad_paths_are_one_line(
    fresh_target: Target, tmp_path: Path, name: str, args: list[str], expected: str
) -> None:
    (tmp_path / "a_file").write_text("a regular file\n")
    (tmp_path / "folder" / "teg.tsv").mkdir(parents=True)
    url = fresh_target.url()
    result = run_entry(name, args, tmp_path, DATABASE_URL=url)
    if name == "sherliic-extract":  # its progress shares stderr: off a terminal, a line naming the file
        kept = [line for line in result.stderr.splitlines() if not line.startswith("file 1/1 ")]
        result.stderr = "".join(line + "\n" for line in kept)
    assert_one_clean_line(result, expected.replace("{tmp}", str(tmp_path)))


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("sherliic-export", ["--out", "{tmp}/gone"]),
        ("sherliic-demo", ["--out", "{tmp}/gone/demo"]),
        ("sherliic-baselines", ["all", "--no-load", "--out", "{tmp}/gone"]),
        ("sherliic-annotate", ["export", "--batch", "b1", "--out", "{tmp}/gone/b1.csv"]),
        ("sherliic-lm", ["rank", "--out", "{tmp}/gone"]),
    ],
)
def test_an_output_path_through_a_broken_link_is_one_line(tmp_path: Path, name: str, args: list[str]) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    result = run_entry(name, args, tmp_path, DATABASE_URL="postgresql://u@127.0.0.1:9/x")
    assert_one_clean_line(result, "error: ")
    assert f"Invalid value for '--out': {tmp_path}/gone is a broken symbolic link to {tmp_path}/nowhere" in (
        result.stderr
    )


def test_every_out_option_refuses_a_broken_link() -> None:
    """Every command's --out is an OutputPath (warehouse.command_line), not a plain click.Path."""
    option = re.compile(r"""["']--out["'],(?:\s*["'][^"']*["'],)?\s*type=([\w.]+(?:\([^)]*\))?)""")
    found = {}
    for package in (*SOURCE_PACKAGES, "examples"):
        for path in (PROJECT_ROOT / package).glob("**/*.py"):
            for match in option.finditer(path.read_text(encoding="utf-8")):
                found[f"{path.relative_to(PROJECT_ROOT)}:{match.start()}"] = match.group(1)
    assert len(found) >= 18, found
    plain = {where: kind for where, kind in found.items() if kind not in ("OUTPUT_FOLDER", "OUTPUT_FILE")}
    assert plain == {}


# the [spark] extra absent, whatever this venv holds: its modules cannot be imported
NO_SPARK_EXTRA = """
import sys
from importlib.machinery import PathFinder
class NoSparkExtra(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark", "py4j"):
            return None
        return PathFinder.find_spec(name, path, target)
sys.meta_path[:] = [NoSparkExtra if finder is PathFinder else finder for finder in sys.meta_path]
"""
NO_SPARK_LINE = (
    "error: the spark engine (--engine spark, SHERLIIC_ENGINE=spark) needs the [spark] extra, and pyspark "
    "is not installed: install it with `make spark-deps`"
)


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("extract.cli", ["--engine", "spark", "batches"]),
        ("release.export", ["--engine", "spark", "--out", "{tmp}/export"]),
        ("demo.job", ["--out", "{tmp}/demo"]),
        ("builds.runner", ["run"]),
    ],
)
def test_the_spark_engine_without_its_extra_is_one_line(tmp_path: Path, module: str, args: list[str]) -> None:
    script = f"{NO_SPARK_EXTRA}from {module} import main\nsys.exit(main(sys.argv[1:]))\n"
    result = subprocess.run(
        [sys.executable, "-c", script, *(arg.replace("{tmp}", str(tmp_path)) for arg in args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(SHERLIIC_ENGINE="spark"),
        cwd=PROJECT_ROOT,
    )
    assert_one_clean_line(result, NO_SPARK_LINE)
    assert not (tmp_path / "demo").exists()  # refused before the demo wrote anything
    script = f"{NO_SPARK_EXTRA}from warehouse import read_mart\nread_mart('relations', engine='spark')\n"
    api = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert api.stderr.splitlines()[-1].startswith(
        "warehouse.errors.ConfigurationError: " + NO_SPARK_LINE.removeprefix("error: ")
    )


def test_the_url_command_hides_the_password_unless_asked(tmp_path: Path) -> None:
    url = f"postgresql://alice:{PASSWORD}@db.example/x"
    shown = run_entry("sherliic-db", ["url", "--database-url", url], tmp_path)
    assert (shown.returncode, shown.stdout) == (0, "postgresql://alice:***@db.example/x\n")
    revealed = run_entry("sherliic-db", ["url", "--show-password", "--database-url", url], tmp_path)
    assert revealed.stdout == url + "\n"


def test_psql_gets_the_password_in_its_environment_not_on_its_command_line(monkeypatch) -> None:
    calls: list[tuple[list[str], dict | None]] = []
    monkeypatch.setattr(db_cli.subprocess, "call", lambda argv, env=None: calls.append((argv, env)) or 0)
    url = f"postgresql://alice:{PASSWORD}@db.example:5433/x"
    assert db_cli.main(["psql", "--database-url", url, "-c", "select 1"]) == 0
    ((argv, env),) = calls
    assert argv[1:] == ["postgresql://alice@db.example:5433/x", "-c", "select 1"]
    assert env is not None and env["PGPASSWORD"] == PASSWORD


def test_db_init_shows_the_url_without_its_password(fresh_target: Target, capsys) -> None:
    # the embedded server trusts its socket: a password in the URL is accepted and ignored
    url = fresh_target.url().replace("postgres:@", f"postgres:{PASSWORD}@", 1)
    assert PASSWORD in url
    assert db_cli.main(["init", "--database-url", url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("database ready: postgresql://postgres:***@") and PASSWORD not in out

"""The command-line fixes of issue 20: options on either side of the subcommand, click's usage errors as
one line, baseline names in any spelling (and the Makefile quoting them), the compact console table and
the mark of composite rows in the reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from baselines.cli import cli as baselines_cli
from baselines.cli import registered_methods
from evaluation import catalog, report
from evaluation.registry import is_composite, resolve
from extract.cli import cli as extract_cli
from warehouse.command_line import place_options
from warehouse.db_cli import cli as db_cli
from warehouse.settings import PROJECT_ROOT

BIN = Path(sys.executable).parent


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / script), *args], capture_output=True, text=True, timeout=300, cwd=PROJECT_ROOT
    )


def test_group_options_move_before_the_subcommand_and_subcommand_options_after_it():
    # sherliic-extract's group options (--quiet, --summary-json FILE) typed after the subcommand
    assert place_options(extract_cli, ["batches", "--quiet", "--json", "--summary-json", "s.json"]) == [
        "--quiet",
        "--summary-json",
        "s.json",
        "batches",
        "--json",
    ]
    # --database-url is both the group's and the subcommand's: it stays where it was typed
    assert place_options(extract_cli, ["batches", "--database-url", "u"]) == [
        "batches",
        "--database-url",
        "u",
    ]
    # a subcommand's options (with values, `--x=v` too) typed before it
    argv = ["--database-url", "postgresql://h/db", "--build=b1", "--no-load", "one", "Always yes"]
    assert place_options(baselines_cli, argv) == [
        "one",
        "--database-url",
        "postgresql://h/db",
        "--build=b1",
        "--no-load",
        "Always yes",
    ]
    # nothing moves after `--`, with --help, or when no subcommand is given
    assert place_options(extract_cli, ["batches", "--", "--quiet"]) == ["batches", "--", "--quiet"]
    for argv in (["--help"], ["all", "--help"], ["--build", "x"]):
        assert place_options(baselines_cli, argv)[-len(argv) :] == argv


def test_an_option_before_the_subcommand_is_the_subcommands():
    given = "postgresql://someone@somewhere:5433/other"
    for argv in (["url", "--database-url", given], ["--database-url", given, "url"]):
        assert place_options(db_cli, argv) == ["url", "--database-url", given]
        result = _run("sherliic-db", *argv)
        assert (result.returncode, result.stdout, result.stderr) == (0, given + "\n", "")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["one"], "error: sherliic-baselines one: Missing argument 'NAME'."),
        (["all", "--nope"], "error: sherliic-baselines all: No such option"),
        (["no-such"], "error: sherliic-baselines: No such command 'no-such'."),
    ],
)
def test_a_usage_error_is_one_line(argv, line):
    result = _run("sherliic-baselines", *argv)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(line)


def test_help_keeps_the_usage_block():
    shown = _run("sherliic-baselines", "one", "--help")
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: sherliic-baselines one [OPTIONS] NAME")


def test_baseline_names_in_any_spelling():
    registered_methods()
    assert resolve("Lemma") == "Lemma"  # exact first
    for typed in ("lemma", "LEMMA", " Lemma"):
        assert resolve(typed) == "Lemma"
    for typed in ("always yes", "always_yes", "AlwaysYes", "always-yes"):
        assert resolve(typed) == "Always yes"
    assert resolve("weedsprec typed") == "WeedsPrec (typed)"
    with pytest.raises(KeyError, match=r"unknown baseline 'lemmma'; closest: 'Lemma'"):
        resolve("lemmma")
    result = _run("sherliic-baselines", "one", "weeds prec", "--no-load")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert (
        "unknown baseline 'weeds prec'; closest: 'WeedsPrec (typed)', 'WeedsPrec (untyped)'" in result.stderr
    )


def test_make_baseline_quotes_the_name():
    shown = subprocess.run(
        ["make", "-n", "baseline", "NAME=Always yes"], capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    assert shown.returncode == 0
    assert "sherliic-baselines one 'Always yes'" in " ".join(shown.stdout.split())
    missing = subprocess.run(["make", "baseline"], capture_output=True, text=True, cwd=PROJECT_ROOT)
    assert missing.returncode != 0 and "make baseline needs NAME" in missing.stderr


def _results(methods: list[str]) -> pd.DataFrame:
    keys = [("sherliic", "dev"), ("sherliic", "lm_dev"), ("levy_holt", "dev")]
    keys += [(f"levy_holt/{s}", "dev") for s in ("dirposi_dirnegi", "symposi_symnegi")] + [
        ("zeichner", "all")
    ]
    rows = [
        {
            "method": m,
            "dataset": d,
            "split": s,
            "threshold": 0.5,
            "precision": 0.5,
            "recall": 0.25,
            "f1": 1 / 3,
            "auc_pr50": 0.125,
            "auc_norm": 0.1,
            "roc_auc": 0.6,
            "n_items": 100,
            "n_covered": 100 if m != "Patty" else 10,
        }
        for m in methods
        for d, s in keys
    ]
    return pd.DataFrame(rows)


def test_compact_table_one_line_per_method_with_composites_marked():
    registered_methods()
    methods = catalog.ordered_names()
    composite = [m for m in methods if is_composite(m)]
    assert "learned combination" in composite and any("(ensemble)" in m for m in composite)
    assert not {"Lemma", "All Rules", "w2v+typed_rel"} & set(composite)  # the paper's rows are not marked
    lines = report.compact_table(_results(methods), methods).splitlines()
    assert len(lines) == 1 + len(methods) + 1 < 60  # header, one line per method, the legend
    assert lines[0].split() == ["method", "sherliic", "dev", "F1", "sherliic", "lm_dev", "F1"] + [
        "levy_holt",
        "dev",
        "AUC",
        "zeichner",
        "all",
        "AUC",
    ]
    assert lines[1].split() == ["Lemma", "33.3", "33.3", "0.125", "0.125"]
    assert lines[methods.index("Patty") + 1].split() == ["Patty", "—", "—", "—", "—"]
    assert lines[methods.index("learned combination") + 1].startswith("learned combination †")
    assert lines[-1].startswith("† composite")


def test_markdown_marks_composite_rows_with_a_legend():
    registered_methods()
    methods = ["Lemma", "learned combination"]
    text = report.markdown(_results(methods), methods)
    assert report.COMPOSITE_LEGEND in text
    assert "| learned combination † " in text and "| Lemma " in text and "| Lemma †" not in text

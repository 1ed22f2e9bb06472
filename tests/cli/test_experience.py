"""The test and command-line experience: markers, Spark without Java, `metrics`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import polars_rankeval as prk
from polars_rankeval.cli.app import main
from polars_rankeval.cli.metrics import describe_metric, fit_table, metric_examples
from polars_rankeval.metrics.registry import registered

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- markers
def pytest_in_subprocess(*args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return f"rc={result.returncode}\n{result.stdout}{result.stderr}"


def test_markers_are_registered_and_select() -> None:
    out = pytest_in_subprocess("--collect-only", "-m", "not spark", "tests/engines/test_spark.py")
    assert "rc=5" in out  # every test of the module deselected: "no tests collected"
    assert re.search(r"\d+ deselected", out), out
    out = pytest_in_subprocess("--collect-only", "-q", "-m", "slow", "tests")
    assert "rc=0" in out
    assert "tests/test_brute_force.py: 1" in out  # the large tie groups test
    assert "test_spark" not in out


def test_spark_tests_skip_with_a_reason_without_java(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "CI")}
    env["PATH"] = str(tmp_path)  # no java anywhere on PATH
    env["PYTHONPATH"] = str(ROOT)
    test = "tests/engines/test_spark.py::test_empty_zero"
    out = pytest_in_subprocess("-rs", test, env=env)
    assert "rc=0" in out, out
    assert "1 skipped" in out
    assert "Spark runs on the JVM: these tests need a Java runtime" in out
    env["CI"] = "true"  # in CI, a missing Java is a failure, not a skip
    out = pytest_in_subprocess("-rs", test, env=env)
    assert "rc=1" in out, out
    assert "CI: .ci/run installs it" in out


# --------------------------------------------------------------------------- metrics
def test_metrics_table_is_sorted_and_fits_the_width(capsys: pytest.CaptureFixture[str]) -> None:
    for width in (60, 100, 160):
        code, out, _ = run(capsys, "metrics", "--width", str(width))
        assert code == 0
        lines = out.splitlines()
        assert max(len(line) for line in lines) <= width, width
        table = lines[: lines.index("")]  # the table, then a blank line and a closing note
        rule = next(i for i, line in enumerate(table) if line.startswith("---"))
        names = [line.split()[0] for line in table[rule + 1 :] if not line.startswith(" ")]
        assert names == sorted(prk.list_metrics()["name"].to_list())


def test_metrics_table_follows_the_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "72")
    code, out, _ = run(capsys, "metrics")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 72


def test_fit_table_wraps_the_shrinking_columns() -> None:
    text = fit_table(["n", "text"], [["a", "one two three four"]], 10, shrink=[1])
    assert text == "n  text\n-  -------\na  one two\n   three\n   four\n"
    # Wide enough: nothing wraps, the columns keep their natural width.
    assert fit_table(["n", "t"], [["a", "b c"]], 80, shrink=[1]) == "n  t\n-  ---\na  b c\n"


def test_metrics_name_shows_one_metric(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "metrics", "P", "--width", "100")  # an alias
    assert code == 0
    assert out.startswith("precision: ")
    assert "aliases: P" in out
    assert re.search(r"\n  denominator +k +k \| retrieved\n", out)  # columns aligned
    assert re.search(r"\n  aggregate +mean +mean \| sum \| gmean \| relevant_weighted\n", out)
    assert "-m 'precision@10' -m 'precision(denominator=retrieved)@10'" in out
    code, out2, _ = run(capsys, "metrics", "precision(rel=2)@5", "--width", "100")
    assert code == 0
    assert out2 == out
    code, out, _ = run(capsys, "metrics", "ndcg", "--format", "json")
    assert code == 0
    assert '"name":"ndcg"' in out.replace(" ", "")


def test_metrics_name_unknown_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "metrics", "ndgc")
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "did you mean 'ndcg'?" in err


@pytest.mark.parametrize("name", sorted(registered()))
def test_every_metric_description_has_valid_examples(name: str) -> None:
    spec = registered()[name]
    for example in metric_examples(spec):
        assert prk.parse_metric(example).spec is spec
    text = describe_metric(spec, 80)
    for line in text.splitlines():  # the examples are one command each, never wrapped
        assert len(line) <= 80 or line.startswith(("  polars-rankeval -m", "  prk.evaluate")), line
    for param in spec.params:
        assert f"\n  {param}" in text


def test_broken_pipe_exits_quietly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`polars-rankeval metrics | head`: the reader went away; no error line."""
    import polars_rankeval.cli.metrics as cli

    def closed(_: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "run", closed)
    code, _, err = run(capsys, "metrics")
    assert code == 0
    assert err == ""

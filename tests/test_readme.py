"""The README cannot drift: its metric table, code, output and test command are checked."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from polars_rankeval.cli.app import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEST_COMMAND = 'pip install -e ".[test]" && python -m pytest'


def readme() -> str:
    return README.read_text(encoding="utf-8")


def gen_metric_table() -> ModuleType:
    path = ROOT / "scripts" / "gen_metric_table.py"
    spec = importlib.util.spec_from_file_location("gen_metric_table", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", readme(), flags=re.DOTALL | re.MULTILINE)


def test_metric_table_is_current() -> None:
    gen = gen_metric_table()
    assert gen.readme_table(readme()) == gen.metric_table(), (
        "README.md's metric table is out of date; run: python scripts/gen_metric_table.py --write"
    )


def test_convention_matrix_is_current() -> None:
    path = ROOT / "scripts" / "gen_convention_matrix.py"
    spec = importlib.util.spec_from_file_location("gen_convention_matrix", path)
    assert spec is not None
    assert spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = readme()
    assert gen.replace_block(text, gen.matrix()) == text, (
        "README.md's convention matrix is out of date; run: "
        "python scripts/gen_convention_matrix.py --write"
    )


def test_metric_table_lists_every_metric() -> None:
    import polars_rankeval as prk

    table = gen_metric_table().readme_table(readme())
    for name in prk.list_metrics()["name"]:
        assert f"| `{name}` |" in table


def test_replace_table_round_trips() -> None:
    gen = gen_metric_table()
    text = readme()
    assert gen.replace_table(text, gen.metric_table()) == text


def test_python_snippets_run(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = code_blocks("python")
    assert blocks
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__main__"}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"README.md python block {number}", "exec"), namespace)


def test_shown_cli_output_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.strip() in readme()


def test_test_command_matches_ci() -> None:
    bash = "\n".join(code_blocks("bash"))
    assert "pip install . && polars-rankeval" in bash
    assert TEST_COMMAND in bash
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in ci

"""The README stays short, its shown output current and its test command that of CI.

Its code blocks run, with the pages of the site, in ``tests/docs/test_pages.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polars_rankeval.cli.app import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEST_COMMAND = 'pip install -e ".[test]" && python -m pytest'
DOCS_COMMAND = "mkdocs build --strict"
MAX_LINES = 200


def readme() -> str:
    return README.read_text(encoding="utf-8")


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_is_short() -> None:
    lines = readme().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; the rest belongs in docs/"


@pytest.mark.parametrize(
    "page", [README, ROOT / "docs" / "getting-started.md"], ids=lambda p: p.name
)
def test_shown_cli_output_is_current(page: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.strip() in page.read_text(encoding="utf-8")


def test_test_command_matches_ci() -> None:
    bash = "\n".join(code_blocks(readme(), "bash"))
    assert "pip install . && polars-rankeval" in bash
    assert TEST_COMMAND in bash
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in ci
    assert DOCS_COMMAND in ci
    assert DOCS_COMMAND in readme()


def test_readme_links_exist() -> None:
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme()):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README.md links to a missing file: {target}"

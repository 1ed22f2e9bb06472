"""The documentation is checked like code.

- Every ```` ```python ```` block of ``docs/**/*.md`` and ``README.md`` runs; the blocks
  of one page share a namespace, in order. A ```` ```text ```` block right after a
  Python block is that block's printed output, compared as doctest compares
  (``...`` matches anything, runs of white space are equal).
- Every ```` ```pycon ```` block runs as a doctest in the same namespace.
- A Python block whose first line starts with ``# not run:`` is shown, not run (it
  says why: a Spark session, a large file, an option in flux).
- Coverage: every public name of ``polars_rankeval`` has an entry in the API
  reference, every CLI subcommand a section of the command-line page, every metric
  family a title in the docs hook (so a reference page), every metric a section.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
SKIP = "# not run:"
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def hook() -> ModuleType:
    """The MkDocs hook that generates the reference pages."""
    path = DOCS / "_hooks" / "generate.py"
    spec = importlib.util.spec_from_file_location("docs_generate", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def blocks(text: str) -> list[tuple[str, str, int, str | None]]:
    """(language, code, line, expected output) of every fenced block of a page."""
    found = list(FENCE.finditer(text))
    out: list[tuple[str, str, int, str | None]] = []
    for i, match in enumerate(found):
        lang = match[1]
        expected = None
        if lang == "python" and i + 1 < len(found):
            after = found[i + 1]
            between = text[match.end() : after.start()]
            if after[1] == "text" and not between.strip():
                expected = after[2]
        out.append((lang, match[2], text.count("\n", 0, match.start()) + 1, expected))
    return out


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def run_page(page: Path) -> None:
    """Run a page's Python and pycon blocks in one namespace, comparing shown output."""
    namespace: dict = {"__name__": "__main__"}
    checker = doctest.OutputChecker()
    parser = doctest.DocTestParser()
    for lang, code, line, expected in blocks(page.read_text(encoding="utf-8")):
        where = f"{rel(page)}:{line}"
        if lang == "python":
            if code.lstrip().startswith(SKIP):
                continue
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                exec(compile(code, where, "exec"), namespace)
            if expected is not None and not checker.check_output(
                expected, stdout.getvalue(), FLAGS
            ):
                got = stdout.getvalue()
                msg = f"{where}: printed output differs\n--- shown:\n{expected}--- printed:\n{got}"
                raise AssertionError(msg)
        elif lang == "pycon":
            test = parser.get_doctest(code, namespace, where, where, line)
            runner = doctest.DocTestRunner(optionflags=FLAGS)
            report = io.StringIO()
            runner.run(test, out=report.write, clear_globs=False)
            assert runner.failures == 0, f"{where}: doctest failed\n{report.getvalue()}"


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_page_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run_page(page)


def test_every_page_with_code_is_collected() -> None:
    assert (DOCS / "getting-started.md") in PAGES
    assert sum(1 for page in PAGES for b in blocks(page.read_text()) if b[0] == "python") > 20


def test_skipped_blocks_are_few() -> None:
    skipped = [
        f"{rel(page)}:{line}"
        for page in PAGES
        for lang, code, line, _ in blocks(page.read_text(encoding="utf-8"))
        if lang == "python" and code.lstrip().startswith(SKIP)
    ]
    assert len(skipped) <= 8, f"more than 8 blocks not run: {skipped}"


# ------------------------------------------------------------------ coverage


def api_pages() -> str:
    return "\n".join(
        (DOCS / "reference" / name).read_text(encoding="utf-8")
        for name in ("api.md", "functions.md")
    )


def test_every_public_name_has_an_api_entry() -> None:
    import polars_rankeval as prk
    from polars_rankeval.metrics import functions

    text = api_pages()
    generated = "::: polars_rankeval.metrics.functions" in text
    missing = [
        name
        for name in [*prk.__all__, "map"]
        if f"::: polars_rankeval.{name}\n" not in text
        and not (generated and hasattr(functions, name))
    ]
    assert not missing, f"public names without an entry in docs/reference/api.md: {missing}"


def test_every_cli_subcommand_has_a_section(capsys: pytest.CaptureFixture[str]) -> None:
    from polars_rankeval.cli.app import main

    with contextlib.suppress(SystemExit):  # argparse exits after --help; main may catch it
        main(["--help"])
    listed = re.search(r"\{([\w,-]+)\}", capsys.readouterr().out)
    assert listed is not None, "polars-rankeval --help lists no subcommands"
    page = (DOCS / "guide" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in listed[1].split(",") if f"## `polars-rankeval {name}`" not in page]
    assert not missing, f"CLI subcommands without a section in docs/guide/cli.md: {missing}"


def test_every_metric_family_has_a_titled_page() -> None:
    gen = hook()
    missing = sorted(set(gen.families()) - set(gen.FAMILIES))
    assert not missing, f"metric families without a title in docs/_hooks/generate.py: {missing}"


def test_every_metric_has_a_reference_section() -> None:
    import polars_rankeval as prk

    gen = hook()
    pages = {f: gen.family_page(f, names) for f, names in gen.families().items()}
    for name, family in prk.list_metrics().select("name", "family").iter_rows():
        assert f"## `{name}` {{#{name}}}" in pages[family], name

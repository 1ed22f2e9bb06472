"""trec_eval's own test suite through the command, line for line, and -M."""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_rankeval.cli.app import main
from polars_rankeval.trec_eval.output import format_trec
from polars_rankeval.trec_eval.program import trec_eval
from tests.trec_eval.test_trec_eval import _random_files

DATA = Path(__file__).parents[1] / "data"
QRELS, RUN = DATA / "qrels.test", DATA / "results.test"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-m", "all_trec"], "out.test.a"),
        (["-m", "all_trec", "-q"], "out.test.aq"),
        ([], "out.test"),
    ],
)
def test_command_reproduces_trec_eval_output(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trec-eval", *args, str(QRELS), str(RUN)]) == 0
    assert capsys.readouterr().out == (DATA / expected).read_text()


def test_max_docs_is_evaluating_the_truncated_run(tmp_path: Path) -> None:
    qrels_path, run_path = _random_files(tmp_path, 3)
    truncated = tmp_path / "run10"
    kept = []
    by_query: dict[str, list[tuple[float, str, str]]] = {}
    for line in run_path.read_text().split("\n"):
        if line:
            q, _, d, _, s, _ = line.split()
            by_query.setdefault(q, []).append((-float(s), d, line))
    for rows in by_query.values():
        # trec_eval's order: score descending, then docno descending.
        rows.sort(key=lambda r: (r[0], [-ord(c) for c in r[1]]))
        kept += [r[2] for r in rows[:10]]
    truncated.write_text("\n".join(kept) + "\n")
    a = trec_eval(qrels_path, run_path, ["official"], max_docs=10)
    b = trec_eval(qrels_path, truncated, ["official"])
    assert format_trec(a) == format_trec(b)

"""The trec_eval engine and the ``polars-rankeval trec-eval`` command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_rankeval.cli.app import main
from polars_rankeval.trec_eval.measures import Request, parse_measures
from polars_rankeval.trec_eval.program import trec_eval

DATA = Path(__file__).parents[1] / "data"
QRELS, RUN = DATA / "qrels.test", DATA / "results.test"


def test_parse_measures_order_and_parameters() -> None:
    requests = parse_measures(["P.5,10", "map", "runid", "P.20"])
    # print order; a measure named twice keeps its first parameters (trec_eval's rule)
    assert [(r.measure, r.params) for r in requests] == [
        ("runid", None),
        ("map", None),
        ("P", "5,10"),
    ]
    official = [r.measure for r in parse_measures(["official"])]
    assert official[:4] == ["runid", "num_q", "num_ret", "num_rel"]
    with pytest.raises(ValueError, match=r"illegal measure 'Pp.5'"):
        parse_measures(["Pp.5"])
    with pytest.raises(ValueError, match=r"illegal measure 'P.'"):
        parse_measures(["P."])
    # trec_eval accepts and ignores parameters of a measure that takes none
    assert parse_measures(["map.5"]) == [Request("map", "5")]


def _random_files(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(15):
        docs = rng.choice(300, size=40, replace=False)
        for d in docs[:25]:
            qrels.append(f"q{q:02d} 0 d{d:03d} {rng.choice([0, 0, 1, 2, 3])}")
        for rank, d in enumerate(docs[5:]):
            run.append(f"q{q:02d} Q0 d{d:03d} {rank} {rng.integers(0, 8) / 2} tagX")
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


def _pytrec(qrels_path: Path, run_path: Path, measures: set[str], **kwargs: object) -> dict:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().split("\n"):
        if line:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    run: dict[str, dict[str, float]] = {}
    for line in run_path.read_text().split("\n"):
        if line:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return pytrec_eval.RelevanceEvaluator(qrels, measures, **kwargs).evaluate(run)


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_per_query_agreement_with_pytrec_eval(
    tmp_path: Path, level: int, judged_only: bool
) -> None:
    qrels_path, run_path = _random_files(tmp_path, level * 10 + judged_only)
    names = {
        "P_5": "P.5",
        "map": "map",
        "recip_rank": "recip_rank",
        "ndcg_cut_10": "ndcg_cut.10",
        "Rprec": "Rprec",
        "recall_10": "recall.10",
    }
    ours = trec_eval(
        qrels_path,
        run_path,
        list(names.values()),
        per_query=True,
        rel_level=level,
        judged_only=judged_only,
    )
    kwargs: dict[str, object] = {"relevance_level": level}
    if judged_only:
        kwargs["judged_docs_only_flag"] = True
    theirs = _pytrec(qrels_path, run_path, set(names.values()), **kwargs)
    per_query = ours.filter(pl.col("query") != "all")
    assert per_query.height == len(theirs) * len(names)
    for measure, query, value in per_query.select("measure", "query", "value").iter_rows():
        assert value == pytest.approx(theirs[query][measure], abs=1e-12), (measure, query)


def test_complete_averages_over_every_qrels_query(tmp_path: Path) -> None:
    qrels_path, run_path = _random_files(tmp_path, 4)
    # Drop the last two queries from the run.
    lines = [
        ln for ln in run_path.read_text().split("\n") if ln and not ln.startswith(("q13", "q14"))
    ]
    run_path.write_text("\n".join(lines) + "\n")
    plain = trec_eval(qrels_path, run_path, ["map", "P.5", "num_q"])
    complete = trec_eval(qrels_path, run_path, ["map", "P.5", "num_q"], complete=True)
    value = {r[0]: r[2] for r in plain.iter_rows()}
    full = {r[0]: r[2] for r in complete.iter_rows()}
    assert value["num_q"] == 13
    assert full["num_q"] == 15
    assert full["map"] == pytest.approx(value["map"] * 13 / 15)
    assert full["P_5"] == pytest.approx(value["P_5"] * 13 / 15)


def test_ndcg_gain_map(tmp_path: Path) -> None:
    # Run order d3 (rel 0), d1 (rel 1), d2 (rel 2); gains 0 -> 0, 1 -> 1, 2 -> 5.
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("a 0 d1 1\na 0 d2 2\na 0 d3 0\n")
    run.write_text("a Q0 d1 1 0.5 t\na Q0 d2 2 0.4 t\na Q0 d3 3 0.9 t\n")
    mapped = trec_eval(qrels, run, ["ndcg.0=0,1=1,2=5"])
    linear = trec_eval(qrels, run, ["ndcg"])
    log2 = np.log2
    assert mapped["value"].item() == pytest.approx(
        (0 / log2(2) + 1 / log2(3) + 5 / log2(4)) / (5 / log2(2) + 1 / log2(3)), abs=1e-15
    )
    assert linear["value"].item() == pytest.approx(
        (0 / log2(2) + 1 / log2(3) + 2 / log2(4)) / (2 / log2(2) + 1 / log2(3)), abs=1e-15
    )
    # A level missing from the map keeps its own value as gain (trec_eval's rule).
    partial = trec_eval(qrels, run, ["ndcg.2=5"])
    assert partial["value"].item() == mapped["value"].item()


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "run"
    bad.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 oops\n")
    assert main(["trec-eval", str(QRELS), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "run:2: malformed run line 'q1 Q0 d2 oops'" in err
    assert main(["trec-eval", str(QRELS), str(tmp_path / "missing")]) == 2
    assert "cannot read results file" in capsys.readouterr().err
    # trec_eval's exit status for an illegal measure is 1
    assert main(["trec-eval", "-m", "nope", str(QRELS), str(RUN)]) == 1
    assert "illegal measure 'nope'" in capsys.readouterr().err

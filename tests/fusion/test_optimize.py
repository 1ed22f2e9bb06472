"""optimize_fusion: one evaluate call, cross-validation, ranx's candidate scores."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from tests.fusion._ranx import random_qrels, ranx, to_ranx, to_ranx_qrels


def _continuous_runs(
    seed: int, n_runs: int = 2, n_queries: int = 12, keep: list[str] | None = None
) -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for r in range(n_runs):
        rows = [
            (f"q{q}", f"d{i:02d}", float(rng.random()))
            for q in range(n_queries)
            for i in rng.choice(14, size=10, replace=False)
        ]
        frame = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
        runs[f"run{r}"] = frame if keep is None else frame.filter(pl.col("user").is_in(keep))
    return runs


def test_hand_computed_and_cross_validated() -> None:
    a = pl.DataFrame(
        {
            "user": ["q1", "q1", "q2", "q2", "q3", "q3"],
            "item": ["x", "y"] * 3,
            "score": [2.0, 1.0] * 3,
        }
    )
    b = a.with_columns(score=-pl.col("score"))
    # y is relevant for q1 and q2 (b is right), x for q3 (a is right).
    qrels = pl.DataFrame(
        {"user": ["q1", "q2", "q3"], "item": ["y", "y", "x"], "relevance": [1, 1, 1]}
    )
    found = prk.optimize_fusion(
        {"a": a, "b": b}, qrels, metric="mrr", folds=3, search={"weights": [(0.8, 0.2), (0.2, 0.8)]}
    )
    assert found.best == {"weights": {"a": 0.2, "b": 0.8}}
    assert found.candidates["mrr"].to_list() == pytest.approx(
        [(1 / 2 + 1 / 2 + 1) / 3, (1 + 1 + 1 / 2) / 3]
    )
    # Leave-one-query-out: holding out q3, the others choose b (mrr 1/2 on q3); holding
    # out q1 or q2, the other two tie (mean 3/4) and the first candidate (a) is chosen,
    # which scores 1/2 on the held-out query. The cross-validated score is below the
    # tuned one.
    assert found.score == pytest.approx((1 / 2 + 1 / 2 + 1 / 2) / 3)
    assert found.score < found.candidates["mrr"].max()
    assert found.folds.height == 3


def test_every_candidate_in_one_evaluate_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars_rankeval.api.evaluate as api

    calls: list[Any] = []
    real = api.evaluate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("by"))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "evaluate", counting)
    runs = _continuous_runs(1, n_runs=3)
    qrels = random_qrels(1, n_queries=12)
    found = prk.optimize_fusion(runs, qrels, method="w_rrf", search={"k": [10, 60]})
    assert calls == [["candidate", "fold"]]
    assert found.candidates.height == 66 * 2  # tenths summing to 1 over 3 runs, 2 ks
    assert found.candidates["chosen"].sum() == 5


def test_a_trained_method_is_trained_without_the_held_out_fold() -> None:
    runs = _continuous_runs(2)
    qrels = random_qrels(2, n_queries=12)
    found = prk.optimize_fusion(
        runs, qrels, method="probfuse", metric="map", search={"n_segments": [2, 5]}, folds=3
    )
    assert set(found.candidates.columns) == {"candidate", "n_segments", "map", "chosen"}
    assert found.folds["n_test"].sum() == qrels.filter(pl.col("relevance") >= 1)["user"].n_unique()
    assert np.isfinite(found.score)


def test_candidate_scores_equal_ranx_optimize_fusion() -> None:
    # ranx scores a query without a relevant item 0, evaluate leaves it out (its empty
    # policy): the judgments keep the queries with a relevant item.
    qrels = random_qrels(3, n_queries=12)
    qrels = qrels.filter((pl.col("relevance") >= 1).any().over("user"))
    runs = _continuous_runs(3, keep=qrels["user"].unique().to_list())
    found = prk.optimize_fusion(runs, qrels, method="wsum", metric="ndcg@10")
    queries = sorted(qrels["user"].unique())
    _, report = ranx.optimize_fusion(
        to_ranx_qrels(qrels),
        [to_ranx(f, queries) for f in runs.values()],
        norm="min-max",
        method="wsum",
        metric="ndcg@10",
        return_optimization_report=True,
        show_progress=False,
    )
    # ranx names a configuration by the text of its weights (NumPy floats)
    theirs = {
        tuple(float(w) for w in re.findall(r"\d+\.\d+", config)): v
        for config, v in zip(report.configs, report.results, strict=True)
    }
    assert len(theirs) == found.candidates.height == 11
    # A zero weight ties the items of that run at 0 in the fused run: evaluate averages
    # over the orders of tied items, ranx takes its sort's; compared without ties.
    compared = 0
    for weights, ours in found.candidates.select("weights", "ndcg@10").iter_rows():
        if 0.0 not in weights:
            assert ours == pytest.approx(theirs[tuple(weights)], abs=1e-12)
            compared += 1
    assert compared == 9


ERRORS = [
    ({"folds": 1}, ValueError, "'folds' of optimize_fusion must be an integer >= 2, got 1"),
    ({"folds": 2.0}, TypeError, "'folds' of optimize_fusion must be an integer >= 2, got float"),
    (
        {"search": {"kk": [1]}, "method": "rrf"},
        ValueError,
        r"search has no key 'kk' for method 'rrf'; valid: \['k'\]",
    ),
    ({"search": {"weights": [(1.0,)]}}, ValueError, "one weight per run"),
    ({"search": {"k": [0]}, "method": "rrf"}, ValueError, "parameter 'k' of method 'rrf'"),
    ({"method": "nope"}, ValueError, "method must be one of"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), ERRORS)
def test_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    runs = _continuous_runs(4)
    with pytest.raises(error, match=match):
        prk.optimize_fusion(runs, random_qrels(4, n_queries=12), **kwargs)


def test_row_order_and_laziness_do_not_matter() -> None:
    from polars.testing import assert_frame_equal

    runs = _continuous_runs(5)
    qrels = random_qrels(5, n_queries=12)
    eager = prk.optimize_fusion(runs, qrels, method="rrf", folds=3)
    shuffled = {k: f.sample(fraction=1.0, shuffle=True, seed=3).lazy() for k, f in runs.items()}
    lazy = prk.optimize_fusion(shuffled, qrels.lazy(), method="rrf", folds=3)
    assert_frame_equal(eager.candidates, lazy.candidates)
    assert_frame_equal(eager.folds, lazy.folds)
    assert eager.best == lazy.best
    assert eager.score == lazy.score
    # one frame with a system column: the runs in sorted order
    stacked = pl.concat([f.with_columns(system=pl.lit(k)) for k, f in runs.items()])
    one = prk.optimize_fusion(stacked, qrels, method="rrf", folds=3)
    assert_frame_equal(one.candidates, eager.candidates)


def test_bad_rows_are_refused_at_the_call() -> None:
    """The runs' rows are checked as fuse checks them: a NaN score names its run."""
    runs = _continuous_runs(6)
    runs["run1"] = runs["run1"].with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(float("nan"))
        .otherwise(pl.col("score"))
        .alias("score")
    )
    with pytest.raises(ValueError, match="run 'run1': score column 'score' has 1 NaN"):
        prk.optimize_fusion(runs, random_qrels(6, n_queries=12), method="rrf")

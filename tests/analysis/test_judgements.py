"""prk.judgement_gaps: condensed lists (unjudged removed) against unjudged as non-relevant."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.analysis.judgements import GAP_COLUMNS, USER_GAP_COLUMNS


def random_runs(seed: int = 0, n_users: int = 30, depth: int = 20) -> pl.DataFrame:
    """Two systems, continuous scores, about 30% of the retrieved items unjudged."""
    rng = np.random.default_rng(seed)
    # one judgment per (user, item), shared by the systems
    judgments = {
        (u, i): int(rng.integers(0, 3)) if rng.random() > 0.3 else None
        for u in range(n_users)
        for i in range(depth)
    }
    rows = [
        (system, f"q{u}", f"d{i}", float(rng.random()), judgments[(u, i)])
        for system in ("a", "b")
        for u in range(n_users)
        for i in range(depth)
    ]
    return pl.DataFrame(rows, schema=["system", "user", "item", "score", "relevance"], orient="row")


def test_hand_computed() -> None:
    # user 1: A (rel), U (unjudged), B (rel), C (non-rel).
    #   as non-relevant: P@2 = 1/2; condensed A, B, C: P@2 = 2/2; unjudged share 1/2.
    # user 2: A (rel), B (non-rel): nothing unjudged, both P@2 = 1/2, no gap.
    data = pl.DataFrame(
        {
            "system": "s",
            "user": [1, 1, 1, 1, 2, 2],
            "item": ["A", "U", "B", "C", "A", "B"],
            "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
            "relevance": [1, None, 1, 0, 1, 0],
        }
    )
    summary, users = prk.judgement_gaps(data, ["precision@2"])
    assert summary.columns == list(GAP_COLUMNS)
    row = summary.row(0, named=True)
    assert row["unjudged"] == (1 / 2 + 0) / 2
    assert row["condensed"] == (2 / 2 + 1 / 2) / 2
    assert row["as_nonrelevant"] == (1 / 2 + 1 / 2) / 2
    assert row["difference"] == pytest.approx(row["condensed"] - row["as_nonrelevant"])
    assert (row["n_users"], row["n_differ"]) == (2, 1)
    assert users.columns == list(USER_GAP_COLUMNS)
    assert users.select("user", "unjudged", "difference", "rank").rows() == [(1, 0.5, 0.5, 1)]


def test_tied_scores() -> None:
    # U (unjudged) and A (relevant) tied at the top, B relevant below.
    # P@1 as non-relevant, expected over the 2 orders: (1 + 0) / 2; condensed: A, B -> 1.
    # unjudged share of the top 1: U is first in 1 of 2 orders, 1/2.
    data = pl.DataFrame(
        {
            "system": "s",
            "user": 1,
            "item": ["U", "A", "B"],
            "score": [2.0, 2.0, 1.0],
            "relevance": [None, 1, 1],
        }
    )
    summary, users = prk.judgement_gaps(data, ["precision@1"])
    assert summary.select("unjudged", "condensed", "as_nonrelevant").row(0) == (1 / 2, 1.0, 1 / 2)
    assert users["rank"].to_list() == [1]
    # item_desc (trec_eval): U before A, so P@1 = 0 read as non-relevant
    strict, _ = prk.judgement_gaps(data, ["precision@1"], ties="item_desc")
    assert strict.select("unjudged", "condensed", "as_nonrelevant").row(0) == (1.0, 1.0, 0.0)


def test_against_pytrec_eval_judged_only_and_ir_measures_judged() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ir_measures = pytest.importorskip("ir_measures")
    data = random_runs()
    summary, _ = prk.judgement_gaps(data, ["ndcg@10", "precision@5", "map"], ties="item_desc")
    judged = data.filter(pl.col("relevance").is_not_null())
    qrels: dict[str, dict[str, int]] = {}
    for u, i, r in (
        judged.filter(pl.col("system") == "a").select("user", "item", "relevance").rows()
    ):
        qrels.setdefault(u, {})[i] = r
    measures = {"ndcg_cut_10", "P_5", "map"}
    names = {"ndcg@10": "ndcg_cut_10", "precision@5": "P_5", "map": "map"}
    for system in ("a", "b"):
        run: dict[str, dict[str, float]] = {}
        for u, i, s in (
            data.filter(pl.col("system") == system).select("user", "item", "score").rows()
        ):
            run.setdefault(u, {})[i] = s
        full = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        cond = pytrec_eval.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(
            run
        )
        for metric, measure in names.items():
            row = summary.filter((pl.col("metric") == metric) & (pl.col("system") == system))
            assert row["as_nonrelevant"][0] == pytest.approx(
                np.mean([v[measure] for v in full.values()])
            )
            assert row["condensed"][0] == pytest.approx(
                np.mean([v[measure] for v in cond.values()])
            )
        judged_at = ir_measures.calc_aggregate(
            [ir_measures.Judged @ 10],
            [ir_measures.Qrel(u, i, r) for u, d in qrels.items() for i, r in d.items()],
            [ir_measures.ScoredDoc(u, i, s) for u, d in run.items() for i, s in d.items()],
        )[ir_measures.Judged @ 10]
        row = summary.filter((pl.col("metric") == "ndcg@10") & (pl.col("system") == system))
        assert row["unjudged"][0] == pytest.approx(1 - judged_at)


def test_condensed_equals_evaluate_on_judged_rows() -> None:
    data = random_runs(seed=1)
    summary, _ = prk.judgement_gaps(data, ["ndcg@5"])
    expected = prk.evaluate(data.filter(pl.col("relevance").is_not_null()), ["ndcg@5"], by="system")
    got = summary.sort("system")["condensed"].to_numpy()
    np.testing.assert_allclose(got, expected.sort("system")["ndcg@5"].to_numpy())


def test_row_order_and_lazy_do_not_matter() -> None:
    data = random_runs(seed=2)
    summary, users = prk.judgement_gaps(data, ["ndcg@10", "recall@5"], n=3)
    shuffled = prk.judgement_gaps(
        data.sample(fraction=1.0, shuffle=True, seed=4), ["ndcg@10", "recall@5"], n=3
    )
    lazy = prk.judgement_gaps(data.lazy(), ["ndcg@10", "recall@5"], n=3)
    for other in (shuffled, lazy):
        assert_frame_equal(summary, other.summary)
        assert_frame_equal(users, other.users)
    # the listed users are the largest |difference|, at most n per (metric, system)
    assert users.group_by("metric", "system").len()["len"].max() <= 3


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 0}, ValueError, "'n' of judgement_gaps must be an integer >= 1, got 0"),
        ({"tie_tolerance": "x"}, TypeError, "'tie_tolerance' of .* >= 0, got str 'x'"),
        ({"per_user": True}, TypeError, "judgement_gaps\\(\\) does not take per_user="),
        ({"rank_positions": "absolute"}, ValueError, "needs rank_positions='relative'"),
        ({"relevance": "rel"}, ValueError, "relevance column 'rel' not found"),
        (
            {"by": ["system"]},
            TypeError,
            "'by' of judgement_gaps must be a column name \\(str\\), got list",
        ),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.judgement_gaps(random_runs(n_users=2, depth=3), ["ndcg@3"], **kwargs)  # type: ignore[arg-type]

"""``map(tie_group=threshold)``: a tie group of scores is one threshold.

scikit-learn's ``average_precision_score`` sums (R_n - R_{n-1}) P_n over the distinct
scores, so each positive gets the precision at the end of its tie group; Cornac's MAP
gives tied items the maximum rank (``rankdata(-scores, "max")``), the same rule. Both
are checked per user on random data with ties, including scores 1e-12 apart.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from tests.frames import LECTURE_RELEVANCE, LECTURE_SCORES

THRESHOLD = "map(tie_group=threshold)"


def one_user(scores: list[float | None], relevance: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "user": [1] * len(scores),
            "item": list(range(len(scores))),
            "score": scores,
            "relevance": relevance,
        },
        schema_overrides={"score": pl.Float64},
    )


def value(df: pl.DataFrame, metric: str = THRESHOLD, **kwargs: object) -> float | None:
    return prk.evaluate(df, [metric], **kwargs).item(0, 0)


def test_hand_computed() -> None:
    # tie-free: the lecture's example, relevant at ranks 1, 3, 4 of five
    df = one_user(LECTURE_SCORES, LECTURE_RELEVANCE)
    assert value(df) == pytest.approx((1 / 1 + 2 / 3 + 3 / 4) / 3)
    assert value(df) == pytest.approx(value(df, "map"))
    # ranks 2-4 tied, holding two relevant items: both get the precision at rank 4, 3/4
    tied = one_user([5.0, 3, 3, 3, 1], [1, 0, 1, 1, 0])
    assert value(tied) == pytest.approx((1 / 1 + 3 / 4 + 3 / 4) / 3)
    # constant scores: the positive rate, 2/5
    flat = one_user([1.0] * 5, [1, 0, 1, 0, 0])
    assert value(flat) == pytest.approx((2 / 5 + 2 / 5) / 2)
    # a relevant item never recommended (null score) adds 0 and counts in #relevant
    missing = one_user([2.0, 1.0, None], [1, 0, 1])
    assert value(missing) == pytest.approx((1 / 1 + 0) / 2)
    # denominator=hits divides by the relevant recommended items only
    assert value(missing, "map(denominator=hits,tie_group=threshold)") == pytest.approx(1.0)
    # no relevant item: undefined (scikit-learn returns 0 with a warning: empty='zero')
    assert value(one_user([1.0, 2.0], [0, 0])) is None
    assert value(one_user([1.0, 2.0], [0, 0]), empty="zero") == 0.0


def test_tie_policy_does_not_matter() -> None:
    tied = one_user([5.0, 3, 3, 3, 1], [1, 0, 1, 1, 0])
    expected = (1 / 1 + 3 / 4 + 3 / 4) / 3
    for ties in ("expected", "item_desc", "item_asc", "optimistic", "pessimistic"):
        assert value(tied, ties=ties) == pytest.approx(expected), ties
    # plain map does depend on it: optimistic puts C and D at ranks 2 and 3
    assert value(tied, "map", ties="optimistic") == pytest.approx((1 + 2 / 2 + 3 / 3) / 3)


def random_users(seed: int, n_users: int = 150) -> pl.DataFrame:
    """Heavy ties, and scores that differ by 1e-12 (distinct thresholds)."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        n = int(rng.integers(1, 12))
        scores = np.round(rng.random(n) * 3) / 3 + 1e-12 * rng.integers(0, 2, n)
        relevant = rng.random(n) < rng.random()
        rows += [(user, i, float(scores[i]), int(relevant[i])) for i in range(n)]
    return pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_matches_sklearn_and_cornac_per_user(ties: str) -> None:
    from sklearn.metrics import average_precision_score

    cornac = pytest.importorskip("cornac.metrics")
    df = random_users(4)
    per_user = prk.evaluate(df, [THRESHOLD], per_user=True, ties=ties)
    ours = dict(zip(per_user["user"], per_user[THRESHOLD], strict=True))
    checked = 0
    for (user,), rows in df.group_by("user"):
        labels, scores = rows["relevance"].to_numpy(), rows["score"].to_numpy()
        items = rows["item"].to_numpy()
        if labels.sum() == 0:
            assert ours[user] is None
            continue
        sk = average_precision_score(labels, scores)
        co = cornac.MAP().compute(item_indices=items, pd_scores=scores, gt_pos=items[labels > 0])
        assert ours[user] == pytest.approx(sk, abs=1e-12), user
        assert ours[user] == pytest.approx(co, abs=1e-12), user
        checked += 1
    assert checked > 80


def test_presets() -> None:
    from sklearn.metrics import average_precision_score

    df = random_users(9, 60)
    sk = prk.evaluate(df, ["average_precision_score"], conventions="sklearn", per_user=True)
    for (user,), rows in df.group_by("user"):
        got = sk.filter(pl.col("user") == user)["average_precision_score[sklearn]"].item()
        labels = rows["relevance"].to_numpy()
        if labels.sum() == 0:
            assert got == 0.0  # empty='zero', as sklearn's warning value
        else:
            assert got == pytest.approx(average_precision_score(labels, rows["score"]), abs=1e-12)
    cornac = prk.evaluate(df, ["MAP"], conventions="cornac")
    assert cornac.columns[0] == "MAP[cornac]"
    assert cornac.item(0, 0) == pytest.approx(prk.evaluate(df, [THRESHOLD]).item(0, 0))
    with pytest.raises(ValueError, match="takes no cutoff"):
        prk.evaluate(df, ["MAP@5"], conventions="cornac")


def test_inline_expression_and_buckets() -> None:
    df = random_users(2, 40)
    inline = df.group_by("user").agg(prk.map(tie_group="threshold")).sort("user")
    evaluated = prk.evaluate(df, [THRESHOLD], per_user=True)
    assert inline[THRESHOLD].to_list() == pytest.approx(evaluated[THRESHOLD].to_list(), abs=1e-12)
    buckets = prk.evaluate(df, [THRESHOLD], engine=prk.Buckets(n_buckets=3))
    assert buckets.item(0, 0) == pytest.approx(prk.evaluate(df, [THRESHOLD]).item(0, 0))


def test_errors() -> None:
    df = one_user([2.0, 1.0], [1, 0])
    with pytest.raises(ValueError, match="tie_group=threshold\\) takes no cutoff"):
        prk.evaluate(df, ["map(tie_group=threshold)@5"])
    with pytest.raises(ValueError, match="parameter 'tie_group' of metric 'map' must be one of"):
        prk.evaluate(df, ["map(tie_group=max)"])
    ranked = df.with_columns(rank=pl.Series([1, 3])).drop("score")
    with pytest.raises(ValueError, match="absolute ranks"):
        prk.evaluate(ranked, [THRESHOLD], score=None, rank="rank", rank_positions="absolute")

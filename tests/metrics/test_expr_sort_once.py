"""The sort-once provider of the stand-alone expressions on the cases its shortcuts touch.

Tie-group bounds read from the sorted rows (the not-recommended rows, a null score,
are one group at the bottom), the first-relevant probability of ``mrr`` as a running
product inside a tie group, and the tie-group mean of ``1/p`` of ``map`` from running
sums: each by hand, against ``evaluate(per_user=True)`` and against the brute-force
reference that averages over every ordering of the tied rows.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._reference import reference_frame


def _one_user(scores: list[float | None], relevance: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "user": [1] * len(scores),
            "item": list(range(len(scores))),
            "score": scores,
            "relevance": relevance,
        },
        schema_overrides={"score": pl.Float64},
    )


def test_auc_counts_the_unscored_rows_as_the_last_tie_group() -> None:
    # Positions: {0, 1} tied at 1-2, {2, 3} tied at 3-4, item 4 at 5, item 5 (no score)
    # at 6. Relevant: 0, 1, 4, 5 (mean positions 1.5, 1.5, 5, 6); 2 non-relevant.
    df = _one_user([2.0, 2.0, 1.0, 1.0, 0.0, None], [3, 1, 0, 0, 1, 2])
    u = 4 * (6 + 1) - (1.5 + 1.5 + 5 + 6) - 4 * 5 / 2
    got = df.group_by("user").agg(prk.auc()).item(0, "auc")
    assert got == pytest.approx(u / (4 * 2), abs=1e-15)
    assert got == pytest.approx(0.5, abs=1e-15)
    assert prk.evaluate(df, ["auc"], per_user=True).item(0, "auc") == pytest.approx(got)


def test_unscored_rows_alone_form_one_tie_group() -> None:
    # No row has a score: nothing is recommended, every relevant row is at positions 1-3.
    df = _one_user([None, None, None], [1, 0, 1])
    got = df.group_by("user").agg(prk.auc(), prk.mrr(), prk.recall())
    assert got.select("auc", "mrr", "recall").row(0) == (0.5, 0.0, 0.0)
    expected = prk.evaluate(df, ["auc", "mrr", "recall"], per_user=True)
    assert expected.select("auc", "mrr", "recall").row(0) == (0.5, 0.0, 0.0)


@pytest.mark.parametrize("k", [None, 4, 12])
def test_mrr_expected_in_a_large_tie_group(k: int | None) -> None:
    # One item above a 20-way tie holding 3 relevant items (the top item is not
    # relevant): the first relevant item sits at offset j of the group (position 2 + j)
    # with probability C(19 - j, 2) / C(20, 3).
    df = _one_user([5.0] + [1.0] * 20, [0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, *[0] * 8])
    last = 17 if k is None else min(17, k - 2)
    value = sum(math.comb(19 - j, 2) / math.comb(20, 3) / (2 + j) for j in range(last + 1))
    got = df.group_by("user").agg(prk.mrr(k)).item(0, 1)
    assert got == pytest.approx(value, rel=1e-13)
    name = "mrr" if k is None else f"mrr@{k}"
    assert prk.evaluate(df, [name], per_user=True).item(0, name) == pytest.approx(got, rel=1e-13)


def test_tie_group_shortcuts_match_the_brute_force_reference() -> None:
    # A 7-way tie straddling every cutoff, under an item above and one below: 7!
    # orderings in the reference.
    df = _one_user([3.0] + [2.0] * 7 + [1.0, None], [1, 0, 2, 0, 1, 0, 0, 3, 1, 1])
    metrics = ["mrr@3", "mrr", "map@4", "map", "ndcg@5", "auc", "precision@6"]
    expected = reference_frame(df, metrics, "expected")
    got = (
        df.group_by("user")
        .agg(
            prk.mrr(3),
            prk.mrr(),
            prk.map(4),
            prk.map(),
            prk.ndcg(5),
            prk.auc(),
            prk.precision(6),
        )
        .select("user", *metrics)
    )
    assert_frame_equal(got, expected.select("user", *metrics), abs_tol=1e-12, check_dtypes=False)

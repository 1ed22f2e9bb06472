"""partial_auc (pAUC@k) and pap (pAp@k): RecTools' PartialAUC and PAP.

Expected values: MobileTeleSystems/RecTools tests/metrics/test_auc.py (TestPartialAUC,
TestPAP) and the docstrings of rectools/metrics/auc.py; hand-computed values with the
arithmetic written out; the exact expectation over tied orderings against a brute
force over every ordering.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from tests._tie_brute import brute_per_user
from tests._tie_brute import per_user as engine_per_user
from tests.frames import rectools_frame


def per_user(df: pl.DataFrame, metrics: list[str], **kw: Any) -> pl.DataFrame:
    return prk.evaluate(df, metrics, per_user=True, **kw).sort("user")


# RecTools tests/metrics/test_auc.py, TestPartialAUC.test_calc / TestPAP.test_calc.
RECO = {
    1: [(1, 9)],
    2: [(2, 1)],
    3: [(1, 1), (2, 2), (3, 3)],
    4: [(1, 1)],
    5: [(1, 3), (2, 7), (3, 9), (5, 1)],
}
INTER = {1: {1}, 2: {1}, 3: {1, 2, 3}, 4: {1}, 5: {1, 2, 3, 4}}


def test_rectools_test_suite_values() -> None:
    df = rectools_frame(RECO, INTER)
    names = [
        "PartialAUC@1",
        "PartialAUC@3",
        "PartialAUC(insufficient_handling=exclude)@1",
        "PartialAUC(insufficient_handling=exclude)@3",
        "PAP@1",
        "PAP@3",
        "PAP(insufficient_handling=exclude)@1",
        "PAP(insufficient_handling=exclude)@3",
    ]
    got = prk.evaluate(df, names, rank="rank", conventions="rectools", per_user=True).sort("user")
    col = {n: got[f"{n}[rectools]"].to_list() for n in names}
    assert col["PartialAUC@1"] == [0, 0, 1, 1, 0]
    assert col["PartialAUC@3"] == pytest.approx([0, 0, 1, 1, 1 / 12])
    assert col["PartialAUC(insufficient_handling=exclude)@1"] == [0, 0, 1, 1, 0]
    # user 2 (one negative, its relevant item not recommended) is excluded at k=3
    assert col["PartialAUC(insufficient_handling=exclude)@3"] == pytest.approx(
        [0, None, 1, 1, 1 / 12]
    )
    assert col["PAP@1"] == [0, 0, 1, 1, 0]
    assert col["PAP@3"] == pytest.approx([0, 0, 1, 1, 1 / 9])
    assert col["PAP(insufficient_handling=exclude)@3"] == pytest.approx([0, None, 1, 1, 1 / 9])
    summary = prk.evaluate(
        df, ["PartialAUC(insufficient_handling=exclude)@3"], rank="rank", conventions="rectools"
    )
    # the mean over the 4 users RecTools keeps: (0 + 1 + 1 + 1/12) / 4
    assert summary["PartialAUC(insufficient_handling=exclude)@3[rectools]"].item() == (
        pytest.approx((0 + 1 + 1 + 1 / 12) / 4)
    )


def test_rectools_docstring_and_short_list_values() -> None:
    # rectools/metrics/auc.py PartialAUC / PAP docstrings: [1, 1, 0] at k=1,
    # [1, 1, 1/3] at k=3 and [1, 1] with insufficient_handling="exclude".
    reco = {1: [(1, 1), (2, 2)], 2: [(3, 1), (1, 2), (2, 3)], 3: [(3, 1), (2, 2)]}
    inter = {1: {1, 2}, 2: {1, 3}, 3: {1, 2}}
    df = rectools_frame(reco, inter)
    for name in ("PartialAUC", "PAP"):
        got = per_user(df, [f"{name}@1", f"{name}@3"], rank="rank", conventions="rectools")
        assert got[f"{name}@1[rectools]"].to_list() == [1, 1, 0]
        assert got[f"{name}@3[rectools]"].to_list() == pytest.approx([1, 1, 1 / 3])
        excl = f"{name}(insufficient_handling=exclude)@3"
        summary = prk.evaluate(df, [excl], rank="rank", conventions="rectools")
        assert summary[f"n_users({excl}[rectools])"].item() == 2
    # test_when_duplicates_in_interactions_insufficient (PAP, k=2): user 1 has item 1 at
    # rank 1 and relevant items 1, 2, 10 (2 and 10 not recommended): 2 / (2 * 2) = 1/2;
    # user 2 has its items at ranks 4..6 behind three gap negatives: 0.
    df = rectools_frame({1: [(1, 1)], 2: [(1, 4), (2, 5), (3, 6)]}, {1: {1, 2, 10}, 2: {1, 2, 3}})
    got = per_user(df, ["PAP@2", "PAP(insufficient_handling=exclude)@2"], rank="rank",
                   conventions="rectools")  # fmt: skip
    assert got["PAP@2[rectools]"].to_list() == [0.5, 0]
    assert got["PAP(insufficient_handling=exclude)@2[rectools]"].to_list() == [None, 0]


def test_hand_computed() -> None:
    # One user, scores 6..1: relevance 0 1 1 0 1 0, and a relevant item not recommended.
    df = pl.DataFrame(
        {
            "user": [1] * 7,
            "item": list(range(7)),
            "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, None],
            "relevance": [0, 1, 1, 0, 1, 0, 1],
        }
    )
    got = per_user(df, ["partial_auc@2", "pap@2", "partial_auc@1", "pap@3", "partial_auc", "pap"])
    # negatives above the relevant items at ranks 2, 3, 5: 1, 1, 2; R = 4
    assert got["partial_auc@2"].item() == pytest.approx(((2 - 1) + (2 - 1) + 0 + 0) / (2 * 4))
    # pap@2: the first min(2, 4) = 2 relevant items only
    assert got["pap@2"].item() == pytest.approx(((2 - 1) + (2 - 1)) / (2 * 2))
    assert got["partial_auc@1"].item() == 0.0  # every relevant item is below the 1st negative
    # pap@3: the first 3 relevant items, 3 negatives (the 3rd after them all)
    assert got["pap@3"].item() == pytest.approx(((3 - 1) + (3 - 1) + (3 - 2)) / (3 * 3))
    # Without @k, k = the 3 negatives of the list: negatives below each relevant item
    # 2, 2, 1, 0 (not recommended) over 3 * 4; pap: the first min(3, 4) relevant items.
    assert got["partial_auc"].item() == pytest.approx((2 + 2 + 1 + 0) / (3 * 4))
    assert got["pap"].item() == pytest.approx((2 + 2 + 1) / (3 * 3))
    # The inline expression gives the same.
    inline = df.group_by("user").agg(prk.partial_auc(2), prk.pap(3))
    assert inline["partial_auc@2"].item() == pytest.approx(2 / 8)
    assert inline["pap@3"].item() == pytest.approx(5 / 9)


def test_tied_scores_hand_computed() -> None:
    # Scores 3, 2, 2, 2, 1 with relevance 1, 1, 0, 1, 0 (the tie group: r = 2 relevant,
    # s = 1 negative). partial_auc@1: the first item adds 1 - 0 = 1; each tied relevant
    # item has U ~ uniform{0, 1} negatives above it: E[max(0, 1 - U)] = 1/2 each.
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": [1, 2, 3, 4, 5],
            "score": [3.0, 2.0, 2.0, 2.0, 1.0],
            "relevance": [1, 1, 0, 1, 0],
        }
    )
    got = per_user(df, ["partial_auc@1", "pap@2", "pap@1"])
    assert got["partial_auc@1"].item() == pytest.approx((1 + 0.5 + 0.5) / (1 * 3))
    # pap@2: the group straddles the 2nd relevant item (one above it, d = 1 of its r = 2
    # counts): c = 2, U_1 (negatives before the first relevant item of the group) is 0
    # with probability 2/3, 1 with 1/3: E[2 - U_1] = 2 - 1/3; plus 2 for the first item.
    assert got["pap@2"].item() == pytest.approx((2 + (2 - 1 / 3)) / (2 * 2))
    assert got["pap@1"].item() == pytest.approx(1.0)  # first item relevant, above all
    for ties in ("optimistic", "pessimistic"):
        hi = per_user(df, ["pap@2"], ties=ties)["pap@2"].item()
        # optimistic: relevant first in the group (2 + 2) / 4; pessimistic: (2 + 1) / 4
        assert hi == pytest.approx(1.0 if ties == "optimistic" else 0.75)


def _random_frame(seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = []
    for user in range(10):
        for item in range(rng.randint(1, 7)):
            score = float(rng.choice([1, 2, 2, 3, 3, 3])) if rng.random() < 0.85 else None
            rows.append((user, item, score, float(rng.random() < 0.5)))
    return pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")


@pytest.mark.parametrize(
    "metric",
    [
        "partial_auc",
        "partial_auc@2",
        "partial_auc(insufficient=exclude)@3",
        "pap",
        "pap@2",
        "pap@3",
    ],
)
def test_expected_ties_match_brute_force(metric: str) -> None:
    df = _random_frame(3)
    brute = brute_per_user(df, metric)
    got = engine_per_user(df, metric, ties="expected")
    assert set(brute) == set(got)
    for user, value in brute.items():
        if value is None:
            assert got[user] is None
        else:
            assert got[user] == pytest.approx(value, abs=1e-12)


def test_bad_values_are_refused() -> None:
    df = _random_frame(1)
    with pytest.raises(ValueError, match=r"parameter 'insufficient' of metric 'pap' must be one"):
        prk.evaluate(df, ["pap(insufficient=error)@3"])
    with pytest.raises(ValueError, match=r"'rel' of metric 'partial_auc' must be > 0"):
        prk.evaluate(df, ["partial_auc(rel=0)@3"])
    with pytest.raises(ValueError, match=r"checked on the per-user values; it takes the default"):
        prk.evaluate(df, ["pap(aggregate=sum,insufficient=raise)@3"])


def test_exclude_with_empty_error_raises_like_rectools() -> None:
    # exclude + evaluate(empty="error") also raises (for every undefined user, not only
    # the insufficient ones: insufficient=raise is RecTools' rule).
    df = rectools_frame(RECO, INTER)
    with pytest.raises(ValueError, match="undefined"):
        prk.evaluate(
            df,
            ["pap(insufficient=exclude)@3"],
            rank="rank",
            rank_positions="absolute",
            empty="error",
        )


# RecTools' insufficient_handling="raise" (rectools/metrics/auc.py,
# _handle_insufficient_cases): a user with fewer than k false positives in its list and a
# relevant item not recommended is an error; user 2 of RECO at k=3 (item 2 at rank 1 is
# its one negative, relevant item 1 is not recommended).
RAISED = r"metric 'pap\(insufficient=raise\)@3': 1 user\(s\) with fewer than k .*first \[\(2,\)\]"


def test_insufficient_raise_names_the_users() -> None:
    df = rectools_frame(RECO, INTER)
    kw: dict[str, Any] = {"rank": "rank", "rank_positions": "absolute"}
    with pytest.raises(ValueError, match=RAISED):
        prk.evaluate(df, ["pap(insufficient=raise)@3"], **kw)
    # lazy in, lazy out: the check runs at collect
    lazy = prk.evaluate(df.lazy(), ["pap(insufficient=raise)@3"], **kw)
    assert isinstance(lazy, pl.LazyFrame)
    with pytest.raises(ValueError, match=RAISED):
        lazy.collect()
    with pytest.raises(ValueError, match=RAISED):  # per-user output too
        prk.evaluate(df, ["pap(insufficient=raise)@3"], per_user=True, **kw)
    # two users: the count and both ids (users 2 and 6, the latter without recommendations)
    two = rectools_frame({**RECO, 6: []}, {**INTER, 6: {1}})
    with pytest.raises(ValueError, match=r"2 user\(s\) .*first \[\(2,\), \(6,\)\]"):
        prk.evaluate(two, ["partial_auc(insufficient=raise)@3"], **kw)
    # by groups: the by values are part of the user's key in the message
    by = df.with_columns(g=pl.lit("x"))
    with pytest.raises(ValueError, match=r"first \[\('x', 2\)\]"):
        prk.evaluate(by, ["pap(insufficient=raise)@3"], by="g", **kw)


def test_insufficient_raise_equals_exclude_when_no_user_is_insufficient() -> None:
    df = rectools_frame(RECO, INTER)
    kw: dict[str, Any] = {"rank": "rank", "rank_positions": "absolute"}
    # at k=1 every user is sufficient: raise = exclude = ignore, [0, 0, 1, 1, 0]
    for name in ("partial_auc", "pap"):
        got = per_user(
            df, [f"{name}(insufficient=raise)@1", f"{name}(insufficient=exclude)@1"], **kw
        )
        assert got[f"{name}(insufficient=raise)@1"].to_list() == [0, 0, 1, 1, 0]
        assert got[f"{name}(insufficient=exclude)@1"].to_list() == [0, 0, 1, 1, 0]
    # without user 2, k=3: PartialAUC [0, 1, 1, 1/12], PAP [0, 1, 1, 1/9] (RecTools' values)
    kept = df.filter(pl.col("user") != 2)
    names = ["partial_auc(insufficient=raise)@3", "pap(insufficient=raise)@3"]
    got = per_user(kept, names, **kw)
    assert got[names[0]].to_list() == pytest.approx([0, 1, 1, 1 / 12])
    assert got[names[1]].to_list() == pytest.approx([0, 1, 1, 1 / 9])
    summary = prk.evaluate(kept, names, **kw)
    assert summary[names[0]].item() == pytest.approx((0 + 1 + 1 + 1 / 12) / 4)
    # a user without a relevant item is undefined (empty=), not an error
    extra = rectools_frame({**RECO, 7: [(1, 1)]}, {**INTER, 7: set()}).filter(pl.col("user") != 2)
    out = prk.evaluate(extra, names, **kw)
    assert out[f"n_users({names[0]})"].item() == 4


def test_insufficient_raise_under_the_rectools_preset() -> None:
    df = rectools_frame(RECO, INTER)
    for name in ("PartialAUC", "PAP"):
        metric = f"{name}(insufficient_handling=raise)@3"
        with pytest.raises(ValueError, match=r"1 user\(s\) with fewer than k .*first \[\(2,\)\]"):
            prk.evaluate(df, [metric], rank="rank", conventions="rectools")
        ok = prk.evaluate(
            df.filter(pl.col("user") != 2), [metric], rank="rank", conventions="rectools"
        )
        assert ok[f"{metric}[rectools]"].item() == pytest.approx(
            (0 + 1 + 1 + (1 / 12 if name == "PartialAUC" else 1 / 9)) / 4
        )


def test_insufficient_raise_bucketed_and_compare() -> None:
    df = rectools_frame(RECO, INTER)
    kw: dict[str, Any] = {"rank": "rank", "rank_positions": "absolute"}
    with pytest.raises(ValueError, match=RAISED):
        prk.evaluate(df, ["pap(insufficient=raise)@3"], engine=prk.Buckets(n_buckets=3), **kw)
    kept = df.filter(pl.col("user") != 2)
    bucketed = prk.evaluate(
        kept, ["pap(insufficient=raise)@3"], engine=prk.Buckets(n_buckets=3), **kw
    )
    assert bucketed["pap(insufficient=raise)@3"].item() == pytest.approx((0 + 1 + 1 + 1 / 9) / 4)
    two = pl.concat([df.with_columns(system=pl.lit(s)) for s in ("a", "b")])
    # compare evaluates every system: user 2 of system a and of system b
    with pytest.raises(
        ValueError, match=r"2 user\(s\) with fewer than k .*first \[\('a', 2\), \('b', 2\)\]"
    ):
        prk.compare(two, ["pap(insufficient=raise)@3"], by="system", **kw)


def test_insufficient_raise_stand_alone_expression_marks_nan() -> None:
    # prk.partial_auc(...) in a select cannot raise: the insufficient user is NaN there
    # (user: relevant item 1 first, one negative, relevant item 3 not recommended; k=2).
    df = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [3.0, 2.0, None], "relevance": [1, 0, 1]}
    )
    out = df.select(prk.partial_auc(2, insufficient="raise")).item()
    assert out != out  # NaN
    assert df.select(prk.partial_auc(2, insufficient="exclude")).item() is None
    # ignore: item 1 has its 1 negative + 1 missing one below it: (2 + 0) / (2 * 2)
    assert df.select(prk.partial_auc(2)).item() == 2 / (2 * 2)


def _big_tie_users() -> list[tuple[list[int], list[int], list[int], int]]:
    """(labels above the tie group, labels of the group, labels below, missing relevant).

    Each tie group is large (8 to 12 items): the straddling group's law has many terms.
    """
    return [
        ([1, 0], [1] * 6 + [0] * 6, [0, 1], 1),  # r = 6, s = 6: 924 orderings
        ([0, 0, 0, 1], [1] * 7 + [0] * 3, [1], 0),  # many negatives above the group
        ([], [1] * 4 + [0] * 8, [0, 0], 2),  # the group at the top, short of relevant
        ([1, 1, 1], [1] * 5 + [0] * 4, [], 0),  # k-th relevant deep inside the group
    ]


@pytest.mark.parametrize(
    "metric", ["pap@2", "pap@4", "pap@7", "pap(insufficient=exclude)@9", "pap", "partial_auc@5"]
)
def test_large_tie_groups_match_brute_force(metric: str) -> None:
    # Every distinct ordering of a group's labels is one user of a tie-free frame (the
    # items of one label are exchangeable, so each label sequence has the same weight):
    # the expected value is the mean of the deterministic values over those users.
    tied_rows, brute_rows, expected = [], [], {}
    variant = 0
    for user, (above, group, below, missing) in enumerate(_big_tie_users()):
        # Distinct scores above and below the group (3.0x and 1.0x), ties only at 2.0.
        scored = [(3.1 - 0.01 * i, lab) for i, lab in enumerate(above)]
        scored += [(2.0, lab) for lab in group]
        scored += [(1.0 - 0.01 * i, lab) for i, lab in enumerate(below)]
        unranked = [(None, 1)] * missing
        for item, (score, lab) in enumerate(scored + unranked):
            tied_rows.append((user, item, score, float(lab)))
        first = variant
        for pos in itertools.combinations(range(len(group)), sum(group)):
            labels = [1 if i in pos else 0 for i in range(len(group))]
            seq = above + labels + below
            n = len(seq)
            for item, lab in enumerate(seq):
                brute_rows.append((variant, item, float(n - item), float(lab)))
            for item in range(missing):
                brute_rows.append((variant, n + item, None, 1.0))
            variant += 1
        expected[user] = range(first, variant)
    schema = ["user", "item", "score", "relevance"]
    tied = pl.DataFrame(tied_rows, schema=schema, orient="row")
    brute = pl.DataFrame(brute_rows, schema=schema, orient="row")
    det = per_user(brute, [metric], ties="item_asc", users="all")[metric].to_list()
    got = per_user(tied, [metric], ties="expected", users="all")[metric].to_list()
    for user, variants in expected.items():
        values = [det[v] for v in variants]
        if any(v is None for v in values):
            assert all(v is None for v in values)
            assert got[user] is None
        else:
            assert got[user] == pytest.approx(math.fsum(values) / len(values), abs=1e-12)
    # The inline expression (agg provider) gives the same values.
    if metric == "pap" or metric.startswith("pap@"):
        k = int(metric.split("@")[1]) if "@" in metric else None
        inline = tied.group_by("user").agg(prk.pap(k)).sort("user")[metric].to_list()
        assert inline == pytest.approx(got, abs=1e-12)

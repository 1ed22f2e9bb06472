"""intersection: RecTools' Intersection, in rank_similarity and as a registered metric.

Checked against RecTools' own test vectors (hard-coded, file cited), by hand, and, for
tied scores, against the mean over every tie-breaking order of both runs. RecTools
itself is not a test dependency: RecTools 0.19.0 pins numpy<2 on Python 3.11. (Run
ad hoc from its wheel against this implementation: 200 random pairs of tables with
gaps and repeated ranks, users missing from either, 3599 user values, all equal.)
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import polars as pl
import pytest

import polars_rankeval as prk


def _ranks(users: list[int], items: list[int], ranks: list[int]) -> pl.DataFrame:
    return pl.DataFrame({"user": users, "item": items, "rank": ranks})


# MobileTeleSystems/RecTools tests/metrics/test_intersection.py, TestIntersection.test_calc
# (the version testing Intersection(k, ref_k).calc_per_user(reco, ref_reco), RecTools 0.19).
RECO = _ranks(
    [1, 1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5],
    [1, 2, 1, 1, 2, 1, 2, 3, 1, 2, 3, 4],
    [3, 1, 1, 7, 5, 2, 1, 8, 1, 2, 2, 9],
)
REF = _ranks(
    [1, 1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5],
    [1, 3, 1, 1, 2, 1, 2, 3, 1, 2, 3, 4],
    [3, 2, 1, 1, 4, 5, 1, 2, 3, 4, 1, 7],
)


@pytest.mark.parametrize(
    ("k", "ref_k", "expected"),
    [
        (2, 2, [0.0, 1.0, 1 / 2, 1 / 3]),
        (3, None, [1 / 2, 1.0, 1 / 2, 2 / 3]),
        (3, 6, [1 / 2, 1.0, 1.0, 1.0]),
    ],
)
def test_rectools_test_suite_values(k: int, ref_k: int | None, expected: list[float]) -> None:
    name = f"Intersection(ref_k={ref_k})@{k}" if ref_k else f"Intersection@{k}"
    got = prk.rank_similarity(RECO, REF, [name], rank="rank", conventions="rectools", per_user=True)
    shown = f"{name}[rectools]"
    # RecTools' users [1, 2, 4, 5]: user 3 has no item within k (ranks 7 and 5), so it
    # has no value (null here, absent there) and is left out of the mean.
    assert got["user"].to_list() == [1, 2, 3, 4, 5]
    assert got[shown].to_list()[2] is None
    values = got.drop_nulls(shown)[shown].to_list()
    assert values == pytest.approx(expected, abs=1e-15)
    mean = prk.rank_similarity(RECO, REF, [name], rank="rank", conventions="rectools")
    assert mean[shown].item() == pytest.approx(sum(expected) / 4)
    assert mean[f"n_users({shown})"].item() == 4
    assert mean["n_users"].item() == 5  # the users of reco


def test_rectools_hand_check_of_one_vector() -> None:
    # User 5 at k=2: reco ranks 1, 2, 2 (items 1, 2, 3; a repeated rank 2 keeps both) and
    # 9; the reference's top 2 is item 3 (rank 1) alone: |{3}| / |{1, 2, 3}| = 1/3.
    got = prk.rank_similarity(
        RECO.filter(pl.col("user") == 5),
        REF,
        ["Intersection@2"],
        rank="rank",
        conventions="rectools",
        per_user=True,
    )
    assert got["Intersection@2[rectools]"].item() == pytest.approx(1 / 3)


def test_rectools_calc_intersection_metrics_and_empty_reference() -> None:
    # tests/metrics/test_intersection.py, TestCalcIntersectionMetrics: 0.75 with
    # Intersection(k=2, ref_k=1): user 1 (3, 2) against (3): 1/2; user 2: 1.
    reco = _ranks([1, 1, 2], [3, 2, 1], [1, 2, 1])
    ref = _ranks([1, 1, 2], [3, 5, 1], [1, 2, 1])
    name = "Intersection(ref_k=1)@2"
    out = prk.rank_similarity(reco, ref, [name], rank="rank", conventions="rectools")
    assert out[f"{name}[rectools]"].item() == (1 / 2 + 1) / 2 == 0.75
    # TestIntersection.test_when_no_ref_reco: an empty ref_reco gives no user (NaN mean).
    empty = prk.rank_similarity(
        reco, ref.clear(), ["Intersection@2"], rank="rank", conventions="rectools"
    )
    assert empty["Intersection@2[rectools]"].item() is None
    assert empty["n_users(Intersection@2[rectools])"].item() == 0


def test_user_missing_from_the_reference_scores_zero_under_users_a() -> None:
    reco = _ranks([1, 1, 2], [1, 2, 1], [1, 2, 1])
    ref = _ranks([1, 3], [1, 9], [1, 1])  # user 2 has no reference list, user 3 no reco
    got = prk.rank_similarity(
        reco, ref, ["Intersection@2"], rank="rank", conventions="rectools", per_user=True
    )
    assert got.rows() == [(1, 1 / 2), (2, 0.0)]  # user 1: {1} of {1, 2}
    both = prk.rank_similarity(reco, ref, ["intersection@2"], rank="rank", per_user=True)
    assert both.rows() == [(1, 1 / 2)]  # users="both" (the default): user 1 only
    either = prk.rank_similarity(
        reco, ref, ["intersection@2"], rank="rank", users="either", per_user=True
    )
    assert either.rows() == [(1, 1 / 2), (2, 0.0), (3, None)]  # user 3: empty top k


# --------------------------------------------------------------------------- by hand
def _scores(lists: dict[int, list[tuple[str, float]]]) -> pl.DataFrame:
    rows = [(u, item, s) for u, pairs in lists.items() for item, s in pairs]
    return pl.DataFrame(
        rows, schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64}, orient="row"
    )


def test_hand_computed_options() -> None:
    a = _scores({1: [("a", 5.0), ("b", 4.0), ("c", 3.0), ("d", 2.0)]})
    b = _scores({1: [("c", 9.0), ("x", 8.0), ("a", 7.0), ("y", 6.0), ("b", 5.0)]})
    names = [
        "intersection@2",  # {a, b} & {c, x} = {} -> 0 / 2
        "intersection(ref_k=3)@2",  # {a, b} & {c, x, a} = {a} -> 1 / 2
        "intersection(denominator=reference,ref_k=3)@2",  # 1 / 3
        "intersection(ref_k=5)@3",  # {a, b, c} & all of b -> 3 / 3
        "intersection(denominator=reference)@3",  # {a, b, c} & {c, x, a} = 2 -> 2 / 3
        "intersection",  # whole lists: {a, b, c} of a's 4 -> 3 / 4
        "intersection(denominator=reference)",  # 3 of b's 5 -> 3 / 5
        "intersection(ref_k=1)",  # {c} of a's 4 -> 1 / 4
    ]
    got = prk.rank_similarity(a, b, names, per_user=True).row(0, named=True)
    want = [0 / 2, 1 / 2, 1 / 3, 3 / 3, 2 / 3, 3 / 4, 3 / 5, 1 / 4]
    assert [got[n] for n in names] == pytest.approx(want, abs=1e-15)
    # the registered metric on a long frame: the reference is b's score as a column
    long = a.join(b.rename({"score": "ref"}), on=["user", "item"], how="full", coalesce=True)
    long = long.with_columns(relevance=pl.lit(0))
    metrics = [n.replace("intersection", "intersection(reference=ref)", 1) for n in names]
    metrics = [m.replace(")(", ",") for m in metrics]
    out = prk.evaluate(long, metrics, ties="item_desc", per_user=True).row(0, named=True)
    canonical = [str(prk.parse_metric(m)) for m in metrics]
    assert [out[c] for c in canonical] == pytest.approx(want, abs=1e-15)


def test_relevance_as_the_reference_in_evaluate() -> None:
    # run a b c d (scores 4..1), relevance e 3, a 2, c 1 (e not recommended): the
    # reference ranking e, a, c.
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": list("abcde"),
            "score": [4.0, 3.0, 2.0, 1.0, None],
            "relevance": [2, 0, 1, 0, 3],
        }
    )
    names = ["intersection@2", "intersection(ref_k=3)@2", "intersection(ref_k=1)@4"]
    got = prk.evaluate(df, names, ties="item_desc", per_user=True).row(0, named=True)
    # {a, b} & {e, a} = 1 of 2; {a, b} & {e, a, c} = 1 of 2; {a..d} & {e} = 0 of 4
    assert [got[n] for n in names] == [1 / 2, 1 / 2, 0 / 4]


def test_reference_ties_break_by_item_id() -> None:
    a = _scores({1: [("x", 2.0), ("y", 1.0)]})
    b = _scores({1: [("x", 1.0), ("y", 1.0)]})  # a tie in the reference
    desc = prk.rank_similarity(a, b, ["intersection(ref_k=1)@1"], ties="item_desc")
    asc = prk.rank_similarity(a, b, ["intersection(ref_k=1)@1"], ties="item_asc")
    expected = prk.rank_similarity(a, b, ["intersection(ref_k=1)@1"], ties="expected")
    assert desc.item(0, 0) == 0.0  # the reference's top 1 is y (descending)
    assert asc.item(0, 0) == 1.0  # x
    assert expected.item(0, 0) == 1 / 2  # x is the reference's top 1 half the time


# --------------------------------------------------------------------------- ties
def _orders(pairs: list[tuple[str, float]]) -> list[list[str]]:
    """Every ranking of the items that breaks the score ties."""
    groups: dict[float, list[str]] = {}
    for item, score in pairs:
        groups.setdefault(score, []).append(item)
    per_group = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
    return [[i for g in combo for i in g] for combo in itertools.product(*per_group)]


def _brute(
    a: list[tuple[str, float]], b: list[tuple[str, float]], k: int, ref_k: int, den: str
) -> Fraction:
    total, count = Fraction(0), 0
    for oa in _orders(a):
        for ob in _orders(b):
            common = len(set(oa[:k]) & set(ob[:ref_k]))
            size = len(oa[:k]) if den == "run" else len(ob[:ref_k])
            total += Fraction(common, size)
            count += 1
    return total / count


def test_expected_ties_hand_computed() -> None:
    # a: p 3, then q r s tied at 2 (two of them fit in the top 3); b: r, then s t tied.
    a = _scores({1: [("p", 3.0), ("q", 2.0), ("r", 2.0), ("s", 2.0)]})
    b = _scores({1: [("r", 5.0), ("s", 4.0), ("t", 4.0)]})
    got = prk.rank_similarity(a, b, ["intersection@3", "intersection(ref_k=2)@2"], ties="expected")
    # @3: r and s are each in a's top 3 w.p. 2/3; in b's top 3 always: (2/3 + 2/3) / 3.
    assert got["intersection@3"].item() == pytest.approx((2 / 3 + 2 / 3) / 3)
    # ref_k=2 @2: a's top 2 = p + one of q, r, s (1/3 each); b's top 2 = r + s or t
    # (1/2): r 1/3 * 1 + s 1/3 * 1/2, over 2.
    assert got["intersection(ref_k=2)@2"].item() == pytest.approx((1 / 3 + 1 / 6) / 2)


@pytest.mark.parametrize("seed", range(6))
def test_expected_ties_match_every_order(seed: int) -> None:
    rng = random.Random(seed)
    pool = list("abcdefg")
    a = [(i, float(rng.randint(1, 3))) for i in rng.sample(pool, rng.randint(2, 5))]
    b = [(i, float(rng.randint(1, 3))) for i in rng.sample(pool, rng.randint(2, 5))]
    k, ref_k = rng.randint(1, 4), rng.randint(1, 4)
    names = [
        f"intersection(ref_k={ref_k})@{k}",
        f"intersection(denominator=reference,ref_k={ref_k})@{k}",
    ]
    got = prk.rank_similarity(_scores({1: a}), _scores({1: b}), names, ties="expected")
    assert got[names[0]].item() == pytest.approx(float(_brute(a, b, k, ref_k, "run")), abs=1e-12)
    assert got[names[1]].item() == pytest.approx(
        float(_brute(a, b, k, ref_k, "reference")), abs=1e-12
    )
    # the registered metric gives the same expectation over the run's ties when the
    # reference (b's score as a column) has none: here b broken by item id first
    ranked_b = sorted(b, key=lambda x: (-x[1], x[0]))
    distinct = [(i, float(len(ranked_b) - j)) for j, (i, _) in enumerate(ranked_b)]
    want = _brute(a, distinct, k, ref_k, "run")
    long = _scores({1: a}).join(
        _scores({1: distinct}).rename({"score": "ref"}),
        on=["user", "item"],
        how="full",
        coalesce=True,
    )
    metric = f"intersection(ref_k={ref_k},reference=ref)@{k}"
    out = prk.evaluate(long.with_columns(relevance=pl.lit(0)), [metric], ties="expected")
    assert out[metric].item() == pytest.approx(float(want), abs=1e-12)


# --------------------------------------------------------------------------- errors
def test_errors() -> None:
    run = _ranks([1, 1], [1, 2], [1, 2])
    with pytest.raises(ValueError, match=r"rank_positions='absolute' reads explicit ranks"):
        prk.rank_similarity(
            _scores({1: [("a", 1.0)]}), _scores({1: [("a", 1.0)]}), ["intersection@1"],
            rank_positions="absolute",
        )  # fmt: skip
    floats = run.with_columns(pl.col("rank").cast(pl.Float64))
    with pytest.raises(TypeError, match=r"run_a's rank column 'rank' as positions: .* Float64"):
        prk.rank_similarity(floats, run, ["intersection@1"], rank="rank", rank_positions="absolute")
    zero = run.with_columns(pl.col("rank") - 1)
    with pytest.raises(ValueError, match=r"run_b has 1 rank\(s\) below 1 in 'rank'"):
        prk.rank_similarity(run, zero, ["intersection@1"], rank="rank", rank_positions="absolute")
    with pytest.raises(ValueError, match=r"measure 'rbo@2': RBO needs one order .*='absolute'"):
        prk.rank_similarity(run, run, ["rbo@2"], rank="rank", rank_positions="absolute")
    with pytest.raises(ValueError, match=r"parameter 'ref_k' of metric 'intersection' must be"):
        prk.rank_similarity(run, run, ["intersection(ref_k=0)@1"], rank="rank")
    with pytest.raises(
        ValueError,
        match=r"argument 'users' of rank_similarity must be one of "
        r"\['a', 'b', 'both', 'either'\] or None, got 'all'",
    ):
        prk.rank_similarity(run, run, ["intersection@1"], rank="rank", users="all")  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match=r"argument 'rank_positions' of rank_similarity must be one of "
        r"\['absolute', 'relative'\], got 'gaps'",
    ):
        prk.rank_similarity(run, run, ["intersection@1"], rank="rank", rank_positions="gaps")  # type: ignore[arg-type]


def test_preset_errors() -> None:
    run = _ranks([1, 1], [1, 2], [1, 2])
    df = run.with_columns(relevance=pl.lit(1))
    with pytest.raises(
        ValueError,
        match=r"RecTools's Intersection compares two recommendation tables: "
        r"prk.rank_similarity\(reco, reference, \['Intersection@2'\], conventions='rectools'\)",
    ):
        prk.evaluate(df, ["Intersection@2"], rank="rank", conventions="rectools")
    with pytest.raises(ValueError, match=r"RecTools's MAP is not a comparison of two"):
        prk.rank_similarity(run, run, ["MAP@2"], rank="rank", conventions="rectools")
    with pytest.raises(ValueError, match=r"Intersection takes ref_k here, got 'p=3'"):
        prk.rank_similarity(run, run, ["Intersection(p=3)@2"], rank="rank", conventions="rectools")
    with pytest.raises(ValueError, match=r"RecTools's Intersection needs a cutoff"):
        prk.rank_similarity(run, run, ["Intersection"], rank="rank", conventions="rectools")
    with pytest.raises(ValueError, match=r"conventions='rectools' sets ties='expected'"):
        prk.rank_similarity(
            run, run, ["Intersection@2"], rank="rank", ties="item_asc", conventions="rectools"
        )
    with pytest.raises(ValueError, match=r"the measures compare users=\['a'\], the call has"):
        prk.rank_similarity(
            run, run, ["Intersection@2"], rank="rank", users="both", conventions="rectools"
        )

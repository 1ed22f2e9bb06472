"""nerr, inst and insq (polars_rankeval.metrics.cascade).

Hand-computed values with the arithmetic written out, the tie policies (insq's exact
expectation against every ordering of the tie groups), properties (bounds, row order,
an ideal ranking), and cross-checks: the C/W/L framework's own ``cwl_eval`` for INST and
INSQ, scipy's Hurwitz zeta for the infinite tail, gdeval (through ir_measures) for the
ERR numerator of nERR.

Tests the private units hurwitz_zeta2 and Features on purpose (kernels against scipy).
"""

from __future__ import annotations

import itertools
import math
import random
import shutil

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.cascade import hurwitz_zeta2
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import get_spec
from tests._reference import random_frame


def _frame(grades: list[int | None], scores: list[float] | None = None) -> pl.DataFrame:
    n = len(grades)
    return pl.DataFrame(
        {
            "user": [1] * n,
            "item": [f"d{i}" for i in range(n)],
            "score": scores if scores is not None else [float(n - i) for i in range(n)],
            "relevance": grades,
        },
        schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
    )


# --------------------------------------------------------------------------- nERR
def test_nerr_hand_computed() -> None:
    # Grades 1, 3, 0, 2 on a 0..3 scale: R = 1/8, 7/8, 0, 3/8; ideal order 3, 2, 1, 0.
    df = _frame([1, 3, 0, 2])
    err = 1 / 8 + 1 / 2 * 7 / 8 * (7 / 8) + 0 + 1 / 4 * 3 / 8 * (7 / 8) * (1 / 8) * 1
    ideal = 7 / 8 + 1 / 2 * 3 / 8 * (1 / 8) + 1 / 3 * 1 / 8 * (1 / 8) * (5 / 8)
    assert df.select(prk.nerr(max_grade=3)).item() == pytest.approx(err / ideal, abs=1e-15)
    # @2: the ideal is cut at 2 as well.
    err2 = 1 / 8 + 1 / 2 * 7 / 8 * (7 / 8)
    ideal2 = 7 / 8 + 1 / 2 * 3 / 8 * (1 / 8)
    assert df.select(prk.nerr(2, max_grade=3)).item() == pytest.approx(err2 / ideal2, abs=1e-15)
    # The numerator is err itself.
    assert df.select(prk.err(max_grade=3)).item() == pytest.approx(err, abs=1e-15)


def test_nerr_ideal_counts_unrecommended_judged_items() -> None:
    # A grade-2 item that was not recommended still belongs to the ideal list.
    df = pl.DataFrame(
        {"user": [1, 1], "item": ["a", "b"], "score": [1.0, None], "relevance": [1, 2]}
    )
    # Scale 0..2: R(1) = 1/4, R(2) = 3/4. ERR = 1/4; ideal = 3/4 + 1/2 * 1/4 * 1/4.
    expected = (1 / 4) / (3 / 4 + 1 / 2 * 1 / 4 * (1 / 4))
    assert df.select(prk.nerr(max_grade=2)).item() == pytest.approx(expected, abs=1e-15)


def test_nerr_undefined_without_a_positive_grade_and_scale_from_input() -> None:
    df = pl.concat([_frame([0, None]), _frame([2, 0]).with_columns(user=pl.lit(2, pl.Int64))])
    out = prk.evaluate(df, ["nerr", "err"], ties="item_desc", per_user=True)
    assert out["nerr"].to_list() == [None, 1.0]
    assert out["err"].to_list() == [0.0, 3 / 4]  # scale 0..2 from the whole input
    summary = prk.evaluate(df, ["nerr"], ties="item_desc")
    assert summary["nerr"].item() == 1.0
    assert summary["n_skipped"].item() == 1
    assert get_spec("nerr").needs == ("rating_range",)


def test_nerr_is_one_for_an_ideal_ranking_and_below_otherwise() -> None:
    df = random_frame(5, n_users=30, max_items=9).with_columns(score=pl.lit(0.0))
    ideal = df.with_columns(score=pl.col("relevance").fill_null(0).cast(pl.Float64))
    values = prk.evaluate(ideal, ["nerr", "nerr@3"], ties="item_desc", per_user=True)
    for col in ("nerr", "nerr@3"):
        defined = values[col].drop_nulls()
        assert defined.len() > 10
        assert np.allclose(defined.to_numpy(), 1.0, atol=1e-15)
    worse = prk.evaluate(df, ["nerr"], ties="pessimistic", per_user=True)["nerr"].drop_nulls()
    assert ((worse >= 0.0) & (worse <= 1.0 + 1e-15)).all()


def _ideal_err(grades: list[int], top: int, k: int) -> float:
    stops = sorted(((2**g - 1) / 2**top for g in grades), reverse=True)[:k]
    total, reach = 0.0, 1.0
    for rank, r in enumerate(stops, start=1):
        total += reach * r / rank
        reach *= 1 - r
    return total


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_nerr_numerator_is_gdeval_err() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(7)
    rows: list[tuple[int, str, float | None, int | None]] = []
    for q in range(1, 16):
        for d in rng.sample(range(40), rng.randint(2, 12)):
            rows.append((q, f"d{d:02d}", float(rng.randint(0, 4)), rng.choice([None, 0, 1, 2, 4])))
        rows.append((q, "d99", None, rng.randint(1, 4)))
    df = pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )
    judged = df.filter(pl.col("relevance").is_not_null())
    qrels = [
        ir_measures.Qrel(str(u), d, int(r))
        for u, d, r in judged.select([*df.columns[:2], "relevance"]).rows()
    ]
    run = [
        ir_measures.ScoredDoc(str(u), d, s)
        for u, d, s in df.filter(pl.col("score").is_not_null())
        .select("user", "item", "score")
        .rows()
    ]
    theirs = {
        m.query_id: m.value for m in ir_measures.gdeval.iter_calc([ir_measures.ERR @ 5], qrels, run)
    }
    ours = prk.evaluate(df, ["nerr(max_grade=4)@5"], ties="item_desc", per_user=True, users="all")
    got = dict(zip(ours["user"].cast(pl.String), ours["nerr(max_grade=4)@5"], strict=True))
    grades = {str(u): g for u, g in judged.group_by("user").agg(pl.col("relevance")).rows()}
    assert len(theirs) > 10
    for query, err in theirs.items():
        ideal = _ideal_err(grades[query], 4, 5)
        assert got[query] == pytest.approx(err / ideal, abs=2e-5), query  # gdeval's %.5f


# --------------------------------------------------------------------------- INST, INSQ
def test_hurwitz_zeta_matches_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    xs = [1e-3, 0.5, 1.0, 2.0, 3.7, 10.0, 123.4, 1e5]
    got = pl.select(hurwitz_zeta2(pl.lit(pl.Series(xs)))).to_series().to_numpy()
    assert np.allclose(got, special.zeta(2.0, xs), rtol=1e-13, atol=0)
    assert got[2] == pytest.approx(math.pi**2 / 6, rel=1e-14)


def test_inst_hand_computed_infinite_tail() -> None:
    # T = 1, one relevant item at rank 1. C(1) = ((1 + 1 + 0 - 1) / (1 + 1 + 0))**2 = 1/4;
    # for i >= 2 the gain found is 1: C(i) = (i / (i + 1))**2, so the chance of reaching
    # rank i >= 2 is 1/4 * (2 / i)**2 = 1 / i**2 and the weights sum to zeta(2) = pi**2/6.
    df = _frame([1, 0, 0])
    assert df.select(prk.inst(max_grade=1)).item() == pytest.approx(6 / math.pi**2, abs=1e-14)
    # The same at rank 1 of a one-item list, or cut by @1 from a longer list.
    assert _frame([1]).select(prk.inst(max_grade=1)).item() == pytest.approx(6 / math.pi**2)
    assert _frame([1, 1]).select(prk.inst(1, max_grade=1)).item() == pytest.approx(6 / math.pi**2)
    # depth=2: weights 1 and 1/4, W(1) = 4/5.
    assert df.select(prk.inst(max_grade=1, depth=2)).item() == pytest.approx(4 / 5, abs=1e-15)
    # Nothing relevant: 0.
    assert _frame([0, None]).select(prk.inst(max_grade=1)).item() == 0.0


def test_inst_graded_two_ranks_by_hand() -> None:
    # T = 2, gains 1/2, 1 (grades 1, 2 of 0..2), depth 3:
    # C(1) = ((1 + 4 - 1/2 - 1) / (1 + 4 - 1/2))**2 = (3.5 / 4.5)**2,
    # C(2) = ((2 + 4 - 3/2 - 1) / (2 + 4 - 3/2))**2 = (3.5 / 4.5)**2.
    c = (3.5 / 4.5) ** 2
    weights = [1.0, c, c * c]
    expected = (weights[0] * 0.5 + weights[1] * 1.0) / sum(weights)
    got = _frame([1, 2]).select(prk.inst(max_grade=2, target=2, depth=3)).item()
    assert got == pytest.approx(expected, abs=1e-15)


def test_insq_hand_computed() -> None:
    # T = 1: weights (2 / (i + 1))**2, summing to 4 * (pi**2 / 6 - 1) over every rank.
    df = _frame([0, 1, 0])
    expected = (2 / 3) ** 2 / (4 * (math.pi**2 / 6 - 1))
    assert df.select(prk.insq(max_grade=1)).item() == pytest.approx(expected, abs=1e-14)
    # @1 drops the relevant item at rank 2.
    assert df.select(prk.insq(1, max_grade=1)).item() == 0.0
    # depth=3, T = 1/2: weights (1 / i)**2 for ranks 1..3.
    expected = (1 / 4) / (1 + 1 / 4 + 1 / 9)
    got = df.select(prk.insq(max_grade=1, target=0.5, depth=3)).item()
    assert got == pytest.approx(expected, abs=1e-15)


def _cwl_value(metric: object, gains: list[float], depth: int) -> float:
    from cwl.ruler.ranking import Ranking

    ranking = Ranking("q", np.array(gains, dtype=float), np.ones(len(gains)), max_n=depth)
    return float(metric.measure(ranking))  # type: ignore[attr-defined]


@pytest.mark.parametrize("target", [1.0, 2.0, 3.5])
def test_inst_and_insq_match_cwl_eval(target: float) -> None:
    pytest.importorskip("cwl")
    from cwl.ruler.measures.cwl_insq import INSQCWLMetric
    from cwl.ruler.measures.cwl_inst import INSTCWLMetric

    df = random_frame(int(target * 10), n_users=25, max_items=12, grades=(0, 1, 2, 3, 4))
    names = [
        f"inst(depth=1000,max_grade=4,target={target})",
        f"insq(depth=1000,max_grade=4,target={target})",
    ]
    names = [prk.parse_metric(n).name for n in names]
    ours = prk.evaluate(df, names, ties="item_desc", per_user=True, users="all").sort("user")
    # cwl_eval's gains: the ranked list by (score desc, item desc), relevance / 4, 0 if unjudged.
    lists = (
        df.filter(pl.col("score").is_not_null())
        .sort(["user", "score", "item"], descending=[False, True, True])
        .group_by("user", maintain_order=True)
        .agg((pl.col("relevance").fill_null(0) / 4.0).alias("g"))
    )
    gains = dict(lists.rows())
    checked = 0
    for user, inst, insq in ours.select("user", *names).rows():
        g = gains.get(user, [])
        if not g:
            continue
        assert inst == pytest.approx(_cwl_value(INSTCWLMetric(target), g, 1000), abs=1e-12)
        assert insq == pytest.approx(_cwl_value(INSQCWLMetric(target), g, 1000), abs=1e-12)
        checked += 1
    assert checked > 15


def test_infinite_depth_is_the_limit_of_long_depths() -> None:
    df = _frame([2, 0, 1, 3, 0])
    inf = df.select(prk.inst(max_grade=3, target=2.0), prk.insq(max_grade=3, target=2.0)).row(0)
    deep = df.select(
        prk.inst(max_grade=3, target=2.0, depth=10**7),
        prk.insq(max_grade=3, target=2.0, depth=10**7),
    ).row(0)
    # The weight past rank D is O(1 / D).
    assert inf == pytest.approx(deep, rel=1e-5)
    assert inf[0] < deep[0]
    assert inf[1] < deep[1]


# --------------------------------------------------------------------------- ties
TIED = _frame([2, 0, 1, 3, None, 1], scores=[3.0, 3.0, 3.0, 2.0, 1.0, 1.0])


def _all_orderings_mean(df: pl.DataFrame, metric: str) -> float:
    # Every ordering of each tie group, as distinct scores.
    groups = df.group_by("score", maintain_order=True).agg("item").sort("score", descending=True)
    values = []
    for perm in itertools.product(*(itertools.permutations(items) for items in groups["item"])):
        order = [item for group in perm for item in group]
        ranked = df.with_columns(
            score=pl.col("item")
            .replace_strict(order, list(range(len(order), 0, -1)))
            .cast(pl.Float64)
        )
        values.append(prk.evaluate(ranked, [metric], ties="item_desc")[metric].item())
    return float(np.mean(values))


@pytest.mark.parametrize(
    "metric", ["insq(max_grade=3)", "insq(max_grade=3,target=2)@4", "insq(depth=3,max_grade=3)"]
)
def test_insq_expected_ties_are_the_mean_over_orderings(metric: str) -> None:
    name = prk.parse_metric(metric).name
    got = prk.evaluate(TIED, [name], ties="expected")[name].item()
    assert got == pytest.approx(_all_orderings_mean(TIED, name), abs=1e-14)
    assert TIED.select(prk.parse_metric(metric).expr(_inline_features())).item() == pytest.approx(
        got
    )


def _inline_features() -> Features:
    return Features(make_columns(), "expected", keys=None)


@pytest.mark.parametrize("metric", ["nerr", "inst"])
def test_nerr_and_inst_refuse_expected_ties(metric: str) -> None:
    match = rf"metric '{metric}' does not support ties='expected'; supported: item_desc"
    with pytest.raises(ValueError, match=match):
        prk.evaluate(TIED, [metric])
    fn = getattr(prk, metric)
    with pytest.raises(ValueError, match=match):
        fn(max_grade=3, ties="expected")


def test_tie_policies_order_the_tied_group() -> None:
    # Scale 0..3, group {d0: 2, d1: 0, d2: 1} at ranks 1..3, then d3 (3), then d4, d5 tied.
    opt = prk.evaluate(TIED, ["nerr", "inst"], ties="optimistic")
    pes = prk.evaluate(TIED, ["nerr", "inst"], ties="pessimistic")
    assert opt["nerr"].item() > pes["nerr"].item()
    assert opt["inst"].item() > pes["inst"].item()
    # Optimistic: grades 2, 1, 0, 3, 1, None.
    again = _frame([2, 1, 0, 3, 1, None])
    assert opt["nerr"].item() == pytest.approx(
        again.select(prk.nerr(max_grade=3)).item(), abs=1e-15
    )


# --------------------------------------------------------------------------- properties
METRICS = [
    "nerr",
    "nerr@3",
    "inst",
    "inst(target=3)@5",
    "inst(depth=4)",
    "insq",
    "insq(target=2)@3",
]


@pytest.mark.parametrize("seed", [1, 2])
def test_bounds_and_row_order(seed: int) -> None:
    df = random_frame(seed, n_users=40, max_items=10)
    names = [prk.parse_metric(m).name for m in METRICS]
    out = prk.evaluate(df, names, ties="item_asc", per_user=True).sort("user")
    shuffled = prk.evaluate(
        df.sample(fraction=1.0, shuffle=True, seed=seed), names, ties="item_asc", per_user=True
    ).sort("user")
    assert_frame_equal(out, shuffled, abs_tol=1e-15)  # the sums' order may differ
    for name in names:
        values = out[name].drop_nulls()
        assert values.len() > 20
        assert ((values >= 0.0) & (values <= 1.0 + 1e-12)).all(), name
    # inline expressions give the evaluate values
    inline = df.group_by("user").agg(
        prk.inst(max_grade=3, ties="item_asc"), prk.insq(max_grade=3, ties="item_asc")
    )
    both = out.join(inline, on="user")
    assert both.height == out.height
    assert np.allclose(both["inst(max_grade=3)"].to_numpy(), both["inst"].to_numpy(), atol=1e-14)
    assert np.allclose(both["insq(max_grade=3)"].to_numpy(), both["insq"].to_numpy(), atol=1e-14)


def test_more_gain_at_the_top_never_lowers_insq() -> None:
    # INSQ's weights fall with the rank: moving a relevant item up cannot lower it.
    base = _frame([0, 0, 1, 0])
    up = _frame([0, 1, 0, 0])
    assert up.select(prk.insq(max_grade=1)).item() > base.select(prk.insq(max_grade=1)).item()


def test_compare_takes_the_new_measures() -> None:
    from polars_rankeval.api.datasets import load_systems

    runs = load_systems().filter(pl.col("user") < 60)
    out = prk.compare(
        runs, ["nerr@10", "inst", "insq@10"], baseline="bm25", ties="item_desc", n_resamples=200
    )
    assert set(out["metric"]) == {"nerr@10", "inst", "insq@10"}
    assert out["p_value"].is_not_null().all()


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [
        (
            "inst(target=0)",
            ValueError,
            r"parameter 'target' of metric 'inst' must be in \(0, 1000000\]",
        ),
        ("insq(depth=0)", ValueError, r"parameter 'depth' of metric 'insq' must be >= 1"),
        ("inst(depth=2.5)", TypeError, r"parameter 'depth' of metric 'inst' must be an integer"),
        ("nerr(max_grade=-1)", ValueError, r"parameter 'max_grade' of metric 'nerr' must be > 0"),
        ("nerr(target=1)", ValueError, r"unknown parameter 'target' for metric 'nerr'"),
    ],
)
def test_option_errors(text: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.parse_metric(text)


def test_canonical_names() -> None:
    assert prk.parse_metric("inst(target=1.0,depth=none)@10").name == "inst@10"
    assert prk.parse_metric("insq(depth=1000,target=2.0)").name == "insq(depth=1000,target=2)"


def test_max_grade_needs_no_rating_range() -> None:
    """With ``max_grade`` given no rating range is read, so one constant grade is fine.

    Without it the range comes from the data and a constant relevance has none.
    Relevance [0, 1], max_grade 4: the second item stops a user with probability
    (2**1 - 1) / 2**4 = 1/16, at rank 2, after nothing stopped them: ERR = 1/16 / 2.
    """
    df = pl.DataFrame(
        {"user": ["u", "u"], "item": ["a", "b"], "score": [1.0, 0.5], "relevance": [0, 0]}
    )
    names = ["err(max_grade=4)@3", "insq(max_grade=4)", "inst(max_grade=4)"]
    out = prk.evaluate(df, names, ties="item_desc", per_user=True)
    assert out.row(0)[1:] == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="cannot derive the rating range"):
        prk.evaluate(df, ["err@3"], ties="item_desc")
    graded = df.with_columns(relevance=pl.Series([0, 1]))
    err = prk.evaluate(graded, ["err(max_grade=4)@3"], ties="item_desc", per_user=True)
    assert err["err(max_grade=4)@3"][0] == pytest.approx((1 / 16) / 2, abs=1e-15)

"""Properties over every registered metric: order invariance, bounds, perfect = 1, engines."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.metrics.registry import registered

SPECS = registered()


def metric_names(k: int | None) -> list[str]:
    out = []
    for name, spec in SPECS.items():
        out.append(name if (k is None or not spec.takes_k) else f"{name}@{k}")
    return list(dict.fromkeys(out))


# Per-user metrics that read an items= side table (popularity, feature vectors): their
# own tests cover them (tests/metrics/test_exposure.py,
# tests/metrics/test_diversity.py).
NEEDS_SIDE_TABLE = (
    "intra_list_diversity", "novelty", "popularity_bias", "unseen_share",
    # a subtopics column (tests/metrics/test_intent.py has their properties)
    "alpha_ndcg", "err_ia", "nrbp", "s_recall", "precision_ia", "map_ia",
    # history= and items= (tests/metrics/test_serendipity.py, test_calibration.py,
    # test_popularity_bias.py)
    "serendipity", "unexpectedness", "miscalibration", "aplt", "aclt",
    # a category column (tests/metrics/test_categorical.py)
    "categorical_diversity",
)  # fmt: skip
# Per-user metrics only: a global metric (one value per by group) has no per-user value.
ALL_METRICS = [
    m
    for m in metric_names(None) + [m for m in metric_names(3) if "@" in m]
    if SPECS[m.split("@")[0]].scope == "user" and m.split("@")[0] not in NEEDS_SIDE_TABLE
]
NORMALIZED = [m for m in ALL_METRICS if SPECS[m.split("@")[0]].normalized]
# The rating scale of the generated relevance, for nmae (n_items, the catalog size of the
# classification metrics, defaults to the distinct items of the input).
RATING_RANGE = (0.0, 3.0)


def supporting(metrics: list[str], ties: str) -> list[str]:
    """The metrics whose kernel implements the tie policy."""
    return [m for m in metrics if ties in SPECS[m.split("@")[0]].tie_policies]


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    n_users = draw(st.integers(1, 6))
    rows = []
    for user in range(n_users):
        items = draw(st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True))
        for item in items:
            score = draw(st.one_of(st.none(), st.integers(0, 3).map(float)))
            rel = draw(st.one_of(st.none(), st.integers(0, 3)))
            rows.append((user, item, score, rel))
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def every_metric(scope: str) -> list[str]:
    """One instance of every registered metric of ``scope`` (@3 where it takes a cutoff)."""
    return [
        f"{name}@3" if spec.takes_k else name for name, spec in SPECS.items() if spec.scope == scope
    ]


def side_table() -> pl.DataFrame:
    """The items= columns the metrics read by default, for the items of frames()."""
    items = pl.DataFrame({"item": range(31)})
    return items.with_columns(
        popularity=(pl.col("item") % 7 + 1) / 8,
        features=pl.concat_list((pl.col("item") % 3).cast(pl.Float64), pl.col("item") % 5 - 2.0),
        seen=pl.col("item") % 2 == 0,
        categories=pl.concat_list(pl.format("g{}", pl.col("item") % 3), pl.lit("h")),
        long_tail=pl.col("item") % 3 == 0,
        group=pl.col("item") % 4 == 0,
        base_rank=pl.col("item") % 5 + 1,
        category=pl.col("item") % 3,  # categorical_diversity
        # the intent-aware metrics' judgments: subtopics item % 3 and 3 + item % 2
        subtopics=pl.concat_list(
            pl.struct(subtopic=pl.col("item") % 3, relevance=pl.lit(1)),
            pl.struct(subtopic=3 + pl.col("item") % 2, relevance=pl.col("item") % 4 // 2),
        ),
    )


# The users' past interactions (history=): users 0..5 saw a few items each.
HISTORY = pl.DataFrame(
    {"user": [u for u in range(6) for _ in range(4)], "item": [(7 * i) % 31 for i in range(24)]}
)


def evaluate_everything(df: pl.DataFrame, ties: str) -> list[pl.DataFrame]:
    """Every metric supporting ``ties``: per user, the summary (global ones) and per item."""
    options = {
        "ties": ties,
        "users": "all",
        "rating_range": RATING_RANGE,
        "items": side_table(),
        "history": HISTORY,
    }
    per_user = supporting(every_metric("user"), ties)
    globals_ = supporting(every_metric("global"), ties)
    items = supporting(every_metric("item"), ties)
    out = [prk.evaluate(df, per_user, per_user=True, **options)]  # type: ignore[arg-type]
    if globals_:
        out.append(prk.evaluate(df, globals_, **options))  # type: ignore[arg-type]
    if items:
        out.append(prk.evaluate(df, items, per_item=True, **options))  # type: ignore[arg-type]
    return out


ROW_ORDER_SETTINGS = settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


# Every registered metric under every tie policy: equal scores with equal relevance (and
# judged or not) must not fall back to the input position (a total order breaks them).
@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@ROW_ORDER_SETTINGS
@given(df=frames(), seed=st.integers(0, 2**31))
def test_row_order_does_not_matter(df: pl.DataFrame, seed: int, ties: str) -> None:
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    for a, b in zip(
        evaluate_everything(df, ties), evaluate_everything(shuffled, ties), strict=True
    ):
        assert_frame_equal(a, b, abs_tol=1e-12)


def test_every_metric_is_covered_by_the_row_order_property() -> None:
    # Each registered metric supports some tie policy, so it is in some row-order check.
    covered = {
        m.split("@")[0]
        for ties in prk.TIE_POLICIES
        for scope in ("user", "global", "item")
        for m in supporting(every_metric(scope), ties)
    }
    assert covered == set(SPECS)


def test_optimistic_ties_follow_the_documented_total_order() -> None:
    # One user, four items tied at score 1 with relevance 0: two judged (items 3, 4) and
    # two unjudged (items 1, 2). Optimistic and pessimistic put judged rows first, then
    # the item id ascending: ranks 1..4 are items 3, 4, 1, 2 in every row order.
    df = pl.DataFrame(
        {
            "user": [1] * 5,
            "item": [1, 2, 3, 4, 5],
            "score": [1.0, 1.0, 1.0, 1.0, None],
            "relevance": [None, None, 0, 0, 1],
        },
        schema_overrides={"relevance": pl.Int64},
    )
    for ties in ("optimistic", "pessimistic"):
        for seed in range(4):
            rows = df.sample(fraction=1.0, shuffle=True, seed=seed)
            out = prk.evaluate(
                rows, ["unjudged@2", "num_nonrel_judged_ret@3", "rbp_resid"], ties=ties
            )
            assert out["unjudged@2"].item() == 0.0  # items 3 and 4 fill the top 2
            assert out["num_nonrel_judged_ret@3"].item() == 2.0  # items 3, 4 (then 1)
            # p^4 + (1 - p) (p^2 + p^3): the unjudged items 1 and 2 at ranks 3 and 4.
            assert out["rbp_resid"].item() == pytest.approx(0.9**4 + 0.1 * (0.9**2 + 0.9**3))


@PROPERTY_SETTINGS
@given(df=frames(), ties=st.sampled_from(prk.TIE_POLICIES))
def test_values_within_bounds(df: pl.DataFrame, ties: str) -> None:
    out = prk.evaluate(
        df,
        supporting(ALL_METRICS, ties),
        ties=ties,
        per_user=True,
        users="all",
        rating_range=RATING_RANGE,
    )  # type: ignore[arg-type]
    for name in supporting(ALL_METRICS, ties):
        values = out[name].drop_nulls()
        assert not values.is_nan().any(), name  # undefined is null, never NaN
        low, high = SPECS[name.split("@")[0]].bounds  # as declared with the metric
        if low is not None:
            assert (values >= low - 1e-12).all(), name
        if high is not None:
            assert (values <= high + 1e-12).all(), name


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(df=frames(), ties=st.sampled_from(prk.TIE_POLICIES))
def test_eager_lazy_and_streaming_agree(df: pl.DataFrame, ties: str) -> None:
    eager = prk.evaluate(
        df,
        supporting(ALL_METRICS, ties),
        ties=ties,
        per_user=True,
        users="all",
        rating_range=RATING_RANGE,
    )  # type: ignore[arg-type]
    lazy = prk.evaluate(
        df.lazy(),
        supporting(ALL_METRICS, ties),
        ties=ties,
        per_user=True,
        users="all",
        rating_range=RATING_RANGE,
    )  # type: ignore[arg-type]
    assert isinstance(lazy, pl.LazyFrame)
    assert_frame_equal(eager, lazy.collect(), abs_tol=1e-12)
    assert_frame_equal(eager, lazy.collect(engine="streaming"), abs_tol=1e-12)


@PROPERTY_SETTINGS
@given(df=frames())
def test_optimistic_and_pessimistic_bracket_expected(df: pl.DataFrame) -> None:
    # For metrics monotone in putting relevant items first, the tie policies order
    # as pessimistic <= expected <= optimistic.
    monotone = [m for m in NORMALIZED if not m.startswith(("auc@", "precision", "f1"))]
    monotone = supporting(monotone, "expected")
    monotone += ["precision@3", "f1@3", "dcg@3", "num_rel_ret@3"]
    out = {
        ties: prk.evaluate(
            df, monotone, ties=ties, per_user=True, users="all", rating_range=RATING_RANGE
        )  # type: ignore[arg-type]
        for ties in ("pessimistic", "expected", "optimistic")
    }
    for name in monotone:
        lo, mid, hi = (out[t][name] for t in ("pessimistic", "expected", "optimistic"))
        assert ((lo - mid).drop_nulls() <= 1e-12).all(), name
        assert ((mid - hi).drop_nulls() <= 1e-12).all(), name


def perfect_frame() -> pl.DataFrame:
    # Every user: three relevant items (grades 3, 2, 1) recommended in that order, two
    # non-relevant judged items not recommended.
    rows = []
    for user in range(4):
        for i, rel in enumerate((3, 2, 1)):
            rows.append((user, i, 10.0 - i, rel))
        rows += [(user, 10, None, 0), (user, 11, None, 0)]
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("metric", NORMALIZED)
def test_perfect_ranking_scores_one(metric: str, ties: str) -> None:
    if not supporting([metric], ties):
        pytest.skip(f"{metric} does not implement ties={ties}")
    out = prk.evaluate(perfect_frame(), [metric], ties=ties)  # type: ignore[arg-type]
    assert out[metric].item() == pytest.approx(1.0, abs=1e-12)


# Without a cutoff recall, relative precision (hits / min(#recommended, R)) and inverse
# precision (tn / (N - #recommended)) ignore order, and hit rate only asks for one
# relevant item in the top k (rank 3 here); every other metric must notice the two
# misplaced items.
@pytest.mark.parametrize(
    "metric",
    [
        m
        for m in NORMALIZED
        if m not in ("recall", "relative_precision", "inverse_precision")
        and not m.startswith("hit_rate")
    ],
)
def test_reversed_ranking_scores_less_than_perfect(metric: str) -> None:
    ties = SPECS[metric.split("@")[0]].tie_policies[0]
    df = perfect_frame().with_columns(
        pl.when(pl.col("score").is_null()).then(20.0).otherwise(pl.col("score")).alias("score")
    )
    out = prk.evaluate(df, [metric], ties=ties)  # type: ignore[arg-type]
    assert out[metric].item() < 1.0

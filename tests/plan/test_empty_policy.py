"""``empty=``: a metric's summary value does not depend on the other metrics requested.

With ``empty="skip"`` (the default) each metric's aggregates cover the users for which
that metric is defined, counted in ``n_users(<metric>)``; ``empty="skip_row"`` keeps the
former rule (a user undefined for any metric leaves every mean of the row). Systems of
a ``by`` built with ``join`` are averaged over the same users for every metric whose
definedness depends only on the truth (the registry's ``defined`` declaration, checked
here against the kernels).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.metrics.grammar import bind, expand_metric
from polars_rankeval.metrics.registry import registered
from tests._engines import engine_of
from tests._reference import random_frame

ALL_AGGREGATIONS = ["mean", "gmean", "hmean", "qmean", "median", "std"]


def same(value: Any) -> Any:
    """Equal up to the last bits of a parallel sum (the users are the same ones)."""
    if isinstance(value, float) and not math.isnan(value):
        return pytest.approx(value, rel=1e-12, abs=1e-15)
    return value


# --------------------------------------------------------------------------- the case
def realistic_frame(seed: int = 10, n_users: int = 3000, per_user: int = 40) -> pl.DataFrame:
    """Warm users with informative scores; a third of cold-start users get a constant
    fallback score (Kendall's tau is undefined for them) and rank worse; some users
    have no relevant item at all (ndcg undefined)."""
    rng = np.random.default_rng(seed)
    user = np.repeat(np.arange(n_users), per_user)
    item = np.tile(np.arange(per_user), n_users)
    latent = rng.random(user.size)
    relevance = (latent > 0.93).astype(np.int64)
    cold = user % 3 == 0
    score = np.where(cold, 0.0, np.round(latent + rng.normal(0.0, 0.35, user.size), 2))
    return pl.DataFrame({"user": user, "item": item, "score": score, "relevance": relevance})


def test_kendall_tau_beside_ndcg_does_not_change_ndcg() -> None:
    df = realistic_frame()
    alone = prk.evaluate(df, ["ndcg@10"]).row(0, named=True)
    beside = prk.evaluate(df, ["ndcg@10", "kendall_tau"]).row(0, named=True)
    assert beside["ndcg@10"] == same(alone["ndcg@10"])
    assert beside["n_users(ndcg@10)"] == alone["n_users(ndcg@10)"]
    # The same number as the plain mean over the users for which ndcg@10 is defined.
    per_user = prk.evaluate(df, ["ndcg@10", "kendall_tau"], per_user=True)
    defined = per_user.get_column("ndcg@10").drop_nulls()
    assert alone["ndcg@10"] == pytest.approx(defined.mean(), rel=1e-12)
    assert alone["n_users(ndcg@10)"] == defined.len()
    # kendall_tau is undefined for every cold user (constant score): a third of them.
    assert beside["n_users(kendall_tau)"] < alone["n_users(ndcg@10)"]
    # The former rule (now empty="skip_row") moved ndcg@10 when kendall_tau was added.
    old = prk.evaluate(df, ["ndcg@10", "kendall_tau"], empty="skip_row").row(0, named=True)
    both = per_user.drop_nulls()
    assert old["ndcg@10"] == pytest.approx(both.get_column("ndcg@10").mean(), rel=1e-12)
    assert old["ndcg@10"] != pytest.approx(alone["ndcg@10"], rel=1e-3)
    assert old["n_users(ndcg@10)"] == old["n_users(kendall_tau)"] == both.height
    assert old["n_skipped"] == beside["n_skipped"] == per_user.height - both.height


# --------------------------------------------------------------------------- by hand
# u1: a(3, rel 1) b(2, 0) c(1, 1)   every metric defined
# u2: a(2, 1) b(1, 1)               auc undefined (no non-relevant), tau too (constant rel)
# u3: a(1, 0) b(0, 0)               no relevant item: mrr, recall, auc, tau undefined
# u4: a(2, 0) b(1, 1) c(0, 2)       every metric defined
HAND = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 4, 4, 4],
        "item": ["a", "b", "c", "a", "b", "a", "b", "a", "b", "c"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0],
        "relevance": [1, 0, 1, 1, 1, 0, 0, 0, 1, 2],
    }
)
HAND_METRICS = ["mrr", "recall@2", "auc", "kendall_tau"]
# Per user (by hand): mrr 1, 1, -, 1/2; recall@2 1/2, 1, -, 1/2 (u4: b of b, c);
# auc 1/2 (a > b, c < b), -, -, 0 (both relevant below a); tau-b: u1 pairs (a,b)
# concordant, (a,c) tied in relevance, (b,c) discordant: (1 - 1) / sqrt(3 * 2) = 0;
# u4: every pair discordant: -1.
HAND_PER_USER = [
    (1, 1.0, 1 / 2, 1 / 2, 0.0),
    (2, 1.0, 1.0, None, None),
    (3, None, None, None, None),
    (4, 1 / 2, 1 / 2, 0.0, -1.0),
]


def test_hand_per_user_values() -> None:
    got = prk.evaluate(HAND, HAND_METRICS, per_user=True)
    assert got.rows() == [pytest.approx(row) for row in HAND_PER_USER]


def test_hand_skip_counts_each_metric_over_its_own_users() -> None:
    got = prk.evaluate(HAND, HAND_METRICS).row(0, named=True)
    assert got == {
        "mrr": pytest.approx((1 + 1 + 1 / 2) / 3),
        "recall@2": pytest.approx((1 / 2 + 1 + 1 / 2) / 3),
        "auc": pytest.approx((1 / 2 + 0) / 2),
        "kendall_tau": pytest.approx((0 + -1) / 2),
        "n_users(mrr)": 3,
        "n_users(recall@2)": 3,
        "n_users(auc)": 2,
        "n_users(kendall_tau)": 2,
        "n_users": 4,
        "n_skipped": 2,  # u2 (auc, tau) and u3 (all): out of at least one mean
    }
    for metric in HAND_METRICS:  # each value alone equals its value beside the others
        alone = prk.evaluate(HAND, [metric]).row(0, named=True)
        assert alone[metric] == same(got[metric])
        assert alone[f"n_users({metric})"] == got[f"n_users({metric})"]


def test_hand_skip_row_reproduces_the_former_rule() -> None:
    got = prk.evaluate(HAND, HAND_METRICS, empty="skip_row").row(0, named=True)
    # Only u1 and u4 are defined for every metric.
    assert got == {
        "mrr": pytest.approx((1 + 1 / 2) / 2),
        "recall@2": pytest.approx((1 / 2 + 1 / 2) / 2),
        "auc": pytest.approx((1 / 2 + 0) / 2),
        "kendall_tau": pytest.approx((0 + -1) / 2),
        "n_users(mrr)": 2,
        "n_users(recall@2)": 2,
        "n_users(auc)": 2,
        "n_users(kendall_tau)": 2,
        "n_users": 4,
        "n_skipped": 2,
    }


def test_hand_zero_counts_every_user() -> None:
    got = prk.evaluate(HAND, HAND_METRICS, empty="zero").row(0, named=True)
    assert got["mrr"] == pytest.approx((1 + 1 + 0 + 1 / 2) / 4)
    assert got["kendall_tau"] == pytest.approx((0 + 0 + 0 - 1) / 4)
    assert [got[f"n_users({m})"] for m in HAND_METRICS] == [4, 4, 4, 4]
    assert got["n_skipped"] == 0


def test_hand_every_aggregation_covers_the_metric_own_users() -> None:
    got = prk.evaluate(HAND, HAND_METRICS, aggregate=ALL_AGGREGATIONS).row(0, named=True)
    assert got["median(mrr)"] == 1.0  # of 1, 1, 1/2
    assert got["gmean(recall@2)"] == pytest.approx((1 / 2 * 1 * 1 / 2) ** (1 / 3))
    assert got["hmean(recall@2)"] == pytest.approx(3 / (2 + 1 + 2))
    assert got["qmean(mrr)"] == pytest.approx(math.sqrt((1 + 1 + 1 / 4) / 3))
    assert got["std(auc)"] == pytest.approx(math.sqrt(2 * (1 / 4) ** 2 / (2 - 1)))
    assert got["gmean(auc)"] == pytest.approx(math.sqrt(1 / 2 * 1e-5))  # 0 floored at 1e-5
    assert got["gmean(kendall_tau)"] is None  # a negative value
    row = prk.evaluate(HAND, HAND_METRICS, aggregate=ALL_AGGREGATIONS, empty="skip_row")
    assert row.row(0, named=True)["median(mrr)"] == pytest.approx((1 + 1 / 2) / 2)


def test_hand_long_summary() -> None:
    got = prk.evaluate(HAND, ["mrr", "auc", "global_auc"], summary="long", aggregate=["mean"])
    assert got.columns == ["metric", "aggregation", "value", "n_users", "n_skipped"]
    assert got.schema["value"] == pl.Float64
    rows = got.rows()
    assert rows[:2] == [
        ("mrr", "mean", pytest.approx(2.5 / 3), 3, 1),
        ("auc", "mean", pytest.approx(1 / 4), 2, 2),
    ]
    wide = prk.evaluate(HAND, ["global_auc"]).row(0, named=True)
    assert rows[2] == ("global_auc", "global", wide["global_auc"], 4, 0)


def test_long_summary_with_by_and_aggregations_matches_wide() -> None:
    df = pl.concat([HAND.with_columns(system=pl.lit(s)) for s in ("b", "a")])
    metrics = ["mrr", "kendall_tau", "coverage@2"]
    options: dict[str, Any] = {"by": "system", "aggregate": ["mean", "median"]}
    wide = prk.evaluate(df, metrics, **options)
    long = prk.evaluate(df, metrics, summary="long", **options)
    assert long.columns == ["system", "metric", "aggregation", "value", "n_users", "n_skipped"]
    expected = [
        (system, metric, agg)
        for system in ("a", "b")
        for metric, agg in [
            ("mrr", "mean"),
            ("mrr", "median"),
            ("kendall_tau", "mean"),
            ("kendall_tau", "median"),
            ("coverage@2", "global"),
        ]
    ]
    assert long.select("system", "metric", "aggregation").rows() == expected
    for row in long.iter_rows(named=True):
        source = wide.filter(pl.col("system") == row["system"]).row(0, named=True)
        name = (
            row["metric"]
            if row["aggregation"] in ("mean", "global")
            else (f"{row['aggregation']}({row['metric']})")
        )
        assert row["value"] == source[name]
        if row["aggregation"] == "global":
            assert (row["n_users"], row["n_skipped"]) == (source["n_users"], 0)
        else:
            count = source[f"n_users({row['metric']})"]
            assert (row["n_users"], row["n_skipped"]) == (count, source["n_users"] - count)


def test_bad_summary_and_empty_values_are_refused() -> None:
    with pytest.raises(ValueError, match=r"'summary' of evaluate must be .*'long'.*got 'tall'"):
        prk.evaluate(HAND, ["mrr"], summary="tall")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'empty' of evaluate .*'skip_row'.*got 'drop'"):
        prk.evaluate(HAND, ["mrr"], empty="drop")  # type: ignore[arg-type]
    clash = HAND.with_columns(metric=pl.lit("x"))
    with pytest.raises(ValueError, match=r"by column 'metric' collides with a column of summary"):
        prk.evaluate(clash, ["mrr"], by="metric", summary="long")
    assert prk.evaluate(clash, ["mrr"], by="metric").columns[0] == "metric"  # wide: fine


# --------------------------------------------------------------------------- every metric
def side_items(items: pl.Series) -> pl.DataFrame:
    """Popularity in (0, 1], feature vectors and a seen flag for every item (side-input
    metrics)."""
    ids = items.unique().sort()
    return pl.DataFrame(
        {
            "item": ids,
            "popularity": [0.1 + 0.8 * ((i * 37) % 11) / 10 for i in range(ids.len())],
            "features": [[1.0, float(i % 3)] for i in range(ids.len())],
            "seen": [i % 2 == 0 for i in range(ids.len())],
            "categories": [["g" + str(i % 3), "g" + str(i % 4)] for i in range(ids.len())],
            "long_tail": [i % 3 == 0 for i in range(ids.len())],
            "base_rank": [1 + i % 4 for i in range(ids.len())],
            "category": [i % 3 for i in range(ids.len())],  # categorical_diversity
            # the intent-aware metrics' judgments: subtopics i % 3 and (i + 1) % 4
            "subtopics": [
                [
                    {"subtopic": i % 3, "relevance": 1},
                    {"subtopic": 3 + (i + 1) % 4, "relevance": i % 2},
                ]
                for i in range(ids.len())
            ],
        }
    )


def user_metrics() -> list[str]:
    """Every registered per-user metric, with and without a cutoff where it takes one."""
    names = []
    for name, spec in registered().items():
        if spec.scope != "user":
            continue
        names.append(name)
        if spec.takes_k:
            names.append(f"{name}@3")
    return names


def with_undefined_users(seed: int) -> pl.DataFrame:
    """Random users plus users undefined for some metrics only: no relevant item,
    every candidate relevant, a constant score, nothing recommended, a single row."""
    df = random_frame(seed, n_users=14, max_items=6)
    extra = pl.DataFrame(
        {
            "user": [100, 100, 101, 101, 102, 102, 102, 103, 103, 104],
            "item": [1, 2, 1, 2, 1, 2, 3, 1, 2, 1],
            "score": [2.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, None, None, 1.0],
            "relevance": [0, 0, 1, 2, 1, 0, 2, 1, 0, 1],
        }
    )
    return pl.concat([df, extra])


# The users' past interactions, for the metrics reading history= (some users have none).
HISTORY = pl.DataFrame(
    {"user": [u for u in range(0, 104, 2) for _ in range(3)], "item": [i % 7 for i in range(156)]}
)
EVERY_OPTIONS: dict[str, Any] = {
    "ties": "item_desc",
    "rating_range": (0.0, 3.0),
    "n_items": 60,
    "history": HISTORY,
}


@pytest.fixture(scope="module")
def every_metric_frame() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    df = with_undefined_users(3)
    items = side_items(df.get_column("item"))
    options = {**EVERY_OPTIONS, "items": items, "aggregate": ALL_AGGREGATIONS}
    together = prk.evaluate(df, user_metrics(), **options)
    return df, items, together


def test_every_metric_alone_equals_beside_all_the_others(
    every_metric_frame: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame],
) -> None:
    df, items, together = every_metric_frame
    assert together["n_skipped"].item() > 0
    counts = {together[f"n_users({m})"].item() for m in user_metrics()}
    assert len(counts) > 2  # the metrics really are defined for different users
    for metric in user_metrics():
        name = bind(*_split(metric)).name
        alone = prk.evaluate(df, [metric], items=items, aggregate=ALL_AGGREGATIONS, **EVERY_OPTIONS)
        for column in alone.columns:
            if column in ("n_users", "n_skipped"):
                continue
            assert alone[column].item() == same(together[column].item()), (name, column)


@settings(max_examples=25, deadline=None)
@given(
    pair=st.lists(st.sampled_from(user_metrics()), min_size=2, max_size=2, unique=True),
    seed=st.integers(0, 10_000),
)
def test_a_metric_value_does_not_depend_on_its_neighbour(pair: list[str], seed: int) -> None:
    df = with_undefined_users(seed)
    options = {
        **EVERY_OPTIONS,
        "items": side_items(df.get_column("item")),
        "aggregate": ["mean", "median", "std"],
    }
    both = prk.evaluate(df, pair, **options).row(0, named=True)
    for metric in pair:
        alone = prk.evaluate(df, [metric], **options).row(0, named=True)
        for column, value in alone.items():
            if column not in ("n_users", "n_skipped"):
                assert both[column] == same(value), (pair, column)
        # skip_row: every mean of the row over the users defined for both metrics.
        row = prk.evaluate(df, pair, empty="skip_row", **options).row(0, named=True)
        per_user = prk.evaluate(df, pair, per_user=True, **{**options, "aggregate": "mean"})
        complete = per_user.drop_nulls(pair)
        name = per_user.columns[1 + pair.index(metric)]
        assert row[f"n_users({name})"] == complete.height
        expected = complete.get_column(name).mean()
        assert row[name] == (None if expected is None else pytest.approx(expected, rel=1e-12))


def _split(metric: str) -> tuple[str, int | None]:
    name, _, k = metric.partition("@")
    return name, int(k) if k else None


# --------------------------------------------------------------------------- declarations
def recs_variants(df: pl.DataFrame, seed: int) -> list[pl.DataFrame]:
    """Other recommendations over the same judged rows (the truth is unchanged)."""
    rng = np.random.default_rng(seed)
    scores = df.get_column("score").to_numpy()
    extra = (
        df.select("user")
        .unique()
        .with_columns(
            item=pl.lit(999, pl.Int64), score=pl.lit(9.0), relevance=pl.lit(None, pl.Int64)
        )
    )
    return [
        df.with_columns(score=pl.Series(rng.permutation(scores)).fill_nan(None)),
        df.with_columns(score=pl.when(pl.col("score").is_not_null()).then(1.0)),
        df.with_columns(score=pl.lit(None, pl.Float64)),
        df.with_columns(score=pl.Series(rng.integers(0, 3, df.height).astype(float))),
        pl.concat([df, extra.select(df.columns)]),
    ]


# Options under which a metric's definedness depends on the ranking (its default's
# does not): the declaration "ranking" covers them.
RANKING_DEFINED_VARIANTS = ("r_precision_cut(no_hit=undefined)@3",)


def null_masks(frames: list[pl.DataFrame], n_items: int | None) -> dict[str, list[pl.Series]]:
    """Per metric, which users are null in each frame (one call: the frames as by groups)."""
    data = pl.concat(
        [f.with_columns(variant=pl.lit(i)) for i, f in enumerate(frames)], how="vertical"
    )
    items = side_items(data.get_column("item"))
    options = {**EVERY_OPTIONS, "items": items, "n_items": n_items, "by": "variant"}
    metrics = [*user_metrics(), *RANKING_DEFINED_VARIANTS]
    out = prk.evaluate(data, metrics, per_user=True, users="all", **options)
    groups = out.sort("variant", "user").partition_by("variant", maintain_order=True)
    return {metric: [g.get_column(metric).is_null() for g in groups] for metric in out.columns[2:]}


def test_declared_definedness_matches_the_kernels() -> None:
    """always: never null; truth: null for the same users whatever is recommended;
    ranking: some other recommendations over the same truth change who is null (so
    no metric that could be declared truth-defined is forgotten)."""
    found: dict[str, set[str]] = {}
    tiny = with_undefined_users(0).filter(pl.col("user") >= 100)  # a catalog of 3 items
    cases = [(with_undefined_users(seed), seed, n) for seed in range(3) for n in (200, None)]
    for base, seed, n_items in [*cases, (tiny, 0, None)]:
        frames = [base, *recs_variants(base, seed)]
        if True:  # n_items: a fixed catalog, or the data's own (small) one
            for metric, masks in null_masks(frames, n_items).items():
                kinds = found.setdefault(metric, set())
                if any(m.any() for m in masks):
                    kinds.add("null")
                fixed_catalog = n_items is not None
                if any(not (m == masks[0]).all() for m in masks[1:]):
                    kinds.add("varies" if fixed_catalog else "varies_with_catalog")
    for metric in user_metrics():
        name = bind(*_split(metric)).name
        spec = bind(*_split(metric)).spec
        kinds = found[name]
        if spec.defined == "always":
            assert "null" not in kinds, name
        elif spec.defined == "truth":  # (fallout is null only when all N items are relevant)
            assert "varies" not in kinds, name
    for name, spec in registered().items():
        # Undefined for some rankings only under insufficient=exclude (not a default):
        # tests/metrics/test_partial_auc.py checks those users.
        if name in ("partial_auc", "pap"):
            continue
        if spec.scope == "user" and spec.defined == "ranking":
            variants = [n for n in found if expand_metric(n)[0].spec.name == name]
            assert any(found[n] & {"varies", "varies_with_catalog"} for n in variants), name


def test_truth_defined_flag_and_list_metrics() -> None:
    specs = registered()
    assert specs["ndcg"].truth_defined
    assert specs["recall"].defined == "truth"
    assert specs["dcg"].defined == "always"
    assert specs["dcg"].truth_defined
    assert specs["kendall_tau"].defined == "ranking"
    assert not specs["kendall_tau"].truth_defined
    table = prk.list_metrics()
    defined = dict(table.select("name", "defined").rows())
    assert defined["map"] == "truth"
    assert defined["global_auc"] is None  # not a per-user metric


# --------------------------------------------------------------------------- by groups
def test_users_recs_is_decided_over_the_by_groups() -> None:
    # System b served user 1 (a hit) and not user 2; system a served both (one hit).
    recs = pl.DataFrame(
        {
            "system": ["a", "a", "b"],
            "user": [1, 2, 1],
            "item": [10, 21, 10],
            "score": [1.0, 1.0, 1.0],
        }
    )
    truth = pl.DataFrame({"user": [1, 2], "item": [10, 20]})
    long = prk.join(recs, truth, by="system")
    got = prk.evaluate(long, ["mrr", "num_ret"], by="system", users="recs")
    # Before, b was averaged over user 1 alone (mrr 1.0, better than a with fewer users).
    assert got.rows() == [
        ("a", (1 + 0) / 2, (1 + 1) / 2, 2, 2, 2, 0),
        ("b", (1 + 0) / 2, (1 + 0) / 2, 2, 2, 2, 0),
    ]
    # A user recommended to by no system is not evaluated; without by nothing changes.
    alone = prk.evaluate(long.filter(pl.col("system") == "b"), ["mrr"], users="recs")
    assert alone.row(0) == (1.0, 1, 1, 0)


def join_systems(seed: int, n_systems: int = 3) -> pl.DataFrame:
    """Systems over a shared truth: each recommends to a random subset of the users,
    some with constant scores; joined with join(by=)."""
    rng = np.random.default_rng(seed)
    truth = random_frame(seed, n_users=16, max_items=6).filter(pl.col("relevance").is_not_null())
    recs = []
    for s in range(n_systems):
        served = rng.random(20) < 0.7
        for user in np.flatnonzero(served):
            items = rng.choice(40, size=int(rng.integers(1, 6)), replace=False)
            constant = rng.random() < 0.25
            for item in items:
                score = 1.0 if constant else float(rng.integers(0, 3))
                recs.append((f"s{s}", int(user), int(item), score))
    recs_frame = pl.DataFrame(
        recs,
        schema={"system": pl.String, "user": pl.Int64, "item": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    # A random system may miss the truth entirely: that is a case under test, not a mistake.
    return prk.join(
        recs_frame, truth.select("user", "item", "relevance"), by="system", check_overlap=False
    )


@pytest.mark.parametrize("users", ["truth", "recs", "both", "all", [0, 3, 5, 17, 99]])
@pytest.mark.parametrize("seed", [0, 1])
def test_truth_defined_metrics_average_every_system_over_the_same_users(
    users: Any, seed: int
) -> None:
    df = join_systems(seed)
    items = side_items(df.get_column("item"))
    options = {**EVERY_OPTIONS, "items": items, "by": "system", "users": users}
    got = prk.evaluate(df, user_metrics(), **options)
    per_user = prk.evaluate(df, user_metrics(), per_user=True, **options)
    # Under "recs" and "all" a user without any judged row has rows, so is evaluated,
    # only where it was recommended to: compare the users with judged rows there.
    judged = df.filter(pl.col("relevance").is_not_null()).get_column("user").unique()
    scope = pl.col("user").is_in(judged.implode()) if users in ("recs", "all") else pl.lit(True)
    differs = set()
    for metric in user_metrics():
        m = bind(*_split(metric))
        counts = got.get_column(f"n_users({m.name})").to_list()
        if m.spec.truth_defined:
            # The very same users, not only as many.
            defined = per_user.filter(scope & pl.col(m.name).is_not_null())
            sets = [
                set(defined.filter(pl.col("system") == s).get_column("user"))
                for s in got.get_column("system")
            ]
            assert all(x == sets[0] for x in sets), (m.name, counts)
            if users not in ("recs", "all"):
                assert len(set(counts)) == 1, (m.name, counts)
        elif len(set(counts)) > 1:
            differs.add(m.spec.name)
    # Metrics declared "ranking" may differ (e.g. auc: what a system recommended).
    assert differs <= {n for n, s in registered().items() if s.defined == "ranking"}
    if users == "truth":
        assert differs & {"auc", "kendall_tau", "mcc"}  # the test can see a difference


@pytest.mark.parametrize("empty", ["skip", "skip_row", "zero"])
@pytest.mark.parametrize("summary", ["wide", "long"])
@pytest.mark.parametrize(("strategy", "n_buckets"), [("buckets", 3), ("partition", 4)])
@pytest.mark.parametrize("users", ["recs", "truth", [1, 3, 5, 99]])
def test_bucketed_equals_in_memory(
    empty: str, summary: str, strategy: str, n_buckets: int, users: Any
) -> None:
    df = join_systems(5)
    metrics = ["ndcg@3", "kendall_tau", "auc", "novelty@2", "global_auc", "coverage@2"]
    options: dict[str, Any] = {
        "by": "system",
        "users": users,
        "empty": empty,
        "summary": summary,
        "aggregate": ["mean", "gmean", "median"],
        "items": side_items(df.get_column("item")),
    }
    expected = prk.evaluate(df, metrics, engine="memory", **options)
    got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=n_buckets), **options)
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


def test_per_user_file_summary_equals_evaluate() -> None:
    """summarize over the per-user values (what the CLI prints with --per-user FILE)."""
    from polars_rankeval.api.evaluate import summarize

    df = join_systems(2)
    metrics = ["ndcg@3", "kendall_tau", "mrr"]
    for empty in ("skip", "skip_row"):
        per_user = prk.evaluate(df, metrics, by="system", per_user=True, users="recs")
        names = per_user.columns[2:]
        got = summarize(per_user.lazy(), names, ["system"], empty=empty).collect()
        expected = prk.evaluate(df, metrics, by="system", users="recs", empty=empty)  # type: ignore[arg-type]
        assert_frame_equal(got, expected)


def test_pairs_cover_every_registered_per_user_metric() -> None:
    names = {bind(*_split(m)).spec.name for m in user_metrics()}
    assert names == {n for n, s in registered().items() if s.scope == "user"}


def test_cli_empty_and_summary_options(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    from polars_rankeval.cli.app import main

    expected = prk.evaluate(
        prk.load_example(), ["ndcg@10", "kendall_tau"], empty="skip_row", summary="long"
    )
    argv = ["-m", "ndcg@10", "-m", "kendall_tau", "--empty", "skip_row", "--summary", "long"]
    assert main([*argv, "--format", "csv"]) == 0
    out = pl.read_csv(capsys.readouterr().out.encode())
    assert out.columns == ["metric", "aggregation", "value", "n_users", "n_skipped"]
    assert_frame_equal(out, expected, check_dtypes=False)
    # With --per-user FILE the printed summary is computed from the per-user values.
    path = tmp_path / "per_user.csv"
    assert main([*argv, "--format", "csv", "--per-user", str(path)]) == 0
    printed = pl.read_csv(capsys.readouterr().out.encode())
    assert_frame_equal(printed, expected, check_dtypes=False)


def test_cli_summary_auto_is_long_for_people_and_wide_for_programs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from polars_rankeval.cli.app import main

    argv = ["-m", "ndcg@10", "-m", "mrr"]
    assert main([*argv, "--format", "csv"]) == 0
    wide = pl.read_csv(capsys.readouterr().out.encode())
    assert wide.columns == [
        "ndcg@10",
        "mrr",
        "n_users(ndcg@10)",
        "n_users(mrr)",
        "n_users",
        "n_skipped",
    ]
    assert main([*argv, "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| metric | aggregation | value | n_users | n_skipped |"
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| ndcg@10", "| mrr"]
    assert main([*argv, "--format", "markdown", "--summary", "wide"]) == 0
    assert capsys.readouterr().out.startswith("| ndcg@10 | mrr |")

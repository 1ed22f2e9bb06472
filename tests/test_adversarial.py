"""Odd values, odd names and absurd bounds: each must give the right number or an error.

An adversarial battery: scores beyond float64 precision, infinite
relevance, overflowing gains and options, NaN where null is meant, null user ids, data
columns named like the engine's internal columns, and absurd bucket counts.

Tests the private unit plan.job.INTERNAL on purpose (data columns named like it).
"""

from __future__ import annotations

import decimal
import math
import pathlib
import re

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.metrics.registry import registered
from polars_rankeval.plan.job import INTERNAL
from tests._reference import random_frame

SPECS = registered()


def small_frame() -> pl.DataFrame:
    """Heavy ties, unjudged and unrecommended rows, scores 0..3."""
    return random_frame(21, n_users=12)


# Families reading history= and items=: their own test files cover them.
BEYOND = ("serendipity", "calibration", "popularity_bias", "categorical")


def metrics_for(ties: str, *, per_user: bool) -> list[str]:
    """One instance of every metric that supports ``ties`` (per-user ones only if asked)."""
    out = []
    for name, spec in SPECS.items():
        if ties not in spec.tie_policies or spec.scope == "item":
            continue
        if per_user and spec.scope != "user":
            continue
        if name in ("intra_list_diversity", "novelty", "popularity_bias", "unseen_share"):
            continue  # read an items= side table or a data column
        if spec.family == "intent":
            continue  # read a subtopics column (tests/metrics/test_intent.py)
        if spec.family in BEYOND:
            continue
        if name in ("mae", "mse", "rmse", "nmae"):
            continue  # arithmetic on the score itself, not its order
        out.append(f"{name}@3" if spec.takes_k else name)
    return out


# --------------------------------------------------------------------------- precision
def _wide(df: pl.DataFrame, kind: str) -> tuple[pl.DataFrame, dict[str, str | None]]:
    """The same order as ``df``'s small scores, in values that float64 cannot separate."""
    score = pl.col("score").cast(pl.Int64)
    if kind == "int64":
        return df.with_columns(score=2**60 + score), {}
    if kind == "uint64":
        return df.with_columns(score=(2**63 + score).cast(pl.UInt64)), {}
    if kind == "int128":
        return df.with_columns(score=(pl.lit(2**100, dtype=pl.Int128) + score)), {}
    if kind == "decimal":
        # 10^17 + s * 1e-9: 26 significant digits, far beyond float64's 16.
        step = pl.lit(decimal.Decimal("0.000000001"), dtype=pl.Decimal(38, 9))
        base = pl.lit(decimal.Decimal(10**17), dtype=pl.Decimal(38, 9))
        return df.with_columns(score=base + score.cast(pl.Decimal(38, 9)) * step), {}
    # rank=: 1 is best; huge ranks 2^62 + (3 - score) keep the order of the scores.
    rank = (2**62 + 3 - score).cast(pl.UInt64)
    return df.with_columns(rank=rank).drop("score"), {"rank": "rank", "score": None}


@pytest.mark.parametrize("kind", ["int64", "uint64", "int128", "decimal", "rank"])
@pytest.mark.parametrize("ties", ["expected", "item_desc", "optimistic"])
def test_scores_beyond_float64_precision_keep_their_order(kind: str, ties: str) -> None:
    df = small_frame()
    wide, columns = _wide(df, kind)
    # A cast to Float64 before ranking made every user's scores one tie group.
    order = wide.get_column(columns.get("rank") or "score")
    assert order.cast(pl.Float64).drop_nulls().n_unique() == 1
    for per_user in (True, False):
        metrics = metrics_for(ties, per_user=per_user)
        options = {"ties": ties, "per_user": per_user, "users": "all", "n_items": 60}
        expected = prk.evaluate(df, metrics, **options)  # type: ignore[arg-type]
        got = prk.evaluate(wide, metrics, **options, **columns)  # type: ignore[arg-type]
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)


def test_huge_integer_scores_hand_computed() -> None:
    # Three scores 2^60, 2^60 + 1, 2^60 + 2 (one float64 value): the relevant item has
    # the highest score, so mrr = 1 and ndcg@1 = 1 (were 1/3 * (1 + 1/2 + 1/3) and 1/3).
    big = 2**60
    df = pl.DataFrame(
        {
            "user": [1] * 3,
            "item": [1, 2, 3],
            "score": [big, big + 1, big + 2],
            "relevance": [0, 0, 1],
        }
    )
    out = prk.evaluate(df, ["mrr", "ndcg@1", "spearman", "global_auc"])
    assert out.row(0, named=True) == {
        "mrr": 1.0,
        "ndcg@1": 1.0,
        # centred ranks (-1, 0, 1) vs (-1/2, -1/2, 1): 1.5 / sqrt(2 * 1.5)
        "spearman": pytest.approx(math.sqrt(3) / 2),
        "global_auc": 1.0,
        "n_users(mrr)": 1,
        "n_users(ndcg@1)": 1,
        "n_users(spearman)": 1,
        "n_users": 1,
        "n_skipped": 0,
    }


def test_minus_zero_and_zero_are_one_tie_group() -> None:
    # -0.0 == 0.0: one tie group of two, whatever the bit pattern (a window partition on
    # the raw key used to split them): expected precision@1 = 1/2.
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.0, -0.0], "relevance": [1, 0]})
    assert prk.evaluate(df, ["precision@1"])["precision@1"].item() == 0.5
    assert prk.evaluate(df.reverse(), ["precision@1"])["precision@1"].item() == 0.5


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
def test_infinite_relevance_is_an_error(value: float) -> None:
    df = pl.DataFrame(
        {"user": [1, 1], "item": [1, 2], "score": [1.0, 2.0], "relevance": [value, 1.0]}
    )
    with pytest.raises(ValueError, match=r"relevance column 'relevance' has 1 infinite value"):
        prk.evaluate(df, ["ndcg@2"])
    with pytest.raises(ValueError, match=r"infinite value.*'relevance': -?inf"):
        prk.evaluate(df, ["ndcg@2"], engine=prk.Buckets(n_buckets=2))


def test_exp_gain_refuses_relevance_that_overflows() -> None:
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [1.0, 2.0], "relevance": [1024, 1]})
    with pytest.raises(
        ValueError, match=r"holds 1024\.0: gain=exp .* below 512 .*ndcg\(gain=exp\)@2"
    ):
        prk.evaluate(df, ["ndcg(gain=exp)@2"])
    # Linear gain is fine, and gain=exp below the limit is finite and exact:
    linear = prk.evaluate(df, ["ndcg@2"])["ndcg@2"].item()
    assert linear == pytest.approx((1 + 1024 / math.log2(3)) / (1024 + 1 / math.log2(3)), rel=1e-12)
    ok = df.with_columns(relevance=pl.Series([511, 1]))
    value = prk.evaluate(ok, ["ndcg(gain=exp)@2"])["ndcg(gain=exp)@2"].item()
    ideal = (2.0**511 - 1) + 1 / math.log2(3)
    assert value == pytest.approx((1 + (2.0**511 - 1) / math.log2(3)) / ideal, rel=1e-12)


@pytest.mark.parametrize(
    ("metric", "match"),
    [
        (f"lauc@{2**64}", r"cutoff k of metric 'lauc' must lie within \+-2\^32"),
        (f"precision@{2**63}", r"cutoff k of metric 'precision' must lie within"),
        ("fbeta(beta=1e200)@2", r"parameter 'beta' of metric 'fbeta' must lie within \+-1e\+100"),
        ("utility(a=1e308)@2", r"parameter 'a' of metric 'utility' must lie within"),
    ],
)
def test_absurd_options_are_refused(metric: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prk.parse_metric(metric)


def test_largest_cutoff_equals_a_cutoff_past_every_list() -> None:
    # k = 2^32 is accepted and means "past the whole list" on these short lists: every
    # metric that does not divide by k itself has its value at k = 50 (lauc@2^64 was -3).
    df = small_frame()
    names = [n for n, s in SPECS.items() if s.takes_k and s.scope == "user"]
    side = ("intra_list_diversity", "novelty", "popularity_bias", "unseen_share")
    names = [n for n in names if n not in side and SPECS[n].family != "intent"]
    names = [n for n in names if n not in side and SPECS[n].family not in BEYOND]
    # Under the default ties (err, deterministic only, has the check in its own tests).
    names = [n for n in names if "expected" in SPECS[n].tie_policies]

    def at(k: int) -> pl.DataFrame:
        out = prk.evaluate(df, [f"{n}@{k}" for n in names], per_user=True, users="all", n_items=60)
        return out.rename({f"{n}@{k}": n for n in names})

    big, k50, k60 = at(2**32), at(50), at(60)

    def same(a: pl.Series, b: pl.Series) -> bool:
        # values of two runs (Polars' threaded float sums may differ in the last bit)
        frame = pl.DataFrame({"a": a, "b": b})
        return frame.select(
            (pl.col("a").is_null() == pl.col("b").is_null()).all()
            & ((pl.col("a") - pl.col("b")).abs() <= 1e-12 * pl.col("b").abs()).all()
        ).item()

    past = [n for n in names if same(k50[n], k60[n])]
    assert {"lauc", "ndcg", "map", "recall", "auc", "fallout"} <= set(past)
    assert_frame_equal(big.select("user", *past), k50.select("user", *past))
    # The others divide by k (precision, f1, unjudged, ...): finite.
    others = big.select(pl.exclude("user", *past))
    assert not any(others.select(pl.all().is_nan().any() | pl.all().is_infinite().any()).row(0))


def test_fbeta_with_extreme_beta_tends_to_recall_and_precision() -> None:
    # User 1: 1 hit in a top 2 (precision 1/2) of 3 relevant items (recall 1/3).
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": [1, 2, 3, 4],
            "score": [2.0, 1.0, None, None],
            "relevance": [1, 0, 1, 1],
        }
    )
    out = prk.evaluate(df, ["fbeta(beta=1e100)@2", "fbeta(beta=1e-100)@2"], n_items=10)
    assert out["fbeta(beta=1e+100)@2"].item() == pytest.approx(1 / 3, rel=1e-15)
    assert out["fbeta(beta=1e-100)@2"].item() == pytest.approx(1 / 2, rel=1e-15)
    # No hit: 0, not 0 / 0 (beta^2 underflows to 0 and nothing is recommended).
    none = df.with_columns(score=pl.lit(None, dtype=pl.Float64))
    out = prk.evaluate(none, ["fbeta(beta=1e-200)@2"], n_items=10)
    assert out["fbeta(beta=1e-200)@2"].item() == 0.0


def test_no_metric_returns_nan_on_an_empty_frame() -> None:
    empty = small_frame().clear()
    for ties in ("expected", "item_desc"):
        metrics = metrics_for(ties, per_user=False)
        out = prk.evaluate(empty, metrics, ties=ties, users="all", rating_range=(0.0, 3.0))  # type: ignore[arg-type]
        floats = out.select(pl.selectors.float())
        assert floats.null_count().row(0) == tuple([1] * floats.width)  # null, never NaN
        assert not any(floats.select(pl.all().is_nan().any()).row(0))


def test_coverage_of_an_empty_frame_is_null() -> None:
    out = prk.evaluate(small_frame().clear(), ["coverage@2"])
    assert out["coverage@2"].to_list() == [None]


@pytest.mark.parametrize("users", [[1, None], pl.Series([None, 2]), pl.DataFrame({"user": [None]})])
def test_null_user_ids_are_refused(users: object) -> None:
    with pytest.raises(ValueError, match=r"users= holds 1 null id\(s\)"):
        prk.evaluate(small_frame(), ["mrr"], users=users)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- names
def _engine_names() -> list[str]:
    """Every column name the package creates (read from its source, so that a new one
    is tested too), the plan's own input names, and the output names."""
    found: set[str] = set()
    for path in pathlib.Path(prk.__file__).parent.rglob("*.py"):
        text = path.read_text()
        found |= set(re.findall(r'"(__prk[^"{]*)', text))
        found |= set(re.findall(r'pl\.col\("([^"]+)"\)', text))
        found |= set(re.findall(r'\.alias\("([^"]+)"\)', text))
        found |= set(re.findall(r"\b(?:agg|with_columns|select)\(\s*([a-z_0-9]+)=", text))
    found |= {f"{INTERNAL}{n}" for n in ("user", "item", "order", "relevance", "by0", "extra0")}
    found |= {"__prk_key", "len", "value", "n_users", "n_skipped", "user", "item", "score"}
    # A name ending in "[" is a prefix of formatted names such as __prk_gsum[ndcg].
    return sorted(n + "x]" if n.endswith("[") else n for n in found if "@k" not in n)


ENGINE_NAMES = _engine_names()
DATA_ROLES = ("user", "item", "score", "relevance", "system", "propensity")
SIDE_ROLES = ("popularity", "features", "seen", "subtopics")


def names_frame() -> tuple[pl.DataFrame, pl.DataFrame]:
    df = pl.concat(
        [
            random_frame(seed, n_users=6).with_columns(system=pl.lit(name))
            for seed, name in ((31, "a"), (32, "b"))
        ]
    ).with_columns(propensity=(pl.col("item") % 4 + 1) / 4)
    items = pl.DataFrame({"item": df.get_column("item").unique().sort()}).with_columns(
        popularity=(pl.col("item") % 7 + 1) / 8,
        features=pl.concat_list((pl.col("item") % 3).cast(pl.Float64), pl.col("item") % 5 - 2.0),
        seen=pl.col("item") % 2 == 0,
        subtopics=pl.concat_list(
            pl.struct(subtopic=pl.col("item") % 3, relevance=pl.lit(1)),
            pl.struct(subtopic=3 + pl.col("item") % 2, relevance=pl.col("item") % 4 // 2),
        ),
    )
    return df, items


def _all_metrics(names: dict[str, str], scope: str) -> list[str]:
    out = []
    for name, spec in SPECS.items():
        if spec.scope != scope or "optimistic" not in spec.tie_policies:
            continue
        if spec.family in BEYOND:
            continue
        options = {
            "popularity": f"popularity={names['popularity']}",
            "features": f"features={names['features']}",
            "propensity": f"propensity={names['propensity']}",
            "seen": f"seen={names['seen']}",
            "subtopics": f"subtopics={names['subtopics']}",
        }
        given = [options[p] for p in spec.params if p in options and name != "ctr"]
        text = name + (f"({','.join(given)})" if given else "")
        out.append(f"{text}@3" if spec.takes_k else text)
    if scope == "global":
        out.append(f"ctr(estimation=ips,propensity={names['propensity']})@3")
    return out


def _evaluate_all(
    df: pl.DataFrame, items: pl.DataFrame, names: dict[str, str]
) -> list[pl.DataFrame]:
    options = {
        "user": names["user"],
        "item": names["item"],
        "score": names["score"],
        "relevance": names["relevance"],
        "by": names["system"],
        "items": items,
        "users": "all",
        "ties": "optimistic",  # every metric supports it; its tie order reads the item
        "n_items": 100,
        "rating_range": (0.0, 3.0),
    }
    return [
        prk.evaluate(df, _all_metrics(names, "user"), per_user=True, **options),
        prk.evaluate(df, _all_metrics(names, "global"), **options),
        prk.evaluate(df, _all_metrics(names, "item"), per_item=True, **options),
    ]


@pytest.mark.parametrize("start", range(0, len(ENGINE_NAMES), 8))
def test_columns_named_like_engine_columns_give_identical_results(start: int) -> None:
    # Each input column (the four roles, a by column, a propensity, and the items=
    # table's popularity and features) gets an engine name in turn; by columns never
    # take an output name (n_users, ...: a precise error, tested below), and the
    # columns that name the output rows (user, item, by) never take a metric's name
    # (e.g. trec_eval's "g": also a precise error, tested below).
    pool = [n for n in ENGINE_NAMES[start:] + ENGINE_NAMES[:start]]
    roles = (*DATA_ROLES, *SIDE_ROLES)
    chosen: dict[str, str] = {}
    for role in roles:
        banned: set[str] = set()
        if role == "system":
            banned |= {"n_users", "n_skipped"}
        if role in ("user", "item", "system"):
            banned |= set(SPECS)
        chosen[role] = next(n for n in pool if n not in chosen.values() and n not in banned)
    df, items = names_frame()
    plain = {role: role for role in roles}
    expected = _evaluate_all(df, items, plain)
    renamed = df.rename({role: chosen[role] for role in DATA_ROLES})
    side = items.rename({"item": chosen["item"], **{r: chosen[r] for r in SIDE_ROLES}})
    got = _evaluate_all(renamed, side, chosen)
    back = {chosen[r]: r for r in ("user", "item", "system")}
    for g, e in zip(got, expected, strict=True):
        g = g.rename({c: back[c] for c in g.columns if c in back})
        assert g.width == e.width
        g.columns = e.columns  # metric names with options name the renamed columns
        assert_frame_equal(g, e)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"user": "item"}, r"the user and item columns are both 'item'"),
        ({"relevance": "score"}, r"the score and relevance columns are both 'score'"),
        ({"rank": "user", "score": None}, r"the user and rank columns are both 'user'"),
        ({"by": "user"}, r"by column 'user' is also the user"),
        ({"by": ["system", "system"]}, r"by columns must be distinct"),
        ({"by": "n_users"}, r"by column 'n_users' collides with the summary's 'n_users'"),
        ({"by": "mrr"}, r"metric name 'mrr' collides with the output column 'mrr'"),
    ],
)
def test_impossible_column_mappings_are_precise_errors(
    kwargs: dict[str, object], match: str
) -> None:
    df = small_frame().with_columns(system=pl.lit("a"), n_users=pl.lit(1), mrr=pl.lit(0))
    with pytest.raises(ValueError, match=match):
        prk.evaluate(df, ["mrr"], **kwargs)  # type: ignore[arg-type]


def test_per_item_metric_named_like_the_item_column_is_an_error() -> None:
    df = small_frame().rename({"item": "item_exposure@3"})
    with pytest.raises(ValueError, match=r"metric name 'item_exposure@3' collides"):
        prk.evaluate(df, ["item_exposure@3"], item="item_exposure@3", per_item=True)


@pytest.mark.parametrize("by", ["user", "item", "score"])
def test_join_by_a_role_column_is_an_error(by: str) -> None:
    recs = pl.DataFrame({"user": [1], "item": [2], "score": [0.5]})
    truth = pl.DataFrame({"user": [1], "item": [2]})
    with pytest.raises(ValueError, match=rf"by column '{by}' is also the user, item"):
        prk.join(recs, truth, by=by)


def test_a_key_column_named_len_is_validated() -> None:
    # Duplicate detection counted rows into a column named "len" (a DuplicateError).
    df = small_frame().rename({"user": "len"})
    out = prk.evaluate(df, ["mrr"], user="len")
    assert out["mrr"].item() == prk.evaluate(small_frame(), ["mrr"])["mrr"].item()
    with pytest.raises(ValueError, match=r"share a \(len, item\) key"):
        prk.evaluate(pl.concat([df, df.head(1)]), ["mrr"], user="len")

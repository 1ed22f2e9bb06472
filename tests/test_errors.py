"""Bad input gets a clear error: one table of cases, one parametrized test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk

BASE = pl.DataFrame(
    {
        "user": [1, 1, 2, 2],
        "item": [1, 2, 1, 2],
        "score": [0.9, 0.1, 0.2, 0.8],
        "relevance": [1, 0, 1, 0],
    }
)
"""A valid long frame: two users, two items each, one relevant item each."""

TWO_SYSTEMS = pl.concat(
    [
        BASE.with_columns(system=pl.lit("a")),
        BASE.with_columns(system=pl.lit("b")),
    ]
)
"""The same (user, item) pairs under two systems: not duplicates with ``by="system"``."""

RECS = pl.DataFrame({"user": [1, 1], "item": [10, 11], "score": [0.9, 0.8]})
TRUTH = pl.DataFrame({"user": [1, 1], "item": [11, 12]})

Frame = Callable[[pl.DataFrame], Any]
Action = Callable[[], object]


def ev(modify: Frame | None = None, metrics: Any = "ndcg@1", **kwargs: Any) -> Action:
    """``prk.evaluate(modify(BASE), metrics, **kwargs)``, deferred."""

    def run() -> object:
        data = BASE if modify is None else modify(BASE)
        return prk.evaluate(data, metrics, **kwargs)

    return run


def metric(name: Any) -> Action:
    """Evaluate the valid frame with one (bad) metric list or name."""
    return ev(metrics=name)


def call(fn: Callable[..., object], *args: Any, **kwargs: Any) -> Action:
    """Any call, deferred."""
    return lambda: fn(*args, **kwargs)


def with_values(column: str, values: list[Any], dtype: Any = None) -> Frame:
    """Frame modifier: replace one column by literal values."""
    return lambda df: df.with_columns(pl.Series(column, values, dtype=dtype))


def as_list(column: str) -> Frame:
    """Frame modifier: wrap every value of a column in a one-element list."""
    return lambda df: df.with_columns(pl.concat_list(pl.col(column)))


NAN, INF = float("nan"), float("inf")
AVAILABLE = "available columns: "

ERROR_CASES = [
    # ----------------------------------------------------------------- missing columns
    pytest.param(
        ev(lambda df: df.drop("user")),
        ValueError,
        r"column 'user' not found in the data; available columns: item, score, relevance",
        id="missing-user",
    ),
    pytest.param(
        ev(lambda df: df.drop("item")),
        ValueError,
        r"column 'item' not found in the data; available columns: user, score, relevance",
        id="missing-item",
    ),
    pytest.param(
        ev(lambda df: df.drop("score")),
        ValueError,
        r"column 'score' not found in the data; available columns: user, item, relevance",
        id="missing-score",
    ),
    pytest.param(
        ev(lambda df: df.drop("relevance")),
        ValueError,
        r"column 'relevance' not found in the data; available columns: user, item, score",
        id="missing-relevance",
    ),
    pytest.param(
        ev(relevance="rel"),
        ValueError,
        r"column 'rel' not found in the data; available columns: user, item, score, relevance",
        id="missing-renamed-relevance",
    ),
    pytest.param(
        ev(by="system"),
        ValueError,
        r"column 'system' not found in the data; " + AVAILABLE,
        id="missing-by-column",
    ),
    # ----------------------------------------------------------------- wrong dtypes
    pytest.param(
        ev(lambda df: df.with_columns(pl.col("score").cast(pl.String))),
        TypeError,
        r"score column 'score' must have a numeric dtype, got String",
        id="string-score",
    ),
    pytest.param(
        ev(lambda df: df.with_columns(pl.col("relevance").cast(pl.String))),
        TypeError,
        r"relevance column 'relevance' must have a numeric dtype, got String",
        id="string-relevance",
    ),
    pytest.param(
        ev(lambda df: df.with_columns(pl.col("user").cast(pl.Float64))),
        TypeError,
        r"id column 'user' must hold integer, string or categorical ids, got Float64",
        id="float-user-id",
    ),
    pytest.param(
        ev(as_list("item")),
        TypeError,
        r"id column 'item' must hold integer, string or categorical ids, got List\(Int64\)",
        id="list-item-id",
    ),
    pytest.param(
        ev(as_list("score")),
        TypeError,
        r"score column 'score' must have a numeric dtype, got List\(Float64\)",
        id="list-score",
    ),
    # ----------------------------------------------------------------- bad values
    pytest.param(
        ev(with_values("user", [1, None, 2, 2])),
        ValueError,
        r"user column 'user' has 1 null value\(s\); e\.g\. ",
        id="null-user",
    ),
    pytest.param(
        ev(with_values("item", [1, None, 1, 2])),
        ValueError,
        r"item column 'item' has 1 null value\(s\)",
        id="null-item",
    ),
    pytest.param(
        ev(with_values("score", [NAN, 0.1, 0.2, 0.8])),
        ValueError,
        r"score column 'score' has 1 NaN or infinite value\(s\); e\.g\. .*'score': nan",
        id="nan-score",
    ),
    pytest.param(
        ev(with_values("score", [INF, 0.1, 0.2, 0.8])),
        ValueError,
        r"score column 'score' has 1 NaN or infinite value\(s\).*'score': inf",
        id="pos-inf-score",
    ),
    pytest.param(
        ev(with_values("score", [0.9, -INF, -INF, 0.8])),
        ValueError,
        r"score column 'score' has 2 NaN or infinite value\(s\).*'score': -inf",
        id="neg-inf-score",
    ),
    pytest.param(
        ev(with_values("relevance", [NAN, 0.0, 1.0, 0.0])),
        ValueError,
        r"relevance column 'relevance' has 1 NaN value\(s\)",
        id="nan-relevance",
    ),
    pytest.param(
        ev(with_values("relevance", [1, -1, 1, 0])),
        ValueError,
        r"relevance column 'relevance' has 1 negative value\(s\).*'relevance': -1",
        id="negative-relevance",
    ),
    pytest.param(
        ev(lambda df: pl.concat([df, df.head(1)])),
        ValueError,
        r"2 rows share a \(user, item\) key with another row; each \(user, item\) must appear "
        r"once",
        id="duplicate-user-item",
    ),
    pytest.param(
        ev(lambda df: TWO_SYSTEMS),
        ValueError,
        r"8 rows share a \(user, item\) key",
        id="duplicate-two-systems-without-by",
    ),
    pytest.param(
        ev(lambda df: pl.concat([TWO_SYSTEMS, TWO_SYSTEMS.head(1)]), by="system"),
        ValueError,
        r"2 rows share a \(system, user, item\) key",
        id="duplicate-within-by-group",
    ),
    pytest.param(
        ev(with_values("system", ["a", None, "a", "a"]), by="system"),
        ValueError,
        r"by column 'system' has 1 null value\(s\)",
        id="null-by-value",
    ),
    # ----------------------------------------------------------------- metric names
    pytest.param(
        metric("ndcg@0"),
        ValueError,
        r"cutoff k of metric 'ndcg' must be a positive integer, got 0",
        id="k-zero",
    ),
    pytest.param(
        metric("precision@-1"),
        ValueError,
        r"cutoff k of metric 'precision' must be a positive integer, got -1",
        id="k-negative",
    ),
    pytest.param(
        metric("ndcg@1.5"),
        ValueError,
        r"cutoff in 'ndcg@1\.5' must be a positive integer, got '1\.5'",
        id="k-float",
    ),
    pytest.param(
        metric("ndcg@x"),
        ValueError,
        r"cutoff in 'ndcg@x' must be a positive integer, got 'x'",
        id="k-not-a-number",
    ),
    pytest.param(
        metric("ndgc@10"),
        ValueError,
        r"unknown metric 'ndgc@10'; did you mean 'ndcg@10'\? \(see polars_rankeval\.list_metrics",
        id="unknown-metric",
    ),
    pytest.param(
        metric("ndcg(foo=1)@10"),
        ValueError,
        r"unknown parameter 'foo' for metric 'ndcg'; valid parameters: .*gain",
        id="unknown-parameter",
    ),
    pytest.param(
        metric("ndcg(gain=cubic)@10"),
        ValueError,
        r"parameter 'gain' of metric 'ndcg' must be one of .*'linear'.*, got 'cubic'",
        id="bad-choice",
    ),
    pytest.param(
        metric("ndcg(discount=half_life)@10"),
        ValueError,
        r"metric 'ndcg' with discount='half_life' needs half_life > 1, got None",
        id="half-life-missing",
    ),
    pytest.param(
        metric("ndcg(discount=half_life,half_life=1)@10"),
        ValueError,
        r"metric 'ndcg' with discount='half_life' needs half_life > 1, got 1\.0",
        id="half-life-one",
    ),
    pytest.param(
        metric("dcg(discount=half_life,half_life=0.5)@10"),
        ValueError,
        r"metric 'dcg' with discount='half_life' needs half_life > 1, got 0\.5",
        id="half-life-below-one",
    ),
    pytest.param(
        metric("ndcg(discount=log,half_life=3)@10"),
        ValueError,
        r"parameter 'half_life' of metric 'ndcg' only applies to discount='half_life', "
        r"got discount='log'",
        id="half-life-with-log-discount",
    ),
    pytest.param(
        metric("ndcg(base=1)@10"),
        ValueError,
        r"parameter 'base' of metric 'ndcg' must be > 1, got 1\.0",
        id="base-one",
    ),
    pytest.param(
        metric("dcg(base=0.5)@10"),
        ValueError,
        r"parameter 'base' of metric 'dcg' must be > 1, got 0\.5",
        id="base-below-one",
    ),
    pytest.param(
        metric("precision(rel=0)@5"),
        ValueError,
        r"parameter 'rel' of metric 'precision' must be > 0, got 0\.0",
        id="rel-zero",
    ),
    pytest.param(
        metric("recall(rel=-1)@5"),
        ValueError,
        r"parameter 'rel' of metric 'recall' must be > 0, got -1\.0",
        id="rel-negative",
    ),
    pytest.param(
        metric("r_precision@5"),
        ValueError,
        r"metric 'r_precision' takes no cutoff @k, got k=5",
        id="cutoff-on-r-precision",
    ),
    pytest.param(
        metric("num_rel@3"),
        ValueError,
        r"metric 'num_rel' takes no cutoff @k, got k=3",
        id="cutoff-on-num-rel",
    ),
    pytest.param(
        metric(["ndcg@10", "ndcg(gain=linear)@10"]),
        ValueError,
        r"metric 'ndcg@10' is requested twice",
        id="metric-twice-canonical",
    ),
    pytest.param(
        metric(["recall@5", "recall@5"]),
        ValueError,
        r"metric 'recall@5' is requested twice",
        id="metric-twice-literal",
    ),
    pytest.param(
        metric([]),
        ValueError,
        r"metrics must name at least one metric",
        id="empty-metric-list",
    ),
    # ----------------------------------------------------------------- option choices
    pytest.param(
        ev(ties="random"),
        ValueError,
        r"argument 'ties' of evaluate must be one of \[.*'expected'.*\] or a Ties policy, "
        r"got 'random'",
        id="bad-ties",
    ),
    pytest.param(
        ev(empty="nan"),
        ValueError,
        r"argument 'empty' of evaluate must be one of \[.*'skip'.*\], got 'nan'",
        id="bad-empty",
    ),
    pytest.param(
        ev(users="everyone"),
        ValueError,
        r"argument 'users' of evaluate must be one of \[.*'truth'.*\].*, got 'everyone'",
        id="bad-users",
    ),
    # ----------------------------------------------------------------- score / rank
    pytest.param(
        call(prk.Columns, score="s", rank="r"),
        ValueError,
        r"pass either score= or rank=, not both \(got score='s', rank='r'\)",
        id="columns-score-and-rank",
    ),
    pytest.param(
        call(prk.Columns, score=None, rank=None),
        ValueError,
        r"one of score= or rank= must name a column",
        id="columns-neither-score-nor-rank",
    ),
    pytest.param(
        ev(score="s", rank="score"),
        ValueError,
        r"pass either score= or rank=, not both",
        id="evaluate-score-and-rank",
    ),
    pytest.param(
        ev(score="score", rank="score"),
        ValueError,
        r"pass either score= or rank=, not both \(got score='score', rank='score'\)",
        id="evaluate-explicit-default-score-and-rank",
    ),
    pytest.param(
        ev(by="item"),
        ValueError,
        r"by column 'item' is also the user, item",
        id="by-is-the-item-column",
    ),
    pytest.param(
        ev(users=[True]),
        TypeError,
        r"users= ids must have the user column's dtype Int64",
        id="users-bool-on-int-ids",
    ),
    pytest.param(
        ev(with_values("score", [1, 0, 1, 2]), rank="score"),
        ValueError,
        r"rank column 'score' has 1 value\(s\) below 1",
        id="rank-below-one",
    ),
    # ----------------------------------------------------------------- input types
    pytest.param(
        ev(lambda df: df.rows()),
        TypeError,
        r"argument 'data' of evaluate must be a polars DataFrame or LazyFrame, a pyarrow "
        r"Table, a pandas DataFrame or a Spark DataFrame, got list",
        id="input-list",
    ),
    pytest.param(
        ev(lambda df: df.to_dict(as_series=False)),
        TypeError,
        r"argument 'data' of evaluate must be a polars DataFrame .*, got dict",
        id="input-dict",
    ),
    # ----------------------------------------------------------------- join
    pytest.param(
        call(prk.join, RECS, TRUTH.with_columns(pl.col("user").cast(pl.String))),
        TypeError,
        r"column 'user' has dtype Int64 in recs but String in truth; cast one of them",
        id="join-user-dtype-mismatch",
    ),
    pytest.param(
        call(prk.join, RECS, TRUTH.drop("item")),
        ValueError,
        r"column 'item' not found in truth; available columns: user",
        id="join-missing-column",
    ),
    pytest.param(
        call(prk.join, RECS.drop("score"), TRUTH),
        ValueError,
        r"column 'score' not found in recs; available columns: user, item",
        id="join-missing-score",
    ),
    pytest.param(
        call(prk.join, RECS, TRUTH, by="system"),
        ValueError,
        r"column 'system' not found in recs",
        id="join-missing-by",
    ),
    pytest.param(
        call(prk.join, RECS.rows(), TRUTH),
        TypeError,
        r"argument 'recs' of join must be a polars DataFrame .*, got list",
        id="join-recs-list",
    ),
    # ----------------------------------------------------------------- users=
    pytest.param(
        ev(users=["a", "b"]),
        TypeError,
        r"users= ids must have the user column's dtype Int64, got String",
        id="users-list-wrong-dtype",
    ),
    pytest.param(
        ev(users=pl.DataFrame({"uid": [1]})),
        ValueError,
        r"users frame must have a 'user' column, got columns \['uid'\]",
        id="users-frame-without-user-column",
    ),
    pytest.param(
        ev(users=[1.5]),
        TypeError,
        r"users= ids must have the user column's dtype Int64, got Float64",
        id="users-float-on-int-ids",
    ),
    pytest.param(
        ev(with_values("user", ["a", "a", "b", "b"]), users=[1, 2]),
        TypeError,
        r"users= ids must have the user column's dtype String, got Int64",
        id="users-int-on-string-ids",
    ),
    # ----------------------------------------------------------------- empty="error"
    pytest.param(
        ev(with_values("relevance", [1, 0, 0, 0]), empty="error"),
        ValueError,
        r"metric 'ndcg@1' is undefined for 1 user\(s\).*\(2,\).*empty='skip'.*empty='zero'",
        id="empty-error-one-user",
    ),
    pytest.param(
        ev(with_values("relevance", [0, 0, 0, 0]), metrics=["recall@2", "mrr"], empty="error"),
        ValueError,
        r"metric 'recall@2' is undefined for 2 user\(s\).*empty='skip'.*empty='skip_row'"
        r" or empty='zero'",
        id="empty-error-two-users",
    ),
    # ----------------------------------------------------------------- direct functions
    pytest.param(
        call(prk.ndcg, 0),
        ValueError,
        r"cutoff k of metric 'ndcg' must be a positive integer, got 0",
        id="fn-ndcg-k-zero",
    ),
    pytest.param(
        call(prk.precision, 2, ties="random"),
        ValueError,
        r"ties must be one of .*, got 'random'",
        id="fn-precision-bad-ties",
    ),
    pytest.param(
        call(prk.map, denominator="x"),
        ValueError,
        r"parameter 'denominator' of metric 'map' must be one of .*'relevant'.*, got 'x'",
        id="fn-map-bad-denominator",
    ),
    pytest.param(
        call(prk.r_precision, rel=0),
        ValueError,
        r"parameter 'rel' of metric 'r_precision' must be > 0",
        id="fn-r-precision-rel-zero",
    ),
    # ----------------------------------------------------------------- unclear errors
    pytest.param(
        ev(by="user"),
        ValueError,
        r"by.*'user'",
        id="by-is-the-user-column",
    ),
]


@pytest.mark.parametrize(("action", "exc", "match"), ERROR_CASES)
def test_bad_input_raises_clear_error(action: Action, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        action()


def test_error_is_raised_for_a_lazyframe_at_collect_time() -> None:
    # Lazy in, lazy out: the checks are part of the plan and raise from collect().
    bad = BASE.with_columns(score=pl.Series([NAN, 0.1, 0.2, 0.8])).lazy()
    result = prk.evaluate(bad, "ndcg@1")
    with pytest.raises(ValueError, match=r"NaN or infinite"):
        result.collect()


def test_same_user_item_in_two_systems_is_not_a_duplicate() -> None:
    out = prk.evaluate(TWO_SYSTEMS, "ndcg@1", by="system")
    assert out["system"].to_list() == ["a", "b"]
    assert out["n_users"].to_list() == [2, 2]


def test_validate_false_skips_the_value_checks() -> None:
    # The documented escape hatch: duplicates are then not detected.
    dup = pl.concat([BASE, BASE.head(1)])
    out = prk.evaluate(dup, "num_ret", validate=False, per_user=True)
    assert out["num_ret"].to_list() == [3.0, 2.0]


def test_checks_survive_python_dash_o() -> None:
    code = textwrap.dedent(
        """
        import sys
        import polars as pl
        import polars_rankeval as prk
        assert False, "asserts must be stripped under -O"
        """
    )
    code += textwrap.dedent(
        """
        print("optimize", sys.flags.optimize)
        df = pl.DataFrame({"user": [1, 1], "item": [1, 2],
                           "score": [float("nan"), 0.5], "relevance": [1, 0]})
        try:
            prk.evaluate(df, "ndcg@1")
        except ValueError as exc:
            print("raised:", exc)
            sys.exit(0)
        sys.exit(3)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "optimize 1" in proc.stdout
    assert "raised: score column 'score' has 1 NaN or infinite value(s)" in proc.stdout


# --------------------------------------------------------------------------- empty input
EMPTY_SCHEMA = {"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64}


def test_empty_frame_gives_one_summary_row_with_null_metrics() -> None:
    empty = pl.DataFrame(schema=EMPTY_SCHEMA)
    out = prk.evaluate(empty, ["ndcg@10", "recall@5", "mrr"])
    assert out.schema == pl.Schema(
        {
            "ndcg@10": pl.Float64,
            "recall@5": pl.Float64,
            "mrr": pl.Float64,
            "n_users(ndcg@10)": pl.Int64,
            "n_users(recall@5)": pl.Int64,
            "n_users(mrr)": pl.Int64,
            "n_users": pl.Int64,
            "n_skipped": pl.Int64,
        }
    )
    counts = dict.fromkeys(["n_users(ndcg@10)", "n_users(recall@5)", "n_users(mrr)"], 0)
    assert out.rows(named=True) == [
        {"ndcg@10": None, "recall@5": None, "mrr": None, **counts, "n_users": 0, "n_skipped": 0}
    ]


def test_empty_lazyframe_gives_one_summary_row() -> None:
    out = prk.evaluate(pl.LazyFrame(schema=EMPTY_SCHEMA), ["ndcg@10"]).collect()
    assert out.rows() == [(None, 0, 0, 0)]


def test_empty_frame_per_user_is_empty_with_the_right_schema() -> None:
    empty = pl.DataFrame(schema={**EMPTY_SCHEMA, "user": pl.String})
    out = prk.evaluate(empty, ["ndcg@10", "precision(rel=2)@5"], per_user=True)
    assert out.height == 0
    assert out.schema == pl.Schema(
        {
            "user": pl.String,
            "ndcg@10": pl.Float64,
            "precision(rel=2)@5": pl.Float64,
        }
    )


def test_empty_frame_per_user_with_by_keeps_the_by_column() -> None:
    empty = pl.DataFrame(schema={"system": pl.String, **EMPTY_SCHEMA})
    out = prk.evaluate(empty, ["mrr"], by="system", per_user=True)
    assert out.height == 0
    assert out.schema == pl.Schema({"system": pl.String, "user": pl.Int64, "mrr": pl.Float64})

"""polars_rankeval.api.spark gives the Polars results, on a local Spark (one session per run).

Every comparison runs the same data through ``prk.evaluate`` (Polars) and
``prk_spark.evaluate`` (Spark, ``local[2]``) and asserts equal frames to 1e-12: random
data with heavy ties, several systems (``by``), users without relevant items, integer
and string ids. Errors must carry the Polars messages.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.api.spark as prk_spark
from tests._reference import random_frame

pyspark = pytest.importorskip("pyspark")

from pyspark.sql import DataFrame, SparkSession  # noqa: E402

pytestmark = pytest.mark.spark  # deselect with: pytest -m "not spark"

TOL = {"abs_tol": 1e-12, "rel_tol": 1e-12}

# Per-user metrics for every tie policy; deterministic-only ones for item_desc.
USER_METRICS = [
    "ndcg@3",
    "ndcg(gain=exp,idcg=all)@5",
    "dcg@3",
    "map",
    "map(denominator=min_k_relevant)@3",
    "mrr",
    "mrr@2",
    "precision@3",
    "precision(denominator=retrieved)@4",
    "recall@5",
    "f1@3",
    "hit_rate@2",
    "r_precision",
    "auc",
    "auc@3",
    "num_ret@3",
    "num_rel",
    "num_rel_ret@3",
    "bpref",
    "rbp(p=0.5)",
    "bin_g",
    "relative_precision@3",
    "set_map",
    "fallout@3",
]
DETERMINISTIC = ["iprec_11pt", "inf_ap", "g", "ndcg_rel", "rndcg"]


JAVA_MISSING = (
    "Spark runs on the JVM: these tests need a Java runtime (17 or later; `java` on PATH "
    "or JAVA_HOME), e.g. `apt-get install openjdk-17-jre-headless`"
)


def java_available() -> bool:
    """A ``java`` on PATH or under ``JAVA_HOME``, as pyspark looks for it."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return True
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local Spark for the whole test run (the JVM starts once, ~5 s).

    Without Java the tests that need it are skipped with the reason, except in CI
    (``CI`` set), where .ci/run installs Java and a skip would hide a broken install.
    """
    if not java_available():
        if os.environ.get("CI"):
            pytest.fail(JAVA_MISSING + " (CI: .ci/run installs it)")
        pytest.skip(JAVA_MISSING)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    previous_sigint = signal.getsignal(signal.SIGINT)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("polars-rankeval-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # SparkContext installs its own SIGINT handler (cancel the jobs, then raise
    # KeyboardInterrupt) and never removes it, not even on stop(). Put the previous
    # one back at once: this session-scoped fixture ends with the whole run, and the
    # tests that run after these (tests/engines/test_buckets.py's Ctrl-C tests) expect the
    # interpreter's handler. A Ctrl-C still interrupts the run (KeyboardInterrupt).
    if previous_sigint is not None:
        signal.signal(signal.SIGINT, previous_sigint)
    try:
        yield session
    finally:
        session.stop()
        if previous_sigint is not None:
            signal.signal(signal.SIGINT, previous_sigint)


def systems(seed: int, *, string_ids: bool = False) -> pl.DataFrame:
    """Three systems over overlapping users, heavy ties, some users without relevant items."""
    frames = [
        random_frame(seed + i, n_users=40 - 5 * i, max_items=8).with_columns(system=pl.lit(name))
        for i, name in enumerate("abc")
    ]
    df = pl.concat(frames).select("system", "user", "item", "score", "relevance")
    if string_ids:
        df = df.with_columns(pl.format("u{}", pl.col("user")).alias("user"))
    return df


def to_spark(session: SparkSession, df: pl.DataFrame) -> DataFrame:
    return session.createDataFrame(df.to_arrow())


def collect(sdf: DataFrame, sort: list[str] | None = None) -> pl.DataFrame:
    frame = pl.from_arrow(sdf.toArrow())
    assert isinstance(frame, pl.DataFrame)
    return frame.sort(sort) if sort else frame


def both(
    session: SparkSession, df: pl.DataFrame, metrics: Any, **kwargs: Any
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(Spark result collected, Polars result), per-user rows sorted like Polars."""
    expected = prk.evaluate(df, metrics, **kwargs)
    by = kwargs.get("by") or []
    keys = [by] if isinstance(by, str) else list(by)
    user = kwargs.get("user", "user")
    sort = [*keys, user] if kwargs.get("per_user") else None
    got = collect(prk_spark.evaluate(to_spark(session, df), metrics, **kwargs), sort)
    return got, expected


# --------------------------------------------------------------------------- same numbers
@pytest.mark.parametrize("string_ids", [False, True], ids=["int-ids", "str-ids"])
@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_matches_polars_per_user_and_summary(
    spark: SparkSession, ties: str, string_ids: bool
) -> None:
    df = systems(10, string_ids=string_ids)
    metrics = USER_METRICS + (DETERMINISTIC if ties == "item_desc" else [])
    got, expected = both(spark, df, metrics, ties=ties, by="system", per_user=True)
    assert got.height == expected.height > 90
    assert expected.null_count().sum_horizontal().item() > 0  # undefined values occur
    assert_frame_equal(got, expected, **TOL)
    summary_metrics = metrics + (["global_auc"] if ties == "expected" else [])
    got, expected = both(
        spark, df, summary_metrics, ties=ties, by="system", aggregate=["mean", "median", "gmean"]
    )
    assert expected["n_skipped"].min() > 0  # users without relevant items
    assert_frame_equal(got, expected, **TOL)


@pytest.mark.parametrize("users", ["truth", "recs", "both", "all"])
def test_user_universes(spark: SparkSession, users: str) -> None:
    df = systems(20).filter(pl.col("system") == "a").drop("system")
    got, expected = both(spark, df, ["ndcg@3", "mrr", "recall@4"], users=users, per_user=True)
    assert_frame_equal(got, expected, **TOL)


def test_explicit_users_include_absent_ids_once(spark: SparkSession) -> None:
    df = systems(30)
    wanted = [1, 2, 2, 3, 500, 501, 501]  # duplicates; 500 and 501 are not in the data
    kwargs: dict[str, Any] = {"by": "system", "users": wanted}
    got, expected = both(spark, df, ["ndcg@3", "map"], per_user=True, **kwargs)
    assert got.height == expected.height == 3 * 5
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, ["ndcg@3", "map", "global_auc"], empty="zero", **kwargs)
    assert_frame_equal(got, expected, **TOL)


def test_explicit_users_string_ids_series_and_spark_frame(spark: SparkSession) -> None:
    df = systems(31, string_ids=True)
    ids = pl.Series("user", ["u1", "u4", "nobody"])
    got, expected = both(spark, df, ["mrr", "precision@2"], by="system", users=ids, per_user=True)
    assert_frame_equal(got, expected, **TOL)
    spark_ids = spark.createDataFrame([("u1",), ("u4",), ("nobody",), ("u4",)], "user string")
    got_frame = collect(
        prk_spark.evaluate(
            to_spark(spark, df), ["mrr", "precision@2"], by="system", users=spark_ids
        )
    )
    expected = prk.evaluate(df, ["mrr", "precision@2"], by="system", users=ids)
    assert_frame_equal(got_frame, expected, **TOL)


def test_empty_zero(spark: SparkSession) -> None:
    df = systems(40)
    kwargs: dict[str, Any] = {"by": "system", "empty": "zero"}
    got, expected = both(spark, df, ["ndcg@3", "auc", "global_auc"], **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, ["ndcg@3", "auc"], per_user=True, **kwargs)
    assert expected.null_count().sum_horizontal().item() == 0
    assert_frame_equal(got, expected, **TOL)


@pytest.mark.parametrize(("users", "empty"), [("recs", "skip"), ("truth", "skip_row")])
def test_per_metric_counts_and_long_summary(spark: SparkSession, users: str, empty: str) -> None:
    """n_users(<metric>), skip_row, summary="long" and users="recs" decided over the by
    groups: Spark == Polars in memory == Polars bucketed."""
    df = systems(60)  # users 35..39 only in system a: recommended to in one system only
    metrics = ["ndcg@3", "kendall_tau", "auc", "mrr", "global_auc"]
    kwargs: dict[str, Any] = {"by": "system", "users": users, "empty": empty}
    kwargs["aggregate"] = ["mean", "median"]
    for summary in ("wide", "long"):
        got, expected = both(spark, df, metrics, summary=summary, **kwargs)
        bucketed = prk.evaluate(
            df, metrics, summary=summary, engine=prk.Buckets(n_buckets=3), **kwargs
        )
        assert_frame_equal(got, expected, **TOL)
        assert_frame_equal(bucketed, expected, **TOL)
        if summary == "wide":
            counts = expected.select("n_users(ndcg@3)", "n_users(kendall_tau)").rows()
            # skip: the metrics cover different users; skip_row: the same ones.
            assert any(a != b for a, b in counts) == (empty == "skip")
    if empty == "skip":  # without by
        one = df.filter(pl.col("system") == "a").drop("system")
        got, expected = both(spark, one, metrics[:2], summary="long", users=users)
        assert_frame_equal(got, expected, **TOL)


def test_empty_error_names_users_like_polars(spark: SparkSession) -> None:
    df = systems(41)
    with pytest.raises(ValueError, match="undefined for") as polars_error:
        prk.evaluate(df, ["mrr", "ndcg@3"], by="system", empty="error")
    with pytest.raises(ValueError, match="undefined for") as spark_error:
        prk_spark.evaluate(to_spark(spark, df), ["mrr", "ndcg@3"], by="system", empty="error")
    assert str(spark_error.value) == str(polars_error.value)
    defined = df.filter(pl.col("relevance") > 0).select("system", "user").unique()
    ok = df.join(defined, on=["system", "user"], how="semi")
    got, expected = both(spark, ok, ["mrr"], by="system", empty="error", per_user=True)
    assert_frame_equal(got, expected, **TOL)


def test_rank_column_and_awkward_names(spark: SparkSession) -> None:
    df = (
        systems(50)
        .with_columns(
            pl.col("score")
            .rank("ordinal", descending=True)
            .over("system", "user")
            .cast(pl.Int64)
            .alias("pos")
        )
        .drop("score")
        .rename({"user": "user.id", "system": "sys tem"})
    )
    kwargs: dict[str, Any] = {"user": "user.id", "rank": "pos", "by": "sys tem"}
    metrics = ["ndcg@3", "rbp(p=0.5)", "map"]
    got, expected = both(spark, df, metrics, per_user=True, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, metrics, **kwargs)
    assert_frame_equal(got, expected, **TOL)


def test_partitioning_does_not_change_the_result(spark: SparkSession) -> None:
    df = systems(60)
    sdf = to_spark(spark, df)
    metrics = ["ndcg@3", "fallout@3"]  # fallout needs n_items: the whole input's
    one = collect(prk_spark.evaluate(sdf, metrics, by="system", n_partitions=1))
    many = collect(prk_spark.evaluate(sdf, metrics, by="system", n_partitions=7))
    assert_frame_equal(one, many, **TOL)
    assert_frame_equal(many, prk.evaluate(df, metrics, by="system"), **TOL)


def test_no_evaluated_user(spark: SparkSession) -> None:
    df = systems(70).with_columns(pl.lit(None, pl.Int64).alias("relevance"))
    one = df.filter(pl.col("system") == "a").drop("system")
    got, expected = both(spark, one, ["ndcg@3", "mrr"])  # users="truth": nobody
    assert expected.row(0, named=True)["n_users"] == 0
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, ["ndcg@3", "mrr"], by="system")
    assert expected.height == got.height == 0
    assert_frame_equal(got, expected, **TOL)


def test_catalog_size(spark: SparkSession) -> None:
    df = systems(80)
    catalog = pl.DataFrame({"item": list(range(60))})
    got, expected = both(spark, df, ["fallout@3", "ndcg@3"], by="system", n_items=catalog)
    assert_frame_equal(got, expected, **TOL)
    with pytest.raises(ValueError, match="smaller than") as polars_error:
        prk.evaluate(df, ["fallout@3"], by="system", n_items=10)
    with pytest.raises(ValueError, match="smaller than") as spark_error:
        prk_spark.evaluate(to_spark(spark, df), ["fallout@3"], by="system", n_items=10)
    assert str(spark_error.value) == str(polars_error.value)


def test_global_item_side_table_and_extra_columns(spark: SparkSession) -> None:
    """Global metrics, metrics reading items= or a data column, globals alone."""
    df = systems(100).with_columns(propensity=pl.lit(0.5))
    items = pl.DataFrame({"item": list(range(50))}).with_columns(
        popularity=(pl.col("item") + 1) / 51,
        features=pl.concat_list(
            (pl.col("item") % 3).cast(pl.Float64), (pl.col("item") % 5).cast(pl.Float64) + 1
        ),
        in_catalog=pl.col("item") < 40,
    )
    global_metrics = [
        "coverage@3",
        "coverage(catalog=in_catalog,outside_catalog=ignore)@3",
        "exposure_entropy(unit=nats,per_exposed_item=true)@3",
        "gini@3",
        "inter_list_diversity@3",
        "mae(average=global)",
    ]
    user_metrics = [
        "novelty@3",
        "novelty(denominator=k,log_base=3)@3",
        "intra_list_diversity@3",
        "intra_list_diversity(distance=euclidean)@3",
        "mcc@3",
        "spearman",
        "nmae",
    ]
    kwargs: dict[str, Any] = {"by": "system", "items": items, "users": "recs"}
    metrics = [*global_metrics, "ctr(estimation=ips)@3", "global_auc", *user_metrics]
    got, expected = both(spark, df, metrics, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, user_metrics, per_user=True, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, ["global_auc"], by="system")  # no per-user metric
    assert_frame_equal(got, expected, **TOL)


def test_intent_metrics_read_a_subtopics_column(spark: SparkSession) -> None:
    """alpha_ndcg, err_ia, nrbp, ... read a List(Struct{subtopic, relevance}) column."""
    df = systems(120, string_ids=True)
    subtopics = pl.concat_list(
        pl.struct(subtopic=pl.format("s{}", pl.col("item") % 3), relevance=pl.col("relevance")),
        pl.struct(subtopic=pl.format("t{}", pl.col("item") % 2), relevance=pl.col("item") % 2),
    )
    df = df.with_columns(subtopics=pl.when(pl.col("relevance").is_not_null()).then(subtopics))
    metrics = [
        "alpha_ndcg@5",
        "alpha_ndcg(normalize=ideal_ideal)@3",
        "err_ia@5",
        "err_ia(normalize=ideal)@5",
        "nrbp(normalize=ideal)",
        "s_recall@3",
        "precision_ia@3",
        "map_ia",
        "ndcg@3",
    ]
    kwargs: dict[str, Any] = {"by": "system", "ties": "item_desc"}
    got, expected = both(spark, df, metrics, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, metrics, per_user=True, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    assert expected["alpha_ndcg@5"].drop_nulls().len() > 20


def test_polars_call_errors_are_value_errors(spark: SparkSession) -> None:
    df = systems(110)
    items = pl.DataFrame({"item": list(range(10, 50)), "popularity": [0.5] * 40})
    match = r"metric 'novelty': \d+ item\(s\) .* have no popularity"
    with pytest.raises(ValueError, match=match):
        prk.evaluate(df, ["novelty@3"], by="system", items=items)
    with pytest.raises(ValueError, match=match + ".* counts cover its users"):
        prk_spark.evaluate(to_spark(spark, df), ["novelty@3"], by="system", items=items)
    with pytest.raises(ValueError, match="per_item=True"):
        prk_spark.evaluate(to_spark(spark, df), ["item_hits@3"], by="system", per_item=True)


def test_side_rows(spark: SparkSession) -> None:
    """With side=True each call adds one row: its duplicate count and its seconds."""
    df = systems(90)
    sdf = to_spark(spark, df)
    plan = prk_spark.Plan.create(
        sdf,
        ["ndcg@3"],
        user="user",
        item="item",
        score=None,
        relevance="relevance",
        rank=None,
        ties="expected",
        by="system",
        per_user=True,
        users="truth",
        empty="skip",
        n_partitions=3,
        options={},
    )
    values = collect(prk_spark.per_user_values(plan.input_rows(sdf), plan, side=True))
    side = values.filter(pl.col(prk_spark.SIDE_COLUMNS[0]).is_not_null())
    assert side.height == 3  # one per call
    assert side["__prk_duplicates"].sum() == 0
    assert side["__prk_polars_seconds"].sum() > 0
    assert side.select("system", "user", "ndcg@3").null_count().row(0) == (3, 3, 3)
    real = values.filter(pl.col(prk_spark.SIDE_COLUMNS[0]).is_null()).drop(prk_spark.SIDE_COLUMNS)
    expected = prk.evaluate(df, ["ndcg@3"], by="system", per_user=True)
    assert_frame_equal(real.sort("system", "user"), expected, **TOL)


def test_duplicates_of_users_outside_the_evaluation(spark: SparkSession) -> None:
    """Duplicates are found also among users that users= leaves out, as in Polars."""
    df = systems(95)
    unjudged = pl.DataFrame(  # user 900: a duplicate row, no relevance, not in the list
        {
            "system": ["a", "a"],
            "user": [900, 900],
            "item": [1, 1],
            "score": [0.5, 0.4],
            "relevance": [None, None],
        },
        schema=df.schema,
    )
    bad = pl.concat([df, unjudged])
    for users in ("truth", [1, 2]):
        with pytest.raises(ValueError, match="rows share") as polars_error:
            prk.evaluate(bad, "mrr", by="system", users=users)
        with pytest.raises(ValueError, match="rows share") as spark_error:
            prk_spark.evaluate(to_spark(spark, bad), "mrr", by="system", users=users)
        assert str(spark_error.value) == str(polars_error.value)


# --------------------------------------------------------------------------- errors
BASE = pl.DataFrame(
    {
        "system": ["a", "a", "a", "b"],
        "user": [1, 1, 2, 2],
        "item": [1, 2, 1, 2],
        "score": [0.9, 0.1, 0.2, 0.8],
        "relevance": [1, 0, 1, 0],
    }
)
Modify = Callable[[pl.DataFrame], pl.DataFrame]


def keep(df: pl.DataFrame) -> pl.DataFrame:
    return df


ERRORS: list[tuple[str, Modify, Any, dict[str, Any], type[Exception]]] = [
    ("missing column", keep, "ndcg@3", {"score": "nope"}, ValueError),
    ("missing by", keep, "ndcg@3", {"by": "team"}, ValueError),
    (
        "string score",
        lambda d: d.with_columns(pl.col("score").cast(pl.String)),
        "mrr",
        {},
        TypeError,
    ),
    ("float ids", lambda d: d.with_columns(pl.col("user").cast(pl.Float64)), "mrr", {}, TypeError),
    ("k = 0", keep, "ndcg@0", {}, ValueError),
    ("k < 0", keep, "precision@-2", {}, ValueError),
    ("unknown metric", keep, "ndgc@3", {}, ValueError),
    ("bad option", keep, "ndcg(gain=cubic)@3", {}, ValueError),
    ("score and rank", keep, "mrr", {"score": "score", "rank": "score"}, ValueError),
    ("bad ties", keep, "mrr", {"ties": "random"}, ValueError),
    ("bad empty", keep, "mrr", {"empty": "drop"}, ValueError),
    ("bad users", keep, "mrr", {"users": "some"}, ValueError),
    ("users of another kind", keep, "mrr", {"users": ["x"]}, TypeError),
    ("ties not supported", keep, "iprec_11pt", {"ties": "expected"}, ValueError),
    ("global per user", keep, "global_auc", {"per_user": True}, ValueError),
    ("by is the user", keep, "mrr", {"by": "user"}, ValueError),
    ("bad aggregate", keep, "mrr", {"aggregate": "mode"}, ValueError),
]


@pytest.mark.parametrize(
    ("modify", "metrics", "kwargs", "error"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
def test_errors_match_polars(
    spark: SparkSession, modify: Modify, metrics: Any, kwargs: dict[str, Any], error: type
) -> None:
    df = modify(BASE)
    with pytest.raises(error) as polars_error:
        prk.evaluate(df, metrics, **kwargs)
    with pytest.raises(error) as spark_error:
        prk_spark.evaluate(to_spark(spark, df), metrics, **kwargs)
    assert str(spark_error.value) == str(polars_error.value)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"n_partitions": 0},
            ValueError,
            r"argument 'n_partitions' of evaluate must be an integer >= 1 or None, got 0$",
        ),
        (
            {"n_partitions": 2.5},
            TypeError,
            r"argument 'n_partitions' of evaluate must be an integer >= 1 or None, "
            r"got float 2\.5$",
        ),
        ({"colour": "red"}, TypeError, "unexpected keyword argument 'colour'"),
        ({"by": 5}, TypeError, r"'by' of evaluate must be a column name \(str\).*got int 5$"),
        (
            {"users": pl.LazyFrame({"user": [1]})},
            TypeError,
            r"'users' of evaluate must be .*LazyFrame",
        ),
        (
            {"validate": "no"},
            TypeError,
            r"'validate' of evaluate must be True or False, got str 'no'$",
        ),
        ({"relevance": None}, TypeError, r"'relevance' of evaluate must be a column name \(str\)"),
    ],
)
def test_spark_only_errors(
    spark: SparkSession, kwargs: dict[str, Any], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        prk_spark.evaluate(to_spark(spark, BASE), "mrr", **kwargs)


def test_data_must_be_spark() -> None:
    with pytest.raises(
        TypeError,
        match=r"argument 'data' of evaluate must be a Spark DataFrame, got polars\.DataFrame",
    ):
        prk_spark.evaluate(BASE, "mrr")  # type: ignore[arg-type]


PROBLEM = r"value\(s\)|rows share"
BAD_VALUES: list[tuple[str, Modify]] = [
    ("duplicate rows", lambda d: pl.concat([d, d.head(1)])),
    ("negative relevance", lambda d: d.with_columns(relevance=pl.Series([1, -1, 0, -2]))),
    ("null user", lambda d: d.with_columns(user=pl.Series([1, None, 2, 2], dtype=pl.Int64))),
    ("nan score", lambda d: d.with_columns(score=pl.Series([0.1, float("nan"), 0.3, 0.4]))),
    ("null by", lambda d: d.with_columns(system=pl.Series(["a", None, "a", "b"]))),
]


@pytest.mark.parametrize("modify", [c[1] for c in BAD_VALUES], ids=[c[0] for c in BAD_VALUES])
def test_validation_matches_polars(spark: SparkSession, modify: Modify) -> None:
    df = modify(BASE)
    with pytest.raises(ValueError, match=PROBLEM) as polars_error:
        prk.evaluate(df, "mrr", by="system")
    with pytest.raises(ValueError, match=PROBLEM) as spark_error:
        prk_spark.evaluate(to_spark(spark, df), "mrr", by="system")
    # The count and the problem are the same; the example rows may come in another order.
    polars_message, _, polars_rows = str(polars_error.value).partition("; e.g. ")
    spark_message, _, spark_rows = str(spark_error.value).partition("; e.g. ")
    assert spark_message == polars_message
    if "rows share" in polars_message:  # duplicate pairs, each with its rows sorted
        assert str(spark_error.value) == str(polars_error.value)
        return
    assert rows(spark_rows) == rows(polars_rows)


def rows(text: str) -> list[str]:
    """The example rows of a message (a list of dicts) as sorted reprs."""
    return sorted(map(repr, eval(text or "[]", {"nan": float("nan")})))


def test_import_does_not_need_pyspark() -> None:
    """Without pyspark the module imports; evaluate says how to install it."""
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pyspark"] = None  # importing pyspark now fails
        import polars_rankeval.api.spark as spark
        try:
            spark.evaluate(None, "mrr")
        except ImportError as error:
            print(error)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "pip install 'polars-rankeval[spark]'" in out


def test_compare_on_spark_per_user_values_matches_memory(spark: SparkSession) -> None:
    # Same seed, same per-user values (in another row order) -> same comparison. The
    # systems are named in order: by default they come in the order of the rows.
    df = systems(12)
    metrics = ["ndcg@5", "mrr"]
    per_user = collect(prk_spark.evaluate(to_spark(spark, df), metrics, by="system", per_user=True))
    kw = {"baseline": "a", "systems": ["a", "b", "c"], "n_resamples": 400, "seed": 5}
    on_spark = prk.compare_per_user(
        per_user.sample(fraction=1.0, shuffle=True, seed=1), metrics, **kw
    )
    memory = prk.compare(df, metrics, **kw)
    assert on_spark["p_value"].to_list() == memory["p_value"].to_list()
    assert_frame_equal(on_spark.drop("conventions"), memory.drop("conventions"), **TOL)


def test_cutoff_ranges_one_pass_on_spark(spark: SparkSession) -> None:
    # The curve kernels (ndcg@1..5 in one pass) run inside Spark's Polars calls too.
    df = systems(10)
    metrics = ["ndcg@1..5", "recall@[1,3]", "auc@1..2"]
    got, expected = both(spark, df, metrics, by="system", per_user=True)
    assert got.columns[-9:] == [f"ndcg@{k}" for k in range(1, 6)] + [
        "recall@1",
        "recall@3",
        "auc@1",
        "auc@2",
    ]
    assert_frame_equal(got, expected, **TOL)
    singles = [f"ndcg@{k}" for k in range(1, 6)] + ["recall@1", "recall@3", "auc@1", "auc@2"]
    assert_frame_equal(expected, prk.evaluate(df, singles, by="system", per_user=True), **TOL)


def test_evaluate_engine_argument_runs_spark(spark: SparkSession) -> None:
    """prk.evaluate on a Spark DataFrame is the Spark engine (auto, by name or object)."""
    df = systems(13)
    sdf = to_spark(spark, df)
    expected = prk.evaluate(df, ["ndcg@3", "global_auc"], by="system")
    for engine in ("auto", "spark", prk_spark.SparkEngine(n_partitions=3)):
        got = collect(prk.evaluate(sdf, ["ndcg@3", "global_auc"], by="system", engine=engine))
        assert_frame_equal(got, expected, **TOL)
    with pytest.raises(TypeError, match=r"data must be a pyspark DataFrame, got polars\.DataFrame"):
        prk.evaluate(df, "mrr", engine="spark")


def test_shared_statistics_checks_run_on_spark(spark: SparkSession) -> None:
    """The gain=exp bound of the statistics pass (once missing on Spark) is the shared one."""
    df = BASE.with_columns(relevance=pl.Series([600, 0, 1, 0]))
    with pytest.raises(ValueError, match="gain=exp") as polars_error:
        prk.evaluate(df, "ndcg(gain=exp)@3", by="system")
    with pytest.raises(ValueError, match="gain=exp") as spark_error:
        prk_spark.evaluate(to_spark(spark, df), "ndcg(gain=exp)@3", by="system")
    assert str(spark_error.value) == str(polars_error.value)


def test_explicit_users_without_validation(spark: SparkSession) -> None:
    """validate=False: only the listed users' rows go to the Polars calls; same values."""
    df = systems(32)
    kwargs: dict[str, Any] = {"by": "system", "users": [1, 3, 500], "validate": False}
    metrics = ["ndcg@3", "map", "global_auc", "coverage@3"]
    got, expected = both(spark, df, metrics, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, ["ndcg@3", "map"], per_user=True, **kwargs)
    assert got.height == 9
    assert_frame_equal(got, expected, **TOL)


def test_conventions_preset_on_spark(spark: SparkSession) -> None:
    """``conventions=`` runs on Spark: same values and names as Polars, absolute ranks."""
    df = systems(30)
    metrics = ["MAP@5", "NDCG@5", "Recall@3"]
    for summary in ("wide", "long"):
        got, expected = both(
            spark, df, metrics, conventions="rectools", summary=summary, by="system"
        )
        sort = ["system", "metric"] if summary == "long" else None
        got, expected = (f.sort(sort) if sort else f for f in (got, expected))
        assert "MAP@5[rectools]" in (
            expected["metric"].to_list() if summary == "long" else expected.columns
        )
        assert_frame_equal(got, expected, **TOL)
    gaps = pl.DataFrame(
        {"user": [1, 1, 2], "item": [1, 2, 1], "rank": [3, 1, 9], "relevance": [1, 0, 1]}
    )  # RecTools keeps the gaps: user 1's relevant item is at position 3, user 2's at 9
    got = prk_spark.evaluate(
        to_spark(spark, gaps), ["MAP@3", "MRR@10"], rank="rank", conventions="rectools"
    ).toPandas()
    assert got["MAP@3[rectools]"].item() == pytest.approx((1 / 3 + 0) / 2)
    assert got["MRR@10[rectools]"].item() == pytest.approx((1 / 3 + 1 / 9) / 2)
    repeated = gaps.with_columns(rank=pl.lit(2))
    with pytest.raises(ValueError, match="repeats a rank within a user 1 time"):
        prk_spark.evaluate(
            to_spark(spark, repeated), ["map@3"], rank="rank", rank_positions="absolute"
        )
    # Metrics reading top-k membership only accept it (RecTools' CatalogCoverage test).
    kwargs: dict[str, Any] = {"rank": "rank", "rank_positions": "absolute"}
    metrics = ["recall@2", "num_ret@2"]
    got = collect(prk_spark.evaluate(to_spark(spark, repeated), metrics, **kwargs))
    assert_frame_equal(got, prk.evaluate(repeated, metrics, **kwargs), **TOL)


def test_history_metrics_serendipity_calibration_popularity_bias(spark: SparkSession) -> None:
    """The metrics reading history= (a Spark DataFrame, collected) and items= match Polars."""
    df = systems(120)
    items = pl.DataFrame({"item": list(range(50))}).with_columns(
        features=pl.concat_list(
            (pl.col("item") % 3).cast(pl.Float64), (pl.col("item") % 5).cast(pl.Float64) + 1
        ),
        categories=pl.concat_list(pl.format("g{}", pl.col("item") % 3), pl.lit("h")),
        long_tail=pl.col("item") % 3 == 0,
        provider=pl.format("p{}", pl.col("item") % 4),
        base_rank=pl.col("item") % 5 + 1,
    )
    history = df.select("user", "item").unique().filter(pl.col("item") % 3 != 1)
    user_metrics = [
        "serendipity@3",
        "serendipity(mode=history)@3",
        "serendipity(mode=history,similarity=features)@3",
        "unexpectedness@3",
        "unexpectedness(mode=history)@3",
        "miscalibration@3",
        "aplt@3",
        "aclt@3",
        "novelty(source=history_users,unknown=one,normalize=true,denominator=k)@3",
        "popularity_bias(source=history_interactions)@3",
        "intra_list_diversity(distance=cooccurrence)@3",
        "categorical_diversity(category=provider)@3",
    ]
    global_metrics = [
        "novelty(source=history_interactions,unknown=zero,aggregate=pooled)@3",
        "reo@3",
        "rsp@3",
        "group_exposure(group=provider,level=p1)@3",
        "exposure_ratio(group=provider,numerator=p1,denominator=p2,per_item=true)@3",
    ]
    kwargs: dict[str, Any] = {
        "by": "system",
        "items": items,
        "users": "recs",
        "ties": "item_desc",
        "n_items": 50,
    }
    metrics = [*user_metrics, *global_metrics]
    expected = prk.evaluate(df, metrics, history=history, **kwargs)
    spark_history = to_spark(spark, history)
    got = collect(prk_spark.evaluate(to_spark(spark, df), metrics, history=spark_history, **kwargs))
    assert expected.select(pl.exclude("system")).null_count().sum_horizontal().item() == 0
    assert_frame_equal(got, expected, **TOL)
    got, expected = both(spark, df, user_metrics, per_user=True, history=history, **kwargs)
    assert_frame_equal(got, expected, **TOL)
    # items without history: novelty(unknown=error) fails at the call on both engines
    cold = r"metric 'novelty': \d+ item\(s\) in the top k of \d+ user\(s\) have no interaction"
    with pytest.raises(ValueError, match=cold):
        prk.evaluate(df, ["novelty(source=history_users)@3"], history=history, **kwargs)
    with pytest.raises(ValueError, match=cold):
        prk_spark.evaluate(
            to_spark(spark, df),
            ["novelty(source=history_users)@3"],
            history=spark_history,
            **kwargs,
        )


def test_aggregate_options(spark: SparkSession) -> None:
    """Metrics aggregated by their own aggregate= option (global plans) equal Polars."""
    df = systems(30)
    metrics = [
        "ndcg@3",
        "num_ret(aggregate=sum)",
        "num_rel_ret(aggregate=sum)@3",
        "auc(aggregate=relevant_weighted)",
        "auc(aggregate=pooled)",
        "kendall_tau(aggregate=sum)",
        "map(aggregate=gmean)",
    ]
    for empty in ("skip", "zero"):
        got, expected = both(spark, df, metrics, by="system", empty=empty, summary="long")
        assert_frame_equal(got, expected, **TOL)


def test_sampled_corrections_match_polars(spark: SparkSession) -> None:
    # ndcg(estimator=bv)@10 and friends run in the per-user build on Spark too: the
    # correction tables are built inside each Polars call (one per bucket of users).
    truth = pl.DataFrame({"user": list(range(40)), "item": [u % 7 for u in range(40)]})
    cands = prk.sample_negatives(truth, n_negatives=6, catalog=range(60), seed=2)
    df = pl.concat(
        [
            cands.with_columns(system=pl.lit(s), score=((pl.col("item") * w) % 5).cast(pl.Float64))
            for s, w in (("a", 3), ("b", 7))
        ]
    )
    metrics = ["ndcg(estimator=bv)@3", "hit_rate(estimator=rank)@2", "mrr(estimator=sampled)"]
    got, expected = both(spark, df, metrics, by="system", per_user=True, n_items=60)
    assert got.height == expected.height == 80
    assert_frame_equal(got, expected, **TOL)  # the summary is the shared code's
    with pytest.raises(ValueError, match=r"needs the catalog size: pass n_items="):
        prk_spark.evaluate(to_spark(spark, df), metrics, by="system")
    no_negative = df.filter(~((pl.col("user") == 3) & (pl.col("relevance") == 0)))
    with pytest.raises(ValueError, match=r"2 user\(s\) with a positive .* no negative candidate"):
        prk_spark.evaluate(to_spark(spark, no_negative), metrics[:1], by="system", n_items=60)


def test_insufficient_raise_on_spark(spark: SparkSession) -> None:
    # partial_auc(insufficient=raise): user 2 has one negative (item 2 at rank 1) and its
    # relevant item 1 not recommended, so k=3 is insufficient; users 1 and 3 are fine.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 1, 2, 2, 3, 3, 3, 3],
            "item": [1, 2, 3, 4, 1, 2, 1, 2, 3, 4],
            "score": [4.0, 3.0, 2.0, 1.0, None, 1.0, 1.0, 2.0, 3.0, 4.0],
            "relevance": [1, 0, 0, 0, 1, 0, 1, 0, 0, 0],
        }
    )
    metric = "partial_auc(insufficient=raise)@3"
    sdf = to_spark(spark, df)
    with pytest.raises(ValueError, match=r"1 user\(s\) with fewer than k .*first \[\(2,\)\]"):
        prk.evaluate(sdf, [metric], engine="spark")
    kept = to_spark(spark, df.filter(pl.col("user") != 2))
    got = collect(prk.evaluate(kept, [metric], engine="spark"))
    # user 1: 3 negatives below its relevant item, 3 / 3; user 3: none below, 0
    assert got[metric].item() == pytest.approx((3 / 3 + 0) / 2)
    assert got[f"n_users({metric})"].item() == 2
    per = collect(prk.evaluate(kept, [metric], engine="spark", per_user=True), ["user"])
    assert per[metric].to_list() == [1.0, 0.0]


# --------------------------------------------------- compare and the analysis functions
def test_compare_takes_a_spark_dataframe(spark: SparkSession) -> None:
    """Issue 24 item 15: compare evaluates per user on Spark, then tests in Polars."""
    df = systems(14)
    sdf = to_spark(spark, df)
    metrics = ["ndcg@5", "mrr"]
    kw: dict[str, Any] = {"baseline": "a", "n_resamples": 300, "seed": 2}
    expected = prk.compare(df, metrics, **kw)
    assert_frame_equal(prk.compare(sdf, metrics, **kw), expected, **TOL)
    engine = prk_spark.SparkEngine(n_partitions=3)
    assert_frame_equal(prk.compare(sdf, metrics, engine=engine, **kw), expected, **TOL)
    # A per-user frame on Spark is collected (one row per system and user: small).
    per_user = prk_spark.evaluate(sdf, metrics, by="system", per_user=True)
    got = prk.compare_per_user(per_user, metrics, **kw)
    assert_frame_equal(got.drop("conventions"), expected.drop("conventions"), **TOL)


def test_curve_takes_a_spark_dataframe(spark: SparkSession) -> None:
    df = systems(15)
    expected = prk.curve(df, "ndcg", ks=3, by="system")
    sdf = to_spark(spark, df)
    assert_frame_equal(prk.curve(sdf, "ndcg", ks=3, by="system"), expected, **TOL)
    pr = prk.pr_curve(df, by="system", levels=[0.0, 0.5, 1.0])
    assert_frame_equal(prk.pr_curve(sdf, by="system", levels=[0.0, 0.5, 1.0]), pr, **TOL)


def test_functions_without_spark_say_so_plainly(spark: SparkSession) -> None:
    """A Spark DataFrame where only Polars is taken: the message names both kinds."""
    sdf = to_spark(spark, BASE)
    plain = r"got pyspark\.sql\.DataFrame \(a Spark DataFrame: evaluate, compare"
    frame = r"must be a polars DataFrame or LazyFrame, "
    with pytest.raises(TypeError, match=r"^argument 'run_a' of rank_similarity " + frame + plain):
        prk.rank_similarity(sdf, BASE)
    with pytest.raises(
        TypeError,
        match=r"^argument 'data' of inter_list_diversity_sampled must be a polars DataFrame .*"
        + plain,
    ):
        prk.inter_list_diversity_sampled(sdf, 2)
    with pytest.raises(
        TypeError, match=r"'a' of rank_correlation must be a polars DataFrame, " + plain
    ):
        prk.rank_correlation(sdf)
    with pytest.raises(TypeError, match=r"convert it with polars\.from_arrow\(df\.toArrow\(\)\)"):
        prk.evaluate(sdf, "mrr", engine="memory")
    with pytest.raises(TypeError, match=r"^data must be a pyspark DataFrame, got polars\.Data"):
        prk.evaluate(BASE, "mrr", engine="spark")


@pytest.mark.parametrize("summary", ["wide", "long"])
def test_intervals_of_the_means_match_polars(spark: SparkSession, summary: str) -> None:
    """evaluate(ci=...) on Spark: the summary's Polars call per by group gives them too."""
    df = systems(16)
    for ci in ("t", "bootstrap"):
        kw: dict[str, Any] = {"by": "system", "ci": ci, "confidence": 0.9, "summary": summary}
        got, expected = both(spark, df, ["ndcg@3", "mrr", "global_auc"], **kw)
        assert "se(mrr)" in expected.columns or "se" in expected["aggregation"].to_list()
        assert_frame_equal(got, expected, **TOL)

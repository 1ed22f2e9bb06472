# ruff: noqa: E501  (one case a line: the table reads better unwrapped)
"""Every public argument of a wrong type gets a precise error naming it.

One table of (call, expected exception, message regex): ``evaluate``, ``join``,
``overlap`` and the ``rankeval`` namespaces. Before, many of these failed with Python's
internals ("'int' object is not iterable", "LazyFrame is not subscriptable").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk

DF = pl.DataFrame(
    {
        "system": ["a"] * 4,
        "user": [1, 1, 2, 2],
        "item": [1, 2, 1, 2],
        "score": [0.9, 0.1, 0.2, 0.8],
        "relevance": [1, 0, 1, 0],
    }
)
RECS = DF.select("system", "user", "item", "score")
TRUTH = DF.select("user", "item", "relevance")
Action = Callable[[], object]


def ev(metrics: Any = "ndcg@1", **kwargs: Any) -> Action:
    return lambda: prk.evaluate(DF, metrics, **kwargs)


def jn(**kwargs: Any) -> Action:
    return lambda: prk.join(RECS, TRUTH, **kwargs)


def got(name: str) -> str:
    """The end of the message: the type of the value received."""
    return rf"got {name}\b"


CASES = [
    # ------------------------------------------------------------ evaluate: metrics
    pytest.param(ev(None), TypeError, r"^argument 'metrics' of evaluate must be a metric name \(str\), a Metric or a list of metric names, got None$", id="metrics-none"),
    pytest.param(ev(10), TypeError, r"^argument 'metrics' of evaluate must be .*got int 10$", id="metrics-int"),
    pytest.param(ev({"ndcg": 1}), TypeError, r"^argument 'metrics' of evaluate must be .*got dict", id="metrics-dict"),
    pytest.param(ev(["ndcg@1", 3]), TypeError, r"^argument 'metrics' of evaluate must be .*, got an entry int 3$", id="metrics-entry"),
    pytest.param(ev([]), ValueError, r"metrics must name at least one", id="metrics-empty"),
    # ------------------------------------------------------------ column names
    pytest.param(ev(user=1), TypeError, r"^argument 'user' of evaluate must be a column name \(str\), got int 1$", id="user-int"),
    pytest.param(ev(item=None), TypeError, r"^argument 'item' of evaluate must be a column name \(str\), got None$", id="item-none"),
    pytest.param(ev(score=3), TypeError, r"^argument 'score' of evaluate must be a column name \(str\) or None, got int", id="score-int"),
    pytest.param(ev(relevance=None), TypeError, r"^argument 'relevance' of evaluate must be a column name \(str\), got None$", id="relevance-none"),
    pytest.param(ev(rank=2), TypeError, r"^argument 'rank' of evaluate must be a column name \(str\) or None, got int", id="rank-int"),
    pytest.param(ev(user=""), ValueError, r"^argument 'user' of evaluate must be a column name \(str\), got an empty string", id="user-empty"),
    # ------------------------------------------------------------ choices
    pytest.param(ev(ties=["expected"]), TypeError, r"^argument 'ties' of evaluate must be one of \['expected', 'item_asc', 'item_desc', 'optimistic', 'pessimistic'\] or a Ties policy, got list", id="ties-list"),
    pytest.param(ev(ties=None), TypeError, r"^argument 'ties' of evaluate must be one of .*got None$", id="ties-none"),
    pytest.param(ev(ties="random"), ValueError, r"^argument 'ties' of evaluate must be one of .*got 'random'", id="ties-unknown"),
    pytest.param(ev(empty=0), TypeError, r"^argument 'empty' of evaluate must be one of \['error', 'skip', 'skip_row', 'zero'\], got int", id="empty-int"),
    pytest.param(ev(engine=1), TypeError, r"^argument 'engine' of evaluate must be one of \['auto', 'buckets', 'memory', 'partition', 'spark'\] or an engine object .*got int 1$", id="engine-int"),
    pytest.param(ev(engine="disk"), ValueError, r"^argument 'engine' of evaluate must be one of \['auto', 'buckets', 'memory', 'partition', 'spark'\] .*got 'disk'$", id="engine-unknown"),
    pytest.param(ev(engine="streaming"), ValueError, r"^argument 'engine' of evaluate must be .*got 'streaming', one of Polars' engines.*collect\(engine='streaming'\)", id="engine-polars-name"),
    # ------------------------------------------------------------ by
    pytest.param(ev(by=5), TypeError, r"^argument 'by' of evaluate must be a column name \(str\), a list of column names or None, got int 5$", id="by-int"),
    pytest.param(ev(by=[5]), TypeError, r"^argument 'by' of evaluate must be .*got an entry int 5$", id="by-list-int"),
    pytest.param(ev(by={"system": 1}), TypeError, r"^argument 'by' of evaluate must be .*got dict", id="by-dict"),
    # ------------------------------------------------------------ flags
    pytest.param(ev(per_user="yes"), TypeError, r"^argument 'per_user' of evaluate must be True or False, got str 'yes'$", id="per-user-str"),
    pytest.param(ev(per_item=2), TypeError, r"^argument 'per_item' of evaluate must be True or False, got int 2$", id="per-item-int"),
    pytest.param(ev(validate="no"), TypeError, r"^argument 'validate' of evaluate must be True or False, got str", id="validate-str"),
    pytest.param(lambda: prk.Buckets(progress="yes"), TypeError, r"^progress must be True, False or None, got str", id="progress-str"),
    # ------------------------------------------------------------ users
    pytest.param(ev(users=DF.lazy().select("user")), TypeError, r"^argument 'users' of evaluate must be .*got polars\.LazyFrame; collect it first", id="users-lazy"),
    pytest.param(ev(users=3), TypeError, r"^argument 'users' of evaluate must be .*got int 3$", id="users-int"),
    pytest.param(ev(users={1: 2}), TypeError, r"^argument 'users' of evaluate must be .*got dict", id="users-dict"),
    pytest.param(ev(users=None), TypeError, r"^argument 'users' of evaluate must be .*got None$", id="users-none"),
    pytest.param(ev(users="everyone"), ValueError, r"^argument 'users' of evaluate must be one of .*got 'everyone'", id="users-unknown"),
    # ------------------------------------------------------------ aggregate
    pytest.param(ev(aggregate=5), TypeError, r"^argument 'aggregate' of evaluate must be one of \['gmean', 'hmean', 'mean', 'median', 'qmean', 'std'\] or a list of aggregation names, got int 5$", id="aggregate-int"),
    pytest.param(ev(aggregate=None), TypeError, r"^argument 'aggregate' of evaluate must be one of .*got None$", id="aggregate-none"),
    pytest.param(ev(aggregate=["mean", 5]), TypeError, r"^argument 'aggregate' of evaluate must be .*got an entry int 5$", id="aggregate-entry"),
    # ------------------------------------------------------------ rating_range
    pytest.param(ev(rating_range=(1,)), ValueError, r"^argument 'rating_range' of evaluate must be a pair \(low, high\) of numbers or None, got 1 value\(s\): \(1,\)$", id="rating-range-one"),
    pytest.param(ev(rating_range=5), TypeError, r"^argument 'rating_range' of evaluate must be a pair \(low, high\) of numbers or None, got int 5$", id="rating-range-int"),
    pytest.param(ev(rating_range="ab"), TypeError, r"^argument 'rating_range' of evaluate must be a pair .*got str 'ab'$", id="rating-range-str"),
    pytest.param(ev(rating_range=("a", "b")), TypeError, r"^argument 'rating_range' of evaluate must be a pair \(low, high\) of numbers or None, got an entry str 'a'$", id="rating-range-strs"),
    pytest.param(ev(rating_range=(1, True)), TypeError, r"got an entry bool True$", id="rating-range-bool"),
    pytest.param(ev(rating_range=(2, 1)), ValueError, r"^rating_range must be \(low, high\) with low < high", id="rating-range-order"),
    # ------------------------------------------------------------ n_items, items
    pytest.param(ev(n_items="10"), TypeError, r"^argument 'n_items' of evaluate must be an integer >= 1, a polars DataFrame or LazyFrame.* or None, got str '10'$", id="n-items-str"),
    pytest.param(ev(n_items=0), ValueError, r"^argument 'n_items' of evaluate must be an integer >= 1, .*got 0$", id="n-items-zero"),
    pytest.param(ev(items=[1, 2]), TypeError, r"^argument 'items' of evaluate must be a polars DataFrame or LazyFrame.*, got list", id="items-list"),
    # ------------------------------------------------------------ out of core
    pytest.param(lambda: prk.Buckets(n_buckets="2"), TypeError, r"^n_buckets must be a positive integer or None, got str '2'$", id="n-buckets-str"),
    pytest.param(lambda: prk.Buckets(n_buckets=2.0), TypeError, r"^n_buckets must be .*got float 2\.0$", id="n-buckets-float"),
    pytest.param(lambda: prk.Partition(n_buckets=True), TypeError, r"^n_buckets must be .*got bool True$", id="n-buckets-bool"),
    pytest.param(lambda: prk.Buckets(n_buckets=0), ValueError, r"^n_buckets must be a positive integer, got 0", id="n-buckets-zero"),
    pytest.param(lambda: prk.Auto(memory_limit=1.5), TypeError, r"^memory_limit must be a number of bytes", id="memory-limit-float"),
    pytest.param(lambda: prk.Buckets(memory_limit="lots"), ValueError, r"^cannot read memory_limit 'lots'", id="memory-limit-text"),
    pytest.param(lambda: prk.Buckets(temp_dir=5, n_buckets=2), TypeError, r"^temp_dir must be a path \(str or os\.PathLike\) or None, got int 5$", id="temp-dir-int"),
    # ------------------------------------------------------------ data
    pytest.param(lambda: prk.evaluate(DF.rows(), "mrr"), TypeError, r"^argument 'data' of evaluate must be a polars DataFrame", id="data-list"),
    # ------------------------------------------------------------ join
    pytest.param(jn(by=5), TypeError, r"^argument 'by' of join must be a column name \(str\), a list of column names or None, got int 5$", id="join-by-int"),
    pytest.param(jn(user=1), TypeError, r"^argument 'user' of join must be a column name \(str\), got int 1$", id="join-user-int"),
    pytest.param(jn(relevance=5), TypeError, r"^argument 'relevance' of join must be a column name \(str\) or None, got int 5$", id="join-relevance-int"),
    pytest.param(jn(score=1), TypeError, r"^argument 'score' of join must be a column name \(str\) or None, got int", id="join-score-int"),
    pytest.param(jn(check_overlap="yes"), TypeError, r"^argument 'check_overlap' of join must be True, False or None, got str", id="join-check-overlap-str"),
    pytest.param(lambda: prk.join(RECS, None), TypeError, r"^argument 'truth' of join must be a polars DataFrame", id="join-truth-none"),
    # ------------------------------------------------------------ overlap
    pytest.param(lambda: prk.overlap(RECS, TRUTH, by=3), TypeError, r"^argument 'by' of overlap must be .*got int 3$", id="overlap-by-int"),
    pytest.param(lambda: prk.overlap(RECS, TRUTH, item=None), TypeError, r"^argument 'item' of overlap must be a column name \(str\), got None$", id="overlap-item-none"),
    pytest.param(lambda: prk.overlap(RECS, TRUTH, user="uid"), ValueError, r"^column 'uid' not found in recs", id="overlap-missing"),
    # ------------------------------------------------------------ namespaces
    pytest.param(lambda: DF.rankeval.evaluate(None), TypeError, r"^argument 'metrics' of evaluate must be a metric name", id="ns-metrics-none"),
    pytest.param(lambda: DF.lazy().rankeval.per_user(["mrr"], by=5), TypeError, r"^argument 'by' of evaluate must be .*got int 5$", id="ns-lazy-by-int"),
    pytest.param(lambda: DF.rankeval.per_item(["item_exposure@1"], users=DF.lazy()), TypeError, r"^argument 'users' of evaluate must be .*LazyFrame", id="ns-per-item-users-lazy"),
]  # fmt: skip


@pytest.mark.parametrize(("action", "error", "pattern"), CASES)
def test_bad_argument(action: Action, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        action()


def test_good_arguments_of_every_accepted_type_still_work(tmp_path: Path) -> None:
    """The checks refuse only what is wrong: each accepted form of an argument runs."""
    base = prk.evaluate(DF, ["mrr"])
    for kwargs in (
        {"users": [1, 2]},
        {"users": (1, 2)},
        {"users": range(1, 3)},
        {"users": pl.Series([1, 2])},
        {"users": DF.select("user")},
        {"by": ["system"]},
        {"by": ("system",)},
        {"aggregate": ("mean",)},
        {"rating_range": [0, 1]},
        {"engine": prk.Buckets(progress=None, n_buckets=1)},
        {"engine": prk.Buckets(temp_dir=tmp_path, n_buckets=2, progress=False)},
        {"engine": prk.Partition(temp_dir=str(tmp_path), n_buckets=2, progress=False)},
        {"engine": prk.Auto(memory_limit="1GB", temp_dir=tmp_path, progress=False)},
    ):
        got = prk.evaluate(DF, ("mrr",), **kwargs)
        assert got["mrr"].item(-1) == pytest.approx(base["mrr"].item()), kwargs
    assert prk.evaluate(DF, prk.parse_metric("mrr"))["mrr"].item() == base["mrr"].item()

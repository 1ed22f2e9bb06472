"""How ``evaluate`` runs: the ``engine=`` argument, and the one decision of the path.

``evaluate(data, metrics, engine=...)`` takes the evaluation's own parameters apart
from how it runs, as Polars' ``LazyFrame.collect(engine=...)`` does. ``engine`` is a
name or an object:

``"auto"`` / :class:`Auto`
    In memory when the estimated working memory fits a budget, else bucketed.
``"memory"`` / :class:`Memory`
    One lazy Polars plan over all the rows.
``"buckets"`` / :class:`Buckets`
    The users hashed into buckets, one pass over the input per bucket.
``"partition"`` / :class:`Partition`
    The input written once to temporary Parquet files partitioned by bucket, then one
    bucket at a time.
``"spark"`` / :class:`Spark`
    The plan run inside Apache Spark (``data`` is a Spark DataFrame).

Polars' own engines (``"streaming"``, ``"in-memory"``, ``"gpu"``) are not names here:
they choose how a Polars query is collected, and ``evaluate`` of a LazyFrame returns a
LazyFrame -- pass them to its ``collect(engine=...)``.

:func:`decide` is the one place that chooses the path of a request (memory, buckets,
partition or Spark; the sorted head or the general per-user plan): every engine
follows the :class:`Path` it returns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

import polars as pl

import polars_rankeval.plan.args as _args
import polars_rankeval.plan.head as _head
from polars_rankeval._utils.constraints import Constraint, Rejection, got
from polars_rankeval.engines.buckets import (
    MAX_BUCKETS,
    choose,
    default_memory_limit,
    estimate_rows,
    parse_memory,
)
from polars_rankeval.plan.job import Job

EngineName = Literal["auto", "buckets", "memory", "partition", "spark"]
ENGINE_NAMES: tuple[str, ...] = get_args(EngineName)
POLARS_ENGINES = ("gpu", "in-memory", "streaming")
"""Polars' own engine names: refused by ``evaluate(engine=)`` with a pointer to ``collect``."""
Where = Literal["memory", "buckets", "partition", "spark"]


def _budget(memory_limit: int | str | None) -> int | None:
    return None if memory_limit is None else parse_memory(memory_limit)


def _buckets(n_buckets: Any) -> int | None:
    k = _args.count("n_buckets", n_buckets)
    if k is not None and k < 1:
        msg = f"n_buckets must be a positive integer, got {n_buckets!r}"
        raise ValueError(msg)
    if k is not None and k > MAX_BUCKETS:
        msg = (
            f"n_buckets must be at most {MAX_BUCKETS:,} (one pass or one file per bucket), "
            f"got {k:,}"
        )
        raise ValueError(msg)
    return k


@dataclass(frozen=True)
class Memory:
    """All rows in one lazy Polars plan (``engine="memory"``).

    A LazyFrame stays lazy: ``evaluate`` returns the plan itself, and the value checks
    are part of it (they raise from ``collect``). How that plan is collected is the
    caller's choice (``.collect(engine="streaming")``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1],
    ...                    "score": [0.9, 0.1, 0.5], "relevance": [1, 0, 1]})
    >>> prk.evaluate(df, "mrr", engine=prk.Memory())
    shape: (1, 4)
    ┌─────┬──────────────┬─────────┬───────────┐
    │ mrr ┆ n_users(mrr) ┆ n_users ┆ n_skipped │
    │ --- ┆ ---          ┆ ---     ┆ ---       │
    │ f64 ┆ i64          ┆ i64     ┆ i64       │
    ╞═════╪══════════════╪═════════╪═══════════╡
    │ 1.0 ┆ 2            ┆ 2       ┆ 0         │
    └─────┴──────────────┴─────────┴───────────┘
    """

    name: ClassVar[str] = "memory"


@dataclass(frozen=True)
class Auto:
    """In memory if the estimated working memory fits a budget, else bucketed.

    The estimate is the row count times the bytes per row of the plan
    (:func:`polars_rankeval.engines.buckets.choose`); the row count of a LazyFrame is
    taken when the result is collected. Over budget it picks :class:`Buckets` for input
    in memory or up to 2 buckets, else :class:`Partition`. ``engine="auto"`` (the
    default) is ``Auto()``.

    Parameters
    ----------
    memory_limit
        The budget: bytes, or a string such as ``"4GB"`` or ``"512MiB"``. Default: half
        of the memory available when the evaluation starts.
    temp_dir
        Where a partitioned run keeps its temporary files (default: the system's).
    progress
        Report buckets done, rows, elapsed time and an estimate on stderr when the run
        is bucketed (``tqdm`` if installed). Default: only when stderr is a terminal.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1],
    ...                    "score": [0.9, 0.1, 0.5], "relevance": [1, 0, 1]})
    >>> prk.evaluate(df, "mrr", engine=prk.Auto(memory_limit="4GB"))["mrr"].item()
    1.0
    """

    memory_limit: int | str | None = None
    temp_dir: str | os.PathLike[str] | None = None
    progress: bool | None = None
    limit: int | None = field(init=False, repr=False, compare=False, default=None)
    name: ClassVar[str] = "auto"

    def __post_init__(self) -> None:
        _args.path("temp_dir", self.temp_dir)
        _args.flag("progress", self.progress, optional=True)
        object.__setattr__(self, "limit", _budget(self.memory_limit))


@dataclass(frozen=True)
class Buckets:
    """Users hashed into buckets, one pass over the input per bucket (out of core).

    Per-user values only depend on the user's own rows, so the same plan runs on one
    bucket of whole users at a time; the per-user values are concatenated and the
    global partials merged: exactly the in-memory result, whatever the number of
    buckets. No temporary copy of the input; best when the buckets are few or the
    input is in memory (else see :class:`Partition`).

    Parameters
    ----------
    n_buckets
        The number of buckets (capped by the number of users). Default: from
        ``memory_limit`` and the row count.
    memory_limit
        The budget a bucket's working memory must fit: bytes, or a string such as
        ``"4GB"``. Default: half of the memory available when the evaluation starts.
    temp_dir
        Where the per-bucket results are kept until the end (default: the system's
        temporary directory); removed at the end, also on error or Ctrl-C.
    progress
        Report buckets done, rows, elapsed time and an estimate on stderr (``tqdm`` if
        installed). Default: only when stderr is a terminal.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 2, 3], "item": [1, 2, 1, 1],
    ...                    "score": [0.9, 0.1, 0.5, 0.2], "relevance": [1, 0, 1, 0]})
    >>> prk.evaluate(df, ["mrr", "ndcg@2"], engine=prk.Buckets(n_buckets=2))
    shape: (1, 6)
    ┌─────┬────────┬──────────────┬─────────────────┬─────────┬───────────┐
    │ mrr ┆ ndcg@2 ┆ n_users(mrr) ┆ n_users(ndcg@2) ┆ n_users ┆ n_skipped │
    │ --- ┆ ---    ┆ ---          ┆ ---             ┆ ---     ┆ ---       │
    │ f64 ┆ f64    ┆ i64          ┆ i64             ┆ i64     ┆ i64       │
    ╞═════╪════════╪══════════════╪═════════════════╪═════════╪═══════════╡
    │ 1.0 ┆ 1.0    ┆ 2            ┆ 2               ┆ 3       ┆ 1         │
    └─────┴────────┴──────────────┴─────────────────┴─────────┴───────────┘
    """

    n_buckets: int | None = None
    memory_limit: int | str | None = None
    temp_dir: str | os.PathLike[str] | None = None
    progress: bool | None = None
    limit: int | None = field(init=False, repr=False, compare=False, default=None)
    name: ClassVar[str] = "buckets"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_buckets", _buckets(self.n_buckets))
        _args.path("temp_dir", self.temp_dir)
        _args.flag("progress", self.progress, optional=True)
        object.__setattr__(self, "limit", _budget(self.memory_limit))


@dataclass(frozen=True)
class Partition(Buckets):
    """Like :class:`Buckets`, but the input is written once, partitioned by bucket.

    One streaming pass writes the input to temporary Parquet files (one folder per
    bucket, in ``temp_dir``), then each bucket is read on its own: best for many
    buckets, where :class:`Buckets` would read the whole input once per bucket. Only
    the buckets that hold rows are evaluated. The parameters are those of
    :class:`Buckets`.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1, 1, 2, 3], "item": [1, 2, 1, 1],
    ...                    "score": [0.9, 0.1, 0.5, 0.2], "relevance": [1, 0, 1, 0]})
    >>> prk.evaluate(df, "mrr", engine=prk.Partition(n_buckets=3))["mrr"].item()
    1.0
    """

    name: ClassVar[str] = "partition"


@dataclass(frozen=True)
class Spark:
    """The plan run inside Apache Spark: ``data`` is a Spark DataFrame, and so is the result.

    Each bucket of users is one Polars call inside Spark (``applyInArrow``); see
    :mod:`polars_rankeval.api.spark`. ``engine="spark"`` is ``Spark()``, and
    ``engine="auto"`` picks it for a Spark DataFrame.

    Parameters
    ----------
    n_partitions
        Hash buckets of users: Polars calls and Spark tasks. Default: the session's
        ``spark.sql.shuffle.partitions`` (200 if that is not a number).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> prk.Spark(n_partitions=64)
    Spark(n_partitions=64)
    >>> prk.evaluate(spark_df, ["ndcg@10"], engine=prk.Spark(n_partitions=64))  # doctest: +SKIP
    """

    n_partitions: int | None = None
    name: ClassVar[str] = "spark"

    def __post_init__(self) -> None:
        n = _args.count("n_partitions", self.n_partitions)
        if n is not None and n < 1:
            msg = f"n_partitions must be a positive integer, got {self.n_partitions!r}"
            raise ValueError(msg)
        object.__setattr__(self, "n_partitions", n)

    def bind(self, data: Any) -> Any:
        """The Spark engine over ``data`` (imports pyspark)."""
        from polars_rankeval.engines.spark_engine import SparkEngine

        return SparkEngine(n_partitions=self.n_partitions).bind(data)


PolarsEngine = Auto | Memory | Buckets
"""The engines that run in this process (:class:`Partition` is a :class:`Buckets`)."""
EngineArg = EngineName | Auto | Memory | Buckets | Spark | Any
"""``evaluate(engine=)``: a name, one of the engine classes, or an object with ``bind(data)``."""
_BY_NAME: dict[str, Any] = {
    "auto": Auto,
    "memory": Memory,
    "buckets": Buckets,
    "partition": Partition,
    "spark": Spark,
}


class EngineChoice(Constraint):
    """What ``evaluate(engine=)`` accepts: a name, an engine object, or an object with ``bind``.

    A Polars engine name (``"streaming"``) is refused with a pointer to
    ``collect(engine=...)``, where it belongs.
    """

    text = (
        f"one of {sorted(ENGINE_NAMES)} or an engine object "
        "(prk.Auto, prk.Buckets, prk.Memory, prk.Partition, prk.Spark)"
    )

    def reject(self, value: Any) -> Rejection | None:
        """``None`` for an engine name or object, else why not."""
        if isinstance(value, str):
            if value in POLARS_ENGINES:
                return ValueError, (
                    f"{value!r}, one of Polars' engines, which choose how a query is "
                    "collected: evaluate returns a LazyFrame for a LazyFrame, collect it "
                    f"with collect(engine={value!r})"
                )
            return None if value in _BY_NAME else (ValueError, repr(value))
        if isinstance(value, Auto | Memory | Buckets | Spark):
            return None
        if callable(getattr(value, "bind", None)):
            return None  # a Spark engine of one's own
        return TypeError, got(value)

    def invalid(self) -> list[Any]:
        """Values refused, for the generated test."""
        return ["not_an_engine", "streaming", 42]


ENGINE = EngineChoice()
"""The constraint of ``engine=`` (declared by :func:`polars_rankeval.evaluate`)."""


def engine_of(engine: Any) -> Any:
    """The engine object of an accepted ``engine=`` argument (a name becomes its default)."""
    if isinstance(engine, str):
        return _BY_NAME[engine]()
    return engine


def spark_engine(engine: Any, data: Any) -> Any:
    """The Spark engine bound to ``data`` if ``engine`` (of :func:`engine_of`) runs on Spark.

    ``None`` for the Polars engines; :class:`Auto` runs a Spark DataFrame on Spark.
    """
    if isinstance(engine, Auto) and type(data).__module__.startswith("pyspark."):
        return Spark().bind(data)
    if isinstance(engine, Auto | Memory | Buckets):
        return None
    return engine.bind(data)


@dataclass(frozen=True)
class Path:
    """How one request runs, decided once by :func:`decide`.

    ``where``: ``"memory"`` (one plan), ``"buckets"``, ``"partition"`` or ``"spark"``;
    ``k``: the number of buckets of a bucketed run; ``head``: every metric is
    evaluated on the sorted head of each user's list
    (:func:`polars_rankeval.plan.head.applies`), else on the general per-user plan.
    """

    where: Where
    head: bool
    k: int = 1


def decide(job: Job, engine: Any, *, rows: pl.LazyFrame | None = None, eager: bool = False) -> Path:
    """The path of ``job`` on ``engine`` (from :func:`engine_of`) over ``rows``.

    ``rows``: the input as a LazyFrame (``None`` on Spark); ``eager``: it is a frame in
    memory. :class:`Auto` without a forced bucket count counts the rows (Parquet
    answers from its metadata; a join is computed): ``evaluate`` of a LazyFrame calls
    this when the result is collected, never at the call.
    """
    head = _head.applies(job)
    if not isinstance(engine, Auto | Memory | Buckets):
        return Path("spark", head)
    if isinstance(engine, Memory):
        return Path("memory", head)
    strategy = "auto" if isinstance(engine, Auto) else engine.name
    n_buckets = engine.n_buckets if isinstance(engine, Buckets) else None
    n_rows = None
    if n_buckets is None and rows is not None:
        n_rows = estimate_rows(rows)
    where, k = choose(
        strategy,  # type: ignore[arg-type]
        n_rows=n_rows,
        n_metrics=len(job.metrics),
        memory_limit=engine.limit or default_memory_limit(),
        n_buckets=n_buckets,
        in_memory_input=eager,
        head=head,
    )
    return Path(where, head, k)  # type: ignore[arg-type]

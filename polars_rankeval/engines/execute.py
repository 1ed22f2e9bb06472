"""Running a request on the Polars engines, at the call or when the result is collected.

:func:`execute` decides the path (:func:`polars_rankeval.engines.choice.decide`) and
runs the plan on it. :func:`lazy_result` is what ``evaluate`` returns for a LazyFrame:
the plan itself when nothing has to be read before it can be built (``engine="memory"``
and no data-wide statistic or side check), else a LazyFrame whose rows come from a
Polars IO source (``polars.io.plugins.register_io_source``) that runs :func:`execute`
when the result is collected. Either way nothing is read at the call: the row count of
``engine="auto"``, the statistics pass (``n_items``, the rating range, the ``gain=exp``
bound), the catalog and history checks, the check of absolute ranks and the bucketed
and partitioned runs all happen inside ``collect``/``sink_*``.

What stays at the call: the input's schema (``collect_schema``, metadata), the checks
of the arguments, and the output schema of the IO source, which is the schema of the
same plan built -- its statistics taken -- over an empty frame of the input's schema
(no row of the input is read; the statistics change values, never dtypes). Side inputs
given as frames (``users=``, ``items=``, ``history=``) are read where the plan needs
them, as before. On Spark, ``evaluate`` stays eager where
:mod:`polars_rankeval.api.spark` says (the statistics, the global metrics, the checks).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import polars as pl
from polars.io.plugins import register_io_source

import polars_rankeval.plan.positions as _positions
from polars_rankeval._utils.types import Strategy
from polars_rankeval.engines.buckets import BucketedEngine
from polars_rankeval.engines.choice import Auto, Buckets, Memory, decide
from polars_rankeval.engines.memory import MemoryEngine, run
from polars_rankeval.plan.interface import Scalar
from polars_rankeval.plan.job import Job, NItemsArg


def execute(
    job: Job,
    lf: pl.LazyFrame,
    engine: Auto | Memory | Buckets,
    *,
    eager: bool,
    n_items: NItemsArg,
    rating_range: tuple[float, float] | None,
    validate: bool,
) -> pl.DataFrame | pl.LazyFrame:
    """Decide the path of ``job`` over ``lf`` and run it.

    ``eager``: ``lf`` wraps a frame in memory; the result is then a DataFrame. Otherwise
    the memory path returns its lazy plan and a bucketed run its computed result as a
    LazyFrame.
    """
    if job.absolute:  # the ranks are the positions: they must define them
        _positions.check_ranks(lf, job.cols, job.by, [m.spec.name for m in job.metrics])
    path = decide(job, engine, rows=lf, eager=eager)
    options: dict[str, Any] = {
        "n_items": n_items,
        "rating_range": rating_range,
        "validate": validate,
    }
    if path.where == "memory":
        result = run(job, MemoryEngine(lf, eager=eager), head=path.head, **options)
        return result.collect() if eager else result
    budget = cast(Auto | Buckets, engine)  # decide() buckets the Auto and Buckets engines
    show = budget.progress if budget.progress is not None else sys.stderr.isatty()
    mode: Strategy = "partition" if path.where == "partition" else "buckets"
    bucketed = BucketedEngine(lf, k=path.k, mode=mode, temp_dir=budget.temp_dir, progress=show)
    frame = run(job, bucketed, head=path.head, **options)
    return frame if eager else frame.lazy()


def lazy_result(
    job: Job,
    lf: pl.LazyFrame,
    engine: Auto | Memory | Buckets,
    *,
    n_items: NItemsArg,
    rating_range: tuple[float, float] | None,
    validate: bool,
) -> pl.LazyFrame:
    """The result of ``evaluate`` for a LazyFrame, without reading it (see the module)."""
    options: dict[str, Any] = {
        "n_items": n_items,
        "rating_range": rating_range,
        "validate": validate,
    }
    schema, reads = _probe(job, lf, n_items)
    if isinstance(engine, Memory) and not reads and not job.absolute:
        return cast(pl.LazyFrame, execute(job, lf, engine, eager=False, **options))

    def source(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        # A copy per collect: the statistics are filled in from the data read then.
        result = execute(copy.copy(job), lf, engine, eager=False, **options)
        frame = result.collect() if isinstance(result, pl.LazyFrame) else result
        if with_columns is not None:
            frame = frame.select(with_columns)
        if predicate is not None:
            frame = frame.filter(predicate)
        if n_rows is not None:
            frame = frame.head(n_rows)
        yield frame

    return register_io_source(io_source=source, schema=schema)


class _Recorder(MemoryEngine):
    """The memory engine over an empty frame, recording whether the statistics read rows.

    The minimum and maximum of an empty column are null: the rating range read from
    the rows gets the placeholder (0, 1) (only values depend on it, never dtypes).
    """

    def __init__(self, lf: pl.LazyFrame) -> None:
        super().__init__(lf, eager=False)
        self.reads = False

    def scalars(self, wanted: Mapping[str, Scalar]) -> dict[str, Any]:
        self.reads = self.reads or bool(wanted)
        found = super().scalars(wanted)
        if "low" in found:
            found["low"], found["high"] = 0.0, 1.0
        return found

    def distinct(self, columns: Sequence[str], *, present: str | None = None) -> pl.LazyFrame:
        self.reads = True
        return super().distinct(columns, present=present)


def _probe(job: Job, lf: pl.LazyFrame, n_items: NItemsArg) -> tuple[pl.Schema, bool]:
    """The output schema of ``job`` over ``lf``, and whether its statistics read the rows.

    The plan is built over an empty frame with ``lf``'s schema (a catalog frame is
    replaced by a catalog of one item: its check reads the rows).
    """
    recorder = _Recorder(pl.LazyFrame(schema=lf.collect_schema()))
    placeholder = n_items if n_items is None or isinstance(n_items, int) else 1
    head = decide(job, Memory()).head
    plan = run(copy.copy(job), recorder, head=head, n_items=placeholder, validate=False)
    return plan.collect_schema(), recorder.reads or placeholder is not n_items

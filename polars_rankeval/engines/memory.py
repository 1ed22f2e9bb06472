"""The one sequence every engine goes through, and the in-memory Polars engine.

:func:`run`: the data-wide statistics (:meth:`Job.compute_statistics`, through the
engine's ``scalars``), the per-user build on whole users with the value checks
(``map_users``), then the result (``finish``). :class:`MemoryEngine` runs it as one
lazy Polars plan; :class:`polars_rankeval.engines.buckets.BucketedEngine` bucket by bucket;
:class:`polars_rankeval.api.spark.SparkEngine` inside Spark.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import polars as pl

from polars_rankeval.plan.build import build
from polars_rankeval.plan.finish import finish
from polars_rankeval.plan.interface import Scalar, Scan, UserOutputs
from polars_rankeval.plan.job import Job, NItemsArg, UsersArg
from polars_rankeval.plan.validate import check_values, checked_on_collect, guarded


class UserFn(Protocol):
    """The per-user build (:func:`polars_rankeval.plan.build.build` bound to a job).

    Rows of whole users, the share of an explicit user list whose rows they are
    (``None``: the job's ``users=``) and the by groups of the whole input that list is
    crossed with (``None``: those of the rows) to (per-user values, global partials).
    ``checks``: a list the build appends a one-row frame of value-check counts to when
    it can fold the checks into its own aggregation (see
    :func:`polars_rankeval.plan.build.build`). ``collect_first``: the rows are in memory;
    the sorted-head path may collect its first stage at once (see
    :func:`polars_rankeval.plan.head.per_user`).
    """

    def __call__(
        self,
        rows: pl.LazyFrame,
        users: UsersArg | None,
        groups: pl.LazyFrame | None,
        /,
        *,
        checks: list[pl.LazyFrame] | None = None,
        collect_first: bool = False,
    ) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame]]: ...


class Engine(Scan, Protocol):
    """The operations the plan needs from an engine (see :mod:`polars_rankeval.plan.interface`)."""

    def map_users(self, job: Job, fn: UserFn, *, validate: bool) -> UserOutputs:
        """Run ``fn`` on the rows of whole users; concatenate and merge its outputs.

        ``validate``: also run the value checks of
        :mod:`polars_rankeval.plan.validate` (null ids, NaN scores, duplicates, ...).
        """
        ...

    def finish(self, job: Job, outputs: UserOutputs) -> Any:
        """The result (per-user values or the summary) from :meth:`map_users`' outputs."""
        ...


def run(
    job: Job,
    engine: Engine,
    *,
    head: bool,
    n_items: NItemsArg = None,
    rating_range: tuple[float, float] | None = None,
    validate: bool = True,
) -> Any:
    """Evaluate ``job`` on ``engine``: statistics, per-user build, result.

    ``head``: the build takes the sorted-head path (``Path.head`` of
    :func:`polars_rankeval.engines.choice.decide`, the one decision).
    """
    job.compute_statistics(engine, n_items, rating_range)
    fn = functools.partial(build, job, head=head)
    outputs = engine.map_users(job, fn, validate=validate)
    return engine.finish(job, outputs)


class PolarsScan:
    """The operations of the Polars engines over a LazyFrame: schema, scalars, distinct."""

    def __init__(self, lf: pl.LazyFrame) -> None:
        self.lf = lf

    def schema(self) -> pl.Schema:
        return self.lf.collect_schema()

    def scalars(self, wanted: Mapping[str, Scalar]) -> dict[str, Any]:
        exprs = {name: scalar.polars() for name, scalar in wanted.items()}
        return self.lf.select(**exprs).collect(engine="streaming").row(0, named=True)

    def distinct(self, columns: Sequence[str], *, present: str | None = None) -> pl.LazyFrame:
        rows = self.lf if present is None else self.lf.filter(pl.col(present).is_not_null())
        return rows.select(columns).unique()

    def polars_rows(self) -> pl.LazyFrame | None:
        return self.lf


class MemoryEngine(PolarsScan):
    """One lazy Polars plan over all the rows (``engine="memory"``).

    A LazyFrame stays lazy: with ``validate=True`` the value checks become part of the
    returned plan (they raise from ``collect``, reading the source in the same query);
    for input that was in memory (``eager=True``) they run at the call.
    """

    def __init__(self, lf: pl.LazyFrame, *, eager: bool) -> None:
        super().__init__(lf)
        self.eager = eager
        self._source = lf
        self._deferred = False
        self._counts: pl.LazyFrame | None = None

    def map_users(self, job: Job, fn: UserFn, *, validate: bool) -> UserOutputs:
        if validate:
            return self._map_users_checked(job, fn)
        per_user, partials = fn(self.lf, None, None, collect_first=self.eager)
        return UserOutputs(per_user, {name: [p] for name, p in partials.items()})

    def _map_users_checked(self, job: Job, fn: UserFn) -> UserOutputs:
        """The build with the value checks, folded into its aggregation when it can.

        On the general path the build appends no counts: input in memory is checked
        at once (:func:`check_values`), a LazyFrame when the result is collected, in
        the same query as the evaluation (an explicit cache makes both read the source
        once). On the sorted-head path:

        The checks' counts come from the build's own ``group_by`` (and data-wide
        reductions of the rows), not from a second aggregation of the rows: they become
        the guard branch of the result's plan (:func:`guarded`), which raises the first
        problem at collect time with :func:`check_values`' exact message. Input in
        memory gets the same plan, collected by ``evaluate`` at once: the counts and
        the metrics must be one query. Collected apart (``pl.collect_all`` of the
        counts and the per-user values), each plan is optimised on its own, projection
        pushdown drops the duplicate count from the metrics' aggregation and the
        counts' plan runs an aggregation of its own -- a second ``group_by`` of every
        row (on 10M rows ~0.2 CPU s and ~80 MiB of peak memory).
        """
        checks: list[pl.LazyFrame] = []
        # A LazyFrame source is read once by the guard and the metrics (a frame in
        # memory needs no cache: each reader sees the same columns).
        self._source = self.lf if self.eager else self.lf.cache()
        per_user, partials = fn(self._source, None, None, checks=checks, collect_first=self.eager)
        if not checks:  # the general path: the checks are queries of their own
            if self.eager:
                check_values(self.lf, job.cols, job.by)
            self._deferred = not self.eager
            return UserOutputs(per_user, {name: [p] for name, p in partials.items()})
        self._counts = checks[0]
        self._deferred = False
        return UserOutputs(per_user, {name: [p] for name, p in partials.items()})

    def finish(self, job: Job, outputs: UserOutputs) -> pl.LazyFrame:
        result = finish(job, outputs.per_user, outputs.partials)
        if self._deferred:
            result = checked_on_collect(result, self._source, job.cols, job.by)
        elif self._counts is not None:
            result = guarded(result, self._counts, self._source, job.cols, job.by)
        return result

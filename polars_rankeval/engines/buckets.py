"""Out-of-core evaluation: users hashed into buckets, evaluated one bucket at a time.

Polars' streaming engine does not bound the memory of per-user work (ranks within a
user, windows and list aggregations buffer everything), but per-user values only
depend on the user's own rows. So the users are hashed into ``k`` buckets and the
same plan (:class:`polars_rankeval.plan.job.Job`) runs on one bucket at a time; per-user
values are concatenated and the global partials merged, which gives exactly the
in-memory result, whatever ``k`` is. :class:`BucketedEngine` is this engine's side of
the engine interface (:mod:`polars_rankeval.plan.interface`).

Two ways to read a bucket:

``"buckets"``
    ``k`` passes over the source, each with a filter on the user's hash pushed down
    into the scan. No temporary copy of the input; best when ``k`` is small or the
    input is already in memory.
``"partition"``
    One streaming pass writes the input once, partitioned by bucket, as Parquet in a
    temporary directory; then each bucket is read on its own. Best for large ``k``.

The hash (``Expr.hash``) is only used within one run, never stored across runs.

Temporary files are removed however the run ends (see :func:`temporary_directory`):
on success, on an error, on Ctrl-C (also pressed repeatedly) and on SIGTERM.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import polars as pl

from polars_rankeval._utils.progress import Progress
from polars_rankeval._utils.signals import deferred_signals, sigterm_exits
from polars_rankeval._utils.types import STRATEGIES, Strategy, check_choice, integer
from polars_rankeval.engines.memory import PolarsScan, UserFn
from polars_rankeval.plan.build import wanted_users
from polars_rankeval.plan.finish import finish
from polars_rankeval.plan.interface import Scalar, UserOutputs
from polars_rankeval.plan.job import Job, UsersArg
from polars_rankeval.plan.validate import raise_on_counts, raise_on_problems, value_checks

_BUCKET = "__prk_bucket"
_SEED = 0x5EED_2026
# Working memory of the in-memory plan per input row: measured peak RSS increase of
# evaluate on 10M rows (benchmarks/bench_scale.py) is ~120 bytes/row for the core
# suite; the estimate adds a margin and a share per metric.
BYTES_PER_ROW = 200
BYTES_PER_METRIC_ROW = 16
BYTES_PER_ROW_HEAD = 180
"""The same for a job on the sorted-head path (:func:`polars_rankeval.plan.head.applies`),
whatever the number of metrics: its per-row work is one sort inside the user
aggregation. Measured peak RSS of an in-memory evaluate on 10M rows: 60 bytes/row
with 100 rows per user, 178 with at most 10 (every row then lies in a head, and
the per-user columns dominate); 5 or 20 metrics: within 1%."""
_SINK: dict[str, Any] = {"compression": "lz4", "statistics": False}
"""How the partitioning pass writes the buckets: read back once each, whole, so no
statistics, and lz4 (about 1.5x the size of zstd, 12% less CPU time for the whole
evaluation at 100M rows: benchmarks/RESULTS_SCALE.md)."""
MAX_BUCKETS = 100_000
"""More buckets than this is never useful (each is at least one pass or one file)."""
MemoryArg = int | str | None
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def parse_memory(value: int | str) -> int:
    """Bytes from an int or a string such as ``"4GB"``, ``"512 MiB"`` or ``"2.5gb"``."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", value)
        unit = match[2].lower() if match else ""
        if match is None or unit not in _UNITS:
            msg = f"cannot read memory_limit {value!r}; use bytes or e.g. '4GB', '512MiB'"
            raise ValueError(msg)
        out = int(float(match[1]) * _UNITS[unit])
    else:
        what = "a number of bytes (an integer) or a string such as '4GB'"
        out = integer("memory_limit", value, what=what)
    if out <= 0:
        msg = f"memory_limit must be positive, got {value!r}"
        raise ValueError(msg)
    return out


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``; else total physical memory)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - exotic platforms
        return 8 * 2**30


def default_memory_limit() -> int:
    """Half of the memory available when the evaluation starts."""
    return available_memory() // 2


def estimate_rows(lf: pl.LazyFrame) -> int:
    """Number of input rows (Parquet answers from its metadata; CSV is scanned once)."""
    return int(lf.select(pl.len()).collect(engine="streaming").item())


def choose(
    strategy: Strategy,
    *,
    n_rows: int | None,
    n_metrics: int,
    memory_limit: int,
    n_buckets: int | None,
    in_memory_input: bool,
    head: bool = False,
) -> tuple[Strategy, int]:
    """Pick the strategy and the number of buckets ``k`` for a memory budget.

    ``head``: the job runs on the sorted-head path (:data:`BYTES_PER_ROW_HEAD`).
    """
    check_choice("strategy", strategy, STRATEGIES)
    if n_buckets is not None and (
        isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or n_buckets < 1
    ):
        msg = f"n_buckets must be a positive integer, got {n_buckets!r}"
        raise ValueError(msg)
    if n_buckets is not None and n_buckets > MAX_BUCKETS:
        msg = (
            f"n_buckets must be at most {MAX_BUCKETS:,} (one pass or one file per bucket), "
            f"got {n_buckets:,}"
        )
        raise ValueError(msg)
    if strategy == "memory":
        return "memory", 1
    if n_buckets is None:
        per_row = BYTES_PER_ROW_HEAD if head else BYTES_PER_ROW + BYTES_PER_METRIC_ROW * n_metrics
        need = (n_rows or 0) * per_row
        # At most one bucket per row (a bucket holds whole users: at least one row).
        n_buckets = max(1, min(math.ceil(need / memory_limit), n_rows or 1))
        if n_buckets > MAX_BUCKETS:
            msg = (
                f"memory_limit={memory_limit:,} bytes would need {n_buckets:,} buckets for "
                f"{n_rows:,} rows (at most {MAX_BUCKETS:,}); raise memory_limit"
            )
            raise ValueError(msg)
    if strategy == "auto":
        if n_buckets == 1:
            return "memory", 1
        strategy = "buckets" if in_memory_input or n_buckets <= 2 else "partition"
    return strategy, n_buckets


class BucketProgress(Progress):
    """Buckets done, rows, elapsed time and an estimate, on stderr (see :class:`Progress`).

    On a terminal: a ``tqdm`` bar when it is installed, otherwise one line rewritten
    in place. Elsewhere (a log file, a pipe, a CI log) one plain line per bucket.
    """

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None) -> None:
        super().__init__(total, enabled, stream, line=_bucket_line, unit="bucket", desc="evaluate")


def _bucket_line(report: Progress, label: str) -> str:
    elapsed = report.elapsed
    return (
        f"[polars-rankeval] bucket {report.done}/{report.total}, {report.rows:,} rows, "
        f"{_clock(elapsed)} elapsed, ~{_clock(report.left(elapsed))} left"
    )


# ---------------------------------------------------------------------- temporary files
_PENDING: set[Path] = set()
"""Work directories not removed yet: the last resort removes them at exit."""


def _remove_pending() -> None:
    for path in list(_PENDING):
        shutil.rmtree(path, ignore_errors=True)
        _PENDING.discard(path)


atexit.register(_remove_pending)


@contextlib.contextmanager
def temporary_directory(temp_dir: str | os.PathLike[str] | None) -> Iterator[Path]:
    """A work directory removed at the end, whatever ends the run.

    * an error or Ctrl-C (``KeyboardInterrupt``) runs the clean-up in ``finally``;
    * further SIGINT/SIGTERM signals are held back during the clean-up and delivered
      after it, so a second Ctrl-C cannot stop it half-way; if one still lands before
      the deferral is in place, the clean-up is retried, then the interrupt re-raised;
    * SIGTERM, whose default action kills the process without running ``finally``,
      raises ``SystemExit(143)`` instead while the directory exists (only when no
      handler of the caller's is installed, and only in the main thread);
    * and as a last resort the directory is registered with :mod:`atexit`.
    """
    work = Path(tempfile.mkdtemp(prefix="polars-rankeval-", dir=temp_dir))
    _PENDING.add(work)
    with sigterm_exits():
        try:
            yield work
        finally:
            _clean_up(work)


def _clean_up(work: Path) -> None:
    """Remove ``work``; an interrupt is re-raised only once the directory is gone."""
    interrupted: BaseException | None = None
    for _ in range(100):
        try:
            with deferred_signals():
                shutil.rmtree(work, ignore_errors=True)
                _PENDING.discard(work)
        except (KeyboardInterrupt, SystemExit) as exc:
            # Held back and delivered after the removal, or (rarely) landed before
            # the handlers were in place: then retry.
            interrupted = interrupted or exc
            if work in _PENDING:
                continue
        break
    if interrupted is not None:
        raise interrupted


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class BucketedEngine(PolarsScan):
    """Users hashed into ``k`` buckets, the plan run on one bucket at a time.

    ``mode``: ``"buckets"`` (a filter on the user hash per pass) or ``"partition"`` (the
    input written once, partitioned by bucket, to ``temp_dir``). The temporary files
    live from :meth:`map_users` to the end of :meth:`finish`, which returns a computed
    frame. ``k`` is capped by the number of distinct users (one pass over the user
    column): more buckets than users only adds empty passes.
    """

    def __init__(
        self,
        lf: pl.LazyFrame,
        *,
        k: int,
        mode: Strategy,
        temp_dir: str | os.PathLike[str] | None,
        progress: bool,
    ) -> None:
        super().__init__(lf)
        self.k, self.mode, self.temp_dir, self.progress = k, mode, temp_dir, progress
        self._stack = contextlib.ExitStack()

    def distinct(self, columns: Sequence[str], *, present: str | None = None) -> pl.LazyFrame:
        return super().distinct(columns, present=present).collect(engine="streaming").lazy()

    def map_users(self, job: Job, fn: UserFn, *, validate: bool) -> UserOutputs:
        cols = job.cols
        source = self.lf.select(job.columns(self.lf.collect_schema()))
        schema = source.collect_schema()
        k = self.k
        if k > 1 and self.mode != "partition":
            # each bucket is a pass over the input: no more buckets than users
            n_users = self.scalars({"n": Scalar("n_unique", cols.user)})["n"]
            k = max(1, min(k, int(n_users)))
        # partition: the one partitioning pass shows which buckets hold rows; only those
        # (and those holding users asked for) are evaluated, with no pass to count users
        wanted = groups = None
        if not isinstance(job.users, str):
            wanted = wanted_users(job.users, cols.user, schema[cols.user]).to_frame()
            if job.by:
                # An explicit list is crossed with every by value of the input, not only
                # with those present in a bucket (one pass reading the by columns).
                groups = self.distinct(job.by)
        with contextlib.ExitStack() as stack:
            work = stack.enter_context(temporary_directory(self.temp_dir))
            report = BucketProgress(k, self.progress)
            stack.callback(report.close)
            outputs = _run_buckets(
                job, fn, source, work, report, k, self.mode, wanted, groups, validate
            )
            self._stack = stack.pop_all()  # the files stay until finish
        return outputs

    def finish(self, job: Job, outputs: UserOutputs) -> pl.DataFrame:
        with self._stack:
            return finish(job, outputs.per_user, outputs.partials).collect()


def _run_buckets(
    job: Job,
    fn: UserFn,
    source: pl.LazyFrame,
    work: Path,
    report: Progress,
    k: int,
    mode: Strategy,
    wanted: pl.DataFrame | None,
    groups: pl.LazyFrame | None,
    validate: bool,
) -> UserOutputs:
    cols = job.cols
    schema = source.collect_schema()
    bucket = pl.col(cols.user).hash(seed=_SEED) % k
    if mode == "partition":
        report.message(f"writing the input in {k} buckets to {work}")
        source.sink_parquet(
            pl.PartitionBy(work / "input", key={_BUCKET: bucket}, include_key=False),
            mkdir=True,
            **_SINK,
        )
    todo = list(range(k))
    if mode == "partition":
        held = {b for b in todo if (work / "input" / f"{_BUCKET}={b}").exists()}
        if wanted is not None:
            held |= set(wanted.select(bucket.alias("b"))["b"].to_list())
        todo = sorted(held) or [0]  # at least one (empty) bucket: the output's schema
        report.set_total(len(todo))
    report.message(f"evaluating {len(todo)} buckets")
    partials: dict[str, list[pl.LazyFrame]] = {name: [] for name in job.partial_names}
    for b in todo:
        # The bucket is read once, into memory: the plan reads its rows more than once
        # (the sorted head, the tie group at the cutoff, the row checks), and a scan
        # would decode the Parquet (or, for "buckets", filter the whole source) each time.
        # Its rows are a small part of the bucket's working memory (BYTES_PER_ROW).
        part = _bucket_source(source, schema, work, b, bucket, mode).collect().lazy()
        users: UsersArg | None = None
        if wanted is not None:
            users = wanted.filter(bucket == b)
        # The value checks are folded into the sorted-head aggregation when that path
        # runs (one row of counts appended to `folded`); otherwise they are their own
        # two queries (value_checks), collected with the plan.
        # The bucket is in memory: the sorted-head path collects its first stage at once
        # (the checks' counts then read that frame: collected apart by collect_all, they
        # would run a second aggregation of the rows).
        folded: list[pl.LazyFrame] = []
        per_user, bucket_partials = fn(
            part, users, groups, checks=folded if validate else None, collect_first=True
        )
        checks = list(value_checks(part, cols, job.by)) if validate and not folded else []
        names = list(bucket_partials)
        frames = pl.collect_all(
            [*folded, *checks, per_user, *bucket_partials.values(), part.select(pl.len())]
        )
        if folded:
            raise_on_counts(frames[0], part, cols, job.by)
            frames = frames[1:]
        elif validate:
            raise_on_problems(part, cols, job.by, frames[0], frames[1])
            frames = frames[2:]
        frames[0].write_parquet(work / f"per_user_{b:05d}.parquet")
        for name, frame in zip(names, frames[1:-1], strict=True):
            path = work / f"partial_{len(partials[name]):05d}_{b:05d}_{_safe(name)}.parquet"
            frame.write_parquet(path)
            partials[name].append(pl.scan_parquet(path))
        report.step(int(frames[-1].item()))
    return UserOutputs(pl.scan_parquet(work / "per_user_*.parquet"), partials)


def _bucket_source(
    source: pl.LazyFrame, schema: pl.Schema, work: Path, b: int, bucket: pl.Expr, mode: str
) -> pl.LazyFrame:
    if mode != "partition":
        return source.filter(bucket == b)
    folder = work / "input" / f"{_BUCKET}={b}"
    if not folder.exists():
        return pl.LazyFrame(schema=schema)
    return pl.scan_parquet(folder / "*.parquet", hive_partitioning=False)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", name)

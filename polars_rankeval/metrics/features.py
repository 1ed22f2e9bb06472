"""Per-row ranking features shared by every metric.

A metric is written once, against the small interface of :class:`Features`:
positions, tie groups and tie-group sums. Two providers implement it:

* **window** (used by :func:`polars_rankeval.evaluate`): every feature is a column
  computed once with a window over the user (``over(by + [user])``) and shared by all
  requested metrics; metrics then reduce with scalar sums in one ``group_by``.
* **agg** (used when a metric function is called on its own, e.g.
  ``lf.group_by("user").agg(prk.ndcg(k=10))``): the same features computed inline
  within the aggregation context of one user. The metric functions use its sort-once
  form, :class:`polars_rankeval.metrics.sorted_features.SortedFeatures` (the rows
  sorted once per expression); this class remains for kernels that read a column
  by ``pl.col``.

Positions cover *all* of a user's rows: recommended rows first, ordered by score, then
the judged-but-not-recommended rows (null score) as one block at the bottom. Metrics
that look at the recommendation list mask with :attr:`Features.ret`.

Tie semantics. Under ``ties="expected"`` a tie group occupies the positions
``a .. a+n-1``; each ordering of the group is equally likely. Metrics are written as
functions of ``a``, ``n`` and ``j = o - a`` (the offset of a row inside its group under
an arbitrary ordering), so that summing over the rows of a group sums over its
positions. Under a deterministic policy every row is its own group (``n = 1``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from polars_rankeval._utils.ties import POLICIES, Ties, id_order, resolve_ties
from polars_rankeval._utils.types import Columns, TiePolicy

KEY = "__prk_key"
RET = "__prk_ret"
REL = "__prk_rel"
JUDGED = "__prk_judged"

PosFn = Callable[[pl.Expr], pl.Expr]
TIE_ORDER = {name: p.order for name, p in POLICIES.items() if p.deterministic}
"""The total order of each deterministic tie policy: row order never matters."""
# Integer dtypes whose every value is exact as a Float64 (|v| <= 2^53).
_EXACT_IN_F64 = (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32, pl.Boolean)
# Below every Int64 / UInt64 value (and every negated one) held in an Int128.
_INT128_BOTTOM = -(2**126)


def f64(expr: pl.Expr) -> pl.Expr:
    """``expr`` as Float64: the one cast helper (``metrics._common`` re-exports it)."""
    return expr.cast(pl.Float64)


def count_within(k: int | pl.Expr, a: pl.Expr, n: pl.Expr) -> pl.Expr:
    """How many rows of a tie group (first position ``a``, ``n`` rows) fit in the top ``k``."""
    return (k - a + 1).clip(0, n)


def share_within(k: int | pl.Expr, a: pl.Expr, n: pl.Expr) -> pl.Expr:
    """The share of a tie group (first position ``a``, ``n`` rows) within the top ``k``.

    Under expected ties: each of its rows' probability of landing within the top ``k``.
    """
    return f64(count_within(k, a, n)) / f64(n)


def order_kind(dtype: pl.DataType | None) -> str:
    """How the score/rank column is ordered exactly: ``"f64"``, ``"i128"`` or ``"dense"``.

    Floats and integers of at most 32 bits are exact as Float64 (the fast path).
    ``Int64``/``UInt64`` values beyond 2^53 are not: they are ordered as ``Int128``.
    ``Decimal``, ``Int128``, ``UInt128`` and an unknown dtype (the inline provider)
    are ordered by their dense rank within the user. Casting any of these to Float64
    before ranking would turn distinct scores into ties.
    """
    if dtype is not None and (dtype.is_float() or dtype in _EXACT_IN_F64):
        return "f64"
    if dtype in (pl.Int64, pl.UInt64):
        return "i128"
    return "dense"


def exact_score(cols: Columns, dtype: pl.DataType | None) -> pl.Expr:
    """The score, or minus the rank, as a value ordered exactly (higher is better).

    Comparable across users (unlike :attr:`Features.key` for some dtypes); nulls stay
    null. ``-0.0`` is read as ``0.0``, so grouping and ranking see one value.
    """
    col = pl.col(cols.order)
    kind = order_kind(dtype)
    wide = kind == "i128" or dtype in (pl.Int128, pl.UInt128)
    if kind == "f64":
        value = f64(col)
    elif wide:
        value = col.cast(pl.Int128)
    else:
        value = col
    if cols.rank is not None:
        # Int128 has no unary minus in Polars.
        value = pl.lit(0, dtype=pl.Int128) - value if wide else -value
    return value + 0.0 if kind == "f64" else value


class Features:
    """Feature provider for one tie policy.

    Parameters
    ----------
    cols
        Column names of the long frame.
    ties
        Tie policy.
    keys
        ``None`` for the inline (agg) provider; otherwise the per-user partition
        columns (``by + [user]``) for the window provider.
    n_items
        The catalog size N, for metrics over the whole catalog (true negatives).
    rating_range
        ``(low, high)`` of the true ratings, for range-normalised errors.
    order_dtype
        The dtype of the score/rank column, to rank it exactly (see
        :func:`order_kind`); ``None`` (unknown) ranks by the dense rank.
    columns
        The user's column name -> its name in the rows (``evaluate`` renames the input
        columns, see :func:`polars_rankeval.plan.job.internal_names`); default: as is.
    items, history
        The item side table (``items=``) and the users' interaction history
        (``history=``) of ``evaluate``, with the user's column names; kernels read
        them through :meth:`item_table` and :meth:`history`.
    absolute
        Positions are the values of the rank column themselves, gaps kept
        (``evaluate(rank_positions="absolute")``): an item at rank 9 is at position 9
        even when the user has fewer than 9 recommended items. The ranks must be
        distinct integers >= 1 within a user (checked by ``evaluate``), so recommended
        rows are never tied; the not-recommended rows follow the largest rank.
        Window provider only.
    empty
        The ``empty=`` policy of the call, for metrics aggregated by their own
        ``aggregate=`` option (:mod:`polars_rankeval.metrics.aggregate`).
    """

    def __init__(
        self,
        cols: Columns,
        ties: TiePolicy | Ties,
        keys: list[str] | None,
        *,
        n_items: int | None = None,
        rating_range: tuple[float, float] | None = None,
        order_dtype: pl.DataType | None = None,
        columns: dict[str, str] | None = None,
        items: pl.LazyFrame | None = None,
        history: pl.LazyFrame | None = None,
        absolute: bool = False,
        empty: str = "skip",
        data_columns: Sequence[str] | None = None,
    ) -> None:
        if absolute and cols.rank is None:
            msg = "absolute positions need a rank column (rank=), not a score"
            raise ValueError(msg)
        if absolute and keys is None:  # inline sums index positions (gmean_pos, gsum)
            msg = "absolute positions need the window provider (evaluate)"
            raise ValueError(msg)
        self.cols = cols
        self._items = items
        self._history = history
        # The data's columns (None: unknown, e.g. the functions of metrics.functions).
        self._data_columns = None if data_columns is None else frozenset(data_columns)
        # The history sources of the kernels built so far whose recommended items must
        # all be in history= (what MetricSpec.history_items declares; the tests compare).
        self.history_checks: list[str] = []
        self.absolute = absolute
        self.order_dtype = order_dtype
        self._columns = dict(columns or {})
        # The empty= policy of the call: aggregate= options read it (_aggregate.plan).
        self.empty = empty
        self.tie = resolve_ties(ties)
        self.ties = self.tie.name
        self._n_items = n_items
        self._rating_range = rating_range
        # Columns beyond user/item/score/relevance that kernels read (e.g. a
        # propensity, or a column of the item side table), by name.
        self.extra: dict[str, None] = {}
        self.window = keys is not None
        self.keys = list(keys or [])
        # Window provider: columns to materialise, in dependency order: 0 base
        # columns, 1 per-user ranks, then (in apply) the positive-relevance and
        # tie-group columns, and last 2 the per-user totals (and rows_above windows).
        self.stages: list[dict[str, pl.Expr]] = [{}, {}, {}]
        # Tie-group columns as (tied rows, singleton rows) pairs, in four levels: 0 the
        # offset j, 1 windows over the tie group, 2 row values built on them, 3 row
        # values built on those of level 2.
        self.tie_levels: list[dict[str, tuple[pl.Expr, pl.Expr]]] = [{}, {}, {}, {}]
        # Per-user windows needed on rows with a positive relevance only.
        self.positive: dict[str, pl.Expr] = {}
        # Sub-plans that several metrics' plans of one build share (by a key of their
        # own), so that the engine computes them once (see metrics._sampled).
        self.shared: dict[Any, Any] = {}

    # ------------------------------------------------------------------ plumbing
    @property
    def n_items(self) -> pl.Expr:
        """The catalog size N as a Float64 literal; an error when it is not known."""
        if self._n_items is None:
            msg = (
                "this metric counts true negatives over the catalog and needs its size: "
                "pass n_items= (an int, or a frame of catalog items)"
            )
            raise ValueError(msg)
        return pl.lit(float(self._n_items), dtype=pl.Float64)

    @property
    def catalog_size(self) -> int | None:
        """The catalog size N given to ``evaluate`` (``n_items=``), or ``None``."""
        return self._n_items

    def column(self, name: str) -> pl.Expr:
        """Another column of the rows (of the data or of the item side table ``items=``).

        Kernels read extra inputs through this (the columns a metric's declaration
        names: :meth:`polars_rankeval.metrics.spec.Metric.reads`); the plan joins those
        of ``items=`` to the rows.
        """
        self.extra.setdefault(name, None)
        return pl.col(self._columns.get(name, name))

    def history(self, metric: str) -> pl.LazyFrame:
        """The interaction history (``history=``) with the rows' user and item names.

        Raises a ``ValueError`` naming ``metric`` when no history was given: call it
        while building the plan, so that the error comes at the ``evaluate`` call.
        """
        if self._history is None:
            msg = (
                f"metric {metric!r} reads the users' past interactions: pass history= "
                "(a frame with the user and item columns of the data, one row per "
                "interaction, e.g. the training data)"
            )
            raise ValueError(msg)
        return self._inner_names(self._history)

    @property
    def has_history(self) -> bool:
        """Whether ``history=`` was given (for metrics where it is optional)."""
        return self._history is not None

    def has_column(self, name: str) -> bool:
        """Whether the data or ``items=`` has column ``name`` (True when not known).

        For options with a fallback (a popularity column, else ``history=``).
        """
        if self._data_columns is None or name in self._data_columns:
            return True
        return self._items is not None and name in self._items.collect_schema()

    def require_history_items(self, source: str) -> None:
        """Say that every recommended item must be in ``history=`` (counted by ``source``).

        The kernel's own statement of what its spec declares
        (:class:`~polars_rankeval.metrics.spec.HistoryItems`), from which
        :class:`polars_rankeval.plan.job.Job` checks it before the plan runs;
        ``tests/metrics/test_kernels_as_declared.py`` compares the two.
        """
        self.history_checks.append(source)

    def history_column(self, metric: str, name: str) -> str:
        """Check that the history has column ``name`` (e.g. a weight); its name."""
        schema = self.history(metric).collect_schema()
        if name not in schema:
            msg = (
                f"metric {metric!r}: column {name!r} not found in the history= table; "
                f"available columns: {', '.join(schema.names())}"
            )
            raise ValueError(msg)
        return name

    def item_table(self, metric: str) -> pl.LazyFrame:
        """The item side table (``items=``) with the rows' item column name."""
        if self._items is None:
            msg = f"metric {metric!r} reads the item side table: pass items="
            raise ValueError(msg)
        return self._inner_names(self._items)

    def _inner_names(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        present = set(lf.collect_schema().names())
        wanted = {self.cols_outer(c): c for c in (self.cols.user, self.cols.item)}
        renames = {o: i for o, i in wanted.items() if o in present and o != i}
        # Another column of the table may carry an internal name: keep it apart.
        clash = [i for i in renames.values() if i in present and i not in renames]
        lf = lf.drop(clash) if clash else lf
        return lf.rename(renames) if renames else lf

    def cols_outer(self, inner: str) -> str:
        """The user's name of a plan column (the inverse of :meth:`column_name`)."""
        return self.label(inner)

    def column_name(self, name: str) -> str:
        """The name in the rows of a column read with :meth:`column`."""
        return self._columns.get(name, name)

    def label(self, name: str) -> str:
        """The user's name of a column of the rows (for error messages)."""
        back = {inner: outer for outer, inner in self._columns.items()}
        return back.get(name, name)

    @property
    def rating_range(self) -> tuple[float, float]:
        """``(low, high)`` of the true ratings; an error when it is not known."""
        if self._rating_range is None:
            msg = "this metric divides by the rating range: pass it as an option or to evaluate"
            raise ValueError(msg)
        return self._rating_range

    @property
    def by(self) -> list[str]:
        """The by-columns (the per-user keys without the user column)."""
        return self.keys[:-1]

    @property
    def expected(self) -> bool:
        """Whether values are expectations over tied orderings (no total order)."""
        return not self.tie.deterministic

    def _reg(self, stage: int, name: str, expr: pl.Expr) -> pl.Expr:
        if not self.window:
            return expr
        self.stages[stage].setdefault(name, expr)
        return pl.col(name)

    def _user(self, expr: pl.Expr) -> pl.Expr:
        return expr.over(self.keys) if self.window else expr

    def _group(self, expr: pl.Expr) -> pl.Expr:
        self.key  # noqa: B018 - registers the key column the window partitions on
        return expr.over([*self.keys, KEY])

    def _tie(self, level: int, name: str, tied: pl.Expr, singleton: pl.Expr) -> pl.Expr:
        """A tie-group column: ``tied`` on rows of real ties, ``singleton`` when n == 1."""
        self.tie_levels[level].setdefault(name, (tied, singleton))
        return pl.col(name)

    def tie_row(
        self, name: str, expr: pl.Expr, singleton: pl.Expr, *, after: bool = False
    ) -> pl.Expr:
        """A row-wise value that only differs from ``singleton`` for rows in real ties.

        Under a deterministic policy (every group a singleton) this is ``singleton``;
        in the window provider ``expr`` is computed only on the rows of real ties.
        ``after=True`` computes it after the other ``tie_row`` columns, so that ``expr``
        may read them (intermediate columns keep a long row expression small).
        """
        if not self.expected:
            return singleton
        if not self.window:
            return expr
        return self._tie(3 if after else 2, name, expr, singleton)

    def apply(self, lf: pl.LazyFrame) -> pl.LazyFrame:
        """Materialise the registered feature columns (window provider only).

        Windows over tie groups are costly when nearly every group is a singleton
        (continuous scores), so they run only on the rows of real ties; the other
        rows get the closed-form singleton values. Likewise, ranks among relevant
        items run on the rows with a positive relevance only.
        """
        # The tie split filters on n, which reads the rank columns: register them first.
        is_tied = self.n > 1 if any(self.tie_levels) else pl.lit(False)
        for stage in self.stages[:2]:
            if stage:
                lf = lf.with_columns(**stage)
        if self.positive:
            nulls = {name: pl.lit(None, dtype=pl.Int64) for name in self.positive}
            lf = _split(lf, pl.col(REL) > 0, [self.positive], [nulls])
        if any(self.tie_levels):
            tied = [{n: t for n, (t, _) in level.items()} for level in self.tie_levels]
            singles = [{n: s for n, (_, s) in level.items()} for level in self.tie_levels]
            lf = _split(lf, is_tied, tied, singles)
        if self.stages[2]:
            lf = lf.with_columns(**self.stages[2])
        return lf

    # ------------------------------------------------------------------ base rows
    @property
    def key(self) -> pl.Expr:
        """Ordering key, higher is better; not-recommended rows come last.

        Exact for every numeric dtype (see :func:`order_kind`): equal keys are equal
        scores, never two scores that only a cast to Float64 made equal.
        """
        kind = order_kind(self.order_dtype)
        if kind == "f64":
            raw = exact_score(self.cols, self.order_dtype).fill_null(float("-inf"))
        elif kind == "i128":
            bottom = pl.lit(_INT128_BOTTOM, dtype=pl.Int128)
            raw = exact_score(self.cols, self.order_dtype).fill_null(bottom)
        else:
            col = pl.col(self.cols.order)
            dense = col.rank("dense", descending=self.cols.rank is not None)
            raw = f64(self._user(dense)).fill_null(float("-inf"))
        return self._reg(0, KEY, raw)

    @property
    def score(self) -> pl.Expr:
        """The exact ordering value of recommended rows (higher is better), else null.

        Equal within a user exactly when the scores (or ranks) are equal.
        """
        return pl.when(self.ret).then(self.key)

    @property
    def ret(self) -> pl.Expr:
        """True for recommended (retrieved) rows."""
        return self._reg(0, RET, pl.col(self.cols.order).is_not_null())

    @property
    def rel(self) -> pl.Expr:
        """Graded relevance as Float64, null read as 0."""
        return self._reg(0, REL, f64(pl.col(self.cols.relevance)).fill_null(0.0))

    @property
    def judged(self) -> pl.Expr:
        """True for rows with a relevance judgment (a non-null relevance)."""
        return self._reg(0, JUDGED, pl.col(self.cols.relevance).is_not_null())

    def is_rel(self, threshold: float) -> pl.Expr:
        """1.0 for rows whose relevance is at least ``threshold``, else 0.0."""
        return f64(self.rel >= threshold)

    # ------------------------------------------------------------------ positions
    @property
    def o(self) -> pl.Expr:
        """A distinct 1-based position for every row of the user.

        Deterministic policies: the position after tie-breaking, a total order that
        never depends on the row order of the input (:data:`TIE_ORDER`). ``"expected"``:
        an arbitrary order inside each tie group (only used through tie-group-symmetric
        sums).
        """
        key = self.key
        # Struct fields named apart (inline, several would be named after one column).
        item = id_order(self.cols.item).alias("i")
        breaks = self.tie.breaks
        if self.expected:
            if self.window:
                return self.a + self.j
            raw = key.rank("ordinal", descending=True)
        elif breaks == ("item_desc",):
            # Every key descending: one descending rank of (score, item).
            raw = pl.struct(key.alias("k"), item).rank("ordinal", descending=True)
        else:
            # Ascending ranks of (-score, the tie-break keys each turned ascending).
            fields = [self._key_ascending.alias("k")]
            for name in breaks:
                if name == "relevance_desc":
                    fields.append((-self.rel).alias("r"))
                elif name == "relevance_asc":
                    fields.append(self.rel.alias("r"))
                elif name == "judged_first":
                    fields.append((~self.judged).alias("j"))
                elif name == "item_asc":
                    fields.append(item)
                else:  # item_desc after other keys: the item's descending dense rank
                    fields.append(self._user(item.rank("dense", descending=True)).alias("i"))
            raw = pl.struct(*fields).rank("ordinal")
        return self._reg(1, "__prk_o", self._user(self._absolute(raw)).cast(pl.Int64))

    def _absolute(self, relative: pl.Expr) -> pl.Expr:
        """A 1-based position (or tie-group bound) ``relative`` made absolute.

        Under ``absolute``: the rank itself on recommended rows, and after the largest
        rank for the not-recommended ones (which follow the recommended rows in
        ``relative``). Otherwise ``relative`` unchanged.
        """
        if not self.absolute:
            return relative
        rank = pl.col(self.cols.order).cast(pl.Int64)
        n_ret = self.ret.cast(pl.Int64).sum()
        after = rank.max().fill_null(0) + relative.cast(pl.Int64) - n_ret
        return pl.when(self.ret).then(rank).otherwise(after)

    @property
    def _key_ascending(self) -> pl.Expr:
        """Minus the key: ascending order is best first (Int128 has no unary minus)."""
        if order_kind(self.order_dtype) == "i128":
            return pl.lit(0, dtype=pl.Int128) - self.key
        return -self.key

    @property
    def a(self) -> pl.Expr:
        """First position of the row's tie group."""
        if not self.expected:
            return self.o
        raw = self._absolute(self.key.rank("min", descending=True))
        return self._reg(1, "__prk_a", self._user(raw).cast(pl.Int64))

    @property
    def _b(self) -> pl.Expr:
        raw = self._absolute(self.key.rank("max", descending=True))
        return self._reg(1, "__prk_b", self._user(raw).cast(pl.Int64))

    @property
    def n(self) -> pl.Expr:
        """Size of the row's tie group (1 under a deterministic policy)."""
        if not self.expected:
            return pl.lit(1, dtype=pl.Int64)
        return self._b - self.a + 1

    @property
    def j(self) -> pl.Expr:
        """Offset of the row inside its tie group, 0 .. n-1 (arbitrary order)."""
        if not self.expected:
            return pl.lit(0, dtype=pl.Int64)
        if self.window:
            # Ranks over the tied rows alone: a tie group's members are consecutive
            # there too, so ordinal - min is the offset inside the group.
            ordinal = self.key.rank("ordinal", descending=True) - self.key.rank(
                "min", descending=True
            )
            offset = self._user(ordinal).cast(pl.Int64)
            return self._tie(0, "__prk_j", offset, pl.lit(0, dtype=pl.Int64))
        return self.o - self.a

    # ------------------------------------------------------------------ tie-group sums
    def _prefix_range(self, values: pl.Expr, lo: pl.Expr, hi: pl.Expr) -> pl.Expr:
        """Sum of ``values[lo-1 .. hi-1]`` (1-based, inclusive) within one agg group."""
        cs = values.cum_sum()
        return cs.gather(hi - 1) - cs.gather(lo - 1) + values.gather(lo - 1)

    def gsum(self, x: pl.Expr, name: str) -> pl.Expr:
        """Sum of the row value ``x`` over the row's tie group."""
        if not self.expected:
            return x
        if self.window:
            return self._tie(1, f"__prk_gsum[{name}]", self._group(x.sum()), x)
        ordered = x.sort_by(self.key, descending=True)
        return self._prefix_range(ordered, self.a, self._b)

    def gmax(self, x: pl.Expr, name: str) -> pl.Expr:
        """Maximum of the row value ``x`` over the row's tie group (nulls ignored).

        Window provider only (curve kernels, which run in ``evaluate``).
        """
        if not self.expected:
            return x
        if not self.window:  # pragma: no cover - curve kernels use the window provider
            msg = "gmax needs the window feature provider"
            raise NotImplementedError(msg)
        return self._tie(1, f"__prk_gmax[{name}]", self._group(x.max()), x)

    def gmean_pos(self, f: PosFn, k: int | pl.Expr | None, name: str) -> pl.Expr:
        """Mean of ``f(p) * [p <= k]`` over the positions p of the row's tie group."""

        def masked(p: pl.Expr) -> pl.Expr:
            v = f64(f(p))
            return v if k is None else pl.when(p <= k).then(v).otherwise(0.0)

        if not self.expected:
            return masked(self.o)
        if self.window:
            window = self._group(masked(self.a + self.j).mean())
            return self._tie(1, f"__prk_gmean[{name}@{k}]", window, masked(self.a))
        p = pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
        return self._prefix_range(masked(p), self.a, self._b) / self.n

    def first_of(self, r: pl.Expr, name: str) -> pl.Expr:
        """Probability that the row comes first among the ``r`` marked rows of its tie group.

        Under expected ties the group's ``n`` rows take its positions in a uniformly
        random order; for the row at offset ``j`` this is ``C(n-1-j, r-1) / C(n, r)``
        (0 when ``r = 0`` or ``j > n - r``). ``r`` is a tie-group sum (:meth:`gsum`).
        1 under a deterministic policy.
        """
        if not self.expected:
            return pl.lit(1.0)
        n, j = self.n, self.j
        return self.tie_row(name, comb_ratio([(n - 1 - j, r - 1)], [(n, r)]), pl.lit(1.0))

    def within(self, k: int | pl.Expr) -> pl.Expr:
        """How many rows of the row's tie group fit in the top ``k`` (``count_within``)."""
        return count_within(k, self.a, self.n)

    def p_in(self, k: int | pl.Expr | None) -> pl.Expr:
        """Probability that the row is recommended and lands within the top ``k``."""
        ret = f64(self.ret)
        if k is None:
            return ret
        if not self.expected:
            return ret * f64(self.o <= k)
        return ret * share_within(k, self.a, self.n)

    def _positive(self, name: str, expr: pl.Expr) -> pl.Expr:
        """A per-user window that only matters on rows with a positive relevance.

        The window provider computes it on those rows alone (null elsewhere): with
        few relevant rows per user this is much cheaper than a window over all rows.
        """
        if not self.window:
            return expr
        self.positive.setdefault(name, expr.over(self.keys))
        return pl.col(name)

    def rel_above(self, threshold: float) -> pl.Expr:
        """For relevant rows: relevant rows strictly above the row's tie group."""
        is_rel = self.rel >= threshold
        if self.expected:
            raw = pl.when(is_rel).then(self.key).rank("min", descending=True)
        else:
            raw = pl.when(is_rel).then(self.o).rank("ordinal")
        return self._positive(f"__prk_relabove[{threshold}]", raw.cast(pl.Int64) - 1)

    def rows_above(self, mask: pl.Expr, name: str) -> pl.Expr:
        """For rows where ``mask`` holds: rows with the mask strictly above the tie group.

        Null on the other rows. Unlike :meth:`rel_above` this is a window over all of the
        user's rows (the mask may hold on rows without a positive relevance), computed
        with the per-user totals since it ranks positions.
        """
        if self.expected:
            raw = pl.when(mask).then(self.key).rank("min", descending=True)
        else:
            raw = pl.when(mask).then(self.o).rank("ordinal")
        return self._reg(2, f"__prk_above[{name}]", self._user(raw).cast(pl.Int64) - 1)

    def user_base(self, x: pl.Expr, name: str) -> pl.Expr:
        """A per-user aggregate ``x`` of the base columns, broadcast to every row.

        ``x`` may read only :attr:`ret`, :attr:`rel`, :attr:`judged` and the score/rank
        column (not positions). Unlike :meth:`user_total`, the window provider computes
        it before the tie-group columns, so that :meth:`tie_row` values may read it.
        Inline, ``x`` itself (an aggregate of the user's rows).
        """
        if not self.window:
            return x
        return self._reg(1, f"__prk_base[{name}]", x.over(self.keys))

    def user_total(self, x: pl.Expr, name: str) -> pl.Expr:
        """Sum of ``x`` over all of the user's rows, broadcast to every row."""
        if not self.window:
            return x.sum()
        return self._reg(2, f"__prk_total[{name}]", x.sum().over(self.keys))

    def user_min(self, x: pl.Expr, name: str) -> pl.Expr:
        """Minimum of ``x`` over the user's rows, broadcast to every row."""
        if not self.window:
            return x.min()
        return self._reg(2, f"__prk_min[{name}]", x.min().over(self.keys))

    def user_window(self, expr: pl.Expr, name: str) -> pl.Expr:
        """A row value computed from all of the user's rows (sorts, cumulative sums).

        Inline the expression runs within the user's group; the window provider
        materialises it once as a column over the user, so that the final aggregation
        stays a plain sum.
        """
        if not self.window:
            return expr
        return self._reg(2, f"__prk_window[{name}]", expr.over(self.keys))

    def ideal_rank(self, gain: pl.Expr, name: str) -> pl.Expr:
        """Position of the row in the ideal ordering (gain descending); null if gain 0."""
        raw = pl.when(gain > 0).then(gain).rank("ordinal", descending=True)
        return self._positive(f"__prk_irank[{name}]", raw.cast(pl.Int64))


def _split(
    lf: pl.LazyFrame,
    predicate: pl.Expr,
    when_true: list[dict[str, pl.Expr]],
    when_false: list[dict[str, pl.Expr]],
) -> pl.LazyFrame:
    """Add columns one way on the rows where ``predicate`` holds, another elsewhere.

    The input is read twice, so it is cached explicitly: otherwise the optimizer may
    recompute the ranks above it once per branch.
    """
    lf = lf.cache()
    parts = []
    for rows, stages in ((lf.filter(predicate), when_true), (lf.filter(~predicate), when_false)):
        for columns in stages:
            if columns:
                rows = rows.with_columns(**columns)
        parts.append(rows)
    return pl.concat(parts, how="vertical")


# ---------------------------------------------------------------------- special functions
_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def lgamma(x: pl.Expr) -> pl.Expr:
    """``log Gamma(x)`` for ``x >= 1`` as a native Polars expression (Lanczos, g=7).

    Relative accuracy is about 1e-15, so probabilities built from differences of
    log-factorials of tie groups up to thousands of items are exact to ~1e-12.
    """
    z = f64(x) - 1.0
    s = pl.lit(_LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        s = s + c / (z + float(i))
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * t.log() - t + s.log()


def log_comb(n: pl.Expr, k: pl.Expr) -> pl.Expr:
    """``log C(n, k)``; callers must guard ``0 <= k <= n``."""
    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)


def comb_ratio(num: list[tuple[pl.Expr, pl.Expr]], den: list[tuple[pl.Expr, pl.Expr]]) -> pl.Expr:
    """``prod C(num) / prod C(den)``, zero when any numerator binomial is empty."""
    log = pl.lit(0.0)
    valid = pl.lit(True)
    for n, k in num:
        log = log + log_comb(n, k)
        valid = valid & (k >= 0) & (k <= n)
    for n, k in den:
        log = log - log_comb(n, k)
    return pl.when(valid).then(log.exp()).otherwise(0.0)

"""What a registered metric is: :class:`MetricSpec` (its one declaration) and :class:`Metric`.

A kernel returns an expression over one user's rows, or a sub-plan
(:class:`FramePlan`, :class:`GlobalPlan`); a curve kernel a :class:`CurvePlan`. The
spec also carries the metric's capabilities, read by the plan and the engines instead
of a table of names, and what its kernel will do under given options (its
:attr:`Metric.kind`, the columns it reads: :meth:`Metric.reads`, its history check:
:meth:`Metric.history_source`), so that the plan is decided without running a kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

import polars_rankeval.metrics.aggregate as _aggregate
from polars_rankeval._utils.ties import Capability, Ties, check_supported, supported
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.head_form import HeadForm
from polars_rankeval.metrics.params import Condition, Param, format_value, holds

Combine = Literal["sum", "min", "max"]
Form = Literal["expression", "frame"]
"""What the kernel of a per-user metric returns: a ``pl.Expr`` or a :class:`FramePlan`."""
Kind = Literal["expr", "frame", "global", "item"]
"""How the plan computes a metric under its options (:attr:`Metric.kind`)."""


@dataclass(frozen=True)
class FramePlan:
    """A per-user metric computed by a sub-plan of its own instead of one expression.

    For values that no single aggregation expression gives (pairwise statistics such
    as Kendall's tau need a self-join within the user). ``build`` receives the rows
    with the feature columns materialised (see :meth:`Features.apply`; kernels
    register what they need by touching the features before returning) and returns
    one row per user: the key columns (``features.keys``) and a ``"value"`` column.
    Users missing from the result get a null (undefined) value.
    """

    build: Callable[[pl.LazyFrame], pl.LazyFrame]


@dataclass(frozen=True)
class GlobalPlan:
    """A metric with one value per ``by`` group, aggregated over rows, not over users.

    Computed in three steps so that it also works bucket by bucket (out of core) and
    partition by partition (Spark): ``partial`` maps rows (features materialised) of
    any subset of whole users to partial aggregates with columns ``by + group + parts``;
    partials of different subsets are merged by grouping on ``by + group`` and
    combining each part with ``combine[part]``; ``finalize`` maps the merged partials
    and the list of by-columns to ``by + ["value"]``.
    """

    partial: Callable[[pl.LazyFrame], pl.LazyFrame]
    group: tuple[str, ...]
    combine: dict[str, Combine]
    finalize: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame]


@dataclass(frozen=True)
class CurvePlan:
    """Many cutoffs of one metric from shared per-user aggregates (one pass).

    ``aggs`` are aggregations over one user's rows (in the ``group_by`` of ``evaluate``,
    on the window features), typically the cumulative sum over positions of each
    position's (expected) contribution, as a list; their names identify their content,
    so that metrics sharing an aggregate (precision, recall and f1 share the hits)
    compute it once. ``at(k)`` is the metric at cutoff k, an expression over the
    per-user frame holding the ``aggs`` columns.
    """

    aggs: dict[str, pl.Expr]
    at: Callable[[int], pl.Expr]


Kernel = Callable[..., "pl.Expr | FramePlan | GlobalPlan"]
CurveKernel = Callable[..., CurvePlan]
Scope = Literal["user", "global", "item"]
# Data-wide statistics a metric may need, computed once by evaluate (a pre-pass over
# all rows, so that they do not change when the data is split into buckets):
# "n_items" the catalog size, "rating_range" the (min, max) of the relevance column.
Need = Literal["n_items", "rating_range"]
Definedness = Literal["always", "truth", "ranking"]
"""When a per-user metric can be undefined (null).

``"always"``
    Never undefined (e.g. ``dcg``, ``num_ret``).
``"truth"``
    Whether it is defined depends only on the user's judged rows (and on the catalog
    size, one number per call): e.g. ``ndcg``, ``recall`` and ``map`` are undefined
    exactly when the user has no relevant item, whatever was recommended. Every
    system evaluated on the same truth is then averaged over the same users.
``"ranking"``
    May also depend on the recommendations or the scores (``kendall_tau`` is
    undefined for a constant score, ``novelty`` for an empty list, ``auc`` without
    ``@k`` when every candidate is relevant).
"""


@dataclass(frozen=True)
class Public:
    """How the generated ``pl.Expr`` function of a metric differs from its kernel.

    ``omit``: options the function leaves out (e.g. ``average``, whose ``"global"``
    value has no per-user expression); ``required``: options it takes without a
    default (e.g. the rating scale of ``nmae``: a stand-alone expression sees one
    user's rows only); ``rank=False``: the metric needs a score (predicted ratings), so
    the function takes ``score="score"`` and no ``rank=``.
    """

    omit: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    rank: bool = True


Bounds = tuple[float | None, float | None]
OptionCheck = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Raises:
    """An option value that makes an invalid user an error instead of a value.

    With ``option=value`` the kernel gives NaN to a user whose value is invalid for the
    reason ``reason`` (otherwise the same values as without the check, such users
    null): ``evaluate`` raises a ``ValueError`` naming the metric, how many users are
    invalid and the first few, when the per-user values are computed (at ``collect``
    for a lazy input), on every engine. RecTools' ``insufficient_handling="raise"``.
    """

    option: str
    value: str
    reason: str


SampledKind = Literal["hit", "precision", "ndcg", "dcg", "rr", "auc"]


@dataclass(frozen=True)
class Sampled:
    """A metric's one-positive form, for the sampled-metric corrections.

    ``kind``: the metric of one positive as a function of its rank (see
    :class:`polars_rankeval.metrics.sampled_estimators.Target`); ``neutral``: options
    whose value does not change it, with the values allowed (``None``: any; every other
    option must keep its default); ``cutoff``: whether the corrections need ``@k``
    (``"required"``), refuse it (``"refused"``) or take either (``"any"``). Declared
    with :func:`polars_rankeval.metrics.sampled_estimators.correctable`.
    """

    kind: SampledKind
    neutral: dict[str, tuple[Any, ...] | None] = field(default_factory=dict)
    cutoff: Literal["any", "required", "refused"] = "any"


@dataclass(frozen=True)
class HistoryItems:
    """Options under which every recommended item must be in ``history=``.

    Checked before the plan runs (:meth:`polars_rankeval.plan.job.Job.compute_statistics`),
    so that such an item fails at the call. It applies when ``when`` holds, ``history=``
    is given and the column option ``column`` is not read (the values come from the
    history); the error names the history source, the value of option ``source``
    (``"auto"`` meaning ``auto``).
    """

    when: Condition
    source: str
    column: str
    auto: str = "history_users"


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: its one declaration (kernel, options and documentation).

    ``params`` are read from the kernel's keyword-only arguments (types, choices,
    ranges and descriptions: :class:`Param`); ``ties_require`` names the tie-policy
    capabilities the kernel needs (:data:`polars_rankeval._utils.ties.Capability`);
    ``bounds`` is the range of its values (for a non-negative relevance) and
    ``higher_is_better`` its direction; ``doc`` is the numpydoc text of its public
    function without the Parameters and Returns sections, which are generated
    (``public`` says how that function differs from the kernel; ``None``: no public
    function, the metric is reached through ``evaluate``).

    Capabilities, read by the plan and the engines (which name no metric): ``curve``
    its one-pass curve kernel (:func:`~polars_rankeval.metrics.registry.register_curve`),
    ``head`` its sorted-head form (:class:`~polars_rankeval.metrics.head_form.HeadForm`),
    ``sampled`` its one-positive form for the sampled-metric corrections
    (:class:`Sampled`), ``absolute_positions`` whether it is evaluated with
    ``rank_positions="absolute"`` (its kernel reads positions only through the
    position features, never as list indices), ``repeated_ranks`` whether it also
    takes a rank repeated within a user there (it reads top-k membership only),
    ``outside_catalog(options)`` whether, under those options, recommended items
    outside the ``n_items`` catalog are allowed.

    What the kernel does, declared so that the plan is decided without running it
    (``tests/metrics/test_kernels_as_declared.py`` runs every kernel to check it):
    ``form`` what a per-user kernel returns (read from its return annotation),
    ``global_when`` the option value under which it returns a :class:`GlobalPlan`
    instead (``average=global``), ``reads`` the columns of the rows it reads under a
    fixed name (those named by an option are declared on the option:
    :class:`~polars_rankeval.metrics.params.ColumnOption`) and ``history_items`` when
    every recommended item must be in ``history=`` (:class:`HistoryItems`).
    """

    name: str
    kernel: Kernel
    family: str
    summary: str
    definition: str
    takes_k: bool
    normalized: bool
    params: dict[str, Param] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    ties_require: tuple[Capability, ...] = ()
    scope: Scope = "user"
    needs: tuple[Need, ...] = ()
    needs_met_by: tuple[str, ...] = ()
    defined: Definedness = "ranking"
    curve: CurveKernel | None = None
    higher_is_better: bool | None = True
    bounds: Bounds = (None, None)
    doc: str = ""
    public: Public | None = None
    check: OptionCheck | None = None
    raises: Raises | None = None
    head: HeadForm | None = None
    sampled: Sampled | None = None
    absolute_positions: bool = False
    repeated_ranks: bool = False
    outside_catalog: Callable[[dict[str, Any]], bool] | None = None
    form: Form = "expression"
    global_when: tuple[str, Any] | None = None
    reads: tuple[str, ...] = ()
    history_items: HistoryItems | None = None

    @property
    def truth_defined(self) -> bool:
        """Whether the users it is defined for depend only on the truth (or on nothing)."""
        return self.defined in ("always", "truth")

    @property
    def tie_policies(self) -> tuple[str, ...]:
        """The names of the tie policies offering what the kernel requires."""
        return supported(self.ties_require)

    def check_ties(self, ties: str | Ties) -> Ties:
        """The tie policy, or the one "does not support ties=" error."""
        return check_supported(self.name, self.ties_require, ties)


@dataclass(frozen=True)
class Metric:
    """A metric bound to its cutoff and options; ``name`` is the canonical string.

    ``cutoffs`` is set on the metrics :func:`expand_metric` makes from a list or range
    of cutoffs: all the cutoffs of that request, so that ``evaluate`` computes them
    together. It does not take part in equality or the name.
    """

    spec: MetricSpec
    k: int | None
    options: tuple[tuple[str, Any], ...]
    cutoffs: tuple[int, ...] = field(default=(), compare=False, repr=False)
    aggregate: str = "mean"
    """How the users' values are aggregated (``aggregate=`` in the grammar; see
    :mod:`polars_rankeval.metrics.aggregate`): not an option of the kernel."""

    @property
    def base_name(self) -> str:
        """The canonical name without the cutoff, e.g. ``ndcg(gain=exp)``."""
        return self.name.split("@", 1)[0]

    @property
    def needs(self) -> tuple[Need, ...]:
        """The data-wide statistics this metric reads (:attr:`MetricSpec.needs`).

        None when its options give them all (:attr:`MetricSpec.needs_met_by`:
        ``err(max_grade=4)`` reads no rating range).
        """
        given = self.spec.needs_met_by
        if given and all(dict(self.options).get(name) is not None for name in given):
            return ()
        return self.spec.needs

    @functools.cached_property
    def name(self) -> str:
        """Canonical name: sorted non-default options, then ``@k``.

        Computed once per metric (it is read many times while a plan is built: for each
        of the 5,000 metrics of ``ndcg@1..5000`` too).
        """
        shown = [
            f"{key}={format_value(value)}"
            for key, value in self.options
            if value != self.spec.params[key].default
        ]
        if self.aggregate != _aggregate.DEFAULT:
            shown.append(f"{_aggregate.OPTION}={self.aggregate}")
        text = self.spec.name
        if shown:
            text += "(" + ",".join(sorted(shown)) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    @property
    def raise_reason(self) -> str | None:
        """Why a NaN per-user value is an error (:class:`Raises`), or ``None``."""
        raises = self.spec.raises
        if raises is None or dict(self.options).get(raises.option) != raises.value:
            return None
        return raises.reason

    @property
    def kind(self) -> Kind:
        """How the plan computes it: an expression or a sub-plan per user, or partials.

        From the declaration: ``aggregate=`` other than the mean and a global or item
        scope aggregate partial sums (:class:`GlobalPlan`), as does the spec's
        ``global_when`` option value; a sampled-metric estimator (``estimator=``, see
        :class:`Sampled`) is a sub-plan; otherwise the spec's ``form``.
        """
        spec = self.spec
        if self.aggregate != _aggregate.DEFAULT:
            return "global"
        if spec.scope != "user":
            return spec.scope
        options = dict(self.options)
        when = spec.global_when
        if when is not None and options.get(when[0]) == when[1]:
            return "global"
        if spec.sampled is not None and options.get("estimator") is not None:
            return "frame"
        return "frame" if spec.form == "frame" else "expr"

    def reads(self, present: Callable[[str], bool], history: bool) -> dict[str, str | None]:
        """The columns of the rows its kernel reads, each with the end of its missing error.

        ``present(name)``: whether the data or ``items=`` has the column; ``history``:
        whether ``history=`` is given (a column with a history fallback is then not
        read when missing). The value is the hint ending the error when the column is
        missing (``""``: none), ``None`` for a column the kernel checks itself (in
        ``items=``). In the order the kernel reads them: fixed names, then options.
        """
        options = dict(self.options)
        out: dict[str, str | None] = dict.fromkeys(self.spec.reads, "")
        for param in self.spec.params.values():
            use, name = param.column, options.get(param.name)
            if use is None or name is None or not holds(use.when, options):
                continue
            fallback = use.fallback is not None and holds(use.fallback, options)
            if fallback and history and not present(name):
                continue  # counted in history= instead
            hint = use.hint if fallback and not present(name) else ""
            out.setdefault(name, None if use.table == "items" else hint)
        return out

    def history_source(self, present: Callable[[str], bool], history: bool) -> str | None:
        """The history source whose items must cover every recommended one, or ``None``.

        See :class:`HistoryItems`; ``present`` and ``history`` as for :meth:`reads`.
        """
        need = self.spec.history_items
        options = dict(self.options)
        if need is None or not history or not holds(need.when, options):
            return None
        column = options.get(need.column)
        if column is not None and column in self.reads(present, history):
            return None
        source = options[need.source]
        return need.auto if source == "auto" else str(source)

    def plan(self, features: Features) -> pl.Expr | FramePlan | GlobalPlan:
        """The kernel's output: an expression over one user's rows, or a sub-plan."""
        self.spec.check_ties(features.tie)
        if self.aggregate != _aggregate.DEFAULT:
            raises = self.spec.raises
            if raises is not None and self.raise_reason is not None:
                msg = (
                    f"metric {self.name!r}: {raises.option}={raises.value} is checked on "
                    "the per-user values; it takes the default aggregate (the mean)"
                )
                raise ValueError(msg)
            return _aggregate.plan(self, features)
        out = self.spec.kernel(features, self.k, **dict(self.options))
        if isinstance(out, pl.Expr):
            return out.cast(pl.Float64).alias(self.name)
        return out

    def expr(self, features: Features) -> pl.Expr:
        """The metric as one expression over one user's rows."""
        out = self.plan(features)
        if not isinstance(out, pl.Expr):
            msg = (
                f"metric {self.name!r} is computed by a plan of its own "
                "; use polars_rankeval.evaluate for it"
            )
            raise ValueError(msg)
        return out

    def __str__(self) -> str:
        return self.name

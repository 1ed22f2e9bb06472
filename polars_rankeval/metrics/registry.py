"""The metric registry and the one metric-name grammar.

Grammar: ``name[(key=value,...)][@k]``, for example ``ndcg@10``,
``precision(rel=2)@5`` or ``ndcg(discount=log_clipped,gain=exp)@10``. The canonical
form sorts the parameters, leaves defaults out, and names the output column; it
round-trips through :func:`parse_metric`.

Every per-user metric also takes ``aggregate=`` (``num_ret(aggregate=sum)``), the
aggregation over users, declared once for all of them in
:mod:`polars_rankeval.metrics.aggregate`; it is a field of :class:`Metric`, not an option of
the kernel.

The cutoff may also be a list or a range of cutoffs, ``ndcg@[1,5,10]``, ``ndcg@1..100``
or both (``ndcg@[1..10,20,50]``): :func:`expand_metric` turns it into one metric per
cutoff (canonical names ``ndcg@1``, ``ndcg@5``, ...), which ``evaluate`` computes in one
pass when the metric has a curve kernel (see :class:`CurvePlan`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import inspect
import math
import re
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

import polars as pl

import polars_rankeval.metrics.aggregate as _aggregate
from polars_rankeval._utils.ties import POLICIES, Capability, Ties, check_supported, supported
from polars_rankeval._utils.types import integer, make_columns
from polars_rankeval.metrics.features import Features

ParamKind = Literal["int", "float", "str", "bool"]
MAX_INT_OPTION = 2**32
"""Largest cutoff ``@k`` (and integer option): longer than any list Polars indexes."""
MAX_FLOAT_OPTION = 1e100
"""Largest magnitude of a float option: beyond it products and squares overflow."""
Combine = Literal["sum", "min", "max"]


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
class Interval:
    """The range of a numeric option, declared next to it in the kernel's signature.

    ``rel: Annotated[float, Interval(0, None, closed="neither"), "threshold"] = 1.0``;
    ``None`` is an open end. It renders its own text (``> 0``, ``in [0, 1]``) for the
    error, the docs and the listing, and :meth:`outside` gives values it rejects (the
    registry-driven tests try each of them on every metric).
    """

    low: float | None
    high: float | None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def __contains__(self, value: float) -> bool:
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        return not (
            self.high is not None and (value > self.high or (value == self.high and not right))
        )

    @property
    def text(self) -> str:
        """``> 0``, ``>= 0``, ``in [0, 1]``, ``in (0, 1)``, ..."""
        low, high = _num(self.low), _num(self.high)
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.high is None:
            return f"{'>=' if left else '>'} {low}"
        if self.low is None:
            return f"{'<=' if right else '<'} {high}"
        return f"in {'[' if left else '('}{low}, {high}{']' if right else ')'}"

    def outside(self) -> list[float]:
        """Values out of the range: at an open end and beyond each end."""
        out: list[float] = []
        if self.low is not None:
            out += [self.low - 1.0] + ([] if self.closed in ("both", "left") else [self.low])
        if self.high is not None:
            out += [self.high + 1.0] + ([] if self.closed in ("both", "right") else [self.high])
        return [float(v) for v in out]


def _num(value: float | None) -> str:
    return "" if value is None else (str(int(value)) if float(value).is_integer() else str(value))


@dataclass(frozen=True)
class Param:
    """One keyword option of a metric, read from the kernel's signature.

    ``kind`` and ``choices`` come from the annotation (``Literal`` gives choices;
    ``X | None`` makes it ``optional``); an ``Annotated`` annotation may add an
    :class:`Interval` and a one-line description (a plain string).
    """

    name: str
    default: Any
    kind: ParamKind
    choices: tuple[str, ...] | None = None
    optional: bool = False
    interval: Interval | None = None
    doc: str = ""

    @property
    def values(self) -> str:
        """The accepted values in words, for docs and listings."""
        if self.choices:
            text = " | ".join(self.choices)
        else:
            text = {"int": "an integer", "float": "a number", "bool": "true | false"}.get(
                self.kind, "a column name"
            )
            if self.interval is not None:
                text += f" {self.interval.text}"
        return text + (" (or none)" if self.optional and not self.choices else "")

    def coerce(self, metric: str, value: Any, *, text: bool = False) -> Any:
        """Check and convert a value for this option: a Python value, or grammar text.

        ``text``: ``value`` is the text of a metric name (``"3"`` in ``inst(depth=3)``);
        otherwise an integer option takes a Python or NumPy integer only
        (:func:`polars_rankeval._utils.types.integer`), never ``"3"`` nor ``3.0``.
        """
        where = f"parameter {self.name!r} of metric {metric!r}"
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            msg = f"{where} cannot be None"
            raise ValueError(msg)
        if self.choices is not None:
            if value not in self.choices:
                msg = f"{where} must be one of {sorted(self.choices)}, got {value!r}"
                raise ValueError(msg)
            return value
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            msg = f"{where} must be true or false, got {value!r}"
            raise TypeError(msg)
        if self.kind == "int":
            number = _text_int(where, value) if text else integer(where, value)
            return self._within(where, _int_range(where, number))
        if self.kind == "float":
            try:
                out = float(value)
            except (TypeError, ValueError):
                msg = f"{where} must be a number, got {value!r}"
                raise TypeError(msg) from None
            if isinstance(value, bool) or not math.isfinite(out):
                msg = f"{where} must be a finite number, got {value!r}"
                raise ValueError(msg)
            if abs(out) > MAX_FLOAT_OPTION:
                msg = f"{where} must lie within +-{MAX_FLOAT_OPTION:g}, got {value!r}"
                raise ValueError(msg)
            return self._within(where, out)
        return str(value)

    def _within(self, where: str, value: float) -> Any:
        if self.interval is not None and value not in self.interval:
            msg = f"{where} must be {self.interval.text}, got {value!r}"
            raise ValueError(msg)
        return value


def _text_int(where: str, value: Any) -> int:
    """An integer option written in a metric name (``"3"``, ``"-2"``)."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value)
    msg = f"{where} must be an integer, got {value!r}"
    raise TypeError(msg)


def _int_range(where: str, value: int) -> int:
    if abs(value) > MAX_INT_OPTION:
        msg = f"{where} must lie within +-2^32 = {MAX_INT_OPTION}, got {value!r}"
        raise ValueError(msg)
    return value


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
    defined: Definedness = "ranking"
    curve: CurveKernel | None = None
    higher_is_better: bool | None = True
    bounds: Bounds = (None, None)
    doc: str = ""
    public: Public | None = None
    check: OptionCheck | None = None
    raises: Raises | None = None

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

    @functools.cached_property
    def name(self) -> str:
        """Canonical name: sorted non-default options, then ``@k``.

        Computed once per metric (it is read many times while a plan is built: for each
        of the 5,000 metrics of ``ndcg@1..5000`` too).
        """
        shown = [
            f"{key}={_fmt(value)}"
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


_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


def _param_from(name: str, parameter: inspect.Parameter, hint: Any) -> Param:
    interval: Interval | None = None
    doc = ""
    if get_origin(hint) is Annotated:
        hint, *extras = get_args(hint)
        for extra in extras:
            if isinstance(extra, Interval):
                interval = extra
            elif isinstance(extra, str):
                doc = extra
    optional = False
    args = get_args(hint)
    if get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        non_none = [a for a in args if a is not type(None)]
        optional = len(non_none) < len(args)
        hint = non_none[0] if len(non_none) == 1 else hint
        if get_origin(hint) is Annotated:  # Annotated[float, ...] | None
            return dataclasses.replace(_param_from(name, parameter, hint), optional=optional)
    if get_origin(hint) is Literal:
        return Param(name, parameter.default, "str", tuple(get_args(hint)), optional, None, doc)
    kind: ParamKind = {bool: "bool", int: "int", float: "float"}.get(hint, "str")  # type: ignore[assignment]
    return Param(name, parameter.default, kind, None, optional, interval, doc)


def register(
    name: str,
    *,
    family: str,
    summary: str,
    definition: str,
    takes_k: bool = True,
    normalized: bool = True,
    aliases: Iterable[str] = (),
    ties_require: Iterable[Capability] = (),
    scope: Scope = "user",
    needs: Iterable[Need] = (),
    defined: Definedness = "ranking",
    higher_is_better: bool | None = True,
    bounds: Bounds | None = None,
    doc: str = "",
    public: Public | None = None,
    check: OptionCheck | None = None,
    raises: Raises | None = None,
) -> Callable[[Kernel], Kernel]:
    """Declare a metric: its kernel ``kernel(features, k, *, options...)`` and the rest.

    This is the one place a metric is declared. The kernel returns a ``pl.Expr`` over
    one user's rows (most metrics), a :class:`FramePlan` (a per-user value from a
    sub-plan) or, with ``scope="global"``, a :class:`GlobalPlan` (one value per by
    group). With ``scope="item"`` it returns a :class:`GlobalPlan` whose ``group``
    includes the item column and whose ``finalize`` keeps it: one value per (by, item),
    the output of ``evaluate(per_item=True)``.

    The kernel's keyword-only arguments are the metric's options: their annotations
    give the type, the choices (``Literal``), the range (an :class:`Interval` in
    ``Annotated``) and a one-line description (a string in ``Annotated``); see
    :class:`Param`. ``normalized`` metrics lie in [0, 1] and score 1 for a perfect
    ranking; ``bounds`` (default ``(0, 1)`` when normalized, else ``(0, None)``) and
    ``higher_is_better`` are read by the property tests. ``ties_require`` lists the
    capabilities the kernel needs of a tie policy (none: every policy). ``needs``
    names the data-wide statistics the kernel reads (``features.n_items``,
    ``features.rating_range``); a kernel reading one while it builds its expression
    gets it added (a probe at registration), one read later inside a plan's function
    must declare it. ``scope`` documents whether the metric has a value per user; a
    kernel may return a :class:`GlobalPlan` for some option values only (e.g.
    ``average="global"``). ``defined`` declares when a per-user value can be undefined
    (:data:`Definedness`; the default ``"ranking"`` claims nothing);
    ``tests/plan/test_empty_policy.py`` checks every declaration. ``check`` runs on the
    bound options for rules across options (``discount`` and ``half_life``).
    ``raises`` declares an option value under which invalid users are an error
    (:class:`Raises`).

    ``doc`` (numpydoc: a summary line, prose, ``Examples``) makes the metric a public
    ``pl.Expr`` function, generated into :mod:`polars_rankeval.metrics.functions` by
    ``scripts/gen_metric_functions.py`` with its Parameters and Returns sections
    built from this declaration; ``public`` adjusts that function (:class:`Public`).
    """

    def decorate(kernel: Kernel) -> Kernel:
        hints = typing.get_type_hints(kernel, include_extras=True)
        params = {
            p.name: _param_from(p.name, p, hints.get(p.name, str))
            for p in inspect.signature(kernel).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        if name in _REGISTRY or name in _ALIASES:
            msg = f"metric {name!r} is already registered"
            raise ValueError(msg)
        requires = tuple(ties_require)
        if not supported(requires):
            msg = f"metric {name!r} requires {requires}, which no tie policy offers"
            raise ValueError(msg)
        declared = tuple(needs)
        read = _probe_needs(kernel, takes_k, requires, params)
        spec = MetricSpec(
            name,
            kernel,
            family,
            summary,
            definition,
            takes_k,
            normalized,
            params,
            tuple(aliases),
            requires,
            scope,
            (*declared, *(n for n in read if n not in declared)),
            defined,
            None,
            higher_is_better,
            bounds if bounds is not None else ((0.0, 1.0) if normalized else (0.0, None)),
            inspect.cleandoc(doc) if doc else "",
            _public(public, kernel) if doc else None,
            check,
            raises,
        )
        _REGISTRY[name] = spec
        for alias in spec.aliases:
            _ALIASES[alias] = name
        return kernel

    return decorate


def _public(public: Public | None, kernel: Kernel) -> Public:
    """The public function's declaration, without the kernel's plan-only options.

    A kernel may name options that need the whole plan of ``evaluate`` (a sub-plan),
    which a stand-alone expression cannot give, in ``__prk_plan_options__`` (see
    :func:`polars_rankeval.metrics.sampled_estimators.correctable`).
    """
    out = public or Public()
    plan_only = tuple(getattr(kernel, "__prk_plan_options__", ()))
    if plan_only:
        out = dataclasses.replace(out, omit=(*out.omit, *plan_only))
    return out


def _probe_needs(
    kernel: Kernel, takes_k: bool, requires: tuple[Capability, ...], params: dict[str, Param]
) -> tuple[Need, ...]:
    """The data-wide statistics a kernel reads while it builds its expression.

    The kernel runs once on a recording provider with its default options (building
    expressions only: no data). A kernel that fails on the probe (it needs an option
    or a column the probe cannot give) claims nothing beyond its declaration.
    """
    probe = _Probe(make_columns(), POLICIES[supported(requires)[0]], keys=None)
    defaults = {key: param.default for key, param in params.items()}
    with contextlib.suppress(Exception):  # a probe only: the declaration stands
        kernel(probe, 3 if takes_k else None, **defaults)
    return tuple(dict.fromkeys(probe.__dict__.get("read", [])))


class _Probe(Features):
    """A provider recording the data-wide statistics a kernel reads (placeholders)."""

    read: list[Need]

    @property
    def n_items(self) -> pl.Expr:
        self.__dict__.setdefault("read", []).append("n_items")
        return pl.lit(1.0)

    @property
    def rating_range(self) -> tuple[float, float]:
        self.__dict__.setdefault("read", []).append("rating_range")
        return (0.0, 1.0)


def register_curve(name: str) -> Callable[[CurveKernel], CurveKernel]:
    """Register the curve kernel ``curve(features, ks, *, options...)`` of a metric.

    It returns a :class:`CurvePlan` giving the metric at every cutoff of ``ks`` from
    shared per-user aggregates; its options are the metric's own.
    """

    def decorate(kernel: CurveKernel) -> CurveKernel:
        spec = _REGISTRY[name]
        plan_only = tuple(getattr(spec.kernel, "__prk_plan_options__", ()))
        curve = kernel
        if plan_only:  # at their defaults here: a sub-plan is never a curve

            def curve(features: Features, ks: tuple[int, ...], **options: Any) -> CurvePlan:
                kept = {key: v for key, v in options.items() if key not in plan_only}
                return kernel(features, ks, **kept)

        _REGISTRY[name] = dataclasses.replace(spec, curve=curve)
        return kernel

    return decorate


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        # Integers as such (rel=2), but 1e+100 rather than a 101-digit number.
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    return str(value)


def get_spec(name: str) -> MetricSpec:
    """Look a metric up by name or alias, with a "did you mean" on failure."""
    _ensure_loaded()
    key = _ALIASES.get(name, name)
    if key in _REGISTRY:
        return _REGISTRY[key]
    known = sorted([*_REGISTRY, *_ALIASES])
    close = [name.lower()] if name.lower() in known else []
    close = close or difflib.get_close_matches(name, known, n=1)
    raise ValueError(_unknown(name, close[0] if close else None))


def _unknown(name: str, suggestion: str | None) -> str:
    """The one message for an unknown metric: the suggestion if any, and the listing."""
    if suggestion is None:
        return f"unknown metric {name!r}; see {_LISTING}"
    return f"unknown metric {name!r}; did you mean {suggestion!r}? (see {_LISTING})"


_LISTING = "polars_rankeval.list_metrics() for every metric"
_PEERS = {
    "hr": "hit_rate",
    "hit": "hit_rate",
    "hits": "hit_rate",
    "hitrate": "hit_rate",
    "prec": "precision",
    "rec": "recall",
    "rr": "mrr",
    "reciprocal_rank": "mrr",
    "mean_reciprocal_rank": "mrr",
    "mean_average_precision": "map",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
}
"""Other tools' metric names (lowercase) for the suggestion of :func:`_suggest`."""

_SPELLED_CUTOFF = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*?)(?:_at_|_cut_|_cut\.|\.|_)(?P<k>\d+)$"
)
"""``ndcg_at_10``, ``ndcg_cut_10``, ``ndcg_cut.10``, ``P.5``, ``P_10``: a cutoff spelled
as other tools do."""


def _suggest(text: str) -> str | None:
    """The canonical name of an unknown metric ``text`` in another spelling, if any.

    Tries ``text`` in lowercase, its cutoff written as ``_at_k``, ``_cut_k``,
    ``_cut.k``, ``.k`` or ``_k`` (trec_eval, ranx, TorchMetrics-like names) moved to
    ``@k``, and peers' names (``HR`` for ``hit_rate``); then the closest registered
    name. The grammar itself stays strict: this only words the error.
    """
    stripped = text.strip()
    match = _GRAMMAR.match(stripped)
    if match is not None:
        name, params, k = match["name"], match["params"], match["k"]
    else:
        spelled = _SPELLED_CUTOFF.match(stripped)
        if spelled is None:
            return None
        name, params, k = spelled["name"], None, spelled["k"]
    spelled = _SPELLED_CUTOFF.match(name) if k is None else None
    if spelled is not None:
        name, k = spelled["name"], spelled["k"]
    candidates = [name, name.lower(), _PEERS.get(name.lower(), name)]
    candidates += difflib.get_close_matches(name, sorted([*_REGISTRY, *_ALIASES]), n=1)
    tail = (f"({params})" if params is not None else "") + (f"@{k}" if k is not None else "")
    for candidate in candidates:
        try:
            metrics = _expand(candidate + tail)
        except (TypeError, ValueError):
            continue
        if len(metrics) == 1:
            return metrics[0].name
    return None


def bind(name: str, k: int | None = None, **options: Any) -> Metric:
    """Bind a metric name to a cutoff and options, checking them against its signature.

    The cutoff and integer options are Python or NumPy integers (not ``"10"``, nor
    ``10.0``: a ``TypeError``); :func:`parse_metric` reads them from text.
    """
    return _bind(name, k, options, text=False)


def _bind(name: str, k: int | None, options: dict[str, Any], *, text: bool) -> Metric:
    """:func:`bind`; ``text``: the options are the text of a metric name."""
    spec = get_spec(name)
    if k is not None:
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got k={k!r}"
            raise ValueError(msg)
        k = _int_range(
            f"cutoff k of metric {spec.name!r}",
            integer(f"cutoff k of metric {spec.name!r}", k, what="a positive integer"),
        )
        if k <= 0:
            msg = f"cutoff k of metric {spec.name!r} must be a positive integer, got {k}"
            raise ValueError(msg)
    options = dict(options)
    aggregate = _aggregate.DEFAULT
    if _aggregate.OPTION in options and _aggregate.OPTION not in spec.params:
        aggregate = _aggregate.check(
            spec.name, spec.scope, spec.takes_k, options.pop(_aggregate.OPTION), k
        )
    for key in options:
        if key not in spec.params:
            extra = [_aggregate.OPTION] if spec.scope == "user" else []
            valid = ", ".join(sorted([*spec.params, *extra])) or "none"
            msg = f"unknown parameter {key!r} for metric {spec.name!r}; valid parameters: {valid}"
            raise ValueError(msg)
    values = {
        key: param.coerce(spec.name, options[key], text=text) if key in options else param.default
        for key, param in spec.params.items()
    }
    if spec.check is not None:
        spec.check(spec.name, values)
    return Metric(spec, k, tuple(sorted(values.items())), aggregate=aggregate)


_GRAMMAR = re.compile(
    r"""^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*
        (?:\((?P<params>[^()]*)\))?\s*
        (?:@\s*(?P<k>[^@]*?))?\s*$""",
    re.VERBOSE,
)
MAX_CUTOFFS = 10_000
"""The most cutoffs one list or range may name (``ndcg@1..10000``)."""


def parse_cutoffs(text: str, raw: str) -> tuple[int, ...] | int:
    """The cutoff part of a metric name: an int, or a tuple for a list or range.

    ``10`` gives 10; ``1..5`` gives (1, 2, 3, 4, 5) (both ends included);
    ``[1, 5, 10]`` gives (1, 5, 10), and list items may be ranges
    (``[1..3, 10]``). Every cutoff must be a positive integer, named once.
    """
    raw = raw.strip()
    is_list = raw.startswith("[") or raw.endswith("]")
    if is_list:
        if not (raw.startswith("[") and raw.endswith("]")):
            msg = f"cutoff list in {text!r} must look like [1,5,10], got {raw!r}"
            raise ValueError(msg)
        parts = [p.strip() for p in raw[1:-1].split(",")]
        if parts == [""]:
            msg = f"cutoff list in {text!r} is empty; name at least one cutoff, e.g. [1,5,10]"
            raise ValueError(msg)
    else:
        parts = [raw]
    out: list[int] = []
    for part in parts:
        low, dots, high = part.partition("..")
        ends = [low.strip(), high.strip()] if dots else [part]
        for end in ends:
            if not re.fullmatch(r"[+-]?\d+", end):
                what = "cutoff range" if dots else "cutoff"
                msg = f"{what} in {text!r} must be a positive integer, got {part!r}"
                if dots and not end:
                    msg = f"{what} in {text!r} must look like 1..100, got {part!r}"
                raise ValueError(msg)
        values = [int(e) for e in ends]
        if not is_list and not dots:
            return values[0]  # a single cutoff: bind checks it
        if any(v <= 0 for v in values):
            msg = f"cutoffs in {text!r} must be positive integers, got {part!r}"
            raise ValueError(msg)
        if dots:
            if values[1] < values[0]:
                msg = f"cutoff range {part!r} in {text!r} is empty (its end is below its start)"
                raise ValueError(msg)
            if values[1] - values[0] + 1 > MAX_CUTOFFS:
                msg = f"cutoff range {part!r} in {text!r} names more than {MAX_CUTOFFS} cutoffs"
                raise ValueError(msg)
            out.extend(range(values[0], values[1] + 1))
        else:
            out.append(values[0])
    seen: set[int] = set()
    twice = sorted({k for k in out if k in seen or seen.add(k)})  # type: ignore[func-returns-value]
    if twice:
        msg = f"cutoffs in {text!r} name {twice} more than once"
        raise ValueError(msg)
    if len(out) > MAX_CUTOFFS:
        msg = f"{text!r} names {len(out)} cutoffs, more than {MAX_CUTOFFS}"
        raise ValueError(msg)
    return tuple(out)


def _parse(text: str) -> tuple[MetricSpec, int | tuple[int, ...] | None, dict[str, str]]:
    if re.search(r"(?<=[\w)])\[[A-Za-z_]\w*\]\s*$", text):
        msg = (
            f"cannot parse metric {text!r}: a [library] suffix names a convention; pass "
            "the library's metric names with conventions='<library>' to evaluate or compare "
            "(see polars_rankeval.conventions)"
        )
        raise ValueError(msg)
    match = _GRAMMAR.match(text)
    if match is None:
        msg = (
            f"cannot parse metric {text!r}; expected name[(key=value,...)][@k], e.g. 'ndcg@10' "
            "(or a list or range of cutoffs: 'ndcg@[1,5,10]', 'ndcg@1..100')"
        )
        raise ValueError(msg)
    spec = get_spec(match["name"])
    k: int | tuple[int, ...] | None = None
    if match["k"] is not None:
        k = parse_cutoffs(text, match["k"])
    options: dict[str, str] = {}
    if match["params"] is not None and match["params"].strip():
        for part in match["params"].split(","):
            key, eq, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or not key or not value:
                msg = f"parameter {part.strip()!r} in {text!r} must look like key=value"
                raise ValueError(msg)
            if key in options:
                msg = f"parameter {key!r} given twice in {text!r}"
                raise ValueError(msg)
            options[key] = value
    return spec, k, options


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        msg = f"a metric must be a string such as 'ndcg@10', got {type(text).__name__}"
        raise TypeError(msg)
    return text


def parse_metric(text: str | Metric) -> Metric:
    """Parse ``name[(key=value,...)][@k]`` into a bound :class:`Metric`.

    A list or range of cutoffs names several metrics: see :func:`expand_metric`
    (a one-element list such as ``ndcg@[10]`` is accepted here).

    Examples
    --------
    >>> from polars_rankeval import parse_metric
    >>> parse_metric("ndcg(gain=exp) @10").name
    'ndcg(gain=exp)@10'
    >>> parse_metric("precision(rel=2.0)@5").name
    'precision(rel=2)@5'
    >>> parse_metric("ndcg(base=2)@10").name
    'ndcg@10'
    """
    if isinstance(text, Metric):
        return text
    metrics = expand_metric(_check_text(text))
    if len(metrics) != 1:
        msg = (
            f"{text!r} names {len(metrics)} metrics (one per cutoff); use expand_metric, "
            "or pass it to evaluate, which accepts lists and ranges of cutoffs"
        )
        raise ValueError(msg)
    return metrics[0]


def expand_metric(text: str | Metric) -> list[Metric]:
    """Parse a metric name whose cutoff may be a list or range: one metric per cutoff.

    ``ndcg@[1,5,10]`` and ``ndcg@1..100`` (both ends included; list items may be
    ranges, ``ndcg@[1..10,20]``) give ``ndcg@1``, ``ndcg@5``, ... in the order named.
    :func:`polars_rankeval.evaluate` computes the cutoffs of one such request in one
    pass when the metric has a curve kernel (precision, recall, f1, hit_rate, mrr, map,
    dcg, ndcg), and as separate metrics otherwise. A single cutoff gives one metric.

    Examples
    --------
    >>> from polars_rankeval.metrics.registry import expand_metric
    >>> [m.name for m in expand_metric("ndcg(gain=exp)@[1,5,10]")]
    ['ndcg(gain=exp)@1', 'ndcg(gain=exp)@5', 'ndcg(gain=exp)@10']
    >>> [m.name for m in expand_metric("P@1..3")]
    ['precision@1', 'precision@2', 'precision@3']
    """
    if isinstance(text, Metric):
        return [text]
    try:
        return _expand(_check_text(text))
    except ValueError as error:
        if not str(error).startswith(("unknown metric", "cannot parse metric")):
            raise
        better = _suggest(text)
        if better is None:
            raise
        raise ValueError(_unknown(text, better)) from None


def _expand(text: str) -> list[Metric]:
    """:func:`expand_metric` of a string, without the suggestion of its error."""
    spec, k, options = _parse(text)
    if isinstance(k, tuple):
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got cutoffs in {text!r}"
            raise ValueError(msg)
        first = _bind(spec.name, k[0], options, text=True)
        _bind(spec.name, max(k), options, text=True)  # the same checks for the largest cutoff
        return [dataclasses.replace(first, k=cut, cutoffs=k) for cut in k]
    return [_bind(spec.name, k, options, text=True)]


def list_metrics() -> pl.DataFrame:
    """Every registered metric with its family, options and one-line definition.

    Options show their default and their choices or range (``rel=1 (> 0)``); ``ties``
    the tie policies the metric supports; ``higher_is_better`` its direction (null:
    none, e.g. counts).

    Examples
    --------
    >>> from polars_rankeval import list_metrics
    >>> "ndcg" in list_metrics()["name"].to_list()
    True
    """
    _ensure_loaded()
    rows = []
    for spec in _REGISTRY.values():
        options = ", ".join(
            f"{p.name}={_fmt(p.default)}"
            + (
                f" ({'|'.join(p.choices)})"
                if p.choices
                else (f" ({p.interval.text})" if p.interval else "")
            )
            for p in spec.params.values()
        )
        rows.append(
            {
                "name": spec.name,
                "family": spec.family,
                "cutoff": spec.takes_k,
                "options": options,
                "aliases": ", ".join(spec.aliases),
                "defined": spec.defined if spec.scope == "user" else None,
                "ties": ", ".join(spec.tie_policies),
                "higher_is_better": spec.higher_is_better,
                "summary": spec.summary,
                "definition": spec.definition,
            }
        )
    return pl.DataFrame(rows)


def registered() -> dict[str, MetricSpec]:
    """The registry itself (name -> spec), for generic tests and docs."""
    _ensure_loaded()
    return dict(_REGISTRY)


def _ensure_loaded() -> None:
    # Importing the metric families registers them.
    import polars_rankeval.metrics  # noqa: F401

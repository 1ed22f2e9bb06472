"""The metric registry and the one metric-name grammar.

Grammar: ``name[(key=value,...)][@k]``, for example ``ndcg@10``,
``precision(rel=2)@5`` or ``ndcg(discount=log_clipped,gain=exp)@10``. The canonical
form sorts the parameters, leaves defaults out, and names the output column; it
round-trips through :func:`parse_metric`.

The cutoff may also be a list or a range of cutoffs, ``ndcg@[1,5,10]``, ``ndcg@1..100``
or both (``ndcg@[1..10,20,50]``): :func:`expand_metric` turns it into one metric per
cutoff (canonical names ``ndcg@1``, ``ndcg@5``, ...), which ``evaluate`` computes in one
pass when the metric has a curve kernel (see :class:`CurvePlan`).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import math
import re
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

import polars as pl

from polars_rankeval._types import TIE_POLICIES

if typing.TYPE_CHECKING:
    from polars_rankeval._features import Features

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
class Param:
    """One keyword option of a metric."""

    name: str
    default: Any
    kind: ParamKind
    choices: tuple[str, ...] | None = None
    optional: bool = False

    def coerce(self, metric: str, value: Any) -> Any:
        """Check and convert a value (a Python value or grammar text) for this option."""
        where = f"parameter {self.name!r} of metric {metric!r}"
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            msg = f"{where} cannot be None"
            raise ValueError(msg)
        if self.choices is not None:
            if value not in self.choices:
                msg = f"{where} must be one of {set(self.choices)!r}, got {value!r}"
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
            return _to_int(where, value)
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
            return out
        return str(value)


def _to_int(where: str, value: Any) -> int:
    if isinstance(value, bool):
        msg = f"{where} must be an integer, got {value!r}"
        raise TypeError(msg)
    integral = (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip())
    )
    if isinstance(value, int):
        out = value
    elif integral:
        out = int(value)
    else:
        msg = f"{where} must be an integer, got {value!r}"
        raise TypeError(msg)
    if abs(out) > MAX_INT_OPTION:
        msg = f"{where} must lie within +-2^32 = {MAX_INT_OPTION}, got {value!r}"
        raise ValueError(msg)
    return out


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric: its kernel, options and documentation."""

    name: str
    kernel: Kernel
    family: str
    summary: str
    definition: str
    takes_k: bool
    normalized: bool
    params: dict[str, Param] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    tie_policies: tuple[str, ...] = TIE_POLICIES
    scope: Scope = "user"
    needs: tuple[Need, ...] = ()
    defined: Definedness = "ranking"
    curve: CurveKernel | None = None

    @property
    def truth_defined(self) -> bool:
        """Whether the users it is defined for depend only on the truth (or on nothing)."""
        return self.defined in ("always", "truth")


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

    @property
    def base_name(self) -> str:
        """The canonical name without the cutoff, e.g. ``ndcg(gain=exp)``."""
        return self.name.split("@", 1)[0]

    @property
    def name(self) -> str:
        """Canonical name: sorted non-default options, then ``@k``."""
        shown = [
            f"{key}={_fmt(value)}"
            for key, value in self.options
            if value != self.spec.params[key].default
        ]
        text = self.spec.name
        if shown:
            text += "(" + ",".join(sorted(shown)) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    def plan(self, features: Features) -> pl.Expr | FramePlan | GlobalPlan:
        """The kernel's output: an expression over one user's rows, or a sub-plan."""
        if features.ties not in self.spec.tie_policies:
            msg = (
                f"metric {self.spec.name!r} does not support ties={features.ties!r}; "
                f"supported: {', '.join(self.spec.tie_policies)}"
            )
            raise ValueError(msg)
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
    optional = False
    args = get_args(hint)
    if get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        non_none = [a for a in args if a is not type(None)]
        optional = len(non_none) < len(args)
        hint = non_none[0] if len(non_none) == 1 else hint
    if get_origin(hint) is Literal:
        return Param(name, parameter.default, "str", tuple(get_args(hint)), optional)
    kind: ParamKind = {bool: "bool", int: "int", float: "float"}.get(hint, "str")  # type: ignore[assignment]
    return Param(name, parameter.default, kind, None, optional)


def register(
    name: str,
    *,
    family: str,
    summary: str,
    definition: str,
    takes_k: bool = True,
    normalized: bool = True,
    aliases: Iterable[str] = (),
    tie_policies: tuple[str, ...] = TIE_POLICIES,
    scope: Scope = "user",
    needs: Iterable[Need] = (),
    defined: Definedness = "ranking",
) -> Callable[[Kernel], Kernel]:
    """Register a metric kernel ``kernel(features, k, *, options...)``.

    The kernel returns a ``pl.Expr`` over one user's rows (most metrics), a
    :class:`FramePlan` (a per-user value from a sub-plan) or, with
    ``scope="global"``, a :class:`GlobalPlan` (one value per by group). With
    ``scope="item"`` it returns a :class:`GlobalPlan` whose ``group`` includes the
    item column and whose ``finalize`` keeps it: one value per (by, item), the
    output of ``evaluate(per_item=True)``.
    ``normalized`` metrics lie in [0, 1] and score 1 for a perfect ranking;
    ``tie_policies`` lists the tie policies the kernel implements (all by default);
    ``needs`` names the data-wide statistics the kernel reads from the features
    (``features.n_items``, ``features.rating_range``). ``scope`` documents whether
    the metric has a value per user; a kernel may return a :class:`GlobalPlan` for
    some option values only (e.g. ``average="global"``). ``defined`` declares when a
    per-user value can be undefined (:data:`Definedness`; the default ``"ranking"``
    claims nothing); ``tests/test_empty_policy.py`` checks every declaration.
    """

    def decorate(kernel: Kernel) -> Kernel:
        hints = typing.get_type_hints(kernel)
        params = {
            p.name: _param_from(p.name, p, hints.get(p.name, str))
            for p in inspect.signature(kernel).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
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
            tuple(tie_policies),
            scope,
            tuple(needs),
            defined,
        )
        if name in _REGISTRY or name in _ALIASES:
            msg = f"metric {name!r} is already registered"
            raise ValueError(msg)
        _REGISTRY[name] = spec
        for alias in spec.aliases:
            _ALIASES[alias] = name
        return kernel

    return decorate


def register_curve(name: str) -> Callable[[CurveKernel], CurveKernel]:
    """Register the curve kernel ``curve(features, ks, *, options...)`` of a metric.

    It returns a :class:`CurvePlan` giving the metric at every cutoff of ``ks`` from
    shared per-user aggregates; its options are the metric's own.
    """

    def decorate(kernel: CurveKernel) -> CurveKernel:
        spec = _REGISTRY[name]
        _REGISTRY[name] = dataclasses.replace(spec, curve=kernel)
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
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    msg = f"unknown metric {name!r}{hint} valid metrics: {', '.join(sorted(_REGISTRY))}"
    raise ValueError(msg)


def bind(name: str, k: int | None = None, **options: Any) -> Metric:
    """Bind a metric name to a cutoff and options, checking them against its signature."""
    spec = get_spec(name)
    if k is not None:
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got k={k!r}"
            raise ValueError(msg)
        k = _to_int(f"cutoff k of metric {spec.name!r}", k)
        if k <= 0:
            msg = f"cutoff k of metric {spec.name!r} must be a positive integer, got {k}"
            raise ValueError(msg)
    for key in options:
        if key not in spec.params:
            valid = ", ".join(sorted(spec.params)) or "none"
            msg = f"unknown parameter {key!r} for metric {spec.name!r}; valid parameters: {valid}"
            raise ValueError(msg)
    values = {
        key: param.coerce(spec.name, options[key]) if key in options else param.default
        for key, param in spec.params.items()
    }
    _validate_options(spec.name, values)
    return Metric(spec, k, tuple(sorted(values.items())))


def _validate_options(metric: str, values: dict[str, Any]) -> None:
    """Cross-option checks shared by every metric (ranges and combinations)."""
    if "base" in values and values["base"] <= 1:
        msg = f"parameter 'base' of metric {metric!r} must be > 1, got {values['base']!r}"
        raise ValueError(msg)
    if "rel" in values and values["rel"] <= 0:
        msg = f"parameter 'rel' of metric {metric!r} must be > 0, got {values['rel']!r}"
        raise ValueError(msg)
    if "level" in values and not 0.0 <= values["level"] <= 1.0:
        msg = f"parameter 'level' of metric {metric!r} must be in [0, 1], got {values['level']!r}"
        raise ValueError(msg)
    if "p" in values and not 0.0 < values["p"] < 1.0:
        msg = f"parameter 'p' of metric {metric!r} must be in (0, 1), got {values['p']!r}"
        raise ValueError(msg)
    if "beta" in values and values["beta"] <= 0:
        msg = f"parameter 'beta' of metric {metric!r} must be > 0, got {values['beta']!r}"
        raise ValueError(msg)
    if "mult" in values and values["mult"] <= 0:
        msg = f"parameter 'mult' of metric {metric!r} must be > 0, got {values['mult']!r}"
        raise ValueError(msg)
    if "discount" in values:
        half_life = values.get("half_life")
        if values["discount"] == "half_life":
            if half_life is None or half_life <= 1:
                msg = (
                    f"metric {metric!r} with discount='half_life' needs half_life > 1, "
                    f"got {half_life!r}"
                )
                raise ValueError(msg)
        elif half_life is not None:
            msg = (
                f"parameter 'half_life' of metric {metric!r} only applies to "
                f"discount='half_life', got discount={values['discount']!r}"
            )
            raise ValueError(msg)


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
    >>> from polars_rankeval.registry import expand_metric
    >>> [m.name for m in expand_metric("ndcg(gain=exp)@[1,5,10]")]
    ['ndcg(gain=exp)@1', 'ndcg(gain=exp)@5', 'ndcg(gain=exp)@10']
    >>> [m.name for m in expand_metric("P@1..3")]
    ['precision@1', 'precision@2', 'precision@3']
    """
    if isinstance(text, Metric):
        return [text]
    spec, k, options = _parse(_check_text(text))
    if isinstance(k, tuple):
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got cutoffs in {text!r}"
            raise ValueError(msg)
        first = bind(spec.name, k[0], **options)
        bind(spec.name, max(k), **options)  # the same checks for the largest cutoff
        return [dataclasses.replace(first, k=cut, cutoffs=k) for cut in k]
    return [bind(spec.name, k, **options)]


def list_metrics() -> pl.DataFrame:
    """Every registered metric with its family, options and one-line definition.

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
            f"{p.name}={_fmt(p.default)}" + (f" ({'|'.join(p.choices)})" if p.choices else "")
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

"""The metric registry: :func:`register` declares a metric, :func:`get_spec` finds it.

Each metric is declared once, by ``register(...)`` on its kernel in its family module
(and ``register_curve`` for its one-pass curve kernel); the declaration is a
:class:`~polars_rankeval.metrics.spec.MetricSpec`.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import typing
from collections.abc import Callable, Iterable
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval._utils.ties import Capability, supported
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.head_form import HeadForm
from polars_rankeval.metrics.params import format_value, param_from
from polars_rankeval.metrics.spec import (
    Bounds,
    CurveKernel,
    CurvePlan,
    Definedness,
    Form,
    FramePlan,
    GlobalPlan,
    HistoryItems,
    Kernel,
    MetricSpec,
    Need,
    OptionCheck,
    Public,
    Raises,
    Scope,
)

_REGISTRY: dict[str, MetricSpec] = {}
_ALIASES: dict[str, str] = {}


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
    needs_met_by: Iterable[str] = (),
    defined: Definedness = "ranking",
    higher_is_better: bool | None = True,
    bounds: Bounds | None = None,
    doc: str = "",
    public: Public | None = None,
    check: OptionCheck | None = None,
    raises: Raises | None = None,
    head: HeadForm | None = None,
    absolute_positions: bool = False,
    repeated_ranks: bool = False,
    outside_catalog: Callable[[dict[str, Any]], bool] | None = None,
    global_when: tuple[str, Any] | None = None,
    reads: Iterable[str] = (),
    history_items: HistoryItems | None = None,
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
    ``features.rating_range``): ``evaluate`` computes those before the plan is built
    (``tests/metrics/test_kernels_as_declared.py`` checks that every kernel reads only
    what it declares); ``needs_met_by``: options that, all given, supply them instead
    (``max_grade``: then no rating range is read). ``scope`` documents whether the
    metric has a value per user; a kernel may return a :class:`GlobalPlan` for some
    option values only (e.g. ``average="global"``). ``defined`` declares when a
    per-user value can be undefined (:data:`Definedness`; the default ``"ranking"``
    claims nothing);
    ``tests/plan/test_empty_policy.py`` checks every declaration. ``check`` runs on the
    bound options for rules across options (``discount`` and ``half_life``).
    ``raises`` declares an option value under which invalid users are an error
    (:class:`Raises`).

    Capabilities (:class:`~polars_rankeval.metrics.spec.MetricSpec`): ``head`` the
    sorted-head form (:class:`~polars_rankeval.metrics.head_form.HeadForm`);
    ``absolute_positions`` and ``repeated_ranks`` what the metric takes under
    ``rank_positions="absolute"``; ``outside_catalog``: the options under which
    recommended items outside the catalog are allowed.

    What the kernel returns is its return annotation (``pl.Expr``, ``FramePlan`` or,
    with a global or item scope, ``GlobalPlan``); ``pl.Expr | GlobalPlan`` with
    ``global_when=(option, value)``, the option value giving the ``GlobalPlan``.
    ``reads`` names the columns of the rows the kernel reads under a fixed name; an
    option naming a column declares it on its annotation
    (:class:`~polars_rankeval.metrics.params.ColumnOption`); ``history_items`` when
    every recommended item must be in ``history=``
    (:class:`~polars_rankeval.metrics.spec.HistoryItems`). ``evaluate`` decides its
    plan from these, without running the kernel. The curve kernel is declared by
    :func:`register_curve` next to the others, the one-positive form by
    :func:`~polars_rankeval.metrics.sampled_estimators.correctable` on the kernel.

    ``doc`` (numpydoc: a summary line, prose, ``Examples``) makes the metric a public
    ``pl.Expr`` function, generated into :mod:`polars_rankeval.metrics.functions` by
    ``scripts/gen_metric_functions.py`` with its Parameters and Returns sections
    built from this declaration; ``public`` adjusts that function (:class:`Public`).
    """

    def decorate(kernel: Kernel) -> Kernel:
        hints = typing.get_type_hints(kernel, include_extras=True)
        params = {
            p.name: param_from(p.name, p, hints.get(p.name, str))
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
        unknown = [option for option in needs_met_by if option not in params]
        if unknown:
            msg = f"metric {name!r}: needs_met_by names {unknown[0]!r}, not one of its options"
            raise ValueError(msg)
        form = _form(name, hints.get("return"), scope, global_when)
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
            declared,
            tuple(needs_met_by),
            defined,
            None,
            higher_is_better,
            bounds if bounds is not None else ((0.0, 1.0) if normalized else (0.0, None)),
            inspect.cleandoc(doc) if doc else "",
            _public(public, kernel) if doc else None,
            check,
            raises,
            head=head,
            sampled=getattr(kernel, "__prk_sampled__", None),
            absolute_positions=absolute_positions,
            repeated_ranks=repeated_ranks,
            outside_catalog=outside_catalog,
            form=form,
            global_when=global_when,
            reads=tuple(reads),
            history_items=history_items,
        )
        _REGISTRY[name] = spec
        for alias in spec.aliases:
            _ALIASES[alias] = name
        return kernel

    return decorate


def _form(name: str, returns: Any, scope: Scope, global_when: tuple[str, Any] | None) -> Form:
    """What a kernel returns, from its return annotation: checked against its scope."""
    parts = set(typing.get_args(returns)) if typing.get_args(returns) else {returns}
    expected: set[Any] = {
        "user": {pl.Expr, GlobalPlan} if global_when is not None else None,
        "global": {GlobalPlan},
        "item": {GlobalPlan},
    }[scope] or ({pl.Expr} if parts == {pl.Expr} else {FramePlan})
    if parts != expected:
        msg = (
            f"metric {name!r}: its kernel must be annotated to return "
            f"{' | '.join(sorted(t.__name__ for t in expected))} (scope={scope!r}, "
            f"global_when={global_when!r}), got {returns!r}"
        )
        raise TypeError(msg)
    return "frame" if parts == {FramePlan} else "expression"


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


def get_spec(name: str) -> MetricSpec:
    """Look a metric up by name or alias, with a "did you mean" on failure."""
    _ensure_loaded()
    key = _ALIASES.get(name, name)
    if key in _REGISTRY:
        return _REGISTRY[key]
    known = sorted([*_REGISTRY, *_ALIASES])
    close = [name.lower()] if name.lower() in known else []
    close = close or difflib.get_close_matches(name, known, n=1)
    raise ValueError(unknown_message(name, close[0] if close else None))


def unknown_message(name: str, suggestion: str | None) -> str:
    """The one message for an unknown metric: the suggestion if any, and the listing."""
    if suggestion is None:
        return f"unknown metric {name!r}; see {_LISTING}"
    return f"unknown metric {name!r}; did you mean {suggestion!r}? (see {_LISTING})"


_LISTING = "polars_rankeval.list_metrics() for every metric"


@validate_params({})  # no parameter
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
            f"{p.name}={format_value(p.default)}"
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


def known_names() -> list[str]:
    """Every registered name and alias, sorted (for suggestions)."""
    _ensure_loaded()
    return sorted([*_REGISTRY, *_ALIASES])


def registered() -> dict[str, MetricSpec]:
    """The registry itself (name -> spec), for generic tests and docs."""
    _ensure_loaded()
    return dict(_REGISTRY)


def _ensure_loaded() -> None:
    # Importing the metric families registers them.
    import polars_rankeval.metrics  # noqa: F401

"""The fusion methods, each declared once: name, kernel, parameters, training, reference.

A method is a kernel ``kernel(rows, *, options...) -> pl.LazyFrame`` registered with
:func:`register_fusion`. ``rows`` is the long frame of every run after normalisation
(:data:`ROW_COLUMNS`); the kernel returns one row per fused (user, item) with the
columns ``_u, _i, score``. A method that learns from training queries (``trained``)
gets a second frame, the training hits (:data:`HIT_COLUMNS`). The kernel's
keyword-only arguments are the method's parameters: ``Annotated[float, Interval(...),
"description"]`` gives the type, the range and the text, read with the metric
registry's reader so that the two kinds of declaration share one grammar. The tuning
grid of :func:`polars_rankeval.optimize_fusion` is declared beside (``grid``), and
:func:`list_fusion_methods`, the docs and the tests read this table.
"""

from __future__ import annotations

import inspect
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval._utils.types import integer
from polars_rankeval.metrics.params import Param, param_from

FusionKernel = Callable[..., pl.LazyFrame]

ROW_COLUMNS = ("_u", "_i", "_r", "_w", "_raw", "_s", "_p", "_n")
"""user, item, run name, run weight, raw score, normalised score, 0-based position in
the run's list for the user (score descending, then item ascending) and that list's
length."""
HIT_COLUMNS = ("_r", "_u", "_p", "_n", "_hit", "_nrel", "_nq")
"""run, training user, position, list length, whether the item is relevant
(relevance >= 1), the user's number of relevant items and the number of training
users."""


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method as declared by :func:`register_fusion`."""

    name: str
    kernel: FusionKernel
    summary: str
    reference: str
    params: dict[str, Param]
    weighted: bool = False
    trained: bool = False
    score_based: bool = False
    ranx: str | None = None
    default_norm: str | None = "min-max"
    grid: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def bind(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """Checked parameters (defaults filled in) for a call of the kernel."""
        given = dict(params or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            valid = sorted(self.params)
            msg = (
                f"params has no parameter {unknown[0]!r} for method {self.name!r}; valid: {valid!r}"
            )
            raise ValueError(msg)
        out: dict[str, Any] = {}
        for name, param in self.params.items():
            if name not in given:
                if param.default is inspect.Parameter.empty:
                    msg = f"params must give {name!r} for method {self.name!r}"
                    raise ValueError(msg)
                out[name] = param.default
                continue
            out[name] = _coerce(self.name, param, given[name])
        return out


def _coerce(method: str, param: Param, value: Any) -> Any:
    where = f"parameter {param.name!r} of method {method!r}"
    if param.kind == "int":
        number: float = integer(where, value)
    else:
        if isinstance(value, bool) or not isinstance(value, int | float):
            msg = f"{where} must be a number, got {value!r}"
            raise TypeError(msg)
        number = float(value)
        if not math.isfinite(number):
            msg = f"{where} must be a finite number, got {value!r}"
            raise ValueError(msg)
    if param.interval is not None and number not in param.interval:
        msg = f"{where} must be {param.interval.text}, got {value!r}"
        raise ValueError(msg)
    return number


_METHODS: dict[str, FusionMethod] = {}


def register_fusion(
    name: str,
    *,
    summary: str,
    reference: str,
    weighted: bool = False,
    trained: bool = False,
    score_based: bool = False,
    ranx: str | None = None,
    default_norm: str | None = "min-max",
    grid: Mapping[str, Sequence[Any]] | None = None,
) -> Callable[[FusionKernel], FusionKernel]:
    """Declare a fusion method; its parameters are the kernel's keyword-only arguments.

    ``weighted``: the method reads one weight per run (``fuse(weights=...)``, tuned by
    ``optimize_fusion``). ``trained``: it learns from training relevance judgments
    (``fuse(qrels=...)``). ``score_based``: it combines scores only (no positions), so
    a default score for an item missing from a list (``fuse(missing=...)``) applies.
    ``ranx``: the method's name in ``ranx.fuse`` (``None``: ranx has none).
    ``default_norm``: the normalisation ``fuse(norm="auto")`` applies. ``grid``: the
    values :func:`polars_rankeval.optimize_fusion` tries for each parameter (ranx's
    ranges where ranx tunes the method).
    """

    def decorate(kernel: FusionKernel) -> FusionKernel:
        hints = typing.get_type_hints(kernel, include_extras=True)
        params = {
            p.name: param_from(p.name, p, hints.get(p.name, float))
            for p in inspect.signature(kernel).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        if name in _METHODS:
            msg = f"fusion method {name!r} is already registered"
            raise ValueError(msg)
        _METHODS[name] = FusionMethod(
            name,
            kernel,
            summary,
            reference,
            params,
            weighted,
            trained,
            score_based,
            ranx,
            default_norm,
            {k: tuple(v) for k, v in (grid or {}).items()},
        )
        return kernel

    return decorate


def fusion_methods() -> dict[str, FusionMethod]:
    """Every declared method by name (the kernels' modules imported first)."""
    import polars_rankeval.fusion.methods
    import polars_rankeval.fusion.trained  # noqa: F401 - both register their methods

    return dict(sorted(_METHODS.items()))


def get_method(method: object) -> FusionMethod:
    """The declaration of ``method``; a ``ValueError`` listing the names otherwise."""
    methods = fusion_methods()
    if not isinstance(method, str) or method not in methods:
        msg = f"method must be one of {sorted(methods)!r}, got {method!r}"
        raise ValueError(msg)
    return methods[method]


@validate_params({})
def list_fusion_methods() -> pl.DataFrame:
    """Every fusion method with its parameters, as a table.

    Returns
    -------
    polars.DataFrame
        ``method, summary, parameters, weighted, trained, ranx, reference``: one row per
        method; ``parameters`` reads ``name = default (values)``.

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> table = prk.list_fusion_methods()
    >>> table.filter(method="rrf").select("method", "parameters", "ranx")
    shape: (1, 3)
    ┌────────┬──────────────────────────┬──────┐
    │ method ┆ parameters               ┆ ranx │
    │ ---    ┆ ---                      ┆ ---  │
    │ str    ┆ str                      ┆ str  │
    ╞════════╪══════════════════════════╪══════╡
    │ rrf    ┆ k = 60 (an integer >= 1) ┆ rrf  │
    └────────┴──────────────────────────┴──────┘
    """
    rows = [
        {
            "method": m.name,
            "summary": m.summary,
            "parameters": ", ".join(
                f"{p.name} = {p.default} ({p.values})"
                if p.default is not inspect.Parameter.empty
                else f"{p.name} ({p.values})"
                for p in m.params.values()
            ),
            "weighted": m.weighted,
            "trained": m.trained,
            "ranx": m.ranx,
            "reference": m.reference,
        }
        for m in fusion_methods().values()
    ]
    return pl.DataFrame(rows)

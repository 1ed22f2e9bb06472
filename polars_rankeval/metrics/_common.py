"""The toolbox every metric family shares.

* the options several families declare (``rel``, ``gain``, ``discount``, ...), each
  with its type, range and one-line description in one ``Annotated`` alias;
* gains and discounts of the DCG family (``graded``, ``trec_gain``, ``curves``);
* small reductions (:func:`list_size`, :func:`hits`, :func:`defined_if`,
  :func:`safe_div`), the one Float64 cast (:func:`f64`) and the one "sum the
  partials per group" step of a :class:`~polars_rankeval.metrics.spec.GlobalPlan`
  (:func:`partial_sums`);
* :func:`inline`, the body of every generated public ``pl.Expr`` function, and
  :func:`no_expression_error`, the error of a metric that has none.

This module is the bottom of ``metrics/``: it imports the registry and the feature
provider, never ``evaluate`` or anything above it.
"""

from __future__ import annotations

import functools
import math
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl

from polars_rankeval._utils.ties import Ties
from polars_rankeval._utils.types import TiePolicy, integer, make_columns
from polars_rankeval.metrics.features import Features, f64
from polars_rankeval.metrics.grammar import _bind
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import get_spec

# --------------------------------------------------------------------------- options
Rel = Annotated[
    float,
    Interval(0, None, closed="neither"),
    "minimum relevance that counts as relevant (inclusive)",
]
Gain = Annotated[Literal["linear", "exp"], "gain of a relevance: itself (trec_eval) or 2**rel - 1"]
Discount = Annotated[
    Literal["log", "log_clipped", "half_life"],
    "discount of rank p: 1 / log_b(p + 1), 1 / max(1, log_b p), or the half_life decay",
]
Base = Annotated[float, Interval(1, None, closed="neither"), "logarithm base of the log discounts"]
HalfLife = Annotated[
    float | None,
    "rank (> 1) at which the half_life discount halves; only with discount=half_life",
]
IdealCut = Annotated[
    Literal["cut", "all", "k"],
    "ideal DCG cut at k (trec_eval, scikit-learn), over all relevant items (Jurity), or "
    "of k items of the user's highest gain (RecTools: k relevant items; needs @k)",
]
MAX_IDEAL_K = 10**7
"""Largest cutoff of ``idcg=k`` (its ideal DCG sums k discounts)."""


def check_half_life(metric: str, values: dict[str, Any]) -> None:
    """``half_life`` is required by, and only allowed with, ``discount="half_life"``."""
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


# --------------------------------------------------------------------------- DCG parts
def gain_of(f: Features, gain: str) -> pl.Expr:
    """The gain of each row: its relevance (``linear``) or ``2**rel - 1`` (``exp``)."""
    return gain_value(f.rel, gain)


def gain_value(rel: pl.Expr, gain: str) -> pl.Expr:
    """The gain of relevance ``rel``: itself (``linear``) or ``2**rel - 1`` (``exp``)."""
    return rel if gain == "linear" else 2.0**rel - 1.0


def discount_at(p: pl.Expr, discount: str, base: float, half_life: float | None) -> pl.Expr:
    """The discount of rank ``p`` (see :data:`Discount`)."""
    p = f64(p)
    if discount == "log":
        return math.log(base) / (p + 1.0).log()
    if discount == "log_clipped":
        return 1.0 / pl.max_horizontal(pl.lit(1.0), p.log() / math.log(base))
    return 2.0 ** (-(p - 1.0) / (float(half_life) - 1.0))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=256)
def ideal_discount_sum(k: int, discount: str, base: float, half_life: float | None) -> float:
    """Sum of the discounts of ranks 1..k: the ideal DCG of k items of gain 1."""
    if k > MAX_IDEAL_K:
        msg = f"idcg='k' supports cutoffs up to {MAX_IDEAL_K}, got k={k}"
        raise ValueError(msg)
    p = np.arange(1, k + 1, dtype=np.float64)
    if discount == "log":
        values = math.log(base) / np.log(p + 1.0)
    elif discount == "log_clipped":
        values = 1.0 / np.maximum(1.0, np.log(p) / math.log(base))
    else:
        values = 2.0 ** (-(p - 1.0) / (float(half_life) - 1.0))  # type: ignore[arg-type]
    return math.fsum(values.tolist())


def ideal_k(
    f: Features, k: int | None, gain: str, discount: str, base: float, hl: float | None
) -> pl.Expr:
    """``idcg=k``: the DCG of k items of the user's highest gain (RecTools)."""
    if k is None:
        msg = "ndcg(idcg=k) needs a cutoff @k (the ideal list holds k items)"
        raise ValueError(msg)
    return gain_of(f, gain).max() * ideal_discount_sum(k, discount, base, hl)


def dcg_sum(
    f: Features, k: int | None, gain: str, discount: str, base: float, hl: float | None
) -> pl.Expr:
    """DCG of the top k; under expected ties each row gets its tie group's mean gain.

    Over a group, the sum of (mean gain) * discount(position) equals
    sum(gain) * mean(discount over the group's positions).
    """
    mean_gain = f.gsum(gain_of(f, gain), f"gain:{gain}") / f.n
    disc = discount_at(f.o, discount, base, hl)
    within = f.ret if k is None else f.ret & (f.o <= k)
    return pl.when(within).then(mean_gain * disc).otherwise(0.0).sum()


# --------------------------------------------------------------------------- reductions
def num_relevant(f: Features, rel: float) -> pl.Expr:
    """Relevant rows of the user, recommended or not."""
    return f.is_rel(rel).sum()


def list_size(f: Features, k: int | None, denominator: str = "retrieved") -> pl.Expr:
    """The list size L: min(k, #recommended), or k itself with ``denominator="k"``.

    Without a cutoff it is the number of recommended rows. Under absolute positions
    (``rank_positions="absolute"``, ranks with gaps) it is the number of recommended
    rows ranked within the top k.
    """
    n_ret = f64(f.ret).sum()
    if k is None:
        return n_ret
    if denominator == "k":
        return pl.lit(float(k))
    if f.absolute:
        return f64(f.ret & (f.o <= k)).sum()
    return pl.min_horizontal(n_ret, pl.lit(float(k)))


def hits(f: Features, k: int | pl.Expr | None, rel: float) -> pl.Expr:
    """Relevant items among the recommended top k (their expected number under ties)."""
    return (f.is_rel(rel) * f.p_in(k)).sum()


def defined_if(condition: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value`` where ``condition`` holds, else null (undefined; see ``empty=``)."""
    return pl.when(condition).then(value).otherwise(None)


def safe_div(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, 0 where ``den`` is 0."""
    return pl.when(den > 0).then(num / den).otherwise(0.0)


def partial_sums(
    rows: pl.LazyFrame, group: list[str], parts: dict[str, pl.Expr] | list[pl.Expr]
) -> pl.LazyFrame:
    """The partial aggregates of a global plan: one row per ``group`` (one row if none)."""
    aggs = [e.alias(n) for n, e in parts.items()] if isinstance(parts, dict) else parts
    return rows.group_by(group).agg(aggs) if group else rows.select(aggs)


# --------------------------------------------------------------------------- public API
def inline(
    name: str,
    k: int | None,
    *,
    ties: TiePolicy | Ties,
    item: str,
    score: str | None,
    relevance: str,
    rank: str | None,
    n_items: int | None = None,
    **options: Any,
) -> pl.Expr:
    """A metric as an expression that aggregates one group (one user) to one value.

    The body of every generated public function; ``n_items`` is the catalog size of
    the metrics that need it (a stand-alone expression cannot count the catalog).
    The kernel runs on the group's rows sorted once by the tie policy's order
    (:mod:`polars_rankeval.metrics.sorted_features`).
    """
    from polars_rankeval.metrics.sorted_features import metric_expression

    spec = get_spec(name)
    policy = spec.check_ties(ties)
    metric = _bind(name, k, options, text=False)  # its errors name the metric, not bind
    if "n_items" in spec.needs:
        n_items = catalog_size(metric.name, n_items)
    cols = make_columns(item=item, score=score, relevance=relevance, rank=rank)
    return metric_expression(metric, cols, policy, n_items)


def catalog_size(metric: str, n_items: object) -> int:
    """``n_items=`` of a stand-alone expression of ``metric``, which reads the catalog size.

    The one check of it for the metric functions and ``evaluate_expr``: one group's
    rows cannot count the catalog, so it must be given, a positive integer.
    """
    if n_items is None:
        msg = f"metric {metric!r} needs the catalog size: pass n_items= (a positive integer)"
        raise ValueError(msg)
    size = integer("n_items", n_items, what="a positive integer (the catalog size)")
    if size <= 0:
        msg = f"n_items must be a positive integer (the catalog size), got {n_items!r}"
        raise ValueError(msg)
    return size


# --------------------------------------------------------------------------- honest limits
class NoExpressionError(AttributeError, ValueError):
    """A registered metric asked for as a stand-alone expression that it cannot be.

    Raised by ``polars_rankeval.NAME`` for a metric without a public ``pl.Expr``
    function: a value per system or per item, or a per-user value that reads statistics
    over the whole data (item popularity, the users' history, item features, subtopics),
    which one group's rows do not hold. A ``ValueError`` saying what to use instead,
    and an ``AttributeError`` (``hasattr`` stays ``False``).
    """


_NO_EXPRESSION = {
    "popularity_bias": (
        "it reads each item's long-tail flag, a statistic over the whole data (a long_tail "
        "column of the data or items=, or derived from the popularity in history=)"
    ),
    "exposure": (
        "it reads each item's popularity or the user's past interactions, statistics over "
        "the whole data (a column of the data or items=, or counted over history=)"
    ),
    "serendipity": (
        "it reads the item popularity over history= and the catalog size, or a baseline's "
        "ranking, beyond the user's rows"
    ),
    "calibration": "it compares the top k's category mix with the user's history= rows",
    "diversity": "it joins the items' feature vectors and forms the pairs of the top k",
    "categorical": "it joins each item's categories in a plan of its own",
    "intent": "it reads each item's subtopic judgments in a plan of its own",
    "correlation": "it forms the pairs of the user's items in a plan of its own",
    "similarity": "it compares the list with a reference ranking in a plan of its own",
}
"""Why a per-user metric family has no stand-alone expression (by family)."""


def _probe_hint(name: str) -> str:
    """What ``evaluate`` needs for metric ``name``: the kernel's own error, if it has one."""
    spec = get_spec(name)
    cols = make_columns(item="item", score="score", relevance="relevance", rank=None)
    try:
        features = Features(cols, spec.tie_policies[0], keys=["user"])  # type: ignore[arg-type]
        _bind(name, 10 if spec.takes_k else None, {}, text=False).plan(features)
    except (ValueError, TypeError) as error:
        text = str(error)
        return text[text.index("pass ") :] if "pass " in text else ""
    except Exception:  # a probe without data: the hint is optional
        return ""
    return ""


def no_expression_error(name: str) -> NoExpressionError | None:
    """The error for ``polars_rankeval.NAME`` when ``name`` is a metric without a function.

    ``None`` when ``name`` is not a registered metric name or has a public function.
    The message says why no stand-alone expression exists (a value per system or per
    item; a per-user value over data-wide statistics) and to use ``evaluate``, with what
    to pass to it when the metric needs a side table or the catalog size.
    """
    from polars_rankeval.metrics.registry import registered

    spec = registered().get(name)
    if spec is None or spec.public is not None:
        return None
    if spec.scope == "global":
        why = "its value is one number per system over every user's rows, not a value per user"
    elif spec.scope == "item":
        why = "its value is one number per item over every user's rows, not a value per user"
    else:
        why = _NO_EXPRESSION.get(spec.family, "it is computed by a plan of its own")
    example = f"{name}@10" if spec.takes_k else name
    hint = _probe_hint(name)
    msg = (
        f"metric {name!r} has no stand-alone pl.Expr function: {why}; use "
        f"polars_rankeval.evaluate(data, [{example!r}], ...) instead"
        + (f" and {hint}" if hint else "")
    )
    return NoExpressionError(msg)

"""Measures that tell judged from unjudged items (trec_eval's incomplete-judgment set).

A row with a null relevance is *unjudged*: it counts as not relevant, but it is not a
judged non-relevant item either. Negative relevance is rejected by validation, so by
default unjudged rows behave like trec_eval's documents outside the pool. trec_eval's
infAP also reads qrels relevance < 0 as "in the pool but not judged": ``inf_ap(pool=c)``
takes that distinction from a boolean column ``c`` (true for every item of the pool,
e.g. every qrels row), with a null relevance for the pooled-but-unjudged items
(:func:`polars_rankeval.trec.pool_unjudged` converts qrels that way).
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import (
    Rel,
    defined_if,
    f64,
    list_size,
    num_relevant,
    safe_div,
)
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption
from polars_rankeval.metrics.registry import register

Weight = Annotated[float, "weight of one item of this kind (see the definition)"]
PoolColumn = Annotated[
    str | None,
    ColumnOption(),
    "boolean column (from the data or items=) marking the items of the judgment pool: an "
    "unjudged row (null relevance) with a true value is pooled but not judged (trec_eval "
    "qrels relevance < 0), one without is outside the pool; none: every unjudged row is "
    "outside the pool",
]
ListDenominator = Annotated[
    Literal["k", "retrieved"],
    "divide by k (trec_eval unj_k) or by min(k, #recommended) (ir_measures Judged@k)",
]

INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


def _judged_nonrel(f: Features, rel: float) -> pl.Expr:
    """1.0 for judged rows below the relevance threshold, else 0.0."""
    return f64(f.judged & (f.rel < rel))


def _judged_above(f: Features) -> pl.Expr:
    """For judged rows: judged rows strictly above the row's tie group."""
    return f.rows_above(f.judged, "judged")


# --------------------------------------------------------------------------- kernels
@register(
    "bpref",
    defined="truth",
    family="judged",
    takes_k=False,
    summary="Binary preference: relevant items ranked above judged non-relevant ones.",
    definition=(
        "sum over relevant recommended items r of 1 - min(N_r, R) / min(N, R), divided "
        "by R = #relevant; N_r = judged non-relevant recommended items above r, N = all "
        "judged non-relevant items (a term is 1 when N = 0); unjudged items are ignored "
        "(trec_eval bpref). Expected ties: of the m judged non-relevant items tied with "
        "r, a number uniform on 0..m precede it."
    ),
    doc="""
    Binary preference (Buckley & Voorhees, 2004), trec_eval's ``bpref``.

    Each relevant recommended item scores 1 minus the share of judged non-relevant items
    ranked above it (capped at R, over min(R, #judged non-relevant)); the sum is
    divided by R, the number of relevant items. Unjudged items (null relevance) are
    ignored instead of being read as non-relevant.

    Examples
    --------
    Relevant A and C, judged non-relevant B and D, unjudged U: A has no judged
    non-relevant item above it (1), C has one (1 - min(1, 2) / min(2, 2) = 1/2).

    >>> import polars as pl
    >>> from polars_rankeval.metrics import bpref
    >>> df = pl.DataFrame({"user": [1] * 5, "item": list("AUBCD"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0],
    ...                    "relevance": [1, None, 0, 1, 0]})
    >>> df.select(bpref()).item()  # (1 + 1/2) / 2
    0.75
    """,
)
def _bpref(f: Features, k: None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.is_rel(rel)
    n_rel = num_relevant(f, rel)
    r_row = f.user_total(is_rel, f"rel>={rel}")
    # Judged non-relevant items strictly above the tie group (relevant rows are judged).
    x0 = f64(_judged_above(f) - f.rel_above(rel))
    m = f64(f.gsum(_judged_nonrel(f, rel), f"judged_nonrel:{rel}"))
    # E[min(x0 + H, R)], H uniform on 0..m: the first t values of x0 + h are below R.
    t = (r_row - x0).clip(0.0, m + 1.0)
    capped_mean = (t * x0 + t * (t - 1.0) / 2.0 + (m + 1.0 - t) * r_row) / (m + 1.0)
    relevant_ret = f.ret & (is_rel > 0)
    lost = pl.when(relevant_ret).then(capped_mean).otherwise(0.0).sum()
    n_rel_ret = f64(relevant_ret).sum()
    den = pl.min_horizontal(_judged_nonrel(f, rel).sum(), n_rel)
    return defined_if(n_rel > 0, (n_rel_ret - safe_div(lost, den)) / n_rel)


@register(
    "inf_ap",
    defined="truth",
    family="judged",
    takes_k=False,
    normalized=False,
    ties_require=("deterministic",),
    aliases=("infAP", "infap"),
    summary="Inferred AP (Yilmaz & Aslam): AP estimated from the judged items only.",
    definition=(
        "sum over relevant recommended items at rank p of (1 + P (Q + e) / (J + 2e)) / p, "
        "divided by #relevant; J = judged items above, Q = relevant items above, P = "
        "pooled items above (J plus the unjudged rows marked by the pool column: trec_eval "
        "qrels relevance < 0; without pool=, P = J), e = 1e-5 (trec_eval infAP; close to "
        "AP, not exactly 1 for a perfect ranking). Deterministic tie policies only."
    ),
    doc="""
    Inferred average precision (Yilmaz & Aslam, 2006), trec_eval's ``infAP``.

    The precision above each relevant recommended item is estimated from the judged
    items above it only; with complete judgments it is AP up to trec_eval's epsilon
    (1e-5). Only deterministic tie policies are supported (default ``"item_desc"``).

    Examples
    --------
    Relevant A (rank 1) and C (rank 3) under an unjudged U: C scores
    (1 + 1 * (1 + e) / (1 + 2e)) / 3, about 2/3, so infAP is about (1 + 2/3) / 2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import inf_ap
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("AUC"),
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [1, None, 1]})
    >>> round(df.select(inf_ap()).item(), 4)
    0.8333

    If U was in the judgment pool but not judged (trec_eval qrels relevance -1), it is
    one of the pooled items above C, of which the judged ones (A) are all relevant:
    C scores (1 + 2 * (1 + e) / (1 + 2e)) / 3, about 1, and infAP about 1.

    >>> pooled = df.with_columns(pool=pl.lit(True))
    >>> round(pooled.select(inf_ap(pool="pool")).item(), 4)
    1.0
    """,
)
def _inf_ap(f: Features, k: None, *, rel: Rel = 1.0, pool: PoolColumn = None) -> pl.Expr:
    is_rel = f.is_rel(rel)
    n_rel = num_relevant(f, rel)
    judged_above = f64(_judged_above(f))
    rel_above = f64(f.rel_above(rel))
    if pool is None:
        pooled_above = judged_above
    else:  # judged rows, and the unjudged ones of the pool (relevant rows are judged)
        pooled = f.judged | f.column(pool).cast(pl.Boolean).fill_null(False)
        pooled_above = f64(f.rows_above(pooled, f"pooled:{pool}"))
    eps = INFAP_EPSILON
    term = (1.0 + pooled_above * (rel_above + eps) / (judged_above + 2.0 * eps)) / f64(f.o)
    total = pl.when(f.ret & (is_rel > 0)).then(term).otherwise(0.0).sum()
    return defined_if(n_rel > 0, total / n_rel)


@register(
    "num_nonrel_judged_ret",
    higher_is_better=False,
    defined="always",
    family="judged",
    normalized=False,
    summary="Number of judged non-relevant items in the top k (expected count under ties).",
    definition=(
        "#recommended items within the top k with a relevance judgment below rel "
        "(trec_eval num_nonrel_judged_ret); never undefined."
    ),
    doc="""
    Number of judged non-relevant items among the top ``k`` recommendations.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import num_nonrel_judged_ret
    >>> df = pl.DataFrame({"user": [1] * 4, "item": [1, 2, 3, 4],
    ...                    "score": [0.9, 0.5, 0.5, None], "relevance": [0, None, 0, 0]})
    >>> df.select(num_nonrel_judged_ret(2)).item()  # 1 + item 3 in 1 of 2 tie orders
    1.5
    """,
)
def _num_nonrel_judged_ret(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    return (_judged_nonrel(f, rel) * f.p_in(k)).sum()


@register(
    "unjudged",
    higher_is_better=False,
    bounds=(0.0, 1.0),
    defined="always",
    family="judged",
    normalized=False,
    aliases=("unj",),
    summary="Fraction of the top k that is unjudged (null relevance).",
    definition=(
        "#unjudged recommended items within the top k / k, a list shorter than k padded "
        "with judged items (trec_eval unj_k); denominator=retrieved divides by min(k, "
        "#recommended) (ir_measures Judged@k = 1 - unjudged(denominator=retrieved)@k). "
        "Without @k over #recommended, 0 when nothing is recommended; never undefined. "
        "Expected ties: exact (linear in the membership probabilities)."
    ),
    doc="""
    Fraction of the top ``k`` recommendations without a judgment (trec_eval ``unj``).

    A list shorter than ``k`` counts as padded with judged items;
    ``denominator="retrieved"`` divides by min(k, #recommended) instead, as
    ir_measures' ``Judged@k`` does (see :func:`judged_fraction`).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import unjudged
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, None, None]})
    >>> df.select(unjudged(2), unjudged(5)).row(0)  # 1/2 and 2/5
    (0.5, 0.4)
    >>> df.select(unjudged(5, denominator="retrieved")).item() == 2 / 3
    True
    """,
)
def _unjudged(f: Features, k: int | None, *, denominator: ListDenominator = "k") -> pl.Expr:
    unjudged = (f64(~f.judged) * f.p_in(k)).sum()
    return safe_div(unjudged, list_size(f, k, denominator))


@register(
    "judged_fraction",
    defined="always",
    family="judged",
    normalized=False,
    summary="Fraction of the top k that is judged (ir_measures Judged@k).",
    definition=(
        "#judged recommended items within the top k / min(k, #recommended) "
        "(denominator=retrieved, the default: ir_measures Judged@k, which its docstring "
        "calls 'equivalent to P@k' though it divides by min(k, #retrieved)), or / k "
        "(denominator=k: a list shorter than k counts as padded with unjudged items). A "
        "judged item is one with a relevance, whatever its value. 0 when nothing is "
        "recommended; never undefined. Expected ties: exact (linear in the membership "
        "probabilities)."
    ),
    doc="""
    Fraction of the top ``k`` recommendations with a judgment (ir_measures ``Judged``).

    With the default ``denominator="retrieved"`` it is 1 - ``unjudged(denominator=
    "retrieved")`` for a user with recommendations.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import judged_fraction
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [0, None, None]})
    >>> exprs = [judged_fraction(2), judged_fraction(5), judged_fraction(5, denominator="k")]
    >>> df.select(exprs).row(0)  # 1/2, 1/3, 1/5
    (0.5, 0.3333333333333333, 0.2)
    """,
)
def _judged_fraction(
    f: Features, k: int | None, *, denominator: ListDenominator = "retrieved"
) -> pl.Expr:
    found = (f64(f.judged) * f.p_in(k)).sum()
    return safe_div(found, list_size(f, k, denominator))


@register(
    "utility",
    bounds=(None, None),
    defined="always",
    family="judged",
    normalized=False,
    summary="Linear utility of the contingency table (retrieved / relevant).",
    definition=(
        "a * relevant recommended + b * non-relevant recommended + c * relevant not "
        "recommended + d * non-relevant not recommended, recommended meaning within the "
        "top k (trec_eval utility, defaults 1, -1, 0, 0; unjudged items count as "
        "non-relevant); d counts the user's rows, where trec_eval counts the collection "
        "(-N). Can be negative; never undefined."
    ),
    doc="""
    Linear set utility of the recommended top ``k`` (trec_eval ``utility``).

    Examples
    --------
    Two relevant and three non-relevant items recommended, one relevant item not.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import utility
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [6.0, 5.0, 4.0, 3.0, 2.0, None],
    ...                    "relevance": [1, 0, None, 2, 0, 1]})
    >>> df.select(utility(), utility(c=-0.5)).row(0)  # 2 - 3, then - 0.5 * 1
    (-1.0, -1.5)
    """,
)
def _utility(
    f: Features,
    k: int | None,
    *,
    a: Weight = 1.0,
    b: Weight = -1.0,
    c: Weight = 0.0,
    d: Weight = 0.0,
    rel: Rel = 1.0,
) -> pl.Expr:
    p_in = f.p_in(k)
    rel_ret = (f.is_rel(rel) * p_in).sum()
    n_ret = p_in.sum()
    n_rel = num_relevant(f, rel)
    n_rows = pl.len().cast(pl.Float64)
    return (
        a * rel_ret
        + b * (n_ret - rel_ret)
        + c * (n_rel - rel_ret)
        + d * (n_rows - n_rel - n_ret + rel_ret)
    )

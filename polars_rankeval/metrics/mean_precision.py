"""The mean of precision@1..k over every cutoff: ``mean_precision`` (Elliot's ``MAP``).

Elliot's ``MAP`` code averages precision at every cutoff n = 1..k, relevant rank or not
(``np.average([precision@n for n in 1..k])``, a short list padded), where its docstring
and the usual AP sum precision at the relevant ranks only. This is a different metric,
so it is registered on its own rather than as an option of ``map``:

    mean_precision@k = (1 / k) sum_{n=1..k} hits@n / n
                     = (1 / k) sum over the relevant items at rank p <= k of (H(k) - H(p - 1)),

H the harmonic numbers: a relevant item at rank p counts in every precision@n with
n >= p. The second form is linear in the rows, so under ``ties="expected"`` each relevant
item's weight is its mean over its tie group's ranks (exact). H(n) is read from a table
for n < 64 and from its asymptotic series beyond (error below 1e-20).
"""

from __future__ import annotations

import math

import polars as pl

from polars_rankeval.metrics._common import Rel, f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register

_TABLE = 64
_HARMONIC = [math.fsum(1.0 / i for i in range(1, n + 1)) for n in range(_TABLE)]
_EULER = 0.57721566490153286061


def harmonic(n: pl.Expr) -> pl.Expr:
    """H(n) = sum_{i=1..n} 1 / i for integers n >= 0 (0 for n = 0)."""
    x = f64(n)
    series = (
        x.log()
        + _EULER
        + 1.0 / (2.0 * x)
        - 1.0 / (12.0 * x**2)
        + 1.0 / (120.0 * x**4)
        - 1.0 / (252.0 * x**6)
        + 1.0 / (240.0 * x**8)
    )
    table = n.cast(pl.Int64).replace_strict(
        list(range(_TABLE)), _HARMONIC, default=None, return_dtype=pl.Float64
    )
    return pl.when(n < _TABLE).then(table).otherwise(series)


@register(
    "mean_precision",
    family="binary",
    defined="truth",
    summary="Mean of precision@1..k over every cutoff (Elliot's MAP code).",
    definition=(
        "(1 / k) sum_{n=1..k} hits@n / n, a list shorter than n padded with non-relevant "
        "items = (1 / k) sum over the relevant items at rank p <= k of (H(k) - H(p - 1)) "
        "(Elliot MAP's code; its docstring describes the usual AP). Without @k, k is the "
        "number of recommended items (0 for an empty list). Null without a relevant item. "
        "Expected ties: exact (linear in the rows)."
    ),
    doc="""
    Mean of precision@n over the cutoffs n = 1..k (Elliot's ``MAP``).

    Examples
    --------
    Relevant items at ranks 1 and 3: precision@1..3 = 1, 1/2, 2/3.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [1, 2, 3],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [1, 0, 1]})
    >>> df.select(prk.mean_precision(3)).item() == (1 + 1 / 2 + 2 / 3) / 3
    True
    """,
)
def _mean_precision(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.is_rel(rel)
    n_ret = f64(f.ret).sum()
    cut = pl.lit(float(k)) if k is not None else n_ret
    top = harmonic(pl.lit(k)) if k is not None else harmonic(n_ret)
    # E[(H(k) - H(p - 1)) [p <= k]] = H(k) P(p <= k) - E[H(p - 1) [p <= k]]
    below = f.gmean_pos(lambda p: harmonic(p - 1), k, "harmonic_above")
    total = pl.when(f.ret).then(is_rel * (top * f.p_in(k) - below)).otherwise(0.0).sum()
    value = pl.when(cut > 0).then(total / cut).otherwise(0.0)
    return pl.when(is_rel.sum() > 0).then(value).otherwise(None)

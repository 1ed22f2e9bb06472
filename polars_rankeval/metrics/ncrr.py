"""Normalised cumulative reciprocal rank (Cornac ``NCRR``): ``ncrr``.

CRR@k is the sum of 1 / rank over the relevant items in the top k; NCRR divides it by
the CRR of an ideal list, whose first min(R, L) items are relevant: the harmonic
number H(min(R, L)) with R the user's relevant items and L = min(k, #recommended) the
length of the (truncated) list, as Cornac's code does (``max_nb_pos = min(len(gt_pos),
len(truncated_pd_rank))``). It is nDCG with the discount 1 / rank and binary gain,
except that the ideal list is cut at the list's own length.

Under ``ties="expected"`` each relevant item's 1 / rank is its mean over its tie
group's ranks within the top k (linear, so exact); H(m) is summed inside the user's
aggregation from an integer range.
"""

from __future__ import annotations

import polars as pl

from polars_rankeval.metrics._common import Rel, defined_if, f64, list_size, num_relevant
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.registry import register


@register(
    "ncrr",
    family="binary",
    defined="truth",
    summary="Normalised cumulative reciprocal rank (Cornac NCRR).",
    definition=(
        "sum over the relevant items in the top k of 1 / rank, divided by H(min(R, L)) = "
        "sum_{i <= min(R, L)} 1 / i, the same sum for an ideal list, R = #relevant, L = "
        "min(k, #recommended) (Cornac NCRR's code); 0 when no relevant item is in the top "
        "k. Null without a relevant item. Expected ties: each relevant item's mean 1 / rank "
        "over its tie group's ranks within the top k."
    ),
    doc="""
    Normalised cumulative reciprocal rank (Cornac ``NCRR``).

    The sum of the reciprocal ranks of the relevant items in the top k, over the same
    sum for an ideal list of min(#relevant, list length) relevant items.

    Examples
    --------
    Cornac's test: relevant items 1 and 3, ranked 2, 3, 1: (1/3 + 1/2) / (1 + 1/2).

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 3, "item": [2, 3, 1],
    ...                    "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 1]})
    >>> round(df.select(prk.ncrr()).item(), 6)  # (1/2 + 1/3) / (1 + 1/2)
    0.555556
    """,
)
def _ncrr(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.is_rel(rel)
    reciprocal = f.gmean_pos(lambda pos: 1.0 / f64(pos), k, "ncrr_rr")
    crr = pl.when(f.ret).then(is_rel * reciprocal).otherwise(0.0).sum()
    n_rel = num_relevant(f, rel)
    best = pl.min_horizontal(n_rel, list_size(f, k)).cast(pl.Int64)
    ideal = (1.0 / f64(pl.int_range(1, best + 1, dtype=pl.Int64))).sum()
    return defined_if(n_rel > 0, pl.when(best > 0).then(crr / ideal).otherwise(0.0))

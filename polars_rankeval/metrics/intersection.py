"""Intersection of two top-k lists (RecTools ``Intersection``): the registered metric.

``intersection(ref_k=r)@k`` of a run and a reference ranking is, per user,

    |top k of the run  ∩  top r of the reference| / |top k of the run|

(``denominator="run"``, RecTools 0.19's ``Intersection``: the share of the
recommendations that the reference also holds in its top r; ``ref_k`` defaults to
``k``) or ``/ |top r of the reference|`` (``denominator="reference"``: the share of the
reference's top r that the run recovers in its top k). Without ``@k`` and ``ref_k`` the
whole lists are compared. Undefined (null) when the denominator is 0 (RecTools leaves
such users out).

Here (a long frame, as ``rbo``) the reference ranking is the user's items of positive
relevance by relevance descending, or the non-null rows of the column ``reference=`` by
it descending; ties of the reference are broken by item id (descending under
``item_desc``, else ascending). Two systems are compared with
:func:`polars_rankeval.rank_similarity` (``rank_similarity(reco, reference,
["intersection@10"])``), which is where RecTools' metric is reproduced
(``conventions="rectools"``).

Ties of the run's scores: under ``ties="expected"`` the value is the exact expectation
over the tied orderings of the run: the numerator is linear in each row's probability
of being in the top k (the row's tie group straddling the cutoff: the share of it that
fits) and the denominator ``min(k, #recommended)`` does not depend on the order.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval._utils.ties import id_order
from polars_rankeval.metrics.features import Features, f64
from polars_rankeval.metrics.params import ColumnOption, Interval
from polars_rankeval.metrics.registry import register

Denominator = Literal["run", "reference"]
INTERSECTION_DENOMINATORS: tuple[str, ...] = ("run", "reference")
RefK = Annotated[
    int | None,
    Interval(1, None, closed="left"),
    "the reference's cutoff (its top ref_k items); none: the run's k (RecTools' ref_k)",
]
DenominatorOpt = Annotated[
    Denominator,
    "divide by the run's top k (run: RecTools Intersection) or by the reference's top "
    "ref_k (reference: the share of the reference recovered)",
]
Reference = Annotated[
    str | None,
    ColumnOption(),
    "column of the reference ranking (higher first; its non-null rows); none: the "
    "relevance, its positive rows",
]


def reference_position(f: Features, reference: str | None) -> tuple[pl.Expr, pl.Expr]:
    """``(in_reference, position)``: the reference ranking of the user's rows.

    Position 1-based among the reference rows (relevance or ``reference=`` descending,
    ties by item id in the direction of the tie policy's first item rule); rows outside
    the reference come after them.
    """
    if reference is None:
        ref = f.rel
        in_ref = ref > 0
    else:
        ref = f.column(reference).cast(pl.Float64)
        in_ref = ref.is_not_null() & ~ref.is_nan()
    item = id_order(f.cols.item).alias("i")
    value = ref.fill_null(0.0).fill_nan(0.0)
    if f.tie.breaks[:1] == ("item_desc",):
        order = pl.struct(in_ref.alias("r"), value.alias("v"), item).rank(
            "ordinal", descending=True
        )
    else:
        order = pl.struct((~in_ref).alias("r"), (-value).alias("v"), item).rank("ordinal")
    side = "desc" if f.tie.breaks[:1] == ("item_desc",) else "asc"
    position = f.user_window(order.cast(pl.Int64), f"intersection_ref[{reference}|{side}]")
    return in_ref, position


@register(
    "intersection",
    family="similarity",
    normalized=False,
    bounds=(0.0, 1.0),
    summary="Share of the top k also in the reference's top ref_k (RecTools Intersection).",
    definition=(
        "|top k of the run ∩ top ref_k of the reference ranking| / |top k of the run| "
        "(denominator=run, RecTools 0.19 Intersection; ref_k defaults to k) or / |top "
        "ref_k of the reference| (denominator=reference). The reference ranking: the "
        "user's items of positive relevance by relevance descending, or the non-null "
        "rows of the column reference= by it descending; its ties broken by item id "
        "(descending under item_desc, else ascending). Without @k and ref_k, the whole "
        "lists. Null when the denominator is 0. Exact expectation under ties=expected. "
        "Two runs: rank_similarity(reco, reference, ['intersection@10'])."
    ),
)
def _intersection(
    f: Features,
    k: int | None,
    *,
    ref_k: RefK = None,
    denominator: DenominatorOpt = "run",
    reference: Reference = None,
) -> pl.Expr:
    in_run = f.p_in(k)  # the row's probability of being recommended within the top k
    in_ref, position = reference_position(f, reference)
    cut = ref_k if ref_k is not None else k
    in_b = f64(in_ref) if cut is None else f64(in_ref & (position <= cut))
    numerator = (in_run * in_b).sum()
    total = in_run.sum() if denominator == "run" else in_b.sum()
    return pl.when(total > 0).then(numerator / total)

"""Interpolated precision, relative precision and set measures (trec_eval's definitions).

An item is relevant when its relevance is at least ``rel`` (inclusive, default 1); R is
the user's number of relevant items, recommended or not. Every metric is null for a
user without any relevant item (see the ``empty=`` policy of
:func:`polars_rankeval.evaluate`).

Interpolated precision at a recall level is a maximum over ranks: its expectation over
the orderings of tied scores has no closed form built from tie-group sums, so
``iprec_at_recall`` and ``iprec_11pt`` implement the deterministic tie policies only
(``item_desc`` is trec_eval's). ``relative_precision`` and ``set_map`` are exact under
``ties="expected"`` too.
"""

from __future__ import annotations

from typing import Annotated

import polars as pl

from polars_rankeval.metrics._common import Rel, defined_if, hits, num_relevant, safe_div
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register

Level = Annotated[
    float,
    Interval(0, 1),
    "recall level; 0 gives the best precision anywhere in the list",
]

# trec_eval's 11 standard recall levels (the same doubles as its C literals).
ELEVEN_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _round_half_up(x: pl.Expr) -> pl.Expr:
    """C's ``lround`` for a non-negative ``x``: the nearest integer, halves rounded up.

    ``x - floor(x)`` is exact in floating point, so unlike ``floor(x + 0.5)`` this never
    rounds a value just below one half up.
    """
    low = x.floor()
    return low + ((x - low) >= 0.5).cast(pl.Float64)


def _iprec_at_levels(f: Features, rel: float, levels: tuple[float, ...]) -> list[pl.Expr]:
    """Interpolated precision at each recall level, under a deterministic tie policy.

    With h the number of relevant recommended items down to a rank, precision h / rank
    only rises at relevant ranks, so the maximum over the ranks whose recall reaches the
    level is a maximum over the relevant recommended rows with h >= lround(level * R).
    """
    is_rel = f.is_rel(rel)
    hit = f.ret & (is_rel > 0)
    h = (f.rel_above(rel) + 1).cast(pl.Float64)
    precision_here = h / f.o.cast(pl.Float64)
    n_rel = f.user_total(is_rel, f"rel>={rel}")  # R, broadcast to the rows
    out = []
    for level in levels:
        within = hit if level == 0.0 else hit & (h >= _round_half_up(level * n_rel))
        out.append(pl.when(within).then(precision_here).max().fill_null(0.0))
    return out


# --------------------------------------------------------------------------- kernels
@register(
    "iprec_at_recall",
    defined="truth",
    family="binary",
    takes_k=False,
    ties_require=("deterministic",),
    summary="Interpolated precision at a recall level (default 0: the best precision).",
    definition=(
        "max of hits@p / p over the recommended ranks p with hits@p >= lround(level * R) "
        "(nearest integer, halves up), 0 if no rank reaches it (trec_eval "
        "iprec_at_recall_<level>); level in [0, 1]. "
        "Deterministic tie policies only: the expectation over tied orderings has no "
        "exact closed form."
    ),
    doc="""
    Interpolated precision at a recall level (trec_eval ``iprec_at_recall``).

    The best precision at any rank of the list whose recall reaches ``level``, with the
    level counted in relevant items as trec_eval does: ``lround(level * R)``. It is 0
    when the list never reaches that recall.

    Notes
    -----
    Older trec_eval releases (including the one bundled with pytrec_eval-terrier 0.5)
    counted the level as ``(long)(level * R + 0.9)`` hits instead of
    ``lround(level * R)``, so for some R their values (and ``11pt_avg``) differ from
    today's trec_eval and from this metric.

    Examples
    --------
    Relevant items at ranks 1, 3 and 5 of five, and one relevant item never recommended
    (R = 4): precisions 1/1, 2/3 and 3/5 at the relevant ranks. Recall 0.5 needs
    lround(2.0) = 2 hits (best precision from rank 3 on: 2/3); recall 0.7 needs
    lround(2.8) = 3 (3/5); recall 1 is never reached.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import iprec_at_recall
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(iprec_at_recall(level=0.5), iprec_at_recall(level=0.7),
    ...           iprec_at_recall(level=1.0)).row(0) == (2 / 3, 3 / 5, 0.0)
    True
    """,
)
def _iprec_at_recall(f: Features, k: None, *, level: Level = 0.0, rel: Rel = 1.0) -> pl.Expr:
    (value,) = _iprec_at_levels(f, rel, (level,))
    return defined_if(num_relevant(f, rel) > 0, value)


@register(
    "iprec_11pt",
    defined="truth",
    family="binary",
    takes_k=False,
    ties_require=("deterministic",),
    summary="11-point interpolated average precision.",
    definition=(
        "mean of iprec_at_recall at the recall levels 0, 0.1, ..., 1 (trec_eval 11pt_avg). "
        "Deterministic tie policies only, as iprec_at_recall."
    ),
    doc="""
    11-point interpolated average precision (trec_eval ``11pt_avg``).

    The mean of :func:`iprec_at_recall` at the recall levels 0, 0.1, ..., 1.

    Examples
    --------
    The list of :func:`iprec_at_recall` (R = 4): the levels need lround(level * 4) =
    0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 hits, whose interpolated precisions are 1, 1, 1, 1,
    2/3, 2/3, 2/3, 3/5, 3/5, 0, 0.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import iprec_11pt
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> round(df.select(iprec_11pt()).item(), 6)  # (4 * 1 + 3 * 2/3 + 2 * 3/5) / 11
    0.654545
    """,
)
def _iprec_11pt(f: Features, k: None, *, rel: Rel = 1.0) -> pl.Expr:
    values = _iprec_at_levels(f, rel, ELEVEN_LEVELS)
    return defined_if(num_relevant(f, rel) > 0, pl.sum_horizontal(values) / len(values))


@register(
    "relative_precision",
    absolute_positions=True,
    defined="truth",
    family="binary",
    aliases=("relative_P",),
    summary="Precision at k over the best precision possible at k.",
    definition=(
        "hits@k / min(k, R) (trec_eval relative_P_k: precision up to R, recall after). "
        "Without @k: hits / min(#recommended, R) (trec_eval set_relative_P), 0 when "
        "nothing is recommended."
    ),
    doc="""
    Relative precision at k (trec_eval ``relative_P``): hits@k / min(k, R).

    Precision relative to the best precision a list can reach at k: precision while
    k <= R, recall after. Without ``k``, trec_eval's ``set_relative_P``: hits over
    min(#recommended, R).

    Examples
    --------
    The list of :func:`iprec_at_recall`: relevant at ranks 1, 3, 5; R = 4.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import relative_precision
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(relative_precision(2), relative_precision(5))  # 1 / 2, 3 / 4
    shape: (1, 2)
    ┌──────────────────────┬──────────────────────┐
    │ relative_precision@2 ┆ relative_precision@5 │
    │ ---                  ┆ ---                  │
    │ f64                  ┆ f64                  │
    ╞══════════════════════╪══════════════════════╡
    │ 0.5                  ┆ 0.75                 │
    └──────────────────────┴──────────────────────┘
    """,
)
def _relative_precision(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    n_rel = num_relevant(f, rel)
    size = f.ret.cast(pl.Float64).sum() if k is None else pl.lit(float(k))
    return defined_if(n_rel > 0, safe_div(hits(f, k, rel), pl.min_horizontal(size, n_rel)))


@register(
    "set_map",
    defined="truth",
    family="binary",
    takes_k=False,
    summary="Set precision times set recall of the whole recommendation list.",
    definition=(
        "hits^2 / (#recommended * R) over the whole list, ignoring its order "
        "(trec_eval set_map); 0 when nothing is recommended."
    ),
    doc="""
    Set MAP (trec_eval ``set_map``): set precision times set recall.

    ``hits**2 / (#recommended * R)`` over the whole list; the order of the list (and so
    the tie policy) does not matter.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankeval.metrics import set_map
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 1, 1]})
    >>> df.select(set_map()).item()  # (3 / 5) * (3 / 4) = 3 * 3 / (5 * 4)
    0.45
    """,
)
def _set_map(f: Features, k: None, *, rel: Rel = 1.0) -> pl.Expr:
    n_rel = num_relevant(f, rel)
    found = hits(f, None, rel)
    n_ret = f.ret.cast(pl.Float64).sum()
    return defined_if(n_rel > 0, safe_div(found * found, n_ret * n_rel))

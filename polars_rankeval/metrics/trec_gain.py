"""trec_eval's gain-based measures: rank-biased precision, G and the ndcg averages.

The gain of an item is its relevance (trec_eval's default gain: the relevance level);
unjudged items gain 0. All of them reproduce trec_eval (``rbp``, ``rbp_resid``,
``ndcg_rel``, ``Rndcg``, ``binG``, ``G``) under ``ties="item_desc"``.

``rbp``, ``rbp_resid`` and ``bin_g`` have exact expected values under tied scores.
``ndcg_rel``, ``rndcg`` and ``g`` divide a running sum over the list by a function of
the position, so their expectation over the orderings of a tie group is not a sum of
per-position terms; they require a deterministic tie policy. ``rbp_resid`` looks at
the ranks of unjudged items, which the optimistic / pessimistic policies order after
the judged items of equal score and relevance (a total order, see
:mod:`polars_rankeval._utils.ties`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import polars as pl

from polars_rankeval.metrics._common import (
    Rel,
    dcg_sum,
    defined_if,
    discount_at,
    f64,
    gain_of,
    list_size,
    num_relevant,
)
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register

Persistence = Annotated[
    float,
    Interval(0, 1, closed="neither"),
    "persistence: the probability that the user goes on to the next item",
]


# --------------------------------------------------------------------------- helpers
def _log2_disc(p: pl.Expr) -> pl.Expr:
    """trec_eval's DCG discount 1 / log2(p + 1)."""
    return discount_at(p, "log", 2.0, None)


def _in_list_order(f: Features, x: pl.Expr) -> pl.Expr:
    """Cumulative sums of ``x`` down the ranking: element p-1 sums positions 1..p."""
    return x.sort_by(f.o).cum_sum()


def _ideal_dcg_upto(f: Features) -> pl.Expr:
    """Element c-1: the ideal DCG cut at c (judged items by gain, best first)."""
    gains = gain_of(f, "linear").sort(descending=True)
    return (gains * _log2_disc(pl.int_range(1, pl.len() + 1, dtype=pl.Int64))).cum_sum()


def _ideal_dcg(f: Features) -> pl.Expr:
    """The ideal DCG over all judged items (as the ``ndcg`` metric builds it)."""
    gain = gain_of(f, "linear")
    irank = f.ideal_rank(gain, "gain:linear")
    return pl.when(irank.is_not_null()).then(gain * _log2_disc(irank)).otherwise(0.0).sum()


def _rbp_weight(f: Features, p: float) -> pl.Expr:
    """``p**(rank - 1)``, under expected ties its mean over the tie group's ranks."""
    return f.gmean_pos(lambda pos: pl.lit(p) ** (pos.cast(pl.Float64) - 1.0), None, f"rbp:{p}")


def _n_positive(f: Features) -> pl.Expr:
    return (f.rel > 0).cast(pl.Float64).sum()


# --------------------------------------------------------------------------- kernels
RbpGain = Annotated[
    Literal["scaled", "raw", "binary"],
    "gain of an item: relevance / max(1, the user's highest relevance) (scaled: "
    "trec_eval), the relevance itself when >= rel (raw: ranx) or 1 when >= rel "
    "(binary: LensKit)",
]
RbpNormalize = Annotated[
    bool,
    "divide by the RBP of a list whose first min(#relevant, list size) items are "
    "relevant (LensKit RBP(normalize=True); needs gain=binary)",
]


def _check_rbp(metric: str, values: dict[str, Any]) -> None:
    """``rel`` applies to gain=raw|binary only; normalize=true needs gain=binary."""
    if values["gain"] == "scaled" and values["rel"] != 1.0:
        msg = (
            f"parameter 'rel' of metric {metric!r} applies to gain=raw or gain=binary; "
            f"gain='scaled' (trec_eval) counts every positive relevance, got rel={values['rel']!r}"
        )
        raise ValueError(msg)
    if values["normalize"] and values["gain"] != "binary":
        msg = (
            f"metric {metric!r} with normalize=true needs gain='binary' (LensKit's RBP "
            f"normalisation counts relevant items), got gain={values['gain']!r}"
        )
        raise ValueError(msg)


@register(
    "rbp",
    defined="truth",
    family="trec_gain",
    normalized=False,
    summary="Rank-biased precision with persistence p (trec_eval rbp).",
    definition=(
        "(1 - p) * sum over the list (its top k with @k) of gain * p**(rank - 1) (Moffat & "
        "Zobel, 2008); gain=scaled (default): relevance / max(1, the user's highest "
        "relevance), trec_eval's scaling of gains into [0, 1]; gain=raw: the relevance "
        "itself for items with relevance >= rel (ranx rbp, which can exceed 1); "
        "gain=binary: 1 for relevance >= rel (LensKit RBP). normalize=true divides by "
        "the RBP of min(R, L) relevant items at the top, 1 - p**min(R, L), R = #relevant, "
        "L = min(k, #recommended), 0 for an empty list (LensKit RBP(normalize=True)). "
        "Null when no item is relevant: with gain=scaled, no item of positive relevance "
        "(rel= does not apply); otherwise none of relevance >= rel. Expected ties: each "
        "gain times the mean of p**(rank - 1) over its tie group's ranks."
    ),
    check=_check_rbp,
    doc="""
    Rank-biased precision (Moffat & Zobel, 2008), as trec_eval's ``rbp``.

    ``gain`` picks the convention: trec_eval's gains scaled into [0, 1] (default),
    ranx's raw graded relevance, or LensKit's binary relevance (with ``normalize``,
    LensKit's ``RBP(normalize=True)``).

    Examples
    --------
    Relevant items at ranks 1 and 3, persistence 1/2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import rbp
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, 0, 1]})
    >>> df.select(rbp(p=0.5)).item()  # (1 - 0.5) * (1 + 0.5**2)
    0.625
    >>> # LensKit normalize=True: 2 relevant items, the best is 1 + 0.5
    >>> df.select(rbp(p=0.5, gain="binary", normalize=True)).item()  # 1.25 / 1.5
    0.8333333333333334
    """,
)
def _rbp(
    f: Features,
    k: int | None,
    *,
    p: Persistence = 0.9,
    gain: RbpGain = "scaled",
    rel: Rel = 1.0,
    normalize: RbpNormalize = False,
) -> pl.Expr:
    if gain == "scaled":
        top = -f.user_min(-f.rel, "neg_rel")  # the highest relevance of the user
        value = f.rel / pl.max_horizontal(top, pl.lit(1.0))
        n_relevant = _n_positive(f)
    else:
        is_rel = f.is_rel(rel)
        value = is_rel if gain == "binary" else is_rel * f.rel
        n_relevant = num_relevant(f, rel)
    weight = f.gmean_pos(lambda pos: pl.lit(p) ** (f64(pos) - 1.0), k, f"rbp:{p}")
    total = (1.0 - p) * pl.when(f.ret).then(value * weight).otherwise(0.0).sum()
    if normalize:
        best = pl.min_horizontal(n_relevant, list_size(f, k))
        total = pl.when(best > 0).then(total / (1.0 - pl.lit(p) ** best)).otherwise(0.0)
    return defined_if(n_relevant > 0, total)


@register(
    "rbp_resid",
    defined="always",
    family="trec_gain",
    normalized=False,
    takes_k=False,
    # The part of RBP the judgments leave open: smaller is a better established score,
    # as for unjudged (the share of the top k without a judgment).
    higher_is_better=False,
    summary="The RBP residual: what unjudged items and the list's tail could add.",
    definition=(
        "p**#recommended + (1 - p) * sum over unjudged recommended items of "
        "p**(rank - 1) (trec_eval rbp_resid); 0 when no recommended item is unjudged, "
        "as in trec_eval. Expected ties: the mean of p**(rank - 1) over the tie group."
    ),
    doc="""
    The RBP residual (trec_eval ``rbp_resid``): how much RBP could still grow.

    The weight of the unjudged recommended items plus the weight of the ranks past the
    end of the list; 0 when every recommended item is judged (as in trec_eval).

    Examples
    --------
    Three items, the second unjudged (null relevance), persistence 1/2.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import rbp_resid
    >>> df = pl.DataFrame({"user": [1] * 3, "item": list("ABC"),
    ...                    "score": [0.9, 0.8, 0.7], "relevance": [1, None, 0]})
    >>> df.select(rbp_resid(p=0.5)).item()  # 0.5**3 + (1 - 0.5) * 0.5
    0.375
    """,
)
def _rbp_resid(f: Features, k: None, *, p: Persistence = 0.9) -> pl.Expr:
    unjudged = f.ret & ~f.judged
    weight = _rbp_weight(f, p)
    tail = pl.lit(p) ** f.ret.cast(pl.Float64).sum()
    resid = tail + (1.0 - p) * pl.when(unjudged).then(weight).otherwise(0.0).sum()
    return pl.when(unjudged.any()).then(resid).otherwise(0.0)


@register(
    "bin_g",
    defined="truth",
    family="trec_gain",
    aliases=("binG",),
    takes_k=False,
    summary="Binary G: mean over relevant items of 1 / log2(2 + non-relevant above).",
    definition=(
        "sum over relevant recommended items of 1 / log2(2 + #non-relevant or unjudged "
        "items ranked above it), divided by #relevant (trec_eval binG). Expected ties: "
        "within its tie group the number of non-relevant items above a relevant one is "
        "uniform on 0..(n - r)."
    ),
    doc="""
    Binary G (trec_eval ``binG``).

    Each relevant recommended item scores ``1 / log2(2 + #non-relevant items above
    it)``; the sum is divided by the number of relevant items.

    Examples
    --------
    Relevant items at ranks 1 and 3 (one non-relevant item above the second), and a
    third relevant item that was not recommended.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import bin_g
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 1, 1]})
    >>> round(df.select(bin_g()).item(), 6)  # (1 / log2(2) + 1 / log2(3)) / 3
    0.543643
    """,
)
def _bin_g(f: Features, k: None, *, rel: Rel = 1.0) -> pl.Expr:
    is_rel = f.ret & (f.rel >= rel)
    if f.expected:
        value = _bin_g_expected(f, rel)
    else:
        nonrel_above = (f.o - 1 - f.rel_above(rel)).cast(pl.Float64)
        value = 1.0 / (nonrel_above + 2.0).log(2.0)
    n_rel = num_relevant(f, rel)
    return defined_if(n_rel > 0, pl.when(is_rel).then(value).otherwise(0.0).sum() / n_rel)


def _bin_g_expected(f: Features, rel: float) -> pl.Expr:
    # A relevant item of a tie group (first rank a, n items, r relevant) has
    # b = a - 1 - rel_above non-relevant items above the group, and X more inside it,
    # X uniform on 0..n-r. With H(m) = sum_{t < m} 1 / log2(2 + t):
    # E[1 / log2(2 + b + X)] = (H(b + n - r + 1) - H(b)) / (n - r + 1).
    n, a = f.n, f.a
    r = f.gsum(f.is_rel(rel), f"rel>={rel}").cast(pl.Int64)
    b = (a - 1 - f.rel_above(rel)).fill_null(0)
    span = n - r + 1
    t = pl.int_range(0, pl.len() + 1, dtype=pl.Int64).cast(pl.Float64)
    h = pl.concat([pl.lit(0.0), (1.0 / (t + 2.0).log(2.0)).cum_sum()])  # H(0), H(1), ...
    mean = (h.gather(b + span) - h.gather(b)) / span.cast(pl.Float64)
    return f.user_window(mean, f"bin_g_expected:{rel}")


@register(
    "g",
    defined="truth",
    family="trec_gain",
    aliases=("G",),
    takes_k=False,
    ties_require=("deterministic",),
    summary="trec_eval's normalised gain G: gains discounted by the gain still missing.",
    definition=(
        "sum over recommended items at rank i of gain / log2(2 + cost(i) - got(i)), "
        "got(i) = gain of ranks 1..i, cost(i) = sum over ideal ranks 1..i of max(1, "
        "ideal gain); divided by the total gain of the judged items (trec_eval G). "
        "Null when no item has a positive relevance. Deterministic tie policies only."
    ),
    doc="""
    trec_eval's normalised gain ``G``.

    The item at rank i scores ``gain / log2(2 + cost(i) - got(i))``: ``got(i)`` is the
    gain of ranks 1..i, ``cost(i)`` that of the ideal ranks 1..i (each at least 1). The
    sum is divided by the total gain of the judged items. Deterministic tie policies
    only (the default is trec_eval's).

    Examples
    --------
    Gains 1, 0, 2 and an unrecommended item of gain 1: the ideal list is 2, 1, 1, so
    cost = 2, 3, 4 and got = 1, 1, 3.

    >>> import polars as pl
    >>> from polars_rankeval.metrics import g
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 2, 1]})
    >>> round(df.select(g()).item(), 6)  # (1 / log2(2 + 2 - 1) + 2 / log2(2 + 4 - 3)) / 4
    0.473197
    """,
)
def _g(f: Features, k: None) -> pl.Expr:
    gain = gain_of(f, "linear")  # trec_eval: the relevance level
    got = _in_list_order(f, pl.when(f.ret).then(gain).otherwise(0.0))
    cost = gain.sort(descending=True).clip(lower_bound=1.0).cum_sum()
    pos = f.o - 1
    term = gain / (2.0 + cost.gather(pos) - got.gather(pos)).log(2.0)
    per_item = f.user_window(term, "g_term")
    total = pl.when(f.ret & (gain > 0)).then(per_item).otherwise(0.0).sum()
    ideal = gain.sum()
    return defined_if(ideal > 0, total / ideal)


@register(
    "ndcg_rel",
    defined="truth",
    family="trec_gain",
    takes_k=False,
    ties_require=("deterministic",),
    summary="nDCG averaged over the relevant items' ranks (trec_eval ndcg_rel).",
    definition=(
        "(sum over relevant recommended items at rank i of dcg@i / idcg@i + "
        "#relevant unrecommended * dcg / idcg) / #relevant, relevant = positive "
        "relevance, gain = relevance, discount 1 / log2(rank + 1), idcg over all "
        "judged items. Null without a relevant item. Deterministic tie policies only."
    ),
    doc="""
    Normalised DCG averaged over the ranks of the relevant items (trec_eval ``ndcg_rel``).

    Each relevant recommended item at rank i contributes ``dcg@i / idcg@i``; each
    relevant item that was not recommended contributes the full-list ``dcg / idcg``.
    Deterministic tie policies only (the default is trec_eval's).

    Examples
    --------
    Gains 1, 0, 2 and an unrecommended item of gain 1 (ideal list 2, 1, 1).

    >>> import polars as pl
    >>> from math import log2
    >>> from polars_rankeval.metrics import ndcg_rel
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [0.9, 0.8, 0.7, None], "relevance": [1, 0, 2, 1]})
    >>> dcg1, dcg3 = 1.0, 1 + 2 / log2(4)
    >>> idcg1, idcg3 = 2.0, 2 + 1 / log2(3) + 1 / log2(4)
    >>> expected = (dcg1 / idcg1 + dcg3 / idcg3 + dcg3 / idcg3) / 3
    >>> abs(df.select(ndcg_rel()).item() - expected) < 1e-12
    True
    """,
)
def _ndcg_rel(f: Features, k: None) -> pl.Expr:
    gain = gain_of(f, "linear")  # trec_eval: the relevance level
    dcg_upto = _in_list_order(f, pl.when(f.ret).then(gain * _log2_disc(f.o)).otherwise(0.0))
    pos = f.o - 1
    ratio = f.user_window(dcg_upto.gather(pos) / _ideal_dcg_upto(f).gather(pos), "ndcg_at_own_rank")
    relevant_ret = f.ret & (gain > 0)
    at_ranks = pl.when(relevant_ret).then(ratio).otherwise(0.0).sum()
    n_rel = _n_positive(f)
    missed = n_rel - relevant_ret.cast(pl.Float64).sum()
    final = dcg_sum(f, None, "linear", "log", 2.0, None) / _ideal_dcg(f)
    return defined_if(n_rel > 0, (at_ranks + missed * final) / n_rel)


@register(
    "rndcg",
    defined="truth",
    family="trec_gain",
    aliases=("Rndcg",),
    takes_k=False,
    ties_require=("deterministic",),
    summary="nDCG averaged at the R-level cutoffs (trec_eval Rndcg).",
    definition=(
        "mean of ndcg@R_v over the distinct positive relevances v, R_v = #items with "
        "relevance >= v (dcg cut at R_v, idcg cut at R_v; gain = relevance), plus the "
        "full-list dcg / idcg when #recommended > R + 1 (R = #positive items), as "
        "trec_eval computes it. Null without a relevant item. Deterministic tie policies "
        "only."
    ),
    doc="""
    Normalised DCG averaged at the R-level cutoffs (trec_eval ``Rndcg``).

    For each distinct positive relevance v, ndcg at R_v = the number of items with
    relevance at least v; plus the full-list ndcg when more than R + 1 items are
    recommended (R = the number of items with a positive relevance), as trec_eval does.
    Deterministic tie policies only (the default is trec_eval's).

    Examples
    --------
    Gains 1, 0, 2, 0, 0 recommended and an unrecommended item of gain 1: R_2 = 1,
    R_1 = 3, and 5 > R + 1 = 4 recommended items add the full-list point.

    >>> import polars as pl
    >>> from math import log2
    >>> from polars_rankeval.metrics import rndcg
    >>> df = pl.DataFrame({"user": [1] * 6, "item": list("ABCDEF"),
    ...                    "score": [0.9, 0.8, 0.7, 0.6, 0.5, None],
    ...                    "relevance": [1, 0, 2, 0, 0, 1]})
    >>> dcg = 1 + 2 / log2(4)
    >>> idcg1, idcg3 = 2.0, 2 + 1 / log2(3) + 1 / log2(4)
    >>> expected = (1 / idcg1 + dcg / idcg3 + dcg / idcg3) / 3
    >>> abs(df.select(rndcg()).item() - expected) < 1e-12
    True
    """,
)
def _rndcg(f: Features, k: None) -> pl.Expr:
    gain = gain_of(f, "linear")  # trec_eval: the relevance level
    dcg_upto = _in_list_order(f, pl.when(f.ret).then(gain * _log2_disc(f.o)).otherwise(0.0))
    # One row per distinct positive gain (the last of its level in the ideal order)
    # carries ndcg at R_v, the number of items with at least that gain; others null.
    level_end = gain.rank("max", descending=True).cast(pl.Int64)
    is_end = (gain > 0) & (gain.rank("ordinal", descending=True).cast(pl.Int64) == level_end)
    cut = level_end - 1
    at_level = pl.when(is_end).then(dcg_upto.gather(cut) / _ideal_dcg_upto(f).gather(cut))
    ndcg_at_levels = f.user_window(at_level, "ndcg_at_level_ends")
    n_rel = _n_positive(f)
    extra = f.ret.cast(pl.Float64).sum() > n_rel + 1
    final = dcg_sum(f, None, "linear", "log", 2.0, None) / _ideal_dcg(f)
    total = ndcg_at_levels.sum() + pl.when(extra).then(final).otherwise(0.0)
    points = ndcg_at_levels.is_not_null().cast(pl.Float64).sum() + extra.cast(pl.Float64)
    return defined_if(n_rel > 0, total / points)

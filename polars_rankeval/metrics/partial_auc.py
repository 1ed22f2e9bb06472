"""Partial AUC up to the k-th negative: ``partial_auc`` (pAUC@k) and ``pap`` (pAp@k).

Both read a user's ranking as a classifier that stops at its k-th non-relevant
recommended item (Hiranandani et al., 2020, "Optimization and Analysis of the pAp@k
Metric for Recommender Systems"; RecTools ``PartialAUC`` and ``PAP``):

* ``partial_auc@k`` = (1 / (k R)) * sum over the relevant items p of
  #{the top k negatives ranked below p}, R = #relevant items of the user;
* ``pap@k`` = the same over the first min(k, R) relevant items, divided by k min(k, R):
  like precision@k when the user has more than k relevant items, like pAUC otherwise.

The negatives are the recommended non-relevant items (an unjudged recommended item
counts as non-relevant); under ``rank_positions="absolute"`` every position of a gap in
the ranks is a negative too (RecTools fills the gaps). A relevant item that is not
recommended is below every negative (it adds 0), and a list with fewer than k negatives
is read as if the missing negatives were below every recommended item (RecTools'
``insufficient_handling="ignore"``); ``insufficient="exclude"`` makes the value of such
a user undefined (null) when it also misses a relevant item, RecTools' "exclude", and
``insufficient="raise"`` makes it an error (RecTools' "raise"): the kernel marks such a
user NaN and ``evaluate`` raises naming the metric, their number and the first of them
(:class:`polars_rankeval.metrics.spec.Raises`), otherwise the values of "exclude".

A relevant item with F negatives above it adds max(0, k - F). Under
``ties="expected"`` a relevant item in a tie group with s negatives has a number U of
them above it that is uniform on 0..s (its place among those s + 1 items is uniform),
so it adds E[max(0, c - U)] with c = k - (negatives above the group): a closed form.
``pap`` also keeps only the first min(k, R) relevant items: a tie group holding the
k-th relevant item (at most one per user) adds sum_{i <= d} E[max(0, c - U_i)] over its
first d = k - (relevant above the group) relevant items, U_i following the negative
hypergeometric law (r relevant, s negative items in the group). Given U_d = t the items
before the d-th relevant one are a uniform interleaving of d - 1 relevant items and t
negatives, so this is sum_{t=0..s} P(U_d = t) [(d - 1) E[max(0, c - V_t)] + max(0, c - t)]
with V_t uniform on 0..t: one term per t, held by the group's row at offset t (the
group has r + s > s rows), a row-wise expression summed in the user's aggregation.

Without a cutoff, k is the user's number of negatives in its list (at least 1, the
missing negative read as below the list): ``partial_auc`` is then the AUC of the
recommended list with the relevant items never recommended ranked last.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import Rel, defined_if, f64, num_relevant
from polars_rankeval.metrics.features import Features, lgamma
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import Raises

FAMILY = "binary"
Insufficient = Annotated[
    Literal["ignore", "exclude", "raise"],
    "a user with fewer than k negatives in its list and a relevant item not recommended: "
    "scored as if the missing negatives ranked below the list (ignore), undefined "
    "(exclude: null, the empty= policy decides) or an error naming such users (raise: "
    "evaluate raises, else as exclude; a stand-alone expression marks them NaN); "
    "RecTools' insufficient_handling",
]
_RAISES = Raises(
    "insufficient",
    "raise",
    "fewer than k non-relevant recommended items and a relevant item not recommended "
    "(insufficient=raise; insufficient=exclude leaves such users out, ignore scores them)",
)


class _Rows:
    """Row quantities shared by both metrics (relevant recommended rows only)."""

    def __init__(self, f: Features, k: int | None, rel: float) -> None:
        self.is_rel = f.is_rel(rel)
        self.pos = f.ret & (self.is_rel > 0)
        self.a, self.n = f.a, f.n
        # r relevant and s negative rows in the row's tie group.
        self.r = f.gsum(self.is_rel, f"rel>={rel}")
        self.s = f64(self.n) - self.r
        self.rel_above = f64(f.rel_above(rel))
        # Negatives above the group (gaps of absolute ranks are positions too).
        self.neg_above = f64(self.a - 1) - self.rel_above
        self.n_rel = num_relevant(f, rel)
        self.hits_all = (f64(f.ret) * self.is_rel).sum()
        # The list length: the last position of a recommended row (gaps included).
        self.length = f64(pl.when(f.ret).then(self.a + self.n - 1).max().fill_null(0))
        self.negatives = self.length - self.hits_all
        # Without @k: every negative of the list, at least one (the AUC of the list).
        self.k = (
            pl.lit(float(k)) if k is not None else pl.max_horizontal(self.negatives, pl.lit(1.0))
        )
        self.c = self.k - self.neg_above

    def gain(self) -> pl.Expr:
        """E[max(0, c - U)], U uniform on 0..s: the row's negatives below it, of k."""
        t = pl.min_horizontal(self.s + 1.0, self.c).clip(lower_bound=0.0)
        return (t * self.c - t * (t - 1.0) / 2.0) / (self.s + 1.0)

    def sufficient(self) -> pl.Expr:
        """RecTools' check: at least k negatives in the list, or every relevant item in it."""
        return (self.negatives >= self.k) | (self.hits_all >= self.n_rel)


def _straddle_term(f: Features, rows: _Rows, rel: float, kk: pl.Expr, *, tag: str) -> pl.Expr:
    """The straddling tie group's sum, spread over its rows (0 on every other row).

    The group (r relevant and s negative items, ``ra`` relevant items above it,
    ``c = k - negatives above it``) contributes ``sum_{i <= d} E[max(0, c - U_i)]``
    over its first ``d = k - ra`` relevant items (``0 < d < r``). Conditioning on
    ``U_d = t``, the items before the d-th relevant one are a uniform interleaving of
    d - 1 relevant items and t negatives, so each of those d - 1 relevant items has a
    number of negatives above it uniform on 0..t. Hence the sum is
    ``sum_t P(U_d = t) [(d - 1) g(c, t) + max(0, c - t)]`` over t = 0..s, with
    ``g(c, t) = E[max(0, c - V)]``, V uniform on 0..t (:meth:`_Rows.gain`) and
    ``P(U_d = t) = C(t + d - 1, t) C(s - t + r - d, s - t) / C(r + s, r)``. The
    group has r + s >= s + 2 rows: its row at offset j holds the term t = j.

    ``kk`` is k on every row (a literal, or a per-user column); ``tag`` names the
    columns. The term is a ``tie_row`` (computed on the rows of real ties only) whose
    inputs are ``tie_row`` columns of their own: the Lanczos expression of
    :func:`lgamma` then reads a column instead of inlining each input ten times, which
    keeps the plan (and the fixed cost of a call) small. Inline (no columns) the
    inputs go through two lists instead, for the same reason.
    """
    r, s = rows.r, rows.s
    # Relevant items above the row's group, on every row of the group (r > 0).
    ra_sum = f.gsum(rows.is_rel * rows.rel_above.fill_null(0.0), f"rel_above*rel>={rel}")
    ra = pl.when(r > 0).then(ra_sum / r).otherwise(0.0)
    d = kk - ra
    c = kk - (f64(f.a - 1) - ra)
    t = f64(f.j)
    straddle = f.ret & (ra < kk) & (ra + r > kk) & (t <= s)
    # log C(t + d - 1, t) + log C(s - t + r - d, s - t) - log C(r + s, r) as Gamma terms.
    num = [t + d, s - t + r - d + 1.0, r + 1.0, s + 1.0]
    den = [t + 1.0, d, s - t + 1.0, r - d + 1.0, r + s + 1.0]
    if f.window:

        def col(name: str, expr: pl.Expr) -> pl.Expr:
            return f.tie_row(f"__prk_pap_{name}[{tag}]", expr, pl.lit(1.0))

        d, c, t = col("d", d), col("c", c), col("t", t)
        straddle = f.tie_row(f"__prk_pap_in[{tag}]", straddle, pl.lit(False))
        log_law = pl.sum_horizontal(*(lgamma(col(f"num{i}", x)) for i, x in enumerate(num)))
        log_law -= pl.sum_horizontal(*(lgamma(col(f"den{i}", x)) for i, x in enumerate(den)))
    else:  # inline: no columns; the inputs go through lists, Lanczos written twice
        log_gamma = lgamma(pl.element())
        log_law = pl.concat_list(num).list.eval(log_gamma).list.sum()
        log_law -= pl.concat_list(den).list.eval(log_gamma).list.sum()
    width = pl.min_horizontal(t + 1.0, c).clip(lower_bound=0.0)
    below = (width * c - width * (width - 1.0) / 2.0) / (t + 1.0)
    value = log_law.exp() * ((d - 1.0) * below + (c - t).clip(lower_bound=0.0))
    value = pl.when(straddle).then(value).otherwise(0.0)
    return f.tie_row(f"__prk_pap_straddle[{tag}]", value, pl.lit(0.0), after=True)


def _base_k(f: Features, rows: _Rows) -> pl.Expr:
    """The k of a metric without @k (the user's negatives, at least 1), from base columns.

    The list length is the number of recommended rows, or under absolute positions
    the largest rank (gaps are negatives): the same value as :attr:`_Rows.k`, read
    without positions so that :meth:`Features.user_base` can compute it early.
    """
    order = pl.col(f.cols.order)
    length = f64(order.max()) if f.absolute else f64(f.ret).sum()
    hits = (f64(f.ret) * rows.is_rel).sum()
    return pl.max_horizontal(length.fill_null(0.0) - hits, pl.lit(1.0))


def _finish(rows: _Rows, numerator: pl.Expr, relevant: pl.Expr, insufficient: str) -> pl.Expr:
    value = numerator / (rows.k * relevant)
    defined = (rows.n_rel > 0) & (rows.k > 0)
    if insufficient == "ignore":
        return defined_if(defined, value)
    out = defined_if(defined & rows.sufficient(), value)
    if insufficient == "raise":  # NaN marks the users evaluate raises on (Raises)
        out = pl.when(defined & ~rows.sufficient()).then(float("nan")).otherwise(out)
    return out


@register(
    "partial_auc",
    absolute_positions=True,
    family=FAMILY,
    aliases=("pauc",),
    summary="Partial AUC up to the k-th non-relevant recommended item (pAUC@k).",
    definition=(
        "(1 / (k R)) * sum over the user's R relevant items of the number of the top k "
        "non-relevant recommended items ranked below it (RecTools PartialAUC); a relevant "
        "item not recommended adds 0, negatives missing from a short list count as below "
        "it (insufficient=ignore) or the user is undefined when it also misses a relevant "
        "item (insufficient=exclude), or an error naming such users (insufficient=raise). "
        "Gaps of absolute ranks are negatives. Without @k, k "
        "is the user's number of negatives in the list, at least 1 (the AUC of the list, "
        "relevant items not recommended last). Null without a relevant item. "
        "Exact expectation under ties=expected."
    ),
    defined="ranking",
    raises=_RAISES,
    doc="""
    Partial AUC of one user's ranking up to its k-th negative (pAUC@k).

    The share of the (relevant item, one of the top k non-relevant recommended items)
    pairs ranked in the right order, over all the user's relevant items (those never
    recommended rank last). ``k`` counts negatives, not positions: the list needs more
    than k items. RecTools ``PartialAUC(k, insufficient_handling=...)``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 4, 5],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, None], "relevance": [0, 1, 0, 1, 1]})
    >>> df.select(prk.partial_auc(2))  # ((2 - 1) + (2 - 2) + 0) / (2 * 3)
    shape: (1, 1)
    ┌───────────────┐
    │ partial_auc@2 │
    │ ---           │
    │ f64           │
    ╞═══════════════╡
    │ 0.166667      │
    └───────────────┘
    """,
)
def _partial_auc(
    f: Features, k: int | None, *, rel: Rel = 1.0, insufficient: Insufficient = "ignore"
) -> pl.Expr:
    rows = _Rows(f, k, rel)
    numerator = pl.when(rows.pos).then(rows.gain()).otherwise(0.0).sum()
    return _finish(rows, numerator, rows.n_rel, insufficient)


@register(
    "pap",
    absolute_positions=True,
    family=FAMILY,
    summary="Partial AUC + precision at k (pAp@k): the top min(k, R) relevant items.",
    definition=(
        "(1 / (k b)) * sum over the first b = min(k, R) relevant items of the number of "
        "the top k non-relevant recommended items ranked below it (RecTools PAP; "
        "Hiranandani et al., 2020): precision@k-like for users with more than k relevant "
        "items, partial_auc@k otherwise. insufficient and no @k as partial_auc. Null "
        "without a relevant item. Exact expectation under ties=expected."
    ),
    defined="ranking",
    raises=_RAISES,
    doc="""
    Partial AUC + precision at k (pAp@k) of one user's ranking.

    The share of the (relevant item, non-relevant item) pairs ranked in the right
    order among the first min(k, R) relevant items and the top k non-relevant
    recommended items. RecTools ``PAP(k, insufficient_handling=...)``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 4, 5],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0], "relevance": [1, 0, 1, 1, 0]})
    >>> df.select(prk.pap(2))  # first 2 relevant: (2 - 0) + (2 - 1) over 2 * 2
    shape: (1, 1)
    ┌───────┐
    │ pap@2 │
    │ ---   │
    │ f64   │
    ╞═══════╡
    │ 0.75  │
    └───────┘
    """,
)
def _pap(
    f: Features, k: int | None, *, rel: Rel = 1.0, insufficient: Insufficient = "ignore"
) -> pl.Expr:
    rows = _Rows(f, k, rel)
    kk = rows.k
    # Groups whose relevant items are all among the first k relevant ones add in full.
    inside = rows.pos & (rows.rel_above + rows.r <= kk)
    numerator = pl.when(inside).then(rows.gain()).otherwise(0.0).sum()
    if f.expected:
        # At most one tie group straddles the k-th relevant item (ties=expected only).
        # Row values computed on the rows of real ties only. Without @k, k (the user's
        # negatives) comes from a per-user column computed before them.
        k_rows = kk if k is not None else f.user_base(_base_k(f, rows), f"pap_k[{rel}]")
        term = _straddle_term(f, rows, rel, k_rows, tag=f"{k},{rel}")
        numerator = numerator + term.sum()
    relevant = pl.min_horizontal(rows.n_rel, kk)
    return _finish(rows, numerator, relevant, insufficient)

"""Full-catalog classification metrics (Schröder et al., 2011, sections 4.2, 4.3, 5).

The top-k list is read as a classifier over the whole catalog of N items: an item is
*recommended* when it is in the user's top k and *relevant* when its relevance is at
least ``rel``. The user's contingency table is

* L = min(k, #recommended), the size of the actual top-k list (every recommended row
  without ``@k``); ``denominator="k"`` on ``accuracy``, ``mcc`` and ``fbeta`` sets L = k
  even for a shorter list, as RecTools' ``Accuracy``, ``MCC`` and ``F1Beta`` do;
* R = #relevant rows of the user, recommended or not;
* tp = hits@k, fp = L - tp, fn = R - tp, tn = N - L - R + tp (every catalog item the
  user has no row for is a true negative).

N is the catalog size (``features.n_items``; :func:`polars_rankeval.evaluate` takes it
as ``n_items=``). Every per-user metric here but ``lauc`` is a function of tp, linear
once L, R and N are fixed (MCC's numerator tp * tn - fp * fn = N * tp - L * R), and L,
R and N do not depend on how ties are ordered: under ``ties="expected"`` plugging in
the expected number of hits gives the exact expected value. ``lauc`` is linear in tp
and in the expected positions of the relevant items (see its kernel). A value is null
(undefined; the ``empty=`` policy decides) when one of its denominators is 0, and for
every metric when N is smaller than the user's number of rows (n_items too small).

``global_auc`` is Jurity's AUC: one Mann-Whitney statistic over all the user-item
pairs with both a score and a relevance, per ``by`` group rather than per user.
"""

from __future__ import annotations

from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._common import (
    Rel,
    defined_if,
    f64,
    hits,
    list_size,
    num_relevant,
)
from polars_rankeval.metrics.features import Features, exact_score
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import GlobalPlan

FAMILY = "classification"
Beta = Annotated[
    float, Interval(0, None, closed="neither"), "weight of recall against precision (> 0)"
]
ListSize = Annotated[
    Literal["retrieved", "k"],
    "the list size L: min(k, #recommended) (retrieved) or k even for a shorter list "
    "(k: RecTools Accuracy, MCC, F1Beta, fp = k - tp)",
]
Catalog = Annotated[
    Literal["n_items", "candidates"],
    "the negatives: the catalog of n_items less the relevant items (n_items), or the "
    "user's own non-relevant rows (candidates: torchmetrics RetrievalFallOut)",
]
NoNegative = Annotated[
    Literal["undefined", "one", "zero"],
    "a user without a negative item: undefined (null; empty= decides), 1 (torchmetrics "
    "RetrievalFallOut's default empty_target_action='pos') or 0",
]
_SCORE = "__prk_gauc_score"


class _Table:
    """The user's contingency table over the catalog, as aggregation expressions."""

    def __init__(
        self, f: Features, k: int | None, rel: float, size: ListSize = "retrieved"
    ) -> None:
        self.n = f.n_items
        # size="k" (RecTools): the list is k long even when fewer items were recommended.
        self.size = list_size(f, k, size)
        self.relevant = num_relevant(f, rel)
        self.tp = hits(f, k, rel)
        self.fp = self.size - self.tp
        self.fn = self.relevant - self.tp
        self.tn = self.n - self.size - self.relevant + self.tp
        # The catalog must hold at least the user's own rows.
        self.fits = pl.len().cast(pl.Float64) <= self.n

    def defined(self, condition: pl.Expr, value: pl.Expr) -> pl.Expr:
        """``value`` where the catalog fits and ``condition`` holds, else null."""
        return defined_if(self.fits & condition, value)


# --------------------------------------------------------------------------- kernels
@register(
    "fallout",
    needs=("n_items",),
    absolute_positions=True,
    higher_is_better=False,
    bounds=(0.0, 1.0),
    defined="truth",
    family=FAMILY,
    normalized=False,
    aliases=("fpr",),
    summary="False positive rate: irrelevant catalog items that are in the top k.",
    definition=(
        "fp / (fp + tn) = (L - hits@k) / (N - R) over a catalog of N items, L = min(k, "
        "#recommended), R = #relevant (Schröder 4.2); lower is better. catalog=candidates "
        "takes the user's own rows as the catalog, (L - hits@k) / #non-relevant rows "
        "(torchmetrics RetrievalFallOut, whose catalog is the query's candidates). Null "
        "without a negative item (N = R), or 1 or 0 with no_negative=one|zero. Expected "
        "ties: exact (linear in hits@k)."
    ),
    doc="""
    Fallout (false positive rate) at k: fp / (fp + tn) over a catalog of ``n_items``.

    Every metric of the classification family reads the top-k list as a classifier of
    the whole catalog and takes the same arguments. ``catalog="candidates"`` reads it
    over the user's own rows instead (every row a candidate, unjudged rows counted as
    non-relevant; ``n_items`` is then not read): torchmetrics' ``RetrievalFallOut``, which
    scores a query without a negative candidate 1 by default (``no_negative="one"``).

    Examples
    --------
    One user: items 1..5 scored 5..1, relevant 1, 3 and 6 (6 never recommended), a
    catalog of 10 items. At k = 2: L = 2, R = 3, tp = 1, fp = 1, fn = 2 and
    tn = 10 - 2 - 3 + 1 = 6.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.fallout(2, n_items=10)).item() == 1 / (1 + 6)
    True

    Over the user's 6 rows, 3 of them non-relevant: fp = 1 of 3.

    >>> df.select(prk.fallout(2, n_items=10, catalog="candidates")).item() == 1 / 3
    True
    """,
)
def _fallout(
    f: Features,
    k: int | None,
    *,
    rel: Rel = 1.0,
    catalog: Catalog = "n_items",
    no_negative: NoNegative = "undefined",
) -> pl.Expr:
    if catalog == "candidates":
        relevant = num_relevant(f, rel)
        negatives = pl.len().cast(pl.Float64) - relevant
        value = (list_size(f, k) - hits(f, k, rel)) / negatives
        fits = pl.lit(True)
    else:
        t = _Table(f, k, rel)
        negatives = t.n - t.relevant
        value = t.fp / negatives
        fits = t.fits
    if no_negative == "undefined":
        return defined_if(fits & (negatives > 0), value)
    fallback = 1.0 if no_negative == "one" else 0.0
    return defined_if(fits, pl.when(negatives > 0).then(value).otherwise(fallback))


@register(
    "miss_rate",
    needs=("n_items",),
    absolute_positions=True,
    higher_is_better=False,
    bounds=(0.0, 1.0),
    defined="truth",
    family=FAMILY,
    normalized=False,
    aliases=("fnr",),
    summary="False negative rate: relevant items that are not in the top k.",
    definition=(
        "fn / (tp + fn) = (R - hits@k) / R = 1 - recall@k (Schröder 4.2); lower is "
        "better. Null without a relevant item."
    ),
    doc="""
    Miss rate (false negative rate) at k: fn / (tp + fn) = 1 - recall@k.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.miss_rate(2, n_items=10)).item() == 2 / 3
    True
    """,
)
def _miss_rate(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    t = _Table(f, k, rel)
    return t.defined(t.relevant > 0, t.fn / t.relevant)


@register(
    "inverse_precision",
    needs=("n_items",),
    absolute_positions=True,
    family=FAMILY,
    aliases=("npv",),
    summary="Inverse precision: catalog items outside the top k that are irrelevant.",
    definition=(
        "tn / (fn + tn) = tn / (N - L) with tn = N - L - R + hits@k (Schröder 4.2, the "
        "negative predictive value). Null when the top k holds the whole catalog (N = L)."
    ),
    doc="""
    Inverse precision at k: tn / (fn + tn), the irrelevant share of the items left out.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.inverse_precision(2, n_items=10)).item() == 6 / (2 + 6)
    True
    """,
)
def _inverse_precision(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    t = _Table(f, k, rel)
    outside = t.n - t.size
    return t.defined(outside > 0, t.tn / outside)


@register(
    "inverse_recall",
    needs=("n_items",),
    absolute_positions=True,
    defined="truth",
    family=FAMILY,
    aliases=("specificity", "tnr"),
    summary="Inverse recall (specificity): irrelevant catalog items left out of the top k.",
    definition=(
        "tn / (fp + tn) = tn / (N - R) = 1 - fallout@k (Schröder 4.2, true negative rate). "
        "Null when every catalog item is relevant (N = R)."
    ),
    doc="""
    Inverse recall (specificity) at k: tn / (fp + tn) = 1 - fallout@k.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.inverse_recall(2, n_items=10)).item() == 6 / (1 + 6)
    True
    """,
)
def _inverse_recall(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    t = _Table(f, k, rel)
    negatives = t.n - t.relevant
    return t.defined(negatives > 0, t.tn / negatives)


@register(
    "fbeta",
    needs=("n_items",),
    absolute_positions=True,
    defined="truth",
    family=FAMILY,
    summary="F-beta of precision@k and recall@k; beta=1 is F1.",
    definition=(
        "(1 + beta^2) * tp / ((1 + beta^2) * tp + beta^2 * fn + fp) = (1 + beta^2) * "
        "hits@k / (beta^2 * R + L), L = min(k, #recommended), beta > 0; fbeta@k equals "
        "f1(denominator=retrieved)@k; denominator=k sets L = k (RecTools F1Beta, whose "
        "precision is hits@k / k). Null without a relevant item; 0 when there is no hit. "
        "Does not depend on the catalog size. Expected ties: exact (linear in hits@k)."
    ),
    doc="""
    F-beta at k: (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp).

    ``beta`` > 0 weighs recall beta times as much as precision; ``beta=1`` is F1 over
    the actual list size min(k, #recommended), i.e. ``f1(denominator="retrieved")``.
    The value does not depend on ``n_items``; it is asked for so that every metric of
    the classification family takes the same arguments. ``denominator="k"`` takes the
    list to be k long even when fewer items were recommended, so that precision is
    hits@k / k: RecTools' ``F1Beta`` (1 + beta^2) hits@k / (beta^2 R + k).

    The other arguments as for :func:`fallout`.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.fbeta(2, n_items=10, beta=2.0)).item() == 5 * 1 / (4 * 3 + 2)
    True

    At k = 10 the list holds the 5 scored items (L = 5), or 10 with ``denominator="k"``:

    >>> df.select(prk.fbeta(10, n_items=10), prk.fbeta(10, n_items=10, denominator="k")).row(0)
    (0.5, 0.3076923076923077)
    """,
)
def _fbeta(
    f: Features,
    k: int | None,
    *,
    beta: Beta = 1.0,
    rel: Rel = 1.0,
    denominator: ListSize = "retrieved",
) -> pl.Expr:
    if beta <= 0:
        msg = f"parameter 'beta' of metric 'fbeta' must be > 0, got {beta!r}"
        raise ValueError(msg)
    t = _Table(f, k, rel, denominator)
    b2 = beta * beta
    if b2 >= 1.0:
        # Divided through by beta^2, so that a huge beta tends to recall, not inf / inf.
        inv = 1.0 / b2
        value = (1.0 + inv) * t.tp / (t.relevant + inv * t.size)
    else:
        value = (1.0 + b2) * t.tp / (b2 * t.relevant + t.size)
    # tp > 0 implies size >= 1 and relevant >= 1: the denominator is positive.
    return t.defined(t.relevant > 0, pl.when(t.tp > 0).then(value).otherwise(0.0))


@register(
    "markedness",
    needs=("n_items",),
    absolute_positions=True,
    bounds=(-1.0, 1.0),
    family=FAMILY,
    normalized=False,
    summary="Markedness (Powers): precision + inverse precision - 1, in [-1, 1].",
    definition=(
        "tp / (tp + fp) + tn / (fn + tn) - 1 = hits@k / L + tn / (N - L) - 1 (Schröder "
        "5.1). Null when nothing is recommended (L = 0) or the top k holds the whole "
        "catalog (L = N)."
    ),
    doc="""
    Markedness at k (Powers): precision + inverse precision - 1, in [-1, 1].

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.markedness(2, n_items=10)).item() == 1 / 2 + 6 / 8 - 1
    True
    """,
)
def _markedness(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    t = _Table(f, k, rel)
    outside = t.n - t.size
    return t.defined((t.size > 0) & (outside > 0), t.tp / t.size + t.tn / outside - 1.0)


@register(
    "informedness",
    needs=("n_items",),
    absolute_positions=True,
    bounds=(-1.0, 1.0),
    defined="truth",
    family=FAMILY,
    normalized=False,
    summary="Informedness (Powers, Youden's J): recall + inverse recall - 1, in [-1, 1].",
    definition=(
        "tp / (tp + fn) + tn / (fp + tn) - 1 = hits@k / R + tn / (N - R) - 1 (Schröder "
        "5.1); 2 * AUC - 1 of the top-k list read as a 0/1 score. Null without a relevant "
        "item (R = 0) or without an irrelevant one (R = N)."
    ),
    doc="""
    Informedness at k (Powers; Youden's J): recall + inverse recall - 1, in [-1, 1].

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.informedness(2, n_items=10)).item() == 1 / 3 + 6 / 7 - 1
    True
    """,
)
def _informedness(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    t = _Table(f, k, rel)
    negatives = t.n - t.relevant
    return t.defined((t.relevant > 0) & (negatives > 0), t.tp / t.relevant + t.tn / negatives - 1.0)


def _phi(t: _Table) -> pl.Expr:
    """Matthews / phi correlation: (N tp - L R) / sqrt(L R (N - L) (N - R))."""
    den = t.size * t.relevant * (t.n - t.size) * (t.n - t.relevant)
    return t.defined(den > 0, (t.n * t.tp - t.size * t.relevant) / den.sqrt())


@register(
    "mcc",
    needs=("n_items",),
    absolute_positions=True,
    bounds=(-1.0, 1.0),
    family=FAMILY,
    normalized=False,
    summary="Matthews correlation of 'in the top k' and 'relevant' over the catalog.",
    definition=(
        "(tp * tn - fp * fn) / sqrt((tp + fp)(fn + tn)(tp + fn)(fp + tn)) = (N * hits@k - "
        "L * R) / sqrt(L * R * (N - L) * (N - R)), in [-1, 1] (Schröder 5.1). Null when a "
        "factor is 0 (L = 0, L = N, R = 0 or R = N), where scikit-learn and RecTools "
        "return 0. denominator=k sets L = k even for a shorter list (RecTools MCC: fp = k - "
        "tp, tn = N - k - fn). Expected ties: exact (linear in hits@k)."
    ),
    doc="""
    Matthews correlation at k of "in the top k" and "relevant" over the catalog.

    Null (undefined) when a margin of the contingency table is 0; scikit-learn's
    ``matthews_corrcoef`` and RecTools' ``MCC`` return 0 there instead.
    ``denominator="k"`` takes the list to be k long even when fewer items were
    recommended (fp = k - tp, tn = N - k - fn), as RecTools' ``MCC`` does.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> value = df.select(prk.mcc(2, n_items=10)).item()
    >>> abs(value - (1 * 6 - 1 * 2) / (2 * 3 * 8 * 7) ** 0.5) < 1e-15
    True
    """,
)
def _mcc(
    f: Features, k: int | None, *, rel: Rel = 1.0, denominator: ListSize = "retrieved"
) -> pl.Expr:
    return _phi(_Table(f, k, rel, denominator))


@register(
    "boolean_kendall_tau",
    needs=("n_items",),
    bounds=(-1.0, 1.0),
    family=FAMILY,
    normalized=False,
    summary="Kendall's tau-b between 'in the top k' and 'relevant' over the catalog.",
    definition=(
        "tau-b of two 0/1 variables over the N catalog items (Schröder 4.3): concordant "
        "pairs tp * tn, discordant fp * fn, untied pairs L(N - L) and R(N - R), so it "
        "equals mcc@k. Relation to AUC: tau-b = (2 * AUC01 - 1) * sqrt(R (N - R) / "
        "(L (N - L))), AUC01 the AUC of the top-k list as a 0/1 score (the paper notes the "
        "two are highly correlated). Null when L or R is 0 or N."
    ),
    doc="""
    Kendall's tau-b of "in the top k" and "relevant" over the catalog (Schröder 4.3).

    For two 0/1 variables tau-b is the phi coefficient, so this equals :func:`mcc`.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> tau, phi = df.select(prk.boolean_kendall_tau(2, n_items=10), prk.mcc(2, n_items=10)).row(0)
    >>> tau == phi
    True
    """,
)
def _boolean_kendall_tau(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    return _phi(_Table(f, k, rel))


@register(
    "accuracy",
    needs=("n_items",),
    absolute_positions=True,
    defined="always",
    family=FAMILY,
    summary="Catalog items classified right: relevant in the top k, irrelevant outside it.",
    definition=(
        "(tp + tn) / N = (N - L - R + 2 * hits@k) / N; dominated by the true negatives in "
        "a large catalog; denominator=k sets L = k even for a shorter list (RecTools "
        "Accuracy: fp = k - tp). Never undefined. Expected ties: exact (linear in hits@k)."
    ),
    doc="""
    Accuracy at k: (tp + tn) / N, the catalog items classified right.

    ``denominator="k"`` takes the list to be k long even when fewer items were
    recommended (fp = k - tp, tn = N - k - fn), as RecTools' ``Accuracy`` does.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> df.select(prk.accuracy(2, n_items=10)).item() == (1 + 6) / 10
    True

    At k = 8 the list holds the 5 scored items: tn = 10 - 5 - 3 + 2 = 4. Read as a list
    of k = 8 items (RecTools), tn = 10 - 8 - 3 + 2 = 1:

    >>> df.select(prk.accuracy(8, n_items=10), prk.accuracy(8, n_items=10, denominator="k")).row(0)
    (0.6, 0.3)
    """,
)
def _accuracy(
    f: Features, k: int | None, *, rel: Rel = 1.0, denominator: ListSize = "retrieved"
) -> pl.Expr:
    t = _Table(f, k, rel, denominator)
    return t.defined(t.n > 0, (t.tp + t.tn) / t.n)


@register(
    "lauc",
    needs=("n_items",),
    defined="truth",
    family=FAMILY,
    summary="Limited AUC (Schröder 5.2): ROC of the top k, then a straight line to (1, 1).",
    definition=(
        "area under the ROC curve (fallout, recall) of the first k recommendations, closed "
        "by a straight line from its end point (fp / (N - R), tp / R) to (1, 1): "
        "(C + (N - R - fp)(tp + R) / 2) / (R (N - R)), C = (relevant, irrelevant) pairs of "
        "the top k in the right order. 1 when every relevant item is in the top k ahead of "
        "every irrelevant one, 0 when the top k holds only irrelevant items and all of "
        "them, 1/2 for an empty list. Null when R = 0 or R = N. Expected ties: exact "
        "(linear in hits@k and in the positions of the relevant items)."
    ),
    doc="""
    Limited area under the ROC curve at k (Schröder et al., 2011, section 5.2).

    The ROC curve (fallout on x, recall on y) of the first k recommendations, then a
    straight line from its end point to (1, 1): relevant items left out of the top k
    are assumed spread uniformly over the rest of the catalog. Changes below the top k
    do not matter; a swap of a relevant and an irrelevant item anywhere inside the top
    k moves the value by 1 / (R (N - R)).

    Examples
    --------
    At k = 2 the curve steps up to recall 1/3 (item 1), right to fallout 1/7 (item 2),
    then runs straight to (1, 1): 1/3 * 1/7 plus a trapezoid of width 6/7 and heights
    1/3 and 1.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6],
    ...                    "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
    ...                    "relevance": [1, 0, 1, 0, 0, 1]})
    >>> value = df.select(prk.lauc(2, n_items=10)).item()
    >>> abs(value - (1 / 3 * 1 / 7 + 6 / 7 * (1 / 3 + 1) / 2)) < 1e-15
    True
    """,
)
def _lauc(f: Features, k: int | None, *, rel: Rel = 1.0) -> pl.Expr:
    # With T = sum over relevant items in the list of (L - position), T = C + tp(tp-1)/2
    # (the items below a relevant one are irrelevant ones in C or relevant ones), so
    # 2 R (N-R) lauc = 2C + (N-R-L+tp)(tp+R) = 2T + (N-L+1) tp + (N-R-L) R: the tp^2
    # terms cancel, leaving a sum linear in tp and in the positions of the relevant
    # items, whose expectations under ties are the tie-group means.
    t = _Table(f, k, rel)
    is_rel = f.is_rel(rel)
    mean_pos = f.gmean_pos(lambda p: p, k, "pos")
    positions = pl.when(f.ret & (is_rel > 0)).then(mean_pos).otherwise(0.0).sum()
    below = t.size * t.tp - positions
    negatives = t.n - t.relevant
    num = 2.0 * below + (t.n - t.size + 1.0) * t.tp + (negatives - t.size) * t.relevant
    return t.defined((t.relevant > 0) & (negatives > 0), num / (2.0 * t.relevant * negatives))


@register(
    "global_auc",
    family=FAMILY,
    takes_k=False,
    scope="global",
    # Orders (score, label) pairs of many users: item ids cannot break its ties.
    ties_require=("pair_weight",),
    summary="One AUC over all user-item pairs with a score and a relevance (Jurity).",
    definition=(
        "Mann-Whitney over the rows with both a score and a relevance, pooled over all the "
        "users of a by group (not a mean over users; Jurity's AUC, scikit-learn's "
        "roc_auc_score on those rows): (relevant, irrelevant) pairs with the relevant one "
        "scored higher, a tie counting 1/2 (ties=expected), 1 (optimistic) or 0 "
        "(pessimistic), over #relevant * #irrelevant. Null without both kinds of row. "
        "With rank= the ranks order the rows (1 = best). The summary's only value: not "
        "available per user."
    ),
)
def _global_auc(f: Features, k: None, *, rel: Rel = 1.0) -> GlobalPlan:
    by = f.by
    tie_weight = f.tie.pair_weight
    if tie_weight is None:  # kept out by ties_require: the registry checks first
        msg = f"metric 'global_auc' does not support ties={f.ties!r}"
        raise ValueError(msg)
    cols = f.cols
    # Compared across users, so the exact value itself (not a per-user rank).
    score = exact_score(cols, f.order_dtype)
    label = pl.col(cols.relevance) >= rel

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        rated = rows.filter(pl.col(cols.order).is_not_null() & pl.col(cols.relevance).is_not_null())
        return rated.group_by([*by, score.alias(_SCORE)]).agg(
            pos=f64(label).sum(), neg=f64(~label).sum()
        )

    def finalize(parts: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        neg_below = pl.col("neg").cum_sum() - pl.col("neg")
        if by_cols:
            neg_below = neg_below.over(by_cols, order_by=_SCORE)
        else:
            parts = parts.sort(_SCORE)
        correct = pl.col("pos") * (neg_below + tie_weight * pl.col("neg"))
        pos, neg = pl.col("pos").sum(), pl.col("neg").sum()
        scored = parts.with_columns(correct=correct)
        value = defined_if((pos > 0) & (neg > 0), pl.col("correct").sum() / (pos * neg))
        if by_cols:
            return scored.group_by(by_cols).agg(value=value).sort(by_cols)
        return scored.select(value=value)

    return GlobalPlan(partial, (_SCORE,), {"pos": "sum", "neg": "sum"}, finalize)

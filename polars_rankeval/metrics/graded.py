"""Graded-relevance metrics: discounted cumulative gain and its normalised form.

Gain: ``linear`` (the relevance itself, as trec_eval) or ``exp`` (``2**rel - 1``, as
Hivemall and Burges et al.). Discount of rank p: ``log`` ``1 / log_b(p + 1)``;
``log_clipped`` ``1 / max(1, log_b p)`` (the "Rank-Aware Top-N Metrics" lecture: no
discount for ranks 1..b); ``half_life`` ``2 ** (-(p - 1) / (half_life - 1))``
(Breese's expected utility).
Under ``ties="expected"`` each tied item gets the mean discount of its group's
positions (McSherry & Najork, 2008).
"""

from __future__ import annotations

from typing import Annotated, Any

import polars as pl

from polars_rankeval.metrics._common import (
    Base,
    Discount,
    Gain,
    HalfLife,
    IdealCut,
    check_half_life,
    dcg_sum,
    defined_if,
    discount_at,
    f64,
    gain_of,
    ideal_k,
)
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.head_form import (
    GainKey,
    HeadForm,
    HeadReader,
    Options,
    Quantity,
)
from polars_rankeval.metrics.params import Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.sampled_estimators import correctable
from polars_rankeval.metrics.spec import Public, Sampled

MaxGrade = Annotated[
    float | None,
    Interval(0, None, closed="neither"),
    "the highest grade of the scale; evaluate takes the highest relevance of the input if none",
]


def _gain_key(o: Options) -> GainKey:
    return (o["gain"], o["discount"], o["base"], o["half_life"])


def _dcg_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    return h.sum_at(Quantity("discounted_gain", gain=_gain_key(o)), k)


_DCG_OPTIONS: dict[str, frozenset[Any] | None] = {
    "gain": frozenset({"linear", "exp"}),
    "discount": frozenset({"log", "log_clipped", "half_life"}),
    "base": None,
    "half_life": None,
}
_DCG_HEAD = HeadForm(
    _DCG_OPTIONS, lambda o: (Quantity("discounted_gain", gain=_gain_key(o)),), _dcg_head
)


@register(
    "dcg",
    head=_DCG_HEAD,
    absolute_positions=True,
    defined="always",
    family="graded",
    normalized=False,
    summary="Discounted cumulative gain of the top k.",
    definition="sum over ranks p <= k of gain(rel_p) * discount(p).",
    check=check_half_life,
    doc="""
    Discounted cumulative gain at k.

    Examples
    --------
    The "Rank-Aware Top-N Metrics" lecture's example: relevances 4, 3, 0, 5 with the
    clipped log2 discount.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [4, 3, 0, 5]})
    >>> df.select(prk.dcg(discount="log_clipped")).item()  # 4/1 + 3/1 + 0 + 5/2
    9.5
    """,
)
@correctable("dcg", Sampled("dcg"))
def _dcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: Base = 2.0,
    half_life: HalfLife = None,
) -> pl.Expr:
    return dcg_sum(f, k, gain, discount, base, half_life)


def _ideal(o: Options) -> Quantity:
    return Quantity("ideal_gain", gain=_gain_key(o), idcg=o["idcg"])


def _ndcg_head(h: HeadReader, o: Options, k: int) -> pl.Expr:
    return h.ratio(_dcg_head(h, o, k), h.sum_at(_ideal(o), k))  # null where the ideal is 0


_NDCG_HEAD = HeadForm(
    {**_DCG_OPTIONS, "idcg": frozenset({"cut", "all"})},
    lambda o: (Quantity("discounted_gain", gain=_gain_key(o)), _ideal(o)),
    _ndcg_head,
)


@register(
    "ndcg",
    head=_NDCG_HEAD,
    absolute_positions=True,
    defined="truth",
    family="graded",
    summary="DCG@k over the ideal DCG@k.",
    definition=(
        "dcg@k / idcg, the ideal ordering built from all of the user's judged items "
        "(recommended or not), cut at k (idcg=cut: trec_eval ndcg_cut, Hivemall, "
        "scikit-learn) or over all relevant items (idcg=all: Jurity; the 'Personalized "
        "Recommendation Metrics' book chapter); idcg=k: the DCG of k items of the user's "
        "highest gain, the same for every user of binary relevance (RecTools' default "
        "NDCG: an ideal list of k relevant items; needs @k). "
        "Null when the ideal DCG is 0."
    ),
    check=check_half_life,
    doc="""
    Normalised discounted cumulative gain at k.

    Examples
    --------
    Hivemall's graded example with exponential gain.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 5, "item": [1, 3, 2, 6, 4],
    ...                    "score": [10.0, 8.0, 6.0, 2.0, 1.0],
    ...                    "relevance": [5.0, 2.0, 4.0, 1.0, 3.0]})
    >>> df.select(prk.ndcg(2, gain="exp"), prk.ndcg(3, gain="exp"))
    shape: (1, 2)
    ┌──────────────────┬──────────────────┐
    │ ndcg(gain=exp)@2 ┆ ndcg(gain=exp)@3 │
    │ ---              ┆ ---              │
    │ f64              ┆ f64              │
    ╞══════════════════╪══════════════════╡
    │ 0.812891         ┆ 0.918771         │
    └──────────────────┴──────────────────┘
    """,
)
@correctable(
    "ndcg",
    Sampled("ndcg", {"gain": None, "idcg": ("cut", "all"), "base": None, "discount": ("log",)}),
)
def _ndcg(
    f: Features,
    k: int | None,
    *,
    gain: Gain = "linear",
    discount: Discount = "log",
    base: Base = 2.0,
    half_life: HalfLife = None,
    idcg: IdealCut = "cut",
) -> pl.Expr:
    dcg = dcg_sum(f, k, gain, discount, base, half_life)
    if idcg == "k":
        ideal = ideal_k(f, k, gain, discount, base, half_life)
        return defined_if(ideal > 0, dcg / ideal)
    g = gain_of(f, gain)
    irank = f.ideal_rank(g, f"gain:{gain}")
    ideal_disc = discount_at(irank, discount, base, half_life)
    keep = irank.is_not_null() if (k is None or idcg == "all") else irank <= k
    ideal = pl.when(keep).then(g * ideal_disc).otherwise(0.0).sum()
    return defined_if(ideal > 0, dcg / ideal)


@register(
    "err",
    needs=("rating_range",),
    needs_met_by=("max_grade",),
    defined="always",
    family="graded",
    normalized=False,
    bounds=(0.0, 1.0),
    ties_require=("deterministic",),
    public=Public(required=("max_grade",)),
    summary="Expected reciprocal rank: 1 / the rank where a cascading user stops.",
    definition=(
        "sum over ranks r <= k of (1 / r) * R_r * prod over i < r of (1 - R_i), with "
        "R = (2**g - 1) / 2**max_grade the probability that the user is satisfied by an "
        "item of grade g (Chapelle et al., 2009; gdeval's err with max_grade=4). A grade "
        "is the relevance clipped to [0, max_grade]; max_grade defaults to the highest "
        "relevance of the whole input (evaluate's rating_range=). 0 when nothing "
        "relevant is recommended. Deterministic tie policies only: the product over "
        "the ranks above makes the expectation over a tie group's orderings a sum over "
        "its subsets."
    ),
    doc="""
    Expected reciprocal rank at k (Chapelle, Metzler, Zhang & Grinspan, 2009).

    A user reads the list from the top and stops at an item of grade g with
    probability ``R = (2**g - 1) / 2**max_grade``; ERR is the expected reciprocal of
    the rank where they stop. A stand-alone expression sees one user's rows, so the
    grade scale ``max_grade`` is required here; :func:`polars_rankeval.evaluate`
    takes it from the whole input when it is not given (``err@10``).

    Examples
    --------
    Grades 3, 0, 2, 1 on a 0..3 scale: R = 7/8, 0, 3/8, 1/8.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> df = pl.DataFrame({"user": [1] * 4, "item": list("ABCD"),
    ...                    "score": [4.0, 3.0, 2.0, 1.0], "relevance": [3, 0, 2, 1]})
    >>> value = df.select(prk.err(max_grade=3)).item()
    >>> value == 7 / 8 + 1 / 3 * 3 / 8 * 1 / 8 + 1 / 4 * 1 / 8 * 1 / 8 * 5 / 8
    True
    """,
)
def _err(f: Features, k: int | None, *, max_grade: MaxGrade = None) -> pl.Expr:
    top = f.rating_range[1] if max_grade is None else max_grade
    within = f.ret if k is None else f.ret & (f.o <= k)
    grade = f.rel.clip(0.0, max(top, 0.0))
    stop = pl.when(within).then((2.0**grade - 1.0) / 2.0**top).otherwise(0.0)
    # Down the list: the chance to reach each rank is the product of (1 - R) above it.
    in_order = stop.sort_by(f.o)
    reach = (1.0 - in_order).cum_prod().shift(1, fill_value=1.0)
    return (in_order * reach / f64(f.o.sort())).sum()

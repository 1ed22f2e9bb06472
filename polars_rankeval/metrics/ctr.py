"""Off-policy click-through rate: matching, inverse propensity scoring, doubly robust.

Jurity's CTR estimators, as one global metric ``ctr`` (one value per ``by`` group).

**Data model.** The long frame holds both sides of the estimate. Rows with a score
(or rank) are the recommendations; rows with a non-null relevance are the logged
interactions, and their relevance is the observed reward ``r`` (a click, 0 or 1, or
any non-negative reward). A row with both is a recommended pair that has logged data:
Jurity's indicator ``I(â = a) = 1``. The logging policy's propensity ``p(a|x,h)`` and
the predicted reward ``r̂`` are extra columns of the long frame, named by the options
``propensity=`` (default ``"propensity"``) and ``predicted=`` (default: the score
column itself, as Jurity uses the recommendation's score as its predicted reward).
Build it with a full join of the recommendations and the logs on (user, item)::

    long = recs.join(logs.rename({"click": "relevance"}), on=["user", "item"],
                     how="full", coalesce=True)

**Which rows count.** As in Jurity, the cutoff ``@k`` applies to the
recommendations: each user's top k by score (all of them without ``@k``). Let T be
those top-k recommendations and M ⊆ T the ones with logged data. Then

* ``estimation=matching``: ``sum_M r / |M|``, the mean reward over the matches;
  null when M is empty.
* ``estimation=ips``: ``sum_M r / p / |T|``; the denominator ``n`` counts every
  top-k recommendation, matched or not (a recommendation without logged data
  adds 0).
* ``estimation=dr``: ``(sum_T r̂ + sum_M (r - r̂) / p) / |T|``: the predicted reward
  of every top-k recommendation, corrected on the matches (Dudík, Langford & Li,
  2011).

Null when T is empty (ips, dr). The denominators count the recommendations of the
*evaluated* users: Jurity's ``n`` counts those of every recommended user, which is
``users="recs"`` (the default ``users="truth"`` keeps users with at least one logged
interaction only). Every matched row needs a propensity in (0, 1] and, for dr, every
top-k row a finite predicted reward: otherwise ``evaluate`` raises a ``ValueError``
with the number of bad rows and example users (Jurity silently assumes a uniform
1 / #items when the column is absent: add that column yourself if you want it).

**Ties.** Under ``ties="expected"`` top-k membership is the probability of the row
being in the top k. The ips and dr values are then the exact expectations over the
orderings of tied scores (their numerators are linear in membership and ``|T| =
min(k, #recommended)`` per user does not depend on the order). For matching, ``|M|``
depends on the order, and the value is the ratio of the expected sums
``E[sum_M r] / E[|M|]`` (exact when no tie group straddling the cutoff mixes logged
and unlogged items with different rewards).

Examples
--------
>>> import polars as pl
>>> import polars_rankeval as prk
>>> long = pl.DataFrame({
...     "user": [1, 1, 1, 2, 2],
...     "item": [10, 11, 12, 10, 13],
...     "score": [0.9, 0.6, 0.2, 0.8, None],
...     "relevance": [1, 0, None, None, 1],
...     "propensity": [0.5, 0.25, None, None, 0.5],
...     "p_click": [0.6, 0.2, 0.1, 0.3, None],
... })
>>> metrics = ["ctr@2", "ctr(estimation=ips)@2", "ctr(estimation=dr,predicted=p_click)@2"]
>>> prk.evaluate(long, metrics, users="recs").select(metrics)
shape: (1, 3)
┌───────┬───────────────────────┬─────────────────────────────────┐
│ ctr@2 ┆ ctr(estimation=ips)@2 ┆ ctr(estimation=dr,predicted=p_… │
│ ---   ┆ ---                   ┆ ---                             │
│ f64   ┆ f64                   ┆ f64                             │
╞═══════╪═══════════════════════╪═════════════════════════════════╡
│ 0.5   ┆ 0.666667              ┆ 0.366667                        │
└───────┴───────────────────────┴─────────────────────────────────┘

The top 2 of user 1 are items 10 (clicked, p = 0.5) and 11 (not clicked, p = 0.25),
that of user 2 is item 10 (no log); item 13 was logged but not recommended. So
|T| = 3, |M| = 2: matching (1 + 0) / 2; ips (1 / 0.5 + 0 / 0.25) / 3; dr
(0.6 + 0.2 + 0.3 + (1 - 0.6) / 0.5 + (0 - 0.2) / 0.25) / 3 = 1.1 / 3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

import polars as pl

from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import defined_if, f64, partial_sums
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import Combine, GlobalPlan

Estimation = Annotated[
    Literal["matching", "ips", "dr"],
    "estimator: matching rows only, inverse propensity scoring, or doubly robust",
]
Column = Annotated[str, "name of the column that holds it"]


@register(
    "ctr",
    family="ctr",
    scope="global",
    normalized=False,
    summary="Click-through rate of the top k against logged clicks (Jurity): matching, IPS, DR.",
    definition=(
        "Over each user's top-k recommendations T and those with logged data M (a "
        "relevance, the reward r): matching sum_M r / |M|; ips sum_M r / p / |T|; dr "
        "(sum_T r̂ + sum_M (r - r̂) / p) / |T|, with p the propensity column (in (0, 1] on "
        "every matched row, else an error) and r̂ the predicted column (default the "
        "score), pooled over the users of a by group (Jurity's CTR; users='recs' for its "
        "denominators). Expected ties: exact for ips and dr, E[sum_M r] / E[|M|] for "
        "matching. Null when the denominator is 0."
    ),
)
def _ctr(
    f: Features,
    k: int | None,
    *,
    estimation: Estimation = "matching",
    propensity: Annotated[
        Column, ColumnOption(when=(("estimation", ("ips", "dr")),))
    ] = "propensity",
    predicted: Annotated[
        str | None,
        ColumnOption(when=(("estimation", ("dr",)),)),
        "column of the predicted reward (none: the score)",
    ] = None,
) -> GlobalPlan:
    name = "ctr"
    if estimation == "matching" and propensity != "propensity":
        msg = (
            f"parameter 'propensity' of metric {name!r} only applies to estimation='ips' "
            "or 'dr', got estimation='matching'"
        )
        raise ValueError(msg)
    if predicted is not None and estimation != "dr":
        msg = (
            f"parameter 'predicted' of metric {name!r} only applies to estimation='dr', "
            f"got estimation={estimation!r}"
        )
        raise ValueError(msg)
    cols, by = f.cols, f.by
    if estimation == "dr" and predicted is None and cols.rank is not None:
        msg = (
            f"metric {name!r} with estimation='dr' uses the score as the predicted reward "
            f"by default, but the data has a rank column ({cols.rank!r}); pass "
            "predicted=<column of predicted rewards>"
        )
        raise ValueError(msg)
    top = f.p_in(k)
    matched = top * f64(f.judged)
    reward = f.rel
    user = pl.col(cols.user)
    parts: dict[str, pl.Expr] = {}
    checks: list[tuple[str, str]] = []
    if estimation == "matching":
        parts["num"] = (matched * reward).sum()
        parts["den"] = matched.sum()
    else:
        prop = f64(f.column(propensity))
        bad_prop = (matched > 0) & (prop.is_null() | prop.is_nan() | (prop <= 0) | (prop > 1))
        safe_prop = pl.when(bad_prop).then(1.0).otherwise(prop)
        correction = pl.when(matched > 0).then(matched / safe_prop).otherwise(0.0)
        parts["bad_prop"] = f64(bad_prop).sum()
        parts["bad_prop_user"] = user.filter(bad_prop).min()
        checks.append(
            (
                "bad_prop",
                f"logged interaction(s) in a top {k if k is not None else 'list'} have a "
                f"missing or invalid propensity (column {propensity!r} must be in (0, 1])",
            )
        )
        if estimation == "ips":
            parts["num"] = (correction * reward).sum()
        else:
            pred = f64(f.column(predicted) if predicted is not None else pl.col(cols.order))
            bad_pred = (top > 0) & (pred.is_null() | ~pred.is_finite())
            safe_pred = pl.when(bad_pred).then(0.0).otherwise(pred)
            parts["bad_pred"] = f64(bad_pred).sum()
            parts["bad_pred_user"] = user.filter(bad_pred).min()
            source = predicted if predicted is not None else f.label(cols.order)
            checks.append(
                (
                    "bad_pred",
                    f"recommendation(s) in a top {k if k is not None else 'list'} have a "
                    f"missing or non-finite predicted reward (column {source!r})",
                )
            )
            direct = pl.when(top > 0).then(top * safe_pred).otherwise(0.0)
            parts["num"] = (direct + correction * (reward - safe_pred)).sum()
        parts["den"] = top.sum()
    aggs = [expr.alias(part) for part, expr in parts.items()]
    combine: dict[str, Combine] = {
        part: ("min" if part.endswith("_user") else "sum") for part in parts
    }

    def partial(rows: pl.LazyFrame) -> pl.LazyFrame:
        return partial_sums(rows, by, aggs)

    def finalize(merged: pl.LazyFrame, by_cols: list[str]) -> pl.LazyFrame:
        for count, text in checks:
            merged = fail_if(merged, count, _message(count, text))
        den = pl.col("den")
        value = defined_if(den > 0, pl.col("num") / den).alias("value")
        out = merged.select(*by_cols, value)
        return out.sort(by_cols) if by_cols else out

    return GlobalPlan(partial, (), combine, finalize)


def _message(count: str, text: str) -> Callable[[pl.DataFrame], str]:
    def build(bad: pl.DataFrame) -> str:
        total = int(bad.get_column(count).sum())
        users = examples(bad.get_column(f"{count}_user"))
        return f"metric 'ctr': {total} {text}; e.g. of user(s) {users}"

    return build

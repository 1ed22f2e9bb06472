"""A slow, obviously-correct reference: metrics on explicit Python lists.

Ties under "expected" are handled by brute force: the metric is averaged over every
ordering of every tie group (itertools.permutations), so the closed forms of the
engine are checked against their definition, not against another closed form.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval import parse_metric
from polars_rankeval.metrics._common import inline


@dataclass(frozen=True)
class Row:
    item: Any
    score: float | None
    rel: float
    judged: bool = True  # False where the relevance is null (an unjudged item)


def _discount(p: int, discount: str, base: float, half_life: float | None) -> float:
    if discount == "log":
        return 1.0 / math.log(p + 1, base)
    if discount == "log_clipped":
        return 1.0 / max(1.0, math.log(p, base))
    return 2.0 ** (-(p - 1) / (half_life - 1))  # type: ignore[operator]


def metric_on_order(
    name: str, k: int | None, opts: dict[str, Any], ranked: list[Row], unret: list[Row]
) -> float | None:
    """One metric for one fixed ordering: ``ranked`` recommended, then ``unret``."""
    t = opts.get("rel", 1.0)
    rels = [r.rel >= t for r in ranked]
    n_rel = sum(r.rel >= t for r in ranked + unret)
    cut = rels if k is None else rels[:k]
    hits = sum(cut)
    n_ret = len(ranked)
    if name == "num_ret":
        return float(n_ret if k is None else min(k, n_ret))
    if name == "num_rel":
        return float(n_rel)
    if name == "num_rel_ret":
        return float(hits)
    if name in ("dcg", "ndcg"):
        gain = (lambda g: g) if opts["gain"] == "linear" else (lambda g: 2.0**g - 1.0)
        d = (opts["discount"], opts["base"], opts["half_life"])
        top = ranked if k is None else ranked[:k]
        dcg = sum(gain(r.rel) * _discount(i + 1, *d) for i, r in enumerate(top))
        if name == "dcg":
            return dcg
        ideal = sorted((gain(r.rel) for r in ranked + unret), reverse=True)
        if k is not None and opts["idcg"] == "cut":
            ideal = ideal[:k]
        idcg = sum(g * _discount(i + 1, *d) for i, g in enumerate(ideal) if g > 0)
        return dcg / idcg if idcg > 0 else None
    if name == "auc" and k is None:
        order = [r.rel >= t for r in ranked + unret]
        if all(order) or not any(order):
            return None
        return _auc(order)
    if n_rel == 0:
        return None
    if name == "precision":
        den = n_ret if k is None else (k if opts["denominator"] == "k" else min(k, n_ret))
        return hits / den if den else 0.0
    if name == "recall":
        return hits / n_rel
    if name == "f1":
        den = n_ret if k is None else (k if opts["denominator"] == "k" else min(k, n_ret))
        return 2 * hits / (den + n_rel)
    if name == "hit_rate":
        return float(hits > 0)
    if name == "r_precision":
        return sum(rels[:n_rel]) / n_rel
    if name == "mrr":
        for i, is_rel in enumerate(cut):
            if is_rel:
                return 1.0 / (i + 1)
        return 0.0
    if name == "map":
        total, seen = 0.0, 0
        for i, is_rel in enumerate(cut):
            if is_rel:
                seen += 1
                total += seen / (i + 1)
        den = n_rel if (k is None or opts["denominator"] == "relevant") else min(k, n_rel)
        return total / den
    if name == "auc":
        if not any(cut):
            return 0.0
        return 1.0 if all(cut) else _auc(cut)
    raise KeyError(name)


def _auc(order: list[bool]) -> float:
    """Fraction of (relevant, non-relevant) pairs with the relevant one first."""
    correct, negs_below = 0, 0
    for is_rel in reversed(order):
        if is_rel:
            correct += negs_below
        else:
            negs_below += 1
    pos = sum(order)
    return correct / (pos * (len(order) - pos))


def _groups(rows: list[Row]) -> list[list[Row]]:
    ranked = sorted((r for r in rows if r.score is not None), key=lambda r: -r.score)  # type: ignore[operator]
    groups: list[list[Row]] = []
    for _, grp in itertools.groupby(ranked, key=lambda r: r.score):
        groups.append(list(grp))
    return groups


def _distinct_permutations(rows: list[Row]) -> list[tuple[Row, ...]]:
    """One permutation of ``rows`` per distinct sequence of (relevance, judged)."""
    by_label: dict[tuple[float, bool], list[Row]] = {}
    for r in rows:
        by_label.setdefault((r.rel, r.judged), []).append(r)
    counts = {label: len(members) for label, members in by_label.items()}
    out: list[tuple[Row, ...]] = []

    def extend(prefix: list[tuple[float, bool]]) -> None:
        if len(prefix) == len(rows):
            taken = {label: iter(members) for label, members in by_label.items()}
            out.append(tuple(next(taken[label]) for label in prefix))
            return
        for label in counts:
            if counts[label]:
                counts[label] -= 1
                extend([*prefix, label])
                counts[label] += 1

    extend([])
    return out


def orderings(
    rows: list[Row], ties: str, *, distinct: bool = False
) -> list[tuple[list[Row], list[Row]]]:
    """Every ordering the tie policy allows (one for a deterministic policy).

    ``distinct=True`` (for metrics that never read the item of a row): under
    "expected", one ordering per distinct sequence of (relevance, judged) within each
    tie group instead of every permutation. Rows that differ only by their item are
    then exchangeable, and each distinct sequence stands for the same number of
    permutations (the product of the factorials of its label counts), so the mean over
    the orderings is unchanged: a 9-way tie with label counts 3, 2, 2, 1, 1 has 15,120
    orderings instead of 9! = 362,880.
    """
    groups = _groups(rows)
    unret = [r for r in rows if r.score is None]
    if ties == "expected":
        permute = _distinct_permutations if distinct else itertools.permutations
        per_group = [list(permute(g)) for g in [*groups, unret]]
        out = []
        for combo in itertools.product(*per_group):
            ranked = [r for perm in combo[:-1] for r in perm]
            out.append((ranked, list(combo[-1])))
        return out

    def tie_key(r: Row) -> Any:
        if ties == "item_desc":
            return _Desc(r.item)
        if ties == "item_asc":
            return r.item
        # The documented total order: relevance in the policy's direction, judged rows
        # before unjudged ones, then the item id ascending.
        if ties == "optimistic":
            return (-r.rel, not r.judged, r.item)
        return (r.rel, not r.judged, r.item)

    ranked = [r for g in groups for r in sorted(g, key=tie_key)]
    return [(ranked, sorted(unret, key=tie_key))]


class _Desc:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value


def reference(metric: str, rows: list[Row], ties: str) -> float | None:
    """The metric for one user: its mean over all the orderings the policy allows."""
    bound = parse_metric(metric)
    opts = dict(bound.options)
    values = [
        metric_on_order(bound.spec.name, bound.k, opts, ranked, unret)
        for ranked, unret in orderings(rows, ties, distinct=True)  # items never read
    ]
    if any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def rows_by_user(df: pl.DataFrame) -> dict[Any, list[Row]]:
    out: dict[Any, list[Row]] = {}
    for user, item, score, rel in df.select("user", "item", "score", "relevance").iter_rows():
        row = Row(item, score, 0.0 if rel is None else float(rel), rel is not None)
        out.setdefault(user, []).append(row)
    return out


def reference_frame(df: pl.DataFrame, metrics: Sequence[str], ties: str) -> pl.DataFrame:
    """Per-user reference values, shaped like ``evaluate(..., per_user=True)``."""
    users = rows_by_user(df)
    data: dict[str, list[Any]] = {"user": sorted(users)}
    for metric in metrics:
        name = parse_metric(metric).name
        data[name] = [reference(metric, users[u], ties) for u in data["user"]]
    return pl.DataFrame(data, schema_overrides={n: pl.Float64 for n in data if n != "user"})


def random_frame(
    seed: int,
    n_users: int = 12,
    max_items: int = 7,
    *,
    p_unjudged: float = 0.3,
    grades: Sequence[int] = (0, 0, 1, 2, 3),
) -> pl.DataFrame:
    """Small users with heavy ties (scores 0..2), graded relevance, unjudged items
    (null relevance, with probability ``p_unjudged``) and unrecommended judged items."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        n = int(rng.integers(1, max_items + 1))
        for item in rng.choice(50, size=n, replace=False):
            score = None if rng.random() < 0.2 else float(rng.integers(0, 3))
            rel = None if rng.random() < p_unjudged else int(rng.choice(list(grades)))
            rows.append((user, int(item), score, rel))
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def inline_per_user(df: pl.DataFrame, metrics: Sequence[str], ties: str) -> pl.DataFrame:
    """Every metric as a stand-alone expression in ``group_by("user").agg``."""
    exprs = []
    for metric in metrics:
        bound = parse_metric(metric)
        exprs.append(
            inline(
                bound.spec.name,
                bound.k,
                ties=ties,  # type: ignore[arg-type]
                item="item",
                score="score",
                relevance="relevance",
                rank=None,
                **dict(bound.options),
            )
        )
    return df.group_by("user").agg(exprs).sort("user")

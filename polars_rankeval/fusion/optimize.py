"""``optimize_fusion``: tune a method's weights and parameters, cross-validated over queries.

Every candidate (a weight vector and parameter values) is fused from the same stacked
runs and the fused frames are concatenated with a ``candidate`` column (and, for a
method that learns, a ``fold`` column: it is trained without the held-out queries),
then evaluated by one :func:`polars_rankeval.evaluate` call with ``by=``. The choice
among candidates is made on the training folds and scored on the held-out fold, so the
reported score is not the tuned one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    Frame as FrameConstraint,
)
from polars_rankeval._utils.constraints import (
    Instance,
    Integer,
    Text,
    validate_params,
)
from polars_rankeval._utils.types import integer
from polars_rankeval.fusion.constraints import COLUMNS, METHOD, NORM, RUNS
from polars_rankeval.fusion.fuse import (
    Frame,
    Runs,
    fuse_rows,
    hits_frame,
    prepare,
    raise_on_run_problems,
    run_checks,
)
from polars_rankeval.fusion.registry import FusionMethod
from polars_rankeval.metrics.params import Interval

WEIGHT_STEPS = 10
"""The weight grid: multiples of 1/10 (ranx's step 0.1) summing to 1."""


@dataclass(frozen=True)
class FusionSearch:
    """The result of :func:`optimize_fusion`.

    Attributes
    ----------
    best
        The candidate best on all the queries: ``{"weights": {run: weight}, param: value}``
        (``weights`` only for a weighted method). Fuse with it for new queries.
    score
        The cross-validated score: the mean over folds of the held-out score of the
        candidate chosen on the other folds (an estimate of what tuning gives on unseen
        queries, lower than ``candidates``' best).
    candidates
        One row per candidate: ``candidate``, ``weights`` (list, in run order), one
        column per parameter, the metric's mean over all queries and ``chosen``, the
        number of folds whose training queries chose it.
    folds
        One row per fold: ``fold``, the ``candidate`` chosen, its ``train`` and
        held-out ``test`` means and ``n_test`` (held-out queries with a value).
    """

    best: dict[str, Any]
    score: float
    candidates: pl.DataFrame
    folds: pl.DataFrame


def _weight_grid(n_runs: int) -> list[tuple[float, ...]]:
    return [
        tuple(s / WEIGHT_STEPS for s in steps)
        for steps in itertools.product(range(WEIGHT_STEPS + 1), repeat=n_runs)
        if sum(steps) == WEIGHT_STEPS
    ]


def _candidates(
    spec: FusionMethod, names: list[str], search: Mapping[str, Sequence[Any]] | None
) -> list[tuple[tuple[float, ...] | None, dict[str, Any]]]:
    grid = dict(spec.grid)
    weights: list[tuple[float, ...]] | None = _weight_grid(len(names)) if spec.weighted else None
    for key, values in (search or {}).items():
        if key == "weights":
            if not spec.weighted:
                msg = f"search['weights'] applies to weighted methods only, not {spec.name!r}"
                raise ValueError(msg)
            weights = []
            for vector in values:
                vector = tuple(vector)
                if len(vector) != len(names):
                    msg = (
                        f"search['weights'] must hold one weight per run ({len(names)}), "
                        f"got {vector!r}"
                    )
                    raise ValueError(msg)
                if not all(isinstance(w, int | float) and math.isfinite(w) for w in vector):
                    msg = f"search['weights'] must hold finite numbers, got {vector!r}"
                    raise ValueError(msg)
                weights.append(tuple(float(w) for w in vector))
        elif key in spec.params:
            grid[key] = tuple(values)
        else:
            valid = sorted([*spec.params, *(["weights"] if spec.weighted else [])])
            msg = f"search has no key {key!r} for method {spec.name!r}; valid: {valid!r}"
            raise ValueError(msg)
    keys = list(grid)
    combos = [
        spec.bind(dict(zip(keys, values, strict=True)))
        for values in itertools.product(*(grid[k] for k in keys))
    ]
    if weights is not None and not weights:
        msg = "search['weights'] must hold at least one weight vector"
        raise ValueError(msg)
    vectors: list[tuple[float, ...] | None] = list(weights) if weights else [None]
    return [(w, p) for w in vectors for p in combos]


def _folds(qrels: pl.LazyFrame, folds: int, seed: int) -> pl.DataFrame:
    users = qrels.select(pl.col("_u").unique().sort()).collect()["_u"]
    if folds > users.len():
        msg = f"folds must be at most the number of queries in qrels ({users.len()}), got {folds}"
        raise ValueError(msg)
    order = np.random.default_rng(seed).permutation(users.len())
    return pl.DataFrame({"_u": users.gather(order), "_fold": np.arange(users.len()) % folds})


@validate_params(
    {
        "runs": RUNS,
        "qrels": FrameConstraint("polars"),
        "metric": Text("a metric name (str)"),
        "method": METHOD,
        "norm": NORM,
        "search": [Instance(Mapping, what="a mapping of parameter name to values"), None],
        "folds": Integer(Interval(2, None)),
        "seed": Integer(Interval(0, None)),
        **COLUMNS,
    }
)
def optimize_fusion(
    runs: Runs,
    qrels: Frame,
    *,
    metric: str = "ndcg@10",
    method: str = "wsum",
    norm: Any = "auto",
    search: Mapping[str, Sequence[Any]] | None = None,
    folds: int = 5,
    seed: int = 0,
    system: str = "system",
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
) -> FusionSearch:
    """Tune a fusion method's weights and parameters, with k-fold cross-validation.

    The candidates are a grid: for a weighted method, every weight vector of multiples
    of 0.1 summing to 1 (ranx's grid); for each parameter, the values its declaration
    lists (ranx's ranges: ``k`` 10, 20, ..., 100 for RRF, ``phi`` 0.01 .. 0.99 for RBC,
    ...; see ``FusionMethod.grid``); ``search`` replaces any of them. All candidates are
    evaluated in one plan. The queries of ``qrels`` are split into ``folds`` folds; for
    each fold the candidate with the best mean metric on the other folds is scored on
    it, and ``score`` is the mean of those held-out scores. A method that learns from
    training queries is trained, for each fold, on the other folds' judgments only.

    Parameters
    ----------
    runs
        As for :func:`fuse`; their rows are checked as :func:`fuse` checks them (null
        ids, NaN or infinite scores, an item twice in a list: a ``ValueError`` naming
        the run), at the call.
    qrels
        Relevance judgments (``user, item, relevance``): the queries tuned and
        evaluated on.
    metric
        One metric in the grammar of :func:`evaluate` (``"ndcg@10"``, ``"map"``).
    method, norm
        As for :func:`fuse`.
    search
        Values to try instead of the default grid: ``{"k": [20, 60]}`` or
        ``{"weights": [(0.5, 0.5), (0.7, 0.3)]}`` (weight vectors in run order).
    folds
        The number of folds (at least 2, at most the number of queries).
    seed
        Seed of the random split of queries into folds.
    system, user, item, score, relevance
        Column names.

    Returns
    -------
    FusionSearch
        ``best`` (to fuse with), ``score`` (cross-validated), ``candidates`` and
        ``folds`` tables.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> a = pl.DataFrame({"user": ["q1", "q1", "q2", "q2"], "item": ["x", "y", "x", "y"],
    ...                   "score": [2.0, 1.0, 2.0, 1.0]})
    >>> b = a.with_columns(score=-pl.col("score"))
    >>> qrels = pl.DataFrame({"user": ["q1", "q2"], "item": ["y", "y"], "relevance": [1, 1]})
    >>> found = prk.optimize_fusion({"a": a, "b": b}, qrels, metric="mrr", folds=2,
    ...                             search={"weights": [(0.8, 0.2), (0.2, 0.8)]})
    >>> found.best, found.score
    ({'weights': {'a': 0.2, 'b': 0.8}}, 1.0)
    >>> found.candidates.select("candidate", "weights", "mrr")
    shape: (2, 3)
    ┌───────────┬────────────┬─────┐
    │ candidate ┆ weights    ┆ mrr │
    │ ---       ┆ ---        ┆ --- │
    │ i64       ┆ list[f64]  ┆ f64 │
    ╞═══════════╪════════════╪═════╡
    │ 0         ┆ [0.8, 0.2] ┆ 0.5 │
    │ 1         ┆ [0.2, 0.8] ┆ 1.0 │
    └───────────┴────────────┴─────┘
    """
    from polars_rankeval.api.evaluate import evaluate, join

    k = integer("folds", folds)
    if k < 2:
        msg = f"folds must be at least 2, got {folds!r}"
        raise ValueError(msg)
    seed = integer("seed", seed)
    if not isinstance(metric, str):
        msg = f"metric must be one metric name (a str), got {metric!r}"
        raise TypeError(msg)
    spec, rows, runs_frame, norms, _, _, stacked = prepare(
        runs,
        method=method,
        norm=norm,
        weights=None,
        params=None,
        qrels=qrels if method_trained(method) else None,
        missing=None,
        system=system,
        user=user,
        item=item,
        score=score,
    )
    if not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
        msg = f"qrels must be a polars DataFrame or LazyFrame, got {type(qrels).__name__}"
        raise TypeError(msg)
    rows = rows.cache()  # shared by every candidate
    found = run_checks(stacked).collect()
    raise_on_run_problems(found, stacked, user=user, item=item, score=score)
    names = runs_frame.collect()["_r"].to_list()  # the caller's order
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):  # one frame: its systems, sorted
        names = sorted(names)
    candidates = _candidates(spec, names, search)
    types = rows.collect_schema()
    truth = qrels.lazy().select(
        _u=pl.col(user).cast(types["_u"]),
        _i=pl.col(item).cast(types["_i"]),
        _rel=pl.col(relevance),
    )
    assignment = _folds(truth, k, seed)
    fold_ids = [-1, *range(k)] if spec.trained else [-1]
    parts = []
    for c, (weights, params) in enumerate(candidates):
        frame = (
            runs_frame
            if weights is None
            else pl.LazyFrame(
                {"_r": names, "_w": list(weights)}, schema={"_r": pl.String, "_w": pl.Float64}
            )
        )
        for f in fold_ids:
            hits = None
            if spec.trained:
                kept = assignment.filter(pl.col("_fold") != f).select(user=pl.col("_u"))
                train = qrels.lazy().join(kept.lazy(), left_on=user, right_on="user", how="semi")
                hits = hits_frame(rows, train, user=user, item=item, relevance=relevance)
            fused = fuse_rows(
                rows, frame, spec, norms=norms, params=params, hits=hits, missing=None
            )
            parts.append(
                fused.select(
                    user="_u",
                    item="_i",
                    score="score",
                    candidate=pl.lit(c, pl.Int64),
                    fold=pl.lit(f, pl.Int64),
                )
            )
    by = ["candidate", "fold"]
    long = join(
        pl.concat(parts),
        truth.select(user="_u", item="_i", relevance="_rel"),
        by=by,
        score="score",
        relevance="relevance",
        check_overlap=False,
    )
    per_user = evaluate(long, [metric], by=by, per_user=True)
    per_user = per_user.lazy().collect() if isinstance(per_user, pl.LazyFrame) else per_user
    value = next(c for c in per_user.columns if c not in (*by, "user"))
    table = per_user.join(assignment.rename({"_u": "user"}), on="user").rename({value: "_m"})
    overall = table.filter(pl.col("fold") == -1).group_by("candidate").agg(_all=pl.col("_m").mean())
    rounds = []
    for f in range(k):
        source = table.filter(pl.col("fold") == (f if spec.trained else -1))
        means = source.group_by("candidate").agg(
            train=pl.col("_m").filter(pl.col("_fold") != f).mean(),
            test=pl.col("_m").filter(pl.col("_fold") == f).mean(),
            n_test=pl.col("_m").filter(pl.col("_fold") == f).count(),
        )
        best = means.sort(["train", "candidate"], descending=[True, False], nulls_last=True)
        rounds.append(best.head(1).with_columns(fold=pl.lit(f, pl.Int64)))
    fold_table = pl.concat(rounds).select("fold", "candidate", "train", "test", "n_test")
    chosen = fold_table.group_by("candidate").agg(chosen=pl.len().cast(pl.Int64))
    rows_out = [
        {
            "candidate": c,
            "weights": list(w) if w is not None else None,
            **params,
        }
        for c, (w, params) in enumerate(candidates)
    ]
    cand = (
        pl.DataFrame(rows_out)
        .join(overall, on="candidate", how="left")
        .rename({"_all": value})
        .join(chosen, on="candidate", how="left")
        .with_columns(pl.col("chosen").fill_null(0))
        .sort("candidate")
    )
    if not spec.weighted:
        cand = cand.drop("weights")
    top = cand.sort([value, "candidate"], descending=[True, False], nulls_last=True).row(
        0, named=True
    )
    best_out: dict[str, Any] = {}
    if spec.weighted:
        best_out["weights"] = dict(zip(names, top["weights"], strict=True))
    best_out.update({p: top[p] for p in spec.params})
    test = fold_table["test"].drop_nulls()
    cv = float(test.mean()) if test.len() else float("nan")  # type: ignore[arg-type]
    return FusionSearch(best_out, cv, cand, fold_table)


def method_trained(method: object) -> bool:
    """Whether ``method`` names a method that learns (``False`` for an unknown name)."""
    from polars_rankeval.fusion.registry import fusion_methods

    spec = fusion_methods().get(method) if isinstance(method, str) else None
    return bool(spec and spec.trained)

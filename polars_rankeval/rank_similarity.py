"""Similarity of rankings: two runs' rankings per user, and system orderings.

* :func:`rank_similarity`: rank-biased overlap (RBO, Webber, Moffat & Zobel, 2010) of
  two runs' rankings of each user (system against system), with the metric grammar of
  the registered ``rbo`` metric (``rbo@10``, ``rbo(p=0.8,estimate=min)@20``). Computed
  by the same Polars plan as that metric (:func:`polars_rankeval.metrics.similarity.
  rbo_frame`): one join of the two runs on (user, item), no per-user Python.
* :func:`rank_correlation`: Kendall's tau-b and the AP correlation tau_ap (Yilmaz,
  Aslam & Robertson, 2008) between system orderings, for meta-evaluation (do two
  metrics, or two test collections, order the systems alike?).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from polars_rankeval.metrics.similarity import rbo_frame
from polars_rankeval.registry import parse_metric

Method = Literal["tau_b", "tau_ap"]
RunTies = Literal["item_desc", "item_asc"]
_KEY = "__prk_user"


def _ranked(
    run: pl.DataFrame | pl.LazyFrame,
    name: str,
    *,
    user: str,
    item: str,
    score: str | None,
    rank: str | None,
    ties: RunTies,
) -> pl.LazyFrame:
    lf = run.lazy()
    schema = lf.collect_schema()
    order = rank if rank is not None else score
    if order is None:
        msg = "pass exactly one of score= and rank=, got neither"
        raise ValueError(msg)
    for col in (user, item, order):
        if col not in schema:
            msg = f"{name} has no column {col!r}; its columns: {', '.join(schema.names())}"
            raise ValueError(msg)
    key = -pl.col(order) if rank is None else pl.col(order)  # ascending: best first
    item_key = pl.col("item").rank("dense", descending=ties == "item_desc")
    rows = lf.select(pl.col(user).alias(_KEY), pl.col(item).alias("item"), key.alias("k"))
    _check_rows(rows, name)
    # A null score (rank) marks a judged item that was not recommended (a long frame).
    return rows.filter(pl.col("k").is_not_null()).select(
        _KEY,
        "item",
        pl.struct("k", item_key.alias("i")).rank("ordinal").over(_KEY).cast(pl.Int64).alias("pos"),
    )


def _check_rows(ranked: pl.LazyFrame, name: str) -> None:
    dupes = ranked.select(pl.struct(_KEY, "item").is_duplicated().sum()).collect().item()
    if dupes:
        msg = (
            f"{name} has {dupes} rows whose (user, item) appears more than "
            "once; each item may be ranked once per user"
        )
        raise ValueError(msg)


def rank_similarity(
    run_a: pl.DataFrame | pl.LazyFrame,
    run_b: pl.DataFrame | pl.LazyFrame,
    measures: Sequence[str] = ("rbo@10",),
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = "score",
    rank: str | None = None,
    ties: RunTies = "item_desc",
    per_user: bool = False,
) -> pl.DataFrame:
    """Rank-biased overlap of two runs' rankings, per user and on average.

    Each run is a frame of ``user, item, score`` (or ``rank=``, 1 = best); a user's
    ranking is its items by score descending, ties broken by item id (``ties=``). A
    measure is ``rbo[(p=..., estimate=...)][@k]``: RBO with persistence ``p`` (default
    0.9) of the two top-k lists (the whole lists without ``@k``), extrapolated
    (``estimate="ext"``, Webber et al.'s eq. 32; the default), or the lower bound
    ``min``, the upper bound ``max`` or the residual ``res = max - min`` over every
    continuation of the lists. RBO is symmetric: ``rank_similarity(a, b)`` equals
    ``rank_similarity(b, a)``.

    The users compared are those in both runs; the summary counts the users found in
    one run only (``n_users_only_a``, ``n_users_only_b``), which are left out. Rows
    with a null score (or rank) are not part of the ranking: in a long frame they are
    judged items that were not recommended, so ``prk.join`` outputs can be passed as is.

    Parameters
    ----------
    run_a, run_b
        The two runs (DataFrame or LazyFrame).
    measures
        Measure names (``rbo@10``, ``rbo(p=0.98)@100``, ``rbo(estimate=res)@10``).
    user, item, score, rank
        Column names; exactly one of ``score`` and ``rank``.
    ties
        How equal scores are ordered: by item id descending (trec_eval's rule) or
        ascending.
    per_user
        One row per user (``user`` and a column per measure) instead of the means.

    Returns
    -------
    pl.DataFrame
        The means (a column per measure, ``n_users``, ``n_users_only_a``,
        ``n_users_only_b``), or the per-user values.

    Examples
    --------
    Lists a, b, c, d and b, a, c, e: X_d = 0, 2, 3, 3 at depths 1..4, p = 1/2.

    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> a = pl.DataFrame({"user": [1] * 4, "item": list("abcd"), "score": [4.0, 3, 2, 1]})
    >>> b = pl.DataFrame({"user": [1] * 4, "item": list("bace"), "score": [4.0, 3, 2, 1]})
    >>> out = prk.rank_similarity(a, b, ["rbo(p=0.5)@4"], per_user=True)
    >>> value = out["rbo(p=0.5)@4"].item()
    >>> ext = (1 - 0.5) / 0.5 * (0.5**2 * 2 / 2 + 0.5**3 * 3 / 3 + 0.5**4 * 3 / 4) + 3 / 4 * 0.5**4
    >>> abs(value - ext) < 1e-15
    True
    """
    if (score is None) == (rank is None):
        msg = f"pass exactly one of score= and rank=, got score={score!r}, rank={rank!r}"
        raise ValueError(msg)
    if ties not in ("item_desc", "item_asc"):
        msg = f"ties must be one of {{'item_desc', 'item_asc'}}, got {ties!r}"
        raise ValueError(msg)
    if isinstance(measures, str):
        measures = [measures]
    bound = []
    for text in measures:
        metric = parse_metric(text)
        if metric.spec.name != "rbo":
            msg = f"rank_similarity measures RBO (e.g. 'rbo@10'), got {text!r}"
            raise ValueError(msg)
        if dict(metric.options)["reference"] is not None:
            msg = f"measure {text!r}: reference= names a column of a long frame; not used here"
            raise ValueError(msg)
        bound.append(metric)
    ranked = []
    for run, name in ((run_a, "run_a"), (run_b, "run_b")):
        lf = _ranked(run, name, user=user, item=item, score=score, rank=rank, ties=ties)
        ranked.append(lf.cache())
    a, b = ranked
    users_a = a.select(_KEY).unique()
    users_b = b.select(_KEY).unique()
    both = users_a.join(users_b, on=_KEY, how="inner", nulls_equal=True).cache()
    out = both
    for metric in bound:
        k = metric.k
        opts = dict(metric.options)
        ka = a if k is None else a.filter(pl.col("pos") <= k)
        kb = b if k is None else b.filter(pl.col("pos") <= k)
        lengths = both.join(
            ka.group_by(_KEY).agg(la=pl.len().cast(pl.Int64)), on=_KEY, how="left", nulls_equal=True
        ).join(
            kb.group_by(_KEY).agg(lb=pl.len().cast(pl.Int64)), on=_KEY, how="left", nulls_equal=True
        )
        common = ka.join(kb, on=[_KEY, "item"], how="inner", nulls_equal=True).select(
            _KEY, m=pl.max_horizontal("pos", "pos_right")
        )
        value = rbo_frame(common, lengths, [_KEY], p=opts["p"], estimate=opts["estimate"])
        out = out.join(value.rename({"value": metric.name}), on=_KEY, how="left", nulls_equal=True)
    per = out.sort(_KEY).collect()
    if per_user:
        return per.rename({_KEY: user})
    counts = pl.concat(
        [
            users_a.join(users_b, on=_KEY, how="anti").select(n_users_only_a=pl.len()),
            users_b.join(users_a, on=_KEY, how="anti").select(n_users_only_b=pl.len()),
        ],
        how="horizontal",
    ).collect()
    names = [m.name for m in bound]
    return pl.concat(
        [
            per.select(*(pl.col(n).mean() for n in names), n_users=pl.len().cast(pl.Int64)),
            counts.cast(pl.Int64),
        ],
        how="horizontal",
    )


# --------------------------------------------------------------------------- systems
def _tau_b(x: np.ndarray, y: np.ndarray) -> float:
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(len(x), 1)
    sx, sy = dx[upper], dy[upper]
    num = float(np.sum(sx * sy))
    den = float(np.sqrt(np.sum(sx != 0) * np.sum(sy != 0)))
    return num / den if den > 0 else float("nan")


def _tau_ap(reference: np.ndarray, candidate: np.ndarray) -> float:
    """tau_ap of the candidate ordering against the reference (both without ties)."""
    order = np.argsort(-candidate, kind="stable")
    ref = reference[order]
    n = len(ref)
    # C(i): of the items above rank i in the candidate, those the reference also ranks above.
    correct = np.array([np.sum(ref[:i] > ref[i]) for i in range(1, n)], dtype=float)
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


def rank_correlation(
    a: pl.DataFrame,
    b: pl.DataFrame | None = None,
    *,
    on: str = "system",
    columns: Sequence[str] | None = None,
    method: Method = "tau_b",
) -> pl.DataFrame:
    """Rank correlation between system orderings (meta-evaluation).

    ``a`` and ``b`` hold one row per system (the key column ``on``) and one column per
    metric, as ``prk.evaluate(runs, metrics, by="system")`` returns them. With ``b``
    each metric column of both is compared (e.g. the same metrics on two test
    collections, or two qrels); without ``b`` every pair of ``a``'s metric columns (do
    ndcg@10 and map order the systems alike?). Systems are paired by ``on``; those in
    one frame only are left out (``n_systems`` counts the pairs).

    ``method="tau_b"``: Kendall's tau-b (ties in either ordering counted as in
    :func:`scipy.stats.kendalltau`). ``method="tau_ap"``: the AP correlation of Yilmaz,
    Aslam & Robertson (2008), which weights swaps near the top more; asymmetric, with
    ``a`` (the first column of each pair) the reference and ``b`` the candidate:
    ``2 / (n - 1) * sum_{i=2}^n C(i) / (i - 1) - 1``, C(i) the systems above the
    candidate's i-th that the reference also ranks above it. tau_ap is defined for
    orderings without ties: tied values are an error.

    Returns
    -------
    pl.DataFrame
        ``metric_a``, ``metric_b``, ``method``, ``n_systems``, ``value``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> scores = pl.DataFrame({"system": ["s1", "s2", "s3", "s4"],
    ...                        "ndcg@10": [0.4, 0.3, 0.2, 0.1], "map": [0.3, 0.4, 0.2, 0.1]})
    >>> prk.rank_correlation(scores, method="tau_b")["value"].item()  # (5 - 1) / 6
    0.6666666666666666
    """
    if method not in ("tau_b", "tau_ap"):
        msg = f"method must be one of {{'tau_b', 'tau_ap'}}, got {method!r}"
        raise ValueError(msg)
    frames = [("a", a)] + ([] if b is None else [("b", b)])
    for name, frame in frames:
        if not isinstance(frame, pl.DataFrame):
            msg = f"{name} must be a polars DataFrame, got {type(frame).__name__}"
            raise TypeError(msg)
        if on not in frame.columns:
            msg = f"{name} has no key column {on!r} (on=); its columns: {', '.join(frame.columns)}"
            raise ValueError(msg)
        if frame[on].is_duplicated().any():
            msg = f"{name} has the {on!r} values more than once; one row per system"
            raise ValueError(msg)

    def metric_columns(frame: pl.DataFrame) -> list[str]:
        return [
            c
            for c, t in frame.schema.items()
            if c != on and t.is_numeric() and not c.startswith("n_users") and c != "n_skipped"
        ]

    if columns is None:
        shared = metric_columns(a)
        if b is not None:
            other = set(metric_columns(b))
            shared = [c for c in shared if c in other]
        columns = shared
    for name, frame in frames:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            msg = f"{name} has no column(s) {missing} (columns=)"
            raise ValueError(msg)
    if b is None:
        pairs = [(x, y) for i, x in enumerate(columns) for y in columns[i + 1 :]]
        joined = a
    else:
        pairs = [(c, c) for c in columns]
        joined = a.join(b, on=on, how="inner", suffix="__b")
    rows = []
    for x, y in pairs:
        ycol = y if b is None else (f"{y}__b" if f"{y}__b" in joined.columns else y)
        data = joined.select(pl.col(x).cast(pl.Float64), pl.col(ycol).cast(pl.Float64)).drop_nulls()
        xs, ys = data[:, 0].to_numpy(), data[:, 1].to_numpy()
        n = len(xs)
        if n < 2:
            value = float("nan")
        elif method == "tau_b":
            value = _tau_b(xs, ys)
        else:
            for label, v in ((x, xs), (y, ys)):
                if len(np.unique(v)) < n:
                    msg = (
                        f"tau_ap needs orderings without ties; {label!r} has tied values "
                        "(use method='tau_b')"
                    )
                    raise ValueError(msg)
            value = _tau_ap(xs, ys)
        rows.append(
            {"metric_a": x, "metric_b": y, "method": method, "n_systems": n, "value": value}
        )
    schema = {
        "metric_a": pl.String,
        "metric_b": pl.String,
        "method": pl.String,
        "n_systems": pl.Int64,
        "value": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).with_columns(pl.col("value").fill_nan(None))

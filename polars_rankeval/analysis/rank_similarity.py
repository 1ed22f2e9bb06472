"""Similarity of rankings: two runs' rankings per user, and system orderings.

* :func:`rank_similarity`: rank-biased overlap (RBO, Webber, Moffat & Zobel, 2010) and
  the top-k intersection (RecTools ``Intersection``) of two runs' rankings of each user
  (system against system), with the metric grammar of the registered ``rbo`` and
  ``intersection`` metrics (``rbo@10``, ``rbo(p=0.8,estimate=min)@20``,
  ``intersection(ref_k=20)@10``). RBO is computed by the same Polars plan as that
  metric (:func:`polars_rankeval.metrics.similarity.rbo_frame`), the intersection by
  one join of the two runs' top-k rows: no per-user Python.
* :func:`rank_correlation`: Kendall's tau-b and the AP correlation tau_ap (Yilmaz,
  Aslam & Robertson, 2008) between system orderings, for meta-evaluation (do two
  metrics, or two test collections, order the systems alike?).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    Frame,
    Instance,
    ListOf,
    Options,
    Text,
    validate_params,
)
from polars_rankeval._utils.ties import id_order
from polars_rankeval.conventions.presets import PRESETS
from polars_rankeval.metrics.defaults import RANK_SIMILARITY, RBO
from polars_rankeval.metrics.features import share_within
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.similarity import rbo_frame
from polars_rankeval.metrics.spec import Metric

Method = Literal["tau_b", "tau_ap"]
RunTies = Literal["item_desc", "item_asc", "expected"]
PairUsers = Literal["both", "a", "b", "either"]
RankPositions = Literal["relative", "absolute"]
_ONE_ROW_PER_SYSTEM = Instance(pl.DataFrame, what="a polars DataFrame")
MEASURES = RANK_SIMILARITY
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
    absolute: bool,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """``_KEY, item, pos, a, n``: the run's ranking of each user, and its checks.

    ``pos`` is a distinct 1-based position (ties broken by item id; under
    ``ties="expected"`` an arbitrary order inside each tie group), ``a`` the first
    position of the row's tie group and ``n`` its size (``a = pos``, ``n = 1`` under a
    deterministic rule). Absolute ranks: ``pos = a =`` the rank itself (gaps and
    repeated ranks kept), ``n = 1``. The checks (one row: duplicated (user, item)
    rows, ranks below 1 under absolute positions, ranked rows) are collected by the
    caller, both runs at once (:func:`_check`).
    """
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
    if absolute and not schema[order].is_integer():
        msg = (
            f"rank_positions='absolute' reads {name}'s rank column {order!r} as positions: "
            f"it must hold integers >= 1, got dtype {schema[order]}"
        )
        raise TypeError(msg)
    key = -pl.col(order) if rank is None else pl.col(order)  # ascending: best first
    item_key = id_order("item").rank("dense", descending=ties == "item_desc")
    rows = lf.select(pl.col(user).alias(_KEY), pl.col(item).alias("item"), key.alias("k"))
    # A null score (rank) marks a judged item that was not recommended (a long frame).
    ranked = rows.filter(pl.col("k").is_not_null())
    checks = rows.select(
        dupes=pl.len() - pl.struct(_KEY, "item").n_unique(),  # cheaper than is_duplicated
        low=(pl.col("k") < 1).sum() if absolute else pl.lit(0, pl.UInt32),
        n=pl.col("k").count(),
    )
    if absolute:
        pos = pl.col("k").cast(pl.Int64)
        out = ranked.select(_KEY, "item", pos.alias("pos"), pos.alias("a"), n=pl.lit(1, pl.Int64))
        return out, checks
    ordinal = pl.struct("k", item_key.alias("i")).rank("ordinal").over(_KEY).cast(pl.Int64)
    if ties == "expected":
        first = pl.col("k").rank("min").over(_KEY).cast(pl.Int64)
        size = pl.len().over(_KEY, "k").cast(pl.Int64)
    else:
        first, size = ordinal, pl.lit(1, pl.Int64)
    out = ranked.select(_KEY, "item", ordinal.alias("pos"), first.alias("a"), size.alias("n"))
    return out, checks


def _check(checks: dict[str, int], name: str, order: str) -> None:
    """The errors of one run's :func:`_ranked` checks (duplicates, ranks below 1)."""
    if checks["dupes"]:
        msg = (
            f"{name} has {checks['dupes']} rows whose (user, item) appears more than "
            "once; each item may be ranked once per user"
        )
        raise ValueError(msg)
    if checks["low"]:
        msg = f"{name} has {checks['low']} rank(s) below 1 in {order!r}; positions start at 1"
        raise ValueError(msg)


def _p_in(cut: int | None) -> pl.Expr:
    """The row's probability of lying within the top ``cut`` (its tie group's share)."""
    if cut is None:
        return pl.lit(1.0)
    return share_within(cut, pl.col("a"), pl.col("n"))


def _bind(text: str) -> Metric:
    metric = parse_metric(text)
    if metric.spec.name not in MEASURES:
        msg = (
            "rank_similarity measures RBO or the intersection (e.g. 'rbo@10', "
            f"'intersection@10'), got {text!r}"
        )
        raise ValueError(msg)
    if dict(metric.options)["reference"] is not None:
        msg = f"measure {text!r}: reference= names a column of a long frame; not used here"
        raise ValueError(msg)
    if metric.aggregate != "mean":
        msg = f"measure {text!r}: rank_similarity averages over the users; drop aggregate="
        raise ValueError(msg)
    return metric


@validate_params(
    {
        "run_a": Frame("polars"),
        "run_b": Frame("polars"),
        "measures": [
            Text("a measure name (str)"),
            ListOf(Text("a measure name (str)"), what="a list of measure names"),
        ],
        "user": COLUMN,
        "item": COLUMN,
        "score": [COLUMN, None],
        "rank": [COLUMN, None],
        "ties": [Options.of(RunTies), None],
        "users": [Options.of(PairUsers), None],
        "rank_positions": Options.of(RankPositions),
        "per_user": FLAG,
        "conventions": [Options(*PRESETS), None],
    }
)
def rank_similarity(
    run_a: pl.DataFrame | pl.LazyFrame,
    run_b: pl.DataFrame | pl.LazyFrame,
    measures: str | Sequence[str] = ("rbo@10",),
    *,
    user: str = "user",
    item: str = "item",
    score: str | None = "score",
    rank: str | None = None,
    ties: RunTies | None = None,
    users: PairUsers | None = None,
    rank_positions: RankPositions = "relative",
    per_user: bool = False,
    conventions: str | None = None,
) -> pl.DataFrame:
    """Rank-biased overlap and top-k intersection of two runs' rankings, per user.

    Each run is a frame of ``user, item, score`` (or ``rank=``, 1 = best); a user's
    ranking is its items by score descending, ties broken by item id (``ties=``).

    * ``rbo[(p=..., estimate=...)][@k]``: RBO with persistence ``p`` (default 0.9) of
      the two top-k lists (the whole lists without ``@k``), extrapolated
      (``estimate="ext"``, Webber et al.'s eq. 32; the default), or the lower bound
      ``min``, the upper bound ``max`` or the residual ``res = max - min`` over every
      continuation of the lists. Symmetric. Deterministic ties only.
    * ``intersection[(ref_k=r, denominator=...)][@k]``: ``|top k of run_a ∩ top r of
      run_b| / |top k of run_a|`` (``denominator="run"``, RecTools' ``Intersection``:
      the share of run_a's recommendations that the reference run_b also holds;
      ``ref_k`` defaults to ``k``) or ``/ |top r of run_b|``
      (``denominator="reference"``: the share of the reference that run_a recovers).
      Asymmetric: run_a is the run, run_b the reference. Null (undefined, left out of
      the mean) when the denominator is 0.

    Tied scores: ``ties="item_desc"`` / ``"item_asc"`` break them by item id;
    ``ties="expected"`` (intersection only) gives the exact expectation over the tied
    orderings of both runs, drawn independently: the expected overlap is the sum over
    the common items of the product of their probabilities of lying within each cutoff
    (a tie group straddling a cutoff: the share of it that fits), and the denominators
    ``min(k, list length)`` do not depend on the order. ``rank_positions="absolute"``
    (with ``rank=``) reads the ranks as positions, gaps and repeated ranks kept, as
    RecTools does: an item at rank 9 is outside ``@3``, two items at rank 2 are both
    within ``@2`` (intersection only).

    ``users=`` picks the users compared: those in both runs (``"both"``, the default),
    those of run_a (``"a"``: a user missing from run_b has an empty reference list,
    so its intersection is 0; RecTools), of run_b (``"b"``) or of either. A user is in a
    run when it has a ranked row (a non-null score or rank). When a run has no ranked
    row at all there is nothing to compare: every value is null (RecTools returns no
    user for an empty reference table). The summary counts the users compared
    (``n_users``), those with a defined value per measure (``n_users(<measure>)``) and
    those found in one run only (``n_users_only_a``, ``n_users_only_b``). Rows with a
    null score (or rank) are not part of the ranking: in a long frame they are judged
    items that were not recommended, so ``prk.join`` outputs can be passed as is.

    ``conventions="rectools"`` takes the library's metric names
    (``Intersection@10``, ``Intersection(ref_k=20)@10``; columns named
    ``Intersection@10[rectools]``) and its rules: ``users="a"``, ``ties="expected"``
    and, with ``rank=``, ``rank_positions="absolute"``. See ``prk.conventions``.

    Parameters
    ----------
    run_a, run_b
        The two runs (DataFrame or LazyFrame); for the intersection run_a is the run
        and run_b the reference.
    measures
        Measure names (``rbo@10``, ``rbo(p=0.98)@100``, ``intersection@10``,
        ``intersection(ref_k=20)@10``).
    user, item, score, rank
        Column names; exactly one of ``score`` and ``rank`` (``rank=`` alone replaces
        the default ``score="score"``).
    ties
        How equal scores are ordered: by item id descending (trec_eval's rule; the
        default), ascending, or ``"expected"`` (intersection only).
    users
        The users compared (see above); default ``"both"``.
    rank_positions
        ``"relative"`` (the ranks give an order) or ``"absolute"`` (the ranks are
        positions, gaps and repeats kept; needs ``rank=`` with integers >= 1).
    per_user
        One row per user (``user`` and a column per measure) instead of the means.
    conventions
        A preset (``"rectools"``): library metric names and rules.

    Returns
    -------
    pl.DataFrame
        The means (a column per measure, ``n_users``, ``n_users(<measure>)``,
        ``n_users_only_a``, ``n_users_only_b``), or the per-user values.

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

    The top 2 of a (a, b) and the top 3 of b (b, a, c): 2 of a's 2 items.

    >>> prk.rank_similarity(a, b, ["intersection@2", "intersection(ref_k=1)@2"], per_user=True)
    shape: (1, 3)
    ┌──────┬────────────────┬─────────────────────────┐
    │ user ┆ intersection@2 ┆ intersection(ref_k=1)@2 │
    │ ---  ┆ ---            ┆ ---                     │
    │ i64  ┆ f64            ┆ f64                     │
    ╞══════╪════════════════╪═════════════════════════╡
    │ 1    ┆ 1.0            ┆ 0.5                     │
    └──────┴────────────────┴─────────────────────────┘
    """
    if rank is not None and score == "score":
        score = None  # rank= given: the default score column is not read
    if conventions is not None:
        from polars_rankeval.conventions.resolve import resolve_pairs

        resolved = resolve_pairs(
            conventions, measures, ties=ties, users=users, rank=rank is not None
        )
        result = rank_similarity(
            run_a,
            run_b,
            resolved.metrics,
            user=user,
            item=item,
            score=score,
            rank=rank,
            ties=resolved.ties,  # type: ignore[arg-type]
            users=resolved.users,  # type: ignore[arg-type]
            rank_positions=resolved.rank_positions,  # type: ignore[arg-type]
            per_user=per_user,
        )
        return _rename(result, resolved.names)
    if (score is None) == (rank is None):
        msg = f"pass exactly one of score= and rank=, got score={score!r}, rank={rank!r}"
        raise ValueError(msg)
    ties = "item_desc" if ties is None else ties
    users = "both" if users is None else users
    absolute = rank_positions == "absolute"
    if absolute and rank is None:
        msg = "rank_positions='absolute' reads explicit ranks: pass rank= (not score=)"
        raise ValueError(msg)
    if isinstance(measures, str):
        measures = [measures]
    bound = [_bind(text) for text in measures]
    for metric in bound:
        if metric.spec.name == RBO and (ties == "expected" or absolute):
            rule = "ties='expected'" if ties == "expected" else "rank_positions='absolute'"
            msg = (
                f"measure {metric.name!r}: RBO needs one order of each list (ties "
                f"'item_desc' or 'item_asc', relative ranks); got {rule}"
            )
            raise ValueError(msg)
    ranked, checks = [], []
    for run, name in ((run_a, "run_a"), (run_b, "run_b")):
        lf, check = _ranked(
            run, name, user=user, item=item, score=score, rank=rank, ties=ties, absolute=absolute
        )
        ranked.append(lf.cache())
        checks.append(check)
    found = [frame.row(0, named=True) for frame in pl.collect_all(checks)]
    order = rank if rank is not None else str(score)
    for run, name, seen in ((run_a, "run_a", found[0]), (run_b, "run_b", found[1])):
        if seen["dupes"]:  # the error counts every row of a repeated (user, item)
            seen["dupes"] = (
                run.lazy().select(pl.struct(user, item).is_duplicated().sum()).collect().item()
            )
        _check(seen, name, order)
    a, b = ranked
    users_a = a.select(_KEY).unique()
    users_b = b.select(_KEY).unique()
    compared = {
        "both": users_a.join(users_b, on=_KEY, how="inner", nulls_equal=True),
        "a": users_a,
        "b": users_b,
        "either": pl.concat([users_a, users_b]).unique(),
    }[users].cache()
    # A run without any ranked row: nothing to compare, every value undefined.
    empty_run = min(found[0]["n"], found[1]["n"]) == 0
    out = compared
    for metric in bound:
        if metric.spec.name == RBO:
            value = _rbo(metric, a, b, compared)
        else:
            value = _intersection(metric, a, b, compared)
        if empty_run:
            value = value.with_columns(pl.lit(None, pl.Float64).alias("value"))
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
            per.select(
                *(pl.col(n).mean() for n in names),
                n_users=pl.len().cast(pl.Int64),
                **{f"n_users({n})": pl.col(n).count().cast(pl.Int64) for n in names},
            ),
            counts.cast(pl.Int64),
        ],
        how="horizontal",
    )


def _rbo(metric: Metric, a: pl.LazyFrame, b: pl.LazyFrame, users: pl.LazyFrame) -> pl.LazyFrame:
    k = metric.k
    opts = dict(metric.options)
    ka = a if k is None else a.filter(pl.col("pos") <= k)
    kb = b if k is None else b.filter(pl.col("pos") <= k)
    lengths = (
        users.join(
            ka.group_by(_KEY).agg(la=pl.len().cast(pl.Int64)), on=_KEY, how="left", nulls_equal=True
        )
        .join(
            kb.group_by(_KEY).agg(lb=pl.len().cast(pl.Int64)), on=_KEY, how="left", nulls_equal=True
        )
        .with_columns(pl.col("la", "lb").fill_null(0))
    )
    common = ka.join(kb, on=[_KEY, "item"], how="inner", nulls_equal=True).select(
        _KEY, m=pl.max_horizontal("pos", "pos_right")
    )
    return rbo_frame(common, lengths, [_KEY], p=opts["p"], estimate=opts["estimate"])


def _intersection(
    metric: Metric, a: pl.LazyFrame, b: pl.LazyFrame, users: pl.LazyFrame
) -> pl.LazyFrame:
    opts = dict(metric.options)
    k = metric.k
    ref_k = opts["ref_k"] if opts["ref_k"] is not None else k
    pa = a.select(_KEY, "item", pa=_p_in(k)).filter(pl.col("pa") > 0)
    pb = b.select(_KEY, "item", pb=_p_in(ref_k)).filter(pl.col("pb") > 0)
    common = (
        pa.join(pb, on=[_KEY, "item"], how="inner", nulls_equal=True)
        .group_by(_KEY)
        .agg(num=(pl.col("pa") * pl.col("pb")).sum())
    )
    side, column = (pa, "pa") if opts["denominator"] == "run" else (pb, "pb")
    total = side.group_by(_KEY).agg(den=pl.col(column).sum())
    return (
        users.join(total, on=_KEY, how="left", nulls_equal=True)
        .join(common, on=_KEY, how="left", nulls_equal=True)
        .select(
            _KEY,
            value=pl.when(pl.col("den") > 0).then(pl.col("num").fill_null(0.0) / pl.col("den")),
        )
    )


def _rename(frame: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    mapping = {}
    for column in frame.columns:
        for ours, shown in names.items():
            if column == ours:
                mapping[column] = shown
            elif column == f"n_users({ours})":
                mapping[column] = f"n_users({shown})"
    return frame.rename(mapping)


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


@validate_params(
    {
        "a": _ONE_ROW_PER_SYSTEM,
        "b": [_ONE_ROW_PER_SYSTEM, None],
        "on": COLUMN,
        "columns": [ListOf(COLUMN, what="a list of metric column names"), None],
        "method": Options.of(Method),
    }
)
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
    frames = [("a", a)] + ([] if b is None else [("b", b)])
    for name, frame in frames:
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

"""``fuse``: combine runs (or recommenders) given as long frames into one fused run.

The steps are one lazy plan: stack the runs (``_r`` names the run), rank each run's list
for a user (score descending, then item descending: trec_eval's order, which the TREC
writer uses too), normalise each run's scores, and hand the rows to the method's kernel
(:mod:`polars_rankeval.fusion.methods`, :mod:`polars_rankeval.fusion.trained`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypeAlias, overload

import polars as pl

from polars_rankeval._utils.constraints import validate_params
from polars_rankeval.fusion.constraints import FUSE
from polars_rankeval.fusion.methods import with_candidates
from polars_rankeval.fusion.normalize import NORMS, borda_value, check_norm, fill, norm_expr
from polars_rankeval.fusion.registry import FusionMethod, get_method
from polars_rankeval.plan.validate import raising_on_collect

Frame: TypeAlias = pl.DataFrame | pl.LazyFrame
RunSource: TypeAlias = "Frame | str | PathLike[str]"
Runs: TypeAlias = "Frame | Mapping[str, RunSource] | Sequence[RunSource]"
NormArg: TypeAlias = "str | Mapping[str, str | None] | Sequence[str | None] | None"
LIST = ["_r", "_u"]


def _scan(source: object, name: str) -> pl.LazyFrame:
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, str | PathLike):
        from polars_rankeval.io.trec.read import scan_run

        return scan_run(Path(source))
    msg = (
        f"runs[{name!r}] must be a polars DataFrame, LazyFrame or a TREC run path, "
        f"got {type(source).__name__}"
    )
    raise TypeError(msg)


def _sources(runs: object) -> tuple[dict[str, pl.LazyFrame] | None, pl.LazyFrame | None, bool]:
    """(name -> frame, or the one frame with a system column, eager)."""
    if isinstance(runs, pl.DataFrame | pl.LazyFrame):
        return None, runs.lazy(), isinstance(runs, pl.DataFrame)
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items()}
    elif isinstance(runs, Sequence) and not isinstance(runs, str):
        named = {}
        for index, source in enumerate(runs):
            key = Path(source).name if isinstance(source, str | PathLike) else str(index)
            if key in named:
                msg = f"runs has two runs named {key!r}; pass a mapping of name to run"
                raise ValueError(msg)
            named[key] = source
    else:
        msg = (
            "runs must be a frame with a system column, a mapping of name to run or a "
            f"sequence of runs, got {type(runs).__name__}"
        )
        raise TypeError(msg)
    if len(named) < 2:
        msg = f"runs must hold at least 2 runs to fuse, got {len(named)}"
        raise ValueError(msg)
    eager = all(isinstance(v, pl.DataFrame) for v in named.values())
    return {k: _scan(v, k) for k, v in named.items()}, None, eager


def _per_run(value: object, names: list[str] | None, what: str) -> dict[str, Any] | None:
    """A per-run argument (mapping, or sequence in run order) as name -> value."""
    if isinstance(value, Mapping):
        out = {str(k): v for k, v in value.items()}
        if names is not None and sorted(out) != sorted(names):
            msg = f"{what} must name every run {sorted(names)!r}, got {sorted(out)!r}"
            raise ValueError(msg)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        if names is None:
            msg = (
                f"{what} must be a mapping of system name to value when runs is one frame, "
                f"got {type(value).__name__}"
            )
            raise TypeError(msg)
        if len(value) != len(names):
            msg = f"{what} must hold one value per run ({len(names)}), got {len(value)}"
            raise ValueError(msg)
        return dict(zip(names, value, strict=True))
    return None


def _check_weights(weights: object, names: list[str] | None) -> dict[str, float] | None:
    if weights is None:
        return None
    table = _per_run(weights, names, "weights")
    if table is None:
        msg = f"weights must be a sequence or a mapping of run name to weight, got {weights!r}"
        raise TypeError(msg)
    for key, w in table.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w):
            msg = f"weights[{key!r}] must be a finite number, got {w!r}"
            raise ValueError(msg)
    return {k: float(v) for k, v in table.items()}


def stack(
    runs: Runs, *, system: str, user: str, item: str, score: str
) -> tuple[pl.LazyFrame, list[str] | None, bool]:
    """The runs as one lazy frame ``_u, _i, _r, _raw`` (null scores left out)."""
    named, frame, eager = _sources(runs)
    if frame is not None:
        columns = [system, user, item, score]
        missing = [c for c in columns if c not in frame.collect_schema()]
        if missing:
            msg = f"runs has no column {missing[0]!r}; columns: {frame.collect_schema().names()!r}"
            raise ValueError(msg)
        rows = frame.select(
            _u=pl.col(user),
            _i=pl.col(item),
            _r=pl.col(system).cast(pl.String),
            _raw=pl.col(score).cast(pl.Float64),
        )
        names = None
    else:
        assert named is not None  # narrowing for mypy: _sources returns one
        parts = []
        for key, lf in named.items():
            schema = lf.collect_schema()
            for c in (user, item, score):
                if c not in schema:
                    msg = f"runs[{key!r}] has no column {c!r}; columns: {schema.names()!r}"
                    raise ValueError(msg)
            parts.append(
                lf.select(
                    _u=pl.col(user),
                    _i=pl.col(item),
                    _r=pl.lit(key, pl.String),
                    _raw=pl.col(score).cast(pl.Float64),
                )
            )
        rows = pl.concat(parts, how="vertical_relaxed")
        names = list(named)
    return rows.filter(pl.col("_raw").is_not_null()), names, eager


def positioned(rows: pl.LazyFrame) -> pl.LazyFrame:
    """``rows`` with ``_p`` (0-based position in its run's list) and ``_n`` (list length)."""
    return rows.sort(
        ["_r", "_u", "_raw", "_i"], descending=[False, False, True, True]
    ).with_columns(
        _p=pl.int_range(pl.len(), dtype=pl.Int64).over(LIST),
        _n=pl.len().over(LIST).cast(pl.Int64),
    )


def run_checks(rows: pl.LazyFrame) -> pl.LazyFrame:
    """Per run, the rows :func:`raise_on_run_problems` refuses (stacked ``rows``).

    Null user or item ids, NaN or infinite scores (a null score leaves the row out of
    its run, as documented), and rows beyond the first of an item in a user's list:
    each a count, one row per run. One aggregation per (run, user) list (a hash of
    the items within each list: on 2M rows ~0.2 s, a third of a ``wsum`` fusion
    without the checks; over (run, user, item) keys at once, 0.4 s).
    """
    lists = rows.group_by("_r", "_u").agg(
        n=pl.len(),
        null_item=pl.col("_i").null_count(),
        bad_score=(pl.col("_raw").is_nan() | pl.col("_raw").is_infinite()).sum(),
        dup=pl.len() - pl.col("_i").n_unique(),
    )
    return lists.group_by("_r").agg(
        null_user=pl.col("n").filter(pl.col("_u").is_null()).sum(),
        null_item=pl.col("null_item").sum(),
        bad_score=pl.col("bad_score").sum(),
        dup=pl.col("dup").sum(),
    )


def raise_on_run_problems(
    found: pl.DataFrame, rows: pl.LazyFrame, *, user: str, item: str, score: str
) -> None:
    """Raise a ``ValueError`` for the first run (by name) with a problem in ``found``.

    ``found``: :func:`run_checks`' counts. A duplicated key is named with one example,
    read from ``rows`` only then.
    """
    problems = found.filter(
        (pl.col("null_user") + pl.col("null_item") + pl.col("bad_score") + pl.col("dup")) > 0
    ).sort("_r")
    if not problems.height:
        return
    row = problems.row(0, named=True)
    run = row["_r"]
    if row["null_user"]:
        msg = f"run {run!r}: user column {user!r} has {row['null_user']} null value(s)"
    elif row["null_item"]:
        msg = f"run {run!r}: item column {item!r} has {row['null_item']} null value(s)"
    elif row["bad_score"]:
        msg = f"run {run!r}: score column {score!r} has {row['bad_score']} NaN or infinite value(s)"
    else:
        example = (
            rows.filter(pl.col("_r") == run)
            .group_by("_u", "_i")
            .len()
            .filter(pl.col("len") > 1)
            .sort("_u", "_i")
            .head(1)
            .collect()
            .row(0)
        )
        msg = (
            f"run {run!r}: {row['dup']} rows share a ({user}, {item}) key with another row, "
            f"e.g. ({example[0]!r}, {example[1]!r}); each item must appear once in a list"
        )
    raise ValueError(msg)


def _repositioned(rows: pl.LazyFrame) -> pl.LazyFrame:
    """Positions by normalised score (a filled row after the run's own, by item)."""
    return rows.sort(
        ["_r", "_u", "_s", "_p", "_i"],
        descending=[False, False, True, False, True],
        nulls_last=True,
    ).with_columns(
        _p=pl.int_range(pl.len(), dtype=pl.Int64).over(LIST),
        _n=pl.len().over(LIST).cast(pl.Int64),
    )


def hits_frame(
    rows: pl.LazyFrame, qrels: Frame, *, user: str, item: str, relevance: str
) -> pl.LazyFrame:
    """The training hits (``HIT_COLUMNS``) of positioned ``rows`` against ``qrels``."""
    q = qrels.lazy()
    schema = q.collect_schema()
    for c in (user, item, relevance):
        if c not in schema:
            msg = f"qrels has no column {c!r}; columns: {schema.names()!r}"
            raise ValueError(msg)
    types = rows.collect_schema()
    q = q.select(
        _u=pl.col(user).cast(types["_u"]),
        _i=pl.col(item).cast(types["_i"]),
        _rel=pl.col(relevance),
    )
    users = q.select("_u").unique()
    relevant = q.filter(pl.col("_rel") >= 1).select("_u", "_i").unique()
    nrel = relevant.group_by("_u").agg(_nrel=pl.len().cast(pl.Int64))
    return (
        rows.select("_r", "_u", "_i", "_p", "_n")
        .join(users, on="_u", how="semi")
        .join(relevant.with_columns(_hit=pl.lit(1.0)), on=["_u", "_i"], how="left")
        .join(nrel, on="_u", how="left")
        .join(users.select(_nq=pl.len().cast(pl.Int64)), how="cross")
        .select(
            "_r",
            "_u",
            "_p",
            "_n",
            pl.col("_hit").fill_null(0.0),
            pl.col("_nrel").fill_null(0),
            "_nq",
        )
    )


def fuse_rows(
    rows: pl.LazyFrame,
    runs: pl.LazyFrame,
    spec: FusionMethod,
    *,
    norms: dict[str, str | None] | str | None,
    params: dict[str, Any],
    hits: pl.LazyFrame | None,
    missing: float | None,
) -> pl.LazyFrame:
    """The fused ``_u, _i, score`` of stacked rows (``_u, _i, _r, _raw``, positioned)."""
    rows = rows.join(runs, on="_r", how="left").with_columns(
        pl.col("_w").fill_null(1.0), _s=pl.col("_raw")
    )
    used = set(norms.values()) if isinstance(norms, dict) else {norms}
    if "borda" in used:
        rows = with_candidates(rows)
    if isinstance(norms, dict):
        expr: pl.Expr = pl.col("_s")
        for name, norm in norms.items():
            expr = pl.when(pl.col("_r") == name).then(norm_expr(norm)).otherwise(expr)
        rows = rows.with_columns(_s=expr)
    else:
        rows = rows.with_columns(_s=norm_expr(norms))
    repositioned = bool(used & {"borda", "min-max-inverted"})
    if "borda" in used:
        only = [k for k, v in norms.items() if v == "borda"] if isinstance(norms, dict) else None
        rows = fill(rows, runs, borda_value(), only=only)
    # ``_in``: the row is in its run's list (or holds borda's score for an item the run
    # lacks, counted as the run's, ranx's rule); 0 for a ``missing`` score, so that the
    # methods counting the runs retrieving an item do not count it.
    rows = rows.with_columns(_in=pl.lit(1.0))
    if missing is not None:
        rows = fill(with_candidates(rows), runs, pl.lit(missing))
        rows = rows.with_columns(pl.col("_in").fill_null(0.0))
    if repositioned:
        rows = _repositioned(rows)
    if spec.trained:
        assert hits is not None  # fuse checks qrels for a trained method
        return spec.kernel(rows, runs, hits, **params)
    return spec.kernel(rows, runs, **params)


@overload
def fuse(
    runs: pl.DataFrame | Mapping[str, pl.DataFrame] | Sequence[pl.DataFrame],
    *,
    method: str = ...,
    norm: NormArg | Literal["auto"] = ...,
    weights: Any = ...,
    params: Mapping[str, Any] | None = ...,
    qrels: Frame | None = ...,
    missing: float | None = ...,
    system: str = ...,
    user: str = ...,
    item: str = ...,
    score: str = ...,
    relevance: str = ...,
    validate: bool = ...,
) -> pl.DataFrame | pl.LazyFrame: ...
@overload
def fuse(
    runs: Runs,
    *,
    method: str = ...,
    norm: NormArg | Literal["auto"] = ...,
    weights: Any = ...,
    params: Mapping[str, Any] | None = ...,
    qrels: Frame | None = ...,
    missing: float | None = ...,
    system: str = ...,
    user: str = ...,
    item: str = ...,
    score: str = ...,
    relevance: str = ...,
    validate: bool = ...,
) -> pl.DataFrame | pl.LazyFrame: ...
@validate_params(FUSE)
def fuse(
    runs: Runs,
    *,
    method: str = "wsum",
    norm: NormArg | Literal["auto"] = "auto",
    weights: Sequence[float] | Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    qrels: Frame | None = None,
    missing: float | None = None,
    system: str = "system",
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
    validate: bool = True,
) -> pl.DataFrame | pl.LazyFrame:
    """Fuse several runs into one: a long frame ``user, item, score`` for ``evaluate``.

    Each run's list for a user is ranked (score descending, then item descending:
    trec_eval's order, also the TREC writer's), its scores normalised per list
    (``norm``), and the method combines, per user, every item any run retrieved. The
    methods are those of ranx (same names, same numbers: ``tests/fusion``) plus
    Qdrant's distribution-based score fusion (``dbsf``) and weighted RRF (``w_rrf``);
    :func:`list_fusion_methods` lists them with their parameters.

    Parameters
    ----------
    runs
        One frame with a ``system`` column naming the run of each row; a mapping of
        run name to a frame or a TREC run file; or a sequence of them (named by their
        index, or a file by its name). At least two runs.
    method
        The fusion method (:func:`list_fusion_methods`).
    norm
        The normalisation of each run's scores per user: ``"min-max"``, ``"max"``,
        ``"sum"``, ``"zmuv"`` (z-score), ``"rank"``, ``"borda"``, ``"dbsf"``,
        ``"min-max-inverted"`` or ``None``; one for all runs, or one per run (a mapping
        or a sequence in run order). ``"auto"``: the method's own (``min-max`` as in
        ranx, ``dbsf`` for ``dbsf``).
    weights
        One weight per run (a sequence in run order or a mapping of name to weight);
        weighted methods only. Default: 1 for every run.
    params
        The method's parameters (``{"k": 60}`` for ``rrf``).
    qrels
        Training relevance judgments (``user, item, relevance``; relevant means
        relevance >= 1) for the methods that learn (``trained`` in the listing).
    missing
        A score for an item missing from a run's list (after normalisation), as hybrid
        search engines set one; score-combining methods only. ``None``: a missing item
        has no score in that run (ranx's rule). The score adds to the sums; the run is
        still not one retrieving the item (CombMNZ, CombANZ, CombGMNZ, WMNZ and MIXED
        count those), so ``0.0`` changes nothing.
    system, user, item, score, relevance
        Column names.
    validate
        Check the rows (null user or item ids, NaN or infinite scores, an item twice in
        one user's list) and raise ``ValueError`` naming the run; with LazyFrame runs
        when the result is collected. ``False`` skips the checks, one aggregation over
        the runs' lists (on 2M rows ~0.2 s, a third of a ``wsum`` fusion without them),
        for runs known to be clean.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        ``user, item, score``: one row per user and item any run retrieved; lazy unless
        every run was a DataFrame.

    Raises
    ------
    ValueError
        For a bad argument, and (``validate``) for bad rows, naming the run: a null user
        or item id, a NaN or infinite score, an item twice in one user's list (a null
        score leaves the row out of its run). With LazyFrame runs, at ``collect``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> bm25 = pl.DataFrame({"user": ["q1"] * 3, "item": ["a", "b", "c"],
    ...                      "score": [3.0, 2.0, 1.0]})
    >>> dense = pl.DataFrame({"user": ["q1"] * 2, "item": ["b", "d"], "score": [0.9, 0.8]})
    >>> prk.fuse({"bm25": bm25, "dense": dense}, method="rrf", params={"k": 1}).sort("item")
    shape: (4, 3)
    ┌──────┬──────┬──────────┐
    │ user ┆ item ┆ score    │
    │ ---  ┆ ---  ┆ ---      │
    │ str  ┆ str  ┆ f64      │
    ╞══════╪══════╪══════════╡
    │ q1   ┆ a    ┆ 0.5      │
    │ q1   ┆ b    ┆ 0.833333 │
    │ q1   ┆ c    ┆ 0.25     │
    │ q1   ┆ d    ┆ 0.333333 │
    └──────┴──────┴──────────┘

    ``b`` is second in ``bm25`` and first in ``dense``: 1/(1+2) + 1/(1+1).
    """
    spec, rows, runs_frame, norms, bound, eager, stacked = prepare(
        runs,
        method=method,
        norm=norm,
        weights=weights,
        params=params,
        qrels=qrels,
        missing=missing,
        system=system,
        user=user,
        item=item,
        score=score,
    )
    hits = (
        hits_frame(rows, qrels, user=user, item=item, relevance=relevance)
        if qrels is not None
        else None
    )
    fused = fuse_rows(rows, runs_frame, spec, norms=norms, params=bound, hits=hits, missing=missing)
    out = fused.select(
        pl.col("_u").alias(user), pl.col("_i").alias(item), pl.col("score").alias(score)
    )
    if validate:
        out = raising_on_collect(
            out,
            run_checks(stacked),
            lambda found: raise_on_run_problems(found, stacked, user=user, item=item, score=score),
        )
    return out.collect() if eager else out


def prepare(
    runs: Runs,
    *,
    method: str,
    norm: object,
    weights: object,
    params: Mapping[str, Any] | None,
    qrels: object,
    missing: object,
    system: str,
    user: str,
    item: str,
    score: str,
) -> tuple[
    FusionMethod,
    pl.LazyFrame,
    pl.LazyFrame,
    dict[str, str | None] | str | None,
    dict[str, Any],
    bool,
    pl.LazyFrame,
]:
    """Every argument of :func:`fuse` checked, in one place; the positioned rows.

    Also the stacked rows before positioning (:func:`stack`), which the value checks
    read (:func:`run_checks`).
    """
    spec = get_method(method)
    bound = spec.bind(dict(params) if params is not None else None)
    if spec.trained and qrels is None:
        msg = f"method {method!r} learns from training queries: pass qrels"
        raise ValueError(msg)
    if not spec.trained and qrels is not None:
        msg = f"qrels is for the trained methods only, not {method!r}"
        raise ValueError(msg)
    if qrels is not None and not isinstance(qrels, pl.DataFrame | pl.LazyFrame):
        msg = f"qrels must be a polars DataFrame or LazyFrame, got {type(qrels).__name__}"
        raise TypeError(msg)
    if missing is not None:
        if not spec.score_based:
            msg = f"missing applies to the score-combining methods only, not {method!r}"
            raise ValueError(msg)
        number = isinstance(missing, int | float) and not isinstance(missing, bool)
        if not number or not math.isfinite(missing):  # type: ignore[arg-type]
            msg = f"missing must be a finite number or None, got {missing!r}"
            raise ValueError(msg)
    rows, names, eager = stack(runs, system=system, user=user, item=item, score=score)
    if weights is not None and not spec.weighted:
        msg = f"weights apply to weighted methods only, not {method!r}"
        raise ValueError(msg)
    table = _check_weights(weights, names)
    norms: dict[str, str | None] | str | None
    if isinstance(norm, str) and norm == "auto":
        norms = spec.default_norm
    elif norm is None or isinstance(norm, str):
        norms = check_norm(norm)
    else:
        per = _per_run(norm, names, "norm")
        if per is None:
            msg = f"norm must be one of {list(NORMS)!r}, None, or one per run, got {norm!r}"
            raise ValueError(msg)
        norms = {k: check_norm(v, f"norm[{k!r}]") for k, v in per.items()}
    if names is not None:
        runs_frame = pl.LazyFrame(
            {"_r": names, "_w": [1.0 if table is None else table[n] for n in names]},
            schema={"_r": pl.String, "_w": pl.Float64},
        )
    else:
        runs_frame = rows.select("_r").unique()
        if table is not None:
            given = pl.LazyFrame(
                {"_r": list(table), "_w": list(table.values())},
                schema={"_r": pl.String, "_w": pl.Float64},
            )
            runs_frame = runs_frame.join(given, on="_r", how="left")
        runs_frame = runs_frame.with_columns(
            pl.col("_w").fill_null(1.0) if table is not None else pl.lit(1.0).alias("_w")
        )
    return spec, positioned(rows), runs_frame, norms, bound, eager, rows

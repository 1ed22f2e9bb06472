"""trec_eval, reproduced on the project's own metrics.

Every trec_eval measure maps to a registered metric (with trec_eval's parameters) or
to an aggregation of one (``gm_map`` is the geometric mean of ``map``). The whole
measure set is computed in one :func:`polars_rankeval.evaluate` plan with trec_eval's
tie rule (score descending, then docno descending: ``ties="item_desc"`` on String
doc ids), and the output follows trec_eval's format line for line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from polars_rankeval._validate import to_lazy
from polars_rankeval.evaluate import evaluate, join
from polars_rankeval.registry import parse_metric
from polars_rankeval.trec import read_qrels, read_run

Summary = Literal["mean", "sum", "gm"]
Format = Literal["float", "long"]
MIN_GEO_MEAN = 1e-5

_CUTOFFS = ("5", "10", "15", "20", "30", "100", "200", "500", "1000")
_RECALL_LEVELS = tuple(f"{i / 10:.2f}" for i in range(11))
_RPREC_MULTS = tuple(f"{i / 10:.2f}" for i in range(2, 21, 2))


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: how to compute it per query and summarise it."""

    name: str
    metric: Callable[[str, int], str]  # (parameter, relevance level) -> metric string
    params: tuple[str, ...] = ()
    summary: Summary = "mean"
    fmt: Format = "float"
    per_query: bool = True

    def label(self, param: str) -> str:
        """The printed name: ``P_5``, ``map``, ``iprec_at_recall_0.10`` ..."""
        return f"{self.name}_{param}" if param else self.name


def _rel(level: int) -> str:
    return f"rel={level}"


def _simple(name: str, *, binary: bool = True, extra: str = "") -> Callable[[str, int], str]:
    def build(param: str, level: int) -> str:
        options = [o for o in (extra, _rel(level) if binary else "") if o]
        text = name + (f"({','.join(options)})" if options else "")
        return text + (f"@{param}" if param else "")

    return build


def _with_option(name: str, option: str, *, binary: bool = True) -> Callable[[str, int], str]:
    def build(param: str, level: int) -> str:
        options = [f"{option}={param}", *([_rel(level)] if binary else [])]
        return f"{name}({','.join(options)})"

    return build


# The measures of trec_eval -m all_trec, in trec_eval's print order. runid, num_q and
# relstring are handled by the engine itself.
ALL_TREC: tuple[TrecMeasure, ...] = (
    TrecMeasure("num_ret", _simple("num_ret", binary=False), summary="sum", fmt="long"),
    TrecMeasure("num_rel", _simple("num_rel"), summary="sum", fmt="long"),
    TrecMeasure("num_rel_ret", _simple("num_rel_ret"), summary="sum", fmt="long"),
    TrecMeasure("map", _simple("map")),
    TrecMeasure("gm_map", _simple("map"), summary="gm", per_query=False),
    TrecMeasure("Rprec", _simple("r_precision")),
    TrecMeasure("bpref", _simple("bpref")),
    TrecMeasure("recip_rank", _simple("mrr")),
    TrecMeasure("iprec_at_recall", _with_option("iprec_at_recall", "level"), params=_RECALL_LEVELS),
    TrecMeasure("P", _simple("precision"), params=_CUTOFFS),
    TrecMeasure("recall", _simple("recall"), params=_CUTOFFS),
    TrecMeasure("infAP", _simple("inf_ap")),
    TrecMeasure("gm_bpref", _simple("bpref"), summary="gm", per_query=False),
    TrecMeasure("Rprec_mult", _with_option("r_precision", "mult"), params=_RPREC_MULTS),
    TrecMeasure("utility", _simple("utility")),
    TrecMeasure("11pt_avg", _simple("iprec_11pt")),
    TrecMeasure("binG", _simple("bin_g")),
    TrecMeasure("G", _simple("g", binary=False)),
    TrecMeasure("ndcg", _simple("ndcg", binary=False)),
    TrecMeasure("ndcg_rel", _simple("ndcg_rel", binary=False)),
    TrecMeasure("Rndcg", _simple("rndcg", binary=False)),
    TrecMeasure("ndcg_cut", _simple("ndcg", binary=False), params=_CUTOFFS),
    TrecMeasure("map_cut", _simple("map"), params=_CUTOFFS),
    TrecMeasure("relative_P", _simple("relative_precision"), params=_CUTOFFS),
    TrecMeasure("success", _simple("hit_rate"), params=("1", "5", "10")),
    TrecMeasure("set_P", _simple("precision")),
    TrecMeasure("set_relative_P", _simple("relative_precision")),
    TrecMeasure("set_recall", _simple("recall")),
    TrecMeasure("set_map", _simple("set_map")),
    TrecMeasure("set_F", _simple("f1")),
    TrecMeasure(
        "num_nonrel_judged_ret",
        _simple("num_nonrel_judged_ret"),
        summary="sum",
        fmt="long",
    ),
    TrecMeasure("rbp", _simple("rbp", binary=False)),
    TrecMeasure("rbp_resid", _simple("rbp_resid", binary=False)),
    TrecMeasure("unj", _simple("unjudged", binary=False), params=("5", "10", "20")),
)
_BY_NAME = {m.name: m for m in ALL_TREC}
OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
    "bpref", "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
# runid, num_q (summary only) and relstring (per query only) are the engine's own.
_ENGINE = ("runid", "num_q", "relstring")
_ORDER = ("runid", "num_q", *(m.name for m in ALL_TREC))
_ORDER = (*_ORDER[: _ORDER.index("P") + 1], "relstring", *_ORDER[_ORDER.index("P") + 1 :])


@dataclass(frozen=True)
class _Request:
    measure: str
    params: tuple[str, ...]


def parse_measures(specs: Iterable[str]) -> list[_Request]:
    """Parse trec_eval ``-m`` arguments: ``all_trec``, ``official``, ``P.5,10`` ...

    Returns the requested measures in trec_eval's print order (a measure named twice
    takes the last parameters, as trec_eval does).
    """
    chosen: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        name, _, params = spec.partition(".")
        if name == "all_trec":
            for m in _ORDER:
                chosen[m] = _BY_NAME[m].params if m in _BY_NAME else ()
            continue
        if name == "official":
            for m in OFFICIAL:
                chosen[m] = _BY_NAME[m].params if m in _BY_NAME else ()
            continue
        if name not in _ORDER:
            msg = f"unknown trec_eval measure {name!r}; known: {', '.join(_ORDER)}"
            raise ValueError(msg)
        measure = _BY_NAME.get(name)
        if params and (measure is None or (not measure.params and name != "ndcg")):
            msg = f"trec_eval measure {name!r} takes no parameters, got {params!r}"
            raise ValueError(msg)
        default = measure.params if measure is not None else ()
        chosen[name] = tuple(p for p in params.split(",") if p) if params else default
    return [_Request(m, chosen[m]) for m in _ORDER if m in chosen]


def _gain_map(params: tuple[str, ...]) -> dict[int, float]:
    gains: dict[int, float] = {}
    for pair in params:
        level, eq, gain = pair.partition("=")
        if not eq or not re.fullmatch(r"-?\d+", level.strip()):
            msg = f"ndcg gain map entries look like level=gain, got {pair!r}"
            raise ValueError(msg)
        gains[int(level)] = float(gain)
    return gains


def trec_eval(
    qrels: Any,
    run: Any,
    measures: Sequence[str] = ("official",),
    *,
    per_query: bool = False,
    complete: bool = False,
    max_docs: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    runid: str | None = None,
) -> pl.DataFrame:
    """Evaluate a TREC run against qrels as trec_eval does.

    Parameters
    ----------
    qrels, run
        Paths of TREC files, or frames with columns ``user, item, relevance`` and
        ``user, item, score`` (``tag`` optional) with String ids.
    measures
        trec_eval ``-m`` arguments: ``"official"`` (the default set), ``"all_trec"``,
        or measure names with parameters (``"P.5,10"``, ``"ndcg_cut.10"``,
        ``"ndcg.1=0,2=3"``).
    per_query
        ``-q``: also one value per query.
    complete
        ``-c``: average over every query of the qrels (missing ones count as 0).
    max_docs
        ``-M``: at most this many documents per query (in trec_eval's order).
    rel_level
        ``-l``: minimum relevance that counts as relevant.
    judged_only
        ``-J``: drop retrieved documents without a judgment first.
    runid
        The run tag to print; read from the run's ``tag`` column when omitted.

    Returns
    -------
    polars.DataFrame
        Columns ``measure``, ``query`` (``"all"`` for the summary), ``value``
        (Float64, null for text measures) and ``text`` (the value as trec_eval
        prints it), in trec_eval's order.
    """
    if rel_level < 1:
        msg = f"rel_level must be a positive integer, got {rel_level!r}"
        raise ValueError(msg)
    if max_docs is not None and max_docs < 1:
        msg = f"max_docs must be a positive integer, got {max_docs!r}"
        raise ValueError(msg)
    # Parse each file once; everything below reads the frames in memory.
    qrels_lf = read_qrels(qrels).lazy() if isinstance(qrels, str | Path) else to_lazy(qrels)[0]
    run_lf = read_run(run).lazy() if isinstance(run, str | Path) else to_lazy(run, "run")[0]
    if runid is None:
        tags = run_lf.select(pl.col("tag").first()) if "tag" in run_lf.collect_schema() else None
        runid = (tags.collect().item() if tags is not None else None) or "unknown"
    requests = parse_measures(measures)

    run_lf = run_lf.select(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("score").cast(pl.Float64),
    )
    qrels_lf = qrels_lf.select(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String),
        pl.col("relevance").cast(pl.Int64),
    )
    if judged_only:
        run_lf = run_lf.join(qrels_lf.select("user", "item"), on=["user", "item"], how="semi")
    if max_docs is not None:
        order = pl.struct(pl.col("score"), pl.col("item")).rank("ordinal", descending=True)
        run_lf = run_lf.filter(order.over("user") <= max_docs)
    queries = (
        run_lf.select("user").unique().join(qrels_lf.select("user").unique(), on="user", how="semi")
    )
    long = join(run_lf, qrels_lf)
    assert isinstance(long, pl.LazyFrame)
    long = long.join(queries, on="user", how="semi")

    plan = _plan(requests, rel_level)
    per_user = _per_query_values(long, plan, requests)
    n_qrels = qrels_lf.select(pl.col("user").n_unique()).collect().item()
    return _assemble(per_user, plan, requests, runid, per_query, complete, n_qrels)


@dataclass(frozen=True)
class _Column:
    label: str  # printed name
    metric: str  # metric string or "" for engine measures
    measure: TrecMeasure | None
    gains: dict[int, float] | None = None


def _plan(requests: list[_Request], level: int) -> list[_Column]:
    columns: list[_Column] = []
    for request in requests:
        measure = _BY_NAME.get(request.measure)
        if measure is None:
            columns.append(_Column(request.measure, "", None))
            continue
        if measure.name == "ndcg" and request.params:
            gains = _gain_map(request.params)
            metric = parse_metric(measure.metric("", level)).name
            columns.append(_Column("ndcg", metric, measure, gains))
            continue
        for param in request.params or ("",):
            metric = parse_metric(measure.metric(param, level)).name
            columns.append(_Column(measure.label(param), metric, measure))
    return columns


def _per_query_values(
    long: pl.LazyFrame, plan: list[_Column], requests: list[_Request]
) -> pl.DataFrame:
    plain = sorted({c.metric for c in plan if c.metric and c.gains is None})
    frames = []
    if plain:
        frames.append(_evaluate(long, plain))
    for column in plan:
        if column.gains is not None:
            mapped = long.with_columns(
                pl.col("relevance")
                .replace_strict(
                    column.gains,
                    default=pl.col("relevance").cast(pl.Float64),
                    return_dtype=pl.Float64,
                )
                .clip(lower_bound=0.0)
            )
            frames.append(_evaluate(mapped, [column.metric]).rename({column.metric: "ndcg[gains]"}))
    if any(r.measure == "relstring" for r in requests):
        frames.append(_relstrings(long))
    out = frames[0]
    for frame in frames[1:]:
        out = out.join(frame, on="user", how="full", coalesce=True)
    return out.sort("user")


def _evaluate(long: pl.LazyFrame, metrics: list[str]) -> pl.DataFrame:
    result = evaluate(long, metrics, ties="item_desc", per_user=True, users="all", empty="zero")
    assert isinstance(result, pl.LazyFrame)
    return result.collect()


def _relstrings(long: pl.LazyFrame, length: int = 10) -> pl.DataFrame:
    rel = pl.col("relevance")
    char = (
        pl.when(rel.is_null()).then(pl.lit("-"))
        .when(rel > 9).then(pl.lit(">"))
        .when(rel >= 0).then(rel.cast(pl.String))
        .otherwise(pl.lit("<"))
    )  # fmt: skip
    # Only the first `length` documents of each query matter: rank, keep those, then sort
    # the few rows left rather than the whole run.
    position = pl.struct(pl.col("score"), pl.col("item")).rank("ordinal", descending=True)
    return (
        long.filter(pl.col("score").is_not_null())
        .filter(position.over("user") <= length)
        .sort(["user", "score", "item"], descending=[False, True, True])
        .group_by("user", maintain_order=True)
        .agg(char.str.join("").alias("__relstring"))
        .collect()
    )


def _fmt(value: float, fmt: Format) -> str:
    return f"{int(value)}" if fmt == "long" else f"{value:6.4f}"


def _assemble(
    per_user: pl.DataFrame,
    plan: list[_Column],
    requests: list[_Request],
    runid: str,
    per_query: bool,
    complete: bool,
    n_qrels: int,
) -> pl.DataFrame:
    rows: list[tuple[str, str, float | None, str]] = []
    n_eval = per_user.height
    users = per_user["user"].to_list()

    def column_values(column: _Column) -> list[float]:
        name = "ndcg[gains]" if column.gains is not None else column.metric
        return [float(v) for v in per_user[name].fill_null(0.0).to_list()]

    if per_query:
        for i, user in enumerate(users):
            for column in plan:
                if column.measure is None:
                    if column.label == "relstring":
                        text = per_user["__relstring"][i] or ""
                        rows.append(("relstring", user, None, f"'{text}'"))
                    continue
                if not column.measure.per_query:
                    continue
                value = column_values(column)[i]
                rows.append((column.label, user, value, _fmt(value, column.measure.fmt)))
    denominator = n_qrels if complete else n_eval
    for column in plan:
        if column.measure is None:
            if column.label == "runid":
                rows.append(("runid", "all", None, runid))
            elif column.label == "num_q":
                count = float(denominator)
                rows.append(("num_q", "all", count, str(int(count))))
            continue
        values = column_values(column)
        summary = column.measure.summary
        if summary == "sum":
            value = float(sum(values))
        elif summary == "gm":
            logs = sum(math.log(max(v, MIN_GEO_MEAN)) for v in values)
            logs += (denominator - n_eval) * math.log(MIN_GEO_MEAN)
            value = math.exp(logs / denominator) if denominator else 0.0
        else:
            value = sum(values) / denominator if denominator else 0.0
        rows.append((column.label, "all", value, _fmt(value, column.measure.fmt)))
    return pl.DataFrame(
        rows,
        schema={"measure": pl.String, "query": pl.String, "value": pl.Float64, "text": pl.String},
        orient="row",
    )


def format_trec(result: pl.DataFrame) -> str:
    """The lines trec_eval prints: name padded to 22 columns, query, value; tab-separated."""
    return "".join(
        f"{measure:<22}\t{query}\t{text}\n"
        for measure, query, text in result.select("measure", "query", "text").iter_rows()
    )

"""The per-query computation of trec_eval's measures over the ranked lists.

``_query_stats`` counts what every measure reads (relevant retrieved, judged, R ...)
and ``_compute`` evaluates the requested columns as Polars expressions over the
rankings: running counts and sums with ``cum_sum``, which keeps C's left-to-right
summation so the printed digits agree on ``.xxxx5`` boundaries (the registered
metrics need not sum in that order), values at cutoffs, ``bpref``, ``infAP`` with
trec_eval's epsilon, the interpolated precision at recall levels (the recall level
rounded as C's ``lround`` rounds it).
The gain family (``ndcg``, ``Rndcg``, ``G``, ``rbp`` ...) is in :mod:`.gains`.

Why the declared metrics are not reused here, although several definitions coincide
(``P_k``/``precision``, ``recall_k``/``recall``, ``recip_rank``/``mrr``, ``map``,
``num_rel_ret``, ``bpref``): the output must be byte-identical to the C program, and
the printed 4th decimal depends on the order of the float sums. The registered
metrics sum per user in the order of a Polars window or group aggregation (and the
sorted-head path in another again), equal only up to rounding; here every sum runs in
rank order with ``cum_sum``, as C's loops do. trec_eval also reads its own inputs
(a qrels relevance of ``-1`` or below is unjudged, retrieved documents are cut at
``-M``, ties broken by docno descending on the text of the id), which the per-query
frame already carries, so the counts above are each one column of it. The shared
definitions are pinned instead: ``tests/trec_eval/test_trec_conformance.py`` checks the
registered metrics against trec_eval's printed output, the other tests and
``tests/trec_eval/trec_diff.py`` this clone against the C binary.
"""

from __future__ import annotations

import itertools
from concurrent.futures import Future, ThreadPoolExecutor

import polars as pl

from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.gains import gain_measures, with_log2
from polars_rankeval.trec_eval.measures import Column, params_double
from polars_rankeval.trec_eval.ranking import Options, judged_subset, rank_keys, values_after

MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 1e-5


def _lround(x: pl.Expr) -> pl.Expr:
    """C's ``lround``: nearest integer, halves away from zero."""
    mag = x.abs()
    base = mag.floor()
    up = (mag - base) >= 0.5
    return (pl.when(up).then(base + 1).otherwise(base) * x.sign()).cast(pl.Int64)


def _query_stats(
    ranked: pl.DataFrame,
    qrels: pl.DataFrame,
    queries: pl.DataFrame,
    opts: Options,
    subset: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per query: num_ret, num_rel, num_rel_ret, num_nonpool, num_unjudged, num_nonrel_judged.

    ``subset``: :func:`judged_subset` of ``ranked`` (every row with rel != -1 or
    relevant); the counts are taken over it, and ``ranked`` gives only the lengths.
    """
    level = opts.level
    rel = pl.col("rel")
    if subset is None:
        subset = ranked
    ret = subset.group_by("qid").agg(
        pl.len().alias("__n"),
        ((rel >= 0) & (rel >= level)).sum().alias("num_rel_ret"),
        (rel == -1).sum().alias("num_nonpool"),
        (rel == -2).sum().alias("num_unjudged"),
        (rel >= level).sum().alias("R_all"),
    )
    lengths = ranked.group_by("qid").agg(pl.len().alias("num_ret"))
    # the rows left out of ``subset`` are documents not in the qrels (rel -1)
    ret = (
        lengths.join(ret, on="qid", how="left")
        .with_columns(pl.exclude("qid").fill_null(0))
        .with_columns(pl.col("num_nonpool") + pl.col("num_ret") - pl.col("__n"))
        .drop("__n")
    )
    judged = (
        qrels.join(queries, on="qid", how="semi")
        .group_by("qid")
        .agg(
            (rel >= max(level, 0)).sum().alias("num_rel"),
            ((rel >= 0) & (rel < level)).sum().alias("num_nonrel"),
            (pl.when(rel >= 0).then(rel).max() + 1).fill_null(0).alias("num_rel_levels"),
        )
    )
    return (
        queries.join(ret, on="qid", how="left", maintain_order="left")
        .join(judged, on="qid", how="left", maintain_order="left")
        .with_columns(pl.exclude("qid").fill_null(0).cast(pl.Int64))
    )


# the measures are computed over at most about this many ranked rows at a time (whole
# queries): their running columns are then held for one part of a large run, not all
CHUNK_ROWS = 3_000_000
# from this many ranked rows on, at least two parts: on a run of about a million lines the
# running columns of one part are what lifts the peak memory above twice trec_eval's,
# while more parts than needed cost time (parts of 0.5M rows: +3 s of CPU at 10M lines)
SPLIT_ROWS = 500_000


def evaluate_queries(
    ranked: pl.DataFrame,
    qrels: pl.DataFrame,
    n_queries: int,
    columns: list[Column],
    opts: Options,
    chunk_rows: int | None = None,
) -> pl.DataFrame:
    """Every query's values (:func:`_compute`'s wide frame), a part of the queries at a time.

    ``ranked`` is sorted by query code (0 to ``n_queries - 1``), ``qrels`` has the same
    codes. The queries are cut into consecutive parts of about ``chunk_rows`` ranked
    rows (default :data:`CHUNK_ROWS`, or half the rows from :data:`SPLIT_ROWS` ranked
    rows up to twice that); each part is computed on its own, its codes
    renumbered from 0 (the measures read a query's values by its code as a row index),
    and the parts are put together:
    every value is computed from its own query's rows alone, so the result is the same
    as for one part, while the per-rank columns of only one part are in memory.
    """
    code_type = ranked["qid"].dtype
    if chunk_rows is None:
        chunk_rows = CHUNK_ROWS
        if ranked.height >= SPLIT_ROWS:
            chunk_rows = min(CHUNK_ROWS, -(-ranked.height // 2))
    bounds = [0, n_queries]
    if ranked.height > chunk_rows:
        starts = ranked["qid"].search_sorted(
            pl.int_range(n_queries + 1, dtype=pl.Int64, eager=True).cast(code_type), side="left"
        )
        # a part ends at the first query starting at or after each multiple of chunk_rows
        cuts = starts.search_sorted(
            pl.int_range(chunk_rows, ranked.height, chunk_rows, dtype=pl.Int64, eager=True).cast(
                starts.dtype
            ),
            side="left",
        )
        bounds = sorted({0, n_queries, *(int(c) for c in cuts if 0 < c < n_queries)})
    parts = []
    for a, b in itertools.pairwise(bounds):
        if len(bounds) == 2:
            part, part_qrels = ranked, qrels
        else:
            qid = pl.col("qid")
            shift = (qid - a).cast(code_type)
            lo = int(ranked["qid"].search_sorted(a, side="left"))
            hi = int(ranked["qid"].search_sorted(b, side="left"))
            part = ranked.slice(lo, hi - lo).with_columns(shift.set_sorted())
            part_qrels = qrels.filter((qid >= a) & (qid < b)).with_columns(shift)
        queries = (
            pl.int_range(b - a, dtype=pl.Int64, eager=True).cast(code_type).alias("qid").to_frame()
        )
        subset = judged_subset(part, columns, opts.level)
        stats = _query_stats(part, part_qrels, queries, opts, subset)
        wide = _compute(part, subset, part_qrels, stats, columns, opts)
        del part, part_qrels, subset, stats
        parts.append(wide.with_columns((pl.col("qid") + a).cast(code_type)) if a else wide)
    return parts[0] if len(parts) == 1 else pl.concat(parts)


def _compute(
    ranked: pl.DataFrame,
    subset: pl.DataFrame,
    qrels: pl.DataFrame,
    stats: pl.DataFrame,
    columns: list[Column],
    opts: Options,
) -> pl.DataFrame:
    """The per-query value of every column (wide: one row per query, one column per label).

    Every running value (relevant documents so far, average precision, dcg, the
    bpref/infAP counts ...) changes only at judged or relevant documents: they are
    computed over those rows alone (``rows``), in the ranking's order, and read at a
    rank by a binary search. The documents not in the qrels (most of a long ranking)
    are read only by the per-query counts, ``unj``/``relstring`` (the head of each
    ranking) and ``rbp_resid``. The steps: the gain family started in other threads,
    the running counts, the sums read after the last rank, the values read at cutoffs
    or per query, then each column's value from them.
    """
    # a query's code is its row in ``stats`` (sorted): per-query values by gather, no join
    stats = stats.sort("qid")
    full = ranked
    i = pl.col("i")
    rows = with_log2(subset.with_columns((i + 2).alias("disc_arg")), "disc_arg", "disc")
    gains = _start_gains(rows, full, qrels, stats, columns)
    rows = _running_counts(rows, opts.level)
    names = {c.measure.name for c in columns}
    finals = _final_sums(rows, stats, _running_sums(names, opts.level))
    wide = stats.sort("qid")
    extra_columns, extra_frames = _reads(rows, full, wide, finals, columns)
    wide = wide.with_columns(
        pl.lit(0).alias("__n"), *[series.alias(lb) for lb, series in extra_columns.items()]
    )
    for extra in extra_frames:
        wide = wide.join(extra, on="qid", how="left", maintain_order="left")
    # Polars divides by a scalar as a multiplication by its reciprocal; C does not:
    # divide by a column of the constant instead (``one * k``).
    wide = wide.with_columns(
        pl.col("__n").fill_null(0), (pl.col("num_ret") * 0 + 1).cast(pl.Float64).alias("__one")
    )
    wide_exprs = _value_exprs(columns, opts)
    if "yaap" in names:
        yaap = rows.group_by("qid").agg(pl.col("ap_c").last().alias("__yaap"))
        wide = wide.join(yaap, on="qid", how="left", maintain_order="left")
    interp = [c for c in columns if c.measure.name in ("iprec_at_recall", "11pt_avg")]
    if interp:
        wide = _interpolated(rows, wide, interp)
        for column in interp:
            wide_exprs[column.label] = pl.col(column.label)
    for future, group in gains:
        labels = [c.label for c in group]
        wide = wide.join(
            future.result().select("qid", *labels), on="qid", how="left", maintain_order="left"
        )
        for column in group:
            wide_exprs[column.label] = pl.col(column.label)
    return wide.select("qid", *[expr.alias(label) for label, expr in wide_exprs.items()])


def _start_gains(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    qrels: pl.DataFrame,
    stats: pl.DataFrame,
    columns: list[Column],
) -> list[tuple[Future[pl.DataFrame], list[Column]]]:
    """The gain family's columns, started in other threads; each future with its columns.

    The gain family (G, ndcg, rbp ...) reads only ``rows``' ranks, judgments and
    discounts, ``full`` and the per-query counts: it runs beside the rest (Polars
    releases the GIL), rbp/rbp_resid apart from the others (small operations wait less).
    """
    gain_cols = [c for c in columns if c.measure.kind == "pairs" or c.measure.name == "ndcg_cut"]
    rbp_cols = [c for c in gain_cols if c.measure.name in ("rbp", "rbp_resid")]
    groups = [g for g in ([c for c in gain_cols if c not in rbp_cols], rbp_cols) if g]
    gains: list[tuple[Future[pl.DataFrame], list[Column]]] = []
    if groups:
        pool = ThreadPoolExecutor(max_workers=len(groups))
        gains = [
            (pool.submit(gain_measures, rows, full, qrels, stats, group), group) for group in groups
        ]
        pool.shutdown(wait=False)
    return gains


def _running_counts(rows: pl.DataFrame, level: int) -> pl.DataFrame:
    """``rows`` with each query's running counts and the running sum of precision.

    The counts: relevant (``Rc``), judged non-relevant, unjudged, judged relevant; the
    sum (``ap_c``): precision at each relevant rank, left to right.
    """
    rel, i = pl.col("rel"), pl.col("i")
    isrel = rel >= level
    rows = rows.with_columns(
        isrel.alias("isrel"),
        isrel.cast(pl.Int64).cum_sum().over("qid").alias("Rc"),
        ((rel >= 0) & (rel < level)).cast(pl.Int64).cum_sum().over("qid").alias("nonrel_c"),
        (rel == -2).cast(pl.Int64).cum_sum().over("qid").alias("unjudged_c"),
        ((rel >= 0) & (rel >= level)).cast(pl.Int64).cum_sum().over("qid").alias("bprel_c"),
    )
    rc = pl.col("Rc")
    rows = rows.with_columns(
        pl.when("isrel").then(rc / (i + 1)).otherwise(0.0).cum_sum().over("qid").alias("ap_c"),
    )
    return rows


def _running_sums(names: set[str], level: int) -> dict[str, pl.Expr]:
    """The terms of the sums read after a query's last rank (binG, bpref, infAP), by name.

    Each is summed left to right over a query's ranks, as C sums them.
    """
    rel, i = pl.col("rel"), pl.col("i")
    n_rel = pl.col("num_rel")
    judged_rel = (rel >= 0) & (rel >= level)
    running: dict[str, pl.Expr] = {}
    if names & {"binG"}:
        term = pl.when("isrel").then(1.0 / pl.col("bing_log")).otherwise(0.0)
        running["bing_c"] = term
    if names & {"bpref", "gm_bpref"}:
        nonrel_b = pl.col("nonrel_c")
        denom = pl.min_horizontal(pl.col("num_nonrel"), n_rel).cast(pl.Float64)
        running["bpref_c"] = (
            pl.when(judged_rel)
            .then(
                pl.when(nonrel_b > 0)
                .then(1.0 - pl.min_horizontal(nonrel_b, n_rel).cast(pl.Float64) / denom)
                .otherwise(1.0)
            )
            .otherwise(0.0)
        )
    if "infAP" in names:
        fj = i.cast(pl.Float64)
        rs1 = pl.col("bprel_c") - 1
        nonrel_b, unj_b = pl.col("nonrel_c"), pl.col("unjudged_c")
        inner = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
            (rs1 + nonrel_b + unj_b).cast(pl.Float64) / fj
        ) * (
            (rs1.cast(pl.Float64) + INFAP_EPSILON)
            / ((rs1 + nonrel_b).cast(pl.Float64) + 2 * INFAP_EPSILON)
        )
        running["infap_c"] = (
            pl.when(judged_rel).then(pl.when(i == 0).then(1.0).otherwise(inner)).otherwise(0.0)
        )
    return running


def _final_sums(
    rows: pl.DataFrame, stats: pl.DataFrame, running: dict[str, pl.Expr]
) -> pl.DataFrame:
    """The sums after each query's last rank, one column per running sum, in code order.

    0.0 for a query without relevant rows, null for one without rows.
    """
    i, rc = pl.col("i"), pl.col("Rc")
    finals = pl.DataFrame()
    if running:
        # These sums are read only after the last rank, and their terms are 0.0 except on
        # relevant rows (adding 0.0 leaves a sum unchanged): sum over those rows alone,
        # left to right within each query.
        per_row = ("num_rel", "num_nonrel")
        relevant = rows.filter("isrel")
        relevant = relevant.with_columns(
            *[stats[c].gather(relevant["qid"]).alias(c) for c in per_row],
            (3 + i - rc).alias("bing_arg"),
        )
        if "bing_c" in running:
            relevant = with_log2(relevant, "bing_arg", "bing_log")
        totals = relevant.group_by("qid").agg(
            [expr.cum_sum().last().alias(name) for name, expr in running.items()]
        )
        finals = (
            stats.select("qid", "num_ret")
            .join(totals, on="qid", how="left", maintain_order="left")
            .select(
                pl.when(pl.col("num_ret") >= 1).then(pl.col(name).fill_null(0.0)).alias(name)
                for name in running
            )
        )
    return finals


def _reads(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    wide: pl.DataFrame,
    finals: pl.DataFrame,
    columns: list[Column],
) -> tuple[dict[str, pl.Series], list[pl.DataFrame]]:
    """What each column reads of the rankings, per query.

    Series by label (values at cutoffs, sums after the last rank) and frames to join
    (``recip_rank``, ``relstring``); ``wide``: the per-query counts sorted by code.
    """
    rel, i = pl.col("rel"), pl.col("i")
    rc = pl.col("Rc")
    n_ret, n_rel = pl.col("num_ret"), pl.col("num_rel")
    extra_frames: list[pl.DataFrame] = []
    # rows are sorted by (query, rank) and hold num_ret rows per query: the value of a
    # running column after rank k of a query is at row start + min(k, num_ret) - 1.
    row_keys = rank_keys(rows)
    unj_cuts = [c.param for c in columns if c.measure.name == "unj"]
    if unj_cuts:
        # unj reads the head of each ranking only: every row up to the largest cutoff
        head = full.filter(i < max(unj_cuts)).with_columns(
            (rel < 0).cast(pl.Int64).cum_sum().over("qid").alias("unj_c")
        )
        head_keys = rank_keys(head)

    # (source, cutoff) -> the cutoff and the labels reading it: resolved after the loop,
    # each source's cutoffs in one binary search
    wanted: dict[tuple[str, str], tuple[pl.Expr, list[str]]] = {}

    def at(label: str, source: str, k: pl.Expr) -> None:
        wanted.setdefault((source, str(k)), (k, []))[1].append(label)

    extra_columns: dict[str, pl.Series] = {}

    def total(label: str, source: str) -> None:
        extra_columns[label] = finals[source]

    for column in columns:
        m, label, k = column.measure, column.label, column.param
        name = m.name
        kl = pl.lit(k)
        if name in ("map", "gm_map"):
            at(label, "ap_c", n_ret)
        elif name == "Rprec":
            at(label, "Rc", pl.min_horizontal(n_ret, n_rel))
        elif name == "recip_rank":
            first = (
                rows.select("qid", "i", "isrel", "Rc")
                .filter(pl.col("isrel") & (rc == 1))
                .select("qid", (1.0 / (i + 1)).alias(label))
            )
            extra_frames.append(first)
        elif name in ("P", "recall", "relative_P", "success"):
            at(label, "Rc", kl)
        elif name == "map_cut":
            at(label, "ap_c", kl)
        elif name == "unj":
            at(label, "unj_c", kl)
        elif name == "binG":
            total(label, "bing_c")
        elif name in ("bpref", "gm_bpref"):
            total(label, "bpref_c")
        elif name == "infAP":
            total(label, "infap_c")
        elif name == "relstring":
            length = max(int(params_double(column, m)[0]), 0)
            char = (
                pl.when(rel > 9).then(pl.lit(">"))
                .when(rel >= 0).then(rel.cast(pl.String))
                .when(rel == -1).then(pl.lit("-"))
                .when(rel == -2).then(pl.lit("."))
                .otherwise(pl.lit("<"))
            )  # fmt: skip
            strings = (
                full.select("qid", "i", "rel")
                .filter(i < length)
                .group_by("qid")
                .agg(char.str.join("").alias(label))
            )
            extra_frames.append(strings)
        elif name == "Rprec_mult":
            cut = (kl * n_rel.cast(pl.Float64) + 0.9).cast(pl.Int64)
            extra_columns[label + "\x00c"] = wide.select(cut.alias("c"))["c"]
            at(label, "Rc", cut)
    if wanted:
        cutoffs = wide.select(
            pl.min_horizontal(k, n_ret).alias(f"k{j}") for j, (k, _) in enumerate(wanted.values())
        )
        by_source: dict[str, list[int]] = {}
        for j, (source, _) in enumerate(wanted):
            by_source.setdefault(source, []).append(j)
        entries = list(wanted.values())
        for source, js in by_source.items():
            frame, keys = (head, head_keys) if source == "unj_c" else (rows, row_keys)
            ks = [cutoffs[f"k{j}"] for j in js]
            found = values_after(frame, keys, source, wide["qid"], ks)
            for j, values in zip(js, found, strict=True):
                for label in entries[j][1]:
                    extra_columns[label] = values
    return extra_columns, extra_frames


def _value_exprs(columns: list[Column], opts: Options) -> dict[str, pl.Expr]:
    """Each column's value per query, by label, from what :func:`_reads` put in ``wide``."""
    n_ret, n_rel = pl.col("num_ret"), pl.col("num_rel")
    n_rr = pl.col("num_rel_ret")
    one = pl.col("__one")
    wide_exprs: dict[str, pl.Expr] = {}

    def f(x: pl.Expr | str) -> pl.Expr:
        return (pl.col(x) if isinstance(x, str) else x).cast(pl.Float64)

    nrel_f, nret_f, nrr_f = f(n_rel), f(n_ret), f(n_rr)
    for column in columns:
        m, label, k = column.measure, column.label, column.param
        name = m.name
        got = pl.col(label)
        if name == "num_q":
            wide_exprs[label] = pl.lit(1.0)
        elif name == "num_ret":
            wide_exprs[label] = nret_f
        elif name == "num_rel":
            wide_exprs[label] = nrel_f
        elif name == "num_rel_ret":
            wide_exprs[label] = nrr_f
        elif name == "map":
            wide_exprs[label] = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(0.0)
        elif name == "gm_map":
            ap = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(f(got).fill_null(0.0))
            wide_exprs[label] = (
                pl.when((ap > MIN_GEO_MEAN) & ~ap.is_nan()).then(ap).otherwise(MIN_GEO_MEAN).log()
            )
        elif name == "Rprec":
            wide_exprs[label] = (
                pl.when(pl.min_horizontal(n_ret, n_rel) > 0).then(f(got) / nrel_f).otherwise(0.0)
            )
        elif name == "recip_rank":
            wide_exprs[label] = f(got).fill_null(0.0)
        elif name == "P":
            wide_exprs[label] = f(got).fill_null(0.0) / (one * k)
        elif name == "recall":
            wide_exprs[label] = (
                pl.when(n_rel > 0).then(f(got).fill_null(0.0) / nrel_f).otherwise(0.0)
            )
        elif name == "relative_P":
            wide_exprs[label] = (
                pl.when(n_rel > 0)
                .then(f(got).fill_null(0.0) / pl.min_horizontal(pl.lit(k), nrel_f))
                .otherwise(0.0)
            )
        elif name == "success":
            wide_exprs[label] = pl.when(f(got).fill_null(0.0) > 0).then(1.0).otherwise(0.0)
        elif name == "map_cut":
            wide_exprs[label] = (
                pl.when(n_rel > 0).then(f(got).fill_null(0.0) / nrel_f).otherwise(0.0)
            )
        elif name == "unj":
            wide_exprs[label] = f(got).fill_null(0.0) / (one * k)
        elif name == "binG":
            wide_exprs[label] = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(0.0)
        elif name in ("bpref", "gm_bpref"):
            value = f(got).fill_null(0.0)
            value = pl.when(n_rel > 0).then(value / nrel_f).otherwise(value)
            if name == "gm_bpref":
                value = (
                    pl.when((value > MIN_GEO_MEAN) & ~value.is_nan())
                    .then(value)
                    .otherwise(MIN_GEO_MEAN)
                    .log()
                )
            wide_exprs[label] = value
        elif name == "infAP":
            value = f(got).fill_null(0.0)
            wide_exprs[label] = pl.when(n_rel > 0).then(value / nrel_f).otherwise(value)
        elif name == "Rprec_mult":
            cut = pl.col(label + "\x00c").fill_null((k * nrel_f + 0.9).cast(pl.Int64))
            # trec_eval's counter at rank cut: R(cut) - (R_all - num_rel_ret), see above
            counter = f(got).fill_null(0.0) - f(pl.col("R_all") - n_rr)
            wide_exprs[label] = (
                pl.when(cut > n_ret)
                .then(nrr_f / f(cut))
                .when((cut > 0) & (counter > 0))
                .then(counter / f(cut))
                .otherwise(0.0)
            )
        elif name == "utility":
            params = params_double(column, m)
            if len(params) != 4:
                msg = (
                    f"cannot calculate measure 'utility': it takes 4 parameters, got {len(params)}"
                )
                raise TrecEvalError(msg, 4)
            a, b, c, d = params
            wide_exprs[label] = (
                a * nrr_f
                + b * f(n_ret - n_rr)
                + c * f(n_rel - n_rr)
                + d * f(opts.num_docs + n_rr - n_ret - n_rel)
            )
        elif name == "set_P":
            wide_exprs[label] = pl.when(n_ret > 0).then(nrr_f / nret_f).otherwise(0.0)
        elif name == "set_relative_P":
            wide_exprs[label] = (
                pl.when((n_ret > 0) & (n_rel > 0))
                .then(nrr_f / f(pl.min_horizontal(n_ret, n_rel)))
                .otherwise(0.0)
            )
        elif name == "set_recall":
            wide_exprs[label] = pl.when(n_rel > 0).then(nrr_f / nrel_f).otherwise(0.0)
        elif name == "set_map":
            wide_exprs[label] = (
                pl.when((n_ret > 0) & (n_rel > 0))
                .then((nrr_f * nrr_f) / (nret_f * nrel_f))
                .otherwise(0.0)
            )
        elif name == "set_F":
            x = params_double(column, m)[0]
            p_, r_ = nrr_f / nret_f, nrr_f / nrel_f
            wide_exprs[label] = (
                pl.when(n_rr > 0).then((x + 1.0) * p_ * r_ / (x * p_ + r_)).otherwise(0.0)
            )
        elif name == "num_nonrel_judged_ret":
            wide_exprs[label] = f(n_ret - pl.col("num_nonpool") - pl.col("num_unjudged") - n_rr)
        elif name == "yaap":
            s = pl.col("__yaap").fill_null(0.0)
            wide_exprs[label] = ((1.0 + s) / ((1.0 + nrel_f) - s)).log()
        elif name == "relstring":
            wide_exprs[label] = pl.col(label).fill_null("")
    return wide_exprs


def _interpolated(rows: pl.DataFrame, wide: pl.DataFrame, columns: list[Column]) -> pl.DataFrame:
    """iprec_at_recall and 11pt_avg: interpolated precision at recall levels."""
    # trec_eval walks up from the last rank with a counter that starts at num_rel_ret
    # (judged relevant) and drops at every document with rel >= level; below -l 0 the
    # two differ by D = the unjudged documents counted as relevant.
    shift = pl.col("R_all") - pl.col("num_rel_ret")
    wide = wide.sort("qid")  # a query's code is its row
    per_query = wide.select(shift.alias("__shift"))["__shift"]
    prec = (pl.col("Rc") - pl.col("__shift")).cast(pl.Float64) / (pl.col("i") + 1).cast(pl.Float64)
    # the relevant rows in (query, rank) order; a query's k-th one is at rel_start + k - 1
    smax = (
        rows.select("qid", "Rc", "i", "isrel", per_query.gather(rows["qid"]).alias("__shift"))
        .select(prec.cum_max(reverse=True).over("qid").alias("smax"), pl.col("isrel"))
        .filter("isrel")["smax"]
    )
    # one lazy plan for every level of every column (one collect; ``smax`` a literal)
    wide_lf = wide.lazy().with_columns(
        (pl.col("R_all").cum_sum() - pl.col("R_all")).alias("__rstart")
    )
    table = pl.lit(smax)
    n_rel = pl.col("num_rel").cast(pl.Float64)
    r_all = pl.col("num_rel_ret")
    final = pl.col("num_rel_ret").cast(pl.Float64) / pl.col("num_ret").cast(pl.Float64)
    for column in columns:
        levels = (
            [column.param]
            if column.measure.name == "iprec_at_recall"
            else params_double(column, column.measure)
        )
        # trec_eval's pass over the levels from the last one: levels above num_rel_ret
        # at the end are skipped (0), each next level is reached when the counter falls
        # to it; one it cannot reach (above the last one reached, or <= 0) stops the pass
        # and it and all before it take the final interpolated precision. For increasing
        # levels this is each level's own value.
        wide_lf = wide_lf.with_columns(
            pl.col("num_rel_ret").alias("__limit"),
            pl.lit(True).alias("__skip"),
            pl.lit(False).alias("__blocked"),
        )
        one_index = pl.when(r_all >= 1).then(pl.col("__rstart") + 1 + shift - 1).cast(pl.Int64)
        wide_lf = wide_lf.with_columns(
            pl.when(r_all >= 1).then(table.gather(one_index)).otherwise(final).alias("__final")
        )
        parts: list[str] = []
        for j in reversed(range(len(levels))):
            key = f"__lev{j}"
            k = _lround(pl.lit(levels[j]) * n_rel)
            zero = pl.col("__skip") & (k > r_all)
            matched = ~zero & ~pl.col("__blocked") & (k >= 1) & (k <= pl.col("__limit"))
            index = pl.when(matched).then(pl.col("__rstart") + k + shift - 1).cast(pl.Int64)
            wide_lf = wide_lf.with_columns(table.gather(index).alias(key))
            wide_lf = wide_lf.with_columns(
                pl.when(zero).then(0.0).when(matched).then(pl.col(key)).otherwise(pl.col("__final"))
                .alias(key),
                (pl.col("__skip") & zero).alias("__skip"),
                pl.when(matched).then(k).otherwise(pl.col("__limit")).alias("__limit"),
                (pl.col("__blocked") | (~zero & ~matched)).alias("__blocked"),
            )  # fmt: skip
            parts.insert(0, key)
        wide_lf = wide_lf.drop("__limit", "__skip", "__blocked", "__final")
        if column.measure.name == "iprec_at_recall":
            wide_lf = wide_lf.rename({parts[0]: column.label})
        else:
            total: pl.Expr = pl.lit(0.0)
            for key in reversed(parts):
                added = pl.when(pl.col(key).is_null()).then(0.0).otherwise(pl.col(key))
                total = total + added
            # trec_eval adds only the levels reached; a level above R_all adds nothing.
            wide_lf = wide_lf.with_columns(
                (total / (pl.col("__one") * float(len(parts)))).alias(column.label)
            ).drop(parts)
    return wide_lf.drop("__rstart").collect()

"""trec_eval's gain measures: ``ndcg``, ``ndcg_cut``, ``ndcg_rel``, ``Rndcg``, ``G``, ``rbp``.

Gains come from the ``-m ndcg.1=0,2=3`` pairs (a level missing from the map keeps its
own value as gain, trec_eval's rule). Discounts are read from one cached table of
``log2`` of the integers, the values C's libm gives, and sums run in rank order, so the
printed digits are trec_eval's. The registered metrics of the same names
(:mod:`polars_rankeval.metrics`) compute these measures for every engine; this module is
the clone's own copy, which follows the C code's summation order and its gain rules
where a printed digit depends on them.
"""

from __future__ import annotations

import math

import polars as pl

from polars_rankeval.io.cnumbers import atol
from polars_rankeval.trec_eval.measures import Column, param_pairs, valid_int
from polars_rankeval.trec_eval.ranking import rank_keys, value_after, values_after

_LOG2_CACHE: list[pl.Series] = []


def _log2_int(n_max: int) -> pl.Series:
    """``log2(k)`` for k = 0..n_max exactly as C's libm computes it (``math.log2``)."""
    have = _LOG2_CACHE[0] if _LOG2_CACHE else pl.Series(dtype=pl.Float64)
    if have.len() <= n_max:
        size = max(n_max + 1, 2 * have.len(), 1024)
        have = pl.Series([-math.inf, *map(math.log2, range(1, size))], dtype=pl.Float64)
        _LOG2_CACHE[:] = [have]
    return have


def with_log2(frame: pl.DataFrame, source: str, target: str) -> pl.DataFrame:
    """Add ``target = log2(source)`` computed as C's ``log2`` (exact for integer arguments)."""
    col = frame[source]
    if col.len() == 0:
        return frame.with_columns(pl.lit(None, pl.Float64).alias(target))
    if col.dtype.is_integer():
        # an integer column: one pass for its range, then a lookup in the table
        low, big = col.min(), col.max()
        if isinstance(low, int) and isinstance(big, int) and low >= 0 and big < 50_000_000:
            table = _log2_int(big + 1)
            return frame.with_columns(table.gather(col).alias(target))
    finite = col.filter(col.is_finite())
    integral = finite.len() == 0 or bool((finite == finite.floor()).all())
    big = float(finite.max()) if finite.len() else 0.0  # type: ignore[arg-type]
    if integral and (finite.min() or 0) >= 0 and big < 50_000_000:  # type: ignore[operator]
        table = _log2_int(int(big) + 1)
        return frame.with_columns(
            table.gather(col.fill_nan(0).clip(0).cast(pl.Int64)).alias(target)
        )
    uniques = col.unique()
    values = pl.Series(list(map(math.log2, uniques.to_list())), dtype=pl.Float64)
    mapping = pl.DataFrame({source: uniques, target: values})
    return frame.join(mapping, on=source, how="left", nulls_equal=True, maintain_order="left")


def _gain_expr(pairs: list[tuple[str, float]]) -> pl.Expr:
    """trec_eval's get_gain: the gain map's value for a level, else the level (0 if negative)."""
    gains = {atol(name): value for name, value in reversed(pairs) if valid_int(name)}
    rel = pl.col("rel")
    default = pl.when(rel >= 0).then(rel.cast(pl.Float64)).otherwise(0.0)
    if not gains:
        return default
    # (the judgments may be Int32, a level of the map beyond it: compared as Int64)
    return rel.cast(pl.Int64).replace_strict(
        list(gains), list(gains.values()), default=default, return_dtype=pl.Float64
    )


def gain_measures(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    qrels: pl.DataFrame,
    wide: pl.DataFrame,
    columns: list[Column],
) -> pl.DataFrame:
    """G, dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg, rbp, rbp_resid and ndcg_cut.

    ``rows`` holds every rank with a non-zero gain (see :func:`_compute`), ``full`` every
    rank (read by rbp_resid and, when its sums are not exact integers, by G).
    """
    judged = qrels.filter(pl.col("rel") >= 0)  # (``qrels`` holds evaluated queries only)

    cuts = [c for c in columns if c.measure.name == "ndcg_cut"]
    cache: dict[str | None, tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]] = {}
    if cuts:
        # ndcg_cut's gains are the relevance levels: the frames of a measure without a
        # gain map (``None``), shared with dcg / ndcg when they have none either
        cache[None] = _gain_frames(rows, judged, wide, [])
        wide = _ndcg_cut(*cache[None][:2], wide, cuts)
    rbp_bases: dict[str, pl.DataFrame] = {}
    for column in columns:
        name = column.measure.name
        if name == "ndcg_cut":
            continue
        pairs = param_pairs(column.measure, column.raw)
        if name in ("rbp", "rbp_resid"):
            wide = _rbp(rows, full, wide, column, pairs, rbp_bases)
            continue
        if column.raw in cache:
            res, ideal, base = cache[column.raw]
        else:
            res, ideal, base = _gain_frames(rows, judged, wide, pairs)
            cache[column.raw] = (res, ideal, base)
        if name == "dcg":
            value = base.select("qid", pl.col("dcg").alias(column.label))
        elif name == "ideal_dcg":
            value = base.select("qid", pl.col("idcg").alias(column.label))
        elif name == "ndcg":
            value = base.select(
                "qid",
                pl.when(pl.col("idcg") > 0)
                .then(pl.col("dcg") / pl.col("idcg"))
                .otherwise(0.0)
                .alias(column.label),
            )
        elif name == "ndcg_rel":
            value = _ndcg_rel(res, ideal, base, column.label)
        elif name == "Rndcg":
            value = _rndcg(res, ideal, base, column.label)
        else:  # G
            value = _g(res, ideal, base, column.label, full, pairs)
        wide = wide.join(value, on="qid", how="left", maintain_order="left")
    return wide


def _gain_frames(
    rows: pl.DataFrame, judged: pl.DataFrame, wide: pl.DataFrame, pairs: list[tuple[str, float]]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The retrieved gains with running DCG, the ideal ranking with running ideal DCG, totals."""
    gain = _gain_expr(pairs)
    res = rows.select("qid", "i", "disc", gain.alias("g"))
    res = res.with_columns(
        pl.when(pl.col("g") != 0).then(pl.col("g") / pl.col("disc")).otherwise(0.0)
        .cum_sum().over("qid").alias("dcg_c")
    )  # fmt: skip
    ideal = (
        judged.with_columns(gain.alias("g"))
        .filter(pl.col("g") > 0)
        .sort(["qid", "g"], descending=[False, True])
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over("qid").alias("p"))
        .with_columns((pl.col("p") + 2).alias("disc_arg"))
    )
    ideal = with_log2(ideal, "disc_arg", "disc")
    ideal = ideal.with_columns((pl.col("g") / pl.col("disc")).cum_sum().over("qid").alias("idcg_c"))
    full = (
        res.group_by("qid")
        .agg(pl.col("dcg_c").last().alias("dcg"), (pl.col("g") > 0).sum().alias("npos"))
        .join(
            ideal.group_by("qid").agg(pl.col("idcg_c").last().alias("idcg"), pl.len().alias("L")),
            on="qid",
            how="full",
            coalesce=True,
        )
    )
    base = wide.select("qid", "num_ret", "num_rel").join(
        full, on="qid", how="left", maintain_order="left"
    )
    base = base.with_columns(pl.col("dcg", "idcg").fill_null(0.0), pl.col("L", "npos").fill_null(0))
    return res, ideal, base


def _ndcg_rel(
    res: pl.DataFrame, ideal: pl.DataFrame, base: pl.DataFrame, label: str
) -> pl.DataFrame:
    # ideal dcg after min(i + 1, L) ideal ranks, for each retrieved rank i with a positive
    # gain: ``ideal`` holds L positions per query in code order, read by gather
    base = base.sort("qid")
    length = base["L"]
    istart = length.cum_sum() - length
    pos = res.filter(pl.col("g") > 0).select("qid", "i", "dcg_c")
    codes = pos["qid"]
    index = pl.DataFrame(
        {"s": istart.gather(codes), "L": length.gather(codes), "i": pos["i"]}
    ).select(
        pl.when(pl.col("L") >= 1)
        .then(pl.col("s") + pl.min_horizontal(pl.col("i") + 1, pl.col("L")) - 1)
        .alias("ix")
    )["ix"]
    pos = pos.with_columns(ideal["idcg_c"].gather(index).fill_null(0.0).alias("idcg_c"))
    sums = pos.group_by("qid").agg((pl.col("dcg_c") / pl.col("idcg_c")).cum_sum().last().alias("s"))
    out = base.join(sums, on="qid", how="left", maintain_order="left").with_columns(
        pl.col("s").fill_null(0.0)
    )
    s = pl.col("s") + (pl.col("L") - pl.col("npos")).cast(pl.Float64) * pl.col("dcg") / pl.col(
        "idcg"
    )
    return out.select(
        "qid",
        pl.when((s > 0) & ~s.is_nan())
        .then(s / pl.col("L").cast(pl.Float64))
        .otherwise(0.0)
        .alias(label),
    )


def _rndcg(res: pl.DataFrame, ideal: pl.DataFrame, base: pl.DataFrame, label: str) -> pl.DataFrame:
    # Boundaries p in 1..L where the ideal gain changes (p = L: the ideal runs out).
    bounds = (
        ideal.select("qid", "p", "g", "idcg_c")
        .with_columns(
            pl.col("g").shift(-1).over("qid").alias("g_next"),
            (pl.col("p") + 1).alias("b"),
        )
        .filter(pl.col("g_next").is_null() | (pl.col("g_next") != pl.col("g")))
    )
    # dcg after min(b, num_ret) ranks
    base = base.sort("qid")
    kk = pl.DataFrame({"n": base["num_ret"].gather(bounds["qid"]), "b": bounds["b"]}).select(
        pl.min_horizontal(pl.col("b"), pl.col("n"))
    )["b"]
    after = value_after(res, rank_keys(res), "dcg_c", bounds["qid"], kk)
    bounds = bounds.with_columns(after.fill_null(0.0).alias("dcg_c"))
    sums = (
        bounds.sort("qid", "b")
        .group_by("qid")
        .agg((pl.col("dcg_c") / pl.col("idcg_c")).cum_sum().last().alias("s"), pl.len().alias("nb"))
    )
    out = base.join(sums, on="qid", how="left", maintain_order="left").with_columns(
        pl.col("s").fill_null(0.0), pl.col("nb").fill_null(0)
    )
    final = (pl.col("L") >= 1) & (pl.col("L") + 1 < pl.col("num_ret"))
    s = pl.when(final).then(pl.col("s") + pl.col("dcg") / pl.col("idcg")).otherwise(pl.col("s"))
    nb = pl.col("nb") + final.cast(pl.Int64)
    value = pl.when(pl.col("num_rel") == 0).then(0.0).otherwise(s / nb.cast(pl.Float64))
    return out.select("qid", value.alias(label))


def _g(
    res: pl.DataFrame,
    ideal: pl.DataFrame,
    base: pl.DataFrame,
    label: str,
    full: pl.DataFrame,
    pairs: list[tuple[str, float]],
) -> pl.DataFrame:
    # trec_eval's G: at each retrieved rank, cost += max(ideal gain there, 1) (1 past the
    # ideal list's end), got += gain; the sum of gain / log2(2 + cost - got) over ranks
    # with a gain. ``res`` holds the ranks with a non-zero gain (and others).
    base = base.sort("qid")
    length = base["L"]
    istart = length.cum_sum() - length
    step = pl.when(pl.col("g") >= 1.0).then(pl.col("g")).otherwise(1.0)
    ideal_cost = ideal.select(step.cum_sum().over("qid").alias("C"))["C"]
    gains = ideal["g"]
    exact = bool(
        ideal_cost.len() == 0
        or (
            ((gains < 1.0) | (gains == gains.floor())).all()
            and float(ideal_cost.max()) + float(full["i"].max() or 0) < 2.0**52  # type: ignore[arg-type]
        )
    )
    if exact:
        # the running cost is a sum of integers (exact in doubles): after rank i it is
        # C[min(i, L - 1)] + max(0, i - L + 1), with C the ideal list's running cost
        rows = res.filter(pl.col("g") != 0).select("qid", "i", "g")
        codes = rows["qid"]
        n = length.gather(codes)
        frame = pl.DataFrame({"s": istart.gather(codes), "L": n, "i": rows["i"]})
        index = frame.select(
            pl.when(pl.col("L") >= 1)
            .then(pl.col("s") + pl.min_horizontal(pl.col("i"), pl.col("L") - 1))
            .alias("ix")
        )["ix"]
        at_end = ideal_cost.gather(index)
        cost = pl.DataFrame({"c": at_end, "L": n, "i": rows["i"]}).select(
            pl.when(pl.col("L") == 0)
            .then((pl.col("i") + 1).cast(pl.Float64))
            .when(pl.col("i") < pl.col("L"))
            .then(pl.col("c"))
            .otherwise(pl.col("c") + (pl.col("i") - pl.col("L") + 1).cast(pl.Float64))
            .alias("c")
        )["c"]
        rows = rows.with_columns(
            cost.alias("cost_c"), pl.col("g").cum_sum().over("qid").alias("got_c")
        )
    else:
        # non-integer ideal gains: C's left-to-right sum over every rank
        rows = full.select("qid", "i", _gain_expr(pairs).alias("g"))
        codes = rows["qid"]
        index = pl.DataFrame(
            {"s": istart.gather(codes), "L": length.gather(codes), "i": rows["i"]}
        ).select(pl.when(pl.col("i") < pl.col("L")).then(pl.col("s") + pl.col("i")).alias("ix"))[
            "ix"
        ]
        rows = rows.with_columns(ideal["g"].gather(index).alias("ig")).with_columns(
            pl.when(pl.col("ig") >= 1.0).then(pl.col("ig")).otherwise(1.0).alias("cost")
        )
        rows = rows.with_columns(
            pl.col("cost").cum_sum().over("qid").alias("cost_c"),
            pl.col("g").cum_sum().over("qid").alias("got_c"),
        )
    rows = rows.with_columns(((2 + pl.col("cost_c")) - pl.col("got_c")).alias("g_arg"))
    rows = with_log2(rows, "g_arg", "g_log")
    sums = rows.group_by("qid").agg(
        pl.when(pl.col("g") != 0).then(pl.col("g") / pl.col("g_log")).otherwise(0.0)
        .cum_sum().last().alias("rg")
    )  # fmt: skip
    ideal_sum = ideal.group_by("qid").agg(pl.col("g").cum_sum().last().alias("si"))
    out = base.join(sums, on="qid", how="left", maintain_order="left").join(
        ideal_sum, on="qid", how="left", maintain_order="left"
    )
    value = pl.when(pl.col("si") > 0).then(pl.col("rg") / pl.col("si")).otherwise(0.0)
    return out.select("qid", value.fill_null(0.0).alias(label))


def _rbp(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    wide: pl.DataFrame,
    column: Column,
    pairs: list[tuple[str, float]],
    bases: dict[str, pl.DataFrame],
) -> pl.DataFrame:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    rel = pl.col("rel")
    if repr(p) not in bases:  # rbp and rbp_resid with the same p share the products
        # p^i at rank i is the same running product (1, p, p*p, ... left to right, as
        # C's loop multiplies) for every query: one table up to the longest ranking,
        # read by rank.
        n_max = int(wide["num_ret"].max() or 0) + 1  # type: ignore[arg-type]
        products = pl.select(
            pl.when(pl.int_range(n_max + 1) == 0).then(1.0).otherwise(pl.lit(p, pl.Float64))
            .cum_prod().alias("t")
        )["t"]  # fmt: skip
        bases[repr(p)] = rows.select("qid", "i", "rel", products.gather(rows["i"]).alias("cur_p"))
        bases[repr(p) + "t"] = products.to_frame()
    base = bases[repr(p)]
    if column.measure.name == "rbp_resid":
        # a sum over the unjudged ranks (rel < 0: not in ``rows``), read from ``full``
        powers = bases[repr(p) + "t"]["t"]
        unjudged = full.select("qid", "i").filter(full["rel"] < 0)
        unjudged = unjudged.with_columns(powers.gather(unjudged["i"]).alias("cur_p"))
        agg = unjudged.group_by("qid").agg(pl.col("cur_p").cum_sum().last().alias("s"))
        # the product after the last rank: p^num_ret, one more step of the running product
        out = (
            wide.select("qid", "num_ret", "num_nonpool", "num_unjudged")
            .join(agg, on="qid", how="left", maintain_order="left")
            .with_columns(
                powers.gather(wide["num_ret"]).alias("pN"),
                (pl.col("num_nonpool") + pl.col("num_unjudged")).alias("nu"),
            )
        )
        resid = pl.when(pl.col("nu") > 0).then(pl.col("pN") + (1 - p) * pl.col("s")).otherwise(0.0)
        return wide.join(
            out.select("qid", resid.fill_null(0.0).alias(column.label)), on="qid", how="left"
        )
    # gains with trec_eval's rescaling into [0, 1] (min and max over the gain list)
    gains = {atol(n): v for n, v in reversed(pairs) if valid_int(n)}
    levels = wide.select("qid", "num_rel_levels")
    table = []
    for nrl in sorted(set(levels["num_rel_levels"].to_list())):
        values = list(gains.values()) + [float(lv) for lv in range(nrl) if lv not in gains]
        lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
        table.append((nrl, lo, hi))
    scale = pl.DataFrame(
        table, schema={"num_rel_levels": pl.Int64, "lo": pl.Float64, "hi": pl.Float64}, orient="row"
    )
    raw = _gain_expr(pairs)
    listed = rel.is_in(list(gains)) | ((rel >= 0) & (rel < pl.col("num_rel_levels")))
    g = (
        pl.when(~listed)
        .then(0.0)
        .when((pl.col("lo") < 0) | (pl.col("hi") > 1))
        .then((raw - pl.col("lo")) / (pl.col("hi") - pl.col("lo")))
        .otherwise(raw)
    )
    # per query (a query's code is its row once sorted), then onto the rows by gather
    per_query = (
        levels.sort("qid")
        .join(scale, on="num_rel_levels", how="left", maintain_order="left")
        .select("num_rel_levels", "lo", "hi")
    )
    codes = base["qid"]
    base = base.with_columns([per_query[c].gather(codes) for c in per_query.columns])
    agg = base.with_columns(g.alias("gg")).group_by("qid").agg(
        pl.when(pl.col("gg") != 0).then(pl.col("gg") * pl.col("cur_p")).otherwise(0.0)
        .cum_sum().last().alias("s")
    )  # fmt: skip
    out = wide.select("qid").join(agg, on="qid", how="left", maintain_order="left")
    return wide.join(
        out.select("qid", ((1.0 - p) * pl.col("s").fill_null(0.0)).alias(column.label)),
        on="qid",
        how="left",
    )


def _ndcg_cut(
    res: pl.DataFrame, ideal: pl.DataFrame, wide: pl.DataFrame, columns: list[Column]
) -> pl.DataFrame:
    """ndcg_cut at every requested cutoff: gains are the relevance levels, no gain map.

    ``res`` and ``ideal`` are :func:`_gain_frames` without a gain map: the running dcg
    over the ranks with a gain and the running ideal dcg by ideal position ``p``.
    """
    qid = wide["qid"]
    res_keys = rank_keys(res)
    ideal_keys = ideal["qid"].cast(pl.UInt64) * 2**32 + ideal["p"].cast(pl.UInt64)
    ks = [pl.Series([int(column.param)] * qid.len(), dtype=pl.Int64) for column in columns]
    dcgs = values_after(res, res_keys, "dcg_c", qid, ks)
    ideals = values_after(ideal, ideal_keys, "idcg_c", qid, ks)
    values = pl.DataFrame(
        {f"d{j}": d.fill_null(0.0) for j, d in enumerate(dcgs)}
        | {f"i{j}": v.fill_null(0.0) for j, v in enumerate(ideals)}
    ).select(
        pl.when(pl.col(f"i{j}") > 0)
        .then(pl.col(f"d{j}") / pl.col(f"i{j}"))
        .otherwise(pl.col(f"d{j}"))
        .alias(column.label)
        for j, column in enumerate(columns)
    )
    return wide.with_columns(values)

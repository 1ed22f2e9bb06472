"""Each query's ranked list in trec_eval's order (``form_res_rels.c``).

Score descending, then docno descending by byte order (trec_eval's own tie order, not
the registered metrics' tie policies: the order of tied documents changes trec_eval's
numbers, so the clone keeps it); ``-M`` cuts the list, then ``-J``
drops unjudged documents; relevance is -1 for a document not in the qrels. Docnos are
read as integer codes (Enum casts, exact) and a run already in that order per query is
not sorted again. Also the readers of running values at cutoffs (``value_after``,
``values_after``) that the measures share, and :data:`BOGUS_DOCNO`, the placeholder
document trec_eval ranks for a qrels query missing from the run under ``-c``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import cast

import polars as pl

from polars_rankeval.io.cnumbers import atol
from polars_rankeval.io.trec.bytewise import categories_of
from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.measures import Column, param_pairs, valid_int

BOGUS_DOCNO = "ceci_nest_pas_un_docno"


@dataclass(frozen=True)
class Options:
    """The options that shape the rankings: ``-l``, ``-M``, ``-J``, ``-N``, ``-c``."""

    level: int
    max_docs: int | None
    judged_only: bool
    num_docs: int
    complete: bool
    checks: bool = True  # trec_eval checks duplicates only when a measure reads the rankings


def string_codes(values: pl.Series, keys: pl.Series) -> pl.Series:
    """Each value's position in ``keys`` (distinct strings) as UInt32, null if absent.

    A cast to the Enum of ``keys`` (Polars' string lookup: exact, no hash to check).
    ``values`` String, or Categorical: then its categories are looked up (each string
    once) and each row takes its category's code.
    """
    if isinstance(values.dtype, pl.Categorical):
        by_category = string_codes(categories_of(values), keys)
        return by_category.gather(values.to_physical())
    return values.cast(pl.Enum(keys), strict=False).to_physical().cast(pl.UInt32)


def docno_codes(docno: pl.Series) -> tuple[pl.DataFrame, pl.Series]:
    """The run's distinct docnos in byte order (``docno``, ``__dc``) and each row's code.

    ``docno``: String, or Categorical (its distinct strings are read off its categories,
    the ones its rows use).
    """
    if isinstance(docno.dtype, pl.Categorical):
        distinct = categories_of(docno).gather(docno.to_physical().unique().drop_nulls())
    else:
        distinct = docno.unique()
    docnos = distinct.sort().alias("docno").to_frame().with_row_index("__dc")
    return docnos, string_codes(docno, docnos["docno"])


def _judged_codes(qrels: pl.DataFrame, docnos: pl.DataFrame) -> pl.DataFrame:
    """The qrels rows whose docno is in the run, with its code ``__dc``.

    A column ``__dc`` already in ``qrels`` is taken as those codes.
    """
    if "__dc" in qrels.columns:
        return qrels.filter(pl.col("__dc").is_not_null())
    code = string_codes(qrels["docno"], docnos["docno"])
    return qrels.with_columns(code.alias("__dc")).filter(pl.col("__dc").is_not_null())


def _positions(qid: pl.Series) -> pl.Series:
    """Each row's 0-based position within its query (``qid`` sorted, small integer codes)."""
    n = int(qid.max() or 0) + 1  # type: ignore[arg-type]
    codes = pl.int_range(n, dtype=pl.Int64, eager=True).cast(qid.dtype)
    starts = qid.search_sorted(codes, side="left")
    return pl.int_range(qid.len(), dtype=pl.Int64, eager=True) - starts.gather(qid).cast(pl.Int64)


@dataclass(frozen=True)
class _Order:
    """How a run's rows become trec_eval's order; needs no docno codes (see :func:`run_order`).

    ``sim``: the scores with -0.0 read as 0.0 (``None`` with ``score_rank``: not needed
    then). ``blocks``: when each query's rows are contiguous with scores not increasing
    (in trec_eval's order, NaN lowest), the row indices that put the blocks in query code
    order (empty: they are); else ``None`` and ``score_rank`` holds each score's dense
    rank (0 = highest, NaN last) for the sort.
    """

    sim: pl.Series | None
    blocks: pl.Series | None
    score_rank: pl.Series | None


def run_order(run: pl.DataFrame) -> _Order:
    """:class:`_Order` of ``run`` (``qid`` codes, ``sim``): one comparison of consecutive rows.

    Most runs list each query's documents together by score descending; those need no
    score ranks and no sort (:func:`_in_trec_order`).
    """
    # -0.0 ranks as 0.0 (C compares them equal); NaN ranks below every number (trec_eval's
    # order for a query mixing NaN with numbers depends on its qsort: a README deviation).
    # (a run with no zero score: its own scores, not a copy)
    sim = run["sim"]
    if (sim == 0).any():
        sim = run.select(pl.when(pl.col("sim") == 0).then(0.0).otherwise(pl.col("sim"))).to_series()
    qid = run["qid"]
    n = qid.len()
    blocks = None
    if n:
        q, s = pl.col("qid"), pl.col("sim")
        nq, ns = q.shift(-1), s.shift(-1)
        # the next row of the query ranks above this one (NaN ranks below every number;
        # Polars orders NaN above them: spelled out)
        above = ns.is_not_nan() & (s.is_nan() | (ns > s))
        frame = pl.DataFrame({"qid": qid, "sim": sim})
        # a run in no order shows it in its first rows: the whole check is skipped
        unsorted = frame.head(4096).select(((q == nq) & above).any()).item()
        if not unsorted:
            checked = frame.select(
                ((q == nq) & above).any().alias("unsorted"),
                # one past each block's last row (the last row always ends one)
                pl.int_range(1, n + 1, dtype=pl.UInt32)
                .filter((q != nq).fill_null(True))
                .alias("ends"),
            )
            if not checked["unsorted"][0]:
                blocks = _block_order(qid, checked["ends"])
    if blocks is None:
        return _Order(None, None, _score_ranks(sim))
    return _Order(sim, blocks, None)


def _score_ranks(sim: pl.Series) -> pl.Series:
    """Each score's dense rank, 0 = highest, NaN last (``sim`` without -0.0)."""
    n = sim.len()
    # mostly distinct scores (a lookup table as big as the run costs more than a sort):
    # ``rank("dense")``, when no NaN needs placing last
    if (
        n > 1_000_000
        and sim.head(100_000).n_unique() > 50_000
        and not sim.is_nan().any()
        and int(sim.approx_n_unique()) > 0.3 * n  # type: ignore[arg-type]
    ):
        return (sim.rank("dense", descending=True) - 1).cast(pl.UInt32)
    # a lookup in the sorted distinct scores: much cheaper than ``rank("dense")``
    distinct = sim.filter(sim.is_not_nan()).unique().sort(descending=True)
    n_sr = distinct.len()
    return sim.replace_strict(
        distinct,
        pl.int_range(n_sr, dtype=pl.UInt32, eager=True),
        default=pl.lit(n_sr, pl.UInt32),
        return_dtype=pl.UInt32,
    )


def ranked_lists(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    opts: Options,
    names: pl.Series,
    coded: tuple[pl.DataFrame, pl.Series] | None = None,
    order: _Order | None = None,
) -> pl.DataFrame:
    """Each query's ranked list: ``qid, i`` (0-based rank), ``rel``.

    ``rel`` is the judgment, -1 for a document not in the qrels, -2 for a negative one.
    ``coded``: :func:`docno_codes` of the run's docnos (row for row), when already known;
    ``order``: :func:`run_order` of the run, when already known.
    """
    # Ties: docno descending in byte order, through its dense rank (an integer).
    docnos, doc_codes = coded if coded is not None else docno_codes(run["docno"])
    if order is None:
        order = run_order(run)
    qid, n_dc = run["qid"], docnos.height
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the duplicate check (a hash of every (query, docno) pair; the row order does
        # not matter) beside the sort; with -M only the kept ranks count (after it)
        distinct = None
        if opts.checks and opts.max_docs is None:
            distinct = pool.submit(lambda: _pair_keys(qid, doc_codes).n_unique())
        ranked = None
        # (an _Order without score ranks has its blocks and scores)
        sim = cast(pl.Series, order.sim)
        if order.blocks is not None:
            ranked = _in_trec_order(qid, sim, order.blocks, doc_codes, n_dc)
        if ranked is None:
            score_rank = order.score_rank
            if score_rank is None:
                score_rank = _score_ranks(sim)
            ranked = _sorted_ranking(qid, score_rank, doc_codes, n_dc)
        return _looked_up(ranked, qrels, opts, names, docnos, distinct)


def _pair_keys(qid: pl.Series, doc_codes: pl.Series) -> pl.Series:
    """``(query code, docno code)`` as one UInt64 per row."""
    return qid.cast(pl.UInt64) * 2**32 + doc_codes.cast(pl.UInt64)


def _in_trec_order(
    qid: pl.Series, sim: pl.Series, blocks: pl.Series, doc_codes: pl.Series, n_dc: int
) -> pl.DataFrame | None:
    """``qid, __dc`` in trec_eval's order without a full sort (:class:`_Order`'s ``blocks``).

    When the docnos of tied scores of a query (byte order; ``doc_codes`` from
    :func:`docno_codes`) are not all descending already, each run of tied scores is
    sorted by docno descending (one sort of a key that keeps the runs in place); then
    the query blocks are put in code order by ``blocks``. ``None`` when that sort's key
    would not fit in 64 bits (sort everything).
    """
    frame = pl.DataFrame({"qid": qid, "sim": sim, "__dc": doc_codes.cast(pl.UInt32)})
    q, s, d = pl.col("qid"), pl.col("sim"), pl.col("__dc")
    # scores do not increase within a query (see run_order), so a tie is an equal score
    # (Polars: NaN == NaN)
    if frame.select(((q == q.shift(-1)) & (s == s.shift(-1)) & (d < d.shift(-1))).any()).item():
        bits = max(n_dc.bit_length(), 1)
        if qid.len().bit_length() + bits > 64:
            return None
        new_run = ((q != q.shift(1)) | (s != s.shift(1))).fill_null(True)
        # (run number, docno descending) as one UInt64: sorted, the runs stay in place
        key = frame.select(
            (
                new_run.cum_sum().cast(pl.UInt64) * pl.lit(2**bits, pl.UInt64)
                + (n_dc - 1 - d.cast(pl.Int64)).cast(pl.UInt64)
            ).sort()
        ).to_series()
        frame = frame.with_columns(
            (n_dc - 1 - (key % 2**bits).cast(pl.Int64)).cast(pl.UInt32).alias("__dc")
        )
    frame = frame.select("qid", "__dc")
    return frame[blocks] if blocks.len() else frame


def _block_order(qid: pl.Series, ends: pl.Series) -> pl.Series | None:
    """Row indices that put contiguous query blocks (ending before ``ends``) in code order.

    ``None`` when a query has two blocks (not contiguous); empty when in order already.
    """
    starts = pl.concat([pl.Series([0], dtype=pl.UInt32), ends.head(-1)])
    block_q = qid.gather(starts)
    if block_q.n_unique() != block_q.len():
        return None
    if block_q.is_sorted():
        return pl.Series("index", [], dtype=pl.UInt32)
    blocks = pl.DataFrame({"q": block_q, "start": starts, "end": ends}).sort("q")
    return blocks.select(
        pl.int_ranges("start", "end", dtype=pl.UInt32).explode().alias("index")
    ).to_series()


def _sorted_ranking(
    qid: pl.Series, score_rank: pl.Series, doc_codes: pl.Series, n_dc: int
) -> pl.DataFrame:
    """``qid, __dc`` sorted by query, score rank, then docno descending (byte order).

    ``score_rank``: :func:`_score_ranks` of the scores.
    """
    n_sr = int(score_rank.max() or 0)  # type: ignore[arg-type]
    # From here on a document is its code (``__dc``, its rank in byte order among the
    # run's docnos): the strings are dropped before sorting and joining.
    ranked = pl.DataFrame({"qid": qid, "__dc": doc_codes, "__sr": score_rank})
    qid_type = ranked.schema["qid"]
    n_q = int(ranked["qid"].max() or 0) + 1  # type: ignore[arg-type]
    bits = [max(int(n).bit_length(), 1) for n in (n_q, n_sr + 1, n_dc)]
    if sum(bits) <= 63:
        # one UInt64 key (query, score rank, reversed docno rank): a single radix sort of
        # the key alone, which then gives back the query and the document
        low, high = 2 ** bits[2], 2 ** (bits[1] + bits[2])
        key = ranked.select(
            (
                pl.col("qid").cast(pl.UInt64) * pl.lit(high, pl.UInt64)
                + pl.col("__sr").cast(pl.UInt64) * pl.lit(low, pl.UInt64)
                + (n_dc - 1 - pl.col("__dc").cast(pl.Int64)).cast(pl.UInt64)
            ).sort()
        ).to_series()
        ranked = pl.select(
            (key // high).cast(qid_type).alias("qid"),
            (n_dc - 1 - (key % low).cast(pl.Int64)).cast(pl.UInt32).alias("__dc"),
        )
    else:
        ranked = ranked.sort(["qid", "__sr", "__dc"], descending=[False, False, True]).select(
            "qid", pl.col("__dc").cast(pl.UInt32)
        )
    return ranked


def _looked_up(
    ranked: pl.DataFrame,
    qrels: pl.DataFrame,
    opts: Options,
    names: pl.Series,
    docnos: pl.DataFrame,
    distinct: Future[int] | None = None,
) -> pl.DataFrame:
    """The sorted ``qid, __dc`` with positions ``i`` and judgments ``rel`` (-M, -J applied).

    ``distinct``: the number of distinct pairs of the rows (before -M), when counted
    already; else counted here (when ``opts.checks``).
    """
    ranked = ranked.with_columns(_positions(ranked["qid"]).alias("i"))
    if opts.max_docs is not None:
        ranked = ranked.filter(pl.col("i") < opts.max_docs)
    pair = _pair_keys(ranked["qid"], ranked["__dc"])
    # the duplicate check (a hash of every pair) runs beside the qrels lookup
    with ThreadPoolExecutor(max_workers=1) as pool:
        if distinct is None and opts.checks:
            distinct = pool.submit(pair.n_unique)
        judged_rows = _judged_codes(qrels, docnos)
        judged = pl.DataFrame(
            {
                "__pair": _pair_keys(judged_rows["qid"], judged_rows["__dc"]),
                "rel": judged_rows["rel"],
            }
        )
        # the judged rows of the ranking (an inner join: a fifth of the rows here; their
        # order does not matter to the scatter below); every other row is a document
        # not in the qrels (-1)
        hits = (
            pair.to_frame("__pair")
            .with_row_index("__row")
            .lazy()
            .join(judged.lazy(), on="__pair", how="inner")
            .select(
                "__row",
                pl.when(pl.col("rel") < 0)
                .then(-2)
                .otherwise(pl.col("rel"))
                .cast(pl.Int64)
                .alias("rel"),
            )
            .collect()
        )
        n_distinct = distinct.result() if distinct is not None else ranked.height
    if n_distinct != ranked.height:
        dup = ranked.filter(pl.struct("qid", "__dc").is_duplicated())
        code, dc = dup.row(0)[:2]
        docno = docnos["docno"][dc]
        msg = f"duplicate docno {docno!r} in the results of query {names[code]!r}"
        raise TrecEvalError(msg, 4)
    # the measures read every rank's position and judgment: Int32 (half the memory of
    # Int64) when the judgments fit (a ranking has fewer than 2**31 ranks)
    low, high = hits.select(pl.col("rel").min().alias("low"), pl.col("rel").max()).row(0)
    fits = hits.height == 0 or (low >= -(2**31) and high < 2**31)
    rel_type = pl.Int32 if fits else pl.Int64
    rel = pl.repeat(-1, ranked.height, dtype=rel_type, eager=True)
    ranked = ranked.with_columns(
        rel.scatter(hits["__row"], hits["rel"].cast(rel_type)).alias("rel")
    )
    if opts.judged_only:
        ranked = ranked.filter(pl.col("rel") >= 0)
        ranked = ranked.with_columns(_positions(ranked["qid"]).alias("i"))
    # in (qid, i) order
    return ranked.select(pl.col("qid").set_sorted(), pl.col("i").cast(pl.Int32), "rel")


def judged_subset(ranked: pl.DataFrame, columns: list[Column], level: int) -> pl.DataFrame:
    """The ranks where a running value can change: judged or relevant documents.

    All of ``ranked`` when a measure reads the others (see :func:`_reads_unjudged`).
    """
    if _reads_unjudged(columns, level):
        return ranked
    rel = pl.col("rel")
    return ranked.filter((rel != -1) | (rel >= level))


def rank_keys(frame: pl.DataFrame) -> pl.Series:
    """``(query code, rank)`` as one UInt64 per row: increasing over a ranked frame."""
    return frame["qid"].cast(pl.UInt64) * 2**32 + frame["i"].cast(pl.UInt64)


def value_after(
    frame: pl.DataFrame, keys: pl.Series, source: str, qid: pl.Series, k: pl.Series
) -> pl.Series:
    """A running column after the first ``k`` ranks of each query ``qid``.

    ``frame`` holds some of each query's ranks in (query, rank) order (``keys`` are its
    :func:`rank_keys`), among them every rank where ``source`` changes: its value after
    ``k`` ranks is the one at the frame's last row of the query with rank < k, 0 when
    there is none, null when ``k < 1``. Binary searches on the sorted keys, no join.
    """
    return values_after(frame, keys, source, qid, [k])[0]


def values_after(
    frame: pl.DataFrame,
    keys: pl.Series,
    source: str,
    qid: pl.Series,
    ks: Sequence[pl.Series],
) -> list[pl.Series]:
    """:func:`value_after` for several cutoff series ``ks`` at once (one search each way)."""
    if not ks:
        return []
    n = qid.len()
    k = pl.concat([x.cast(pl.Int64) for x in ks])
    base = qid.cast(pl.UInt64) * 2**32
    start = keys.search_sorted(base, side="left")
    bases = pl.concat([base] * len(ks))
    lookup = pl.DataFrame(
        {
            "k": k,
            "end": keys.search_sorted(bases + k.clip(0, 2**32 - 1).cast(pl.UInt64), side="left"),
            "start": pl.concat([start] * len(ks)),
        }
    )
    index = lookup.select(
        pl.when(pl.col("end") > pl.col("start")).then(pl.col("end").cast(pl.Int64) - 1)
    )["end"]
    got = frame[source].gather(index)
    values = pl.select(pl.when(k >= 1).then(got.fill_null(0))).to_series().alias(source)
    return [values.slice(j * n, n) for j in range(len(ks))]


def _reads_unjudged(columns: list[Column], level: int) -> bool:
    """Whether a measure's running value changes at a document not in the qrels (rel -1).

    Only ``unj``, ``relstring`` and ``rbp_resid`` read those (handled apart), unless
    -1 counts as relevant (``-l`` below 0) or a gain map gives level -1 a gain.
    """
    if level <= -1:
        return True
    for column in columns:
        if column.measure.kind == "pairs" and column.measure.name not in ("rbp_resid",):
            shared = column.raw
            names = [n for n, _ in param_pairs(column.measure, shared)]
            if any(valid_int(n) and atol(n) == -1 for n in names):
                return True
    return False

"""trec_eval 10.0-rc3, reproduced in Polars: same measures, same numbers, same output.

This module holds :func:`trec_eval`, the evaluation behind the ``trec-eval`` command:
it reads the files, builds each query's ranking (:mod:`.ranking`), computes the
measures (:mod:`.compute`, :mod:`.gains`; the relation formats in :mod:`.prefs`) and
assembles the printed table (:mod:`.output`). The C source of trec_eval is the
specification. Each query's ranked list is built as
``form_res_rels.c`` builds it (score descending, then docno descending by byte order;
``-M`` cuts it, then ``-J`` drops unjudged documents; relevance -1 for a document not in
the qrels and -2 for a negative judgment), and every measure is a Polars expression over
that list: running counts and sums (``cum_sum`` keeps C's left-to-right summation, so the
printed digits agree on ``.xxxx5`` boundaries), values at cutoffs, and small joins for the
measures that read the ideal ranking (``ndcg``, ``Rndcg``, ``G`` ...). The summary is the
sum over queries in qrels order divided by the number of queries, as trec_eval does, and
numbers are printed as C's ``printf("%6.4f")`` prints them. A run whose lines already
are in that order per query (as most runs are written) is not sorted again.

Where trec_eval's behaviour is accidental (reads of uninitialised memory, the 10.0-rc3
exit on a qrels query without results) the documented intent is followed; the README's
trec_eval section lists each such deviation.

Examples
--------
>>> import polars_rankeval as prk
>>> from polars_rankeval.trec_eval.output import format_trec
>>> from polars_rankeval.trec_eval.program import trec_eval
>>> qrels, run = prk.datasets.example_paths()
>>> print(format_trec(trec_eval(qrels, run, ["P.5,10", "map"])), end="")
map                   	all	0.1785
P_5                   	all	0.2667
P_10                  	all	0.3000
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.allocator import LARGE_RUN_BYTES
from polars_rankeval.io.trec.bytewise import read_trec_eval_qrels, read_trec_eval_run
from polars_rankeval.trec_eval.compute import evaluate_queries
from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.measures import (
    BY_NAME,
    REL_FORMATS,
    Column,
    RelFormat,
    Request,
    columns_of,
    parse_measures,
)
from polars_rankeval.trec_eval.output import apply_zscores, assemble, fmt_long, format_doubles
from polars_rankeval.trec_eval.prefs import relation_measures
from polars_rankeval.trec_eval.prefs_labels import INTEGER_MEASURES, incompatible_format_error
from polars_rankeval.trec_eval.prefs_read import read_relations
from polars_rankeval.trec_eval.ranking import (
    BOGUS_DOCNO,
    Options,
    docno_codes,
    ranked_lists,
    run_order,
    string_codes,
)


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
    num_docs: int = 0,
    summary: bool = True,
    query: str | None = None,
    zscores: Any = None,
    runid: str | None = None,
    rel_format: RelFormat = "qrels",
) -> pl.DataFrame:
    """Evaluate a TREC run against qrels exactly as trec_eval 10.0-rc3 does.

    Parameters
    ----------
    qrels, run
        Paths of TREC files (read as trec_eval reads them), the files' bytes, or frames:
        qrels with ``qid, docno, rel`` (or ``user, item, relevance``), a run with
        ``qid, docno, sim`` (or ``user, item, score``; ``tag``/``run_id`` optional).
    measures
        ``-m`` arguments: ``"official"`` (default), ``"all_trec"``, ``"set"``, or
        measures with parameters (``"P.5,10"``, ``"ndcg.1=0,2=3"``, ``"set_F.0.5"``).
    per_query
        ``-q``: one value per query too.
    complete
        ``-c``: evaluate every qrels query; one without results gets trec_eval's
        placeholder ranking (one unjudged document) and the mean covers all of them.
    max_docs
        ``-M``: only the first ``max_docs`` documents of each ranking (0: none).
    rel_level
        ``-l``: the lowest relevance that counts as relevant (0 allowed).
    judged_only
        ``-J``: drop unjudged retrieved documents (after ``-M``).
    num_docs
        ``-N``: the number of documents in the collection (only ``utility`` reads it).
    summary
        ``False`` is ``-n``: no summary lines.
    query
        ``-D 0.<qid>``: evaluate only this query.
    zscores
        ``-Z``: a file of ``qid measure mean stddev`` lines; values become z scores.
    runid
        The run id to print; by default the tag of the run's last line (trec_eval's).
    rel_format
        ``-R``: ``"qrels"`` (default), or ``"qrels_jg"``, ``"prefs"``, ``"qrels_prefs"``
        for the preference (``prefs_*``) and ``*_avgjg`` measures
        (:mod:`polars_rankeval.trec_eval.prefs`); with those only ``runid``, ``num_q`` and
        these measures can be computed, as in trec_eval.

    Returns
    -------
    polars.DataFrame
        ``measure`` (label), ``query`` (``"all"`` for the summary), ``value`` (Float64,
        null for runid and relstring), ``text`` (the value as trec_eval prints it) and
        ``zscore`` (Boolean: printed with trec_eval's ``Z`` prefix), in print order.

    Raises
    ------
    ValueError
        A malformed file, an illegal measure or parameter, duplicate documents, or no
        query with both results and judgments (:class:`TrecEvalError`, with trec_eval's
        exit status in ``status``).
    """
    requests = parse_measures(measures)
    if rel_format not in REL_FORMATS:
        msg = f"illegal rel_format {rel_format!r}; expected one of {', '.join(sorted(REL_FORMATS))}"
        raise TrecEvalError(msg, 2)
    if rel_format != "qrels" or any(BY_NAME[r.measure].kind == "prefs" for r in requests):
        return _relation_eval(
            qrels, run, requests, rel_format=rel_format, per_query=per_query,
            complete=complete, max_docs=max_docs, rel_level=rel_level,
            judged_only=judged_only, summary=summary, query=query, runid=runid,
            zscores=zscores,
        )  # fmt: skip
    columns = columns_of(requests)
    checks = _checks(requests)
    # The two files are read at the same time (Polars' reader releases the GIL): the
    # run, then its docno codes, in a second thread; the qrels, then their query codes
    # and duplicate check, here. A qrels error is still the one reported when both
    # files are bad.
    # (what the futures hand over is a list the taker empties: a finished future would
    # otherwise keep the run's strings alive to the end)
    pool = ThreadPoolExecutor(max_workers=1)
    reading: Future[list[Any]] = Future()
    qrels_read: Future[pl.DataFrame] = Future()
    try:
        coding = pool.submit(_read_run_coded, run, reading, qrels_read)
        qrels_df = _as_qrels(qrels)
        qrels_read.set_result(qrels_df)
        prepared = _prepare_qrels(qrels_df, checks=checks)
        frames: list[pl.DataFrame] = [reading.result().pop(0)]  # freed once ranked
        tag = reading.result().pop()
        return _evaluate_frames(
            qrels_df, prepared, frames, tag, coding, columns, requests, per_query=per_query,
            complete=complete, max_docs=max_docs, rel_level=rel_level,
            judged_only=judged_only, num_docs=num_docs, summary=summary, query=query,
            zscores=zscores, runid=runid,
        )  # fmt: skip
    finally:
        qrels_read.cancel()  # (when the qrels failed) the thread stops waiting for them
        pool.shutdown(wait=True, cancel_futures=True)


def _checks(requests: list[Request]) -> bool:
    """Whether the files are checked for duplicates (any measure beyond runid and num_q)."""
    return any(r.measure not in ("runid", "num_q") for r in requests)


def _read_run_coded(
    run: Any, reading: Future[list[Any]], qrels_read: Future[pl.DataFrame]
) -> list[Any]:
    """:func:`_as_run` into ``reading`` (``[frame, tag]``), then the docno codes.

    Returns ``[docnos, doc_codes, qrels_codes]``: :func:`docno_codes` of the run's
    docnos and each qrels row's docno code (null: not in the run).
    """
    try:
        # Categorical on a small run (memory at 1M lines); on a large one (10M lines) the
        # categories' inserts cost more CPU than the String lookups they save
        run_df, tag = _as_run(run, categorical=_size(run) <= LARGE_RUN_BYTES)
    except BaseException as error:
        reading.set_exception(error)
        raise
    reading.set_result([run_df, tag])
    docnos, doc_codes = docno_codes(run_df["docno"])
    del run_df
    qrels_codes = string_codes(qrels_read.result()["docno"], docnos["docno"])
    return [docnos, doc_codes, qrels_codes]


@dataclass(frozen=True)
class _PreparedQrels:
    """What the qrels alone decide, worked out while the run is still being read.

    ``qids``: the distinct queries in byte order; ``codes``: each qrels row's position
    in ``qids`` (UInt32); ``distinct_pairs``: a hash proves no (query, docno) repeats
    (``False``: some may; the exact check runs on the evaluated queries).
    """

    qids: pl.DataFrame
    codes: pl.Series
    distinct_pairs: bool


def _prepare_qrels(qrels: pl.DataFrame, *, checks: bool) -> _PreparedQrels:
    qids = qrels.select(pl.col("qid").unique().sort())
    codes = string_codes(qrels["qid"], qids["qid"])
    distinct = not checks or (
        pl.DataFrame({"qid": codes, "docno": qrels["docno"]}).select(_PAIR_HASH.n_unique()).item()
        == qrels.height
    )
    return _PreparedQrels(qids, codes, distinct)


# a (query code, docno) pair as one 64-bit hash: distinct hashes prove distinct pairs
_PAIR_HASH = pl.col("docno").hash(seed=0) ^ (pl.col("qid").cast(pl.UInt64) * 0x9E3779B97F4A7C15)


def _evaluate_frames(
    qrels_df: pl.DataFrame,
    prepared: _PreparedQrels,
    frames: list[pl.DataFrame],
    tag: str,
    coding: Future[list[Any]],
    columns: list[Column],
    requests: list[Request],
    *,
    per_query: bool,
    complete: bool,
    max_docs: int | None,
    rel_level: int,
    judged_only: bool,
    num_docs: int,
    summary: bool,
    query: str | None,
    zscores: Any,
    runid: str | None,
) -> pl.DataFrame:
    """:func:`trec_eval` once both files are read (``coding``: the run's docno codes)."""
    run_df = frames.pop()
    if runid is None:
        runid = tag
    checks = _checks(requests)
    opts = Options(rel_level, max_docs, judged_only, num_docs, complete, checks)
    qids = prepared.qids
    n_qrels_queries = qids.height
    # whether the evaluated queries are all the qrels queries (then ``prepared.codes``
    # are their codes)
    all_queries = True
    if query is not None:
        qids = qids.filter(pl.col("qid") == query)
        all_queries = False
    # each run row's query as its position in ``qids`` (null: not evaluated); the
    # queries present are read off these small integers, not the strings
    run_codes = string_codes(run_df["qid"], qids["qid"])
    in_run = (
        pl.zeros(qids.height, dtype=pl.Boolean, eager=True)
        .scatter(run_codes.drop_nulls(), True)
        .alias("in_run")
    )
    missing = qids.filter(~in_run)
    coded: tuple[pl.DataFrame, pl.Series] | None = None
    if complete and missing.height:
        bogus = missing.select("qid", pl.lit(BOGUS_DOCNO).alias("docno"), pl.lit(1.0).alias("sim"))
        run_df = pl.concat([run_df.with_columns(pl.col("qid", "docno").cast(pl.String)), bogus])
        missing_codes = pl.int_range(qids.height, dtype=pl.UInt32, eager=True).filter(~in_run)
        run_codes = pl.concat([run_codes, missing_codes])
        # the placeholder docno is coded with the others in ranked_lists
    elif missing.height:
        print(
            f"trec_eval: note: {missing.height} qrels query(ies) without results not "
            "evaluated (use -c to count them)",
            file=sys.stderr,
        )
        qids = qids.filter(in_run)
        all_queries = False
        # renumber: a kept query's new code is the number of kept queries before it
        renumber = pl.select(pl.when(in_run).then(in_run.cum_sum() - 1).cast(pl.UInt32)).to_series()
        run_codes = renumber.gather(run_codes)
    if qids.height == 0:
        msg = "no queries with both results and relevance info"
        raise TrecEvalError(msg, 7)
    # From here on a query is its position in trec_eval's order (an integer code):
    # sorting and grouping by integers is much cheaper than by strings.
    codes = qids.with_row_index("__code")

    def encode(frame: pl.DataFrame) -> pl.DataFrame:
        # a lookup in file order (cheaper than a join on the strings)
        code = string_codes(frame["qid"], codes["qid"])
        return frame.with_columns(code.alias("qid")).filter(pl.col("qid").is_not_null())

    keep = run_codes.is_not_null()
    every = keep.all()
    if not (complete and missing.height):
        run_df = run_df.drop("docno")  # coded in ``coding``
    run_df = run_df.with_columns(run_codes.alias("qid"))
    if not every:
        run_df = run_df.filter(keep)
    if all_queries:
        qrels_eval = qrels_df.with_columns(prepared.codes.alias("qid"))
    else:
        qrels_eval = encode(qrels_df)
    # duplicates: distinct (query, docno hash) keys prove there are none; only when some
    # keys repeat (a duplicate, or a hash collision) are the strings compared
    if (
        opts.checks
        and not prepared.distinct_pairs
        and qrels_eval.select(_PAIR_HASH.n_unique()).item() != qrels_eval.height
        and qrels_eval.select(pl.struct("qid", "docno").n_unique()).item() != qrels_eval.height
    ):
        dup = qrels_eval.filter(pl.struct("qid", "docno").is_duplicated())
        code, docno = dup.row(0)[:2]
        msg = f"duplicate docno {docno!r} in the qrels of query {codes['qid'][code]!r}"
        raise TrecEvalError(msg, 4)
    # the run's order (score ranks when it needs a sort) once the docnos are coded: the
    # two side by side would hold both their working sets at once (the peak memory)
    if not (complete and missing.height):
        coding.result()
    order = run_order(run_df)
    run_df = run_df.drop("sim")  # (in ``order`` now)
    qrels_coded = qrels_eval
    if not (complete and missing.height):
        docnos, doc_codes, qrels_codes = coding.result()
        coding.result().clear()
        coded = (docnos, doc_codes if every else doc_codes.filter(keep))
        if all_queries:  # the rows of ``qrels_eval`` are those of ``qrels_df``
            qrels_coded = qrels_eval.with_columns(qrels_codes.alias("__dc"))
    ranked = ranked_lists(run_df, qrels_coded, opts, codes["qid"], coded, order)
    # free what only the ranking needed (the run's strings, codes, scores) before the
    # measures
    del qrels_coded, run_df, order, coded, run_codes, keep
    if not (complete and missing.height):
        del docnos, doc_codes, qrels_codes
    wide = evaluate_queries(ranked, qrels_eval, codes.height, columns, opts)
    del ranked
    valued = [c for c in columns if c.measure.kind not in ("runid",)]
    if complete and missing.height:
        bogus_rows = pl.col("qid").is_in(encode(missing.select("qid"))["qid"].implode())
        # trec_eval's clean-up of the placeholder ranking matches these exact labels
        # (``unj`` by prefix): ``utility_1,-1,0,0`` or ``relstring_20`` keep their values.
        zeroed = [
            c.label for c in valued
            if c.label in ("num_ret", "utility", "rbp_resid") or c.label.startswith("unj")
        ]  # fmt: skip
        wide = wide.with_columns(
            *[pl.when(bogus_rows).then(0.0).otherwise(pl.col(lb)).alias(lb) for lb in zeroed],
            *[
                pl.when(bogus_rows).then(pl.lit("")).otherwise(pl.col(c.label)).alias(c.label)
                for c in valued if c.label == "relstring"
            ],
        )  # fmt: skip
    wide = wide.sort("qid")
    wide = wide.with_columns(codes["qid"].gather(wide["qid"]).alias("qid"))
    z = zscores is not None
    if z:
        wide = apply_zscores(wide, valued, zscores)
    return assemble(
        wide, columns, qrels_df, runid, per_query, summary, complete, n_qrels_queries, z
    )


def _relation_eval(
    qrels: Any,
    run: Any,
    requests: list[Request],
    *,
    rel_format: str,
    per_query: bool,
    complete: bool,
    max_docs: int | None,
    rel_level: int,
    judged_only: bool,
    summary: bool,
    query: str | None,
    runid: str | None,
    zscores: Any,
) -> pl.DataFrame:
    """``-R qrels_jg / prefs / qrels_prefs`` and the preference measures (module ``prefs``)."""
    prefs = [r for r in requests if BY_NAME[r.measure].kind == "prefs"]
    common = [r for r in requests if BY_NAME[r.measure].kind != "prefs"]
    pairs = [(r.measure, tuple(r.params.split(",")) if r.params else ()) for r in prefs]
    schema = {
        "measure": pl.String,
        "query": pl.String,
        "value": pl.Float64,
        "text": pl.String,
        "zscore": pl.Boolean,
    }
    if rel_format == "qrels":
        relation_measures(None, None, pl.DataFrame(), pairs, relation_format="qrels")
    for r in common:
        if r.measure not in ("runid", "num_q"):
            raise incompatible_format_error(r.measure)
    if zscores is not None:
        msg = "-Z with -R qrels_jg, prefs or qrels_prefs is not supported"
        raise TrecEvalError(msg, 2)
    relations = read_relations(
        qrels if isinstance(qrels, pl.DataFrame) else Path(qrels),  # type: ignore[arg-type]
        rel_format,  # type: ignore[arg-type]
    )
    if query is not None:
        n_all = relations.select(pl.col("user").n_unique()).item()
        relations = relations.filter(pl.col("user") == query)
    else:
        n_all = relations.select(pl.col("user").n_unique()).item()
    run_df, tag = _as_run(run)
    values = relation_measures(
        relations,
        None,
        run_df.select(
            pl.col("qid").alias("user"),
            pl.col("docno").alias("item"),
            pl.col("sim").alias("score"),
        ),
        pairs,
        relation_format=rel_format,
        rel_level=rel_level,
        max_docs_per_query=max_docs,
        judged_docs_only=judged_only,
        complete=complete,
    )
    queries = run_df.select(pl.col("qid").unique()).join(
        relations.select(pl.col("user").alias("qid").unique()), on="qid", how="semi"
    )
    n_eval = values["query"].n_unique() if values.height else queries.height
    if complete:
        n_eval = relations.select(pl.col("user").n_unique()).item()
    if n_eval == 0:
        raise TrecEvalError("no queries with both results and relevance info", 7)
    integer = pl.col("measure").is_in(list(INTEGER_MEASURES))
    parts: list[pl.DataFrame] = []
    if per_query and values.height:
        parts.append(
            values.select(
                "measure",
                "query",
                "value",
                pl.when(integer)
                .then(fmt_long(pl.col("value")))
                .otherwise(pl.lit(format_doubles(values["value"])))
                .alias("text"),
                pl.lit(False).alias("zscore"),
            )
        )
    if summary:
        denominator = n_all if complete else n_eval
        rows: list[tuple[str, str, float | None, str, bool]] = []
        names = [r.measure for r in common]
        if "runid" in names:
            rows.append(("runid", "all", None, runid if runid is not None else tag, False))
        if "num_q" in names:
            rows.append(("num_q", "all", float(denominator), str(denominator), False))
        head = pl.DataFrame(rows, schema=schema, orient="row")
        labels = values.select("measure", "summary").unique(maintain_order=True)
        totals = []
        for label, rule in labels.iter_rows():
            total = float(
                values.filter(pl.col("measure") == label)
                .select(pl.col("value").cum_sum().last())
                .item()
            )
            totals.append(total if rule == "sum" else total / denominator)
        tail = pl.DataFrame(
            {"measure": labels["measure"], "value": totals},
            schema={"measure": pl.String, "value": pl.Float64},
        )
        tail = tail.select(
            "measure",
            pl.lit("all").alias("query"),
            "value",
            pl.when(integer)
            .then(fmt_long(pl.col("value")))
            .otherwise(pl.lit(format_doubles(tail["value"])))
            .alias("text"),
            pl.lit(False).alias("zscore"),
        )
        parts += [head, tail]
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.select(list(schema)).cast(schema) for p in parts])  # type: ignore[arg-type]


def _as_qrels(qrels: Any) -> pl.DataFrame:
    if isinstance(qrels, str | Path | bytes):
        return read_trec_eval_qrels(qrels)
    frame = qrels.collect() if isinstance(qrels, pl.LazyFrame) else pl.DataFrame(qrels)
    names = {"user": "qid", "item": "docno", "relevance": "rel"}
    frame = frame.rename({k: v for k, v in names.items() if k in frame.columns})
    return frame.select(
        pl.col("qid").cast(pl.String), pl.col("docno").cast(pl.String), pl.col("rel").cast(pl.Int64)
    )


def _size(source: Any) -> int:
    """The bytes of a file or of its bytes; 0 when not known (a frame, standard input)."""
    if isinstance(source, bytes):
        return len(source)
    if isinstance(source, str | Path) and Path(source).is_file():
        return Path(source).stat().st_size
    return 0


def _as_run(run: Any, *, categorical: bool = False) -> tuple[pl.DataFrame, str]:
    """The run's ``qid``, ``docno``, ``sim`` and its id.

    ``categorical``: a file's ``qid`` and ``docno`` as Categorical (see
    :func:`read_trec_eval_run`; much smaller); a frame's are String.
    """
    if isinstance(run, str | Path | bytes):
        return read_trec_eval_run(run, categorical=categorical)
    frame = run.collect() if isinstance(run, pl.LazyFrame) else pl.DataFrame(run)
    names = {"user": "qid", "item": "docno", "score": "sim", "tag": "run_id"}
    frame = frame.rename({k: v for k, v in names.items() if k in frame.columns})
    tag = str(frame["run_id"][-1]) if "run_id" in frame.columns and frame.height else "unknown"
    out = frame.select(
        pl.col("qid").cast(pl.String),
        pl.col("docno").cast(pl.String),
        pl.col("sim").cast(pl.Float64),
    )
    return out, tag

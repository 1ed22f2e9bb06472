"""trec_eval's relation formats ``-R qrels_jg``, ``prefs``, ``qrels_prefs`` and their measures.

trec_eval 10.0-rc3 reads relevance information in three formats besides plain qrels
(``-R``), and computes two measure families only from them. This module reproduces both
as Polars frame operations (joins, group-bys, window functions; no per-query Python
loop). The C sources are the specification: ``get_qrels_jg.c``, ``get_prefs.c``,
``get_qrels_prefs.c``, ``form_prefs_counts.c``, ``form_res_rels_jg.c`` and the
``m_prefs_*.c`` / ``m_*_avgjg.c`` measure files.

This module holds the entry (:func:`relation_measures`, :func:`summarize`); the family
is split by concept: names, labels and printing in :mod:`.prefs_labels`, the file
readers in :mod:`.prefs_read`, the shared ranking and failure order in
:mod:`.prefs_rank`, the ``qrels_jg`` measures in :mod:`.prefs_jg`, the preference
counts in :mod:`.prefs_pairs`. Failures are :class:`~.errors.TrecEvalError`, the class
the whole clone raises.

Contract (for :mod:`polars_rankeval.trec_eval.program`)
-------------------------------------------------------
``read_relations(path_or_frame, relation_format) -> pl.DataFrame`` (:mod:`.prefs_read`)
    ``relation_format`` is ``"qrels_jg"``, ``"prefs"`` or ``"qrels_prefs"``. Columns:

    * ``qrels_jg`` (line ``qid jg docno rel``): ``user`` (String, query id), ``jg``
      (String, judgment group), ``item`` (String, docno), ``relevance`` (Int64, read as
      C's ``atol``). A repeated (qid, jg, docno) is an error, as in trec_eval.
    * ``prefs`` (line ``qid jg jsg docno rel_level``) and ``qrels_prefs`` (a qrels line
      ``qid jg docno rel_level``, every line in judgment sub-group ``"0"``): ``user``,
      ``jg``, ``jsg``, ``item`` (String) and ``rel_level`` (Float64, read as C's
      ``atof``).

    Files are read as trec_eval reads them: fields separated by white space, exactly
    that many fields per line (else ``TrecEvalError`` "Malformed line N", exit 2),
    blank lines malformed, a line starting with ``#`` skipped (but, as in the C code, a
    line right after a skipped comment line is always parsed). A frame is checked for
    the columns above (``qrels_jg`` and ``qrels_prefs`` also accept a qrels frame
    ``user, iter, item, relevance``: iter is the judgment group) and cast.

``PREFS_MEASURES: tuple[str, ...]`` (:mod:`.prefs_labels`)
    The measure names, in trec_eval's print order: ``prefs_num_prefs_poss``,
    ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``, ``prefs_simp``, ``prefs_pair``,
    ``prefs_avgjg``, ``prefs_avgjg_Rnonrel``, ``prefs_simp_ret``, ``prefs_pair_ret``,
    ``prefs_avgjg_ret``, ``prefs_avgjg_Rnonrel_ret``, ``prefs_simp_imp``,
    ``prefs_pair_imp``, ``prefs_avgjg_imp``, ``map_avgjg``, ``P_avgjg``,
    ``Rprec_mult_avgjg``. In trec_eval's full list they come right after
    ``num_nonrel_judged_ret`` and before ``yaap`` (see ``PRINT_AFTER`` / ``PRINT_BEFORE``).
    Parameters (``MEASURE_DEFAULTS``): ``P_avgjg`` cutoffs ``5,10,15,20,30,100,200,500,1000``
    (labels ``P_avgjg_5``...), ``Rprec_mult_avgjg`` multiples ``0.2,0.4,...,2.0`` (labels
    ``Rprec_mult_avgjg_0.20``..., ``%3.2f``); the others take none (parameters are
    ignored, as trec_eval does). ``-m`` group names (``MEASURE_GROUPS``): ``all_prefs``
    = runid, num_q and the 14 ``prefs_*`` measures; ``prefs`` = runid, num_q,
    ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``,
    ``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``; ``qrels_jg`` = runid, num_q,
    ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``. (runid and num_q are the caller's.)
    Which relation format each measure needs: ``required_format(name)``; trec_eval's
    error when it does not match: ``incompatible_format_error(name)`` (exit 4, nothing
    printed for that query). With ``-R qrels_jg``/``prefs``/``qrels_prefs`` no common
    measure works (they all need plain qrels), and with ``-R qrels`` none of these does.

``relation_measures(relations, qrels, run, requests, *, relation_format, rel_level=1,
max_docs_per_query=None, judged_docs_only=False, complete=False) -> pl.DataFrame``
    ``relations`` is the frame from ``read_relations`` (``qrels`` is only used to give
    trec_eval's error when ``relation_format="qrels"`` and one of these measures is
    requested). ``run`` has columns ``user`` (String), ``item`` (String), ``score``
    (Float64): one row per run line as read, **not deduplicated, not cut by -M and not
    filtered by -J**: pass ``max_docs_per_query`` (``-M``) and ``judged_docs_only``
    (``-J``) instead, because these families order ties differently from the common
    measures (prefs: score descending then docno *ascending*; qrels_jg: docno
    descending, as the common measures) and ``-J`` is per judgment group for qrels_jg
    and ignored for prefs. A docno repeated within the first ``max_docs_per_query``
    documents of a query is trec_eval's "duplicate docs" failure (raised here).
    ``requests`` are ``(name, params)`` pairs as parsed from ``-m`` (group names are
    expanded here; names of other measures are ignored; the first non-empty params of a
    measure win, as in trec_eval). ``rel_level`` is ``-l`` (qrels_jg only).
    ``complete`` is ``-c``: a query of the relations absent from the run is evaluated
    on trec_eval's placeholder ranking (one unjudged document) and gets rows; without
    it such a query is skipped (trec_eval 10.0-rc3 exits instead, a regression; the
    documented intent is to skip it). Queries of the run without relations are ignored.

    Returns one row per (query, printed label): ``query`` (String), ``measure`` (the
    label, e.g. ``P_avgjg_5``), ``value`` (Float64), ``summary`` (``"mean"`` or
    ``"sum"``), sorted as trec_eval prints with ``-q`` (queries in byte order, then
    measure order). The summary (``summarize``) is the mean over the evaluated queries
    (with ``-c``: over all queries of the relations, each present as rows) or, for the
    three ``prefs_num_prefs_*`` counts, the sum. A query never yields a missing value:
    trec_eval prints 0 where a ratio is undefined (and reports ``inf`` where it divides
    by zero; so do we). ``format_value(label, value)`` gives the printed text: the three
    counts as integers (``%ld``), everything else ``%6.4f``.

``measure_labels(requests)`` lists the printed labels in order (parameters sorted as
trec_eval sorts them; a bad cutoff raises trec_eval's "Cannot initialize measure",
exit 2).

Failures trec_eval reports (malformed lines, duplicate docs, a doc at two levels of a
one-subgroup judgment group, 0 and non-0 levels of a doc, cyclic preferences) raise
``TrecEvalError`` (a ``ValueError``): ``message`` is trec_eval's stderr text,
``status`` its exit status (134 for the cycle, where trec_eval calls ``abort()``),
``query`` the query being evaluated: the first failure trec_eval meets (queries in byte
order, then judgment groups), so with ``-q`` trec_eval has printed the lines of the
queries before it.

Where trec_eval's behaviour is undefined we choose: a ``#`` line as the last line of a
relations file (trec_eval reads past its buffer) is skipped; in
``prefs_avgjg_Rnonrel(_ret)`` a lowest class smaller than R (the C code reads past the
array) contributes the rows it has; per-pair preference counts do not wrap at 65,535
judgment groups; NaN scores or levels sort as Polars sorts them.

Examples
--------
>>> import polars as pl
>>> from polars_rankeval.trec_eval import prefs as trec_prefs
>>> prefs = pl.DataFrame(
...     {"user": ["q1"] * 3, "jg": ["u1"] * 3, "jsg": ["s1"] * 3,
...      "item": ["d1", "d2", "d3"], "rel_level": [3.0, 2.0, 0.0]}
... )
>>> run = pl.DataFrame({"user": ["q1", "q1"], "item": ["d2", "d1"], "score": [2.0, 1.0]})
>>> out = trec_prefs.relation_measures(
...     prefs, None, run, [("prefs_simp", ()), ("prefs_num_prefs_poss", ())],
...     relation_format="prefs",
... )
>>> out.select("measure", "value").rows()
[('prefs_num_prefs_poss', 3.0), ('prefs_simp', 0.6666666666666666)]
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.prefs_jg import jg_values
from polars_rankeval.trec_eval.prefs_labels import (
    INTEGER_MEASURES,
    format_accepts,
    incompatible_format_error,
    measure_labels,
    resolve_requests,
)
from polars_rankeval.trec_eval.prefs_pairs import prefs_values
from polars_rankeval.trec_eval.prefs_read import check_format
from polars_rankeval.trec_eval.ranking import BOGUS_DOCNO


def relation_measures(
    relations: pl.DataFrame | None,
    qrels: pl.DataFrame | None,
    run: pl.DataFrame | pl.LazyFrame,
    requests: Sequence[tuple[str, tuple[str, ...]]],
    *,
    relation_format: str,
    rel_level: int = 1,
    max_docs_per_query: int | None = None,
    judged_docs_only: bool = False,
    complete: bool = False,
) -> pl.DataFrame:
    """Per-query values of the preference and ``*_avgjg`` measures, as trec_eval computes them.

    Parameters
    ----------
    relations
        From ``read_relations`` in ``relation_format``.
    qrels
        A plain qrels frame; unused except that with ``relation_format="qrels"`` a
        requested measure of this module raises trec_eval's format failure.
    run
        ``user`` (String), ``item`` (String), ``score`` (Float64); unique (user, item)
        among the first ``max_docs_per_query`` documents of a query; not cut by -M nor
        filtered by -J (see ``max_docs_per_query`` and ``judged_docs_only``).
    requests
        ``(name, params)`` from ``-m``; group names expanded; other measures ignored.
    relation_format
        ``"qrels_jg"``, ``"prefs"``, ``"qrels_prefs"`` (or ``"qrels"``, see ``qrels``).
    rel_level
        ``-l``: a qrels_jg judgment counts as relevant when ``relevance >= rel_level``.
    max_docs_per_query
        ``-M``: only the first this many documents of each query (after sorting).
    judged_docs_only
        ``-J``: qrels_jg measures rank only the documents judged (relevance >= 0) in each
        judgment group; trec_eval ignores it for the preference measures.
    complete
        ``-c``: queries of the relations absent from the run get trec_eval's placeholder
        ranking and rows; otherwise they are skipped.

    Returns
    -------
    polars.DataFrame
        ``query``, ``measure`` (printed label), ``value`` (Float64), ``summary``
        (``"mean"``/``"sum"``), in trec_eval's ``-q`` order.

    Examples
    --------
    >>> import polars as pl
    >>> jg = pl.DataFrame({"user": ["q"] * 3, "jg": ["a", "a", "b"],
    ...                    "item": ["d1", "d2", "d2"], "relevance": [1, 0, 1]})
    >>> run = pl.DataFrame({"user": ["q", "q"], "item": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> relation_measures(jg, None, run, [("map_avgjg", ())], relation_format="qrels_jg").rows()
    [('q', 'map_avgjg', 0.75, 'mean')]
    """
    wanted = resolve_requests(requests)
    if relation_format == "qrels":
        if wanted:
            raise incompatible_format_error(next(iter(wanted)))
        return _empty()
    check_format(relation_format)
    if not wanted:
        return _empty()
    if relations is None:
        raise ValueError(
            f"relations must be a frame for relation_format={relation_format!r}, got None"
        )
    for name in wanted:
        if not format_accepts(name, relation_format):
            raise incompatible_format_error(name)
    labels = measure_labels(list(wanted.items()))
    if isinstance(run, pl.LazyFrame):
        run = run.collect()
    if not isinstance(run, pl.DataFrame):
        raise TypeError(f"run must be a polars DataFrame or LazyFrame, got {type(run).__name__}")
    missing = [c for c in ("user", "item", "score") if c not in run.columns]
    if missing:
        raise ValueError(
            f"run is missing column(s) {', '.join(missing)}; expected user, item, score"
        )
    if max_docs_per_query is not None and max_docs_per_query < 0:
        raise ValueError(f"max_docs_per_query must be >= 0, got {max_docs_per_query}")
    run = run.select(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String),
        (pl.col("score").cast(pl.Float64) + 0.0).alias("score"),  # -0.0 == 0.0 as in C
    )
    queries = relations.select("user").unique()
    present = run.join(queries, on="user", how="semi")
    if complete:
        absent = queries.join(present.select("user").unique(), on="user", how="anti")
        bogus = absent.with_columns(pl.lit(BOGUS_DOCNO).alias("item"), pl.lit(1.0).alias("score"))
        present = pl.concat([present, bogus])
    evaluated = present.select("user").unique()
    relations = relations.join(evaluated, on="user", how="semi")
    try:
        if relation_format == "qrels_jg":
            values = jg_values(
                relations, present, wanted, rel_level, max_docs_per_query, judged_docs_only
            )
        else:
            values = prefs_values(relations, present, wanted, max_docs_per_query)
    except TrecEvalError as failure:
        if failure.message.endswith("Can't calculate measure"):
            # trec_eval names the first requested measure (in its order) that failed
            raise TrecEvalError(
                f"{failure.message} '{next(iter(wanted))}'",
                status=failure.status,
                query=failure.query,
            ) from None
        raise
    order = pl.DataFrame({"measure": labels, "_o": range(len(labels))})
    out = (
        values.join(order, on="measure", how="inner")
        .sort(pl.col("user"), "_o")
        .select(
            pl.col("user").alias("query"),
            "measure",
            pl.col("value").cast(pl.Float64),
            pl.when(pl.col("measure").is_in(list(INTEGER_MEASURES)))
            .then(pl.lit("sum"))
            .otherwise(pl.lit("mean"))
            .alias("summary"),
        )
    )
    return out


def summarize(per_query: pl.DataFrame) -> pl.DataFrame:
    """trec_eval's summary (``all``) line values from ``relation_measures`` output.

    Sums in query order (as trec_eval accumulates), then divides by the number of
    queries for the ``"mean"`` measures.

    Examples
    --------
    >>> frame = pl.DataFrame({"query": ["a", "b"], "measure": ["prefs_simp"] * 2,
    ...                       "value": [0.5, 0.25], "summary": ["mean"] * 2})
    >>> summarize(frame).rows()
    [('prefs_simp', 0.375)]
    """
    n = per_query["query"].n_unique()
    order = per_query.select("measure").unique(maintain_order=True).with_row_index("_o")
    return (
        per_query.join(order, on="measure")
        .group_by("measure", "_o", "summary", maintain_order=True)
        .agg(pl.col("value").cum_sum().last().alias("total"))
        .sort("_o")
        .select(
            "measure",
            pl.when(pl.col("summary") == "sum")
            .then(pl.col("total"))
            .otherwise(pl.col("total") / pl.lit(max(n, 1), dtype=pl.Float64))
            .alias("value"),
        )
    )


def _empty() -> pl.DataFrame:
    return pl.DataFrame(
        schema={"query": pl.String, "measure": pl.String, "value": pl.Float64, "summary": pl.String}
    )

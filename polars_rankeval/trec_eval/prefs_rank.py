"""The ranking and the failure order shared by the relation-format measures.

``rank_by_score`` ranks a run as trec_eval's ``form_prefs_counts``/``form_res_rels_jg`` do
(score descending, docno by byte order in the direction each uses, ``-M`` cut) and
reports duplicate documents; ``raise_first`` raises, among the failures found for all
queries at once, the one trec_eval meets first (queries in byte order, then judgment
groups, then stages), so the clone fails where trec_eval fails.
"""

from __future__ import annotations

import polars as pl

from polars_rankeval.trec_eval.errors import TrecEvalError

Failure = tuple[str, int, int, str, int]  # query, JG number, stage, message, exit status


def raise_first(failures: list[Failure]) -> None:
    """Raise the failure trec_eval meets first: queries in byte order, then JGs, stages."""
    if failures:
        query, _, _, message, code = min(
            failures, key=lambda f: (f[0].encode("utf-8", "surrogateescape"), f[1], f[2])
        )
        raise TrecEvalError(message, status=code, query=query)


# Polars sorts String columns in byte order, as trec_eval's strcmp compares (the tests
# check orders on ids that sort differently as text and as bytes).


def rank_by_score(
    run: pl.DataFrame,
    *,
    docno_descending: bool,
    max_docs: int | None,
    failures: list[Failure] | None = None,
) -> pl.DataFrame:
    """Rank (1-based) by score descending, ties by docno; cut at ``max_docs``.

    A docno repeated within the cut list is trec_eval's "duplicate docs" failure (the
    first in docno order of each query); collected into ``failures`` or raised.
    """
    ranked = run.sort(
        pl.col("user"),
        pl.col("score"),
        pl.col("item"),
        descending=[False, True, docno_descending],
    ).with_columns(pl.int_range(1, pl.len() + 1).over("user").alias("rank"))
    if max_docs is not None:
        ranked = ranked.filter(pl.col("rank") <= max_docs)
    dup = (
        ranked.filter(pl.struct("user", "item").is_duplicated())
        .sort(pl.col("item"))
        .group_by("user", maintain_order=True)
        .agg(pl.col("item").first())
    )
    where = "form_prefs_counts" if not docno_descending else "form_res_qrels"
    found: list[Failure] = [
        (
            user,
            -1,
            0,
            f"trec_eval.{where}: duplicate docs {item}trec_eval: Can't calculate measure",
            4,
        )
        for user, item in dup.rows()
    ]
    if failures is None:
        raise_first(found)
    else:
        failures.extend(found)
    return ranked


# qrels_jg: map_avgjg, P_avgjg, Rprec_mult_avgjg

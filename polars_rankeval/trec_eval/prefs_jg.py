"""The ``-R qrels_jg`` measures: ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``.

Each judgment group of a query is a qrels of its own; a measure is computed per group
on the query's ranking (``-J`` and ``-l`` applied per group) and averaged over the
groups, as trec_eval's ``*_avgjg`` measures do.
"""

from __future__ import annotations

import polars as pl

from polars_rankeval.trec_eval.prefs_labels import append_double, double_cutoffs, long_cutoffs
from polars_rankeval.trec_eval.prefs_rank import rank_by_score


def jg_values(
    rels: pl.DataFrame,
    run: pl.DataFrame,
    wanted: dict[str, tuple[str, ...]],
    rel_level: int,
    max_docs: int | None,
    judged_only: bool,
) -> pl.DataFrame:
    """The ``*_avgjg`` measures per query: each judgment group's value, averaged."""
    ranked = rank_by_score(run, docno_descending=True, max_docs=max_docs).select(
        "user", "item", "rank"
    )
    jgs = rels.select("user", "jg").unique()
    num_jgs = jgs.group_by("user").agg(pl.len().alias("num_jgs"))
    rel_value = (
        pl.when(pl.col("relevance").is_null())
        .then(-1)  # not in this JG's pool
        .when(pl.col("relevance") < 0)
        .then(-2)  # in the pool, not judged
        .otherwise(pl.col("relevance"))
        .alias("rel")
    )
    if rel_level < 0:
        # unjudged docs count as relevant: every JG ranks the whole (cut) run
        lists = jgs.join(ranked, on="user", how="inner").join(
            rels, on=["user", "jg", "item"], how="left"
        )
    else:
        # only judged docs can be relevant: a JG's list needs just its judged docs, at
        # their rank in the run (or, under -J, their rank among the JG's judged docs)
        lists = rels.join(ranked, on=["user", "item"], how="inner")
    lists = lists.with_columns(rel_value)
    if judged_only:
        lists = lists.filter(pl.col("rel") >= 0)
    lists = lists.sort("user", "jg", "rank")
    position = (
        pl.int_range(1, pl.len() + 1).over("user", "jg")
        if judged_only or rel_level < 0
        else pl.col("rank")
    )
    lists = lists.with_columns(
        position.alias("pos"), (pl.col("rel") >= rel_level).cast(pl.Int64).alias("is_rel")
    ).with_columns(pl.col("is_rel").cum_sum().over("user", "jg").alias("rel_so_far"))
    num_rel = (
        rels.filter((pl.col("relevance") >= 0) & (pl.col("relevance") >= rel_level))
        .group_by("user", "jg")
        .agg(pl.len().alias("num_rel"))
    )
    counts = lists.group_by("user", "jg").agg(
        pl.len().alias("num_ret"),
        pl.col("is_rel").sum().alias("num_rel_ret"),
        # form_res_rels_jg counts only judged docs in num_rel_ret (matters for -l < 0)
        ((pl.col("is_rel") == 1) & (pl.col("rel") >= 0)).sum().alias("judged_rel_ret"),
    )
    if not judged_only and rel_level >= 0:
        # the list of every JG is the whole cut run
        counts = counts.drop("num_ret")
        run_len = ranked.group_by("user").agg(pl.len().alias("num_ret"))
        per_jg = jgs.join(run_len, on="user", how="left").join(
            counts, on=["user", "jg"], how="left"
        )
    else:
        per_jg = jgs.join(counts, on=["user", "jg"], how="left")
    per_jg = per_jg.join(num_rel, on=["user", "jg"], how="left").with_columns(
        pl.col("num_ret", "num_rel_ret", "judged_rel_ret", "num_rel").fill_null(0)
    )
    parts: list[pl.DataFrame] = []

    def avg_over_jgs(frame: pl.DataFrame) -> pl.DataFrame:
        # sum over jgs in jg order, divided by num_jgs when there are several
        return (
            frame.sort("user", pl.col("jg"))
            .group_by("user", "measure", maintain_order=True)
            .agg(pl.col("v").cum_sum().last().alias("s"))
            .join(num_jgs, on="user")
            .select(
                "user",
                "measure",
                pl.when(pl.col("num_jgs") > 1)
                .then(pl.col("s") / pl.col("num_jgs"))
                .otherwise(pl.col("s"))
                .alias("value"),
            )
        )

    if "map_avgjg" in wanted:
        ap = (
            lists.filter(pl.col("is_rel") == 1)
            .group_by("user", "jg", maintain_order=True)
            .agg(
                (pl.col("rel_so_far") / pl.col("pos")).cum_sum().last().alias("sum"),
            )
        )
        v = per_jg.join(ap, on=["user", "jg"], how="left").with_columns(
            pl.when(pl.col("sum").is_not_null())
            .then(pl.col("sum") / pl.col("num_rel"))
            .otherwise(0.0)
            .alias("v"),
            pl.lit("map_avgjg").alias("measure"),
        )
        parts.append(avg_over_jgs(v.select("user", "jg", "measure", "v")))

    def precision_at(cut: pl.DataFrame) -> pl.DataFrame:
        # cut: user, jg, measure, c (Int64). value: rel in top min(c, num_ret) / c, 0 if c < 1
        top = (
            cut.with_columns(pl.col("c").clip(lower_bound=0).alias("k"))
            .sort("k")
            .join_asof(
                lists.select("user", "jg", pl.col("pos").alias("k"), "rel_so_far").sort("k"),
                on="k",
                by=["user", "jg"],
                strategy="backward",
                check_sortedness=False,  # sorted on k globally, hence within each group
            )
            .with_columns(pl.col("rel_so_far").fill_null(0))
        )
        return top.select(
            "user",
            "jg",
            "measure",
            pl.when(pl.col("c") >= 1)
            .then(pl.col("rel_so_far") / pl.col("c"))
            .otherwise(0.0)
            .alias("v"),
        )

    def rprec_at(cut: pl.DataFrame) -> pl.DataFrame:
        # m_Rprec_mult_avgjg.c walks the list upwards from num_ret starting from the
        # judged relevant count A and dropping each doc with rel >= rel_level (T in all):
        # at c <= num_ret the count is A - T + rel_in_top(c) (= rel_in_top(c) unless
        # -l < 0 lets unjudged docs count); the walk stops at 0. Past the list: A / c.
        top = (
            cut.with_columns(pl.col("c").clip(lower_bound=0).alias("k"))
            .sort("k")
            .join_asof(
                lists.select("user", "jg", pl.col("pos").alias("k"), "rel_so_far").sort("k"),
                on="k",
                by=["user", "jg"],
                strategy="backward",
                check_sortedness=False,
            )
            .with_columns(pl.col("rel_so_far").fill_null(0))
        )
        left = pl.col("judged_rel_ret") - pl.col("num_rel_ret") + pl.col("rel_so_far")
        return top.select(
            "user",
            "jg",
            "measure",
            pl.when(pl.col("c") < 1)
            .then(0.0)
            .when(pl.col("c") > pl.col("num_ret"))
            .then(pl.col("judged_rel_ret") / pl.col("c"))
            .when(left > 0)
            .then(left / pl.col("c"))
            .otherwise(0.0)
            .alias("v"),
        )

    if "P_avgjg" in wanted:
        cuts = long_cutoffs("P_avgjg", wanted["P_avgjg"])
        table = pl.DataFrame(
            {"measure": [f"P_avgjg_{c}" for c in cuts], "c": cuts},
            schema={"measure": pl.String, "c": pl.Int64},
        )
        parts.append(avg_over_jgs(precision_at(jgs.join(table, how="cross"))))
    if "Rprec_mult_avgjg" in wanted:
        mults = double_cutoffs("Rprec_mult_avgjg", wanted["Rprec_mult_avgjg"])
        table = pl.DataFrame(
            {"measure": [append_double("Rprec_mult_avgjg", m) for m in mults], "m": mults},
            schema={"measure": pl.String, "m": pl.Float64},
        )
        cut = per_jg.join(table, how="cross").with_columns(
            (pl.col("m") * pl.col("num_rel").cast(pl.Float64) + 0.9)
            .cast(pl.Int64, strict=False)
            .alias("c")
        )
        parts.append(
            avg_over_jgs(
                rprec_at(
                    cut.select(
                        "user", "jg", "measure", "c", "num_ret", "num_rel_ret", "judged_rel_ret"
                    )
                )
            )
        )
    return (
        pl.concat(parts)
        if parts
        else pl.DataFrame(schema={"user": pl.String, "measure": pl.String, "value": pl.Float64})
    )


# prefs / qrels_prefs: the prefs_* measures

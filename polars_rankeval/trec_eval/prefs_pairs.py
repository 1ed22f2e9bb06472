"""The ``-R prefs``/``qrels_prefs`` measures: preferences between documents, counted.

From the judgment sub-groups (levels within a sub-group say which document is
preferred) or preference arrays, trec_eval forms the preference pairs (a cyclic set
aborts, exit 134) and counts, per query and judgment group, the pairs the ranking
orders as judged and the other way, retrieved or not. Every ``prefs_*`` measure is
computed from those counts, as ``form_prefs_counts.c`` and the measures' C files do;
the ``Rnonrel`` variants recompute them over the top non-relevant documents.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from polars_rankeval.trec_eval.prefs_rank import Failure, raise_first, rank_by_score


def prefs_values(
    rels: pl.DataFrame,
    run: pl.DataFrame,
    wanted: dict[str, tuple[str, ...]],
    max_docs: int | None,
) -> pl.DataFrame:
    """The ``prefs_*`` measures per query, from the preference pairs of each judgment group."""
    failures: list[Failure] = []
    ranked = rank_by_score(
        run, docno_descending=False, max_docs=max_docs, failures=failures
    ).select("user", "item", "rank")
    rels = rels.select("user", "jg", "jsg", "item", pl.col("rel_level").alias("lvl"))
    # judgment groups numbered in trec_eval's order (query, then jg, as bytes)
    jgs = (
        rels.select("user", "jg")
        .unique()
        .sort(pl.col("user"), pl.col("jg"))
        .with_row_index("g")
        .with_columns(pl.col("g").cast(pl.Int64))
    )
    judged = rels.select("user", "item").unique()
    # internal docids: retrieved judged docs by rank (0..njr-1), then the others by docno
    ret = (
        ranked.join(judged, on=["user", "item"], how="semi")
        .sort("user", "rank")
        .with_columns(pl.int_range(pl.len()).over("user").alias("d"))
    )
    njr = (
        judged.select("user")
        .unique()
        .join(ret.group_by("user").agg(pl.len().alias("njr")), on="user", how="left")
        .with_columns(pl.col("njr").fill_null(0).cast(pl.Int64))
    )
    unret = (
        judged.join(ret, on=["user", "item"], how="anti")
        .sort("user", pl.col("item"))
        .join(njr, on="user")
        .with_columns((pl.col("njr") + pl.int_range(pl.len()).over("user")).alias("d"))
    )
    docs = pl.concat(
        [
            ret.select("user", "item", pl.col("d").cast(pl.Int64)),
            unret.select("user", "item", pl.col("d").cast(pl.Int64)),
        ]
    )
    rows = (
        rels.join(docs, on=["user", "item"])
        .join(njr, on="user")
        .join(jgs, on=["user", "jg"])
        .with_columns((pl.col("d") < pl.col("njr")).alias("ret"))
    )
    kind = rows.group_by("g").agg((pl.col("jsg").n_unique() > 1).alias("pa"))
    rows = rows.join(kind, on="g")
    ec = rows.filter(~pl.col("pa")).select("user", "g", "item", "lvl", "d", "njr", "ret")
    pa_rows = rows.filter(pl.col("pa")).drop("pa")
    _check_ec_levels(ec, failures)
    pa_rel = _pa_rel_levels(pa_rows, failures).join(jgs, on=["user", "jg"])
    pa_edges = _pa_closure(pa_rows, failures).join(jgs, on=["user", "jg"])
    raise_first(failures)

    # ---- EC judgment groups (one JSG): counted from level counts, no pair expansion
    lc = _level_pair_counts(ec, ["g"])
    conc = _concordant(ec, ["g"])
    ec_counts = lc.join(conc, on="g", how="left").select(
        "g",
        pl.col("c").fill_null(0).alias("ful_ret"),
        pl.col("p_rr").alias("poss_ret"),
        pl.col("p_ru").alias("ful_imp"),
        (pl.col("p_ru") + pl.col("p_ur")).alias("poss_imp"),
        pl.col("p_uu").alias("notoccur"),
    )
    # ---- preference-array judgment groups: transitive closure of the JSG preferences
    x_ret = pl.col("d") < pl.col("njr")
    y_ret = pl.col("d_y") < pl.col("njr")
    pa_counts = pa_edges.group_by("g").agg(
        (x_ret & y_ret & (pl.col("d") < pl.col("d_y"))).sum().alias("ful_ret"),
        (x_ret & y_ret).sum().alias("poss_ret"),
        (x_ret & ~y_ret).sum().alias("ful_imp"),
        (x_ret ^ y_ret).sum().alias("poss_imp"),
        (~x_ret & ~y_ret).sum().alias("notoccur"),
    )
    # relevant / nonrelevant counts: EC rows (with multiplicity; lvl <= 0 is nonrel),
    # PA docs by their final rel_level (> 0 rel, == 0 nonrel, < 0 neither)
    ec_rel = ec.group_by("g").agg(
        (pl.col("lvl") > 0).sum().alias("num_rel"),
        ((pl.col("lvl") > 0) & pl.col("ret")).sum().alias("num_rel_ret"),
        (pl.col("lvl") <= 0).sum().alias("num_nonrel"),
        ((pl.col("lvl") <= 0) & pl.col("ret")).sum().alias("num_nonrel_ret"),
    )
    pa_relc = pa_rel.group_by("g").agg(
        (pl.col("lvl") > 0).sum().alias("num_rel"),
        ((pl.col("lvl") > 0) & x_ret).sum().alias("num_rel_ret"),
        (pl.col("lvl") == 0).sum().alias("num_nonrel"),
        ((pl.col("lvl") == 0) & x_ret).sum().alias("num_nonrel_ret"),
    )
    count_cols = ["ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"]
    rel_cols = ["num_rel", "num_rel_ret", "num_nonrel", "num_nonrel_ret"]
    jg_table = (
        jgs.join(kind, on="g")
        .join(
            pl.concat([ec_rel, pa_relc]).with_columns(pl.col(rel_cols).cast(pl.Int64)),
            on="g",
            how="left",
        )
        .join(
            pl.concat(
                [
                    ec_counts.with_columns(pl.col(count_cols).cast(pl.Int64)),
                    pa_counts.with_columns(pl.col(count_cols).cast(pl.Int64)),
                ]
            ),
            on="g",
            how="left",
        )
        .with_columns(pl.col(*rel_cols, *count_cols).fill_null(0))
        .sort("g")
    )
    parts: list[pl.DataFrame] = []
    per_q = jg_table.group_by("user", maintain_order=True).agg(
        pl.len().alias("num_jgs"), *(pl.col(c).sum() for c in count_cols)
    )
    ful_all = pl.col("ful_ret") + pl.col("ful_imp")
    poss_all = pl.col("poss_ret") + pl.col("poss_imp") + pl.col("notoccur")
    poss_imp = pl.col("poss_ret") + pl.col("poss_imp")

    def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        return pl.when(den > 0).then(num / den).otherwise(0.0)

    simple = {
        "prefs_num_prefs_poss": poss_all.cast(pl.Float64),
        "prefs_num_prefs_ful": ful_all.cast(pl.Float64),
        "prefs_num_prefs_ful_ret": pl.col("ful_ret").cast(pl.Float64),
        "prefs_simp": ratio(ful_all, poss_all),
        "prefs_simp_ret": ratio(pl.col("ful_ret"), pl.col("poss_ret")),
        "prefs_simp_imp": ratio(ful_all, poss_imp),
    }
    for name, expr in simple.items():
        if name in wanted:
            parts.append(per_q.select("user", pl.lit(name).alias("measure"), expr.alias("value")))

    def avg_jg(name: str, jg_ratio: pl.Expr, table: pl.DataFrame = jg_table) -> None:
        # sum of per-jg ratios in jg order; value sum / num_jgs when sum > 0 (NaN -> 0)
        agg = (
            table.sort("g")
            .group_by("user", maintain_order=True)
            .agg(jg_ratio.cum_sum().last().alias("s"), pl.len().alias("n"))
        )
        parts.append(
            agg.select(
                "user",
                pl.lit(name).alias("measure"),
                pl.when((pl.col("s") > 0) & ~pl.col("s").is_nan())
                .then(pl.col("s") / pl.col("n"))
                .otherwise(0.0)
                .alias("value"),
            )
        )

    if "prefs_avgjg" in wanted:
        avg_jg("prefs_avgjg", ratio(ful_all, poss_all))
    if "prefs_avgjg_ret" in wanted:
        avg_jg("prefs_avgjg_ret", ratio(pl.col("ful_ret"), pl.col("poss_ret")))
    if "prefs_avgjg_imp" in wanted:
        avg_jg("prefs_avgjg_imp", ratio(ful_all, poss_imp))
    if "prefs_avgjg_Rnonrel" in wanted or "prefs_avgjg_Rnonrel_ret" in wanted:
        recalc = _rnonrel_recalc(ec, pa_edges, pa_rel, jg_table)
        table = jg_table.join(recalc, on="g", how="left").with_columns(
            pl.col("rc_ful", "rc_poss", "rcr_ful", "rcr_poss").fill_null(0)
        )
        if "prefs_avgjg_Rnonrel" in wanted:
            r, n = pl.col("num_rel"), pl.col("num_nonrel")
            jg_ratio = (
                pl.when(r >= n)
                .then(
                    (ful_all + pl.col("num_rel_ret") * (r - n))
                    / (poss_all + pl.col("num_rel") * (r - n))
                )
                .otherwise(pl.col("rc_ful") / pl.col("rc_poss"))
            )
            avg_jg("prefs_avgjg_Rnonrel", jg_ratio, table)
        if "prefs_avgjg_Rnonrel_ret" in wanted:
            r, n = pl.col("num_rel_ret"), pl.col("num_nonrel_ret")
            jg_ratio = (
                pl.when(r >= n)
                .then(
                    (pl.col("ful_ret") + pl.col("num_rel_ret") * (r - n))
                    / (pl.col("poss_ret") + pl.col("num_rel") * (r - n))
                )
                .otherwise(pl.col("rcr_ful") / pl.col("rcr_poss"))
            )
            avg_jg("prefs_avgjg_Rnonrel_ret", jg_ratio, table)
    pair_names = [n for n in ("prefs_pair", "prefs_pair_ret", "prefs_pair_imp") if n in wanted]
    if pair_names:
        parts.append(_pair_values(ec, pa_edges, rows, per_q.select("user"), pair_names))
    return pl.concat([p.select("user", "measure", pl.col("value").cast(pl.Float64)) for p in parts])


def _check_ec_levels(ec: pl.DataFrame, failures: list[Failure]) -> None:
    """A doc at two rel_levels in a one-JSG judgment group is trec_eval's failure."""
    clash = (
        ec.group_by("user", "g", "d")
        .agg(pl.col("lvl").n_unique().alias("n"), pl.col("lvl").max().alias("top"))
        .filter(pl.col("n") > 1)
        # the first the pair loop meets: highest level, then lowest docid
        .sort("g", pl.col("top"), "d", descending=[False, True, False])
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            1,
            f"trec_eval.form_prefs_counts: Internal docid {d} occurs with different "
            "rel_level in same jsg\ntrec_eval: Can't calculate measure",
            4,
        )
        for g, user, d in clash.select("g", "user", "d").rows()
    )


def _level_pair_counts(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pairs (x over y: lvl_x > lvl_y) by retrieval of x and y, from level counts.

    ``p_rr`` both retrieved, ``p_ru`` only x, ``p_ur`` only y, ``p_uu`` neither.
    """
    nr, nu = pl.col("nr"), pl.col("nu")
    return (
        rows.group_by(*keys, "lvl")
        .agg(pl.col("ret").sum().alias("nr"), (~pl.col("ret")).sum().alias("nu"))
        .sort(*keys, "lvl")
        .with_columns(
            (nr.cum_sum().over(keys) - nr).alias("lr"),  # rows at lower levels
            (nu.cum_sum().over(keys) - nu).alias("lu"),
        )
        .group_by(keys)
        .agg(
            (nr * pl.col("lr")).sum().alias("p_rr"),
            (nr * pl.col("lu")).sum().alias("p_ru"),
            (nu * pl.col("lr")).sum().alias("p_ur"),
            (nu * pl.col("lu")).sum().alias("p_uu"),
        )
    )


def _concordant(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pairs of retrieved rows with lvl_x > lvl_y and d_x < d_y (fulfilled, both retrieved).

    For each retrieved row x and each lower level L of its group: the level-L rows after
    x = all level-L rows minus those before x (an as-of lookup of a running count).
    """
    r = rows.filter(pl.col("ret")).select(*keys, "lvl", "d")
    if not r.height:
        return pl.DataFrame(schema={**{k: rows.schema[k] for k in keys}, "c": pl.Int64})
    per_level = r.group_by(*keys, "lvl").agg(pl.len().alias("n_l")).rename({"lvl": "low"})
    running = (
        r.group_by(*keys, "lvl", "d")
        .agg(pl.len().alias("k"))
        .sort("d")
        .with_columns(pl.col("k").cum_sum().over(*keys, "lvl").alias("before"))
        .select(*keys, pl.col("lvl").alias("low"), "d", "before")
    )
    lower = (
        r.join(per_level, on=keys)
        .filter(pl.col("low") < pl.col("lvl"))
        .sort("d")
        .join_asof(
            running,
            on="d",
            by=[*keys, "low"],
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,  # sorted on d globally, hence within each group
        )
    )
    return lower.group_by(keys).agg(
        (pl.col("n_l") - pl.col("before").fill_null(0)).sum().cast(pl.Int64).alias("c")
    )


def _rnonrel_recalc(
    ec: pl.DataFrame,
    pa_edges: pl.DataFrame,
    pa_rel: pl.DataFrame,
    jg_table: pl.DataFrame,
) -> pl.DataFrame:
    """The ``recalculate`` of m_prefs_avgjg_Rnonrel(_ret).c.

    For JGs with more nonrelevant than relevant docs: ``rc_*`` (all docs) and ``rcr_*``
    (retrieved docs only). One-JSG groups: the lowest-level class L is replaced by its
    first R rows S (R = num_rel; num_rel_ret and retrieved rows for ``_ret``); pairs are
    those between the other classes O plus every row against S (the C code also pairs L
    with S); a pair is fulfilled when x is retrieved and ranked above y. Counted from
    running counts. Preference-array groups: the nonrelevant docs after the R-th (by
    internal rank) are dropped from the closed preferences.
    """
    need = jg_table.filter(
        (pl.col("num_rel") < pl.col("num_nonrel"))
        | (pl.col("num_rel_ret") < pl.col("num_nonrel_ret"))
    ).select(
        "g",
        "num_rel",
        "num_rel_ret",
        "ful_ret",
        "poss_ret",
        "ful_imp",
        "poss_imp",
        "notoccur",
    )
    schema = {
        "g": pl.Int64,
        "rc_ful": pl.Int64,
        "rc_poss": pl.Int64,
        "rcr_ful": pl.Int64,
        "rcr_poss": pl.Int64,
    }
    if not need.height:
        return pl.DataFrame(schema=schema)
    # --- one-JSG groups
    rows = (
        ec.join(need.select("g", "num_rel", "num_rel_ret"), on="g")
        .sort("g", "d")
        .with_columns((pl.col("lvl") == pl.col("lvl").min().over("g")).alias("in_l"))
    )
    ret_i = pl.col("ret").cast(pl.Int64)
    o_ret = (~pl.col("in_l") & pl.col("ret")).cast(pl.Int64)
    rows = rows.with_columns(
        # rows strictly before d: running count minus the rows sharing this d
        (ret_i.cum_sum().over("g") - ret_i.cum_sum().over("g", "d")).alias("ret_before"),
        (o_ret.cum_sum().over("g") - o_ret.cum_sum().over("g", "d")).alias("o_ret_before"),
        pl.int_range(pl.len()).over("g", "in_l").alias("k"),
    )
    in_l, ret = pl.col("in_l"), pl.col("ret")
    in_s = in_l & (pl.col("k") < pl.col("num_rel"))
    in_s_ret = in_l & ret & (pl.col("k") < pl.col("num_rel_ret"))
    parts = rows.group_by("g").agg(
        pl.len().alias("n"),
        ret.sum().alias("n_ret"),
        (~in_l).sum().alias("n_o"),
        in_l.sum().alias("n_l"),
        (~in_l & ret).sum().alias("n_o_ret"),
        (in_l & ret).sum().alias("n_l_ret"),
        pl.col("o_ret_before").filter(in_l).sum().alias("sub_a"),
        pl.col("o_ret_before").filter(in_l & ret).sum().alias("sub_a_ret"),
        pl.col("ret_before").filter(in_s).sum().alias("ful_b"),
        in_s.sum().alias("n_s"),
        pl.col("ret_before").filter(in_s_ret).sum().alias("ful_b_ret"),
        in_s_ret.sum().alias("n_s_ret"),
    )
    c = pl.col
    p_all = c("poss_ret") + c("poss_imp") + c("notoccur")
    ec_rc = (
        parts.join(need, on="g")
        .with_columns(pl.all().exclude("g").cast(pl.Int64))
        .select(
            "g",
            (c("ful_ret") + c("ful_imp") - c("sub_a") + c("ful_b")).alias("rc_ful"),
            (p_all - c("n_o") * c("n_l") + c("n") * c("n_s")).alias("rc_poss"),
            (c("ful_ret") - c("sub_a_ret") + c("ful_b_ret")).alias("rcr_ful"),
            (c("poss_ret") - c("n_o_ret") * c("n_l_ret") + c("n_ret") * c("n_s_ret")).alias(
                "rcr_poss"
            ),
        )
    )
    # --- preference-array groups: nonrel docs after the (R+1)-th (by docid) are dropped
    pa_need = pa_rel.join(need.select("g", "num_rel"), on="g", how="inner")
    nonrel = pa_need.filter(pl.col("lvl") == 0).sort("g", "d")
    drop_all = nonrel.with_columns(pl.int_range(pl.len()).over("g").alias("k")).filter(
        pl.col("k") >= pl.col("num_rel")
    )
    drop_ret = (
        nonrel.filter(pl.col("d") < pl.col("njr"))
        .with_columns(pl.int_range(pl.len()).over("g").alias("k"))
        .filter(pl.col("k") >= pl.col("num_rel"))
    )
    edges = pa_edges.join(need.select("g"), on="g", how="semi").select("g", "d", "d_y", "njr")

    def keep(frame: pl.DataFrame, dropped: pl.DataFrame) -> pl.DataFrame:
        dd = dropped.select("g", "d")
        return frame.join(dd, on=["g", "d"], how="anti").join(
            dd.rename({"d": "d_y"}), on=["g", "d_y"], how="anti"
        )

    ful = (pl.col("d") < pl.col("d_y")) & (pl.col("d") < pl.col("njr"))
    pa_all = (
        keep(edges, drop_all)
        .group_by("g")
        .agg(ful.sum().alias("rc_ful"), pl.len().alias("rc_poss"))
    )
    pa_ret = (
        keep(edges, drop_ret)
        .filter((pl.col("d") < pl.col("njr")) & (pl.col("d_y") < pl.col("njr")))
        .group_by("g")
        .agg(ful.sum().alias("rcr_ful"), pl.len().alias("rcr_poss"))
    )
    pa_rc = (
        need.select("g")
        .join(pa_need.select("g").unique(), on="g", how="semi")
        .join(pa_all, on="g", how="left")
        .join(pa_ret, on="g", how="left")
    )
    cols = ["rc_ful", "rc_poss", "rcr_ful", "rcr_poss"]
    return pl.concat(
        [
            ec_rc.select("g", *(pl.col(x).cast(pl.Int64) for x in cols)),
            pa_rc.select("g", *(pl.col(x).fill_null(0).cast(pl.Int64) for x in cols)),
        ]
    )


def _pair_values(
    ec: pl.DataFrame,
    pa_edges: pl.DataFrame,
    rows: pl.DataFrame,
    queries: pl.DataFrame,
    names: Iterable[str],
) -> pl.DataFrame:
    """prefs_pair(_ret, _imp): mean over doc pairs of the share favouring the better-ranked.

    Per unordered doc pair, the share of its preferences (over JGs, with multiplicity)
    that favour the better-ranked doc, averaged over pairs (area 0: both retrieved, 1:
    one, 2: neither, which counts as a pair with share 0). A pair can be judged more than
    once only when both docs occur in two or more JGs: those pairs (and the preference
    array pairs) are expanded and grouped; the other one-JSG pairs are single and counted
    from level counts of the distinct (JG, doc) rows.
    """
    multi = (
        rows.group_by("user", "d")
        .agg(pl.col("g").n_unique().alias("n_g"))
        .filter(pl.col("n_g") > 1)
        .select("user", "d")
    )
    dedup = ec.unique(["g", "d"])
    # pairs between docs both in several JGs, with row multiplicity (a doc listed twice
    # in a one-JSG group counts twice in that group's preferences)
    dm = ec.join(multi, on=["user", "d"], how="semi")
    expanded = (
        dm.lazy()
        .join(
            dm.lazy().select("g", pl.col("lvl").alias("lvl_y"), pl.col("d").alias("d_y")),
            on="g",
        )
        .filter(pl.col("lvl") > pl.col("lvl_y"))
        .select("g", "user", "d", "d_y", "njr")
        .collect()
    )

    # single pairs: all distinct one-JSG pairs minus the expanded (multi-multi) ones
    def area_counts(pairs_lc: pl.DataFrame, conc: pl.DataFrame, sign: int) -> pl.DataFrame:
        return (
            pairs_lc.join(conc, on="user", how="left")
            .with_columns(pl.col("c").fill_null(0))
            .select(
                "user",
                (sign * pl.col("p_rr")).alias("n0"),
                (sign * pl.col("c")).alias("s0"),
                (sign * (pl.col("p_ru") + pl.col("p_ur"))).alias("n1"),
                (sign * pl.col("p_ru")).alias("s1"),
                (sign * pl.col("p_uu")).alias("n2"),
            )
        )

    all_lc = (
        _level_pair_counts(dedup, ["g", "user"]).group_by("user").agg(pl.all().exclude("g").sum())
    )
    all_c = _concordant(dedup, ["g", "user"]).group_by("user").agg(pl.col("c").sum())
    x_ret = pl.col("d") < pl.col("njr")
    y_ret = pl.col("d_y") < pl.col("njr")
    exp_counts = (
        expanded.unique(["g", "d", "d_y"])
        .group_by("user")
        .agg(
            (x_ret & y_ret).sum().alias("p_rr"),
            (x_ret & ~y_ret).sum().alias("p_ru"),
            (~x_ret & y_ret).sum().alias("p_ur"),
            (~x_ret & ~y_ret).sum().alias("p_uu"),
            (x_ret & y_ret & (pl.col("d") < pl.col("d_y"))).sum().alias("c"),
        )
    )
    singles = (
        pl.concat(
            [
                area_counts(
                    all_lc.with_columns(pl.all().exclude("user").cast(pl.Int64)),
                    all_c.with_columns(pl.col("c").cast(pl.Int64)),
                    1,
                ),
                area_counts(
                    exp_counts.drop("c").with_columns(pl.all().exclude("user").cast(pl.Int64)),
                    exp_counts.select("user", pl.col("c").cast(pl.Int64)),
                    -1,
                ),
            ]
        )
        .group_by("user")
        .agg(pl.all().sum())
    )
    by_pair = _by_pair(pl.concat([expanded.drop("g"), pa_edges.select("user", "d", "d_y", "njr")]))
    grouped = by_pair.group_by("user").agg(
        *((pl.col("area") == a).sum().alias(f"gn{a}") for a in (0, 1, 2)),
        *(pl.col("share").filter(pl.col("area") == a).sum().alias(f"gs{a}") for a in (0, 1)),
    )
    table = (
        queries.join(singles, on="user", how="left")
        .join(grouped, on="user", how="left")
        .with_columns(pl.all().exclude("user").fill_null(0))
        .with_columns(
            (pl.col("n0") + pl.col("gn0")).alias("n0"),
            (pl.col("n1") + pl.col("gn1")).alias("n1"),
            (pl.col("n2") + pl.col("gn2")).alias("n2"),
            (pl.col("s0") + pl.col("gs0")).alias("s0"),
            (pl.col("s0") + pl.col("gs0") + pl.col("s1") + pl.col("gs1")).alias("s01"),
        )
    )
    # Shares like 1/3 (three JGs in conflict) make a floating-point sum depend on its
    # order; dyadic shares (0, 1, 1/2, 3/4...) add up exactly in any order. For queries
    # with a non-dyadic share, add them up as trec_eval does, pair by pair in order.
    scaled = pl.col("share") * 1048576.0
    mixed = (
        by_pair.filter((pl.col("area") < 2) & (scaled != scaled.round())).select("user").unique()
    )
    if mixed.height:
        # single pairs met: (x over y) with x retrieved and ranked above y, share 1
        e = (
            dedup.join(mixed, on="user", how="semi")
            .join(multi.with_columns(pl.lit(True).alias("m")), on=["user", "d"], how="left")
            .with_columns(pl.col("m").fill_null(False))
        )
        singles_met = (
            e.lazy()
            .join(
                e.lazy().select(
                    "g",
                    pl.col("lvl").alias("lvl_y"),
                    pl.col("d").alias("d_y"),
                    pl.col("m").alias("m_y"),
                ),
                on="g",
            )
            .filter(
                (pl.col("lvl") > pl.col("lvl_y"))
                & (pl.col("d") < pl.col("d_y"))
                & (pl.col("d") < pl.col("njr"))
                & ~(pl.col("m") & pl.col("m_y"))
            )
            .select(
                "user",
                pl.col("d").alias("lo"),
                pl.col("d_y").alias("hi"),
                (pl.col("d_y") < pl.col("njr")).alias("area0"),
                pl.lit(1.0).alias("share"),
            )
            .collect()
        )
        shared_met = by_pair.join(mixed, on="user", how="semi").filter(
            (pl.col("area") < 2) & (pl.col("fav") > 0)
        )
        exact = _ordered_share_sums(
            pl.concat(
                [
                    singles_met,
                    shared_met.select(
                        "user", "lo", "hi", (pl.col("area") == 0).alias("area0"), "share"
                    ),
                ]
            )
        )
        table = (
            table.join(exact, on="user", how="left")
            .with_columns(
                pl.when(pl.col("user").is_in(mixed["user"].implode()))
                .then(pl.col("x0").fill_null(0.0))
                .otherwise(pl.col("s0"))
                .alias("s0"),
                pl.when(pl.col("user").is_in(mixed["user"].implode()))
                .then(pl.col("x01").fill_null(0.0))
                .otherwise(pl.col("s01"))
                .alias("s01"),
            )
            .drop("x0", "x01")
        )
    spec = {
        "prefs_pair": (pl.col("s01"), pl.col("n0") + pl.col("n1") + pl.col("n2")),
        "prefs_pair_ret": (pl.col("s0"), pl.col("n0")),
        "prefs_pair_imp": (pl.col("s01"), pl.col("n0") + pl.col("n1")),
    }
    return pl.concat(
        [
            table.select(
                "user",
                pl.lit(name).alias("measure"),
                pl.when(spec[name][1] > 0)
                .then(spec[name][0] / spec[name][1])
                .otherwise(0.0)
                .alias("value"),
            )
            for name in names
        ]
    )


def _ordered_share_sums(met: pl.DataFrame) -> pl.DataFrame:
    """Per query, the pair shares added up in trec_eval's order (x0: area 0, x01: 0 and 1).

    ``met``: one row per doc pair with a share > 0 (``user, lo, hi, area0, share``).
    trec_eval adds the shares pair by pair, by internal rank of the better doc then of
    the other, area 0 first; floating-point addition depends on that order (adding the
    zero shares changes nothing).
    """
    queries = met.select("user").unique().with_row_index("q")
    ordered = (
        met.join(queries, on="user")
        .select("q", "area0", "lo", "hi", "share")
        .sort("q", "area0", "lo", "hi", descending=[False, True, False, False])
    )
    x0 = (
        ordered.filter(pl.col("area0"))
        .with_columns(pl.col("share").cum_sum().over("q").alias("x0"))
        .group_by("q")
        .agg(pl.col("x0").last())
    )
    x01 = (
        ordered.with_columns(pl.col("share").cum_sum().over("q").alias("x01"))
        .group_by("q")
        .agg(pl.col("x01").last())
    )
    return (
        queries.join(x0, on="q", how="left")
        .join(x01, on="q", how="left")
        .select("user", pl.col("x0").fill_null(0.0), pl.col("x01").fill_null(0.0))
    )


def _by_pair(pairs: pl.DataFrame) -> pl.DataFrame:
    """Preferences (d over d_y) grouped by unordered doc pair (lo, hi) of a query.

    ``fav`` counts those favouring the better-ranked doc ``lo``, ``tot`` all of them;
    ``area`` 0: both retrieved, 1: only ``lo``, 2: neither; ``share`` = fav / tot.
    """
    return (
        pairs.with_columns(
            pl.min_horizontal("d", "d_y").alias("lo"), pl.max_horizontal("d", "d_y").alias("hi")
        )
        .group_by("user", "lo", "hi")
        .agg(
            (pl.col("d") == pl.col("lo")).sum().alias("fav"),
            pl.len().alias("tot"),
            pl.col("njr").first(),
        )
        .with_columns(
            pl.when(pl.col("hi") < pl.col("njr"))
            .then(0)
            .when(pl.col("lo") < pl.col("njr"))
            .then(1)
            .otherwise(2)
            .alias("area"),
            (pl.col("fav") / pl.col("tot")).alias("share"),
        )
    )


def _pa_rel_levels(pa_rows: pl.DataFrame, failures: list[Failure]) -> pl.DataFrame:
    """Final rel_level of each doc of a preference-array JG; check 0 vs non-0 clashes."""
    ordered = pa_rows.sort(
        pl.col("user"),
        pl.col("jg"),
        pl.col("jsg"),
        pl.col("lvl"),
        pl.col("d"),
        descending=[False, False, False, True, False],
    ).with_row_index("_seq")
    prev = pl.col("lvl").shift(1).over("user", "jg", "d", order_by="_seq").fill_null(-1.0)
    checked = ordered.with_columns(prev.alias("prev"))
    bad = (
        checked.filter(
            ((pl.col("prev") > 0) & (pl.col("lvl") == 0))
            | ((pl.col("prev") == 0) & (pl.col("lvl") > 0))
        )
        .sort("_seq")
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            1,
            f"trec_eval.form_prefs_counts: doc '{item}' has both 0 and non-0 "
            "rel_level assigned\ntrec_eval: Can't calculate measure",
            4,
        )
        for user, g, item in bad.select("user", "g", "item").rows()
    )
    return (
        checked.sort("_seq")
        .group_by("user", "jg", "d", maintain_order=True)
        .agg(pl.col("lvl").last(), pl.col("njr").first(), pl.col("item").first())
    )


def _pa_closure(pa_rows: pl.DataFrame, failures: list[Failure]) -> pl.DataFrame:
    """Distinct preferences (d over d_y) of each preference-array JG, transitively closed.

    A conflict (both directions) is trec_eval's abort.
    """
    base = pa_rows.select("user", "jg", "jsg", "lvl", "d")
    edges = (
        base.join_where(
            base.rename({"user": "u2", "jg": "j2", "jsg": "s2", "lvl": "lvl_y", "d": "d_y"}),
            pl.col("user") == pl.col("u2"),
            pl.col("jg") == pl.col("j2"),
            pl.col("jsg") == pl.col("s2"),
            pl.col("lvl") > pl.col("lvl_y"),
        )
        .select("user", "jg", "d", "d_y")
        .filter(pl.col("d") != pl.col("d_y"))
        .unique()
    )
    size = edges.height
    while size:
        step = (
            edges.join(
                edges.rename({"d": "d_y", "d_y": "d_z"}), on=["user", "jg", "d_y"], how="inner"
            )
            .select("user", "jg", "d", pl.col("d_z").alias("d_y"))
            .filter(pl.col("d") != pl.col("d_y"))
        )
        edges = pl.concat([edges, step]).unique()
        if edges.height == size:
            break
        size = edges.height
    conflict = (
        edges.join(
            edges.rename({"d": "d_y", "d_y": "d"}), on=["user", "jg", "d", "d_y"], how="semi"
        )
        .join(pa_rows.select("user", "jg", "g").unique(), on=["user", "jg"])
        .sort("g", "d", "d_y")
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            2,
            "trec_eval.form_prefs_counts: Pref inconsistency found\n"
            f"      internal rank {d} and internal rank {d_y} are conflicted",
            134,
        )
        for user, g, d, d_y in conflict.select("user", "g", "d", "d_y").rows()
    )
    njr = pa_rows.select("user", "njr").unique()
    return edges.join(njr, on="user")

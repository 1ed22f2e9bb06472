"""Issue 15: the options that reproduce other libraries, and the ``conventions=`` presets.

Expected values are hard-coded from each library's own tests or docstrings (cited per
test; the research note /work/notes/conventions_research.md lists them), or computed by
the library itself where it is installed (ranx, pytrec_eval, ir_measures, jurity, cornac,
scikit-learn).
"""

from __future__ import annotations

import itertools
import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.cli import main
from polars_rankeval.conventions import PRESETS
from polars_rankeval.conventions.resolve import conventions, explicit_rules
from tests.frames import (
    HIVEMALL_LIST,
    HIVEMALL_RELEVANT,
    MS_TRAIN,
    RECTOOLS_PREV,
    RECTOOLS_RECO,
    RECTOOLS_TEST,
    TWO_TIED,
    rectools_frame,
)

ROOT = Path(__file__).resolve().parents[2]
LOG2_3 = math.log2(3)


def frame(
    recs: dict[Any, list[tuple[Any, float]]],
    truth: dict[Any, dict[Any, float]],
    *,
    rank: bool = False,
) -> pl.DataFrame:
    """Long format: recommended rows (relevance from the truth, 0 if absent), plus the
    relevant items never recommended (null score); users without truth get null
    relevance (not judged)."""
    rows = []
    for user in sorted({*recs, *truth}):
        judged = truth.get(user)
        listed = recs.get(user, [])
        for position, (item, score) in enumerate(listed, 1):
            rel = None if judged is None else judged.get(item, 0.0)
            rows.append((user, item, float(position) if rank else score, rel))
        for item, rel in (judged or {}).items():
            if item not in {i for i, _ in listed}:
                rows.append((user, item, None, rel))
    schema = {"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def per_user(df: pl.DataFrame, metrics: list[str], preset: str, **kw: Any) -> pl.DataFrame:
    return prk.evaluate(df, metrics, conventions=preset, per_user=True, **kw).sort("user")


# --------------------------------------------------------------------------- options
HIVEMALL = frame(
    {1: list(zip(HIVEMALL_LIST, [4.0, 3.0, 2.0, 1.0], strict=True))},
    {1: dict.fromkeys(HIVEMALL_RELEVANT, 1)},
)


def test_map_denominators_hand_computed() -> None:
    # Relevant at ranks 1 and 3 of [1, 3, 2, 6]; 3 relevant items (4 never recommended).
    got = HIVEMALL.select(
        prk.map(4, denominator="hits"),
        prk.map(2, denominator="hits"),
        prk.map(4, denominator="k"),
        prk.map(4),
        prk.map(4, denominator="min_k_relevant"),
        prk.map(denominator="hits"),
        prk.map(denominator="k"),
        prk.map(2, denominator="min_list_relevant"),
        prk.map(6, denominator="min_list_relevant"),
    ).row(0)
    assert got == pytest.approx(
        [
            (1 + 2 / 3) / 2,
            1 / 1,
            (1 + 2 / 3) / 4,
            (1 + 2 / 3) / 3,
            (1 + 2 / 3) / 3,
            (1 + 2 / 3) / 2,
            (1 + 2 / 3) / 3,
            1 / 2,  # k=2: one hit, / min(3, 2, 4)
            (1 + 2 / 3) / 3,  # k=6: / min(3, 6, 4)
        ]
    )


def test_map_by_hits_with_ties_hand_computed() -> None:
    # Items 1 (relevant) and 2 tied at the top, item 3 (relevant) third.
    tied = frame({1: [(1, 1.0), (2, 1.0), (3, 0.5)]}, {1: {1: 1, 2: 0, 3: 1}})
    exprs = [prk.map(k, denominator="hits") for k in (1, 2, 3)]
    # k=1: the relevant item is first w.p. 1/2 (AP 1), else no hit (0) -> 1/2.
    # k=2: [R, N] 1/1 or [N, R] (1/2)/1 -> 3/4.
    # k=3: [R, N, R] (1 + 2/3)/2 = 5/6 or [N, R, R] (1/2 + 2/3)/2 = 7/12 -> 17/24.
    assert tied.select(exprs).row(0) == pytest.approx([1 / 2, 3 / 4, 17 / 24])
    got = prk.evaluate(tied, ["map(denominator=hits)@[1,2,3]"]).row(0)[:3]
    assert got == pytest.approx([1 / 2, 3 / 4, 17 / 24])
    # min_list_relevant at k=2: E[1 or 1/2] = 3/4 over min(2 relevant, 2, 3 recommended).
    assert tied.select(prk.map(2, denominator="min_list_relevant")).item() == pytest.approx(3 / 8)
    det = tied.select(prk.map(1, denominator="hits", ties="item_desc")).item()
    assert det == 0.0  # item 2 first: no hit


def _ap_hits(rels: list[int], k: int) -> float:
    hits, total = 0, 0.0
    for i, rel in enumerate(rels[:k]):
        if rel:
            hits += 1
            total += hits / (i + 1)
    return total / hits if hits else 0.0


def test_map_by_hits_is_the_expectation_over_tied_orderings() -> None:
    rng = random.Random(15)
    for _ in range(25):
        n = rng.randint(1, 6)
        scores = [float(rng.choice([1, 2, 3])) for _ in range(n)]
        rels = [rng.choice([0, 1]) for _ in range(n)]
        rels[0] = 1
        k = rng.randint(1, n + 1)
        orders = [
            p
            for p in itertools.permutations(range(n))
            if all(scores[p[i]] >= scores[p[i + 1]] for i in range(n - 1))
        ]
        brute = sum(_ap_hits([rels[i] for i in p], k) for p in orders) / len(orders)
        df = pl.DataFrame(
            {"user": [1] * n, "item": list(range(n)), "score": scores, "relevance": rels}
        )
        assert df.select(prk.map(k, denominator="hits")).item() == pytest.approx(brute)
        curve = prk.evaluate(df, [f"map(denominator=hits)@[{k},{k + 1}]"]).item(0, 0)
        assert curve == pytest.approx(brute)


def test_ndcg_ideal_of_k_items_hand_computed() -> None:
    one = frame({1: [(1, 2.0), (2, 1.0)]}, {1: {1: 1}})
    idcg3 = 1 + 1 / LOG2_3 + 1 / 2
    assert one.select(prk.ndcg(3, idcg="k")).item() == pytest.approx(1 / idcg3)  # 0.4693
    assert one.select(prk.ndcg(1, idcg="k")).item() == 1.0
    # Tied: the relevant item is at rank 1 or 2 w.p. 1/2: (1 + 1/log2 3) / 2 / idcg3.
    tied = frame({1: [(1, 1.0), (2, 1.0)]}, {1: {1: 1}})
    expected = (1 + 1 / LOG2_3) / 2 / idcg3
    assert tied.select(prk.ndcg(3, idcg="k")).item() == pytest.approx(expected)
    assert prk.evaluate(tied, ["ndcg(idcg=k)@[1,3]"]).row(0)[:2] == pytest.approx([1 / 2, expected])
    # Graded: k items of the user's highest gain (3): dcg 3 + 1/log2 3 over 3 * idcg2.
    graded = frame({1: [(1, 2.0), (2, 1.0)]}, {1: {1: 3, 2: 1}})
    assert graded.select(prk.ndcg(2, idcg="k")).item() == pytest.approx(
        (3 + 1 / LOG2_3) / (3 * (1 + 1 / LOG2_3))
    )
    with pytest.raises(ValueError, match=r"ndcg\(idcg=k\) needs a cutoff @k"):
        one.select(prk.ndcg(idcg="k"))


def test_classification_with_a_list_of_k_items_hand_computed() -> None:
    # Items 1..3 recommended (1 and 3 relevant), item 6 relevant and never recommended;
    # catalog of 10, k = 5: the list holds 3 items (L = 3) or, RecTools, k = 5.
    df = frame({1: [(1, 3.0), (2, 2.0), (3, 1.0)]}, {1: {1: 1, 3: 1, 6: 1}})
    got = df.select(
        prk.accuracy(5, n_items=10),
        prk.accuracy(5, n_items=10, denominator="k"),
        prk.mcc(5, n_items=10),
        prk.mcc(5, n_items=10, denominator="k"),
        prk.fbeta(5, n_items=10),
        prk.fbeta(5, n_items=10, denominator="k"),
        prk.fbeta(2, n_items=10, denominator="k"),
    ).row(0)
    assert got == pytest.approx(
        [
            (2 + (10 - 3 - 3 + 2)) / 10,  # tp 2, tn 6
            (2 + (10 - 5 - 3 + 2)) / 10,  # tp 2, fp = 5 - 2, tn 4
            (10 * 2 - 3 * 3) / math.sqrt(3 * 3 * 7 * 7),
            (10 * 2 - 5 * 3) / math.sqrt(5 * 3 * 5 * 7),
            2 * 2 / (3 + 3),
            2 * 2 / (3 + 5),
            2 * 1 / (3 + 2),
        ]
    )
    # Without a cutoff the list is every recommended row for both sizes.
    assert df.select(prk.accuracy(n_items=10, denominator="k")).item() == 0.8
    # Ties: items 1 (relevant) and 2 tied for the top at k = 1: E[tp] = 1/2, linear.
    tied = frame({1: [(1, 2.0), (2, 2.0), (3, 1.0)]}, {1: {1: 1, 3: 1, 6: 1}})
    exp = tied.select(
        prk.accuracy(1, n_items=10, denominator="k"),
        prk.mcc(1, n_items=10, denominator="k"),
        prk.fbeta(1, n_items=10, denominator="k"),
    ).row(0)
    assert exp == pytest.approx(
        [
            (0.5 + (10 - 1 - 3 + 0.5)) / 10,
            (10 * 0.5 - 1 * 3) / math.sqrt(1 * 3 * 9 * 7),
            2 * 0.5 / (3 + 1),
        ]
    )
    det = tied.select(prk.accuracy(1, n_items=10, denominator="k", ties="item_desc")).item()
    assert det == (0 + (10 - 1 - 3 + 0)) / 10  # item 2 first: no hit
    curve = prk.evaluate(tied, ["mcc(denominator=k)@[1,5]"], n_items=10).row(0)[:2]
    assert curve == pytest.approx([exp[1], (10 * 2 - 5 * 3) / math.sqrt(5 * 3 * 5 * 7)])


def test_r_precision_cut_hand_computed() -> None:
    # Relevant 1, 2, 4 (R = 3); list [1, 3, 2, 6]: hits within min(k, 3) ranks.
    df = HIVEMALL
    got = df.select(
        prk.r_precision_cut(1),  # rank 1: item 1 -> 1/3
        prk.r_precision_cut(2),  # ranks 1-2: [1, 3] -> 1/3
        prk.r_precision_cut(3),  # ranks 1-3: [1, 3, 2] -> 2/3
        prk.r_precision_cut(10),  # still min(10, 3) = 3 ranks -> 2/3 = r_precision
        prk.r_precision(),
    ).row(0)
    assert got == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3])
    late = frame({1: [(5, 3.0), (1, 2.0), (2, 1.0)]}, {1: {1: 1, 2: 1}})  # R = 2
    assert late.select(prk.r_precision_cut(1)).item() == 0.0  # rank 1 not relevant
    und = late.select(prk.r_precision_cut(1, no_hit="undefined", ties="item_desc")).item()
    assert und is None
    assert late.select(prk.r_precision_cut(2, no_hit="undefined", ties="item_desc")).item() == 0.5
    # Ties: items 5 (not relevant) and 1 (relevant) tied at the top, R = 2, k = 1: the
    # relevant one is first w.p. 1/2 -> E = (1/2) / 2. At k = 5: min(5, 2) = 2 ranks hold
    # the tie group {5, 1}: exactly one hit -> 1/2.
    tied = frame({1: [(5, 2.0), (1, 2.0), (2, 1.0)]}, {1: {1: 1, 2: 1}})
    assert tied.select(prk.r_precision_cut(1), prk.r_precision_cut(5)).row(0) == pytest.approx(
        [1 / 4, 1 / 2]
    )
    assert prk.evaluate(tied, ["r_precision_cut@[1,5]"]).row(0)[:2] == pytest.approx([1 / 4, 1 / 2])
    with pytest.raises(ValueError, match="no_hit='undefined' needs a deterministic tie"):
        tied.select(prk.r_precision_cut(1, no_hit="undefined"))
    # item_asc puts item 1 first (hit), item_desc item 5 (no hit: undefined).
    asc = prk.evaluate(tied, ["r_precision_cut(no_hit=undefined)@1"], ties="item_asc")
    desc = prk.evaluate(tied, ["r_precision_cut(no_hit=undefined)@1"], ties="item_desc")
    assert asc.item(0, 0) == 1 / 2
    assert desc.item(0, 0) is None


def test_fallout_over_the_candidates_hand_computed() -> None:
    # Rows 1..4 scored (1 and 3 relevant), 5 unjudged and unscored, 6 relevant unscored:
    # 6 candidates, 3 relevant, negatives 2, 4, 5.
    df = pl.DataFrame(
        {
            "user": [1] * 6,
            "item": [1, 2, 3, 4, 5, 6],
            "score": [4.0, 3.0, 2.0, 1.0, None, None],
            "relevance": [1.0, 0.0, 1.0, 0.0, None, 1.0],
        }
    )
    got = df.select(
        prk.fallout(2, n_items=100, catalog="candidates"),  # [1, 2]: fp 1 / 3
        prk.fallout(10, n_items=100, catalog="candidates"),  # [1..4]: fp 2 / 3
        prk.fallout(n_items=100, catalog="candidates"),  # whole list: 2 / 3
        prk.fallout(2, n_items=100),  # catalog of 100: 1 / (100 - 3)
    ).row(0)
    assert got == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1 / 97])
    # Ties: items 1 (relevant) and 2 tied at the top, k = 1: E[fp] = 1/2 -> (1/2) / 3.
    tied = df.with_columns(score=pl.Series([4.0, 4.0, 2.0, 1.0, None, None]))
    exp = tied.select(prk.fallout(1, n_items=100, catalog="candidates")).item()
    assert exp == pytest.approx(1 / 6)
    assert prk.evaluate(tied, ["fallout(catalog=candidates)@[1,2]"]).row(0)[:2] == pytest.approx(
        [1 / 6, 1 / 3]
    )
    # Without a negative candidate: null, 1 or 0.
    allpos = df.filter(pl.col("relevance") == 1)
    opts = [
        prk.fallout(2, n_items=100, catalog="candidates"),
        prk.fallout(2, n_items=100, catalog="candidates", no_negative="one"),
        prk.fallout(2, n_items=100, catalog="candidates", no_negative="zero"),
    ]
    assert allpos.select(opts).row(0) == (None, 1.0, 0.0)
    # no_negative with a catalog: every catalog item relevant (N = R = 3).
    assert allpos.select(prk.fallout(2, n_items=3, no_negative="one")).item() == 1.0


def test_auc_degenerate_heads() -> None:
    # Hivemall BinaryResponsesMeasuresTest.testAUC: [1,3,2,6] vs truth [1,2,4]: k=4 0.75,
    # k=2 1.0; all TP (truth [1,3,2,6]) 0.5; all FP (truth [7,8,9,10]) 0.5.
    all_tp = frame({1: [(1, 4.0), (3, 3.0), (2, 2.0), (6, 1.0)]}, {1: {1: 1, 3: 1, 2: 1, 6: 1}})
    all_fp = frame({1: [(1, 4.0), (3, 3.0), (2, 2.0), (6, 1.0)]}, {1: {7: 1, 8: 1, 9: 1, 10: 1}})
    half = [prk.auc(4, degenerate="half")]
    assert HIVEMALL.select(prk.auc(4, degenerate="half"), prk.auc(2, degenerate="half")).row(0) == (
        0.75,
        1.0,
    )
    assert all_tp.select(half).item() == 0.5
    assert all_fp.select(half).item() == 0.5
    assert all_tp.select(prk.auc(4)).item() == 1.0  # zero_one (RePlay)
    assert all_fp.select(prk.auc(4)).item() == 0.0
    assert all_tp.select(prk.auc(4, degenerate="zero")).item() == 0.0  # torchmetrics
    # A tie straddling k: [R, N] tied with k=1: the head is [R] or [N], one class each.
    tied = frame({1: [(1, 1.0), (2, 1.0)]}, {1: {1: 1}})
    assert tied.select(prk.auc(1, degenerate="half")).item() == pytest.approx(0.5)
    assert tied.select(prk.auc(1)).item() == pytest.approx(0.5)  # 1/2 * 1 + 1/2 * 0
    assert tied.select(prk.auc(1, degenerate="zero")).item() == 0.0


# --------------------------------------------------------------------------- presets
@pytest.mark.parametrize("command", [[], ["compare"]])
def test_the_cli_offers_every_preset(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--conventions`` of evaluate and compare: its choices are the presets, in order."""
    assert main([*command, "--conventions", "nope", "-m", "map@10"]) == 2
    choices = capsys.readouterr().err.rpartition("(choose from ")[2].rstrip().rstrip(")")
    assert [c.strip(" '") for c in choices.split(",")] == list(PRESETS)


def test_every_preset_maps_to_valid_metrics() -> None:
    for convention in PRESETS.values():
        for mapped in convention.metrics:
            if mapped.metric is None:
                assert mapped.note, (convention.name, mapped.name)
                continue
            text = mapped.metric + ("@10" if mapped.cutoff != "none" else "")
            prk.parse_metric(text)  # valid grammar and options


def test_the_rules_left_to_a_preset_are_those_at_evaluates_defaults() -> None:
    """``ties``/``empty``/``users`` at ``evaluate``'s defaults (read from its signature,
    not a copy) are left to the preset; any other value is the caller's."""
    at_defaults = {"ties": "expected", "empty": "skip", "users": "truth"}
    assert explicit_rules(at_defaults, prk.evaluate) == {}
    given = {"ties": "item_asc", "empty": "zero", "users": ["u1"]}
    assert explicit_rules(given, prk.evaluate) == given

    def other(*, ties: str = "item_asc", empty: str = "zero", users: str = "both") -> None:
        """A function with other defaults: they are the ones read."""

    assert explicit_rules(at_defaults, other) == at_defaults
    assert explicit_rules({"ties": "item_asc", "empty": "zero", "users": "both"}, other) == {}


def test_conventions_table() -> None:
    table = conventions("rectools")
    row = table.filter(pl.col("library_metric") == "NDCG").row(0, named=True)
    assert row["metric"] == "ndcg(idcg=k)"
    assert row["empty"] == "skip"
    assert row["rank_positions"] == "absolute"  # RecTools' ranks keep their gaps
    assert set(conventions("ranx")["rank_positions"]) == {"relative"}
    assert set(conventions()["preset"]) == set(PRESETS)
    with pytest.raises(
        ValueError,
        match=r"argument 'name' of conventions must be one of \[.*\] or None, got 'nope'",
    ):
        conventions("nope")


def test_rectools_intersection_through_rank_similarity() -> None:
    # RecTools' Intersection compares two recommendation tables: rank_similarity under the
    # preset. tests/metrics/test_intersection.py, TestCalcIntersectionMetrics: reco (3, 2)
    # and (1), ref_reco (3, 5) and (1); Intersection(k=2, ref_k=1): (1/2 + 1) / 2 = 0.75.
    row = conventions("rectools").filter(pl.col("library_metric") == "Intersection")
    assert row.select("metric", "entry", "users").row(0) == ("intersection", "rank_similarity", "a")
    reco = pl.DataFrame({"user": [1, 1, 2], "item": [3, 2, 1], "rank": [1, 2, 1]})
    ref = pl.DataFrame({"user": [1, 1, 2], "item": [3, 5, 1], "rank": [1, 2, 1]})
    name = "Intersection(ref_k=1)@2"
    out = prk.rank_similarity(reco, ref, [name], rank="rank", conventions="rectools")
    assert out[f"{name}[rectools]"].item() == (1 / 2 + 1) / 2
    with pytest.raises(
        ValueError, match=r"compares two recommendation tables: prk.rank_similarity"
    ):
        prk.evaluate(reco.with_columns(relevance=1), ["Intersection@2"], rank="rank",
                     conventions="rectools")  # fmt: skip
    both = pl.concat([reco.with_columns(system=pl.lit(s), relevance=1) for s in "ab"])
    with pytest.raises(ValueError, match=r"compares two recommendation tables"):
        prk.compare(both, ["Intersection@2"], by="system", rank="rank", conventions="rectools")


def test_refused_and_unknown_metrics_say_why() -> None:
    # RecTools' Intersection is reproduced by rank_similarity: evaluate points there.
    with pytest.raises(ValueError, match=r"RecTools's Intersection compares two recommendation"):
        prk.evaluate(HIVEMALL, ["Intersection@2"], conventions="rectools")
    with pytest.raises(ValueError, match="RecTools has no metric 'ndcg_burges'"):
        prk.evaluate(HIVEMALL, ["ndcg_burges@5"], conventions="rectools")
    with pytest.raises(ValueError, match="needs a cutoff"):
        prk.evaluate(HIVEMALL, ["MAP"], conventions="rectools")
    with pytest.raises(ValueError, match="names convention 'ranx'"):
        prk.evaluate(HIVEMALL, ["MAP@3[ranx]"], conventions="rectools")
    with pytest.raises(ValueError, match="sets ties='item_desc'"):
        prk.evaluate(HIVEMALL, ["map"], conventions="trec_eval", ties="pessimistic")
    # A metric's own user set is the call's when users= is left out; another is refused.
    with pytest.raises(ValueError, match="averages over users='both', the call has users='recs'"):
        prk.evaluate(HIVEMALL, ["Precision@2"], conventions="jurity", users="recs")
    with pytest.raises(ValueError, match=r"Precision@2 over users='both'; Recall@2 over users="):
        prk.evaluate(HIVEMALL, ["Precision@2", "Recall@2"], conventions="jurity")
    with pytest.raises(ValueError, match=r"a \[library\] suffix names a convention"):
        prk.evaluate(HIVEMALL, ["map@10[rectools]"])
    # A cutoff written into the name gets the grammar's form (trec_eval's own P_5 and
    # ndcg_cut.10 are read as trec_eval reads them: test_trec_eval_preset_reads_...).
    with pytest.raises(ValueError, match="a cutoff is written with @: MAP@10"):
        prk.evaluate(HIVEMALL, ["MAP_10"], conventions="rectools")
    with pytest.raises(ValueError, match="a cutoff is written with @: ndcg@5"):
        prk.evaluate(HIVEMALL, ["ndcg.5"], conventions="ranx")
    with pytest.raises(ValueError, match=r"reproduces; its metrics here: [^;]*$"):
        prk.evaluate(HIVEMALL, ["map_99x"], conventions="trec_eval")  # no hint


def test_output_names_say_the_convention() -> None:
    out = prk.evaluate(HIVEMALL, ["average_precision@4", "auc@[2,4]"], conventions="hivemall")
    assert out.columns[:3] == [
        "average_precision@4[hivemall]",
        "auc@2[hivemall]",
        "auc@4[hivemall]",
    ]
    assert "n_users(auc@4[hivemall])" in out.columns
    long = prk.evaluate(HIVEMALL, ["mrr@4"], conventions="hivemall", summary="long")
    assert long["metric"].to_list() == ["mrr@4[hivemall]"]
    # The suffix may be written on the input too.
    again = prk.evaluate(HIVEMALL, ["mrr@4[hivemall]"], conventions="hivemall")
    assert again.columns[0] == "mrr@4[hivemall]"


def test_hivemall() -> None:
    # apache/incubator-hivemall core/src/test/java/hivemall/evaluation/
    # BinaryResponsesMeasuresTest.java: rankedList [1,3,2,6], groundTruth [1,2,4].
    names = [
        "ndcg@4",
        "ndcg@2",
        "recall@4",
        "recall@2",
        "precision@4",
        "precision@2",
        "mrr@4",
        "average_precision@4",
        "average_precision@3",
        "average_precision@2",
        "auc@4",
        "auc@2",
    ]
    got = prk.evaluate(HIVEMALL, names, conventions="hivemall").row(0)[: len(names)]
    expected = [
        0.7039180890341348,
        0.6131471927654585,
        2 / 3,
        1 / 3,
        0.5,
        0.5,
        1.0,
        (1 + 2 / 3) / 2,
        (1 + 2 / 3) / 2,
        1.0,
        0.75,
        1.0,
    ]
    assert got == pytest.approx(expected)
    # testAPString10: ranked a..j, truth [a,x,c,x,e,f]: k=10 (1 + 2/3 + 3/5 + 4/6)/4,
    # k=5 (1 + 2/3 + 3/5)/3.
    ten = frame({1: [(i, 10.0 - i) for i in range(10)]}, {1: {0: 1, 2: 1, 4: 1, 5: 1}})
    got = prk.evaluate(ten, ["average_precision@[5,10]"], conventions="hivemall").row(0)[:2]
    assert got == pytest.approx([(1 + 2 / 3 + 3 / 5) / 3, (1 + 2 / 3 + 3 / 5 + 4 / 6) / 4])
    # GradedResponsesMeasuresTest: recommended relevances [5,2,4,1,3], k=3 0.918770780535,
    # k=2 0.812891283859 (exp gain).
    graded = frame({1: [(i, 5.0 - i) for i in range(5)]}, {1: dict(enumerate([5, 2, 4, 1, 3]))})
    got = prk.evaluate(graded, ["ndcg@[2,3]"], conventions="hivemall").row(0)[:2]
    assert got == pytest.approx([0.812891283859, 0.918770780535])


def test_rectools() -> None:
    # MobileTeleSystems/RecTools rectools/metrics/ranking.py, NDCG and MAP docstrings:
    # reco u1:(7,1),(8,2); u2:(1,1),(2,2); u3:(1..4); u4:(1..3); interactions
    # u1:{1,2}; u2:{1}; u3:{1,3,4}; u4:{1,2,3}.
    reco = {1: [7, 8], 2: [1, 2], 3: [1, 2, 3, 4], 4: [1, 2, 3]}
    inter = {1: {1, 2}, 2: {1}, 3: {1, 3, 4}, 4: {1, 2, 3}}
    df = frame(
        {u: [(i, 0.0) for i in items] for u, items in reco.items()},
        {u: dict.fromkeys(s, 1.0) for u, s in inter.items()},
        rank=True,
    ).rename({"score": "rank"})
    names = [
        "NDCG@1",
        "NDCG@3",
        "MAP@1",
        "MAP@3",
        "MAP(divide_by_k=true)@1",
        "MAP(divide_by_k=true)@3",
    ]
    got = per_user(df, names, "rectools", rank="rank")
    assert got[names[0] + "[rectools]"].to_list() == [0, 1, 1, 1]
    assert got["NDCG@3[rectools]"].to_list() == pytest.approx([0, 0.46927873, 0.70391809, 1])
    assert got["MAP@1[rectools]"].to_list() == pytest.approx([0, 1, 1 / 3, 1 / 3])
    assert got["MAP@3[rectools]"].to_list() == pytest.approx([0, 1, 0.55555556, 1])
    assert got["MAP(divide_by_k=true)@1[rectools]"].to_list() == [0, 1, 1, 1]
    assert got["MAP(divide_by_k=true)@3[rectools]"].to_list() == pytest.approx(
        [0, 1 / 3, 0.55555556, 1]
    )
    # tests/metrics/test_classification.py (k=2): reco u1:(1,2,3); u2:(1,2); u3:(1);
    # u4:(1); interactions u1:{4,2,3}; u3:{1}; u4:{2}; u5:{2}; users [1,3,4,5].
    cls = frame(
        {1: [(1, 0), (2, 0), (3, 0)], 2: [(1, 0), (2, 0)], 3: [(1, 0)], 4: [(1, 0)]},
        {1: {4: 1, 2: 1, 3: 1}, 3: {1: 1}, 4: {2: 1}, 5: {2: 1}},
        rank=True,
    ).rename({"score": "rank"})
    names = ["Precision@2", "Precision(r_precision=true)@2", "Recall@2", "HitRate@2"]
    got = per_user(cls, names, "rectools", rank="rank").filter(pl.col("user") != 2)
    assert got["Precision@2[rectools]"].to_list() == [0.5, 0.5, 0, 0]
    assert got["Precision(r_precision=true)@2[rectools]"].to_list() == [0.5, 1, 0, 0]
    assert got["Recall@2[rectools]"].to_list() == pytest.approx([1 / 3, 1, 0, 0])
    assert got["HitRate@2[rectools]"].to_list() == [1, 1, 0, 0]
    summary = prk.evaluate(cls, ["Recall@2"], rank="rank", conventions="rectools")
    assert summary["n_users(Recall@2[rectools])"].item() == 4  # user 2: no interactions
    # Same file, CATALOG = range(10): Accuracy [0.7, 0.9, 0.7, 0.7] (u3, u4 recommend one
    # item but fp = k - tp), MCC [1/sqrt(21), 2/3, -1/6, -1/6], F1Beta(beta=sqrt 2)
    # [0.375, 0.75, 0, 0].
    names = ["Accuracy@2", "MCC@2", "F1Beta@2"]
    got = per_user(cls, names, "rectools", rank="rank", n_items=10)
    got = got.filter(pl.col("user") != 2)
    assert got["Accuracy@2[rectools]"].to_list() == pytest.approx([0.7, 0.9, 0.7, 0.7])
    assert got["MCC@2[rectools]"].to_list() == pytest.approx(
        [1 / math.sqrt(21), 2 / 3, -1 / 6, -1 / 6]
    )
    # beta = 1: 2 tp / (R + k): u1 2/(3 + 2), u3 2/(1 + 2).
    assert got["F1Beta@2[rectools]"].to_list() == pytest.approx([2 / 5, 2 / 3, 0, 0])
    beta = cls.filter(pl.col("user") != 2).with_columns(score=-pl.col("rank"))
    fb = beta.group_by("user").agg(
        prk.fbeta(2, n_items=10, beta=math.sqrt(2), denominator="k").alias("f")
    )
    assert fb.sort("user")["f"].to_list() == pytest.approx([0.375, 0.75, 0, 0])


def test_rectools_absolute_ranks() -> None:
    # MobileTeleSystems/RecTools tests/metrics/test_ranking.py::TestMAP::test_calc (ranks
    # with gaps: user 1 has items at ranks 9 and 1, user 3 at 1, 3, 5, 7, 9, user 8 one
    # item at rank 1 that is not relevant...). Users = interactions' users 1..8; user 9
    # (recommended, no interactions) is left out, user 6 (no reco) scores 0.
    reco = {
        1: [(1, 9), (3, 1)],
        2: [(1, 3)],
        3: [(1, 1), (2, 3), (3, 5), (4, 7), (5, 9)],
        4: [(1, 1)],
        5: [(1, 1), (2, 2), (3, 3)],
        7: [(1, 2)],
        8: [(2, 1)],
        9: [(1, 1)],
    }
    inter = {1: {1, 2}, 2: {1}, 3: {1, 2, 3, 4, 5, 6}, 4: {1}, 5: {1, 2, 3}, 6: {1}, 7: {1}, 8: {1}}
    df = rectools_frame(reco, inter)
    names = ["MAP@1", "MAP@3", "MAP(divide_by_k=true)@1", "MAP(divide_by_k=true)@3"]
    got = per_user(df, names, "rectools", rank="rank")
    assert got["user"].to_list() == list(range(1, 9))
    assert got["MAP@1[rectools]"].to_list() == pytest.approx([0, 0, 1 / 6, 1, 1 / 3, 0, 0, 0])
    # user 2: its one relevant item at rank 3 -> precision 1/3 there (not 1: no renumbering);
    # user 3: relevant at ranks 1 and 3 of k = 3 -> (1 + 2/3) / 6; user 7: rank 2 -> 1/2.
    assert got["MAP@3[rectools]"].to_list() == pytest.approx(
        [0, 1 / 3, (1 / 6) * (1 + 2 / 3), 1, 1, 0, 1 / 2, 0]
    )
    assert got["MAP(divide_by_k=true)@1[rectools]"].to_list() == [0, 0, 1, 1, 1, 0, 0, 0]
    assert got["MAP(divide_by_k=true)@3[rectools]"].to_list() == pytest.approx(
        [0, 1 / 9, (1 / 3) * (1 + 2 / 3), 1 / 3, 1, 0, (1 / 3) * (1 / 2), 0]
    )
    # The same ranks renumbered 1..n (rank_positions="relative", evaluate's default)
    # give other numbers: user 2's item moves to position 1.
    relative = prk.evaluate(df, "map@3", rank="rank", per_user=True).sort("user")
    assert relative["map@3"].to_list()[1] == 1.0

    # TestNDCG::test_calc (default: ideal list of k relevant items) and TestMRR::test_calc
    # (same data without user 6): user 5 has relevant items at ranks 3, 7 and 9.
    reco = {
        1: [(1, 9)],
        2: [(2, 1)],
        3: [(1, 1), (2, 2), (3, 3)],
        4: [(1, 1)],
        5: [(1, 3), (2, 7), (3, 9), (5, 1)],
        6: [(1, 1)],
    }
    inter = {1: {1}, 2: {1}, 3: {1, 2, 3}, 4: {1}, 5: {1, 2, 3, 4}}
    df = rectools_frame(reco, inter)
    idcg3 = 1 + 1 / LOG2_3 + 1 / 2
    got = per_user(df, ["NDCG@1", "NDCG@3", "MRR@1", "MRR@3"], "rectools", rank="rank")
    assert got["NDCG@1[rectools]"].to_list() == [0, 0, 1, 1, 0]
    # user 5: its relevant item at rank 3 -> (1 / log2 4) / idcg3 = 0.5 / idcg3.
    assert got["NDCG@3[rectools]"].to_list() == pytest.approx([0, 0, 1, 1 / idcg3, 0.5 / idcg3])
    assert got["MRR@1[rectools]"].to_list() == [0, 0, 1, 1, 0]
    assert got["MRR@3[rectools]"].to_list() == pytest.approx([0, 0, 1, 1, 1 / 3])
    # Through compare too (two systems with the same gapped ranks: zero differences).
    both = pl.concat([df.with_columns(system=pl.lit(s)) for s in ("a", "b")])
    cmp = prk.compare(both, "MRR@3", by="system", rank="rank", conventions="rectools")
    assert cmp["metric"].to_list() == ["MRR@3[rectools]"]
    assert cmp["baseline_mean"].item() == pytest.approx((1 + 1 + 1 / 3) / 5)


REPLAY_RECS = {
    1: [(3, 0.6), (7, 0.5), (10, 0.4), (11, 0.3), (2, 0.2)],
    2: [(5, 0.6), (8, 0.5), (11, 0.4), (1, 0.3), (3, 0.2)],
    3: [(4, 1.0), (9, 0.5), (2, 0.1)],
}
REPLAY_TRUTH = {
    1: dict.fromkeys([5, 6, 7, 8, 9, 10], 1.0),
    2: dict.fromkeys([6, 7, 4, 10, 11], 1.0),
    3: dict.fromkeys([1, 2, 3, 4, 5], 1.0),
}


def test_replay() -> None:
    # sb-ai-lab/RePlay tests/metrics/conftest.py + test_metrics.py::test_metric (1e-5).
    df = frame(REPLAY_RECS, REPLAY_TRUTH)
    expected = {
        "Precision": [0.55555, 0.333333, 0.166666],
        "HitRate": [1, 1, 1],
        "MRR": [0.61111] * 3,
        "MAP": [0.35185, 0.21111, 0.198148],
        "NDCG": [0.48975, 0.35396, 0.34018],
        "RocAuc": [0.16666, 0.55555, 0.55555],
    }
    names = [f"{name}@[3,5,10]" for name in expected]
    out = prk.evaluate(df, names, conventions="replay")
    for name, values in expected.items():
        got = [out[f"{name}@{k}[replay]"].item() for k in (3, 5, 10)]
        assert got == pytest.approx(values, abs=1e-5), name
    recall = prk.evaluate(df, ["Recall@[5,10]"], conventions="replay").row(0)[:2]
    assert recall == pytest.approx([0.31111] * 2, abs=1e-5)
    # Docstrings (k=2): MAP per user {0.25, 0, 0.5}, NDCG {0.38685280723454163, 0,
    # 0.6131471927654584}, RocAuc {0, 0, 1}.
    got = per_user(df, ["MAP@2", "NDCG@2", "RocAuc@2"], "replay")
    assert got["MAP@2[replay]"].to_list() == pytest.approx([0.25, 0, 0.5])
    assert got["NDCG@2[replay]"].to_list() == pytest.approx(
        [0.38685280723454163, 0, 0.6131471927654584]
    )
    assert got["RocAuc@2[replay]"].to_list() == [0, 0, 1]


def test_replay_surprisal() -> None:
    # sb-ai-lab/RePlay tests/metrics/test_metrics.py::test_surprisal: train = recs ->
    # [0.78969, 0.614294] at k = 3, 5; train = ground truth -> [0.719586, 0.698418];
    # docstring Surprisal(2)(recs, train=recs) = 0.6845351232142715. Surprisal is
    # novelty(denominator=k, log_base=#train users) with cold items as one user.
    df = frame(REPLAY_RECS, REPLAY_TRUTH)
    recommended = df.filter(pl.col("score").is_not_null())
    trains = {
        "recs": (recommended.select("user", "item"), [0.78969, 0.614294]),
        "truth": (df.filter(pl.col("relevance") > 0).select("user", "item"), [0.719586, 0.698418]),
    }
    for train, expected in trains.values():
        n_users = train["user"].n_unique()
        pop = prk.item_popularity(train, catalog=recommended["item"], unseen="one")
        names = [f"novelty(denominator=k,log_base={n_users})@{k}" for k in (3, 5)]
        out = prk.evaluate(df, names, items=pop, ties="item_desc")
        assert [out[n].item() for n in names] == pytest.approx(expected, abs=1e-5)
    # Docstring train u1{5,6,8,9,2}, u2{5,8,11,1,3}, u3{4,9,2}: top 2 {3, 7}: item 3 has
    # one user (weight log(3/1)/log 3 = 1), 7 is cold (1); {5, 8}: two users each
    # (log(3/2)/log 3); {4, 9}: 1 and log(3/2)/log 3 -- each sum / k = 2.
    doc_train = {1: [5, 6, 8, 9, 2], 2: [5, 8, 11, 1, 3], 3: [4, 9, 2]}
    train = pl.DataFrame(
        [(u, i) for u, items in doc_train.items() for i in items],
        schema=["user", "item"],
        orient="row",
    )
    pop = prk.item_popularity(train, catalog=recommended["item"], unseen="one")
    out = prk.evaluate(df, "novelty(denominator=k,log_base=3)@2", items=pop, per_user=True)
    w2 = math.log(3 / 2) / math.log(3)
    assert out.sort("user")[:, 1].to_list() == pytest.approx(
        [1.0, 0.3690702464285426, 0.6845351232142713]
    )
    assert out.sort("user")[:, 1].to_list() == pytest.approx([1.0, w2, (1 + w2) / 2])
    summary = prk.evaluate(df, "novelty(denominator=k,log_base=3)@2", items=pop)
    assert summary[:, 0].item() == pytest.approx(0.6845351232142715)
    # One word under the preset: the #train users and the item weights come from
    # history=; RePlay averages over the recommended users (users='recs').
    for fit, expected in trains.values():
        out = prk.evaluate(df, "Surprisal@[3,5]", conventions="replay", history=fit, users="recs")
        assert out.row(0)[:2] == pytest.approx(expected, abs=1e-5)
    got = per_user(df, ["Surprisal@2"], "replay", history=train, users="recs")
    assert got["Surprisal@2[replay]"].to_list() == pytest.approx([1.0, w2, (1 + w2) / 2])
    # users= left out: Surprisal's own set (RePlay iterates over the recommended users).
    alone = per_user(df, ["Surprisal@2"], "replay", history=train)
    assert alone["Surprisal@2[replay]"].to_list() == got["Surprisal@2[replay]"].to_list()
    with pytest.raises(ValueError, match="averages over users='recs', the call has users='both'"):
        prk.evaluate(df, "Surprisal@2", conventions="replay", history=train, users="both")
    with pytest.raises(ValueError, match="reads the users' past interactions: pass history="):
        prk.evaluate(df, "Surprisal@2", conventions="replay", users="recs")


def test_replay_novelty() -> None:
    # sb-ai-lab/RePlay tests/metrics/test_metrics.py::test_novelty: train = recs -> [0, 0]
    # at k = 3, 5; train = ground truth -> [0.444444, 0.577777]; docstring Novelty(2)
    # with train u1{5,6,8,9,2}, u2{5,8,11,1,3}, u3{4,9,2} = 0.3333, per user {1, 0, 0}.
    df = frame(REPLAY_RECS, REPLAY_TRUTH)
    truth = {u: list(items) for u, items in REPLAY_TRUTH.items()}
    recs = {u: [i for i, _ in items] for u, items in REPLAY_RECS.items()}
    doc = {1: [5, 6, 8, 9, 2], 2: [5, 8, 11, 1, 3], 3: [4, 9, 2]}

    def with_seen(train: dict[int, list[int]]) -> pl.DataFrame:
        pairs = pl.DataFrame(
            [(u, i) for u, items in train.items() for i in items],
            schema=["user", "item"],
            orient="row",
        ).with_columns(seen=pl.lit(True))
        joined = df.join(pairs, on=["user", "item"], how="left")
        return joined.with_columns(pl.col("seen").fill_null(False))

    train_users = [1, 2, 3]
    for train, expected in ((recs, [0.0, 0.0]), (truth, [0.444444, 0.577777])):
        data = with_seen(train)
        out = prk.evaluate(
            data, ["Novelty@3", "Novelty@5"], conventions="replay", users=train_users
        )
        assert out.row(0)[:2] == pytest.approx(expected, abs=1e-5)
    got = per_user(with_seen(doc), ["Novelty@2"], "replay", users=train_users)
    assert got["Novelty@2[replay]"].to_list() == [1.0, 0.0, 0.0]
    # RePlay's Novelty averages over the users of train (Metric._dict_call(list(train))
    # and the polars path's train-left-join): a test user without train history is not
    # averaged. Users 1 and 2 in train only: user 1 1.0, user 2 0.0 -> 0.5 (not 1/3).
    two = {u: doc[u] for u in (1, 2)}
    out = prk.evaluate(with_seen(two), ["Novelty@2"], conventions="replay", users=[1, 2])
    assert out.item(0, 0) == pytest.approx((1.0 + 0.0) / 2)
    with pytest.raises(ValueError, match=r"Novelty averages over the users of train: pass users="):
        prk.evaluate(with_seen(two), ["Novelty@2"], conventions="replay")


def test_rectools_mean_inv_user_freq() -> None:
    # MobileTeleSystems/RecTools tests/metrics/test_novelty.py: prev interactions
    # u1:{i1,i2}, u2:{i1}, u3:{i1}; reco u1:(i3,1); u2:(i2,1),(i3,2); u3:(i1,1),(i2,2).
    # MIUF@1 [log2 3, log2 3, 0]; MIUF@2 [log2 3, log2 3, log2(3)/2] (cold i3 = 1 user;
    # the mean over the items present, not / k: u1's one item is not halved).
    prev = pl.DataFrame({"user": [1, 1, 2, 3], "item": [1, 2, 1, 1]})
    df = frame({1: [(3, 1)], 2: [(2, 1), (3, 2)], 3: [(1, 1), (2, 2)]}, {}, rank=True)
    df = df.rename({"score": "rank"}).with_columns(relevance=pl.lit(0.0))
    pop = prk.item_popularity(prev, catalog=df["item"], unseen="one")
    got = per_user(
        df, ["MeanInvUserFreq@1", "MeanInvUserFreq@2"], "rectools", rank="rank", items=pop
    )
    assert got["MeanInvUserFreq@1[rectools]"].to_list() == pytest.approx([LOG2_3, LOG2_3, 0])
    assert got["MeanInvUserFreq@2[rectools]"].to_list() == pytest.approx(
        [LOG2_3, LOG2_3, LOG2_3 / 2]
    )


def test_coverage_presets() -> None:
    # RePlay tests/metrics/test_metrics.py::test_coverage_metric: Coverage(recs, train=recs)
    # at k = 3, 5 -> [0.9, 1.0] (10 distinct items; the top 3 misses item 1).
    df = frame(REPLAY_RECS, REPLAY_TRUTH)
    recommended = df.filter(pl.col("score").is_not_null())
    train = recommended.select(pl.col("item").unique(), in_catalog=pl.lit(True))
    out = prk.evaluate(
        df,
        ["Coverage@3", "Coverage@5"],
        conventions="replay",
        users="recs",
        items=train,
        n_items=train.height,
    )
    assert out.row(0)[:2] == pytest.approx((0.9, 1.0))
    # Docstring: Coverage(2) with train u1{5,6,8,9,2}, u2{5,8,11,1,3}, u3{4,9,2}:
    # top-2 items {3, 7, 5, 8, 4, 9}; item 7 is not in train and is dropped: 5 of the 9
    # train items = 0.5555555555555556.
    doc_train = pl.DataFrame({"item": [5, 6, 8, 9, 2, 11, 1, 3, 4], "in_catalog": [True] * 9})
    out = prk.evaluate(
        df, "Coverage@2", conventions="replay", users="recs", items=doc_train, n_items=9
    )
    assert out[:, 0].item() == pytest.approx(0.5555555555555556)
    # MS Recommenders test_python_evaluation.py (diversity data): train items 1..5, reco
    # u1{3,5}, u2{2,5}, u3{1,2}: catalog_coverage 4/5 = 0.8 (no cutoff).
    reco = frame({1: [(3, 2.0), (5, 1.0)], 2: [(2, 2.0), (5, 1.0)], 3: [(1, 2.0), (2, 1.0)]}, {})
    out = prk.evaluate(
        reco, "catalog_coverage", conventions="recommenders", users="recs", n_items=5
    )
    assert out[:, 0].item() == pytest.approx(0.8)
    # RecTools CatalogCoverage(normalize=True) counts items outside the catalog: the same
    # lists against a catalog of 2 items give 4 / 2 (RecTools' own vector, which repeats a
    # rank within a user, is in tests/plan/test_repeated_ranks.py).
    ranked = reco.with_columns(rank=3.0 - pl.col("score")).drop("score")
    out = prk.evaluate(
        ranked,
        "CatalogCoverage(normalize=true)@2",
        conventions="rectools",
        users="recs",
        rank="rank",
        n_items=2,
    )
    assert out[:, 0].item() == pytest.approx(4 / 2)
    # RecBole tests/metrics/test_topk_metrics.py: item_matrix [[5,7,3],[4,5,2],[2,3,5],
    # [1,4,6],[5,3,7]], num_items 8 -> itemcoverage 7/8 at k = 3.
    matrix = [[5, 7, 3], [4, 5, 2], [2, 3, 5], [1, 4, 6], [5, 3, 7]]
    lists = {u: [(i, 3.0 - r) for r, i in enumerate(row)] for u, row in enumerate(matrix, 1)}
    judged = {u: {row[0]: 0.0} for u, row in enumerate(matrix, 1)}
    out = prk.evaluate(frame(lists, judged), "itemcoverage@3", conventions="recbole", n_items=8)
    assert out[:, 0].item() == pytest.approx(7 / 8)
    # Same test file, shannonentropy: -mean over the 7 distinct items of p ln p, counts
    # {1: 1, 2: 2, 3: 3, 4: 2, 5: 4, 6: 1, 7: 2} / 15.
    counts = np.array([1, 2, 3, 2, 4, 1, 2]) / 15
    out = prk.evaluate(frame(lists, judged), "shannonentropy@3", conventions="recbole", n_items=8)
    assert out[:, 0].item() == pytest.approx(float(-np.mean(counts * np.log(counts))))


MS_TRUE = {
    1: {3: 3, 1: 5, 2: 4},
    2: {1: 5, 4: 5, 5: 3, 6: 3, 7: 1},
    3: {2: 5, 5: 5, 6: 5, 8: 4, 9: 4, 10: 3, 11: 3, 12: 3, 13: 2, 14: 1},
}
MS_PRED = {
    1: [(12, 12), (3, 14), (10, 13)],
    2: [(10, 14), (3, 13), (5, 12), (11, 11), (13, 10)],
    3: [(4, 14), (10, 13), (7, 12), (13, 11), (1, 10), (3, 9), (5, 8), (2, 7), (11, 6), (14, 5)],
}


def test_recommenders() -> None:
    # recommenders-team/recommenders tests/unit/recommenders/evaluation/conftest.py and
    # test_python_evaluation.py (TOL 1e-4); binary relevance: every truth row relevant.
    binary = {u: dict.fromkeys(items, 1.0) for u, items in MS_TRUE.items()}
    recs = {u: [(i, float(s)) for i, s in rows] for u, rows in MS_PRED.items()}
    df = frame(recs, binary)
    names = ["precision_at_k@10", "recall_at_k@10", "map@10", "map_at_k@10"]
    got = prk.evaluate(df, names, conventions="recommenders", users="both").row(0)[:4]
    assert got == pytest.approx([0.26666, 0.37777, 0.23613, 0.23613], abs=1e-4)
    ndcg = prk.evaluate(df, ["ndcg_at_k@10"], conventions="recommenders")
    assert ndcg.item(0, 0) == pytest.approx(0.38172, abs=1e-4)
    alone = prk.evaluate(df, ["map@10"], conventions="recommenders")
    assert alone.item(0, 0) == got[2]  # users='both'
    with pytest.raises(ValueError, match="map@10 over users='both'; ndcg_at_k@10 over"):
        prk.evaluate(df, ["map@10", "ndcg_at_k@10"], conventions="recommenders")
    # Values from running the wheel's python_evaluation.py on the same data (research
    # note, section 3): k=3 map 0.15, map_at_k 0.2037037; k=5 map 0.1666667, map_at_k 0.2.
    names = ["map@[3,5]", "map_at_k@[3,5]"]
    got = prk.evaluate(df, names, conventions="recommenders", users="both").row(0)[:4]
    assert got == pytest.approx([0.15, 0.1666667, 0.2037037, 0.2], abs=1e-6)
    # test_python_r_precision: k=3 0.21111, k=5 0.24444, k=10 0.37777 (no tied predictions).
    got = prk.evaluate(
        df, ["r_precision_at_k@[3,5,10]"], conventions="recommenders", users="both", ties="item_asc"
    ).row(0)[:3]
    assert got == pytest.approx([0.21111, 0.24444, 0.37777], abs=1e-4)
    with pytest.raises(ValueError, match="needs ties='item_asc'"):
        prk.evaluate(df, ["r_precision_at_k@5"], conventions="recommenders", users="both")
    # Research note, section 3 (run of the wheel): two users with one relevant item each,
    # hit at rank 1 and at rank 2: 1.0 (the second has no hit within min(k, R) = 1 rank).
    two = frame({1: [(1, 2.0), (2, 1.0)], 2: [(3, 2.0), (4, 1.0)]}, {1: {1: 1}, 2: {4: 1}})
    one = prk.evaluate(
        two, ["r_precision_at_k@5"], conventions="recommenders", users="both", ties="item_asc"
    )
    assert one.item(0, 0) == 1.0
    assert one["n_users(r_precision_at_k@5[recommenders])"].item() == 1


def test_recbole() -> None:
    # RUCAIBox/RecBole tests/metrics/test_topk_metrics.py: hit matrix
    # [[0,0,0],[1,1,1],[1,0,1],[0,0,1]], pos_len [1,3,4,2].
    hits = [[0, 0, 0], [1, 1, 1], [1, 0, 1], [0, 0, 1]]
    pos_len = [1, 3, 4, 2]
    recs: dict[Any, list[tuple[Any, float]]] = {}
    truth: dict[Any, dict[Any, float]] = {}
    for user, (row, n_pos) in enumerate(zip(hits, pos_len, strict=True)):
        recs[user] = [(i, 3.0 - i) for i in range(3)]
        rel = {i: 1.0 for i, h in enumerate(row) if h}
        rel.update({100 + j: 1.0 for j in range(n_pos - len(rel))})  # never recommended
        truth[user] = rel
    df = frame(recs, truth)
    got = per_user(df, ["map@[1,2,3]", "ndcg@3", "recall@3", "precision@2"], "recbole")
    assert got["map@3[recbole]"].to_list() == pytest.approx([0, 1, (1 + 2 / 3) / 3, 1 / 6])
    assert got["map@2[recbole]"].to_list() == pytest.approx([0, 1, 1 / 2, 0])
    assert got["ndcg@3[recbole]"].to_list() == pytest.approx(
        [0, 1, (1 + 1 / 2) / (1 + 1 / LOG2_3 + 1 / 2), (1 / 2) / (1 + 1 / LOG2_3)]
    )
    assert got["recall@3[recbole]"].to_list() == pytest.approx([0, 1, 2 / 4, 1 / 2])
    assert got["precision@2[recbole]"].to_list() == pytest.approx([0, 1, 1 / 2, 0])


def test_torchmetrics() -> None:
    # Lightning-AI/torchmetrics docstrings of the retrieval classes: indexes
    # [0,0,0,1,1,1,1], preds [.2,.3,.5,.1,.3,.5,.2], target [F,F,T,F,T,F,T].
    df = pl.DataFrame(
        {
            "user": [0, 0, 0, 1, 1, 1, 1],
            "item": list(range(7)),
            "score": [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2],
            "relevance": [0, 0, 1, 0, 1, 0, 1],
        }
    )
    names = [
        "RetrievalMAP",
        "RetrievalNormalizedDCG",
        "RetrievalMRR",
        "RetrievalRecall@2",
        "RetrievalPrecision@2",
        "RetrievalRPrecision",
        "RetrievalAUROC",
    ]
    got = prk.evaluate(df, names, conventions="torchmetrics").row(0)[: len(names)]
    assert got == pytest.approx([0.7917, 0.8467, 0.75, 0.75, 0.5, 0.75, 0.75], abs=5e-5)
    # RetrievalFallOut(top_k=2) docstring: 0.5 (each query: 1 of its 2 negatives in the
    # top 2). Functional docstring: preds [0.2, 0.3, 0.5], target [T, F, T], top_k=2: 1.0.
    fall = prk.evaluate(df, ["RetrievalFallOut@2"], conventions="torchmetrics")
    assert fall.item(0, 0) == 0.5
    one = pl.DataFrame(
        {"user": [0] * 3, "item": [0, 1, 2], "score": [0.2, 0.3, 0.5], "relevance": [1, 0, 1]}
    )
    assert prk.evaluate(one, ["RetrievalFallOut@2"], conventions="torchmetrics").item(0, 0) == 1
    # A query without a negative candidate: 1.0 (empty_target_action='pos'), or 0 ('neg').
    allpos = one.with_columns(user=pl.lit(1, pl.Int64), relevance=pl.lit(1, pl.Int64))
    names = ["RetrievalFallOut@2", "RetrievalFallOut(empty_target_action=neg)@2"]
    both = prk.evaluate(
        pl.concat([one, allpos]),
        names,
        conventions="torchmetrics",
        per_user=True,
    ).sort("user")
    assert both["RetrievalFallOut@2[torchmetrics]"].to_list() == [1.0, 1.0]
    assert both["RetrievalFallOut(empty_target_action=neg)@2[torchmetrics]"].to_list() == [1.0, 0.0]
    hit = df.with_columns(relevance=pl.Series([1, 0, 0, 0, 1, 0, 1]))
    assert prk.evaluate(hit, ["RetrievalHitRate@2"], conventions="torchmetrics").item(
        0, 0
    ) == pytest.approx(0.5)


def test_jurity_against_its_tests_and_itself() -> None:
    # fidelity/jurity tests/test_reco_ranking.py::test_map: MAP@2 0.5, @3 0.5, @4 0.75
    # over users with clicks and predictions (support 1).
    df = frame(
        {1: [(1, 0.8), (2, 0.7), (3, 0.75), (4, 0.65)], 2: [(3, 0.7)]},
        {1: {1: 1, 2: 0, 4: 1}, 3: {3: 1}},
    )
    got = prk.evaluate(df, ["MAP@[2,3,4]"], conventions="jurity", users="both")
    assert got.row(0)[:3] == pytest.approx([0.5, 0.5, 0.75])
    assert got["n_users(MAP@4[jurity])"].item() == 1
    # test_ndcg: NDCG(k=3) = ((1 + 1/log2 4) / idcg(3)) / 3, support 3.
    nd = frame(
        {1: [(1, 0.8), (2, 0.7), (3, 0.75)], 2: [(3, 0.7)], 4: [(3, 0.6), (4, 0.4)]},
        {1: {1: 1, 2: 1, 3: 0, 4: 1}, 3: {3: 1}, 4: {1: 1, 2: 1}},
    )
    got = prk.evaluate(nd, ["NDCG@3"], conventions="jurity")
    assert got.item(0, 0) == pytest.approx((1 + 1 / 2) / (1 + 1 / LOG2_3 + 1 / 2) / 3)
    assert got["n_users(NDCG@3[jurity])"].item() == 3


def test_jurity_runs_match_per_user() -> None:
    pytest.importorskip("jurity")
    import pandas as pd
    from jurity.recommenders import RankingRecoMetrics

    rng = random.Random(7)
    actual, predicted = [], []
    for user in range(30):
        items = rng.sample(range(40), 12)
        if user < 27:  # users 27 .. 29: predictions without clicks
            for item in items[:6]:
                actual.append((user, item, rng.choice([0, 1])))
        if user % 7:  # some clicked users without predictions
            scores = rng.sample(range(1000), 8)  # distinct: jurity's sort is unstable
            predicted += [
                (user, item, s / 1000) for item, s in zip(items[3:11], scores, strict=True)
            ]
    a = pd.DataFrame(actual, columns=["user", "item", "click"])
    p = pd.DataFrame(predicted, columns=["user", "item", "click"])
    recs: dict[Any, list[tuple[Any, float]]] = {}
    for u, i, s in predicted:
        recs.setdefault(u, []).append((i, s))
    truth: dict[Any, dict[Any, float]] = {}
    for u, i, c in actual:
        truth.setdefault(u, {})[i] = float(c)
    df = frame(recs, truth)
    # Each metric over its own users without users= (Precision and MAP: 'both').
    for name, cls in (
        ("Recall", RankingRecoMetrics.Recall),
        ("NDCG", RankingRecoMetrics.NDCG),
        ("Precision", RankingRecoMetrics.Precision),
        ("MAP", RankingRecoMetrics.MAP),
    ):
        theirs = cls(click_column="click", k=5, user_id_column="user", item_id_column="item")
        expected = theirs.get_score(a, p)
        ours = prk.evaluate(df, [f"{name}@5"], conventions="jurity").item(0, 0)
        assert ours == pytest.approx(expected), name


def _jurity_ctr_data(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recommendations with scores on a coarse grid (ties straddle the cutoffs) and
    logs (click, propensity) over 10 items."""
    rng = np.random.default_rng(seed)
    recs, logs = [], []
    for user in range(4):
        for item in rng.choice(10, size=int(rng.integers(2, 6)), replace=False):
            recs.append((user, int(item), float(rng.integers(0, 3))))
        for item in rng.choice(10, size=int(rng.integers(0, 6)), replace=False):
            logs.append((user, int(item), int(rng.random() < 0.5), float(rng.uniform(0.1, 1))))
    return (
        pl.DataFrame(recs, schema=["user", "item", "score"], orient="row"),
        pl.DataFrame(logs, schema=["user", "item", "click", "propensity"], orient="row"),
    )


def test_jurity_ctr_test_vector() -> None:
    # fidelity/jurity tests/test_reco_binary.py::test_ctr: actual (user, item, click)
    # (1,1,0),(2,2,1),(3,0,0),(4,3,0); predicted (1,1,.8),(2,2,.7),(3,2,.8),(4,3,.7):
    # the matches (1,1), (2,2), (4,3) have clicks 0, 1, 0 -> CTR 1/3 (support 3).
    recs = pl.DataFrame({"user": [1, 2, 3, 4], "item": [1, 2, 2, 3], "score": [0.8, 0.7, 0.8, 0.7]})
    logs = pl.DataFrame({"user": [1, 2, 3, 4], "item": [1, 2, 0, 3], "relevance": [0, 1, 0, 0]})
    long = recs.join(logs, on=["user", "item"], how="full", coalesce=True)
    got = prk.evaluate(long, ["CTR", "CTR@1"], conventions="jurity", users="recs")
    assert got.row(0)[:2] == pytest.approx(((0 + 1 + 0) / 3, (0 + 1 + 0) / 3))
    alone = prk.evaluate(long, ["CTR"], conventions="jurity")  # its own users='recs'
    assert alone.item(0, 0) == pytest.approx((0 + 1 + 0) / 3)
    with pytest.raises(ValueError, match="averages over users='recs', the call has users='both'"):
        prk.evaluate(long, ["CTR"], conventions="jurity", users="both")


def _tie_orderings(rows: list[tuple[int, int, float]]) -> list[list[tuple[int, int, float]]]:
    """Every ordering of the tied scores of one user's rows, as nudged scores."""
    groups: dict[float, list[tuple[int, int, float]]] = {}
    for row in rows:
        groups.setdefault(row[2], []).append(row)
    options = [list(itertools.permutations(g)) for g in groups.values()]
    out = []
    for choice in itertools.product(*options):
        out.append([(u, i, s + 1e-7 * j) for group in choice for j, (u, i, s) in enumerate(group)])
    return out


@pytest.mark.filterwarnings("ignore::FutureWarning")  # Jurity's pandas inplace fillna
@pytest.mark.parametrize("estimation", ["matching", "ips", "dr"])
def test_jurity_ctr_matches_jurity_over_tied_orderings(estimation: str) -> None:
    # Jurity's CTR itself (installed) on random data with tied scores. Jurity sorts with
    # pandas' quicksort, which has no tie order. ips and dr are sums over the top-k rows
    # divided by their number |T| (fixed), so their expectation over the orderings is
    # sum_u |T_u| E[Jurity on user u alone] / |T|: every ordering of each user's tied
    # scores is run through Jurity (scores nudged by < 1e-6) and averaged; the preset's
    # value is that expectation exactly. matching divides by the number of matches,
    # which depends on the ordering: the preset gives E[sum of clicks] / E[#matches],
    # equal to Jurity on tie-free data (checked below for every estimator).
    jurity = pytest.importorskip("jurity.recommenders")
    pd = pytest.importorskip("pandas")
    recs, logs = _jurity_ctr_data(3)
    assert recs.group_by("user", "score").len()["len"].max() >= 2  # ties
    long = recs.join(
        logs.rename({"click": "relevance"}), on=["user", "item"], how="full", coalesce=True
    )
    name = "CTR" if estimation == "matching" else f"CTR(estimation={estimation})"
    logs_pd = logs.to_pandas()

    def jurity_ctr(k: int, predicted: list[tuple[int, int, float]]) -> float:
        metric = jurity.CTR(
            click_column="click",
            k=k,
            user_id_column="user",
            item_id_column="item",
            estimation=estimation,
            propensity_column="propensity",
        )
        frame_pd = pd.DataFrame(predicted, columns=["user", "item", "click"])
        return float(metric.get_score(logs_pd, frame_pd))

    if estimation != "matching":
        for k in (1, 2, 3):
            total, size = 0.0, 0
            for user in sorted(set(recs["user"].to_list())):
                own = [r for r in recs.rows() if r[0] == user]
                orderings = _tie_orderings(own)
                mean = float(np.mean([jurity_ctr(k, o) for o in orderings]))
                total += min(k, len(own)) * mean
                size += min(k, len(own))
            got = prk.evaluate(long, f"{name}@{k}", conventions="jurity", users="recs")
            # dr reads the score as the predicted reward: the nudges move it by < 1e-6
            tol = 1e-12 if estimation == "ips" else 1e-6
            assert got.item(0, 0) == pytest.approx(total / size, rel=tol), k
    # Tie-free: Jurity has one value, matching included.
    distinct = recs.with_columns(score=pl.col("score") + pl.col("item") * 1e-3)
    for k in (1, 2, 3):
        expected = jurity_ctr(k, distinct.rows())
        long = distinct.join(
            logs.rename({"click": "relevance"}), on=["user", "item"], how="full", coalesce=True
        )
        got = prk.evaluate(long, f"{name}@{k}", conventions="jurity", users="recs").item(0, 0)
        assert got == pytest.approx(expected, rel=1e-12)


def jurity_ild_recs(rng: np.random.Generator, n_items: int) -> pl.DataFrame:
    """30 users with 1-5 distinct items each and tie-free scores (Jurity ILD input)."""
    rows = [
        (u, int(i), float(s))
        for u in range(30)
        for s, i in enumerate(rng.choice(n_items, size=int(rng.integers(1, 6)), replace=False))
    ]
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")


def jurity_ild_features(vectors: np.ndarray) -> pl.DataFrame:
    """Jurity's item feature table: ``item`` and one column per feature."""
    return pl.DataFrame({"item": np.arange(len(vectors))}).with_columns(
        *[pl.Series(f"f{j}", vectors[:, j]) for j in range(vectors.shape[1])]
    )


def ours_jurity_ild(recs: pl.DataFrame, vectors: np.ndarray, name: str) -> float:
    """``name`` under conventions="jurity" on ``recs`` with the items' feature vectors."""
    items = pl.DataFrame({"item": np.arange(len(vectors)), "features": vectors.tolist()})
    long = recs.with_columns(relevance=pl.lit(None, dtype=pl.Float64))
    got = prk.evaluate(long, name, conventions="jurity", users="recs", items=items)
    return float(got[:, 0].item())


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.DataConversionWarning")
def test_jurity_intra_list_diversity_jaccard() -> None:
    # Jurity 2.1.0's intralist_diversity passes a DataFrame to scikit-learn's
    # pairwise_distances, which (1.9) reads X.dtype for a boolean metric such as
    # jaccard and fails: the reason it cannot run here. Its own code is run with that
    # one call given the DataFrame's values (what scikit-learn's check_array did).
    pytest.importorskip("jurity")
    import sklearn.metrics
    from jurity.recommenders import IntraListDiversity
    from jurity.recommenders import diversity as jurity_diversity

    rng = np.random.default_rng(13)
    n_items, k = 12, 3
    vectors = rng.integers(0, 2, size=(n_items, 5)).astype(float)
    vectors[0] = 0.0  # a zero vector: jaccard 0 with another zero vector (scipy)
    vectors[1] = 0.0
    recs = jurity_ild_recs(rng, n_items)
    metric = IntraListDiversity(
        jurity_ild_features(vectors).to_pandas(),
        click_column="score",
        k=k,
        user_id_column="user",
        item_id_column="item",
        user_sample_size=None,
        metric="jaccard",
    )
    with pytest.raises(AttributeError, match="'DataFrame' object has no attribute 'dtype'"):
        metric.get_score(None, recs.to_pandas())

    def pairwise(x: Any, **kw: Any) -> Any:
        return sklearn.metrics.pairwise_distances(x.to_numpy(), **kw)

    original = jurity_diversity.pairwise_distances
    jurity_diversity.pairwise_distances = pairwise
    try:
        expected = metric.get_score(None, recs.to_pandas())
    finally:
        jurity_diversity.pairwise_distances = original
    got = ours_jurity_ild(recs, vectors, f"IntraListDiversity(metric=jaccard)@{k}")
    assert got == pytest.approx(float(expected), abs=1e-12)
    # By hand: {1,0,1} vs {1,1,0}: one shared of three non-zero -> 1 - 1/3.
    hand = pl.DataFrame({"user": [0, 0], "item": [20, 21], "score": [2.0, 1.0]})
    hand_items = pl.DataFrame({"item": [20, 21], "features": [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]})
    got = prk.evaluate(
        hand.with_columns(relevance=pl.lit(None, dtype=pl.Float64)),
        "IntraListDiversity(metric=jaccard)@2",
        conventions="jurity",
        users="recs",
        items=hand_items,
    )
    assert got[:, 0].item() == pytest.approx(1 - 1 / 3)


def test_lenskit() -> None:
    # lenskit/lkpy tests/eval/test_rank_precision.py: rel 0..99, items [1,0,150] n=5 -> 2/3.
    rel = {0: dict.fromkeys(range(100), 1.0)}
    short = frame({0: [(1, 3.0), (0, 2.0), (150, 1.0)]}, rel)
    assert prk.evaluate(short, ["Precision@5"], conventions="lenskit").item(0, 0) == 2 / 3
    # test_rank_recall.py: items [1,0,150,3,10]: n=5 0.8, n=10 0.4 (4 / min(100, n)).
    five = frame({0: [(i, 5.0 - j) for j, i in enumerate([1, 0, 150, 3, 10])]}, rel)
    got = prk.evaluate(five, ["Recall@[5,10]"], conventions="lenskit").row(0)[:2]
    assert got == pytest.approx([0.8, 0.4])
    # test_rank_ndcg.py: truth 1,2,3; list [1,2] -> fixed_dcg(2)/fixed_dcg(3) with the
    # clipped discount: 2 / (2 + 1/log2 3).
    # test_rank_map.py: [1,2,3] vs [1,3] (1 + 2/3)/2; vs [2,4] 1/2 / 2 = 0.25;
    # [1,2,3,4,5] vs [1,3,5] n=3 (1 + 2/3)/3; a 1-item list [1] vs [1,3]: 1.0 (/ min(R, L)).
    lists = {0: [1, 2, 3], 1: [1, 2, 3], 2: [1, 2, 3, 4, 5], 3: [1]}
    truths = {0: [1, 3], 1: [2, 4], 2: [1, 3, 5], 3: [1, 3]}
    ap = frame(
        {u: [(i, 10.0 - j) for j, i in enumerate(items)] for u, items in lists.items()},
        {u: dict.fromkeys(items, 1.0) for u, items in truths.items()},
    )
    got = per_user(ap, ["AveragePrecision", "AveragePrecision@3"], "lenskit")
    assert got["AveragePrecision[lenskit]"].to_list()[:2] == pytest.approx([(1 + 2 / 3) / 2, 0.25])
    assert got["AveragePrecision@3[lenskit]"].to_list() == pytest.approx(
        [(1 + 2 / 3) / 2, 0.25, (1 + 2 / 3) / 3, 1.0]
    )
    curve = prk.evaluate(ap, ["AveragePrecision@[3,4]"], conventions="lenskit", per_user=True)
    assert curve.sort("user")["AveragePrecision@3[lenskit]"].to_list() == pytest.approx(
        [(1 + 2 / 3) / 2, 0.25, (1 + 2 / 3) / 3, 1.0]
    )
    nd = frame({0: [(1, 2.0), (2, 1.0)]}, {0: {1: 1.0, 2: 1.0, 3: 1.0}})
    assert prk.evaluate(nd, ["NDCG"], conventions="lenskit").item(0, 0) == pytest.approx(
        2 / (2 + 1 / LOG2_3)
    )


def test_cornac() -> None:
    # PreferredAI/cornac tests/cornac/metrics/test_ranking.py (0-based item ids).
    one = frame({0: [(1, 3.0), (2, 2.0), (0, 1.0)]}, {0: {2: 1.0}})
    got = prk.evaluate(
        one, ["NDCG@2", "Precision@2", "Precision", "Recall@2", "HitRatio@2"], conventions="cornac"
    ).row(0)[:5]
    assert got == pytest.approx([1 / LOG2_3, 0.5, 1 / 3, 1.0, 1.0])
    two = frame({0: [(0, 3.0), (2, 2.0), (1, 1.0)]}, {0: {0: 1.0, 2: 1.0}})
    assert prk.evaluate(two, ["FMeasure"], conventions="cornac").item(0, 0) == pytest.approx(4 / 5)
    # AUC: scores [0.1, 0.4, 0.35, 0.8] of items 0..3, gt [2, 3] -> 0.75; a tied
    # (positive, negative) pair counts 0 (ties='pessimistic').
    auc = frame({0: [(0, 0.1), (1, 0.4), (2, 0.35), (3, 0.8)]}, {0: {2: 1.0, 3: 1.0}})
    assert prk.evaluate(auc, ["AUC"], conventions="cornac", ties="pessimistic").item(0, 0) == 0.75
    tied = frame({0: [(0, 0.5), (1, 0.5)]}, {0: {0: 1.0}})
    assert prk.evaluate(tied, ["AUC"], conventions="cornac", ties="pessimistic").item(0, 0) == 0
    with pytest.raises(ValueError, match="needs ties='pessimistic'"):
        prk.evaluate(auc, ["AUC"], conventions="cornac")


def test_elliot_values_derived_from_its_code() -> None:
    # sisinflab/elliot tests/evaluation/test_accelerated_metrics.py data, cutoff 3,
    # threshold 1; values derived from the code (research note section 14): u3 skipped
    # (no relevant item); Precision u1 2/3, u2 1/3; nDCG u1 (7 + 1/2)/(7 + 1/log2 3),
    # u2 (3/log2 3)/3.
    df = frame(
        {
            1: [(2, 0.9), (5, 0.8), (1, 0.7), (6, 0.3)],
            2: [(8, 0.9), (3, 0.8), (6, 0.2)],
            3: [(9, 0.9), (10, 0.8)],
        },
        {1: {1: 1.0, 2: 3.0, 7: 0.0}, 2: {3: 2.0, 4: 0.0}, 3: {9: 0.0}},
    )
    got = per_user(df, ["Precision@3", "MRR@3", "nDCG@3"], "elliot")
    assert got["Precision@3[elliot]"].to_list()[:2] == pytest.approx([2 / 3, 1 / 3])
    assert got["MRR@3[elliot]"].to_list()[:2] == [1.0, 0.5]
    assert got["nDCG@3[elliot]"].to_list()[:2] == pytest.approx(
        [(7 + 1 / 2) / (7 + 1 / LOG2_3), 0.630930], abs=1e-6
    )
    summary = prk.evaluate(df, ["Precision@3"], conventions="elliot")
    assert summary["n_users(Precision@3[elliot])"].item() == 2


def _random_run(seed: int, ties: bool) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = []
    for user in range(25):
        items = rng.sample(range(60), 20)
        for j, item in enumerate(items):
            score = float(rng.randint(0, 5)) if ties else rng.random()
            rel = rng.choice([0, 0, 1, 2]) if j < 14 else None
            recommended = j < 16
            rows.append((user, item, score if recommended else None, rel))
    schema = {"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Float64}
    df = pl.DataFrame(rows, schema=schema, orient="row")
    # String ids: trec_eval breaks ties by docno descending as strings.
    df = df.with_columns(item=pl.format("d{}", "item"))
    return df.filter(pl.col("score").is_not_null() | pl.col("relevance").is_not_null())


def _qrels_run(df: pl.DataFrame) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for user, item, score, rel in df.iter_rows():
        if rel is not None:
            qrels.setdefault(str(user), {})[item] = int(rel)
        if score is not None:
            run.setdefault(str(user), {})[item] = score
    return qrels, run


def test_trec_eval_preset_matches_pytrec_eval_with_ties() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    df = _random_run(3, ties=True)  # trec_eval's tie rule is deterministic
    qrels, run = _qrels_run(df)
    measures = {
        "map",
        "map_cut.10",
        "P.5",
        "ndcg",
        "ndcg_cut.10",
        "recip_rank",
        "Rprec",
        "recall.10",
        "success.5",
        "bpref",
    }
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    names = {
        "map": "map",
        "map_cut@10": "map_cut_10",
        "P@5": "P_5",
        "ndcg": "ndcg",
        "ndcg_cut@10": "ndcg_cut_10",
        "recip_rank": "recip_rank",
        "Rprec": "Rprec",
        "recall@10": "recall_10",
        "success@5": "success_5",
        "bpref": "bpref",
    }
    ours = per_user(df, list(names), "trec_eval")
    for name, key in names.items():
        expected = [theirs[str(u)][key] for u in ours["user"].to_list()]
        column = ours[f"{name}[trec_eval]"].fill_null(0.0).to_list()
        assert column == pytest.approx(expected), name


def test_ir_measures_preset_matches_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    df = _random_run(5, ties=True)
    qrels, run = _qrels_run(df)
    measures = {
        "P@5": "P@5",
        "AP": "AP",
        "AP@10": "AP@10",
        "nDCG@10": "nDCG@10",
        "RR": "RR",
        "R@10": "R@10",
        "Success@3": "Success@3",
    }
    parsed = [ir_measures.parse_measure(m) for m in measures.values()]
    theirs: dict[tuple[str, str], float] = {}
    for m in ir_measures.iter_calc(parsed, qrels, run):
        theirs[(str(m.measure), m.query_id)] = m.value
    ours = per_user(df, list(measures), "ir_measures")
    for name, measure in measures.items():
        expected = [theirs[(measure, str(u))] for u in ours["user"].to_list()]
        assert ours[f"{name}[ir_measures]"].fill_null(0.0).to_list() == pytest.approx(expected)
    # RR@k comes from the msmarco provider: ties by doc id ascending.
    tie = TWO_TIED
    assert prk.evaluate(tie, ["RR"], conventions="ir_measures").item(0, 0) == 0.5
    with pytest.raises(ValueError, match="needs ties='item_asc'"):
        prk.evaluate(tie, ["RR@10"], conventions="ir_measures")
    asc = prk.evaluate(tie, ["RR@10"], conventions="ir_measures", ties="item_asc")
    assert asc.item(0, 0) == 1.0
    qr = {"1": {"d1": 1, "d2": 0}}
    rn = {"1": {"d1": 1.0, "d2": 1.0}}
    rr = {
        str(m.measure): m.value
        for m in ir_measures.iter_calc(
            [ir_measures.parse_measure("RR"), ir_measures.parse_measure("RR@10")], qr, rn
        )
    }
    assert rr == {"RR": 0.5, "RR@10": 1.0}  # d2 > d1 as strings descending, d1 first ascending


def test_judged_fraction_hand_computed() -> None:
    # Items 1 (judged 0), 2 (unjudged), 3 (judged 1); item 4 judged, never recommended.
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": [1, 2, 3, 4],
            "score": [3.0, 2.0, 1.0, None],
            "relevance": [0.0, None, 1.0, 1.0],
        }
    )
    got = df.select(
        prk.judged_fraction(2),  # [1, 2]: 1 judged / min(2, 3)
        prk.judged_fraction(10),  # 2 judged / min(10, 3)
        prk.judged_fraction(10, denominator="k"),  # 2 / 10
        prk.judged_fraction(),  # whole list: 2 / 3
        prk.unjudged(10),  # trec_eval unj_10: 1 / 10
        prk.unjudged(10, denominator="retrieved"),  # 1 / 3
    ).row(0)
    assert got == pytest.approx([1 / 2, 2 / 3, 2 / 10, 2 / 3, 1 / 10, 1 / 3])
    nothing = df.with_columns(score=pl.lit(None, pl.Float64))
    assert nothing.select(prk.judged_fraction(5)).item() == 0.0
    # Ties: items 1 (judged) and 2 (unjudged) tied at the top, k = 1: 1/2 exactly.
    tied = df.with_columns(score=pl.Series([2.0, 2.0, 1.0, None]))
    assert tied.select(prk.judged_fraction(1), prk.unjudged(1)).row(0) == (0.5, 0.5)
    assert prk.evaluate(tied, ["judged_fraction@[1,2]"]).row(0)[:2] == pytest.approx([0.5, 0.5])
    assert tied.select(prk.judged_fraction(1, ties="item_asc")).item() == 1.0


def test_ir_measures_judged() -> None:
    # terrierteam/ir_measures test/test_judged.py: Judged@1000 [1.0, 0.25], @10 the same,
    # @3 [1.0, 1/3], @1 [1.0, 0.0] (q1: 1 judged document among 4 retrieved: / 4).
    qrels = {0: {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0}, 1: {"D0": 1, "D3": 2, "D5": 2}}
    run = {
        0: {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
        1: {"D1": 0.8, "D3": 0.7, "D4": 0.3, "D2": 0.4},
    }
    rows = [
        (q, d, run[q].get(d), qrels[q].get(d)) for q in (0, 1) for d in sorted({*qrels[q], *run[q]})
    ]
    schema = {"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Float64}
    df = pl.DataFrame(rows, schema=schema, orient="row")
    names = ["Judged@1000", "Judged@10", "Judged@3", "Judged@1"]
    got = per_user(df, names, "ir_measures", ties="item_asc")
    assert got["Judged@1000[ir_measures]"].to_list() == [1.0, 0.25]
    assert got["Judged@10[ir_measures]"].to_list() == [1.0, 0.25]
    assert got["Judged@3[ir_measures]"].to_list() == pytest.approx([1.0, 1 / 3])
    assert got["Judged@1[ir_measures]"].to_list() == [1.0, 0.0]
    with pytest.raises(ValueError, match="needs ties='item_asc'"):
        prk.evaluate(df, ["Judged@3"], conventions="ir_measures")
    # Against ir_measures itself on random runs with ties (doc ids ascending as strings).
    ir_measures = pytest.importorskip("ir_measures")
    rnd = _random_run(7, ties=True)
    qr, rn = _qrels_run(rnd)
    parsed = [ir_measures.parse_measure(f"Judged@{k}") for k in (1, 5, 10, 30)]
    theirs = {(str(m.measure), m.query_id): m.value for m in ir_measures.iter_calc(parsed, qr, rn)}
    ours = per_user(rnd, ["Judged@[1,5,10,30]"], "ir_measures", ties="item_asc")
    for k in (1, 5, 10, 30):
        expected = [theirs[(f"Judged@{k}", str(u))] for u in ours["user"].to_list()]
        assert ours[f"Judged@{k}[ir_measures]"].to_list() == pytest.approx(expected)


def test_ranx_preset_matches_ranx_without_ties() -> None:
    ranx = pytest.importorskip("ranx")
    df = _random_run(11, ties=False)  # ranx's sort is unstable: no defined tie rule
    qrels_d, run_d = _qrels_run(df)
    qrels, run = ranx.Qrels(qrels_d), ranx.Run(run_d)
    metrics = [
        "precision@5",
        "recall@10",
        "f1@5",
        "hits@5",
        "hit_rate@3",
        "mrr@5",
        "map@10",
        "ndcg@10",
        "ndcg_burges@10",
        "dcg@5",
        "dcg_burges@5",
        "r-precision",
    ]
    theirs = ranx.evaluate(qrels, run, metrics, return_mean=False, make_comparable=True)
    ours = per_user(df, metrics, "ranx")
    order = list(qrels.keys())
    index = {u: i for i, u in enumerate(order)}
    for name in metrics:
        expected = [float(theirs[name][index[str(u)]]) for u in ours["user"].to_list()]
        assert ours[f"{name}[ranx]"].fill_null(0.0).to_list() == pytest.approx(expected), name


def test_sklearn_preset_matches_scikit_learn_with_ties() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    df = _random_run(13, ties=True).filter(pl.col("score").is_not_null())
    df = df.with_columns(pl.col("relevance").fill_null(0.0))
    ours = per_user(df, ["ndcg_score@5", "ndcg_score", "dcg_score@5"], "sklearn")
    for user, group in df.group_by("user"):
        truth = [group["relevance"].to_list()]
        score = [group["score"].to_list()]
        row = ours.filter(pl.col("user") == user[0]).row(0, named=True)
        assert (row["ndcg_score@5[sklearn]"] or 0.0) == pytest.approx(
            metrics.ndcg_score(truth, score, k=5)
        )
        assert (row["ndcg_score[sklearn]"] or 0.0) == pytest.approx(
            metrics.ndcg_score(truth, score)
        )
        assert row["dcg_score@5[sklearn]"] == pytest.approx(metrics.dcg_score(truth, score, k=5))


def test_compare_and_cli_accept_conventions(tmp_path: Path) -> None:
    runs = pl.concat(
        [
            frame(REPLAY_RECS, REPLAY_TRUTH).with_columns(system=pl.lit("a")),
            frame(
                {u: list(reversed(r)) for u, r in REPLAY_RECS.items()}, REPLAY_TRUTH
            ).with_columns(system=pl.lit("b")),
        ]
    )
    result = prk.compare(runs, ["MAP@3"], baseline="a", n_resamples=50, conventions="replay")
    assert result["metric"].unique().to_list() == ["MAP@3[replay]"]
    assert result["conventions"][0].startswith("replay: ties=item_desc")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "polars_rankeval",
            "evaluate",
            "--conventions",
            "trec_eval",
            "-m",
            "map",
            "-m",
            "P@5",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    assert header.split(",")[:2] == ["map[trec_eval]", "P@5[trec_eval]"]
    # The same as the explicit options on the bundled example (trec_eval's test run).
    plain = subprocess.run(
        [
            sys.executable,
            "-m",
            "polars_rankeval",
            "evaluate",
            "-m",
            "map",
            "-m",
            "P@5",
            "--ties",
            "item_desc",
            "--empty",
            "zero",
            "--users",
            "both",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    # Values, not strings: Polars' multithreaded group_by sums floats in a run-dependent
    # order (pola-rs/polars#25163), so the last bit of a mean can differ between runs.
    assert [float(v) for v in plain.stdout.splitlines()[1].split(",")] == pytest.approx(
        [float(v) for v in row.split(",")], rel=1e-13, abs=0.0
    )


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_jurity_intra_list_diversity_matches_jurity(metric: str) -> None:
    # Jurity itself (installed) with user_sample_size=None, on random features with
    # zero components and tie-free scores. (metric="jaccard" fails inside Jurity 2.1.0
    # with scikit-learn 1.9: test_jurity_intra_list_diversity_jaccard runs its code.)
    jurity = pytest.importorskip("jurity.recommenders")
    rng = np.random.default_rng(11)
    n_items, k = 12, 3
    vectors = rng.integers(-1, 2, size=(n_items, 4)).astype(float)
    recs = jurity_ild_recs(rng, n_items)
    expected = jurity.IntraListDiversity(
        jurity_ild_features(vectors).to_pandas(),
        click_column="score",
        k=k,
        user_id_column="user",
        item_id_column="item",
        user_sample_size=None,
        metric=metric,
    ).get_score(None, recs.to_pandas())
    got = ours_jurity_ild(recs, vectors, f"IntraListDiversity(metric={metric})@{k}")
    assert got == pytest.approx(float(expected), abs=1e-12)


def test_recommenders_diversity_with_item_features() -> None:
    # recommenders-team/recommenders tests/unit/recommenders/evaluation/
    # test_python_evaluation.py, diversity with item features: reco u1{3,5}, u2{2,5},
    # u3{1,2}; features 1:[0,1,1,0,0], 2:[0,1,0,1,0], 3:[0,0,1,1,0], 5:[0,0,0,1,1]:
    # user_diversity [0.5, 0.5, 0.5] (each pair shares one of two components), diversity 0.5.
    reco = frame({1: [(3, 2.0), (5, 1.0)], 2: [(2, 2.0), (5, 1.0)], 3: [(1, 2.0), (2, 1.0)]}, {})
    feats = {1: [0, 1, 1, 0, 0], 2: [0, 1, 0, 1, 0], 3: [0, 0, 1, 1, 0], 5: [0, 0, 0, 1, 1]}
    items = pl.DataFrame(
        {"item": list(feats), "features": [[float(x) for x in v] for v in feats.values()]}
    )
    name = "diversity(item_sim_measure=item_feature_vector)"
    got = prk.evaluate(reco, name, conventions="recommenders", users="recs", items=items)
    assert got[:, 0].item() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="reads the users' past interactions: pass history="):
        prk.evaluate(reco, "diversity", conventions="recommenders", users="recs", items=items)
    # RecTools' Hamming ILD: distance=hamming with short=zero
    # (tests/conventions/test_peer_options.py).
    ild = prk.evaluate(
        reco, "IntraListDiversity@2", conventions="rectools", users="recs", items=items
    )
    direct = prk.evaluate(
        reco, "intra_list_diversity(distance=hamming,short=zero)@2", users="recs", items=items
    )
    assert ild[:, 0].item() == pytest.approx(direct[:, 0].item())


MS_RECO = {1: [(3, 2.0), (5, 1.0)], 2: [(2, 2.0), (5, 1.0)], 3: [(1, 2.0), (2, 1.0)]}


def test_recommenders_novelty_diversity_coverage() -> None:
    # recommenders-team/recommenders tests/unit/recommenders/evaluation/conftest.py
    # (diversity data) and test_python_evaluation.py (TOL 1e-4): train u1{1,2,4},
    # u2{3,4}, u3{3,4,5}; reco u1{3,5}, u2{2,5}, u3{1,2}.
    reco = frame(MS_RECO, {})
    run = {"conventions": "recommenders", "users": "recs", "history": MS_TRAIN}
    # novelty 2.83333: item rows 1:1, 2:1, 3:2, 4:3, 5:1 of 8 -> -log2(c / 8) = 3, 3, 2,
    # log2(8/3), 3; the six reco rows 3, 5, 2, 5, 1, 2 sum to 2 + 3 * 5 = 17: 17 / 6.
    got = prk.evaluate(reco, "novelty", **run)
    assert got[:, 0].item() == pytest.approx(2.83333, abs=1e-4)
    assert got[:, 0].item() == pytest.approx(17 / 6)
    # diversity 0.43096, user_diversity [0.29289, 1.0, 0.0]: c(3,5) = 1 (user 3), c(3) =
    # 2, c(5) = 1 -> 1 - 1/sqrt(2); 2 and 5 never co-occur -> 1; c(1,2) = 1, c(1) = c(2)
    # = 1 -> 0.
    got = prk.evaluate(reco, "diversity", **run)
    assert got[:, 0].item() == pytest.approx(0.43096, abs=1e-4)
    assert got[:, 0].item() == pytest.approx((1 - 1 / math.sqrt(2) + 1 + 0) / 3)
    users = per_user(reco, ["diversity"], "recommenders", users="recs", history=MS_TRAIN)
    assert users["diversity[recommenders]"].to_list() == pytest.approx(
        [0.29289, 1.0, 0.0], abs=1e-5
    )
    # distributional_coverage 1.9183: reco item shares 1/6, 2/6, 1/6, 2/6 (items 1, 2, 3, 5).
    got = prk.evaluate(reco, "distributional_coverage", conventions="recommenders", users="recs")
    assert got[:, 0].item() == pytest.approx(1.9183, abs=1e-4)
    shares = np.array([1, 2, 1, 2]) / 6
    assert got[:, 0].item() == pytest.approx(float(-(shares * np.log2(shares)).sum()))
    # Items outside train add 0 to novelty and count in its denominator (MS's inner
    # merge): item 9 in user 1's list -> 17 / 7. Lists of unequal length are pooled
    # over the rows, not averaged per user: user 1 has 3 rows, 3 and 3 users 2 rows.
    longer = frame({**MS_RECO, 1: [(3, 3.0), (5, 2.0), (9, 1.0)]}, {})
    got = prk.evaluate(longer, "novelty", **run)
    assert got[:, 0].item() == pytest.approx(17 / 7)
    per = prk.evaluate(
        longer,
        "novelty(source=history_interactions,unknown=zero)",
        users="recs",
        history=MS_TRAIN,
        per_user=True,
    ).sort("user")
    means = per[:, 1].to_list()
    assert means == pytest.approx([(2 + 3 + 0) / 3, (3 + 3) / 2, (3 + 3) / 2])
    # pooled = the users' means weighted by their list sizes, not their plain mean
    assert got[:, 0].item() == pytest.approx((3 * means[0] + 2 * means[1] + 2 * means[2]) / 7)
    assert got[:, 0].item() != pytest.approx(sum(means) / 3)
    # diversity: the pair (5, 9) never co-occurs (distance 1), (3, 9) neither: user 1
    # (1 - 1/sqrt(2) + 1 + 1) / 3.
    users = per_user(longer, ["diversity"], "recommenders", users="recs", history=MS_TRAIN)
    assert users["diversity[recommenders]"][0] == pytest.approx((3 - 1 / math.sqrt(2)) / 3)
    alone = prk.evaluate(reco, "novelty", conventions="recommenders", history=MS_TRAIN)
    assert alone.item(0, 0) == pytest.approx(17 / 6)  # its own users='recs'
    with pytest.raises(ValueError, match="averages over users='recs', the call has users='both'"):
        prk.evaluate(reco, "novelty", conventions="recommenders", history=MS_TRAIN, users="both")


def test_recommenders_runs_match_python_evaluation_formulas() -> None:
    # MS Recommenders is not installable beside polars 2 / numpy 2 here (it pins old
    # pandas/numpy); its novelty and diversity code (python_evaluation.py) is replayed
    # in pandas on random data with ties and a user with one item: the pooled
    # interaction-share novelty and the pairwise co-occurrence diversity.
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    train = pd.DataFrame(
        {"user": rng.integers(0, 15, 80), "item": rng.integers(0, 12, 80)}
    ).drop_duplicates()
    reco_rows = []
    for u in range(20):
        n = int(rng.integers(1, 6))
        for i in rng.choice(14, size=n, replace=False):  # items 12, 13 are not in train
            reco_rows.append((u, int(i), float(rng.integers(0, 3))))
    reco = pd.DataFrame(reco_rows, columns=["user", "item", "score"])
    # novelty (historical_item_novelty + novelty)
    counts = train.groupby("item").size()
    item_novelty = -np.log2(counts / len(train))
    merged = (
        reco.groupby("item").size().to_frame("count").join(item_novelty.rename("nov"), how="inner")
    )
    novelty = float((merged["count"] * merged["nov"]).sum() / len(reco))
    # diversity (_get_pairwise_items, _get_cooccurrence_similarity, user_diversity)
    pairs = train.merge(train, on="user")
    pairs = pairs[pairs["item_x"] <= pairs["item_y"]]
    cooc = pairs.groupby(["item_x", "item_y"]).size().rename("c").reset_index()
    sq = np.sqrt(counts)
    cooc["sim"] = cooc["c"] / (sq[cooc["item_x"]].to_numpy() * sq[cooc["item_y"]].to_numpy())
    rp = reco.merge(reco, on="user")
    rp = rp[rp["item_x"] < rp["item_y"]].merge(cooc, on=["item_x", "item_y"], how="left")
    rp["sim"] = rp["sim"].fillna(0.0)
    user_div = 1 - rp.groupby("user")["sim"].mean()
    long = pl.from_pandas(reco).with_columns(relevance=pl.lit(None, dtype=pl.Float64))
    history = pl.from_pandas(train)
    run = {"conventions": "recommenders", "users": "recs", "history": history}
    got = prk.evaluate(long, ["novelty"], **run)
    assert got[:, 0].item() == pytest.approx(novelty, abs=1e-12)
    got = per_user(long, ["diversity"], "recommenders", users="recs", history=history)
    got = got.drop_nulls()
    assert got["user"].to_list() == sorted(user_div.index.tolist())
    assert got["diversity[recommenders]"].to_list() == pytest.approx(
        user_div.sort_index().to_list(), abs=1e-12
    )
    summary = prk.evaluate(long, ["diversity"], **run)
    assert summary[:, 0].item() == pytest.approx(float(user_div.mean()), abs=1e-12)


def test_trec_eval_preset_on_trec_eval_test_files() -> None:
    # usnistgov/trec_eval test/results.test, test/qrels.test and the printed per-query
    # output of `trec_eval -m all_trec -q` (test/out.test.aq), copied in tests/data: the
    # preset's names give trec_eval's numbers to the printed 4 decimals, infAP included.
    data = ROOT / "tests" / "data"
    long = prk.join(
        prk.trec.read_run(data / "results.test").select("user", "item", "score"),
        prk.trec.read_qrels(data / "qrels.test"),
        check_overlap=False,
    )
    names = {
        "map": "map",
        "map_cut@10": "map_cut_10",
        "P@5": "P_5",
        "recall@10": "recall_10",
        "relative_P@5": "relative_P_5",
        "ndcg": "ndcg",
        "ndcg_cut@10": "ndcg_cut_10",
        "recip_rank": "recip_rank",
        "Rprec": "Rprec",
        "success@5": "success_5",
        "bpref": "bpref",
        "infAP": "infAP",
    }
    printed: dict[tuple[str, str], str] = {}
    for line in (data / "out.test.aq").read_text().splitlines():
        measure, query, value = line.split()
        printed[(measure, query)] = value
    ours = per_user(long, list(names), "trec_eval")
    assert ours.height == 3
    for name, trec_name in names.items():
        for user, value in zip(ours["user"], ours[f"{name}[trec_eval]"], strict=True):
            assert f"{value:.4f}" == printed[(trec_name, user)], (name, user)


def test_ranx_own_test_vectors() -> None:
    # AmenRa/ranx tests/unit/ranx/metrics_test.py (graded tests, k = 10): qrels
    # {2: 5, 4: 4, 5: 3, 10: 2}; runs A [1,2,3,4,5], B [10,5,2,4,3], C [1,3,6,7,8].
    qrels = {2: 5.0, 4: 4.0, 5: 3.0, 10: 2.0}
    runs = {1: [1, 2, 3, 4, 5], 2: [10, 5, 2, 4, 3], 3: [1, 3, 6, 7, 8]}  # A, B, C
    df = frame(
        {u: [(item, 10.0 - i) for i, item in enumerate(items)] for u, items in runs.items()},
        dict.fromkeys(runs, qrels),
    )
    got = per_user(df, ["dcg@10", "ndcg@10", "dcg_burges@10", "ndcg_burges@10"], "ranx")
    log2 = math.log2
    dcg = {
        1: 5 / log2(3) + 4 / log2(5) + 3 / log2(6),
        2: 2 / log2(2) + 3 / log2(3) + 5 / log2(4) + 4 / log2(5),
        3: 0.0,
    }
    idcg = 5 + 4 / log2(3) + 3 / log2(4) + 2 / log2(5)
    burges = {
        1: 31 / log2(3) + 15 / log2(5) + 7 / log2(6),
        2: 3 / log2(2) + 7 / log2(3) + 31 / log2(4) + 15 / log2(5),
        3: 0.0,
    }
    ideal_burges = 31 + 15 / log2(3) + 7 / log2(4) + 3 / log2(5)
    users = got["user"].to_list()
    assert got["dcg@10[ranx]"].to_list() == pytest.approx([dcg[u] for u in users])
    assert got["ndcg@10[ranx]"].to_list() == pytest.approx([dcg[u] / idcg for u in users])
    assert got["dcg_burges@10[ranx]"].to_list() == pytest.approx([burges[u] for u in users])
    assert got["ndcg_burges@10[ranx]"].to_list() == pytest.approx(
        [burges[u] / ideal_burges for u in users]
    )
    # test_hits / test_r_precision / test_recall / test_reciprocal_rank_single.
    hits = frame(
        {
            1: [(i, 10.0 - i) for i in [1, 2, 3, 4, 5, 7]],
            2: [(i, 10.0 - i) for i in [1, 2, 4, 3, 5, 7]],
        },
        {1: dict.fromkeys([1, 4, 5, 6], 1.0), 2: dict.fromkeys([1, 4, 6], 1.0)},
    )
    assert prk.evaluate(hits, "hits@5", conventions="ranx").item(0, 0) == 2.5
    rp = frame(
        {u: [(i, 10.0 - j) for j, i in enumerate([2, 4, 3, 1, 5, 6, 7])] for u in (1, 2)},
        {1: dict.fromkeys([1, 2, 3], 1.0), 2: dict.fromkeys([1, 2], 1.0)},
    )
    got = per_user(rp, ["r-precision", "recall@2"], "ranx")
    assert got["r-precision[ranx]"].to_list() == pytest.approx([2 / 3, 1 / 2])
    assert got["recall@2[ranx]"].to_list() == pytest.approx([1 / 3, 1 / 2])
    rr = frame(
        {
            1: [(i, 10.0 - j) for j, i in enumerate([2, 3, 1, 4, 5])],
            2: [(i, 10.0 - j) for j, i in enumerate([1, 2, 3, 4, 5])],
            3: [(i, 10.0 - j) for j, i in enumerate([2, 9, 1, 4, 5])],
        },
        {1: {3: 1.0}, 2: {1: 1.0}, 3: {3: 1.0}},
    )
    assert per_user(rr, ["mrr"], "ranx")["mrr[ranx]"].to_list() == [0.5, 1.0, 0.0]


def test_sklearn_own_docstring_vectors() -> None:
    # scikit-learn sklearn/metrics/_ranking.py, ndcg_score and dcg_score docstrings:
    # y_true [[10, 0, 0, 1, 5]]; scores [[.1, .2, .3, 4, 70]] -> ndcg 0.69..., dcg 9.49...
    # (k=2: 5.63...); scores [[.05, 1.1, 1., .5, .0]] -> 0.49..., k=4 -> 0.35...;
    # scores [[1, 0, 0, 0, 1]] k=1 -> ndcg 0.75 / dcg 7.5 (ties averaged).
    truth = {1: dict(enumerate([10.0, 0.0, 0.0, 1.0, 5.0]))}

    def scored(scores: list[float]) -> pl.DataFrame:
        return frame({1: list(enumerate(scores))}, truth)

    def one(scores: list[float], metric: str) -> float:
        value = prk.evaluate(scored(scores), metric, conventions="sklearn").item(0, 0)
        return float(value)

    # The docstrings print the leading digits only ("0.69...").
    assert f"{one([0.1, 0.2, 0.3, 4, 70], 'ndcg_score'):.3f}"[:4] == "0.69"
    assert f"{one([0.1, 0.2, 0.3, 4, 70], 'dcg_score'):.3f}"[:4] == "9.49"
    assert f"{one([0.1, 0.2, 0.3, 4, 70], 'dcg_score@2'):.3f}"[:4] == "5.63"
    assert f"{one([0.05, 1.1, 1.0, 0.5, 0.0], 'ndcg_score'):.3f}"[:4] == "0.49"
    assert f"{one([0.05, 1.1, 1.0, 0.5, 0.0], 'ndcg_score@4'):.3f}"[:4] == "0.35"
    assert one([10, 0, 0, 1, 5], "ndcg_score@4") == 1.0
    assert one([1, 0, 0, 0, 1], "ndcg_score@1") == 0.75
    assert one([1, 0, 0, 0, 1], "dcg_score@1") == 7.5
    metrics = pytest.importorskip("sklearn.metrics")
    for scores in ([0.1, 0.2, 0.3, 4, 70], [0.05, 1.1, 1.0, 0.5, 0.0], [1, 0, 0, 0, 1]):
        assert one(scores, "ndcg_score@4") == pytest.approx(
            metrics.ndcg_score([[10, 0, 0, 1, 5]], [scores], k=4)
        )


def test_cornac_runs_match_per_user() -> None:
    # Cornac's metric classes (cornac.metrics.ranking) on random users: every candidate
    # is ranked (pd_rank = candidates by score), positives = relevant candidates; users
    # without a positive are skipped by Cornac's ranking_eval and by the preset.
    metrics = pytest.importorskip("cornac.metrics")
    rng = np.random.default_rng(21)
    rows = []
    for user in range(40):
        n = int(rng.integers(2, 15))
        scores = rng.permutation(n).astype(float)  # tie-free: Cornac's argsort order
        relevant = rng.random(n) < 0.3
        rows += [(user, i, scores[i], float(relevant[i])) for i in range(n)]
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    names = ["Precision@3", "Recall@5", "NDCG@4", "NDCG", "HitRatio@2", "FMeasure@3", "MRR"]
    ours = per_user(df, names, "cornac")
    # MAP (tied items take the maximum rank) is map(tie_group=threshold); on tie-free
    # scores it is plain map too. Tied scores: tests/metrics/test_ap_threshold.py.
    plain_map = prk.evaluate(df, "map", per_user=True)
    cornac_map = per_user(df, ["MAP"], "cornac")
    auc = per_user(df, ["AUC"], "cornac", ties="pessimistic")
    classes = {
        "Precision@3": metrics.Precision(k=3),
        "Recall@5": metrics.Recall(k=5),
        "NDCG@4": metrics.NDCG(k=4),
        "NDCG": metrics.NDCG(),
        "HitRatio@2": metrics.HitRatio(k=2),
        "FMeasure@3": metrics.FMeasure(k=3),
        "MRR": metrics.MRR(),
    }
    checked = 0
    for (user,), group in df.group_by("user"):
        items = group["item"].to_numpy()
        scores = group["score"].to_numpy()
        positives = items[group["relevance"].to_numpy() > 0]
        row = ours.filter(pl.col("user") == user).row(0, named=True)
        if positives.size == 0:
            assert row["MRR[cornac]"] is None  # skipped, as Cornac does
            continue
        ranked = items[np.argsort(-scores)]
        for name, metric in classes.items():
            theirs = metric.compute(gt_pos=positives, pd_rank=ranked)
            assert row[f"{name}[cornac]"] == pytest.approx(theirs), (name, user)
        theirs = metrics.MAP().compute(item_indices=items, pd_scores=scores, gt_pos=positives)
        assert plain_map.filter(pl.col("user") == user)["map"].item() == pytest.approx(theirs)
        got = cornac_map.filter(pl.col("user") == user)["MAP[cornac]"].item()
        assert got == pytest.approx(theirs, abs=1e-12)
        if positives.size < items.size:
            theirs = metrics.AUC().compute(item_indices=items, pd_scores=scores, gt_pos=positives)
            got = auc.filter(pl.col("user") == user)["AUC[cornac]"].item()
            assert got == pytest.approx(theirs)
        checked += 1
    assert checked > 20
    # AUC with tied scores: a tied (positive, negative) pair counts 0 in Cornac, as
    # ties="pessimistic" does.
    tied = pl.DataFrame(
        {"user": [1] * 5, "item": range(5), "score": [2.0, 1.0, 1.0, 1.0, 0.0],
         "relevance": [0.0, 1.0, 0.0, 1.0, 0.0]}
    )  # fmt: skip
    theirs = metrics.AUC().compute(
        item_indices=np.arange(5), pd_scores=np.array([2.0, 1, 1, 1, 0]), gt_pos=np.array([1, 3])
    )
    got = prk.evaluate(tied, "AUC", conventions="cornac", ties="pessimistic").item(0, 0)
    assert got == pytest.approx(theirs) == pytest.approx(2 / 6)


PEERS = os.environ.get("PRK_PEERS")
"""A directory with the unpacked wheels of recommenders 1.2.1 and replay-rec 0.22.0
(``pip download --no-deps`` + unzip): neither installs beside polars 2 / cornac 3 /
scikit-learn 1.9 (RePlay pins polars < 2 and scikit-learn < 1.9, MS Recommenders
cornac < 3 and a notebook stack), but their metric code runs from the unpacked files."""


def _peer(module: str) -> Any:
    if not PEERS:
        pytest.skip("set PRK_PEERS to the unpacked recommenders / replay-rec wheels")
    if PEERS not in sys.path:
        sys.path.append(PEERS)  # appended: this project's own packages keep precedence
    import importlib

    return importlib.import_module(module)


def _random_reco(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Tied scores on a coarse grid, users with 1-6 items, items outside train."""
    rng = np.random.default_rng(seed)
    train = pl.DataFrame(
        {"user": rng.integers(0, 25, 150), "item": rng.integers(0, 30, 150)}
    ).unique()
    rows = [
        (u, int(i), float(rng.integers(0, 4)))
        for u in range(0, 40)
        for i in rng.choice(34, size=int(rng.integers(1, 7)), replace=False)
    ]
    recs = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")
    return recs.with_columns(relevance=pl.lit(None, dtype=pl.Float64)), train


@pytest.mark.filterwarnings("ignore")
def test_recommenders_wheel_novelty_diversity() -> None:
    ms = _peer("recommenders.evaluation.python_evaluation")
    recs, train = _random_reco(1)
    # MS refuses reco_df rows already in train_df: left out for both.
    recs = recs.join(train, on=["user", "item"], how="anti")
    cols = {"user": "userID", "item": "itemID"}
    train_pd = train.rename(cols).to_pandas()
    reco_pd = recs.select("user", "item").rename(cols).to_pandas()
    run = {"conventions": "recommenders", "users": "recs", "history": train}
    got = prk.evaluate(recs, ["novelty", "diversity", "distributional_coverage"], **run)
    assert got.row(0)[0] == pytest.approx(ms.novelty(train_pd, reco_pd), abs=1e-12)
    assert got.row(0)[1] == pytest.approx(ms.diversity(train_pd, reco_pd), abs=1e-12)
    assert got.row(0)[2] == pytest.approx(ms.distributional_coverage(train_pd, reco_pd), abs=1e-12)
    theirs = ms.user_diversity(train_pd, reco_pd)
    ours = per_user(recs, ["diversity"], "recommenders", users="recs", history=train)
    ours = ours.drop_nulls()
    assert ours["user"].to_list() == theirs["userID"].to_list()
    assert ours["diversity[recommenders]"].to_list() == pytest.approx(
        theirs["user_diversity"].to_list(), abs=1e-12
    )


@pytest.mark.filterwarnings("ignore")
def test_replay_wheel_surprisal_categorical_diversity() -> None:
    metrics = _peer("replay.metrics")
    pd = pytest.importorskip("pandas")
    recs, train = _random_reco(2)
    cols = {"user": "query_id", "item": "item_id", "score": "rating"}
    recs_pd = recs.select("user", "item", "score").rename(cols).to_pandas()
    train_pd = train.rename({"user": "query_id", "item": "item_id"}).to_pandas()
    # Surprisal sorts by score, then item id descending (stable): ties='item_desc' is
    # exact on these tied scores.
    per_user_mode = metrics.PerUser()
    theirs = metrics.Surprisal([2, 5], mode=per_user_mode)(recs_pd, train_pd)
    ours = per_user(recs, ["Surprisal@2", "Surprisal@5"], "replay", users="recs", history=train)
    for k in (2, 5):
        expected = [theirs[f"Surprisal-PerUser@{k}"][u] for u in ours["user"].to_list()]
        assert ours[f"Surprisal@{k}[replay]"].to_list() == pytest.approx(expected, abs=1e-12)
    mean = metrics.Surprisal([5])(recs_pd, train_pd)["Surprisal@5"]
    got = prk.evaluate(recs, "Surprisal@5", conventions="replay", users="recs", history=train)
    assert got.item(0, 0) == pytest.approx(mean, abs=1e-12)
    # CategoricalDiversity sorts by score only (pandas quicksort): compared on
    # tie-free scores; the category is item % 5.
    distinct = recs.with_columns(score=pl.col("score") + pl.col("item") * 1e-3)
    cats = distinct.with_columns(category=pl.col("item") % 5)
    cat_pd = pd.DataFrame(
        {
            "query_id": cats["user"].to_list(),
            "category_id": cats["category"].to_list(),
            "rating": cats["score"].to_list(),
        }
    )
    theirs = metrics.CategoricalDiversity([3, 5], mode=metrics.PerUser())(cat_pd)
    ours = per_user(
        cats, ["CategoricalDiversity@3", "CategoricalDiversity@5"], "replay", users="recs"
    )
    for k in (3, 5):
        expected = [theirs[f"CategoricalDiversity-PerUser@{k}"][u] for u in ours["user"]]
        assert ours[f"CategoricalDiversity@{k}[replay]"].to_list() == pytest.approx(
            expected, abs=1e-12
        )


def test_rectools_mean_inv_user_freq_over_the_users_of_reco() -> None:
    # MobileTeleSystems/RecTools tests/metrics/test_novelty.py, as RecTools is called:
    # reco and prev_interactions only (no test interactions: no user has a judged row).
    # MeanInvUserFreq.fit takes its users from reco (reco[Columns.User].unique()) and the
    # mean is over them: MIUF@1 [log2 3, log2 3, 0], MIUF@2 [log2 3, log2 3, log2(3) / 2].
    prev = pl.DataFrame({"user": ["u1", "u1", "u2", "u3"], "item": ["i1", "i2", "i1", "i1"]})
    reco = pl.DataFrame(
        {
            "user": ["u1", "u2", "u2", "u3", "u3"],
            "item": ["i3", "i2", "i3", "i1", "i2"],
            "rank": [1, 1, 2, 1, 2],
        }
    ).with_columns(relevance=pl.lit(None, pl.Float64))
    pop = prk.item_popularity(prev, catalog=reco["item"], unseen="one")
    names = ["MeanInvUserFreq@1", "MeanInvUserFreq@2"]
    got = per_user(reco, names, "rectools", rank="rank", items=pop)
    assert got["user"].to_list() == ["u1", "u2", "u3"]
    assert got["MeanInvUserFreq@1[rectools]"].to_list() == pytest.approx([LOG2_3, LOG2_3, 0])
    assert got["MeanInvUserFreq@2[rectools]"].to_list() == pytest.approx(
        [LOG2_3, LOG2_3, LOG2_3 / 2]
    )
    summary = prk.evaluate(reco, names, conventions="rectools", rank="rank", items=pop)
    assert summary["MeanInvUserFreq@1[rectools]"].item() == pytest.approx(2 * LOG2_3 / 3)
    assert summary["MeanInvUserFreq@2[rectools]"].item() == pytest.approx(2.5 * LOG2_3 / 3)
    assert summary["n_users(MeanInvUserFreq@2[rectools])"].item() == 3
    # One test user (u1 has a test interaction): RecTools still averages over the three
    # users of reco, 1.3208 (= 2.5 log2(3) / 3), not u1's log2 3 = 1.585.
    one = reco.with_columns(relevance=pl.when(pl.col("user") == "u1").then(0.0))
    summary = prk.evaluate(one, names[1], conventions="rectools", rank="rank", items=pop)
    assert summary["MeanInvUserFreq@2[rectools]"].item() == pytest.approx(1.3208, abs=5e-5)
    assert summary["MeanInvUserFreq@2[rectools]"].item() == pytest.approx(2.5 * LOG2_3 / 3)
    # A user of reco without an item within k is NaN in calc_per_user (reindex on the
    # users of reco) and left out of RecTools' mean (pandas skips NaN): u4 at rank 3.
    late = pl.concat(
        [one, pl.DataFrame({"user": ["u4"], "item": ["i1"], "rank": [3], "relevance": [None]})],
        how="vertical_relaxed",
    )
    pop = prk.item_popularity(prev, catalog=late["item"], unseen="one")
    summary = prk.evaluate(late, names[1], conventions="rectools", rank="rank", items=pop)
    assert summary["MeanInvUserFreq@2[rectools]"].item() == pytest.approx(2.5 * LOG2_3 / 3)
    assert summary["n_users(MeanInvUserFreq@2[rectools])"].item() == 3
    # RecTools computes MAP over the test users and MIUF over the users of reco: one call
    # evaluates one user set, so the two are refused together with the sets named.
    with pytest.raises(ValueError, match=r"MeanInvUserFreq@2 over users='recs'.*MAP@2 over"):
        prk.evaluate(one, [names[1], "MAP@2"], conventions="rectools", rank="rank", items=pop)
    with pytest.raises(ValueError, match="averages over users='recs', the call has users='both'"):
        prk.evaluate(one, names[1], conventions="rectools", rank="rank", items=pop, users="both")


def _trec_test_files() -> pl.DataFrame:
    data = ROOT / "tests" / "data"
    return prk.join(
        prk.trec.read_run(data / "results.test").select("user", "item", "score"),
        prk.trec.read_qrels(data / "qrels.test"),
        check_overlap=False,
    )


TREC_NAMES = [
    "P.5,10",
    "ndcg_cut.10",
    "recall_100",
    "gm_map",
    "iprec_at_recall_0.10",
    "map_cut.5,10",
    "success_1",
    "relative_P.5",
    "11pt_avg",
    "gm_bpref",
]
"""trec_eval's own spellings (-m arguments and printed labels) of measures the preset
reproduces; the columns they give, in order, are trec_eval's labels."""
TREC_LABELS = [
    "P_5",
    "P_10",
    "ndcg_cut_10",
    "recall_100",
    "gm_map",
    "iprec_at_recall_0.10",
    "map_cut_5",
    "map_cut_10",
    "success_1",
    "relative_P_5",
    "11pt_avg",
    "gm_bpref",
]


def test_trec_eval_preset_reads_trec_eval_measure_names() -> None:
    # usnistgov/trec_eval test/results.test and test/qrels.test (tests/data): the names
    # the trec-eval command reads give its values, in columns named by its labels.
    from polars_rankeval.trec_eval.program import trec_eval

    data = ROOT / "tests" / "data"
    long = _trec_test_files()
    ours = prk.evaluate(long, TREC_NAMES, conventions="trec_eval")
    shown = [f"{label}[trec_eval]" for label in TREC_LABELS]
    assert ours.columns[: len(shown)] == shown
    measures = [n.replace("_1", ".1").replace("_0.", ".0.") for n in TREC_NAMES]
    theirs = trec_eval(data / "qrels.test", data / "results.test", measures)
    expected = dict(zip(theirs["measure"], theirs["value"], strict=True))
    for label in TREC_LABELS:
        assert ours[f"{label}[trec_eval]"].item() == pytest.approx(expected[label], rel=1e-12)
    # The summary printed by trec_eval itself (`trec_eval -m all_trec`: test/out.test.a).
    printed = {}
    for line in (data / "out.test.a").read_text().splitlines():
        measure, _, value = line.split()
        printed[measure] = value
    for label in TREC_LABELS:
        assert f"{ours[f'{label}[trec_eval]'].item():.4f}" == printed[label], label
    # Both spellings of a cutoff, and the label form of a cut_double measure.
    for name in ("P_10", "P.10", "P_10[trec_eval]"):
        out = prk.evaluate(long, [name], conventions="trec_eval")
        assert out.columns[0] == "P_10[trec_eval]"
        assert out.item(0, 0) == pytest.approx(expected["P_10"], rel=1e-12)
    # A bare cut measure takes trec_eval's default cutoffs (success: 1, 5, 10).
    out = prk.evaluate(long, ["success"], conventions="trec_eval")
    assert out.columns[:3] == [f"success_{k}[trec_eval]" for k in (1, 5, 10)]
    # gm_map: exp(mean(log(max(AP, 1e-5)))) over the queries, by hand from map's values.
    ap = per_user(long, ["map"], "trec_eval")["map[trec_eval]"].to_numpy()
    assert ours["gm_map[trec_eval]"].item() == pytest.approx(
        math.exp(np.log(np.maximum(ap, 1e-5)).mean())
    )
    # Per query: trec_eval -q's values (test/out.test.aq), gm_map and gm_bpref aside (a
    # geometric mean has no per-query value: per_user=True refuses it).
    queries = per_user(long, [n for n in TREC_NAMES if not n.startswith("gm_")], "trec_eval")
    per_query: dict[tuple[str, str], str] = {}
    for line in (data / "out.test.aq").read_text().splitlines():
        measure, query, value = line.split()
        per_query[(measure, query)] = value
    for label in TREC_LABELS:
        if label.startswith("gm_"):
            continue
        for user, value in zip(queries["user"], queries[f"{label}[trec_eval]"], strict=True):
            assert f"{value:.4f}" == per_query[(label, user)], (label, user)


def test_trec_eval_names_refused_say_why() -> None:
    long = _trec_test_files()
    # One metric asked twice under two spellings.
    with pytest.raises(ValueError, match="both 'precision@10' here; request it once"):
        prk.evaluate(long, ["P.5,10", "P_10"], conventions="trec_eval")
    # A trec_eval measure the preset does not reproduce names the ones it does.
    with pytest.raises(ValueError, match=r"trec_eval has no metric 'unj\.5'.*its metrics here"):
        prk.evaluate(long, ["unj.5"], conventions="trec_eval")
    # trec_eval's own parameter errors (a cutoff must be a positive integer).
    with pytest.raises(ValueError, match="cutoffs must be positive"):
        prk.evaluate(long, ["P.0"], conventions="trec_eval")
    with pytest.raises(ValueError, match="gain values"):
        prk.evaluate(long, ["ndcg.1=0,2=3"], conventions="trec_eval")


def test_trec_eval_names_in_compare_and_cli(tmp_path: Path) -> None:
    from polars_rankeval.trec_eval.program import trec_eval

    data = ROOT / "tests" / "data"
    long = _trec_test_files()
    theirs = trec_eval(data / "qrels.test", data / "results.test", ["P.10", "gm_map"])
    expected = dict(zip(theirs["measure"], theirs["value"], strict=True))
    shifted = long.with_columns(pl.col("score") * 2)  # the same ranking: zero differences
    runs = pl.concat(
        [long.with_columns(system=pl.lit("a")), shifted.with_columns(system=pl.lit("b"))]
    )
    result = prk.compare(runs, ["P.10", "ndcg_cut.10"], baseline="a", conventions="trec_eval")
    assert result["metric"].to_list() == ["P_10[trec_eval]", "ndcg_cut_10[trec_eval]"]
    assert result["baseline_mean"][0] == pytest.approx(expected["P_10"], rel=1e-12)
    path = tmp_path / "runs.parquet"
    runs.write_parquet(path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "polars_rankeval",
            "compare",
            "--data",
            str(path),
            "--by",
            "system",
            "--baseline",
            "a",
            "--conventions",
            "trec_eval",
            "-m",
            "P_10",
            "-m",
            "iprec_at_recall.0.10",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = pl.read_csv(proc.stdout.encode())
    assert out["metric"].to_list() == ["P_10[trec_eval]", "iprec_at_recall_0.10[trec_eval]"]
    assert out["baseline_mean"][0] == pytest.approx(expected["P_10"], rel=1e-12)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "polars_rankeval",
            "evaluate",
            "--conventions",
            "trec_eval",
            "-m",
            "P.5,10",
            "-m",
            "gm_map",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    assert header.split(",")[:3] == ["P_5[trec_eval]", "P_10[trec_eval]", "gm_map[trec_eval]"]
    values = [float(v) for v in row.split(",")[:3]]
    assert values[1:] == pytest.approx([expected["P_10"], expected["gm_map"]], rel=1e-12)


def test_user_sets_match_ranx_ir_measures_and_pytrec_eval() -> None:
    # Which users each library averages over, on the four kinds of user: A (judged and
    # ranked, a hit), B (judged only), C (ranked only), D (ranked, judged non-relevant
    # only). ranx (make_comparable=True) and ir_measures average over the qrels' users
    # A, B, D (B and D score 0); trec_eval (pytrec_eval) over A and D.
    ranx = pytest.importorskip("ranx")
    irm = pytest.importorskip("ir_measures")
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = {"A": {"a1": 3.0, "a2": 2.0, "a3": 1.0}, "C": {"c1": 2.0}, "D": {"d1": 2.0, "d2": 1.0}}
    qrels = {"A": {"a2": 1, "a9": 1}, "B": {"b1": 1}, "D": {"d1": 0}}
    recs = pl.DataFrame(
        [(u, i, s) for u, d in run.items() for i, s in d.items()],
        schema=["user", "item", "score"],
        orient="row",
    )
    truth = pl.DataFrame(
        [(u, i, float(r)) for u, d in qrels.items() for i, r in d.items()],
        schema=["user", "item", "relevance"],
        orient="row",
    )
    data = prk.join(recs, truth, check_overlap=False)

    def ours(preset: str, names: list[str], **kw: Any) -> list[float]:
        out = prk.evaluate(data, names, conventions=preset, **kw)
        return [out[f"{n}[{preset}]"].item() for n in names]

    names = ["precision@2", "recall@2", "ndcg@2", "mrr@2", "map@2", "hit_rate@2"]
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, make_comparable=True)
    assert ours("ranx", names) == pytest.approx([theirs[n] for n in names], rel=1e-12)
    assert ours("ranx", ["precision@2"])[0] == pytest.approx((1 / 2 + 0 + 0) / 3)
    measures = [irm.P @ 2, irm.R @ 2, irm.nDCG @ 2, irm.AP, irm.RR, irm.Success @ 2]
    got = irm.calc_aggregate(measures, qrels, run)
    names = ["P@2", "R@2", "nDCG@2", "AP", "RR", "Success@2"]
    assert ours("ir_measures", names) == pytest.approx([got[m] for m in measures], rel=1e-12)
    for name, measure in (("RR@2", irm.RR @ 2), ("Judged@2", irm.Judged @ 2)):
        value = irm.calc_aggregate([measure], qrels, run)[measure]
        assert ours("ir_measures", [name], ties="item_asc") == pytest.approx([value])
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"P.2", "map"}).evaluate(run)
    assert sorted(per_query) == ["A", "D"]
    expected = [sum(v[m] for v in per_query.values()) / 2 for m in ("P_2", "map")]
    assert ours("trec_eval", ["P_2", "map"]) == pytest.approx(expected, rel=1e-12)


def test_rectools_serendipity_over_the_users_of_reco() -> None:
    # MobileTeleSystems/RecTools rectools/metrics/serendipity.py docstring: Serendipity@1
    # [0, 0.25, 0, 0.25], @2 [0, 0.5, 0, 0.125]. Serendipity.fit takes its users from
    # reco (rank <= k): u5, recommended i3 without any test interaction, is_relevant 0,
    # scores 0 and is averaged.
    u5 = pl.DataFrame({"user": ["u5"], "item": ["i3"], "rank": [1]})
    reco = pl.concat([RECTOOLS_RECO, u5])
    inter = RECTOOLS_TEST.with_columns(relevance=pl.lit(1.0))
    prev = RECTOOLS_PREV
    data = reco.join(inter, on=["user", "item"], how="full", coalesce=True).with_columns(
        relevance=pl.when(pl.col("user") != "u5").then(pl.col("relevance").fill_null(0.0))
    )
    run = {"rank": "rank", "history": prev, "n_items": 4}
    got = per_user(data, ["Serendipity@1", "Serendipity@2"], "rectools", **run)
    assert got["Serendipity@1[rectools]"].to_list() == [0, 0.25, 0, 0.25, 0]
    assert got["Serendipity@2[rectools]"].to_list() == [0, 0.5, 0, 0.125, 0]
    out = prk.evaluate(data, ["Serendipity@2"], conventions="rectools", **run)
    assert out.item(0, 0) == pytest.approx((0.5 + 0.125) / 5)


# ------------------------------------------- user sets read from the libraries' code (2)
# Three users: 1 recommended and judged, 2 recommended but never judged (null relevance),
# 3 judged but never recommended. Items 1 and 2 are candidates of user 1 and 2.
UNIVERSE = frame({1: [(1, 0.9), (2, 0.5)], 2: [(1, 0.9), (2, 0.5)]}, {1: {1: 1.0}, 3: {5: 1.0}})


@pytest.mark.filterwarnings("ignore:No positive class found")
def test_sklearn_averages_every_row_given() -> None:
    # scikit-learn _ranking.py: ndcg_score / dcg_score return np.average of the per-sample
    # scores over every row of y_true (an all-zero row scores 0: _ndcg_sample_scores sets
    # it to 0); y_true has no "unjudged" cell, so user 2's null relevance is a zero row.
    metrics = pytest.importorskip("sklearn.metrics")
    recommended = UNIVERSE.filter(pl.col("score").is_not_null())
    got = prk.evaluate(
        recommended, ["ndcg_score", "dcg_score", "average_precision_score"], conventions="sklearn"
    )
    y_true, y_score = [[1, 0], [0, 0]], [[0.9, 0.5], [0.9, 0.5]]
    assert got["ndcg_score[sklearn]"].item() == pytest.approx(metrics.ndcg_score(y_true, y_score))
    assert got["ndcg_score[sklearn]"].item() == pytest.approx((1 + 0) / 2)
    assert got["dcg_score[sklearn]"].item() == pytest.approx(metrics.dcg_score(y_true, y_score))
    # average='samples' is the per-row mean (the default 'macro' averages the columns).
    assert got["average_precision_score[sklearn]"].item() == pytest.approx(
        metrics.average_precision_score(y_true, y_score, average="samples")
    )
    assert got["n_users(ndcg_score[sklearn])"].item() == 2


def test_torchmetrics_averages_every_query_of_indexes() -> None:
    # torchmetrics retrieval/base.py RetrievalMetric.compute: one group per distinct value
    # of indexes (_flexible_bincount over torch.unique), a group without a positive target
    # appends 0.0 (empty_target_action='neg', the default), then the mean. Every row has a
    # target, so user 2's unjudged rows are target 0: a query scoring 0. As torchmetrics
    # is called: preds [.9, .5, .9, .5], target [1, 0, 0, 0], indexes [1, 1, 2, 2].
    recommended = UNIVERSE.filter(pl.col("score").is_not_null())
    got = prk.evaluate(
        recommended,
        ["RetrievalPrecision@1", "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalRecall@1"],
        conventions="torchmetrics",
    )
    assert got["RetrievalPrecision@1[torchmetrics]"].item() == pytest.approx((1 + 0) / 2)
    assert got["RetrievalMRR[torchmetrics]"].item() == pytest.approx((1 + 0) / 2)
    assert got["RetrievalNormalizedDCG[torchmetrics]"].item() == pytest.approx((1 + 0) / 2)
    assert got["RetrievalRecall@1[torchmetrics]"].item() == pytest.approx((1 + 0) / 2)
    # FallOut: user 2's query has two negatives, one in the top 1 (1/2); user 1's has one
    # negative, outside the top 1 (0): (0 + 1/2) / 2.
    fallout = prk.evaluate(recommended, "RetrievalFallOut@1", conventions="torchmetrics")
    assert fallout["RetrievalFallOut@1[torchmetrics]"].item() == pytest.approx((0 + 0.5) / 2)


def test_lenskit_measures_every_output_list_and_fills_nan_with_zero() -> None:
    # lenskit/metrics/bulk.py RunAnalysis.measure iterates over the output lists: a list
    # without test data is measured against an empty ItemList (a warning: "could not find
    # test data"), where Recall is 0 / 0, NDCG, RecipRank and Hit return NaN; Precision
    # of an empty list is NaN. RunAnalysisResult.list_summary fills the NaNs with each
    # ListMetric's default 0.0, then takes the mean. lenskit.batch.recommend gives every
    # requested test user a list (user 3: an empty one). Per user:
    # Recall@2 [1/1, 0, 0], NDCG [1, 0, 0], Hit [1, 0, 0], Precision@2 [1/2, 0, 0].
    got = prk.evaluate(
        UNIVERSE, ["Recall@2", "NDCG", "Hit", "Precision@2", "RecipRank"], conventions="lenskit"
    )
    assert got["Recall@2[lenskit]"].item() == pytest.approx((1 + 0 + 0) / 3)
    assert got["NDCG[lenskit]"].item() == pytest.approx((1 + 0 + 0) / 3)
    assert got["Hit[lenskit]"].item() == pytest.approx((1 + 0 + 0) / 3)
    assert got["Precision@2[lenskit]"].item() == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert got["RecipRank[lenskit]"].item() == pytest.approx((1 + 0 + 0) / 3)
    assert got["n_users(NDCG[lenskit])"].item() == 3


def test_user_sets_read_from_code_of_the_other_presets() -> None:
    # The presets whose user set already matched their library's code, on UNIVERSE
    # (user 1 recommended and judged, 2 recommended only, 3 judged only).
    def one(preset: str, name: str) -> tuple[float, int]:
        got = prk.evaluate(UNIVERSE, name, conventions=preset)
        return got.item(0, 0), got[f"n_users({name}[{preset}])"].item()

    # recommenders python_evaluation.py merge_ranking_true_pred: common users of
    # rating_true and rating_pred (user 1): hits / k summed / n_users.
    assert one("recommenders", "precision_at_k@2") == (1 / 2, 1)
    # ndcg_at_k outer-merges rating_true: every truth user, 3 with dcg 0.
    assert one("recommenders", "ndcg_at_k@2") == (pytest.approx((1 + 0) / 2), 2)
    # RecBole FullSortEvalDataLoader: the users of the test interactions (uid_list).
    assert one("recbole", "recall@2") == ((1 + 0) / 2, 2)
    # Hivemall RecallUDAF.iterate: rows with a truth array; a null recommendation array
    # is empty (recall 0).
    assert one("hivemall", "recall@2") == ((1 + 0) / 2, 2)
    # Elliot Precision.eval_user_metric: users of the recommendations with a relevant item.
    assert one("elliot", "Precision@2") == (1 / 2, 1)

"""Intent-aware (diversity) measures: alpha_ndcg, err_ia, nrbp, s_recall, precision_ia,
map_ia (polars_rankeval/metrics/intent.py), the subtopic truth (join(subtopic=),
group_subtopics), the TREC diversity qrels reader and the command line.

Reference: pyndeval (TREC's ndeval in C, as ir_measures uses it) on random qrels with
graded judgments, tied scores and unjudged documents.

Tests the private unit metrics.intent.GREEDY_BLOCK on purpose (the greedy ideal in blocks).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.cli.app import main

LOG2 = math.log2

# Clarke et al. (2008)-style example: subtopics a, b, c; items 1 (a), 2 (b), 3 (a, b),
# 4 (c); the ranking 1, 3, 4, 2. With alpha = 1/2 the gains are 1, 1/2 + 1, 1, 1/2. The
# greedy ideal is 3 (gain 2), 4 (1), then 1 and 2 tie at 1/2: the larger id, 2, goes
# first (ndeval's docno rule), then 1: gains 2, 1, 1/2, 1/2.
RECS = pl.DataFrame({"user": [1] * 4, "item": [1, 3, 4, 2], "score": [4.0, 3.0, 2.0, 1.0]})
QRELS = pl.DataFrame(
    {
        "user": [1] * 5,
        "item": [1, 2, 3, 3, 4],
        "subtopic": ["a", "b", "a", "b", "c"],
        "relevance": [1] * 5,
    }
)
RUN_GAINS = [1.0, 1.5, 1.0, 0.5]
IDEAL_GAINS = [2.0, 1.0, 0.5, 0.5]


def one(metric: str, long: pl.DataFrame | None = None, **options: object) -> float:
    long = prk.join(RECS, QRELS, subtopic="subtopic") if long is None else long
    options.setdefault("ties", "item_desc")
    out = prk.evaluate(long, [metric], **options)  # type: ignore[arg-type]
    return out.to_series(0).item()  # the metric's canonical column


def dcg(gains: list[float], k: int) -> float:
    return sum(g / LOG2(r + 1) for r, g in enumerate(gains[:k], start=1))


def test_join_groups_the_subtopic_judgments_per_item() -> None:
    long = prk.join(RECS, QRELS, subtopic="subtopic").sort("item")
    assert long.columns == ["user", "item", "score", "relevance", "subtopics"]
    assert long["subtopics"].to_list()[2] == [
        {"subtopic": "a", "relevance": 1},
        {"subtopic": "b", "relevance": 1},
    ]
    assert long["relevance"].to_list() == [1, 1, 1, 1]  # the highest of its judgments


def test_alpha_ndcg_hand_computed() -> None:
    raw = 1 / LOG2(2) + 1.5 / LOG2(3) + 1 / LOG2(4) + 0.5 / LOG2(5)
    assert one("alpha_ndcg(normalize=raw)@4") == pytest.approx(raw, abs=1e-15)
    assert dcg(RUN_GAINS, 4) == pytest.approx(raw)
    ideal = 2 / LOG2(2) + 1 / LOG2(3) + 0.5 / LOG2(4) + 0.5 / LOG2(5)
    assert one("alpha_ndcg@4") == pytest.approx(raw / ideal, abs=1e-15)
    assert one("alpha_ndcg@2") == pytest.approx((1 + 1.5 / LOG2(3)) / (2 + 1 / LOG2(3)))
    # ndeval's alpha-DCG: over the "ideal ideal" list, N = 3 subtopics at every rank.
    ideal_ideal = sum(3 * 0.5 ** (r - 1) / LOG2(r + 1) for r in range(1, 5))
    assert one("alpha_ndcg(normalize=ideal_ideal)@4") == pytest.approx(raw / ideal_ideal)
    # alpha = 0: no novelty discount: gains 1, 2, 1, 1 (the number of subtopics).
    assert one("alpha_ndcg(alpha=0,normalize=raw)@4") == pytest.approx(
        1 + 2 / LOG2(3) + 1 / 2 + 1 / LOG2(5)
    )
    # alpha = 1: only a subtopic's first item counts: gains 1, 1, 1, 0.
    assert one("alpha_ndcg(alpha=1,normalize=raw)@4") == pytest.approx(1 + 1 / LOG2(3) + 1 / 2)


def test_err_ia_hand_computed() -> None:
    run = 1 / 1 + 1.5 / 2 + 1 / 3 + 0.5 / 4
    ideal_ideal = 3 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4)
    assert one("err_ia@4") == pytest.approx(run / ideal_ideal, abs=1e-15)
    ideal = 2 / 1 + 1 / 2 + 0.5 / 3 + 0.5 / 4
    assert one("err_ia(normalize=ideal)@4") == pytest.approx(run / ideal, abs=1e-15)
    # Chapelle et al.'s ERR-IA: the mean over the 3 intents of ERR with stop probability
    # 1/2 for a relevant item. Intent a: items at ranks 1, 2: 1/2 + 1/2 * 1/2 / 2; b:
    # ranks 2, 4: 1/2 / 2 + 1/2 * 1/2 / 4; c: rank 3: 1/2 / 3.
    per_intent = [0.5 + 0.25 / 2, 0.5 / 2 + 0.25 / 4, 0.5 / 3]
    assert one("err_ia(normalize=raw)@4") == pytest.approx(sum(per_intent) / 3, abs=1e-15)


def test_nrbp_hand_computed() -> None:
    run = 1 + 1.5 * 0.5 + 1 * 0.25 + 0.5 * 0.125  # beta^(r-1) g(r), beta = 1/2
    assert one("nrbp") == pytest.approx((1 - 0.5 * 0.5) / 3 * run, abs=1e-15)
    ideal = 2 + 1 * 0.5 + 0.5 * 0.25 + 0.5 * 0.125
    assert one("nrbp(normalize=ideal)") == pytest.approx(run / ideal, abs=1e-15)
    assert one("nrbp(normalize=raw)") == pytest.approx(run, abs=1e-15)
    run_b = 1 + 1.5 * 0.9 + 1 * 0.81 + 0.5 * 0.729  # beta = 0.9, alpha = 1/2
    assert one("nrbp(beta=0.9)") == pytest.approx((1 - 0.5 * 0.9) / 3 * run_b)
    assert one("nrbp@2") == pytest.approx(0.75 / 3 * (1 + 1.5 * 0.5))


def test_set_measures_hand_computed() -> None:
    assert one("s_recall@1") == pytest.approx(1 / 3)  # a
    assert one("s_recall@2") == pytest.approx(2 / 3)  # a, b
    assert one("s_recall@3") == 1.0
    assert one("strec@3") == 1.0  # ndeval's name is an alias
    # pairs in the top 3: 1-a, 3-a, 3-b, 4-c, over k N = 3 * 3
    assert one("precision_ia@3") == pytest.approx(4 / 9)
    assert one("precision_ia@10") == pytest.approx(5 / 30)  # a short list is padded
    assert one("precision_ia") == pytest.approx(5 / (4 * 3))  # / (#recommended N)
    # AP per subtopic: a (ranks 1, 2) (1/1 + 2/2) / 2; b (ranks 2, 4) (1/2 + 2/4) / 2;
    # c (rank 3) (1/3) / 1.
    assert one("map_ia") == pytest.approx((1 + 0.5 + 1 / 3) / 3)
    assert one("map_ia@2") == pytest.approx((1 + 0.25 + 0) / 3)


def test_unrecommended_relevant_items_and_grades() -> None:
    # Item 2 not recommended: it still counts for N, the ideal and MAP-IA's #relevant.
    recs = RECS.filter(pl.col("item") != 2)
    long = prk.join(recs, QRELS, subtopic="subtopic")
    assert one("s_recall@3", long) == 1.0
    assert one("map_ia", long) == pytest.approx((1 + 0.5 / 2 + 1 / 3) / 3)
    ideal = 2 / LOG2(2) + 1 / LOG2(3) + 0.5 / LOG2(4) + 0.5 / LOG2(5)
    assert one("alpha_ndcg@4", long) == pytest.approx(dcg(RUN_GAINS[:3], 3) / ideal)
    # rel=2: only the grade-2 judgments count (item 3 for b): N = 1.
    graded = QRELS.with_columns(relevance=pl.Series([1, 1, 1, 2, 1]))
    long = prk.join(RECS, graded, subtopic="subtopic")
    assert one("s_recall(rel=2)@1", long) == 0.0
    assert one("s_recall(rel=2)@2", long) == 1.0
    assert one("precision_ia(rel=2)@2", long) == pytest.approx(1 / 2)


def test_user_without_relevant_subtopic_is_undefined() -> None:
    qrels = pl.concat(
        [QRELS, pl.DataFrame({"user": [2], "item": [9], "subtopic": ["a"], "relevance": [0]})]
    )
    recs = pl.concat([RECS, pl.DataFrame({"user": [2], "item": [9], "score": [1.0]})])
    long = prk.join(recs, qrels, subtopic="subtopic")
    metrics = ["alpha_ndcg@4", "err_ia@4", "nrbp", "s_recall@2", "precision_ia@3", "map_ia"]
    per_user = prk.evaluate(long, metrics, ties="item_desc", per_user=True).sort("user")
    assert per_user.row(1)[1:] == (None,) * len(metrics)
    zero = prk.evaluate(long, ["s_recall@2"], ties="item_desc", empty="zero")
    assert zero["s_recall@2"].item() == pytest.approx((2 / 3 + 0) / 2)  # ndeval's average
    # A user with relevant subtopics but nothing relevant recommended scores 0.
    recs3 = pl.DataFrame({"user": [1], "item": [7], "score": [1.0]})
    long3 = prk.join(recs3, QRELS, subtopic="subtopic", check_overlap=False)
    assert prk.evaluate(long3, metrics, ties="item_desc").row(0)[: len(metrics)] == (0.0,) * 6


# --------------------------------------------------------------------------- ties
def test_tied_scores_follow_the_deterministic_policy() -> None:
    # Items 1 and 3 tied at the top: item_desc puts 3 first, item_asc 1 first.
    recs = RECS.with_columns(score=pl.Series([3.0, 3.0, 2.0, 1.0]))
    long = prk.join(recs, QRELS, subtopic="subtopic")
    desc = 2 / LOG2(2) + 0.5 / LOG2(3) + 1 / LOG2(4) + 0.5 / LOG2(5)  # 3, 1, 4, 2
    asc = dcg(RUN_GAINS, 4)  # 1, 3, 4, 2
    assert one("alpha_ndcg(normalize=raw)@4", long, ties="item_desc") == pytest.approx(desc)
    assert one("alpha_ndcg(normalize=raw)@4", long, ties="item_asc") == pytest.approx(asc)
    # optimistic: the more relevant first (both relevance 1), then item ascending.
    assert one("alpha_ndcg(normalize=raw)@4", long, ties="optimistic") == pytest.approx(asc)
    with pytest.raises(ValueError, match=r"metric 'alpha_ndcg' does not support ties='expected'"):
        one("alpha_ndcg@4", long, ties="expected")


# --------------------------------------------------------------------------- identities
def _random_truth(seed: int, n_users: int = 6) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = random.Random(seed)
    q, r = [], []
    for u in range(n_users):
        n_docs, n_sub = rng.randint(1, 9), rng.randint(1, 4)
        for d in range(n_docs):
            for s in range(n_sub):
                if rng.random() < 0.5:
                    q.append((f"q{u}", str(s), f"d{d:02d}", rng.choice([0, 1, 1, 2])))
        for d in rng.sample(range(n_docs + 4), rng.randint(0, n_docs + 4)):
            r.append((f"q{u}", f"d{d:02d}", float(rng.randint(0, 3))))
    qrels = pl.DataFrame(q, schema=["user", "subtopic", "item", "relevance"], orient="row")
    run = pl.DataFrame(r, schema=["user", "item", "score"], orient="row")
    return run, qrels


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_alpha_zero_is_ndcg_of_the_subtopic_count(seed: int) -> None:
    # No novelty discount: the gain of an item is its number of relevant subtopics, and
    # the greedy ideal is the exact ideal (items by that count, descending).
    run, qrels = _random_truth(seed)
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    count = pl.col("subtopics").list.eval(pl.element().struct.field("relevance") >= 1).list.sum()
    long = long.with_columns(count=count.fill_null(0))
    for k in (1, 3, 10):
        ours = prk.evaluate(long, [f"alpha_ndcg(alpha=0)@{k}"], ties="item_asc", per_user=True)
        ref = prk.evaluate(long, [f"ndcg@{k}"], relevance="count", ties="item_asc", per_user=True)
        joined = ours.join(ref, on="user")
        assert joined[f"alpha_ndcg(alpha=0)@{k}"].to_list() == pytest.approx(
            joined[f"ndcg@{k}"].to_list()
        )


def test_one_subtopic_err_ia_is_err_with_stop_probability_alpha() -> None:
    # With one intent, ERR-IA (raw) is Chapelle's ERR with R = alpha for a relevant
    # item: err(max_grade=1) has R = (2^1 - 1) / 2^1 = 1/2 = alpha.
    run, qrels = _random_truth(5, n_users=10)
    qrels = qrels.with_columns(subtopic=pl.lit("0")).unique(["user", "item", "subtopic"])
    qrels = qrels.with_columns(relevance=(pl.col("relevance") >= 1).cast(pl.Int64))
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    out = prk.evaluate(
        long, ["err_ia(normalize=raw)@5", "err(max_grade=1)@5"], ties="item_desc", per_user=True
    ).drop_nulls()
    assert out.height > 3
    assert out["err_ia(normalize=raw)@5"].to_list() == pytest.approx(
        out["err(max_grade=1)@5"].to_list()
    )


ALL = [
    "alpha_ndcg@5", "alpha_ndcg(normalize=ideal_ideal)@5", "alpha_ndcg", "err_ia@5",
    "err_ia(normalize=ideal)@5", "err_ia(normalize=raw)@5", "err_ia", "nrbp",
    "nrbp(normalize=ideal)", "s_recall@5", "precision_ia@5", "map_ia",
]  # fmt: skip


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), shuffle=st.integers(0, 1000))
def test_bounds_row_order_and_the_ideal_ranking(seed: int, shuffle: int) -> None:
    run, qrels = _random_truth(seed)
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    out = prk.evaluate(long, ALL, ties="item_asc", per_user=True).sort("user")
    for metric in ALL:
        values = out[metric].drop_nulls()
        assert ((values >= -1e-12) & (values <= 1 + 1e-12)).all(), metric
    again = prk.evaluate(long.sample(fraction=1.0, shuffle=True, seed=shuffle), ALL,
                         ties="item_asc", per_user=True).sort("user")  # fmt: skip
    assert_frame_equal(out, again, abs_tol=1e-12)
    # Rank every judged item by its greedy ideal position: alpha_ndcg = nERR-IA = 1.
    ideal = _greedy_positions(qrels)
    perfect = prk.join(ideal, qrels, subtopic="subtopic", check_overlap=False)
    best = prk.evaluate(perfect, ["alpha_ndcg@5", "err_ia(normalize=ideal)@5",
                                  "nrbp(normalize=ideal)", "alpha_ndcg"],
                        ties="item_asc", per_user=True)  # fmt: skip
    for metric in best.columns[1:]:
        assert best[metric].drop_nulls().to_list() == pytest.approx(
            [1.0] * best[metric].drop_nulls().len()
        )


def _greedy_positions(qrels: pl.DataFrame) -> pl.DataFrame:
    """A plain-Python greedy ideal (ndeval's loop), as a run whose scores give its order."""
    rows = []
    relevant = qrels.filter(pl.col("relevance") >= 1)
    for (user,), group in relevant.group_by(["user"]):
        docs: dict[str, set[str]] = {}
        for item, sub in group.select("item", "subtopic").iter_rows():
            docs.setdefault(item, set()).add(sub)
        gain = {s: 1.0 for subs in docs.values() for s in subs}
        left = dict(docs)
        rank = 0
        while left:
            best = max(left, key=lambda d: (sum(gain[s] for s in left[d]), d))
            for s in left.pop(best):
                gain[s] *= 0.5
            rank += 1
            rows.append((user, best, -float(rank)))
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")


def test_greedy_ideal_in_small_blocks_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # Users are processed in blocks of GREEDY_BLOCK array elements: blocks of 1-2 users.
    from polars_rankeval.metrics import intent

    run, qrels = _random_truth(21, n_users=12)
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    metrics = ["alpha_ndcg@3", "alpha_ndcg", "nrbp(normalize=ideal)"]
    whole = prk.evaluate(long, metrics, ties="item_asc", per_user=True)
    monkeypatch.setattr(intent, "GREEDY_BLOCK", 40)
    blocks = prk.evaluate(long, metrics, ties="item_asc", per_user=True)
    assert_frame_equal(whole, blocks)
    assert whole["alpha_ndcg@3"].drop_nulls().len() > 6


# --------------------------------------------------------------------------- reference
NDEVAL = {
    "alpha_ndcg@{k}": "alpha-nDCG@{k}",
    "alpha_ndcg(normalize=ideal_ideal)@{k}": "alpha-DCG@{k}",
    "err_ia@{k}": "ERR-IA@{k}",
    "err_ia(normalize=ideal)@{k}": "nERR-IA@{k}",
    "s_recall@{k}": "strec@{k}",
    "precision_ia@{k}": "P-IA@{k}",
    "nrbp": "NRBP",
    "nrbp(normalize=ideal)": "nNRBP",
    "map_ia": "MAP-IA",
}


@pytest.mark.parametrize("seed", range(6))
def test_equals_ndeval_on_random_qrels_with_ties(seed: int) -> None:
    pyndeval = pytest.importorskip("pyndeval")
    run, qrels = _random_truth(seed, n_users=8)
    ours_names, ref_names = [], []
    for ours, ref in NDEVAL.items():
        ks = (1, 2, 3, 5, 10, 20) if "{k}" in ours else (None,)
        for k in ks:
            ours_names.append(ours.format(k=k))
            ref_names.append(ref.format(k=k))
    # pyndeval orders a query's documents by score, then doc id ascending: item_asc.
    expected = pyndeval.ndeval(
        list(qrels.iter_rows()), list(run.sort("user").iter_rows()), measures=ref_names
    )
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    got = prk.evaluate(long, ours_names, ties="item_asc", per_user=True, users="both")
    compared = 0
    for row in got.iter_rows(named=True):
        for ours, ref in zip(ours_names, ref_names, strict=True):
            value, want = row[ours], expected[row["user"]][ref]
            if value is None:  # no relevant subtopic: ndeval reports 0 (nNRBP: 0 / 0)
                assert want == 0.0 or math.isnan(want)
                continue
            if ref in ("alpha-DCG@1", "ERR-IA@1"):
                # ndeval leaves rank 1 unnormalised (its loop starts at rank 2).
                n = qrels.filter((pl.col("user") == row["user"]) & (pl.col("relevance") >= 1))
                want /= n["subtopic"].n_unique()
            assert value == pytest.approx(want, abs=1e-12), (row["user"], ours)
            compared += 1
    assert compared > 100


# --------------------------------------------------------------------------- engines
def test_buckets_by_groups_and_compare() -> None:
    run, qrels = _random_truth(11, n_users=30)
    runs = pl.concat([
        run.with_columns(system=pl.lit("a")),
        run.with_columns(system=pl.lit("b"), score=-pl.col("score")),
    ])  # fmt: skip
    long = prk.join(runs, qrels, subtopic="subtopic", by="system", check_overlap=False)
    metrics = ["alpha_ndcg@5", "err_ia@5", "nrbp(normalize=ideal)", "map_ia", "ndcg@5"]
    mem = prk.evaluate(long, metrics, ties="item_desc", by="system")
    buckets = prk.evaluate(
        long, metrics, ties="item_desc", by="system", engine=prk.Buckets(n_buckets=3)
    )
    partition = prk.evaluate(
        long, metrics, ties="item_desc", by="system", engine=prk.Partition(n_buckets=2)
    )
    for metric in metrics:
        assert buckets[metric].to_list() == pytest.approx(mem[metric].to_list(), abs=1e-12)
        assert partition[metric].to_list() == pytest.approx(mem[metric].to_list(), abs=1e-12)
    a = prk.evaluate(long.filter(pl.col("system") == "a").drop("system"), metrics, ties="item_desc")
    assert mem.filter(pl.col("system") == "a")["alpha_ndcg@5"].item() == pytest.approx(
        a["alpha_ndcg@5"].item()
    )
    pytest.importorskip("scipy")
    result = prk.compare(long, ["alpha_ndcg@5"], baseline="a", ties="item_desc", test="t")
    # Defined for the same users in both systems (it depends on the truth only).
    assert result["n_users"].item() == mem["n_users(alpha_ndcg@5)"][0]
    assert result["diff"].item() == pytest.approx(
        mem["alpha_ndcg@5"][1] - mem["alpha_ndcg@5"][0], abs=1e-12
    )


# --------------------------------------------------------------------------- errors
def test_errors() -> None:
    plain = prk.join(RECS, QRELS.unique(["user", "item"]))
    with pytest.raises(
        ValueError, match=r"column 'subtopics' \(read by alpha_ndcg@3\) not found in the data"
    ):
        prk.evaluate(plain, ["alpha_ndcg@3"], ties="item_desc")
    with pytest.raises(
        ValueError, match=r"parameter 'alpha' of metric 'alpha_ndcg' must be in \[0, 1\], got 1.5"
    ):
        prk.parse_metric("alpha_ndcg(alpha=1.5)@3")
    with pytest.raises(
        ValueError, match=r"parameter 'beta' of metric 'nrbp' must be in \[0, 1\), got 1.0"
    ):
        prk.parse_metric("nrbp(beta=1)")
    with pytest.raises(ValueError, match=r"needs alpha > 0"):
        one("alpha_ndcg(alpha=0,normalize=ideal_ideal)")
    with pytest.raises(
        ValueError,
        match=r"'subtopic' is null, or one subtopic is judged twice, for \(user, item\) in "
        r"\[\(1, 3\)\]",
    ):
        prk.join(RECS, pl.concat([QRELS, QRELS.slice(2, 1)]), subtopic="subtopic")
    nulls = QRELS.with_columns(
        subtopic=pl.when(pl.col("item") == 4).then(None).otherwise(pl.col("subtopic"))
    )
    with pytest.raises(ValueError, match=r"for \(user, item\) in \[\(1, 4\)\]"):
        prk.join(RECS, nulls, subtopic="subtopic")
    with pytest.raises(ValueError, match=r"column 'topic' not found in truth"):
        prk.join(RECS, QRELS, subtopic="topic")
    wrong = prk.join(RECS, QRELS, subtopic="subtopic").with_columns(subtopics=pl.lit("a"))
    with pytest.raises(
        TypeError, match=r"column 'subtopics' must hold each item's subtopic judgments"
    ):
        one("s_recall@2", wrong)
    # A null inside the list (a frame built by hand): an error naming the item.
    holes = prk.join(RECS, QRELS, subtopic="subtopic").with_columns(
        subtopics=pl.when(pl.col("item") == 4)
        .then(pl.lit([None], dtype=pl.List(pl.String)))
        .otherwise(pl.col("subtopics").list.eval(pl.element().struct.field("subtopic")))
    )
    with pytest.raises(ValueError, match=r"column 'subtopics' has a null .* item \[4\]"):
        one("s_recall@2", holes)
    # A plain list of subtopic ids (each relevant) is accepted.
    ids = holes.filter(pl.col("item") != 4)
    assert one("s_recall@2", ids) == 1.0


# --------------------------------------------------------------------------- files
def test_diversity_qrels_reader_and_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.div"
    qrels.write_text("1 a d1 1\n1  b\td2 1\n1 a d3 1\n1 b d3 1\n1 c d4 1\n")
    run = tmp_path / "sys.run"
    run.write_text("".join(f"1 Q0 d{d} {r} {5 - r} x\n" for r, d in enumerate([1, 3, 4, 2], 1)))
    read = prk.trec.read_diversity_qrels(qrels)
    assert read.rows()[1] == ("1", "b", "d2", 1)
    assert prk.trec.scan_diversity_qrels(qrels).collect().equals(read)
    bad = tmp_path / "bad.div"
    bad.write_text("1 a d1 1\n1 a d2\n")
    with pytest.raises(ValueError, match=r"bad.div:2: malformed line '1 a d2'"):
        prk.trec.scan_diversity_qrels(bad)
    code = main(["--recs", str(run), "--truth", str(qrels), "-m", "alpha_ndcg(normalize=raw)@4",
                 "-m", "s_recall@2", "--ties", "item_desc", "--format", "csv"])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    header, values = lines[0].split(","), lines[1].split(",")
    assert float(values[header.index("alpha_ndcg(normalize=raw)@4")]) == pytest.approx(
        dcg(RUN_GAINS, 4)
    )
    assert float(values[header.index("s_recall@2")]) == pytest.approx(2 / 3)
    # A CSV truth with a subtopic column: --subtopic names it.
    csv = tmp_path / "truth.csv"
    read.write_csv(csv)
    code = main(["--recs", str(run), "--truth", str(csv), "--subtopic", "subtopic",
                 "-m", "s_recall@2", "--ties", "item_desc", "--format", "csv",
                 "--id-type", "string"])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("0.66666")


def test_compare_command_line_with_diversity_qrels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run, qrels = _random_truth(3, n_users=12)
    qrels_path = tmp_path / "topics.div"
    qrels_path.write_text("".join(f"{u} {s} {d} {r}\n" for u, s, d, r in qrels.iter_rows()))
    paths = []
    for name, sign in (("up", 1.0), ("down", -1.0)):
        path = tmp_path / f"{name}.run"
        lines = [f"{u} Q0 {d} 0 {sign * x} t\n" for u, d, x in run.iter_rows()]
        path.write_text("".join(lines))
        paths += ["--run", str(path)]
    code = main(["compare", "--qrels", str(qrels_path), *paths, "-m", "alpha_ndcg@5",
                 "--ties", "item_desc", "--baseline", "up", "--test", "t",
                 "--format", "csv"])  # fmt: skip
    assert code == 0
    out = pl.read_csv(capsys.readouterr().out.encode())
    long = prk.join(
        pl.concat([run.with_columns(system=pl.lit("up")),
                   run.with_columns(system=pl.lit("down"), score=-pl.col("score"))]),
        qrels, subtopic="subtopic", by="system", check_overlap=False,
    )  # fmt: skip
    want = prk.compare(long, ["alpha_ndcg@5"], baseline="up", ties="item_desc", test="t")
    assert out["diff"].item() == pytest.approx(want["diff"].item(), abs=1e-12)
    assert out["n_users"].item() == want["n_users"].item() > 5


def test_ir_measures_preset_matches_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    run, qrels = _random_truth(8, n_users=8)
    names = ["alpha_nDCG@5", "alpha_DCG@10", "ERR_IA@3", "nERR_IA@10", "NRBP", "nNRBP",
             "AP_IA", "P_IA@5", "StRecall@2"]  # fmt: skip
    qdf = qrels.select(
        pl.col("user").alias("query_id"), pl.col("item").alias("doc_id"), "relevance",
        pl.col("subtopic").alias("iteration"),
    ).to_pandas()  # fmt: skip
    rdf = run.select(
        pl.col("user").alias("query_id"), pl.col("item").alias("doc_id"), "score"
    ).to_pandas()
    theirs = {
        (str(m.measure), m.query_id): m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qdf, rdf)
    }
    long = prk.join(run, qrels, subtopic="subtopic", check_overlap=False)
    ours = prk.evaluate(long, names, conventions="ir_measures", ties="item_asc", per_user=True)
    compared = 0
    for row in ours.iter_rows(named=True):
        for name in names:
            want = theirs.get((name, row["user"]))
            if want is None or math.isnan(want):
                continue
            assert (row[f"{name}[ir_measures]"] or 0.0) == pytest.approx(want, abs=1e-12)
            compared += 1
    assert compared > 40

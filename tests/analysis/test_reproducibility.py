"""prk.reproducibility / prk.replicability: Breuer et al. (2020) as repro_eval computes them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.analysis.reproducibility_effects import EFFECT_COLUMNS
from polars_rankeval.analysis.reproducibility_ordering import ORDERING_COLUMNS, _inversions

# Our metric names and repro_eval's (ir_measures) names for the same trec_eval measures.
METRICS = {
    "map": "AP",
    "ndcg": "nDCG",
    "ndcg@10": "nDCG@10",
    "precision@5": "P@5",
    "precision@10": "P@10",
    "recall@100": "R@100",
    "mrr": "RR",
    "r_precision": "Rprec",
    "bpref": "Bpref",
}


def run(topic_items: dict[str, str], scores: list[float] | None = None) -> pl.DataFrame:
    """One run: each topic's items (a string of one-letter ids) scored n, n-1, ... 1."""
    rows = []
    for topic, items in topic_items.items():
        n = len(items)
        for i, doc in enumerate(items):
            rows.append((topic, doc, float(n - i) if scores is None else scores[i]))
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")


QRELS = pl.DataFrame({"user": ["q"] * 4, "item": list("abce"), "relevance": [1, 1, 0, 1]})


# --------------------------------------------------------------------------- hand-computed
def test_ktu_hand_computed() -> None:
    orig = run({"q": "abcd"})
    # b, a swapped: the ids at ranks 1..4 are (a, b, c, d) and (b, a, c, d): 1 discordant
    # pair of 6 -> (5 - 1) / 6.
    out = prk.reproducibility(orig, run({"q": "bacd"}), qrels=QRELS, metrics=["precision@2"])
    assert out.ordering_per_topic["ktu"].item() == pytest.approx((5 - 1) / 6, abs=1e-15)
    # Reversed: every pair discordant.
    out = prk.reproducibility(orig, run({"q": "dcba"}), qrels=QRELS, metrics=["precision@2"])
    assert out.ordering_per_topic["ktu"].item() == pytest.approx(-1.0, abs=1e-15)
    # repro_eval's KTU compares the ids found at each rank: other documents whose ids
    # sort as the original's give 1 (a, b, e, f against a, b, c, d: both increasing).
    out = prk.reproducibility(orig, run({"q": "abef"}), qrels=QRELS, metrics=["precision@2"])
    assert out.ordering_per_topic["ktu"].item() == pytest.approx(1.0, abs=1e-15)


def test_ktu_different_lengths_uses_the_shorter_list() -> None:
    # a b c d against b a c: the first 3 ranks, (a, b, c) vs (b, a, c): 1 of 3 pairs.
    out = prk.reproducibility(
        run({"q": "abcd"}), run({"q": "bac"}), qrels=QRELS, metrics=["precision@2"]
    )
    row = out.ordering_per_topic.row(0, named=True)
    assert (row["n_original"], row["n_reproduced"]) == (4, 3)
    assert row["ktu"] == pytest.approx((2 - 1) / 3, abs=1e-15)


def test_ktu_undefined_for_one_document() -> None:
    out = prk.reproducibility(
        run({"q": "a", "r": "ab"}), run({"q": "a", "r": "ba"}), qrels=QRELS, metrics=["map"]
    )
    assert out.ordering_per_topic["ktu"].to_list() == [None, -1.0]
    assert out.ordering.select("ktu", "n_topics", "n_topics(ktu)").row(0) == (-1.0, 2, 1)


def test_rbo_hand_computed() -> None:
    # a b c d against b a c e, p = 1/2: overlaps 0, 2, 3, 3 at depths 1..4.
    orig, rep = run({"q": "abcd"}), run({"q": "bace"})
    out = prk.reproducibility(orig, rep, qrels=QRELS, metrics=["map"], rbo_p=0.5, rbo_depth=4)
    expected = (1 * 0 / 1 + 0.5 * 2 / 2 + 0.25 * 3 / 3 + 0.125 * 3 / 4) / (1 + 0.5 + 0.25 + 0.125)
    assert out.ordering_per_topic["rbo"].item() == pytest.approx(expected, abs=1e-15)
    # Past the lists' end the overlap stays 3 while the depth grows (no extrapolation).
    out = prk.reproducibility(orig, rep, qrels=QRELS, metrics=["map"], rbo_p=0.5, rbo_depth=6)
    num = 0.5 * 2 / 2 + 0.25 * 3 / 3 + 0.125 * 3 / 4 + 0.0625 * 3 / 5 + 0.03125 * 3 / 6
    den = 1 + 0.5 + 0.25 + 0.125 + 0.0625 + 0.03125
    assert out.ordering_per_topic["rbo"].item() == pytest.approx(num / den, abs=1e-15)


def test_rbo_differs_from_rank_similarity_webber_estimate() -> None:
    # The same lists, p = 1/2, depth 4: Webber et al.'s extrapolated RBO (rank_similarity)
    # against repro_eval's normalised sum: two definitions, two numbers.
    orig, rep = run({"q": "abcd"}), run({"q": "bace"})
    webber = prk.rank_similarity(orig, rep, ["rbo(p=0.5)@4"], per_user=True)
    ext = (1 - 0.5) / 0.5 * (0.5**2 * 2 / 2 + 0.5**3 * 3 / 3 + 0.5**4 * 3 / 4) + 3 / 4 * 0.5**4
    assert webber["rbo(p=0.5)@4"].item() == pytest.approx(ext, abs=1e-15)  # 0.46875
    ours = prk.reproducibility(orig, rep, qrels=QRELS, metrics=["map"], rbo_p=0.5, rbo_depth=4)
    normalised = (0.5 * 2 / 2 + 0.25 * 3 / 3 + 0.125 * 3 / 4) / (1 + 0.5 + 0.25 + 0.125)
    assert ours.ordering_per_topic["rbo"].item() == pytest.approx(normalised, abs=1e-15)  # 0.45
    assert ext != pytest.approx(normalised)


def test_rmse_nrmse_ttest_hand_computed() -> None:
    qrels = pl.DataFrame({"user": ["q", "r"], "item": ["a", "a"], "relevance": [1, 1]})
    # precision@1: original 1, 0 ; reproduced 0, 0.
    orig = run({"q": "ab", "r": "ba"})
    rep = run({"q": "ba", "r": "ba"})
    out = prk.reproducibility(orig, rep, qrels=qrels, metrics=["precision@1"])
    row = out.effectiveness.row(0, named=True)
    assert row["rmse"] == pytest.approx(math.sqrt((1**2 + 0**2) / 2), abs=1e-15)
    # the largest RMSE given the original 1, 0: max(x, 1 - x) = 1, 1
    assert row["nrmse"] == pytest.approx(math.sqrt(0.5) / math.sqrt((1 + 1) / 2), abs=1e-15)
    assert (row["mean_original"], row["mean_reproduced"], row["n_topics"]) == (0.5, 0.0, 2)
    # differences 1, 0: t = 0.5 / (sd 0.7071 / sqrt 2) = 1 on 1 df: p = 0.5
    assert row["p_value"] == pytest.approx(0.5, abs=1e-12)


def test_er_delta_ri_hand_computed() -> None:
    qrels = pl.DataFrame({"user": ["q", "r"], "item": ["a", "a"], "relevance": [1, 1]})
    # precision@1 per topic (q, r): original advanced 1, 1; baseline 0, 1
    # reproduced advanced 1, 0; baseline 0, 0
    out = prk.reproducibility(
        run({"q": "ab", "r": "ab"}),
        run({"q": "ab", "r": "ba"}),
        qrels=qrels,
        baseline_original=run({"q": "ba", "r": "ab"}),
        baseline_reproduced=run({"q": "ba", "r": "ba"}),
        metrics=["precision@1"],
    )
    assert out.effects is not None
    assert out.effects.columns == list(EFFECT_COLUMNS)
    row = out.effects.row(0, named=True)
    assert row["improvement_original"] == (1 + 0) / 2
    assert row["improvement_reproduced"] == (1 + 0) / 2
    assert row["er"] == 0.5 / 0.5
    assert row["ri_original"] == (1.0 - 0.5) / 0.5
    assert row["ri_reproduced"] is None  # the reproduced baseline scores 0: undefined
    assert row["delta_ri"] is None
    assert out.ordering["run"].to_list() == ["advanced", "baseline"]


def test_identical_runs() -> None:
    orig = run({"q": "abcd", "r": "cab"})
    out = prk.reproducibility(
        orig, orig.lazy(), qrels=QRELS, metrics=["map", "ndcg@10"], rbo_depth=3
    )
    assert out.ordering.columns == list(ORDERING_COLUMNS)
    assert out.ordering.select("ktu", "rbo").row(0) == (1.0, pytest.approx(1.0, abs=1e-15))
    assert out.effectiveness["rmse"].to_list() == [0.0, 0.0]
    # scipy's 0 / 0: repro_eval reads identical score distributions as p = 1
    assert out.effectiveness["p_value"].to_list() == [1.0, 1.0]


def test_ties_broken_by_document_id_descending() -> None:
    # All tied: trec_eval's order is the ids descending, d c b a, whatever the row order.
    orig = run({"q": "abcd"}, scores=[1.0, 1.0, 1.0, 1.0])
    rep = run({"q": "dcba"}, scores=[4.0, 3.0, 2.0, 1.0])
    out = prk.reproducibility(orig, rep, qrels=QRELS, metrics=["precision@1"], rbo_depth=4)
    assert out.ordering.select("ktu", "rbo").row(0) == (1.0, pytest.approx(1.0, abs=1e-15))
    assert out.effectiveness["rmse"].item() == 0.0
    # Ascending ids (a b c d) would be the reverse order: KTU -1.
    rep = run({"q": "abcd"}, scores=[4.0, 3.0, 2.0, 1.0])
    out = prk.reproducibility(orig, rep, qrels=QRELS, metrics=["precision@1"])
    assert out.ordering_per_topic["ktu"].item() == -1.0


def test_topics_in_one_run_only() -> None:
    out = prk.reproducibility(
        run({"q": "abcd", "x": "ab"}), run({"q": "abcd", "y": "ab"}), qrels=QRELS, metrics=["map"]
    )
    assert out.ordering.select(
        "n_topics", "n_topics_only_original", "n_topics_only_reproduced"
    ).row(0) == (1, 1, 1)
    assert out.ordering_per_topic["user"].to_list() == ["q"]


def test_a_judged_topic_a_run_lacks_scores_as_an_empty_ranking() -> None:
    qrels = pl.DataFrame({"user": ["q", "r"], "item": ["a", "a"], "relevance": [1, 1]})
    # precision@1: original 1 (q), 1 (r); the reproduction lost r: 1, 0
    out = prk.reproducibility(
        run({"q": "ab", "r": "ab"}), run({"q": "ab"}), qrels=qrels, metrics=["precision@1"]
    )
    row = out.effectiveness.row(0, named=True)
    assert row["rmse"] == pytest.approx(math.sqrt((0**2 + 1**2) / 2), abs=1e-15)
    assert (row["n_topics"], row["n_unranked_original"], row["n_unranked_reproduced"]) == (2, 0, 1)
    # the ordering compares the topics both rank
    assert out.ordering.select("n_topics", "n_topics_only_original").row(0) == (1, 1)


def test_replicability_collections_may_share_topic_ids() -> None:
    q1 = pl.DataFrame({"user": ["1", "2"], "item": ["a", "a"], "relevance": [1, 1]})
    q2 = pl.DataFrame({"user": ["1", "3"], "item": ["x", "x"], "relevance": [1, 1]})
    # original: topic 1 finds a (1), topic 2 does not (0); replicated: topic 1 finds x
    # (1), topic 3 is not ranked (0 over its judgments), and nothing of q1 leaks in.
    out = prk.replicability(
        run({"1": "ab", "2": "ba"}),
        run({"1": "xa"}),
        qrels_original=q1,
        qrels_replicated=q2,
        metrics=["precision@1"],
        users="truth",
    )
    row = out.effectiveness.row(0, named=True)
    assert (row["mean_original"], row["mean_replicated"]) == ((1 + 0) / 2, (1 + 0) / 2)
    assert (row["n_unranked_original"], row["n_unranked_replicated"]) == (0, 1)


def test_lazy_and_eager_agree() -> None:
    orig, rep = run({"q": "abcd", "r": "cab"}), run({"q": "bacd", "r": "abc"})
    eager = prk.reproducibility(orig, rep, qrels=QRELS)
    lazy = prk.reproducibility(orig.lazy(), rep.lazy(), qrels=QRELS.lazy())
    assert eager.effects is None
    assert lazy.effects is None
    for a, b in zip(eager[:3], lazy[:3], strict=True):
        assert_frame_equal(a, b)


def test_inversions_kernel_against_brute_force() -> None:
    rng = np.random.default_rng(3)
    for width in (1, 2, 4, 8, 32):
        perm = np.argsort(rng.random((50, width)), axis=1).astype(np.int32)
        brute = [
            sum(1 for i in range(width) for j in range(i + 1, width) if row[i] > row[j])
            for row in perm
        ]
        assert _inversions(perm).tolist() == brute


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"depth": 0},
            ValueError,
            "'depth' of reproducibility must be an integer >= 1 or None, got 0",
        ),
        ({"depth": 2.5}, TypeError, "'depth' of reproducibility must be .*, got float 2.5"),
        (
            {"rbo_p": 1.0},
            ValueError,
            r"'rbo_p' of reproducibility must be a number in \(0, 1\), got 1.0",
        ),
        (
            {"rbo_depth": 0},
            ValueError,
            "'rbo_depth' of reproducibility must be an integer >= 1, got 0",
        ),
        (
            {"baseline_original": run({"q": "ab"})},
            ValueError,
            "baseline_original is given but baseline_reproduced is not",
        ),
        ({"by": "system"}, TypeError, "does not take by="),
    ],
)
def test_errors(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        prk.reproducibility(run({"q": "ab"}), run({"q": "ab"}), qrels=QRELS, **kwargs)


def test_input_errors() -> None:
    with pytest.raises(
        TypeError, match="reproduced must be a polars DataFrame or LazyFrame, got list"
    ):
        prk.reproducibility(run({"q": "ab"}), [1], qrels=QRELS)
    expected = (
        r"qrels must be .* got a path \('q.txt'\); read a TREC file lazily with prk.trec.scan_qrels"
    )
    with pytest.raises(TypeError, match=expected):
        prk.reproducibility(run({"q": "ab"}), run({"q": "ab"}), qrels="q.txt")
    with pytest.raises(ValueError, match="original has no column 'score'"):
        prk.reproducibility(run({"q": "ab"}).drop("score"), run({"q": "ab"}), qrels=QRELS)
    dup = pl.concat([run({"q": "ab"}), run({"q": "a"})])
    with pytest.raises(ValueError, match=r"original run \(advanced\) has 1 rows whose"):
        prk.reproducibility(dup, run({"q": "ab"}), qrels=QRELS)


def test_replicability_hand_computed() -> None:
    q1 = pl.DataFrame({"user": ["q1", "q2", "q3"], "item": ["a"] * 3, "relevance": [1] * 3})
    q2 = pl.DataFrame({"user": ["r1", "r2"], "item": ["x"] * 2, "relevance": [1] * 2})
    orig = run({"q1": "ab", "q2": "ba", "q3": "ab"})  # precision@1: 1, 0, 1
    rep = run({"r1": "xy", "r2": "yx"})  # 1, 0
    out = prk.replicability(
        orig, rep, qrels_original=q1, qrels_replicated=q2, metrics=["precision@1"]
    )
    row = out.effectiveness.row(0, named=True)
    assert (row["mean_original"], row["mean_replicated"]) == (2 / 3, 1 / 2)
    assert (row["n_topics_original"], row["n_topics_replicated"]) == (3, 2)
    scipy = pytest.importorskip("scipy.stats")
    assert row["p_value"] == pytest.approx(scipy.ttest_ind([1, 0, 1], [1, 0]).pvalue, abs=1e-15)
    assert out.effects is None


# --------------------------------------------------------------------------- repro_eval
def _write_run(path: Path, rng: np.random.Generator, topics: dict[str, int]) -> None:
    """A TREC run, each topic listed by descending score (ties in random order)."""
    lines = []
    for topic, n in topics.items():
        docs = rng.choice(120, size=n, replace=False)
        scores = np.round(rng.random(n) * 4) / 4  # many ties
        order = np.lexsort((rng.random(n), -scores))
        for rank, i in enumerate(order, 1):
            lines.append(f"{topic} Q0 d{docs[i]} {rank} {scores[i]} tag")
    path.write_text("\n".join(lines) + "\n")


def _write_qrels(path: Path, rng: np.random.Generator, topics: list[str]) -> None:
    lines = []
    for topic in topics:
        for doc in rng.choice(120, size=40, replace=False):
            lines.append(f"{topic} 0 d{doc} {rng.integers(0, 3)}")
    path.write_text("\n".join(lines) + "\n")


def _scan(path: Path) -> pl.LazyFrame:
    return prk.trec.scan_run(path).select("user", "item", "score")


def _same(ours: float | None, theirs: float) -> None:
    if theirs is None or math.isnan(theirs):
        assert ours is None or math.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


@pytest.mark.parametrize(("seed", "depth"), [(0, 1000), (1, 1000), (2, 15)])
def test_same_numbers_as_repro_eval_rpd(tmp_path: Path, seed: int, depth: int) -> None:
    evaluator = pytest.importorskip("repro_eval.Evaluator")
    rng = np.random.default_rng(seed)
    judged = [f"{t}" for t in range(1, 13)]
    _write_qrels(tmp_path / "qrels", rng, judged)
    # Equal lengths per topic in the original and reproduced run (repro_eval's KTU
    # needs them); topic 99 is ranked by every run but not judged; topic 50 only by
    # the original runs (and not judged: repro_eval's RMSE needs it scored for both).
    paths = {}
    for pair in ("a", "b"):
        lengths = {t: int(rng.integers(2, 60)) for t in [*judged, "99"]}
        for side in ("orig", "rep"):
            extra = {"50": 5} if side == "orig" else {}
            paths[pair, side] = tmp_path / f"{pair}_{side}"
            _write_run(paths[pair, side], rng, lengths | extra)
    ev = evaluator.RpdEvaluator(
        qrels_orig_path=str(tmp_path / "qrels"),
        run_b_orig_path=str(paths["b", "orig"]),
        run_a_orig_path=str(paths["a", "orig"]),
        run_b_rep_path=str(paths["b", "rep"]),
        run_a_rep_path=str(paths["a", "rep"]),
    )
    ev.trim(depth)
    ev.evaluate()
    out = prk.reproducibility(
        _scan(paths["a", "orig"]),
        _scan(paths["a", "rep"]),
        qrels=prk.trec.scan_qrels(tmp_path / "qrels"),
        baseline_original=_scan(paths["b", "orig"]),
        baseline_reproduced=_scan(paths["b", "rep"]),
        metrics=list(METRICS),
        depth=depth,
        rbo_p=0.8,
        rbo_depth=20,
    )
    for name, label in (("advanced", "advanced"), ("baseline", "baseline")):
        per = out.ordering_per_topic.filter(pl.col("run") == label)
        ktu = ev.ktu(per_topic=True)[name]
        rbo = ev.rbo(per_topic=True, p=0.8, depth=20)[name]
        assert sorted(per["user"].to_list()) == sorted(ktu) == sorted(rbo)
        for topic, k, r in per.select("user", "ktu", "rbo").iter_rows():
            _same(k, ktu[topic])
            _same(r, rbo[topic])
        summary = out.ordering.filter(pl.col("run") == label).row(0, named=True)
        _same(summary["ktu"], ev.ktu()[name])
        _same(summary["rbo"], ev.rbo(p=0.8, depth=20)[name])
        assert summary["n_topics_only_original"] == 1
    rmse, nrmse, ttest = ev.rmse(), ev.nrmse(), ev.ttest()
    for row in out.effectiveness.iter_rows(named=True):
        theirs = METRICS[row["metric"]]
        _same(row["rmse"], rmse[row["run"]][theirs])
        _same(row["nrmse"], nrmse[row["run"]][theirs])
        p = ttest[row["run"]][theirs]
        if math.isnan(p):  # identical per-topic scores: repro_eval's 1.0 for whole runs
            assert row["p_value"] == 1.0
            assert row["rmse"] == 0.0
        else:
            _same(row["p_value"], p)
        assert row["n_topics"] == 12
    er, dri = ev.er(), ev.dri()
    assert out.effects is not None
    for row in out.effects.iter_rows(named=True):
        _effect(row, er[METRICS[row["metric"]]], dri[METRICS[row["metric"]]])


def _effect(row: dict, er: float, dri: float) -> None:
    """ER and DeltaRI; an original improvement that is 0 up to rounding gives null here
    (repro_eval divides by the rounding error: nan, inf or some 1e16)."""
    if row["er"] is None and row["improvement_original"] is not None:
        assert abs(row["improvement_original"]) <= 1e-12
        assert math.isnan(er) or abs(er) > 1e3
    else:
        _same(row["er"], er)
    _same(row["delta_ri"], dri)


@pytest.mark.parametrize("seed", [0, 1])
def test_same_numbers_as_repro_eval_rpl(tmp_path: Path, seed: int) -> None:
    evaluator = pytest.importorskip("repro_eval.Evaluator")
    rng = np.random.default_rng(seed)
    topics_o = [str(t) for t in range(1, 11)]
    topics_r = [str(t) for t in range(200, 215)]
    _write_qrels(tmp_path / "qrels_o", rng, topics_o)
    _write_qrels(tmp_path / "qrels_r", rng, topics_r)
    paths = {}
    for pair in ("a", "b"):
        for side, topics in (("orig", topics_o), ("rpl", topics_r)):
            paths[pair, side] = tmp_path / f"{pair}_{side}"
            _write_run(paths[pair, side], rng, {t: int(rng.integers(1, 60)) for t in topics})
    ev = evaluator.RplEvaluator(
        qrels_orig_path=str(tmp_path / "qrels_o"),
        qrels_rpl_path=str(tmp_path / "qrels_r"),
        run_b_orig_path=str(paths["b", "orig"]),
        run_a_orig_path=str(paths["a", "orig"]),
        run_b_rep_path=str(paths["b", "rpl"]),
        run_a_rep_path=str(paths["a", "rpl"]),
    )
    ev.trim()
    ev.evaluate()
    out = prk.replicability(
        _scan(paths["a", "orig"]),
        _scan(paths["a", "rpl"]),
        qrels_original=prk.trec.scan_qrels(tmp_path / "qrels_o"),
        qrels_replicated=prk.trec.scan_qrels(tmp_path / "qrels_r"),
        baseline_original=_scan(paths["b", "orig"]),
        baseline_replicated=_scan(paths["b", "rpl"]),
        metrics=list(METRICS),
    )
    ttest, er, dri = ev.ttest(), ev.er(), ev.dri()
    for row in out.effectiveness.iter_rows(named=True):
        _same(row["p_value"], ttest[row["run"]][METRICS[row["metric"]]])
        assert (row["n_topics_original"], row["n_topics_replicated"]) == (10, 15)
    assert out.effects is not None
    assert out.effects.columns == [c.replace("reproduced", "replicated") for c in EFFECT_COLUMNS]
    for row in out.effects.iter_rows(named=True):
        _effect(row, er[METRICS[row["metric"]]], dri[METRICS[row["metric"]]])

"""Named options that reproduce peer libraries: RecTools IntraListDiversity
(``short=zero``) and CatalogCoverage (``coverage(normalize=false)``).

Expected values: MobileTeleSystems/RecTools tests/metrics/test_diversity.py and
tests/metrics/test_catalog.py (cited per test), hand-computed values with the
arithmetic written out, and the exact expectation over tied orderings.
"""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from tests._tie_brute import brute_per_user
from tests._tie_brute import per_user as engine_per_user
from tests.frames import TWO_TIED

# --------------------------------------------------------------------------- ILD
ITEMS = pl.DataFrame({"item": ["i1", "i2", "i3"], "features": [[0, 0], [0, 1], [1, 1]]})


def test_rectools_intra_list_diversity_test_values() -> None:
    # RecTools tests/metrics/test_diversity.py::test_correct_ild_values (Hamming
    # distance; u2's item i4 has no features there and gives NaN: left out here, an
    # item without a vector is an error in polars_rankeval): u1 0, 1, 4/3 and u3 0 at
    # k = 1, 2, 3; u3's single item scores 0 and is averaged in.
    reco = pl.DataFrame(
        {"user": ["u1", "u1", "u1", "u3"], "item": ["i1", "i2", "i3", "i1"], "rank": [1, 2, 3, 1]}
    ).with_columns(relevance=pl.lit(None, dtype=pl.Float64))
    names = [f"IntraListDiversity@{k}" for k in (1, 2, 3)]
    got = prk.evaluate(
        reco, names, rank="rank", conventions="rectools", items=ITEMS, per_user=True, users="recs"
    ).sort("user")
    assert got["IntraListDiversity@1[rectools]"].to_list() == [0, 0]
    assert got["IntraListDiversity@2[rectools]"].to_list() == [1, 0]
    assert got["IntraListDiversity@3[rectools]"].to_list() == pytest.approx([4 / 3, 0])
    summary = prk.evaluate(
        reco, names[2:], rank="rank", conventions="rectools", items=ITEMS, users="recs"
    )
    assert summary["IntraListDiversity@3[rectools]"].item() == pytest.approx((4 / 3 + 0) / 2)


def test_short_list_option_hand_computed() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2],
            "item": ["i1", "i2", "i3", "i2"],
            "score": [3.0, 2.0, 1.0, 1.0],
            "relevance": [1.0, 0.0, 0.0, 1.0],
        }
    )
    metrics = [
        "intra_list_diversity(distance=hamming)@3",
        "intra_list_diversity(distance=hamming,short=zero)@3",
        "intra_list_diversity(short=zero)@3",
    ]
    got = prk.evaluate(df, metrics, items=ITEMS, per_user=True).sort("user")
    # user 1: Hamming d(i1, i2) = 1, d(i1, i3) = 2, d(i2, i3) = 1: (1 + 2 + 1) / 3
    assert got[metrics[0]].to_list() == pytest.approx([4 / 3, None])
    assert got[metrics[1]].to_list() == pytest.approx([4 / 3, 0.0])  # user 2: one item
    # cosine: i1 is a zero vector (cosine 0, distance 1); 1 - cos(i2, i3) = 1 - 1/sqrt(2)
    cosine = (1 + 1 + (1 - 2**-0.5)) / 3
    assert got[metrics[2]].to_list() == pytest.approx([cosine, 0.0])
    summary = prk.evaluate(df, metrics[:2], items=ITEMS)
    assert summary[metrics[0]].item() == pytest.approx(4 / 3)  # user 2 skipped
    assert summary[metrics[1]].item() == pytest.approx((4 / 3 + 0) / 2)  # averaged in


def test_short_list_option_with_tied_scores() -> None:
    # user 1: three items tied, k = 2: the pair is any of the 3 pairs, (1 + 2 + 1) / 3;
    # user 2: one item: 0 with short=zero. Brute force over the orderings agrees.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2],
            "item": ["i1", "i2", "i3", "i2"],
            "score": [1.0, 1.0, 1.0, 5.0],
            "relevance": [1.0, 0.0, 0.0, 1.0],
        }
    )
    metric = "intra_list_diversity(distance=hamming,short=zero)@2"
    got = engine_per_user(df, metric, ties="expected", items=ITEMS)
    assert got == pytest.approx({1: (1 + 2 + 1) / 3, 2: 0.0})
    assert brute_per_user(df, metric, items=ITEMS) == pytest.approx(got)


def test_short_list_option_refuses_bad_values() -> None:
    df = pl.DataFrame({"user": [1], "item": ["i1"], "score": [1.0], "relevance": [1.0]})
    with pytest.raises(ValueError, match=r"parameter 'short' of metric 'intra_list_diversity'"):
        prk.evaluate(df, ["intra_list_diversity(short=one)@2"], items=ITEMS)


# --------------------------------------------------------------------------- coverage
def test_rectools_catalog_coverage_count() -> None:
    # RecTools tests/metrics/test_catalog.py::TestCatalogCoverage::test_calc: k = 2, a
    # catalog of 5 items: 0.4 normalised, 2.0 as a count. Its user 2 has two items at
    # rank 1, which absolute ranks refuse: here they sit at ranks 1 and 2 (the same top 2).
    reco = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2, 3, 4],
            "item": [1, 2, 3, 1, 2, 1, 1],
            "rank": [1, 2, 3, 1, 2, 3, 2],
            "relevance": [None] * 7,
        },
        schema_overrides={"relevance": pl.Float64},
    )
    got = prk.evaluate(
        reco,
        ["CatalogCoverage@2", "CatalogCoverage(normalize=true)@2"],
        rank="rank",
        conventions="rectools",
        n_items=5,
        users="recs",
    )
    assert got["CatalogCoverage@2[rectools]"].item() == 2.0
    assert got["CatalogCoverage(normalize=true)@2[rectools]"].item() == pytest.approx(0.4)


def test_coverage_count_hand_computed_and_tied() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 2, 2, 3],
            "item": [10, 11, 10, 11, 12],
            "score": [2.0, 2.0, 2.0, 2.0, 1.0],
            "relevance": [1.0, 0.0, 0.0, 1.0, 1.0],
        }
    )
    got = prk.evaluate(
        df, ["coverage(normalize=false)@1", "coverage(normalize=false)@2", "coverage@1"], n_items=10
    )
    # k = 1: users 1 and 2 each pick 10 or 11 (tied): P(10 covered) = 1 - 1/2 * 1/2 = 3/4,
    # the same for 11, and 12 surely: 3/4 + 3/4 + 1 items in expectation.
    assert got["coverage(normalize=false)@1"].item() == pytest.approx(3 / 4 + 3 / 4 + 1)
    assert got["coverage@1"].item() == pytest.approx((3 / 4 + 3 / 4 + 1) / 10)
    assert got["coverage(normalize=false)@2"].item() == 3.0  # 10, 11, 12
    for ties, count in (("item_asc", 2.0), ("item_desc", 2.0)):  # 10 (or 11) and 12
        value = prk.evaluate(df, ["coverage(normalize=false)@1"], ties=ties)  # type: ignore[call-overload]
        assert value.to_series(0).item() == count


def test_coverage_normalize_refuses_bad_values() -> None:
    df = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [1.0]})
    with pytest.raises(TypeError, match=r"parameter 'normalize' of metric 'coverage'"):
        prk.evaluate(df, ["coverage(normalize=maybe)@2"])


# --------------------------------------------------------------------------- rbp
def _graded_run(seed: int) -> pl.DataFrame:
    """Random graded qrels (0..3) and runs with many tied scores; string item ids."""
    rng = random.Random(seed)
    rows = []
    for user in range(30):
        for j, item in enumerate(rng.sample(range(50), 15)):
            score = float(rng.randint(0, 4)) if j < 12 else None
            rel = rng.choice([0, 0, 1, 2, 3]) if j < 10 or j >= 12 else None
            rows.append((user, f"d{item:02d}", score, rel))
    schema = {"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Float64}
    df = pl.DataFrame(rows, schema=schema, orient="row")
    return df.filter(pl.col("score").is_not_null() | pl.col("relevance").is_not_null())


def _ranx_per_user(df: pl.DataFrame, metrics: list[str]) -> dict[str, dict[int, float]]:
    """ranx's per-query values, its run's ties broken as item_desc (ranx's own sort of
    tied scores is unstable: it is given distinct scores in that order)."""
    ranx = pytest.importorskip("ranx")
    ordered = (
        df.filter(pl.col("score").is_not_null())
        .sort(["user", "score", "item"], descending=[False, True, True])
        .with_columns(distinct=pl.int_range(pl.len(), 0, -1).over("user").cast(pl.Float64))
    )
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for user, item, _, rel in df.iter_rows():
        if rel is not None:
            qrels.setdefault(str(user), {})[item] = int(rel)
    for user, item, _, _, distinct in ordered.iter_rows():
        run.setdefault(str(user), {})[item] = distinct
    q = ranx.Qrels(qrels)
    values = ranx.evaluate(q, ranx.Run(run), metrics, return_mean=False, make_comparable=True)
    return {
        m: {int(u): float(v) for u, v in zip(q.keys(), values[m], strict=True)} for m in metrics
    }


def test_ranx_rbp_and_bpref_per_user_on_tied_graded_data() -> None:
    df = _graded_run(5)
    theirs = _ranx_per_user(df, ["rbp.9", "rbp.5", "rbp.95", "bpref"])
    ours = prk.evaluate(
        df, ["rbp(gain=raw)", "rbp(gain=raw,p=0.5)", "rbp(gain=raw,p=0.95)", "bpref"],
        ties="item_desc", empty="zero", per_user=True,
    )  # fmt: skip
    users = ours["user"].to_list()
    for mine, name in (
        ("rbp(gain=raw)", "rbp.9"),
        ("rbp(gain=raw,p=0.5)", "rbp.5"),
        ("rbp(gain=raw,p=0.95)", "rbp.95"),
        ("bpref", "bpref"),
    ):
        expected = [theirs[name][u] for u in users]
        assert ours[mine].to_list() == pytest.approx(expected, abs=1e-12), name
    # The ranx preset on the tie-free version of the run (its rule: expected ties).
    untied = (
        df.join(
            df.filter(pl.col("score").is_not_null())
            .sort(["user", "score", "item"], descending=[False, True, True])
            .with_columns(distinct=pl.int_range(pl.len(), 0, -1).over("user").cast(pl.Float64))
            .select("user", "item", "distinct"),
            on=["user", "item"],
            how="left",
        )
        .with_columns(score=pl.col("distinct"))
        .drop("distinct")
    )
    preset = prk.evaluate(untied, ["rbp.9", "bpref"], conventions="ranx", per_user=True)
    assert preset["rbp.9[ranx]"].to_list() == pytest.approx(
        [theirs["rbp.9"][u] for u in preset["user"].to_list()], abs=1e-12
    )
    assert preset["bpref[ranx]"].to_list() == pytest.approx(
        [theirs["bpref"][u] for u in preset["user"].to_list()], abs=1e-12
    )


def test_rbp_gains_hand_computed() -> None:
    # Relevances 3, 0, 1 at ranks 1..3 and an unrecommended 2; p = 1/2.
    df = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": [1, 2, 3, 4],
            "score": [3.0, 2.0, 1.0, None],
            "relevance": [3.0, 0.0, 1.0, 2.0],
        }
    )
    names = [
        "rbp(p=0.5)",
        "rbp(gain=raw,p=0.5)",
        "rbp(gain=raw,p=0.5,rel=2)",
        "rbp(gain=binary,p=0.5)",
        "rbp(gain=binary,normalize=true,p=0.5)",
        "rbp(gain=binary,normalize=true,p=0.5)@2",
        "rbp(gain=raw,p=0.5)@2",
    ]
    got = prk.evaluate(df, names, per_user=True)
    assert got[names[0]].item() == pytest.approx(0.5 * (3 / 3 + 0.25 * 1 / 3))  # scaled by 3
    assert got[names[1]].item() == pytest.approx(0.5 * (3 + 0.25 * 1))
    assert got[names[2]].item() == pytest.approx(0.5 * 3)  # relevance 1 < rel = 2
    assert got[names[3]].item() == pytest.approx(0.5 * (1 + 0.25))
    # normalize: 3 relevant items, a list of 3: the best is (1 - 1/8) = 0.5 (1 + 0.5 + 0.25)
    assert got[names[4]].item() == pytest.approx(0.5 * 1.25 / (1 - 0.5**3))
    # @2: the list holds 2 items, one relevant: 0.5 * 1 / (1 - 0.5**2)
    assert got[names[5]].item() == pytest.approx(0.5 / (1 - 0.5**2))
    assert got[names[6]].item() == pytest.approx(0.5 * 3)


def test_lenskit_rbp_test_values() -> None:
    # lenskit/lkpy tests/eval/test_rank_rbp.py: empty list 0; no match 0; one match at
    # rank 1 of 3 relevant items 0.15 (patience 0.85); items 1, 2 of truth 1, 2, 3 with
    # patience 0.5: (1 + 0.5) * 0.5 = 0.75; a perfect list normalised: 1.
    rows = [
        (1, 9, None, 1.0), (1, 8, None, 1.0), (1, 7, None, 1.0),  # nothing recommended
        (2, 4, 1.0, 0.0), (2, 1, None, 1.0), (2, 2, None, 1.0), (2, 3, None, 1.0),
        (3, 1, 1.0, 1.0), (3, 2, None, 1.0), (3, 3, None, 1.0),
        (4, 1, 5.0, 1.0), (4, 2, 4.0, 1.0), (4, 3, 3.0, 1.0), (4, 4, 2.0, 1.0),
    ]  # fmt: skip
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    got = prk.evaluate(
        df, ["RBP", "RBP(normalize=true)", "RBP@3"], conventions="lenskit", per_user=True
    ).sort("user")
    assert got["RBP[lenskit]"].to_list()[:3] == pytest.approx([0.0, 0.0, 0.15])
    assert got["RBP[lenskit]"][3] == pytest.approx(sum(0.85**i for i in range(4)) * 0.15)
    assert got["RBP@3[lenskit]"][3] == pytest.approx(sum(0.85**i for i in range(3)) * 0.15)
    # normalised by the weights of min(#relevant, list length) ranks: user 3's list holds
    # one item, relevant: 1 / 1 (LensKit: np.sum(weights[: min(nrel, k)]), k = len(recs))
    assert got["RBP(normalize=true)[lenskit]"].to_list() == pytest.approx([0.0, 0.0, 1.0, 1.0])
    missing = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [2.0, 1.0, None], "relevance": [1.0] * 3}
    )
    assert prk.evaluate(missing, ["rbp(gain=binary,p=0.5)"]).item(0, 0) == pytest.approx(0.75)


def test_rbp_options_with_tied_scores() -> None:
    df = _graded_run(7).filter(pl.col("user") < 6)
    for metric in ("rbp(gain=raw,p=0.5)", "rbp(gain=binary,normalize=true,p=0.8)@4"):
        got = engine_per_user(df, metric, ties="expected")
        brute = brute_per_user(df.filter(pl.col("user") < 3), metric)
        assert {u: got[u] for u in brute} == pytest.approx(brute, abs=1e-12)


def test_rbp_options_refuse_bad_values() -> None:
    df = _graded_run(1)
    with pytest.raises(ValueError, match=r"'rel' of metric 'rbp' applies to gain=raw"):
        prk.evaluate(df, ["rbp(rel=2)"])
    with pytest.raises(ValueError, match=r"normalize=true needs gain='binary'"):
        prk.evaluate(df, ["rbp(gain=raw,normalize=true)"])
    with pytest.raises(ValueError, match=r"parameter 'gain' of metric 'rbp' must be one"):
        prk.evaluate(df, ["rbp(gain=exp)"])


# --------------------------------------------------------------------------- ncrr
def _cornac_case(gt: list[int], pd: list[int]) -> pl.DataFrame:
    """One user: pd ranked best first (scores n..1), gt relevant (recommended or not)."""
    rows: list[tuple[int, int, float | None, float]] = [
        (1, item, float(len(pd) - j), float(item in gt)) for j, item in enumerate(pd)
    ]
    rows += [(1, item, None, 1.0) for item in gt if item not in pd]
    return pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")


@pytest.mark.parametrize(
    ("gt", "pd", "k", "expected"),
    [
        # PreferredAI/cornac tests/cornac/metrics/test_ranking.py::test_ncrr
        ([0], [0], None, 1.0),
        ([0, 2], [0, 2, 1], None, 1.0),
        ([0, 2], [1, 2, 0], None, (1 / 3 + 1 / 2) / (1 + 1 / 2)),
        ([2], [1, 2, 0], 2, 0.5),
        ([2], [4, 1, 2], 2, 0.0),
        ([0, 1, 2], [5, 1, 6], 2, (1 / 2) / (1 + 1 / 2)),  # ideal of min(3, 2) items
        ([0, 1], [5, 1, 6, 8], 3, (1 / 2) / (1 + 1 / 2)),
    ],
)
def test_cornac_ncrr_test_values(
    gt: list[int], pd: list[int], k: int | None, expected: float
) -> None:
    name = "NCRR" if k is None else f"NCRR@{k}"
    got = prk.evaluate(_cornac_case(gt, pd), [name], conventions="cornac")
    assert got[f"{name}[cornac]"].item() == pytest.approx(expected)


def test_ncrr_hand_computed_short_list_and_ties() -> None:
    # Relevant at ranks 1 and 3 of a 3-item list, 4 relevant items: (1 + 1/3) / H(3),
    # H(3) = 1 + 1/2 + 1/3 (the ideal is cut at the list length 3, not at #relevant 4).
    df = _cornac_case([0, 2, 7, 8], [0, 1, 2])
    assert prk.evaluate(df, ["ncrr"]).item(0, 0) == pytest.approx((1 + 1 / 3) / (1 + 1 / 2 + 1 / 3))
    assert prk.evaluate(df, ["ncrr@2"]).item(0, 0) == pytest.approx(1 / (1 + 1 / 2))
    # Ties: a relevant and a non-relevant item tied at ranks 1-2: E[1/rank] = (1 + 1/2) / 2.
    tied = pl.DataFrame(
        {"user": [1, 1, 1], "item": [1, 2, 3], "score": [1.0, 1.0, 0.5], "relevance": [1, 0, 0]}
    )
    assert prk.evaluate(tied, ["ncrr"]).item(0, 0) == pytest.approx((1 + 1 / 2) / 2)
    assert prk.evaluate(tied, ["ncrr@1"]).item(0, 0) == pytest.approx((1 / 2) / 1)
    for ties, value in (("optimistic", 1.0), ("pessimistic", 0.5)):
        out = prk.evaluate(tied, ["ncrr"], ties=ties)  # type: ignore[call-overload]
        assert out.item(0, 0) == pytest.approx(value)
    df = _graded_run(9).filter(pl.col("user") < 4)
    for metric in ("ncrr", "ncrr@3", "ncrr(rel=2)@5"):
        brute = brute_per_user(df, metric)
        assert engine_per_user(df, metric, ties="expected") == pytest.approx(brute, abs=1e-12)


def test_ncrr_matches_cornac_per_user() -> None:
    ranking = pytest.importorskip("cornac.metrics")
    rng = random.Random(4)
    rows: list[tuple[int, int, float | None, float]] = []
    expected: dict[int, dict[int, float]] = {3: {}, 10: {}, -1: {}}
    for user in range(40):
        n = rng.randint(1, 12)
        pd = rng.sample(range(30), n)  # distinct scores: Cornac's argsort has no tie rule
        gt = rng.sample(range(30), rng.randint(1, 6))
        for j, item in enumerate(pd):
            rows.append((user, item, float(n - j), float(item in gt)))
        rows += [(user, item, None, 1.0) for item in gt if item not in pd]
        for k in expected:
            metric = ranking.NCRR(k=k)
            expected[k][user] = metric.compute(gt_pos=np.asarray(gt), pd_rank=np.asarray(pd))
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    got = prk.evaluate(df, ["NCRR@3", "NCRR@10", "NCRR"], conventions="cornac", per_user=True)
    got = got.sort("user")
    for k, name in ((3, "NCRR@3"), (10, "NCRR@10"), (-1, "NCRR")):
        want = [expected[k][u] for u in got["user"].to_list()]
        assert got[f"{name}[cornac]"].to_list() == pytest.approx(want, abs=1e-12)


def test_ncrr_refuses_bad_values() -> None:
    df = _cornac_case([0], [0, 1])
    with pytest.raises(ValueError, match=r"parameter 'rel' of metric 'ncrr' must be > 0"):
        prk.evaluate(df, ["ncrr(rel=-1)@2"])
    with pytest.raises(ValueError, match=r"cutoff k of metric 'ncrr' must be a positive"):
        prk.evaluate(df, ["ncrr@0"])


# --------------------------------------------------------------------------- Elliot MAP
def _elliot_ap(ranked: list[int], relevant: set[int], cutoff: int) -> float:
    """sisinflab/elliot elliot/evaluation/metrics/accuracy/map/map.py, __user_ap: the mean
    of __user_precision(recs[:cutoff], n + 1) for n in range(cutoff), each hits / (n + 1)."""
    return float(
        np.average([sum(1 for i in ranked[:cutoff][: n + 1] if i in relevant) / (n + 1)
                    for n in range(cutoff)])
    )  # fmt: skip


def test_elliot_map_is_mean_precision() -> None:
    rng = random.Random(2)
    rows: list[tuple[int, int, float | None, float]] = []
    ranked_by_user: dict[int, tuple[list[int], set[int]]] = {}
    for user in range(30):
        ranked = rng.sample(range(40), rng.randint(1, 12))
        relevant = set(rng.sample(range(40), rng.randint(1, 8)))
        ranked_by_user[user] = (ranked, relevant)
        rows += [(user, item, float(len(ranked) - j), float(item in relevant))
                 for j, item in enumerate(ranked)]  # fmt: skip
        rows += [(user, item, None, 1.0) for item in relevant if item not in ranked]
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    got = prk.evaluate(df, ["MAP@5", "MAP@10"], conventions="elliot", per_user=True).sort("user")
    for cutoff in (5, 10):
        want = [_elliot_ap(*ranked_by_user[u], cutoff) for u in got["user"].to_list()]
        assert got[f"MAP@{cutoff}[elliot]"].to_list() == pytest.approx(want, abs=1e-12)


def test_mean_precision_hand_computed_and_tied() -> None:
    df = pl.DataFrame(
        {"user": [1] * 4, "item": [1, 2, 3, 4], "score": [3.0, 2.0, 1.0, None],
         "relevance": [1, 0, 1, 1]}
    )  # fmt: skip
    got = prk.evaluate(
        df, ["mean_precision@3", "mean_precision@5", "mean_precision"], per_user=True
    )
    # precision@1..3 = 1, 1/2, 2/3; @4, @5 = 2/4, 2/5 (padded)
    assert got["mean_precision@3"].item() == pytest.approx((1 + 1 / 2 + 2 / 3) / 3)
    assert got["mean_precision@5"].item() == pytest.approx((1 + 1 / 2 + 2 / 3 + 2 / 4 + 2 / 5) / 5)
    assert got["mean_precision"].item() == pytest.approx((1 + 1 / 2 + 2 / 3) / 3)  # k = 3 items
    # Ties: two items tied at the top, one relevant: precision@1 is 1/2 in expectation,
    # precision@2 = 1/2: (1/2 + 1/2) / 2.
    tied = TWO_TIED
    assert prk.evaluate(tied, ["mean_precision@2"]).item(0, 0) == pytest.approx(0.5)
    df = _graded_run(3).filter(pl.col("user") < 4)
    for metric in ("mean_precision@4", "mean_precision(rel=2)", "mean_precision@70"):
        brute = brute_per_user(df, metric)
        assert engine_per_user(df, metric, ties="expected") == pytest.approx(brute, abs=1e-12)


def test_mean_precision_refuses_bad_values() -> None:
    df = _graded_run(1)
    with pytest.raises(ValueError, match=r"parameter 'rel' of metric 'mean_precision' must"):
        prk.evaluate(df, ["mean_precision(rel=0)@3"])
    with pytest.raises(ValueError, match=r"Elliot's MAP needs a cutoff"):
        prk.evaluate(df, ["MAP"], conventions="elliot")

"""Cutoff lists and ranges (one pass), curve() and pr_curve().

Tests the private units metrics.cutoff_kernels and plan.head on purpose (the one-pass kernels).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankeval as prk
import polars_rankeval.plan.head as _head
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.cutoff_kernels import curve_metrics
from polars_rankeval.metrics.grammar import expand_metric, parse_metric
from polars_rankeval.metrics.registry import registered
from polars_rankeval.plan.job import Job
from tests.test_properties import PROPERTY_SETTINGS, frames


# --------------------------------------------------------------------------- grammar
@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("ndcg@[1,5,10]", ["ndcg@1", "ndcg@5", "ndcg@10"]),
        ("ndcg @ [ 10 , 1 ]", ["ndcg@10", "ndcg@1"]),
        ("ndcg@1..3", ["ndcg@1", "ndcg@2", "ndcg@3"]),
        ("P(rel=2.0)@[1..2,7]", ["precision(rel=2)@1", "precision(rel=2)@2", "precision(rel=2)@7"]),
        ("ndcg(gain=exp)@[4]", ["ndcg(gain=exp)@4"]),
        ("ndcg@4", ["ndcg@4"]),
        ("coverage@2..3", ["coverage@2", "coverage@3"]),
    ],
)
def test_cutoff_lists_expand_to_canonical_names(text: str, names: list[str]) -> None:
    metrics = expand_metric(text)
    assert [m.name for m in metrics] == names
    for metric in metrics:  # each expanded name round-trips as a single metric
        assert parse_metric(metric.name) == metric
        assert parse_metric(metric.name).name == metric.name


def test_single_element_list_is_one_metric() -> None:
    assert parse_metric("ndcg@[10]") == parse_metric("ndcg@10")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("ndcg@[]", r"cutoff list in 'ndcg@\[\]' is empty"),
        ("ndcg@[0,5]", r"cutoffs in 'ndcg@\[0,5\]' must be positive integers, got '0'"),
        ("ndcg@0..5", r"must be positive integers, got '0..5'"),
        ("ndcg@[-1]", r"must be positive integers, got '-1'"),
        ("ndcg@5..1", r"cutoff range '5..1' in 'ndcg@5..1' is empty"),
        ("ndcg@1..", r"must look like 1..100, got '1..'"),
        ("ndcg@[1,x]", r"cutoff in 'ndcg@\[1,x\]' must be a positive integer, got 'x'"),
        ("ndcg@[1,2", r"cutoff list in 'ndcg@\[1,2' must look like \[1,5,10\]"),
        ("ndcg@[1,5,1]", r"name \[1\] more than once"),
        ("ndcg@1..20000", r"names more than 10000 cutoffs"),
        ("ndcg@[1,5000000000]", r"cutoff k of metric 'ndcg' must lie within"),
        ("r_precision@[1,2]", r"metric 'r_precision' takes no cutoff @k"),
        ("ndgc@1..3", r"unknown metric 'ndgc'; did you mean 'ndcg'"),
    ],
)
def test_cutoff_list_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        expand_metric(text)


def test_parse_metric_refuses_several_cutoffs() -> None:
    with pytest.raises(ValueError, match=r"'ndcg@1..3' names 3 metrics .*use expand_metric"):
        parse_metric("ndcg@1..3")


def test_curve_kernels_are_registered() -> None:
    assert {name for name, spec in registered().items() if spec.curve} == set(curve_metrics())


# --------------------------------------------------------------------------- one pass
def _tied_data(seed: int = 1, n_users: int = 40, n_candidates: int = 12) -> pl.DataFrame:
    """Scores from 4 values (many ties), 15% judged-but-not-recommended, graded relevance."""
    rng = np.random.default_rng(seed)
    n = n_users * n_candidates
    score = rng.integers(0, 4, n).astype(float)
    score[rng.random(n) < 0.15] = np.nan
    return pl.DataFrame(
        {
            "system": np.where(np.arange(n) % 2 == 0, "a", "b"),
            "user": np.repeat(np.arange(n_users), n_candidates),
            "item": np.tile(np.arange(n_candidates), n_users),
            "score": score,
            "relevance": rng.choice([0, 0, 0, 1, 2, 3], n),
        }
    ).with_columns(pl.col("score").fill_nan(None))


CURVE_REQUESTS = [
    "precision",
    "precision(denominator=retrieved)",
    "recall",
    "f1",
    "f1(denominator=retrieved)",
    "hit_rate",
    "hit_rate(rel=2)",
    "mrr",
    "mrr(rel=3)",
    "map",
    "map(denominator=min_k_relevant,rel=2)",
    "dcg",
    "dcg(discount=log_clipped,gain=exp)",
    "ndcg",
    "ndcg(gain=exp,idcg=all)",
    "ndcg(discount=half_life,half_life=3)",
    "auc",  # no curve kernel: expands to separate metrics
]


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
def test_every_cutoff_equals_the_single_cutoff_metric(ties: str) -> None:
    df = _tied_data()
    ks = range(1, 15)  # beyond the 12 rows of a user too
    curve = prk.evaluate(
        df, [f"{m}@1..14" for m in CURVE_REQUESTS], per_user=True, ties=ties, users="all"
    )
    single = prk.evaluate(
        df, [f"{m}@{k}" for m in CURVE_REQUESTS for k in ks], per_user=True, ties=ties, users="all"
    )
    assert curve.columns == single.columns
    assert_frame_equal(curve, single, check_exact=False, rel_tol=0, abs_tol=1e-12)


def test_one_pass_with_by_buckets_and_the_summary() -> None:
    df = _tied_data(seed=7)
    metrics = ["ndcg@[1,3,20]", "recall@[20,3,1]", "map@2..4"]
    singles = ["ndcg@1", "ndcg@3", "ndcg@20", "recall@20", "recall@3", "recall@1"]
    singles += ["map@2", "map@3", "map@4"]
    for options in ({}, {"engine": prk.Buckets(n_buckets=3)}, {"aggregate": ["mean", "median"]}):
        got = prk.evaluate(df, metrics, by="system", **options)  # type: ignore[arg-type]
        want = prk.evaluate(df, singles, by="system", **options)  # type: ignore[arg-type]
        assert_frame_equal(got, want, check_exact=False, rel_tol=0, abs_tol=1e-12)


def test_a_cutoff_range_is_planned_as_one_curve() -> None:
    job = Job.create(
        _tied_data().collect_schema(),
        ["ndcg@1..50", "recall@[1,5]", "precision@5", "auc@1..2"],
        make_columns(),
        by=None,
        ties="expected",
        users="truth",
        empty="skip",
        aggregate="mean",
        per_user=False,
    )
    groups = [[m.name for m in group] for group in job.curve_groups()]
    assert [len(g) for g in groups] == [50, 2]  # auc has no curve kernel; precision@5 alone
    plan = prk.evaluate(
        _tied_data().lazy(), ["ndcg@1..50"], validate=False, engine="memory"
    ).explain()
    assert "__prk_curve[dcg" in plan
    assert "__prk_gmean" not in plan  # no per-cutoff window columns


def test_curve_hand_computed_with_ties() -> None:
    # One user: A (rel 1) and B (rel 0) tied at the top, C (rel 2) third, D judged
    # (rel 1) never recommended. Expected ties: positions 1-2 hold A w.p. 1/2 each.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 1],
            "item": ["A", "B", "C", "D"],
            "score": [2.0, 2.0, 1.0, None],
            "relevance": [1, 0, 2, 1],
        }
    )
    metrics = ["precision@1..4", "recall@1..4", "mrr@1..4", "map@1..4", "hit_rate@1..4"]
    out = prk.evaluate(df, metrics, per_user=True).row(0, named=True)
    assert [out[f"precision@{k}"] for k in (1, 2, 3, 4)] == pytest.approx(
        [0.5 / 1, 1 / 2, 2 / 3, 2 / 4]
    )
    assert [out[f"recall@{k}"] for k in (1, 2, 3, 4)] == pytest.approx(
        [0.5 / 3, 1 / 3, 2 / 3, 2 / 3]
    )
    # MRR: first relevant at 1 w.p. 1/2, else at 2.
    assert [out[f"mrr@{k}"] for k in (1, 2, 3)] == pytest.approx([0.5, 0.5 + 0.5 / 2, 0.75])
    # AP@k over R = 3: A at 1 (prec 1) or at 2 (prec 1/2); C at 3 with prec 2/3.
    assert out["map@1"] == pytest.approx(0.5 * 1 / 3)
    assert out["map@2"] == pytest.approx((0.5 * 1 + 0.5 * 1 / 2) / 3)
    assert out["map@3"] == pytest.approx((0.5 * 1 + 0.5 * 1 / 2 + 2 / 3) / 3)
    assert [out[f"hit_rate@{k}"] for k in (1, 2, 3)] == pytest.approx([0.5, 1.0, 1.0])


# --------------------------------------------------------------------------- curve()
def test_curve_is_evaluate_at_each_k_in_long_form() -> None:
    df = _tied_data(seed=3)
    out = prk.curve(df, ["recall", "ndcg(gain=exp)"], ks=[10, 1, 5], by="system")
    assert out.columns == ["system", "metric", "k", "value", "n_users"]
    assert out.height == 2 * 2 * 3
    assert (
        out.filter(pl.col("system") == "a")["metric"].to_list()
        == ["recall"] * 3 + ["ndcg(gain=exp)"] * 3
    )
    assert out["k"].to_list()[:3] == [1, 5, 10]
    wide = prk.evaluate(
        df, [f"{m}@{k}" for m in ("recall", "ndcg(gain=exp)") for k in (1, 5, 10)], by="system"
    )
    for row in out.iter_rows(named=True):
        want = wide.filter(pl.col("system") == row["system"])
        assert row["value"] == pytest.approx(want[f"{row['metric']}@{row['k']}"].item(), abs=1e-12)
        assert row["n_users"] == want[f"n_users({row['metric']}@{row['k']})"].item()


def test_curve_reshapes_the_summary_in_a_constant_number_of_selects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One select of lists, exploded: a select per cutoff (each reading the schema of
    # the whole summary) made curve(ks=range(1, 5001)) take a minute on 10 rows.
    df = _tied_data(seed=5)
    calls: list[int] = []
    select = pl.DataFrame.select

    def counted(self: pl.DataFrame, *args: object, **kwargs: object) -> pl.DataFrame:
        calls.append(1)
        return select(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "select", counted)
    few = prk.curve(df, ["recall", "map"], ks=range(1, 11), by="system")
    n_few = len(calls)
    many = prk.curve(df, ["recall", "map"], ks=range(1, 61), by="system")
    assert len(calls) - n_few == n_few
    assert_frame_equal(many.filter(pl.col("k") <= 10), few)
    levels = prk.pr_curve(df, levels=101, by="system")
    assert levels.height == 2 * 101


class _CountedCutoffs(tuple):  # type: ignore[type-arg]
    """A cutoff list that counts how often it is hashed."""

    hashed = 0

    def __hash__(self) -> int:
        type(self).hashed += 1
        return super().__hash__()


def test_a_cutoff_list_is_not_hashed_for_each_of_its_metrics() -> None:
    # The metrics of one list are grouped by the identity of their shared tuple of
    # cutoffs: hashing it for each metric costs the square of the number of cutoffs.
    cutoffs = _CountedCutoffs(range(1, 201))
    first = parse_metric("ndcg@1")
    metrics = [dataclasses.replace(first, k=k, cutoffs=cutoffs) for k in cutoffs]
    df = _tied_data(seed=6)
    for enabled in (True, False):  # the sorted-head path and the curve kernels
        _head.ENABLED = enabled
        try:
            out = prk.evaluate(df, metrics, by="system")
        finally:
            _head.ENABLED = True
        assert out.select("ndcg@200").to_series().is_not_null().all()
    assert _CountedCutoffs.hashed < len(cutoffs)


def test_curve_hand_computed() -> None:
    # Relevant items at ranks 2 and 3 of three; a second user with rank-1 relevant.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2],
            "item": [1, 2, 3, 1, 2],
            "score": [3.0, 2.0, 1.0, 2.0, 1.0],
            "relevance": [0, 1, 1, 1, 0],
        }
    )
    out = prk.curve(df, "precision", ks=3)
    assert out["value"].to_list() == pytest.approx(
        [(0 / 1 + 1 / 1) / 2, (1 / 2 + 1 / 2) / 2, (2 / 3 + 1 / 3) / 2]
    )
    out = prk.curve(df, ["ndcg@[1,2]"])
    # User 1: ndcg@1 = 0 / 1, ndcg@2 = (1 / log2 3) / (1 + 1 / log2 3); user 2: 1 at both.
    ndcg2_user1 = (1 / np.log2(3)) / (1 + 1 / np.log2(3))
    assert out["value"].to_list() == pytest.approx([(0 + 1) / 2, (ndcg2_user1 + 1) / 2])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"metrics": "ndgc", "ks": 3}, ValueError, r"unknown metric 'ndgc'; did you mean 'ndcg'"),
        ({"metrics": "recall", "ks": []}, ValueError, r"ks must name at least one cutoff"),
        (
            {"metrics": "recall", "ks": [0, 5]},
            ValueError,
            r"ks must be positive integers, got \[0\]",
        ),
        ({"metrics": "recall", "ks": 0}, ValueError, r"ks must be a positive integer"),
        ({"metrics": "recall", "ks": [1, 1]}, ValueError, r"ks names a cutoff more than once"),
        (
            {"metrics": "recall", "ks": [1.5]},
            TypeError,
            r"'ks' of curve must be .*, got an entry float 1.5",
        ),
        ({"metrics": "recall", "ks": "5"}, TypeError, r"'ks' of curve .*got str '5'"),
        ({"metrics": "recall"}, ValueError, r"metric 'recall' has no cutoffs: pass ks="),
        ({"metrics": "recall@5", "ks": 3}, ValueError, r"names its cutoffs already"),
        ({"metrics": [], "ks": 3}, ValueError, r"metrics must name at least one metric"),
        ({"metrics": "r_precision", "ks": 3}, ValueError, r"'r_precision' takes no cutoff"),
        ({"metrics": "item_exposure", "ks": 3}, ValueError, r"evaluate them with per_item=True"),
        ({"metrics": "recall", "ks": 3, "per_user": True}, ValueError, r"per_user=True is not"),
    ],
)
def test_curve_errors(kwargs: dict[str, object], exc: type[Exception], match: str) -> None:
    df = _tied_data()
    with pytest.raises(exc, match=match):
        prk.curve(df, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- pr_curve()
def test_pr_curve_hand_computed_and_equal_to_iprec() -> None:
    # User 1: relevant at ranks 1, 3, 5 and one never recommended (R = 4); user 2:
    # relevant at rank 2 only (R = 1).
    df = pl.DataFrame(
        {
            "system": ["s"] * 8,
            "user": [1] * 6 + [2] * 2,
            "item": [*"ABCDEF", "A", "B"],
            "score": [5.0, 4.0, 3.0, 2.0, 1.0, None, 2.0, 1.0],
            "relevance": [1, 0, 1, 0, 1, 1, 0, 1],
        }
    )
    out = prk.pr_curve(df, by="system")
    assert out.columns == ["system", "recall", "precision", "n_users"]
    assert out["recall"].to_list() == [i / 10 for i in range(11)]
    # User 1 needs lround(x * 4) = 0,0,1,1,2,2,2,3,3,4,4 hits: 1,1,1,1,2/3,2/3,2/3,3/5,3/5,0,0;
    # user 2 needs lround(x) = 0 (x < 0.5) or 1 hit: always 1/2.
    user1 = [1, 1, 1, 1, 2 / 3, 2 / 3, 2 / 3, 3 / 5, 3 / 5, 0, 0]
    assert out["precision"].to_list() == pytest.approx([(u + 1 / 2) / 2 for u in user1])
    eleven = prk.evaluate(df, ["iprec_11pt"], ties="item_desc")["iprec_11pt"].item()
    assert out["precision"].mean() == pytest.approx(eleven)
    fine = prk.pr_curve(df, levels=101)
    assert fine.height == 101
    assert fine.filter(pl.col("recall") == 0.5)["precision"].item() == pytest.approx(
        (2 / 3 + 1 / 2) / 2
    )


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"levels": 1}, ValueError, r"levels must be at least 2"),
        ({"levels": []}, ValueError, r"levels must name at least one recall level"),
        ({"levels": [0.5, 1.5]}, ValueError, r"recall levels must lie in \[0, 1\], got \[1.5\]"),
        ({"levels": [0.5, 0.5]}, ValueError, r"more than once"),
        ({"ties": "expected"}, ValueError, r"does not support ties='expected'"),
        ({"rel": 0}, ValueError, r"'rel' of metric 'iprec_at_recall' must be > 0"),
    ],
)
def test_pr_curve_errors(kwargs: dict[str, object], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        prk.pr_curve(_tied_data(), **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- property
@PROPERTY_SETTINGS
@given(
    df=frames(),
    ties=st.sampled_from(prk.TIE_POLICIES),
    ks=st.lists(st.integers(1, 10), min_size=1, max_size=5, unique=True),
)
def test_property_one_pass_equals_each_cutoff(df: pl.DataFrame, ties: str, ks: list[int]) -> None:
    names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "dcg", "ndcg"]
    listed = ",".join(map(str, ks))
    curve = prk.evaluate(df, [f"{m}@[{listed}]" for m in names], per_user=True, ties=ties)
    single = prk.evaluate(df, [f"{m}@{k}" for m in names for k in ks], per_user=True, ties=ties)
    assert_frame_equal(curve, single, check_exact=False, rel_tol=0, abs_tol=1e-12)


def test_curve_of_a_global_metric_and_another_aggregate() -> None:
    df = _tied_data(seed=5)
    out = prk.curve(df, ["coverage", "ndcg"], ks=[1, 4], by="system", aggregate="median")
    wide = prk.evaluate(
        df, ["coverage@1", "coverage@4", "ndcg@1", "ndcg@4"], by="system", aggregate="median"
    )
    for row in out.iter_rows(named=True):
        want = wide.filter(pl.col("system") == row["system"])
        name = f"{row['metric']}@{row['k']}"
        column = name if row["metric"] == "coverage" else f"median({name})"
        assert row["value"] == pytest.approx(want[column].item(), abs=1e-12)


def test_namespace_methods() -> None:
    df = _tied_data(seed=2)
    assert_frame_equal(
        df.rankeval.curve("recall", ks=[1, 2], by="system"),
        prk.curve(df, "recall", ks=[1, 2], by="system"),
    )
    assert_frame_equal(
        df.lazy().rankeval.pr_curve(by="system", levels=3),
        prk.pr_curve(df, by="system", levels=3),
    )

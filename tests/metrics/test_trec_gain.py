"""trec_eval's gain measures: rbp, rbp_resid, bin_g (binG), g (G), ndcg_rel, rndcg (Rndcg).

Checked by hand, against a brute force over every tie ordering, against trec_eval's own
output on its test collection, and against pytrec_eval per query.
"""

from __future__ import annotations

import re
from math import log2
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import bin_g, g, ndcg_rel, rbp, rbp_resid, rndcg
from polars_rankeval.io.trec.read import scan_qrels, scan_run
from tests._reference import Row, inline_per_user, orderings, random_frame, rows_by_user

DATA = Path(__file__).parents[1] / "data"
DETERMINISTIC = ("item_desc", "item_asc", "optimistic", "pessimistic")
EXACT_UNDER_TIES = ["rbp", "rbp(p=0.5)", "rbp_resid", "rbp_resid(p=0.8)", "bin_g", "bin_g(rel=2)"]
DETERMINISTIC_ONLY = ["g", "ndcg_rel", "rndcg"]


def metrics_for(ties: str) -> list[str]:
    """The measures implementing the tie policy.

    rbp_resid looks at unjudged items, which optimistic / pessimistic leave in input
    order among the items of relevance 0.
    """
    out = EXACT_UNDER_TIES + (DETERMINISTIC_ONLY if ties in DETERMINISTIC else [])
    if ties in ("optimistic", "pessimistic"):
        out = [m for m in out if not m.startswith("rbp_resid")]
    return out


# --------------------------------------------------------------------------- reference
def _disc(rank: int) -> float:
    return 1.0 / log2(rank + 1)


def _ideal_gains(rows: list[Row]) -> list[float]:
    return sorted((r.rel for r in rows if r.rel > 0), reverse=True)


def _dcg_upto(gains: list[float], cut: int) -> float:
    return sum(gain * _disc(i + 1) for i, gain in enumerate(gains[:cut]))


def ref_on_order(
    name: str, opts: dict[str, Any], ranked: list[Row], unret: list[Row]
) -> float | None:
    """One measure for one fixed ordering, written from trec_eval's definitions."""
    rows = ranked + unret
    gains = [r.rel for r in ranked]
    ideal = _ideal_gains(rows)
    n_pos = len(ideal)
    if name == "rbp":
        p = opts["p"]
        if n_pos == 0:
            return None
        scale = max(1.0, max(r.rel for r in rows))
        return (1 - p) * sum(gain / scale * p**i for i, gain in enumerate(gains))
    if name == "rbp_resid":
        p = opts["p"]
        unjudged = [i for i, r in enumerate(ranked) if not r.judged]
        if not unjudged:
            return 0.0
        return p ** len(ranked) + (1 - p) * sum(p**i for i in unjudged)
    if name == "bin_g":
        t = opts["rel"]
        n_rel = sum(r.rel >= t for r in rows)
        if n_rel == 0:
            return None
        total, nonrel_seen = 0.0, 0
        for r in ranked:
            if r.rel >= t:
                total += 1 / log2(2 + nonrel_seen)
            else:
                nonrel_seen += 1
        return total / n_rel
    if n_pos == 0:
        return None
    if name == "g":
        padded = ideal + [0.0] * len(ranked)
        total, got, cost = 0.0, 0.0, 0.0
        for i, gain in enumerate(gains):
            got += gain
            cost += max(1.0, padded[i])
            if gain > 0:
                total += gain / log2(2 + cost - got)
        return total / sum(ideal)
    idcg = _dcg_upto(ideal, n_pos)
    if name == "ndcg_rel":
        points = [
            _dcg_upto(gains, i + 1) / _dcg_upto(ideal, i + 1)
            for i, gain in enumerate(gains)
            if gain > 0
        ]
        missed = n_pos - len(points)
        return (sum(points) + missed * _dcg_upto(gains, len(gains)) / idcg) / n_pos
    if name == "rndcg":
        # Walk the ideal list; where its gain changes (R-level boundary at cutoff c),
        # take ndcg@c. trec_eval adds the full list when it is longer than R + 1.
        cuts = [c for c in range(1, n_pos + 1) if c == n_pos or ideal[c] != ideal[c - 1]]
        points = [_dcg_upto(gains, c) / _dcg_upto(ideal, c) for c in cuts]
        if len(ranked) > n_pos + 1:
            points.append(_dcg_upto(gains, len(gains)) / idcg)
        return sum(points) / len(points)
    raise KeyError(name)


def reference(metric: str, rows: list[Row], ties: str) -> float | None:
    bound = prk.parse_metric(metric)
    opts = dict(bound.options)
    # The reference never reads a row's item: one ordering per distinct label sequence.
    orders = orderings(rows, ties, distinct=True)
    values = [ref_on_order(bound.spec.name, opts, r, u) for r, u in orders]
    if any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def reference_frame(df: pl.DataFrame, metrics: list[str], ties: str) -> pl.DataFrame:
    users = rows_by_user(df)
    data: dict[str, list[Any]] = {"user": sorted(users)}
    for metric in metrics:
        name = prk.parse_metric(metric).name
        data[name] = [reference(metric, users[u], ties) for u in data["user"]]
    return pl.DataFrame(data, schema_overrides={n: pl.Float64 for n in data if n != "user"})


# --------------------------------------------------------------------------- by hand
# One user: A 0.9 (1) | B 0.8 (0) | C 0.7 (2) | D 0.6 (unjudged) | E 0.5 (0) | F - (1).
# Tied variant: B, C and D share 0.7 (ranks 2..4).
HAND = pl.DataFrame(
    {
        "user": [1] * 6,
        "item": list("ABCDEF"),
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, None],
        "relevance": [1, 0, 2, None, 0, 1],
    }
)
HAND_TIED = HAND.with_columns(pl.Series("score", [0.9, 0.7, 0.7, 0.7, 0.5, None]))


def test_hand_computed_untied() -> None:
    out = prk.evaluate(
        HAND, ["rbp", "rbp_resid", "bin_g", "g", "ndcg_rel", "rndcg"], ties="item_desc"
    ).row(0, named=True)
    # rbp: the highest relevance 2 scales gains to A 1/2, C 2/2.
    assert out["rbp"] == pytest.approx(0.1 * (0.5 * 1 + 1.0 * 0.9**2), abs=1e-12)
    # rbp_resid: D (rank 4) is unjudged; 5 items recommended.
    assert out["rbp_resid"] == pytest.approx(0.9**5 + 0.1 * 0.9**3, abs=1e-12)
    # binG: A has 0 non-relevant above, C has 1 (B); 3 relevant items (A, C, F).
    assert out["bin_g"] == pytest.approx((1 / log2(2) + 1 / log2(3)) / 3, abs=1e-12)
    # G: ideal gains 2, 1, 1 then 0 (cost counts at least 1 per rank): cost 2, 3, 4;
    # got 1, 1, 3. A: 1 / log2(2 + 2 - 1), C: 2 / log2(2 + 4 - 3); total gain 4.
    assert out["g"] == pytest.approx((1 / log2(3) + 2 / log2(3)) / 4, abs=1e-12)
    dcg1, dcg3 = 1.0, 1 + 2 / log2(4)
    idcg1, idcg3 = 2.0, 2 + 1 / log2(3) + 1 / log2(4)
    # ndcg_rel: A at rank 1, C at rank 3, F never recommended (full-list ndcg).
    assert out["ndcg_rel"] == pytest.approx((dcg1 / idcg1 + dcg3 / idcg3 + dcg3 / idcg3) / 3)
    # Rndcg: R levels 1 (gain 2) and 3 (gain >= 1); 5 recommended > R + 1 = 4 adds
    # the full list (its dcg is dcg3).
    assert out["rndcg"] == pytest.approx((dcg1 / idcg1 + dcg3 / idcg3 + dcg3 / idcg3) / 3)


def test_hand_computed_with_tied_scores() -> None:
    out = prk.evaluate(HAND_TIED, ["rbp", "rbp_resid", "bin_g"]).row(0, named=True)
    # C and D each sit at ranks 2, 3, 4 with probability 1/3.
    mean_w = (0.9 + 0.9**2 + 0.9**3) / 3
    assert out["rbp"] == pytest.approx(0.1 * (0.5 + 1.0 * mean_w), abs=1e-12)
    assert out["rbp_resid"] == pytest.approx(0.9**5 + 0.1 * mean_w, abs=1e-12)
    # C has 0, 1 or 2 of the non-relevant B, D above it, each with probability 1/3.
    c_term = (1 / log2(2) + 1 / log2(3) + 1 / log2(4)) / 3
    assert out["bin_g"] == pytest.approx((1 + c_term) / 3, abs=1e-12)
    # trec_eval's order for the tie (item descending): D, C, B.
    desc = prk.evaluate(HAND_TIED, ["rbp", "bin_g", "g"], ties="item_desc").row(0, named=True)
    assert desc["rbp"] == pytest.approx(0.1 * (0.5 + 0.9**2), abs=1e-12)
    assert desc["bin_g"] == pytest.approx((1 + 1 / log2(3)) / 3, abs=1e-12)
    # G with C at rank 3: cost 2, 3, 4 and got 1, 1, 3 as untied.
    assert desc["g"] == pytest.approx((1 / log2(3) + 2 / log2(3)) / 4, abs=1e-12)


def test_rbp_binary_gains_are_relevant_or_not() -> None:
    df = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [3.0, 2.0, 1.0], "relevance": [0, 1, 1]}
    )
    assert df.select(rbp()).item() == pytest.approx(0.1 * (0.9 + 0.81), abs=1e-12)


def test_undefined_and_trec_zero_cases() -> None:
    # No positive relevance: rbp, G, ndcg_rel, Rndcg and binG are undefined (trec_eval
    # prints 0); everything judged: rbp_resid is 0, as trec_eval prints it.
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [2.0, 1.0], "relevance": [0, 0]})
    out = df.select(rbp(), bin_g(), g(), ndcg_rel(), rndcg(), rbp_resid()).row(0)
    assert out == (None, None, None, None, None, 0.0)


def test_unsupported_tie_policies_are_refused() -> None:
    for name in DETERMINISTIC_ONLY:
        with pytest.raises(ValueError, match="does not support ties='expected'"):
            prk.evaluate(HAND_TIED, [name], ties="expected")
    # rbp_resid supports every policy: optimistic / pessimistic order judged rows before
    # unjudged ones within a tie (the order is tested in tests/test_properties.py).
    for ties in ("optimistic", "pessimistic"):
        prk.evaluate(HAND_TIED, ["rbp_resid"], ties=ties)  # type: ignore[arg-type]


@pytest.mark.parametrize("p", [0.0, 1.0, -0.5, 1.5])
def test_persistence_must_be_a_probability(p: float) -> None:
    with pytest.raises(
        ValueError, match=r"parameter 'p' of metric 'rbp(_resid)?' must be in \(0, 1\)"
    ):
        rbp(p=p)
    with pytest.raises(
        ValueError, match=r"parameter 'p' of metric 'rbp(_resid)?' must be in \(0, 1\)"
    ):
        prk.evaluate(HAND, [f"rbp_resid(p={p})"])


def test_trec_names_are_aliases() -> None:
    assert prk.parse_metric("binG").name == "bin_g"
    assert prk.parse_metric("G").name == "g"
    assert prk.parse_metric("Rndcg").name == "rndcg"
    assert prk.parse_metric("rbp(p=0.9)").name == "rbp"
    assert prk.parse_metric("rbp(p=0.95)").name == "rbp(p=0.95)"


# --------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(5))
def test_engine_matches_brute_force(ties: str, seed: int) -> None:
    metrics = metrics_for(ties)
    df = random_frame(seed)
    expected = reference_frame(df, metrics, ties)
    got = prk.evaluate(df, metrics, ties=ties, per_user=True, users="all")  # type: ignore[arg-type]
    assert_frame_equal(got, expected, abs_tol=1e-9, check_dtypes=False)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_inline_expressions_match_brute_force(ties: str, seed: int) -> None:
    metrics = metrics_for(ties)
    df = random_frame(100 + seed)
    expected = reference_frame(df, metrics, ties)
    got = inline_per_user(df, metrics, ties)
    assert_frame_equal(got, expected, abs_tol=1e-9, check_dtypes=False)


@pytest.mark.parametrize("metric", EXACT_UNDER_TIES)
def test_each_measure_alone_under_expected_ties(metric: str) -> None:
    # Alone, a measure must register every tie feature its kernel needs.
    df = random_frame(7)
    got = prk.evaluate(df, [metric], per_user=True, users="all")
    assert_frame_equal(got, reference_frame(df, [metric], "expected"), abs_tol=1e-9)


@pytest.mark.slow
def test_large_tie_group_expected_values() -> None:
    # A 9-way tie after one item: 9! orderings in the reference.
    df = pl.DataFrame(
        {
            "user": [1] * 11,
            "item": list(range(11)),
            "score": [2.0] + [1.0] * 9 + [None],
            "relevance": [0, 1, 0, 2, None, 0, 1, None, 0, 3, 1],
        }
    )
    expected = reference_frame(df, EXACT_UNDER_TIES, "expected")
    got = prk.evaluate(df, EXACT_UNDER_TIES, per_user=True)
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)


# --------------------------------------------------------------------------- trec_eval
TREC_TO_OURS = {
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "binG": "bin_g",
    "G": "g",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg",
}


def _trec_output(name: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = re.split(r"\s+", line.strip(), maxsplit=2)
        out[(measure, query)] = value
    return out


def test_per_query_values_match_trec_eval() -> None:
    long = prk.join(
        scan_run(DATA / "results.test").select("user", "item", "score"),
        scan_qrels(DATA / "qrels.test"),
    )
    result = prk.evaluate(
        long, list(TREC_TO_OURS.values()), ties="item_desc", per_user=True, users="both"
    )
    assert isinstance(result, pl.LazyFrame)
    per_query = result.collect()
    printed = _trec_output("out.test.aq")
    checked = 0
    for row in per_query.iter_rows(named=True):
        for trec_name, ours in TREC_TO_OURS.items():
            assert f"{row[ours]:.4f}" == printed[(trec_name, row["user"])], (trec_name, row)
            checked += 1
    assert checked == 3 * len(TREC_TO_OURS)
    totals = _trec_output("out.test.a")
    for trec_name, ours in TREC_TO_OURS.items():
        assert f"{per_query[ours].mean():.4f}" == totals[(trec_name, "all")], trec_name


PYTREC = {"ndcg_rel": "ndcg_rel", "Rndcg": "rndcg", "binG": "bin_g", "G": "g"}


def _trec_like(seed: int, *, ties: bool, n_users: int, max_docs: int) -> pl.DataFrame:
    """Random graded qrels, string doc ids, unjudged and never-recommended items."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, float | None, int | None]] = []
    for u in range(n_users):
        for doc in rng.choice(200, size=int(rng.integers(1, max_docs)), replace=False):
            score = float(rng.integers(0, 4)) if ties else float(rng.random())
            rel = int(rng.choice([0, 0, 1, 2, 3])) if rng.random() < 0.7 else None
            rows.append((f"q{u:03d}", f"d{doc:04d}", score, rel))
        for doc in rng.choice(np.arange(200, 260), size=int(rng.integers(0, 4)), replace=False):
            rows.append((f"q{u:03d}", f"d{doc:04d}", None, int(rng.integers(1, 4))))
    return pl.DataFrame(
        rows,
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


@pytest.mark.parametrize(("ties", "max_docs"), [(False, 30), (True, 30), (True, 7)])
@pytest.mark.parametrize("seed", range(3))
def test_per_query_agreement_with_pytrec_eval(seed: int, ties: bool, max_docs: int) -> None:
    # Short lists (max_docs=7) cover Rndcg's cases #recommended <, =, R + 1 and > R + 1.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    df = _trec_like(seed, ties=ties, n_users=150, max_docs=max_docs)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for user, item, score, rel in df.iter_rows():
        if rel is not None:
            qrels.setdefault(user, {})[item] = rel
        if score is not None:
            run.setdefault(user, {})[item] = score
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    ours = prk.evaluate(df, list(PYTREC.values()), ties="item_desc", per_user=True, users="both")
    checked = 0
    for row in ours.iter_rows(named=True):
        for trec_name, name in PYTREC.items():
            value = trec[row["user"]][trec_name]
            if row[name] is None:  # no relevant item: trec_eval prints 0
                assert value == 0.0, (row["user"], trec_name)
                continue
            assert row[name] == pytest.approx(value, abs=1e-12), (row["user"], trec_name)
            checked += 1
    assert checked > 100 * len(PYTREC)

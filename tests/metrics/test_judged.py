"""The judged-item measures: bpref, infAP, num_nonrel_judged_ret, unjudged, utility.

Checked by hand, against a brute-force reference over every tie ordering, against
pytrec_eval per query, and against trec_eval's own printed output (out.test.aq).

Tests the private unit polars_rankeval.metrics._common.inline on purpose (the kernels alone).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.io.trec.read import scan_qrels, scan_run
from polars_rankeval.metrics._common import inline
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.registry import registered
from tests._reference import Row, orderings, random_frame, rows_by_user

DATA = Path(__file__).parents[1] / "data"
EPS = 1e-5  # trec_eval's INFAP_EPSILON

# One user. A relevant, U unjudged, B judged non-relevant, C relevant (grade 2), D judged
# non-relevant, E unjudged; F (relevant) and G (judged non-relevant) not recommended.
# R = 3 (A, C, F), N = 3 judged non-relevant (B, D, G).
ITEMS = list("AUBCDEFG")
RELEVANCE = [1, None, 0, 2, 0, None, 1, 0]
UNTIED = pl.DataFrame(
    {
        "user": [1] * 8,
        "item": ITEMS,
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, None, None],
        "relevance": RELEVANCE,
    }
)
# U, B and C tied at ranks 2..4: each of the 6 orders equally likely.
TIED = UNTIED.with_columns(pl.Series("score", [0.9, 0.7, 0.7, 0.7, 0.5, 0.4, None, None]))


def judged_frame(seed: int) -> pl.DataFrame:
    return random_frame(seed, n_users=14, p_unjudged=0.35, grades=(0, 0, 0, 1, 2))


def value(df: pl.DataFrame, metric: str, ties: str = "expected") -> float:
    out = prk.evaluate(df, [metric], ties=ties)  # type: ignore[arg-type]
    return float(out[metric].item())


# --------------------------------------------------------------------------- by hand
UNTIED_CASES = [
    # A: no judged non-relevant above (1); C: B above, 1 - min(1, 3) / min(3, 3).
    ("bpref", (1 + (1 - 1 / 3)) / 3),
    # rel=2: R = 1 (C), N = 5 (A, B, D, F, G); A and B above C: 1 - min(2, 1) / min(5, 1).
    ("bpref(rel=2)", (1 - 1 / 1) / 1),
    # A at rank 1 scores 1; C at rank 4 has J = 2 judged (A, B), Q = 1 relevant above.
    ("inf_ap", (1 + (1 + 2 * (1 + EPS) / (2 + 2 * EPS)) / 4) / 3),
    ("num_nonrel_judged_ret@3", 1.0),  # B
    ("num_nonrel_judged_ret@5", 2.0),  # B, D
    ("num_nonrel_judged_ret", 2.0),
    ("num_nonrel_judged_ret(rel=2)", 3.0),  # A (grade 1) counts as non-relevant too
    ("unjudged@2", 1 / 2),  # U
    ("unjudged@5", 1 / 5),
    ("unjudged@10", 2 / 10),  # U, E; the list of 6 padded with judged items
    ("unjudged", 2 / 6),
    ("utility", 1 * 2 - 1 * 4),  # relevant A, C; non-relevant U, B, D, E
    ("utility@3", 1 * 1 - 1 * 2),
    ("utility(c=-1)", 2 - 4 - 1 * (3 - 2)),  # F relevant, not recommended
    ("utility(d=0.5)", 2 - 4 + 0.5 * (8 - 3 - 6 + 2)),  # G
    ("utility(a=2,b=-0.5,rel=2)", 2 * 1 - 0.5 * 5),
]


@pytest.mark.parametrize(("metric", "expected"), UNTIED_CASES, ids=[c[0] for c in UNTIED_CASES])
def test_hand_computed_untied(metric: str, expected: float) -> None:
    ties = "item_desc" if metric.startswith("inf_ap") else "expected"
    assert value(UNTIED, metric, ties) == pytest.approx(expected, abs=1e-15)


TIED_CASES = [
    # metric, expected over the 6 orders of U, B, C, item_desc (U, C, B: ids descending)
    # C: X0 = 0 judged non-relevant above the group, m = 1 (B) tied, H uniform on {0, 1}.
    ("bpref", (1 + (1 - (0 + 1) / 2 / 3)) / 3, (1 + 1) / 3),
    ("num_nonrel_judged_ret@2", 1 / 3, 0.0),  # B at rank 2 w.p. 1/3
    ("num_nonrel_judged_ret@3", 2 / 3, 0.0),  # B at rank 2 or 3 w.p. 2/3
    ("num_nonrel_judged_ret@4", 1.0, 1.0),
    ("unjudged@2", (1 / 3) / 2, 1 / 2),
    ("unjudged@3", (2 / 3) / 3, 1 / 3),
    ("utility@2", (1 + 1 / 3) - (2 - (1 + 1 / 3)), 1 - 1),
    ("utility", 2 - 4, 2 - 4),
]


@pytest.mark.parametrize(
    ("metric", "expected", "item_desc"), TIED_CASES, ids=[c[0] for c in TIED_CASES]
)
def test_hand_computed_tied(metric: str, expected: float, item_desc: float) -> None:
    assert value(TIED, metric) == pytest.approx(expected, abs=1e-15)
    assert value(TIED, metric, "item_desc") == pytest.approx(item_desc, abs=1e-15)


def test_infap_tied_item_desc() -> None:
    # Order A, U, C, B: C at rank 3 with J = 1 judged (A) and Q = 1 relevant above.
    expected = (1 + (1 + 1 * (1 + EPS) / (1 + 2 * EPS)) / 3) / 3
    assert value(TIED, "inf_ap", "item_desc") == pytest.approx(expected, abs=1e-15)


def test_bpref_cap_at_r_in_a_tie() -> None:
    # R = 1 relevant item tied with 4 judged non-relevant ones below one judged
    # non-relevant item: X0 = 1, H uniform on 0..4, min(1 + H, 1) = 1 always, and
    # min(N, R) = 1: bpref = 1 - 1 = 0 whatever the order.
    df = pl.DataFrame(
        {
            "user": [1] * 6,
            "item": list(range(6)),
            "score": [2.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            "relevance": [0, 1, 0, 0, 0, 0],
        }
    )
    assert value(df, "bpref") == 0.0
    # R = 3: two more relevant items, unrecommended. N = 5, min(N, R) = 3; the
    # recommended relevant item has min(1 + H, 3) = 1, 2, 3, 3, 3 for H = 0..4.
    more = pl.concat(
        [
            df,
            pl.DataFrame(
                {"user": [1, 1], "item": [6, 7], "score": [None, None], "relevance": [1, 1]},
                schema=df.schema,
            ),
        ]
    )
    assert value(more, "bpref") == pytest.approx((1 - (1 + 2 + 3 + 3 + 3) / 5 / 3) / 3, abs=1e-15)


def test_undefined_and_never_undefined() -> None:
    # No relevant item: bpref and infAP are undefined; the counts are not.
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [1.0, 0.5], "relevance": [0, None]})
    metrics = ["bpref", "inf_ap", "num_nonrel_judged_ret", "unjudged@4", "utility"]
    out = prk.evaluate(df, metrics, ties="item_desc", per_user=True, users="all")
    assert out.row(0) == (1, None, None, 1.0, 1 / 4, 0 - 2)


def test_bpref_without_judged_nonrelevant_items() -> None:
    # N = 0: every relevant recommended item scores 1 (trec_eval's special case).
    df = pl.DataFrame(
        {"user": [1] * 3, "item": [1, 2, 3], "score": [1.0, 0.5, None], "relevance": [None, 1, 1]}
    )
    assert value(df, "bpref") == 1 / 2


def test_unsupported_tie_policies_raise() -> None:
    with pytest.raises(ValueError, match="does not support ties='expected'"):
        prk.evaluate(UNTIED, ["inf_ap"])
    # unjudged and num_nonrel_judged_ret support every policy: optimistic / pessimistic
    # put judged rows before unjudged ones within a tie (tests/test_properties.py).
    for metric in ("unjudged@3", "num_nonrel_judged_ret@3"):
        prk.evaluate(UNTIED, [metric], ties="optimistic")


def test_registry_entries() -> None:
    specs = registered()
    assert specs["bpref"].normalized
    assert not specs["bpref"].takes_k
    assert not specs["inf_ap"].takes_k
    assert "expected" not in specs["inf_ap"].tie_policies
    for name in ("inf_ap", "num_nonrel_judged_ret", "unjudged", "utility"):
        assert not specs[name].normalized, name
    assert parse_metric("utility(b=-1,a=1)@5").name == "utility@5"
    assert parse_metric("utility(b=-2)").name == "utility(b=-2)"
    assert parse_metric("unj@5").name == "unjudged@5"


# --------------------------------------------------------------------------- brute force
def _on_order(
    name: str, k: int | None, opts: dict[str, Any], ranked: list[Row], unret: list[Row]
) -> float | None:
    """One measure for one fixed ordering, written after trec_eval's loops."""
    t = opts.get("rel", 1.0)
    everything = ranked + unret
    n_rel = sum(r.rel >= t for r in everything)
    top = ranked if k is None else ranked[:k]
    if name == "num_nonrel_judged_ret":
        return float(sum(r.judged and r.rel < t for r in top))
    if name == "unjudged":
        den = len(ranked) if k is None else k
        return sum(not r.judged for r in top) / den if den else 0.0
    if name == "utility":
        rel_ret = sum(r.rel >= t for r in top)
        ret = len(top)
        rest = len(everything) - n_rel - ret + rel_ret
        return (
            opts["a"] * rel_ret
            + opts["b"] * (ret - rel_ret)
            + opts["c"] * (n_rel - rel_ret)
            + opts["d"] * rest
        )
    if n_rel == 0:
        return None
    if name == "bpref":
        n_nonrel = sum(r.judged and r.rel < t for r in everything)
        total, nonrel = 0.0, 0
        for r in ranked:
            if not r.judged:
                continue
            if r.rel < t:
                nonrel += 1
            elif nonrel > 0:
                total += 1.0 - min(nonrel, n_rel) / min(n_nonrel, n_rel)
            else:
                total += 1.0
        return total / n_rel
    if name == "inf_ap":
        total, nonrel, rel_seen = 0.0, 0, 0
        for j, r in enumerate(ranked):
            if not r.judged:
                continue
            if r.rel < t:
                nonrel += 1
                continue
            rel_seen += 1
            if j == 0:
                total += 1.0
            else:
                total += 1.0 / (j + 1) + (j / (j + 1)) * ((rel_seen - 1 + nonrel) / j) * (
                    (rel_seen - 1 + EPS) / (rel_seen - 1 + nonrel + 2 * EPS)
                )
        return total / n_rel
    raise KeyError(name)


def brute_force(metric: str, rows: list[Row], ties: str) -> float | None:
    bound = parse_metric(metric)
    opts = dict(bound.options)
    values = [
        _on_order(bound.spec.name, bound.k, opts, ranked, unret)
        for ranked, unret in orderings(rows, ties)
    ]
    if any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


def brute_force_frame(df: pl.DataFrame, metrics: list[str], ties: str) -> pl.DataFrame:
    users = rows_by_user(df)
    data: dict[str, list[Any]] = {"user": sorted(users)}
    for metric in metrics:
        data[parse_metric(metric).name] = [
            brute_force(metric, users[u], ties) for u in data["user"]
        ]
    return pl.DataFrame(data, schema_overrides={n: pl.Float64 for n in data if n != "user"})


METRICS = [
    "bpref",
    "bpref(rel=2)",
    "inf_ap",
    "infAP(rel=2)",
    "num_nonrel_judged_ret",
    "num_nonrel_judged_ret@2",
    "num_nonrel_judged_ret(rel=2)@3",
    "unjudged",
    "unjudged@1",
    "unjudged@3",
    "utility",
    "utility@2",
    "utility(a=2,b=-0.5,c=-1,d=0.25,rel=2)@3",
]


def supported(metrics: list[str], ties: str) -> list[str]:
    specs = registered()
    return [m for m in metrics if ties in specs[parse_metric(m).spec.name].tie_policies]


def _inline(df: pl.DataFrame, metrics: list[str], ties: str) -> pl.DataFrame:
    exprs = []
    for m in metrics:
        bound = parse_metric(m)
        exprs.append(
            inline(
                bound.spec.name,
                bound.k,
                ties=ties,  # type: ignore[arg-type]
                item="item",
                score="score",
                relevance="relevance",
                rank=None,
                **dict(bound.options),
            )
        )
    return df.group_by("user").agg(exprs).sort("user")


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(5))
def test_window_engine_matches_brute_force(ties: str, seed: int) -> None:
    df = judged_frame(seed)
    metrics = supported(METRICS, ties)
    expected = brute_force_frame(df, metrics, ties)
    got = prk.evaluate(df, metrics, ties=ties, per_user=True, users="all")  # type: ignore[arg-type]
    assert_frame_equal(got, expected, abs_tol=1e-9, check_dtypes=False)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(3))
def test_inline_expressions_match_brute_force(ties: str, seed: int) -> None:
    df = judged_frame(50 + seed)
    metrics = supported(METRICS, ties)
    expected = brute_force_frame(df, metrics, ties)
    assert_frame_equal(_inline(df, metrics, ties), expected, abs_tol=1e-9, check_dtypes=False)


def test_bpref_large_tie_group_expected() -> None:
    # A 7-way tie under one judged non-relevant item, R = 2 < N = 5: the cap binds.
    df = pl.DataFrame(
        {
            "user": [1] * 9,
            "item": list(range(9)),
            "score": [3.0] + [1.0] * 7 + [None],
            "relevance": [0, 1, 0, None, 0, 0, None, 0, 1],
        }
    )
    metrics = ["bpref", "num_nonrel_judged_ret@4", "unjudged@3", "utility@5"]
    expected = brute_force_frame(df, metrics, "expected")
    got = prk.evaluate(df, metrics, per_user=True)
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)


# --------------------------------------------------------------------------- pytrec_eval


def trec_like(seed: int, *, ties: bool, n_users: int = 40) -> pl.DataFrame:
    """String ids; unjudged recommended items; relevant and judged non-relevant items
    that were never recommended."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[str, str, float | None, int | None]] = []
    for u in range(n_users):
        user = f"q{u:03d}"
        n_docs = int(rng.integers(3, 30))
        for doc in rng.choice(200, size=n_docs, replace=False):
            score = float(rng.integers(0, 6)) if ties else float(rng.random())
            rel = int(rng.choice([0, 0, 1, 2, 3])) if rng.random() < 0.6 else None
            rows.append((user, f"d{doc:04d}", score, rel))
        extra = rng.choice(np.arange(200, 260), size=int(rng.integers(0, 6)), replace=False)
        for doc in extra:
            rows.append((user, f"d{doc:04d}", None, int(rng.choice([0, 0, 1, 2]))))
    return pl.DataFrame(
        rows,
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def run_pytrec(df: pl.DataFrame, measures: set[str]) -> dict[str, dict[str, float]]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for user, item, score, rel in df.iter_rows():
        if rel is not None:
            qrels.setdefault(user, {})[item] = rel
        if score is not None:
            run.setdefault(user, {})[item] = score
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


PYTREC_PAIRS = [
    ("bpref", "bpref"),
    ("infAP", "inf_ap"),
    ("utility", "utility"),
    ("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
]


@pytest.mark.parametrize("ties", [False, True], ids=["no-ties", "ties"])
@pytest.mark.parametrize("seed", range(3))
def test_per_query_agreement_with_pytrec_eval(seed: int, ties: bool) -> None:
    df = trec_like(seed, ties=ties)
    trec = run_pytrec(df, {t for t, _ in PYTREC_PAIRS})
    ours = prk.evaluate(
        df, [m for _, m in PYTREC_PAIRS], ties="item_desc", per_user=True, users="recs"
    )
    checked = 0
    for row in ours.iter_rows(named=True):
        per_query = trec.get(row["user"])
        if per_query is None:
            continue
        for trec_name, name in PYTREC_PAIRS:
            if row[name] is None:  # no relevant item: trec_eval prints 0, we say undefined
                assert per_query[trec_name] == 0.0
                continue
            assert row[name] == pytest.approx(per_query[trec_name], abs=1e-12), (
                row["user"],
                trec_name,
            )
            checked += 1
    assert checked > 30 * len(PYTREC_PAIRS)


def test_item_desc_matters_for_bpref_on_ties() -> None:
    # Guard against a cross-check passing on data where the tie rule makes no difference.
    df = trec_like(4, ties=True)
    trec = run_pytrec(df, {"bpref"})
    frames = {
        ties: prk.evaluate(df, ["bpref"], ties=ties, per_user=True, users="recs")  # type: ignore[arg-type]
        for ties in ("item_desc", "item_asc")
    }
    diffs = {
        ties: max(
            abs(row["bpref"] - trec[row["user"]]["bpref"])
            for row in frame.iter_rows(named=True)
            if row["bpref"] is not None
        )
        for ties, frame in frames.items()
    }
    assert diffs["item_desc"] < 1e-12
    assert diffs["item_asc"] > 1e-3


# --------------------------------------------------------------------------- trec_eval
TREC_TO_OURS = {
    "bpref": "bpref",
    "infAP": "inf_ap",
    "utility": "utility",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "unj_5": "unjudged@5",
    "unj_10": "unjudged@10",
    "unj_20": "unjudged@20",
}


def trec_output(name: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, query, printed = re.split(r"\s+", line.strip(), maxsplit=2)
        out[(measure, query)] = printed
    return out


@pytest.fixture(scope="module")
def trec_per_query() -> pl.DataFrame:
    long = prk.join(
        scan_run(DATA / "results.test").select("user", "item", "score"),
        scan_qrels(DATA / "qrels.test"),
    )
    result = prk.evaluate(
        long, list(TREC_TO_OURS.values()), ties="item_desc", per_user=True, users="both"
    )
    assert isinstance(result, pl.LazyFrame)
    return result.collect()


def _same(ours: float, printed: str) -> bool:
    return f"{ours:.4f}" == printed or f"{ours:.0f}" == printed


def test_per_query_values_match_trec_eval(trec_per_query: pl.DataFrame) -> None:
    expected = trec_output("out.test.aq")
    checked = 0
    for row in trec_per_query.iter_rows(named=True):
        for trec_name, name in TREC_TO_OURS.items():
            printed = expected.get((trec_name, row["user"]))
            if printed is None:
                continue
            assert _same(row[name], printed), (trec_name, row["user"], row[name], printed)
            checked += 1
    assert checked == 3 * len(TREC_TO_OURS)


def test_all_rows_match_trec_eval(trec_per_query: pl.DataFrame) -> None:
    # The "all" line: means over queries (utility too), num_nonrel_judged_ret summed.
    expected = trec_output("out.test.a")
    for trec_name, name in TREC_TO_OURS.items():
        column = trec_per_query[name]
        total = column.sum() if trec_name.startswith("num_") else column.mean()
        assert _same(total, expected[(trec_name, "all")]), (trec_name, total)


def test_gm_bpref_is_the_geometric_mean_of_bpref(trec_per_query: pl.DataFrame) -> None:
    # gm_bpref is an aggregation of per-query bpref (values floored at MIN_GEO_MEAN).
    logs = [math.log(max(v, 1e-5)) for v in trec_per_query["bpref"]]
    gm = math.exp(sum(logs) / len(logs))
    assert _same(gm, trec_output("out.test.a")[("gm_bpref", "all")])

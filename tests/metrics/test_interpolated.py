"""Interpolated precision, relative precision, set MAP and R-precision at multiples of R.

Checked by hand, against a brute force over every tie ordering, against pytrec_eval per
query, and against trec_eval's own printed output (tests/data/out.test.aq).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any, cast

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import (
    iprec_11pt,
    iprec_at_recall,
    relative_precision,
    set_map,
)
from polars_rankeval.io.trec.read import scan_qrels, scan_run
from tests._reference import Row, inline_per_user, orderings, random_frame, rows_by_user
from tests.test_reference_tools import run_pytrec, trec_like
from tests.trec_eval.test_trec_conformance import DATA, trec_output

DETERMINISTIC = ("item_desc", "item_asc", "optimistic", "pessimistic")
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def interpolated_frame(seed: int) -> pl.DataFrame:
    return random_frame(seed, n_users=14, p_unjudged=0.25, grades=(0, 1, 1, 2, 3))


# --------------------------------------------------------------------------- reference
def lround(x: float) -> int:
    """C's lround for x >= 0: the exact binary value, halves rounded away from zero."""
    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def iprec_ref(rels: list[bool], n_rel: int, level: float | None, need: int = 0) -> float:
    """Best precision over the ranks with at least ``need`` = lround(level * R) hits."""
    if level is not None:
        need = lround(level * n_rel)
    best, hits = 0.0, 0
    for p, is_rel in enumerate(rels, start=1):
        hits += is_rel
        if hits >= need:
            best = max(best, hits / p)
    return best


def value_on_order(
    name: str, k: int | None, opts: dict[str, Any], ranked: list[Row], unret: list[Row]
) -> float | None:
    """One of this file's metrics for one fixed ordering, straight from its definition."""
    t = opts.get("rel", 1.0)
    rels = [r.rel >= t for r in ranked]
    n_rel = sum(r.rel >= t for r in ranked + unret)
    n_ret, hits = len(ranked), sum(rels)
    if n_rel == 0:
        return None
    if name == "iprec_at_recall":
        return iprec_ref(rels, n_rel, opts["level"])
    if name == "iprec_11pt":
        return sum(iprec_ref(rels, n_rel, level) for level in LEVELS) / 11
    if name == "relative_precision":
        size = n_ret if k is None else k
        den = min(size, n_rel)
        return sum(rels[:size]) / den if den else 0.0
    if name == "set_map":
        return hits * hits / (n_ret * n_rel) if n_ret else 0.0
    if name == "r_precision":
        cut = int(opts["mult"] * n_rel + 0.9)  # trec_eval: (long)(mult * R + 0.9)
        return sum(rels[:cut]) / cut if cut else 0.0
    raise KeyError(name)


def reference(metric: str, rows: list[Row], ties: str) -> float | None:
    """Mean over every ordering the tie policy allows (one for deterministic ones)."""
    bound = prk.parse_metric(metric)
    opts = dict(bound.options)
    values = [
        value_on_order(bound.spec.name, bound.k, opts, ranked, unret)
        for ranked, unret in orderings(rows, ties, distinct=True)  # items never read
    ]
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


# Interpolated precision: deterministic tie policies only.
IPREC_METRICS = [
    "iprec_at_recall",
    "iprec_at_recall(level=0.1)",
    "iprec_at_recall(level=0.3)",
    "iprec_at_recall(level=0.5)",
    "iprec_at_recall(level=0.7)",
    "iprec_at_recall(level=0.9)",
    "iprec_at_recall(level=1)",
    "iprec_at_recall(level=0.5,rel=2)",
    "iprec_11pt",
    "iprec_11pt(rel=2)",
]
# Exact under ties="expected" too.
EXACT_METRICS = [
    "relative_precision@1",
    "relative_precision@3",
    "relative_precision@10",
    "relative_precision",
    "relative_precision(rel=2)@2",
    "set_map",
    "set_map(rel=2)",
    "r_precision",
    "r_precision(mult=0.01)",
    "r_precision(mult=0.2)",
    "r_precision(mult=0.6)",
    "r_precision(mult=1.4)",
    "r_precision(mult=2)",
    "r_precision(mult=0.8,rel=2)",
]


# --------------------------------------------------------------------------- by hand
# One user: relevant at ranks 1, 3 and 5 of five, and F relevant but never recommended.
#   untied:  A 5 (1) | B 4 (0) | C 3 (1) | D 2 (0) | E 1 (1) | F - (1)
#   tied:    A 5 (1) | B 3 (0) | C 3 (1) | D 3 (0) | E 1 (1) | F - (1)
# R = 4. Precision at the relevant ranks of the untied list: 1/1, 2/3, 3/5.
UNTIED = pl.DataFrame(
    {
        "user": [1] * 6,
        "item": list("ABCDEF"),
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, None],
        "relevance": [1, 0, 1, 0, 1, 1],
    }
)
TIED = UNTIED.with_columns(pl.Series("score", [5.0, 3.0, 3.0, 3.0, 1.0, None]))

HAND = [
    # level * R = 0 -> any rank: the best precision, 1/1.
    ("iprec_at_recall", 1 / 1),
    # lround(0.4 * 4 = 1.6) = 2 hits: ranks 3 and 5 -> max(2/3, 3/5).
    ("iprec_at_recall(level=0.4)", max(2 / 3, 3 / 5)),
    # lround(0.7 * 4 = 2.8) = 3 hits: rank 5 only.
    ("iprec_at_recall(level=0.7)", 3 / 5),
    # 4 hits are never reached (F is not recommended).
    ("iprec_at_recall(level=1)", 0.0),
    # Levels 0..1 need 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4 hits.
    ("iprec_11pt", (4 * 1 + 3 * (2 / 3) + 2 * (3 / 5) + 2 * 0) / 11),
    ("relative_precision@2", 1 / min(2, 4)),
    ("relative_precision@5", 3 / min(5, 4)),
    ("relative_precision@10", 3 / min(10, 4)),
    ("relative_precision", 3 / min(5, 4)),  # over the 5 recommended items
    ("set_map", (3 / 5) * (3 / 4)),
    # cut = floor(mult * 4 + 0.9): 0.01 -> floor(0.94) = 0 (value 0); 0.2 -> 1;
    # 0.5 -> 2; 1.2 -> floor(5.7) = 5; 2 -> floor(8.9) = 8, beyond the list.
    ("r_precision(mult=0.01)", 0.0),
    ("r_precision(mult=0.2)", 1 / 1),
    ("r_precision(mult=0.5)", 1 / 2),
    ("r_precision(mult=1.2)", 3 / 5),
    ("r_precision(mult=2)", 3 / 8),
]


@pytest.mark.parametrize(("metric", "value"), HAND, ids=[m for m, _ in HAND])
def test_hand_computed(metric: str, value: float) -> None:
    got = prk.evaluate(UNTIED, [metric], ties="item_desc")[metric].item()
    assert got == pytest.approx(value, abs=1e-15)


def test_public_functions_match_the_grammar() -> None:
    got = UNTIED.group_by("user").agg(
        iprec_at_recall(level=0.7),
        iprec_11pt(),
        relative_precision(2),
        set_map(),
        prk.r_precision(mult=2.0),
    )
    assert got.columns == [
        "user",
        "iprec_at_recall(level=0.7)",
        "iprec_11pt",
        "relative_precision@2",
        "set_map",
        "r_precision(mult=2)",
    ]
    assert got.row(0)[1:] == pytest.approx((3 / 5, 7.2 / 11, 1 / 2, 9 / 20, 3 / 8), abs=1e-15)


# In TIED, B, C, D share ranks 2..4 and hold one relevant item, C.
#   item_desc: D, C, B (C at 3); item_asc: B, C, D (C at 3);
#   optimistic: C first (rank 2); pessimistic: C last (rank 4).
TIED_CASES = [
    # lround(0.4 * 4) = 2 hits: the best precision from C's rank on.
    (
        "iprec_at_recall(level=0.4)",
        {
            "item_desc": max(2 / 3, 3 / 5),
            "item_asc": max(2 / 3, 3 / 5),
            "optimistic": max(2 / 2, 3 / 5),
            "pessimistic": max(2 / 4, 3 / 5),
        },
    ),
    (
        "iprec_11pt",  # the levels needing 2 hits (0.4, 0.5, 0.6) see C's rank
        {
            "item_desc": (4 * 1 + 3 * (2 / 3) + 2 * (3 / 5)) / 11,
            "item_asc": (4 * 1 + 3 * (2 / 3) + 2 * (3 / 5)) / 11,
            "optimistic": (4 * 1 + 3 * 1 + 2 * (3 / 5)) / 11,
            "pessimistic": (4 * 1 + 3 * (3 / 5) + 2 * (3 / 5)) / 11,
        },
    ),
    # C is in the top 3 unless it is last of the group: probability 2/3.
    (
        "relative_precision@3",
        {
            "expected": (1 + 2 / 3) / 3,
            "item_desc": 2 / 3,
            "item_asc": 2 / 3,
            "optimistic": 2 / 3,
            "pessimistic": 1 / 3,
        },
    ),
    # mult=0.5 cuts at 2: C is at rank 2 with probability 1/3.
    (
        "r_precision(mult=0.5)",
        {
            "expected": (1 + 1 / 3) / 2,
            "item_desc": 1 / 2,
            "item_asc": 1 / 2,
            "optimistic": 2 / 2,
            "pessimistic": 1 / 2,
        },
    ),
    # The whole list as a set: no ordering matters.
    ("set_map", {ties: 9 / 20 for ties in prk.TIE_POLICIES}),
]


@pytest.mark.parametrize(("metric", "values"), TIED_CASES, ids=[m for m, _ in TIED_CASES])
def test_tied_scores_under_each_policy(metric: str, values: dict[str, float]) -> None:
    got = {
        ties: prk.evaluate(TIED, [metric], ties=ties)[metric].item()  # type: ignore[call-overload]
        for ties in values
    }
    assert got == pytest.approx(values, abs=1e-15)


def test_expected_ties_are_refused_for_interpolated_precision() -> None:
    for metric in ("iprec_at_recall(level=0.5)", "iprec_11pt"):
        with pytest.raises(ValueError, match="does not support ties='expected'; supported: item"):
            prk.evaluate(TIED, [metric])
    with pytest.raises(ValueError, match="does not support ties='expected'"):
        TIED.select(iprec_11pt(ties="expected"))


def test_lround_of_the_recall_level() -> None:
    # R = 5, relevant at ranks 1, 2, 10, 20, 40: precisions 1, 1, 3/10, 4/20, 5/40.
    # Level 0.5 -> lround(2.5) = 3 hits (banker's rounding would give 2, i.e. 1.0);
    # level 0.9 -> lround(4.5) = 5 hits (not 4).
    relevant = {1, 2, 10, 20, 40}
    df = pl.DataFrame(
        {
            "user": ["q"] * 40,
            "item": [f"d{p:02d}" for p in range(1, 41)],
            "score": [100.0 - p for p in range(1, 41)],
            "relevance": [int(p in relevant) for p in range(1, 41)],
        }
    )
    metrics = ["iprec_at_recall(level=0.5)", "iprec_at_recall(level=0.9)"]
    got = prk.evaluate(df, metrics, ties="item_desc").select(metrics).row(0)
    assert got == pytest.approx((3 / 10, 5 / 40), abs=1e-15)


def test_nothing_recommended_and_no_relevant_item() -> None:
    # User 1: its one relevant item is not recommended -> 0; user 2: nothing relevant ->
    # undefined (null), as every binary metric.
    df = pl.DataFrame(
        {
            "user": [1, 1, 2, 2],
            "item": [1, 2, 3, 4],
            "score": [None, None, 0.5, 0.4],
            "relevance": [1, 0, 0, None],
        }
    )
    metrics = ["iprec_at_recall", "iprec_11pt", "relative_precision", "relative_precision@3"]
    metrics += ["set_map", "r_precision(mult=2)"]
    got = prk.evaluate(df, metrics, ties="item_desc", per_user=True, users="all")
    assert got.row(0) == (1, *[0.0] * len(metrics))
    assert got.row(1) == (2, *[None] * len(metrics))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("iprec_at_recall(level=1.5)", r"parameter 'level' of metric 'iprec_at_recall' must be"),
        ("iprec_at_recall(level=-0.1)", r"must be in \[0, 1\], got -0.1"),
        ("r_precision(mult=0)", r"parameter 'mult' of metric 'r_precision' must be > 0, got 0.0"),
        ("Rprec(mult=-1)", r"must be > 0"),
        ("iprec_11pt@10", r"takes no cutoff"),
        ("set_map@10", r"takes no cutoff"),
    ],
)
def test_invalid_options(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prk.parse_metric(text)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("iprec_at_recall(level=0.0)", "iprec_at_recall"),
        ("iprec_at_recall(level=0.50)", "iprec_at_recall(level=0.5)"),
        ("iprec_at_recall(level=1.0)", "iprec_at_recall(level=1)"),
        ("relative_P@5", "relative_precision@5"),
        ("Rprec(mult=1.0)", "r_precision"),
        ("r_precision(mult=0.20)", "r_precision(mult=0.2)"),
    ],
)
def test_canonical_names(text: str, canonical: str) -> None:
    assert prk.parse_metric(text).name == canonical


# --------------------------------------------------------------------------- brute force
def _supported(ties: str) -> list[str]:
    return EXACT_METRICS + (IPREC_METRICS if ties in DETERMINISTIC else [])


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(5))
def test_engine_matches_brute_force(ties: str, seed: int) -> None:
    df = interpolated_frame(seed)
    metrics = _supported(ties)
    expected = reference_frame(df, metrics, ties)
    got = prk.evaluate(df, metrics, ties=ties, per_user=True, users="all")  # type: ignore[call-overload]
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(2))
def test_inline_expressions_match_brute_force(ties: str, seed: int) -> None:
    df = interpolated_frame(200 + seed)
    metrics = _supported(ties)
    expected = reference_frame(df, metrics, ties)
    got = inline_per_user(df, metrics, ties)
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)


@pytest.mark.slow
def test_large_tie_group_expected_values() -> None:
    # A 9-way tie straddling every cutoff and every multiple of R = 5: 9! orderings.
    df = pl.DataFrame(
        {
            "user": [1] * 11,
            "item": list(range(11)),
            "score": [2.0] + [1.0] * 9 + [None],
            "relevance": [0, 1, 0, 2, 0, 0, 1, 0, 0, 3, 1],
        }
    )
    metrics = [
        "relative_precision@2",
        "relative_precision@7",
        "r_precision(mult=0.6)",
        "r_precision(mult=1.4)",
        "set_map",
    ]
    expected = reference_frame(df, metrics, "expected")
    got = prk.evaluate(df, metrics, per_user=True)
    assert_frame_equal(got, expected, abs_tol=1e-12, check_dtypes=False)


# --------------------------------------------------------------------------- pytrec_eval
def canon(metric: str) -> str:
    return prk.parse_metric(metric).name


def _level_key(prefix: str, value: float) -> str:
    return f"{prefix}_{value:.2f}"


PYTREC_PAIRS = (
    [(_level_key("iprec_at_recall", v), f"iprec_at_recall(level={v})") for v in LEVELS]
    + [("11pt_avg", "iprec_11pt")]
    + [(f"relative_P_{k}", f"relative_precision@{k}") for k in (1, 3, 5, 10)]
    + [(_level_key("Rprec_mult", m), f"r_precision(mult={m})") for m in MULTS]
    + [("set_map", "set_map"), ("set_relative_P", "relative_precision")]
    # set_P, set_recall and set_F are the existing metrics without a cutoff.
    + [("set_P", "precision"), ("set_recall", "recall"), ("set_F", "f1")]
)
PYTREC_MEASURES = {
    "iprec_at_recall",
    "11pt_avg",
    "relative_P.1,3,5,10",
    "Rprec_mult",
    "set_map",
    "set_relative_P",
    "set_P",
    "set_recall",
    "set_F",
}
# Levels and multiples off trec_eval's defaults, in a second evaluator.
PYTREC_EXTRA_PAIRS = [
    (_level_key("iprec_at_recall", v), f"iprec_at_recall(level={v})") for v in (0.25, 0.35, 0.65)
] + [(_level_key("Rprec_mult", m), f"r_precision(mult={m})") for m in (0.05, 0.5, 3.0)]
PYTREC_EXTRA_MEASURES = {"iprec_at_recall.0.25,0.35,0.65", "Rprec_mult.0.05,0.5,3"}


def _with_unjudged_and_empty_users(df: pl.DataFrame) -> pl.DataFrame:
    # A user whose relevant items are all unrecommended (its list holds unjudged items).
    extra = pl.DataFrame(
        {
            "user": ["q900"] * 4,
            "item": ["d0001", "d0002", "d0003", "d0004"],
            "score": [1.0, 1.0, None, None],
            "relevance": [None, None, 2, 1],
        },
        schema=df.schema,
    )
    return pl.concat([df, extra])


def _legacy_cut_differs(metric: str, n_rel: int) -> bool:
    """Whether pytrec_eval's older recall cut differs from trec_eval's for this metric.

    pytrec_eval-terrier bundles a trec_eval from before the recall level was rounded with
    lround: it cuts at (long)(level * R + 0.9). trec_eval's own output (out.test.aq, see
    below) shows today's lround, which is what iprec_at_recall and iprec_11pt follow.
    """
    bound = prk.parse_metric(metric)
    if bound.spec.name == "iprec_at_recall":
        levels: tuple[float, ...] = (dict(bound.options)["level"],)
    elif bound.spec.name == "iprec_11pt":
        levels = LEVELS
    else:
        return False
    return any(lround(v * n_rel) != int(v * n_rel + 0.9) for v in levels)


def _legacy_value(metric: str, rows: list[Row]) -> float:
    """iprec_at_recall / iprec_11pt with pytrec_eval's (long)(level * R + 0.9) cut."""
    bound = prk.parse_metric(metric)
    ((ranked, unret),) = orderings(rows, "item_desc")
    rels = [r.rel >= 1 for r in ranked]
    n_rel = sum(r.rel >= 1 for r in ranked + unret)
    levels = LEVELS if bound.spec.name == "iprec_11pt" else (dict(bound.options)["level"],)
    cuts = [int(v * n_rel + 0.9) for v in levels]
    return sum(iprec_ref(rels, n_rel, None, cut) for cut in cuts) / len(cuts)


@pytest.mark.parametrize("ties", [False, True], ids=["no-ties", "ties"])
@pytest.mark.parametrize("seed", range(3))
def test_per_query_agreement_with_pytrec_eval(seed: int, ties: bool) -> None:
    df = _with_unjudged_and_empty_users(trec_like(seed, ties=ties))
    if ties:  # guard: the data really has tied scores
        assert (
            df.drop_nulls("score").select(pl.struct("user", "score").is_duplicated().any()).item()
        )
    users = rows_by_user(df)
    checked = legacy = 0
    for measures, pairs in (
        (PYTREC_MEASURES, PYTREC_PAIRS),
        (PYTREC_EXTRA_MEASURES, PYTREC_EXTRA_PAIRS),
    ):
        trec = run_pytrec(df, measures)
        metrics = ["num_rel", *(m for _, m in pairs)]
        ours = prk.evaluate(df, metrics, ties="item_desc", per_user=True, users="recs")
        for row in ours.iter_rows(named=True):
            per_query = trec.get(row["user"])
            if per_query is None or row["num_rel"] == 0:  # no relevant item: skipped
                continue
            for trec_name, ours_name in pairs:
                expected = per_query[trec_name]
                if _legacy_cut_differs(ours_name, int(row["num_rel"])):
                    # pytrec_eval's value is the same definition at its older cut.
                    legacy_value = _legacy_value(ours_name, users[row["user"]])
                    assert expected == pytest.approx(legacy_value, abs=1e-12)
                    expected = reference(ours_name, users[row["user"]], "item_desc")  # type: ignore[assignment]
                    legacy += 1
                assert row[canon(ours_name)] == pytest.approx(expected, abs=1e-12), (
                    row["user"],
                    trec_name,
                )
                checked += 1
    # Most values are compared directly; the older cut does show up on these queries.
    assert checked - legacy > 20 * (len(PYTREC_PAIRS) + len(PYTREC_EXTRA_PAIRS))
    assert legacy > 0


# --------------------------------------------------------------------------- trec_eval
TREC_TO_OURS: dict[str, str] = {
    **{_level_key("iprec_at_recall", v): f"iprec_at_recall(level={v})" for v in LEVELS},
    "11pt_avg": "iprec_11pt",
    **{f"relative_P_{k}": f"relative_precision@{k}" for k in CUTS},
    **{_level_key("Rprec_mult", m): f"r_precision(mult={m})" for m in MULTS},
    "set_map": "set_map",
    "set_relative_P": "relative_precision",
    # trec_eval's other set measures are existing metrics without a cutoff.
    "set_P": "precision",
    "set_recall": "recall",
    "set_F": "f1",
}


@pytest.fixture(scope="module")
def per_query() -> pl.DataFrame:
    long = prk.join(
        scan_run(DATA / "results.test").select("user", "item", "score"),
        scan_qrels(DATA / "qrels.test"),
    )
    metrics = list(dict.fromkeys(prk.parse_metric(m).name for m in TREC_TO_OURS.values()))
    out = prk.evaluate(long, metrics, ties="item_desc", per_user=True, users="both")
    assert isinstance(out, pl.LazyFrame)
    return out.collect()


def test_per_query_values_match_trec_eval(per_query: pl.DataFrame) -> None:
    expected = trec_output("out.test.aq")
    checked = 0
    for row in per_query.iter_rows(named=True):
        for trec_name, ours in TREC_TO_OURS.items():
            printed = expected.get((trec_name, row["user"]))
            if printed is None:
                continue
            value = row[prk.parse_metric(ours).name]
            assert f"{value:.4f}" == printed, (trec_name, row["user"], value, printed)
            checked += 1
    assert checked == 3 * len(TREC_TO_OURS)  # every measure of the three queries


def test_all_rows_match_trec_eval(per_query: pl.DataFrame) -> None:
    # trec_eval's "all" line: the mean over the queries.
    expected = trec_output("out.test.a")
    checked = 0
    for trec_name, ours in TREC_TO_OURS.items():
        printed = expected.get((trec_name, "all"))
        if printed is None:
            continue
        value = cast("float", per_query[prk.parse_metric(ours).name].mean())
        assert f"{value:.4f}" == printed, (trec_name, value, printed)
        checked += 1
    assert checked == len(TREC_TO_OURS)


def test_set_measures_are_existing_metrics_without_a_cutoff(per_query: pl.DataFrame) -> None:
    # set_P = precision, set_recall = recall, set_F (beta = 1) = f1, set_relative_P =
    # relative_precision, each over the whole list: equal to trec_eval's printed values.
    expected = trec_output("out.test.aq")
    for trec_name in ("set_P", "set_recall", "set_F", "set_relative_P"):
        for user, value in per_query.select("user", TREC_TO_OURS[trec_name]).iter_rows():
            assert f"{value:.4f}" == expected[(trec_name, user)], (trec_name, user)


def test_reference_lround_is_c_lround() -> None:
    # The reference's rounding: exact halves away from zero, and no double rounding.
    assert [lround(x) for x in (0.5, 1.5, 2.5, 0.49999999999999994, 2.4999999999999996)] == [
        1,
        2,
        3,
        0,
        2,
    ]

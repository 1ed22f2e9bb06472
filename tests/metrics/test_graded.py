"""err: expected reciprocal rank (Chapelle et al., 2009), declared once in graded.py.

Hand-computed values with the arithmetic written out, the tie policies on one tied
group, the default grade scale, and a cross-check against gdeval (the TREC Web track's
script, through ir_measures) on random runs with ties.
"""

from __future__ import annotations

import random
import shutil

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.metrics.registry import get_spec

# Grades 3, 0, 2, 1 ranked in that order, on a 0..3 scale:
# R = (2**g - 1) / 2**3 = 7/8, 0, 3/8, 1/8.
LIST = pl.DataFrame(
    {
        "user": [1] * 4,
        "item": list("ABCD"),
        "score": [4.0, 3.0, 2.0, 1.0],
        "relevance": [3, 0, 2, 1],
    }
)
FULL = (
    7 / 8
    + 1 / 2 * 0 * (1 / 8)
    + 1 / 3 * 3 / 8 * (1 / 8) * 1
    + 1 / 4 * 1 / 8 * (1 / 8) * 1 * (5 / 8)
)


def test_hand_computed() -> None:
    assert pytest.approx(0.89306640625, abs=1e-15) == FULL
    assert LIST.select(prk.err(max_grade=3)).item() == pytest.approx(FULL, abs=1e-15)
    # @2: only the first two ranks: 7/8 + 1/2 * 0.
    assert LIST.select(prk.err(2, max_grade=3)).item() == 7 / 8
    # @3: 7/8 + 0 + 1/3 * 3/8 * 1/8.
    at3 = 7 / 8 + 1 / 3 * 3 / 8 * 1 / 8
    assert LIST.select(prk.err(3, max_grade=3)).item() == pytest.approx(at3, abs=1e-15)
    # max_grade=4 (gdeval's scale): R = 7/16, 0, 3/16, 1/16.
    at4 = 7 / 16 + 1 / 3 * 3 / 16 * (9 / 16) + 1 / 4 * 1 / 16 * (9 / 16) * (13 / 16)
    assert LIST.select(prk.err(max_grade=4)).item() == pytest.approx(at4, abs=1e-15)


def test_evaluate_takes_the_scale_from_the_whole_input() -> None:
    # User 2's grades reach 4, so the scale of both users is 0..4 by default.
    other = pl.DataFrame(
        {"user": [2, 2], "item": ["A", "B"], "score": [2.0, 1.0], "relevance": [0, 4]}
    )
    df = pl.concat([LIST, other])
    out = prk.evaluate(df, ["err", "err(max_grade=3)"], ties="item_desc", per_user=True)
    at4 = 7 / 16 + 1 / 3 * 3 / 16 * (9 / 16) + 1 / 4 * 1 / 16 * (9 / 16) * (13 / 16)
    assert out["err"].to_list() == pytest.approx([at4, 1 / 2 * 15 / 16], abs=1e-15)
    # With max_grade=3 user 2's grade 4 is clipped to 3: R = 7/8 at rank 2.
    assert out["err(max_grade=3)"].to_list() == pytest.approx([FULL, 1 / 2 * 7 / 8], abs=1e-15)
    assert get_spec("err").needs == ("rating_range",)  # derived from the kernel


def test_unrecommended_and_unjudged_rows() -> None:
    # A relevant item that was not recommended adds nothing; an unjudged one is grade 0.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1],
            "item": ["A", "B", "C"],
            "score": [2.0, 1.0, None],
            "relevance": [None, 1, 1],
        }
    )
    # R = 0 (unjudged), 1/2 (grade 1 of 1): 0 + 1/2 * 1/2 * (1 - 0).
    assert df.select(prk.err(max_grade=1)).item() == 1 / 2 * 1 / 2
    nothing = df.with_columns(relevance=pl.lit(0))
    assert nothing.select(prk.err(max_grade=1)).item() == 0.0  # defined: 0, never null


# Three items tied at one score: A grade 2, B grade 0, C grade 1, scale 0..2:
# R_A = 3/4, R_B = 0, R_C = 1/4.
TIED = pl.DataFrame(
    {"user": [1] * 3, "item": ["A", "B", "C"], "score": [1.0] * 3, "relevance": [2, 0, 1]}
)


@pytest.mark.parametrize(
    ("ties", "expected"),
    [
        ("item_desc", 1 / 4 + 1 / 2 * 0 + 1 / 3 * 3 / 4 * (3 / 4) * 1),  # C, B, A
        ("item_asc", 3 / 4 + 1 / 2 * 0 + 1 / 3 * 1 / 4 * (1 / 4) * 1),  # A, B, C
        ("optimistic", 3 / 4 + 1 / 2 * 1 / 4 * (1 / 4) + 0),  # A, C, B
        ("pessimistic", 0 + 1 / 2 * 1 / 4 * 1 + 1 / 3 * 3 / 4 * (3 / 4)),  # B, C, A
    ],
)
def test_tie_policies(ties: str, expected: float) -> None:
    got = TIED.select(prk.err(max_grade=2, ties=ties)).item()  # type: ignore[arg-type]
    assert got == pytest.approx(expected, abs=1e-15)
    shuffled = TIED.sample(fraction=1.0, shuffle=True, seed=3)
    assert prk.evaluate(shuffled, ["err"], ties=ties)["err"].item() == pytest.approx(expected)  # type: ignore[arg-type]


def test_expected_ties_are_refused_in_one_place() -> None:
    match = r"metric 'err' does not support ties='expected'; supported: item_desc, item_asc"
    with pytest.raises(ValueError, match=match):
        prk.evaluate(TIED, ["err"])
    with pytest.raises(ValueError, match=match):
        prk.err(max_grade=2, ties="expected")


def test_largest_cutoff_is_past_the_list() -> None:
    out = prk.evaluate(LIST, ["err@4294967296", "err@50"], ties="item_desc")
    assert out["err@4294967296"].item() == out["err@50"].item() == pytest.approx(FULL)


def test_options() -> None:
    assert prk.parse_metric("err(max_grade=4.0)@10").name == "err(max_grade=4)@10"
    with pytest.raises(ValueError, match=r"parameter 'max_grade' of metric 'err' must be > 0"):
        prk.parse_metric("err(max_grade=0)")
    with pytest.raises(TypeError, match="required keyword-only argument: 'max_grade'"):
        prk.err(10)  # type: ignore[call-arg]


def _random_run(seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = []
    for query in range(1, 31):
        docs = rng.sample(range(60), rng.randint(1, 25))
        for doc in docs:
            grade = rng.choice([None, 0, 0, 1, 2, 3, 4])
            score = float(rng.randint(0, 6))  # many ties
            rows.append((query, f"d{doc:03d}", score, grade))
        rows.append((query, "d999", None, rng.randint(1, 4)))  # relevant, not retrieved
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
@pytest.mark.parametrize("cutoff", [1, 5, 20])
def test_matches_gdeval(cutoff: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    df = _random_run(cutoff)
    judged = df.filter(pl.col("relevance").is_not_null())
    qrels = [
        ir_measures.Qrel(str(u), d, int(r))
        for u, d, r in judged.select("user", "item", "relevance").rows()
    ]
    run = [
        ir_measures.ScoredDoc(str(u), d, s)
        for u, d, s in df.filter(pl.col("score").is_not_null())
        .select("user", "item", "score")
        .rows()
    ]
    measure = ir_measures.ERR @ cutoff
    theirs = {m.query_id: m.value for m in ir_measures.gdeval.iter_calc([measure], qrels, run)}
    # gdeval scores queries with a positive grade only; its scale is 0..4, its ties
    # are broken by document id descending (item_desc).
    ours = prk.evaluate(
        df, [f"err(max_grade=4)@{cutoff}"], ties="item_desc", per_user=True, users="all"
    )
    got = dict(zip(ours["user"].cast(pl.String), ours[f"err(max_grade=4)@{cutoff}"], strict=True))
    assert theirs, "gdeval scored no query"
    for query, value in theirs.items():
        assert got[query] == pytest.approx(value, abs=6e-6), query  # gdeval prints %.5f

"""Ids order by their text whatever their dtype: String, Categorical and Enum alike.

An Enum sorts by its category list in Polars; a tie broken by item id (``item_desc``,
``item_asc``, and the item rule after the relevance keys of ``optimistic`` /
``pessimistic``) must not depend on that list, nor on whether a join kept the Enum.

Tests the private units Features and plan.head on purpose (both sort by item id).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.cli.app import main
from polars_rankeval.metrics.features import Features
from polars_rankeval.plan.head_request import MARKER

# Three items tied at one score, "b" relevant. By text: a < b < c.
ENUM = pl.Enum(["c", "a", "b"])  # category order disagrees with the text order
DTYPES = [pl.String, pl.Categorical, ENUM]


def tied(dtype: Any) -> pl.DataFrame:
    return pl.DataFrame(
        {"user": [1, 1, 1], "item": ["a", "b", "c"], "score": [1.0] * 3, "relevance": [0, 1, 0]}
    ).with_columns(pl.col("item").cast(dtype))


# "b" is second by text either way: item_desc c, b, a; item_asc a, b, c.
EXPECTED = {"item_desc": 1 / 2, "item_asc": 1 / 2}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("ties", sorted(EXPECTED))
def test_tie_break_by_item_text_on_every_path(dtype: Any, ties: str) -> None:
    df = tied(dtype)
    general = prk.evaluate(df, ["mrr", "rbp"], ties=ties)  # no cutoff: the general path
    head = prk.evaluate(df, ["mrr@3"], ties=ties)  # the sorted-head path
    assert MARKER in prk.evaluate(df.lazy(), ["mrr@3"], ties=ties, engine="memory").explain()
    assert general["mrr"].item() == pytest.approx(EXPECTED[ties])
    assert head["mrr@3"].item() == pytest.approx(EXPECTED[ties])
    expr = df.group_by("user").agg(prk.mrr(ties=ties)).item(0, 1)  # the metric functions
    assert expr == pytest.approx(EXPECTED[ties])


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "optimistic", "pessimistic"])
def test_positions_follow_the_text_for_every_policy(ties: str) -> None:
    # Four items tied at one score, two relevance levels (the item rule of optimistic /
    # pessimistic orders items of equal relevance): the positions the String ids get.
    base = pl.DataFrame(
        {
            "user": [1] * 4,
            "item": ["b", "d", "a", "c"],
            "score": [1.0] * 4,
            "relevance": [1, 0, 1, 0],
        }
    )
    f = Features(prk.Columns(), ties, None)  # type: ignore[arg-type]

    def positions(df: pl.DataFrame) -> list[int]:
        return df.group_by("user").agg(f.o).item(0, 1).to_list()

    want = positions(base)
    by_text = {"item_desc": [3, 1, 4, 2], "item_asc": [2, 4, 1, 3]}
    if ties in by_text:
        assert want == by_text[ties]
    for dtype in (pl.Categorical, pl.Enum(["d", "c", "b", "a"])):
        assert positions(base.with_columns(pl.col("item").cast(dtype))) == want


@pytest.mark.parametrize("ties", sorted(EXPECTED))
def test_joined_truth_dtype_does_not_change_the_number(ties: str) -> None:
    recs = tied(ENUM).drop("relevance")
    for truth_dtype in DTYPES:
        truth = pl.DataFrame({"user": [1], "item": ["b"], "relevance": [1]}).with_columns(
            pl.col("item").cast(truth_dtype)
        )
        joined = prk.join(recs, truth, score="score")
        assert prk.evaluate(joined, ["mrr"], ties=ties)["mrr"].item() == pytest.approx(
            EXPECTED[ties]
        )


def _as(df: pl.DataFrame, dtype: Any, *columns: str) -> pl.DataFrame:
    return df.with_columns(pl.col(c).cast(dtype) for c in columns)


def _ids() -> tuple[pl.DataFrame, Any]:
    """Two users, ten items tied in pairs and triples, graded; an Enum in reverse text order."""
    items = [f"i{n}" for n in range(10)]
    df = pl.DataFrame(
        {
            "user": [1] * 10 + [2] * 10,
            "item": items * 2,
            "score": [3.0, 3.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.5, 0.5, 0.0] * 2,
            "relevance": [1, 0, 2, 0, 1, 0, 2, 1, 0, 0, 0, 1, 0, 2, 0, 1, 0, 0, 2, 1],
        }
    )
    return df, pl.Enum(items[::-1])


@pytest.mark.parametrize("ties", ["item_desc", "item_asc"])
def test_metrics_reading_item_order_beyond_positions(ties: str) -> None:
    # intersection and rbo break the reference ranking's ties by item id; alpha_ndcg's
    # greedy ideal picks the larger id among equal gains.
    df, enum = _ids()
    recs = df.drop("relevance")
    qrels = df.filter(pl.col("relevance") > 0).with_columns(subtopic=pl.col("relevance") % 2)
    names = ["intersection@3", "rbo@4"]
    want = prk.evaluate(df, names, ties=ties, per_user=True)
    got = prk.evaluate(_as(df, enum, "item"), names, ties=ties, per_user=True)
    assert got.drop("item", strict=False).equals(want)
    for dtype in (pl.String, enum):
        div = prk.join(_as(recs, dtype, "item"), _as(qrels, dtype, "item"), subtopic="subtopic")
        got = prk.evaluate(div, ["alpha_ndcg@5"], ties=ties)
        if dtype == pl.String:
            want = got
        assert_frame_equal(got, want)


def test_alpha_ndcg_greedy_ideal_takes_the_larger_id_by_text() -> None:
    # a={s1,s2}, b={s2,s3}, c={s3,s4}: all gain 2 at the first step, and the pick
    # matters (after "b", "a" and "c" each add 1 + (1 - alpha); after "c", "a" adds 2).
    # The larger id by text is "c"; the Enum puts "b" last.
    recs = pl.DataFrame({"user": [1] * 3, "item": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame(
        {
            "user": [1] * 6,
            "item": ["a", "a", "b", "b", "c", "c"],
            "subtopic": ["s1", "s2", "s2", "s3", "s3", "s4"],
            "relevance": [1] * 6,
        }
    )
    values = []
    for dtype in (pl.String, pl.Categorical, pl.Enum(["a", "c", "b"])):
        div = prk.join(_as(recs, dtype, "item"), _as(qrels, dtype, "item"), subtopic="subtopic")
        values.append(prk.evaluate(div, ["alpha_ndcg@3"], ties="item_desc").item(0, 0))
    # run a, b, c: 2, 1 + 1/2, 1 + 1/2 (alpha = 1/2); ideal c, a, b: 2, 2, 2 * 1/2
    run = 2 + 1.5 / math.log2(3) + 1.5 / 2
    ideal = 2 + 2 / math.log2(3) + 1 / 2
    assert values == pytest.approx([run / ideal] * 3)


@pytest.mark.parametrize("ties", ["item_desc", "item_asc"])
def test_rank_similarity_and_sampled_correction(ties: str) -> None:
    df, enum = _ids()
    other = df.with_columns(score=pl.col("relevance").cast(pl.Float64))
    want = prk.rank_similarity(df, other, ["rbo@5"], ties=ties, per_user=True)  # type: ignore[arg-type]
    got = prk.rank_similarity(
        _as(df, enum, "item"),
        _as(other, enum, "item"),
        ["rbo@5"],
        ties=ties,  # type: ignore[arg-type]
        per_user=True,
    )
    assert_frame_equal(got, want)
    # One positive per user (the join path) and two (the window path).
    for grade in (2, 1):
        one = df.with_columns(relevance=(pl.col("relevance") == grade).cast(pl.Int64))
        options: dict[str, Any] = {"n_items": 100, "ties": ties, "score": "score"}
        want = prk.evaluate_sampled(one, ["recall@3"], **options)
        got = prk.evaluate_sampled(_as(one, enum, "item"), ["recall@3"], **options)
        assert_frame_equal(got, want)


def test_sampled_negatives_do_not_depend_on_the_enum_order() -> None:
    df, enum = _ids()
    truth = df.filter(pl.col("relevance") > 0).select("user", "item", "relevance")
    catalog = pl.DataFrame({"item": [f"i{n}" for n in range(10)]})
    want = prk.sample_negatives(truth, n_negatives=3, catalog=catalog, seed=7)
    got = prk.sample_negatives(
        _as(truth, enum, "item"), n_negatives=3, catalog=_as(catalog, enum, "item"), seed=7
    )
    assert got.with_columns(pl.col("item").cast(pl.String)).equals(want)


def test_cli_gives_one_number_from_parquet_enum_and_csv(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recs = tied(ENUM).drop("relevance")
    truth = pl.DataFrame({"user": [1], "item": ["b"], "relevance": [1]})
    recs.write_parquet(tmp_path / "recs.parquet")  # the Enum survives Parquet
    truth.with_columns(pl.col("item").cast(ENUM)).write_parquet(tmp_path / "truth.parquet")
    recs.write_csv(tmp_path / "recs.csv")
    truth.write_csv(tmp_path / "truth.csv")
    assert pl.read_parquet(tmp_path / "recs.parquet").schema["item"] == ENUM
    values = []
    for ext in ("parquet", "csv"):
        files = ["--recs", str(tmp_path / f"recs.{ext}"), "--truth", str(tmp_path / f"truth.{ext}")]
        assert main([*files, "-m", "mrr", "--ties", "item_desc", "--format", "csv"]) == 0
        out = capsys.readouterr().out
        values.append(float(out.splitlines()[1].split(",")[0]))
    assert values == [1 / 2, 1 / 2]

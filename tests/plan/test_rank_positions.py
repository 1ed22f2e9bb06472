"""``rank_positions="absolute"``: ranks with gaps are positions (RecTools).

The reference: an absolute rank list equals a relative one where every gap is filled
with a non-relevant judged item (a phantom row). For the metrics whose value does not
depend on how many non-relevant items were recommended (precision@k over k, recall,
map, mrr, ndcg, dcg, hit_rate, ...) the two evaluations must agree exactly; the RecTools
test vectors are in ``tests/conventions/test_conventions.py::test_rectools_absolute_ranks``.

Tests the private unit polars_rankeval.plan.positions on purpose (its ABSOLUTE_METRICS).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.metrics.registry import get_spec
from polars_rankeval.plan.positions import absolute_metrics

PADDING_INVARIANT = [
    "precision@1",
    "precision@3",
    "precision@10",
    "recall@3",
    "recall@10",
    "f1@5",
    "hit_rate@2",
    "mrr",
    "mrr@3",
    "map",
    "map@3",
    "map(denominator=k)@4",
    "map(denominator=min_k_relevant)@4",
    "map(denominator=hits)@4",
    "ndcg",
    "ndcg@3",
    "ndcg(idcg=k)@3",
    "ndcg(gain=exp,idcg=all)@5",
    "dcg@4",
    "ndcg(discount=log_clipped)@6",
    "r_precision",
    "relative_precision@3",
    "num_rel_ret@4",
    "num_rel",
]


def gapped(seed: int, n_users: int = 30) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Random users with distinct ranks in 1..15 (gaps), graded relevance with ties in
    value, some relevant items never recommended; and the same data with every gap
    below a user's largest rank filled by a non-relevant phantom item."""
    rng = np.random.default_rng(seed)
    rows, padded = [], []
    for user in range(n_users):
        n_rec = int(rng.integers(0, 7))
        ranks = sorted(rng.choice(np.arange(1, 16), size=n_rec, replace=False).tolist())
        for item, rank in enumerate(ranks):
            rel = float(rng.choice([0, 0, 1, 2]))
            rows.append((user, item, rank, rel))
            padded.append((user, item, rank, rel))
        for item in range(100, 100 + int(rng.integers(0, 3))):  # relevant, not recommended
            rows.append((user, item, None, 1.0))
            padded.append((user, item, None, 1.0))
        taken = set(ranks)
        for rank in range(1, max(ranks, default=0)):
            if rank not in taken:
                padded.append((user, 1000 + rank, rank, 0.0))
    schema = {"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64, "relevance": pl.Float64}
    return (
        pl.DataFrame(rows, schema=schema, orient="row"),
        pl.DataFrame(padded, schema=schema, orient="row"),
    )


@pytest.mark.parametrize("ties", ["expected", "item_desc", "pessimistic"])
@pytest.mark.parametrize("seed", [0, 1])
def test_absolute_equals_gaps_filled_with_non_relevant_items(ties: str, seed: int) -> None:
    data, padded = gapped(seed)
    kw = {"rank": "rank", "ties": ties, "per_user": True, "users": "all", "empty": "zero"}
    got = prk.evaluate(data, PADDING_INVARIANT, rank_positions="absolute", **kw).sort("user")
    want = prk.evaluate(padded, PADDING_INVARIANT, **kw).sort("user")
    for name in PADDING_INVARIANT:
        assert got[name].to_list() == pytest.approx(want[name].to_list(), abs=1e-12), name
    # Bucket by bucket (out of core): the same values.
    buckets = prk.evaluate(
        data, PADDING_INVARIANT, rank_positions="absolute", engine=prk.Buckets(n_buckets=3), **kw
    ).sort("user")
    assert_frame_equal(buckets, got, check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    # Relative positions (the default) differ as soon as a gap is closed.
    relative = prk.evaluate(data, "map@3", **kw).sort("user")
    assert relative["map@3"].to_list() != pytest.approx(want["map@3"].to_list())


def test_hand_computed_and_list_size() -> None:
    # One user: items at ranks 2 (relevant), 5 (not), 9 (relevant); 3 relevant in all.
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 1],
            "item": [1, 2, 3, 4],
            "rank": [2, 5, 9, None],
            "relevance": [1, 0, 1, 1],
        }
    )
    metrics = [
        "mrr@1",  # rank 2 is outside the top 1: 0
        "mrr@3",  # 1/2
        "precision@3",  # 1 hit / 3
        "precision(denominator=retrieved)@3",  # 1 hit / 1 item ranked within 3
        "precision(denominator=retrieved)@10",  # 2 hits / 3 items
        "map@10",  # (1/2 + 2/9) / 3
        "ndcg@3",  # (1/log2 3) / (1 + 1/log2 3 + 1/2)
        "num_ret@3",  # 1 item ranked within 3
        "num_ret@10",  # 3
        "hit_rate@1",  # 0
    ]
    got = prk.evaluate(df, metrics, rank="rank", rank_positions="absolute").row(0)
    idcg3 = 1 + 1 / math.log2(3) + 1 / 2
    want = [0, 1 / 2, 1 / 3, 1, 2 / 3, (1 / 2 + 2 / 9) / 3, (1 / math.log2(3)) / idcg3, 1, 3, 0]
    assert list(got[: len(want)]) == pytest.approx(want)
    # Classification over a catalog of 20 items at k=3: tp 1, list 1 (one item ranked
    # within 3), fn 2, tn 20 - 1 - 3 + 1 = 17: accuracy (1 + 17) / 20; with
    # denominator=k the list is 3: fp 2, tn 15 -> (1 + 15) / 20 (RecTools).
    got = prk.evaluate(
        df,
        ["accuracy@3", "accuracy(denominator=k)@3"],
        rank="rank",
        rank_positions="absolute",
        n_items=20,
    ).row(0)
    assert got[:2] == pytest.approx((18 / 20, 16 / 20))
    # A list of cutoffs is computed cutoff by cutoff (no curve kernel): same values.
    many = prk.evaluate(df, "ndcg@[1,3,9]", rank="rank", rank_positions="absolute")
    one = prk.evaluate(df, ["ndcg@1", "ndcg@3", "ndcg@9"], rank="rank", rank_positions="absolute")
    assert many.row(0) == pytest.approx(one.row(0))


def test_float_ranks_with_integer_values_and_lazy_input() -> None:
    df = pl.DataFrame(
        {"user": [1, 1], "item": [1, 2], "rank": [4.0, 7.0], "relevance": [1, 1]}
    ).lazy()
    out = prk.evaluate(df, "mrr@5", rank="rank", rank_positions="absolute")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()["mrr@5"].item() == 1 / 4


@pytest.mark.parametrize(
    ("ranks", "message"),
    [
        ([1, 0], "rank column 'rank' has 1 value\\(s\\) below 1 \\(e.g. 0\\)"),
        ([1.0, 2.5], "rank column 'rank' has 1 non-integer value\\(s\\) \\(e.g. 2.5\\)"),
        ([1.0, float("nan")], "non-integer value"),
        ([3, 3], "repeats a rank within a user 1 time\\(s\\) \\(e.g. user=1, rank=3\\)"),
    ],
)
def test_bad_ranks_are_refused(ranks: list[float], message: str) -> None:
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": ranks, "relevance": [1, 0]})
    for validate in (True, False):
        with pytest.raises(ValueError, match=message):
            prk.evaluate(df, "mrr@3", rank="rank", rank_positions="absolute", validate=validate)
    # The same rank for two users, or in two by groups, is fine.
    ok = pl.DataFrame({"user": [1, 2], "item": [1, 1], "rank": [3, 3], "relevance": [1, 0]})
    assert prk.evaluate(ok, "mrr@3", rank="rank", rank_positions="absolute").row(0)[0] == 1 / 3
    systems = pl.concat([ok.with_columns(system=pl.lit(s)) for s in ("a", "b")])
    out = prk.evaluate(systems, "mrr@3", rank="rank", rank_positions="absolute", by="system")
    assert out["mrr@3"].to_list() == [1 / 3, 1 / 3]


def test_refused_options() -> None:
    df = pl.DataFrame({"user": [1], "item": [1], "rank": [2], "relevance": [1]})
    with pytest.raises(ValueError, match="does not support metric\\(s\\) err@3"):
        prk.evaluate(df, ["mrr@3", "err@3"], rank="rank", rank_positions="absolute")
    with pytest.raises(ValueError, match="reads positions from a rank column"):
        prk.evaluate(df.rename({"rank": "score"}), "mrr", rank_positions="absolute")
    with pytest.raises(ValueError, match="argument 'rank_positions' of evaluate must be one of"):
        prk.evaluate(df, "mrr", rank="rank", rank_positions="gaps")  # type: ignore[arg-type]
    text = df.with_columns(pl.col("rank").cast(pl.Decimal(10, 2)))
    with pytest.raises(TypeError, match="must hold integer ranks"):
        prk.evaluate(text, "mrr", rank="rank", rank_positions="absolute")


def test_every_supported_metric_is_registered() -> None:
    for name in absolute_metrics():
        assert get_spec(name).name == name


def test_cli_rank_positions(tmp_path: object) -> None:
    from pathlib import Path

    from polars_rankeval.cli.app import main

    path = Path(str(tmp_path)) / "data.csv"
    pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [9, 3], "relevance": [1, 0]}).write_csv(
        path
    )
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                "evaluate",
                "--data",
                str(path),
                "--rank",
                "rank",
                "--rank-positions",
                "absolute",
                "-m",
                "mrr@10",
                "-m",
                "mrr@5",
                "--format",
                "csv",
            ]
        )
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("mrr@10,mrr@5")
    assert [float(v) for v in lines[1].split(",")[:2]] == pytest.approx([1 / 9, 0.0])

"""Wins, ties and losses per pair and metric in compare's result and report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli.app import main

WTL = ["wins", "ties", "losses"]


def frame(metric: str, a: list[float | None], b: list[float | None]) -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame(
        {"system": ["a"] * n + ["b"] * n, "user": list(range(n)) * 2, metric: a + b}
    )


def counts(out: pl.DataFrame) -> tuple[int, int, int]:
    return tuple(out.select(WTL).row(0))  # type: ignore[return-value]


def test_hand_computed_counts() -> None:
    # b - a per user: +0.3, 0, -0.1, +0.2, undefined (user 4 is dropped, not counted)
    per_user = frame("ndcg@10", [0.2, 0.5, 0.4, 0.1, 0.3], [0.5, 0.5, 0.3, 0.3, None])
    out = prk.compare_per_user(per_user, baseline="a", test="t")
    assert counts(out) == (2, 1, 1)
    assert out["n_users"][0] == 2 + 1 + 1
    assert out["tie_tolerance"][0] == 1e-9


def test_ties_within_the_tolerance() -> None:
    # differences 1e-12 (float noise), 0.05, -0.05, 0.5
    a = [0.1, 0.2, 0.3, 0.0]
    b = [0.1 + 1e-12, 0.25, 0.25, 0.5]
    per_user = frame("m", a, b)
    assert counts(prk.compare_per_user(per_user, baseline="a", test="t")) == (2, 1, 1)
    exact = prk.compare_per_user(per_user, baseline="a", test="t", tie_tolerance=0)
    assert counts(exact) == (3, 0, 1)
    wide = prk.compare_per_user(per_user, baseline="a", test="t", tie_tolerance=0.1)
    assert counts(wide) == (1, 3, 0)


def test_lower_is_better_flips_wins_and_losses() -> None:
    # fallout: lower is better; b is lower for users 0 and 1, higher for user 2
    per_user = frame("fallout@3", [0.5, 0.5, 0.0], [0.25, 0.0, 0.5])
    out = prk.compare_per_user(per_user, baseline="a", test="t")
    assert out["higher_is_better"][0] is False
    assert counts(out) == (2, 0, 1)
    # a column without a direction: higher wins
    plain = frame("latency", [0.5, 0.5, 0.0], [0.25, 0.0, 0.5])
    assert counts(prk.compare_per_user(plain, baseline="a", test="t")) == (1, 0, 2)


def test_every_pair_counts_from_the_system_side() -> None:
    per_user = pl.concat(
        [
            frame("m", [0.0, 1.0], [1.0, 1.0]),
            pl.DataFrame({"system": ["c", "c"], "user": [0, 1], "m": [0.5, 0.0]}),
        ]
    )
    out = prk.compare_per_user(per_user, test="t").sort("system", "baseline")
    rows = {
        (r["system"], r["baseline"]): (r["wins"], r["ties"], r["losses"]) for r in out.to_dicts()
    }
    assert rows == {("b", "a"): (1, 1, 0), ("c", "a"): (1, 0, 1), ("c", "b"): (0, 0, 2)}


def test_numpy_count_cross_check() -> None:
    per_user = prk.evaluate(load_systems(), ["ndcg@10", "fallout@10"], by="system", per_user=True)
    out = prk.compare_per_user(per_user, baseline="bm25", test="t")
    for row in out.iter_rows(named=True):
        paired = (
            per_user.filter(pl.col("system") == row["system"])
            .join(per_user.filter(pl.col("system") == "bm25"), on="user", suffix="_base")
            .drop_nulls([row["metric"], row["metric"] + "_base"])
        )
        d = (paired[row["metric"]] - paired[row["metric"] + "_base"]).to_numpy()
        if row["metric"].startswith("fallout"):
            d = -d
        expected = (
            int(np.sum(d > 1e-9)),
            int(np.sum(np.abs(d) <= 1e-9)),
            int(np.sum(d < -1e-9)),
        )
        assert (row["wins"], row["ties"], row["losses"]) == expected
        assert sum(expected) == row["n_users"]


def test_row_order_and_lazy_do_not_matter() -> None:
    per_user = prk.evaluate(load_systems(), ["ndcg@10"], by="system", per_user=True)
    base = prk.compare_per_user(per_user, baseline="bm25", test="t").select("system", *WTL)
    shuffled = prk.compare_per_user(
        per_user.sample(fraction=1.0, shuffle=True, seed=3), baseline="bm25", test="t"
    ).select("system", *WTL)
    lazy = prk.compare_per_user(per_user.lazy(), baseline="bm25", test="t").select("system", *WTL)
    # the systems come in the order they first appear; the counts do not depend on it
    assert_frame_equal(base.sort("system"), shuffled.sort("system"))
    assert_frame_equal(base, lazy)


def test_compare_forwards_the_tolerance() -> None:
    out = prk.compare(load_systems(), ["hit_rate@1"], baseline="bm25", test="t", tie_tolerance=0.0)
    assert (out["wins"] + out["ties"] + out["losses"] == out["n_users"]).all()
    assert (out["tie_tolerance"] == 0.0).all()


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (-0.1, ValueError, "'tie_tolerance' of compare_per_user must be a number >= 0, got -0.1"),
        (float("nan"), ValueError, "'tie_tolerance' of compare_per_user must be a .*, got nan"),
        ("0", TypeError, "'tie_tolerance' of compare_per_user must be a .*, got str '0'"),
        (True, TypeError, "'tie_tolerance' of compare_per_user must be a .*, got bool True"),
    ],
)
def test_bad_tolerance(value: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.compare_per_user(frame("m", [0.1], [0.2]), tie_tolerance=value)  # type: ignore[arg-type]


def test_report_adds_the_pairs_table() -> None:
    per_user = frame("ndcg@10", [0.2, 0.5, 0.4, 0.1], [0.5, 0.5, 0.3, 0.3])
    result = prk.compare_per_user(per_user, baseline="a", test="t")
    text = prk.report(result, digits=2, win_tie_loss=True)
    assert "| Pair | ndcg@10 |\n| :--- | ---: |\n| b vs a | 2 / 1 / 1 |" in text
    assert "within 1e-09 of" in text
    assert "| Pair |" not in prk.report(result, digits=2)
    latex = prk.report(result, "latex", win_tie_loss=True)
    assert "Pair & ndcg@10 \\\\" in latex
    assert "b vs a & 2 / 1 / 1 \\\\" in latex
    html = prk.report(result, "html", win_tie_loss=True)
    assert "Wins / ties / losses" in html
    assert "2 / 1 / 1" in html


def test_report_errors() -> None:
    result = prk.compare_per_user(frame("m", [0.1, 0.2], [0.2, 0.1]), test="t")
    with pytest.raises(ValueError, match="win_tie_loss=True needs the column"):
        prk.report(result.drop("wins"), win_tie_loss=True)
    with pytest.raises(
        TypeError, match="'win_tie_loss' of report must be True or False, got int 1"
    ):
        prk.report(result, win_tie_loss=1)  # type: ignore[arg-type]


def test_cli_tolerance_and_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    load_systems().write_parquet(path)
    argv = ["compare", "--data", str(path), "-m", "hit_rate@1", "--baseline", "bm25", "--test", "t"]
    assert main([*argv, "--format", "csv", "--tie-tolerance", "0.5"]) == 0
    out = pl.read_csv(capsys.readouterr().out.encode())
    expected = prk.compare(
        load_systems(), ["hit_rate@1"], baseline="bm25", test="t", tie_tolerance=0.5
    )
    assert out.select(WTL).rows() == expected.select(WTL).rows()
    assert main([*argv, "--win-tie-loss"]) == 0
    assert "| Pair | hit_rate@1 |" in capsys.readouterr().out

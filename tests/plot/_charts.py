"""The small frames and the rendering check shared by the chart tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl


def long_frame() -> pl.DataFrame:
    """System a, users 1 and 2; user 1 also judged w (never recommended)."""
    return pl.DataFrame(
        {
            "system": ["a"] * 5,
            "user": [1, 1, 1, 2, 2],
            "item": ["x", "y", "w", "x", "z"],
            "score": [2.0, 1.0, None, 2.0, 1.0],
            "relevance": [1, None, 1, 0, None],
        }
    )


def per_user_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b", "b"],
            "user": [1, 2, 3, 1, 2, 3],
            "ndcg@10": [0.5, None, 1.0, 0.25, 0.75, 0.75],
        }
    )


def renders(chart: Any, tmp_path: Path, name: str) -> dict[str, Any]:
    png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
    chart.save(str(png))
    chart.save(str(svg))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()[:500]
    return chart.to_dict()


def compare_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["ndcg@10"],
            "system": ["a"],
            "baseline": ["b"],
            "mean": [0.75],
            "baseline_mean": [0.5],
            "diff": [0.25],
            "ci_low": [0.1],
            "ci_high": [0.4],
            "effect_size": [1.2],
            "p_value": [0.01],
            "p_adjusted": [0.02],
            "significant": [True],
            "n_users": [2],
            "test": ["randomization"],
            "correction": ["holm"],
            "alpha": [0.05],
            "confidence": [0.95],
        }
    )


def all_null() -> pl.DataFrame:
    return per_user_frame().with_columns(pl.lit(None, dtype=pl.Float64).alias("ndcg@10"))


def twins() -> pl.DataFrame:
    """Systems a and b recommend the same lists; c puts z first for user 2 (a: x)."""
    a = long_frame()
    swap = (pl.col("user") == 2) & pl.col("score").is_not_null()
    c = a.with_columns(
        system=pl.lit("c"), score=pl.when(swap).then(3.0 - pl.col("score")).otherwise("score")
    )
    return pl.concat([a, a.with_columns(system=pl.lit("b")), c])

"""polars_rankeval.plot as a whole: errors, empty inputs and limits across the charts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval import plot
from tests.plot._charts import all_null, compare_frame, long_frame, per_user_frame, renders, twins

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: plot.distribution(per_user_frame(), "ndgc@10"),
            r"'ndgc@10'; did you mean 'ndcg@10'",
        ),
        (
            lambda: plot.distribution(per_user_frame(), "gini@10"),
            r"one value per by group, not per",
        ),
        (lambda: plot.distribution(per_user_frame(), "recall@10"), r"column 'recall@10' not found"),
        (
            lambda: plot.distribution(
                per_user_frame().with_columns(n_users=1, n_skipped=0), "ndcg@10"
            ),
            r"pass the per-user frame",
        ),
        (
            lambda: plot.distribution(per_user_frame(), "ndcg@10", kind="violin"),
            r"argument 'kind' of distribution must be one of \['ecdf', 'histogram'\], "
            r"got 'violin'",
        ),
        (
            lambda: plot.distribution(per_user_frame(), "ndcg@10", bins=0),
            r"argument 'bins' of distribution must be an integer >= 1, got 0",
        ),
        (
            lambda: plot.topic_differences(per_user_frame(), "ndcg@10", baseline="zz"),
            r"baseline 'zz' is not a value of column 'system'",
        ),
        (
            lambda: plot.topic_differences(
                per_user_frame(), "ndcg@10", baseline="a", compare=compare_frame()
            ),
            r"compare result has 0 rows for metric 'ndcg@10', system 'b' and baseline 'a'",
        ),
        (lambda: plot.curves(pl.DataFrame({"x": [1]})), r"curves needs the frame of prk.curve"),
        (lambda: plot.pr_curves(pl.DataFrame({"x": [1]})), r"pr_curves needs the frame"),
        (
            lambda: plot.lorenz(long_frame(), k=0),
            r"argument 'k' of lorenz must be an integer >= 1, got 0",
        ),
    ],
)
def test_plot_errors(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_missing_altair_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "altair", None)
    with pytest.raises(ImportError, match=r'pip install "polars-rankeval\[plot\]"'):
        plot.pr_curves(pl.DataFrame({"recall": [0.0], "precision": [1.0]}))


def test_charts_without_a_system_column(tmp_path: Path) -> None:
    df = long_frame().drop("system")
    lorenz = plot.lorenz_data(df, k=2, by=None)
    assert lorenz["exposure_share"].to_list() == [0.0, 0.0, 1 / 4, 2 / 4, 1.0]
    tail = plot.long_tail_data(df, k=1, by=None)
    assert set(tail["series"]) == {"catalog", "recommended"}
    per_user = prk.evaluate(df, ["ndcg@2"], per_user=True)
    dist = plot.distribution_data(per_user, "ndcg@2", by=None)
    assert dist["n_undefined"].to_list() == [1]  # user 2 has no relevant item
    for name, chart in {
        "lorenz": plot.lorenz(df, k=2, by=None),
        "tail": plot.long_tail(df, k=1, by=None),
        "dist": plot.distribution(per_user, "ndcg@2", by=None),
    }.items():
        renders(chart, tmp_path, name)


def test_charts_of_one_user_and_one_system(tmp_path: Path) -> None:
    one = per_user_frame().filter(pl.col("user") == 1)
    for kind in ("histogram", "ecdf"):
        renders(plot.distribution(one, "ndcg@10", kind=kind), tmp_path, kind)  # type: ignore[arg-type]
    renders(plot.topic_differences(one, "ndcg@10", baseline="b"), tmp_path, "one_diff")
    single = plot.distribution(per_user_frame().filter(pl.col("system") == "b"), "ndcg@10")
    renders(single, tmp_path, "single")
    constant = per_user_frame().with_columns(pl.lit(0.5).alias("ndcg@10"))  # low == high
    renders(plot.distribution(constant, "ndcg@10"), tmp_path, "constant")


def _empty_long() -> pl.DataFrame:
    return long_frame().head(0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: plot.distribution(per_user_frame().head(0), "ndcg@10"), r"per_user has no rows"),
        (
            lambda: plot.topic_differences(per_user_frame().head(0), "ndcg@10", baseline="b"),
            r"per_user has no rows",
        ),
        (
            lambda: plot.topic_differences(all_null(), "ndcg@10", baseline="b"),
            r"no user has 'ndcg@10' defined for both a system and the baseline 'b'",
        ),
        (
            lambda: plot.curves(prk.curve(_empty_long(), "ndcg", ks=[1, 2], by="system")),
            r"curves: the frame has no rows",
        ),
        (
            lambda: plot.curves(
                pl.DataFrame(
                    {
                        "metric": ["ndcg", "ndcg", "recall"],
                        "k": [1, 2, 1],
                        "value": [None, None, 1.0],
                    },
                    schema_overrides={"value": pl.Float64},
                )
            ),
            r"curves: metric\(s\) \['ndcg'\] undefined \(null\) at every k",
        ),
        (
            lambda: plot.pr_curves(prk.pr_curve(_empty_long(), by="system")),
            r"pr_curves: the frame has no rows",
        ),
        (lambda: plot.lorenz(_empty_long(), k=2), r"lorenz: no item is in a top-2 list"),
        (lambda: plot.long_tail(_empty_long(), k=2), r"long_tail: no item is in a top-2 list"),
        (
            lambda: plot.lorenz(long_frame().with_columns(score=pl.lit(None, pl.Float64)), k=2),
            r"lorenz: no item is in a top-2 list",
        ),
    ],
)
def test_nothing_to_plot_is_a_clear_error(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_bounded_charts_display_past_altairs_row_limit() -> None:
    # The bundled example's Lorenz chart has 6,305 points (4 systems): to_dict (what a
    # notebook calls to display) raised MaxRowsError past Altair's 5,000 rows. These
    # charts are bounded by MAX_POINTS per series already; here the limit is lowered to 3
    # (the box statistics of 3 systems and the diagonal are tables of at most 3 rows).
    import altair as alt

    df = twins()
    charts = {
        "lorenz": plot.lorenz(df, k=2),
        "lorenz_apart": plot.lorenz(long_frame(), k=2),
        "long_tail": plot.long_tail(df, k=2),
        "ecdf": plot.distribution(per_user_frame(), "ndcg@10", kind="ecdf"),  # 5 points
    }
    with alt.data_transformers.enable("default", max_rows=3):
        for name, chart in charts.items():
            spec = chart.to_dict()
            assert max(len(values) for values in spec["datasets"].values()) > 3, name

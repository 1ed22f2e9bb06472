"""polars_rankeval.plot: the tidy data behind each chart, rendering, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval import plot
from polars_rankeval.plot import differences, metric_curves, per_user
from polars_rankeval.plot._lines import LINE_WIDTH

pytest.importorskip("altair")
pytest.importorskip("vl_convert")


def _long() -> pl.DataFrame:
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


def _per_user() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b", "b"],
            "user": [1, 2, 3, 1, 2, 3],
            "ndcg@10": [0.5, None, 1.0, 0.25, 0.75, 0.75],
        }
    )


def _renders(chart: Any, tmp_path: Path, name: str) -> dict[str, Any]:
    png, svg = tmp_path / f"{name}.png", tmp_path / f"{name}.svg"
    chart.save(str(png))
    chart.save(str(svg))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()[:500]
    return chart.to_dict()


# --------------------------------------------------------------------------- curves
def test_curves_data_and_render(tmp_path: Path) -> None:
    df = prk.load_systems().filter(pl.col("user") <= 40)
    long = prk.curve(df, ["ndcg", "recall"], ks=range(1, 6), by="system")
    wide = prk.evaluate(df, ["ndcg@1..5", "recall@1..5"], by="system")
    tidy, by = metric_curves._tidy_curves(wide)
    assert by == ["system"]
    assert_frame_equal(
        tidy.sort("system", "metric", "k"),
        long.drop("n_users").sort("system", "metric", "k"),
    )
    chart = plot.curves(long)
    spec = _renders(chart, tmp_path, "curves")
    assert spec["title"] == "ndcg, recall at k = 1..5 per system"
    assert spec["spec"]["encoding"]["x"]["title"] == "k (cutoff)"
    assert spec["facet"]["field"] == "metric"
    single = df.filter(pl.col("system") == "bm25").drop("system")
    one = plot.curves(prk.curve(single, "ndcg", ks=[1, 3]))  # no system column, one panel
    assert _renders(one, tmp_path, "one")["encoding"]["y"]["title"] == "ndcg"


def test_pr_curves_data_and_render(tmp_path: Path) -> None:
    df = prk.load_systems().filter(pl.col("user") <= 40)
    frame = prk.pr_curve(df, by="system")
    chart = plot.pr_curves(frame)
    assert_frame_equal(chart.data.drop("system"), frame.drop("system"))  # type: ignore[union-attr]
    spec = _renders(chart, tmp_path, "pr")
    assert spec["encoding"]["color"]["field"] == "system"
    assert spec["encoding"]["y"]["title"] == "interpolated precision"


# --------------------------------------------------------------------------- per user
def test_distribution_data_hand_computed() -> None:
    out = plot.distribution_data(_per_user(), "ndcg@10")
    expected = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b", "b"],
            "value": [0.5, 1.0, 0.25, 0.75, 0.75],
            "ecdf": [1 / 2, 2 / 2, 1 / 3, 3 / 3, 3 / 3],
            "n_users": [3, 3, 3, 3, 3],
            "n_undefined": [1, 1, 0, 0, 0],
        }
    )
    assert_frame_equal(out, expected)
    hist = per_user.histogram_data(out, "system", bins=2, low=0.0, high=1.0)
    assert hist["count"].to_list() == [0, 2, 1, 2]  # a: 0.5 and 1.0 in [0.5, 1]
    assert hist["share"].to_list() == [0 / 2, 2 / 2, 1 / 3, 2 / 3]
    assert hist["bin_start"].to_list() == [0.0, 0.5, 0.0, 0.5]
    box = per_user.box_data(out, "system")  # linear quantiles: q at position q * (n - 1)
    assert box.row(0) == ("a", 2, 0.5, 0.5 + 0.25 * 0.5, 0.75, 0.5 + 0.75 * 0.5, 1.0)
    assert box.row(1) == ("b", 3, 0.25, 0.25 + 0.5 * 0.5, 0.75, 0.75, 0.75)


@pytest.mark.parametrize("kind", ["histogram", "ecdf"])
def test_distribution_states_the_users_left_out(kind: str, tmp_path: Path) -> None:
    chart = plot.distribution(_per_user(), "ndcg@10", kind=kind)  # type: ignore[arg-type]
    spec = _renders(chart, tmp_path, f"dist_{kind}")
    assert spec["title"]["subtitle"] == [
        "1 of 6 user rows left out: ndcg@10 undefined (empty='skip')"
    ]


def test_topic_differences_data_hand_computed() -> None:
    out = plot.topic_differences_data(_per_user(), "ndcg@10", baseline="b")
    expected = pl.DataFrame(
        {
            "system": ["a", "a"],
            "user": [1, 3],
            "value": [0.5, 1.0],
            "baseline_value": [0.25, 0.75],
            "diff": [0.5 - 0.25, 1.0 - 0.75],
            "position": [1, 2],
            "n_left_out": [1, 1],  # user 2 is undefined for a
        }
    )
    assert_frame_equal(out, expected)


def _compare_frame() -> pl.DataFrame:
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


def test_topic_differences_carry_the_compare_result(tmp_path: Path) -> None:
    chart = plot.topic_differences(_per_user(), "ndcg@10", baseline="b", compare=_compare_frame())
    spec = _renders(chart, tmp_path, "topic")
    subtitle = spec["vconcat"][0]["title"]["subtitle"]
    assert subtitle == [
        "2 users better, 0 worse, 0 equal; 1 left out (undefined)",
        "mean difference +0.2500 (95% CI +0.1000 .. +0.4000); randomization test p = 0.01, "
        "holm-adjusted p = 0.02: significant at alpha 0.05",
    ]
    assert spec["vconcat"][0]["encoding"]["y"]["title"] == "ndcg@10 − b"


def test_topic_differences_with_the_real_compare() -> None:
    df = prk.load_systems().filter(pl.col("user") <= 30, pl.col("system").is_in(["bm25", "dense"]))
    per_user = prk.evaluate(df, ["ndcg@10"], by="system", per_user=True)
    result = prk.compare(df, ["ndcg@10"], baseline="bm25", n_resamples=200)
    data = plot.topic_differences_data(per_user, "ndcg@10", baseline="bm25")
    row = result.row(0, named=True)
    assert data["diff"].mean() == pytest.approx(row["diff"], abs=1e-12)
    plot.topic_differences(per_user, "ndcg@10", baseline="bm25", compare=result).to_dict()


# --------------------------------------------------------------------------- items
def _trapezoid_gini(points: pl.DataFrame) -> float:
    x, y = points["item_share"].to_list(), points["exposure_share"].to_list()
    area = sum((x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2 for i in range(1, len(x)))
    return 1 - 2 * area


def test_lorenz_data_hand_computed(tmp_path: Path) -> None:
    # Catalog x, y, z, w (N = 4). Top 1: x twice. Top 2: x 2, y 1, z 1, w 0.
    one = plot.lorenz_data(_long(), k=1)
    assert one["item_share"].to_list() == [0.0, 3 / 4, 1.0]
    assert one["exposure_share"].to_list() == [0.0, 0.0, 1.0]
    assert one["gini"].to_list() == pytest.approx([(2 * 4 - 4 - 1) * 2 / (4 * 2)] * 3)
    two = plot.lorenz_data(_long(), k=2)
    assert two["item_share"].to_list() == [0.0, 1 / 4, 2 / 4, 3 / 4, 1.0]
    assert two["exposure_share"].to_list() == [0.0, 0.0, 1 / 4, 2 / 4, 1.0]
    gini = ((2 - 5) * 0 + (4 - 5) * 1 + (6 - 5) * 1 + (8 - 5) * 2) / (4 * 4)
    assert two["gini"][0] == pytest.approx(gini)
    assert _trapezoid_gini(two) == pytest.approx(gini, abs=1e-12)
    spec = _renders(plot.lorenz(_long(), k=2), tmp_path, "lorenz")
    assert "a (Gini 0.375)" in json.dumps(spec)


def test_lorenz_gini_matches_evaluate_on_the_example() -> None:
    df = prk.load_systems().filter(pl.col("user") <= 50)
    data = plot.lorenz_data(df, k=5, max_points=None)
    gini = prk.evaluate(df, ["gini@5"], by="system")
    for system, points in data.group_by("system"):
        want = gini.filter(pl.col("system") == system[0])["gini@5"].item()
        assert points["gini"][0] == want
        assert _trapezoid_gini(points.sort("item_share", "exposure_share")) == pytest.approx(
            want, abs=1e-12
        )


def test_long_tail_data_hand_computed(tmp_path: Path) -> None:
    # Popularity (users with relevance >= 1): w 1, x 1, y 0, z 0 -> order w, x, y, z.
    out = plot.long_tail_data(_long(), k=1)
    catalog = out.filter(pl.col("series") == "catalog")
    assert catalog["item_share"].to_list() == [0.0, 1 / 4, 2 / 4, 3 / 4, 1.0]
    assert catalog["share"].to_list() == [0.0, 1 / 2, 2 / 2, 2 / 2, 2 / 2]
    system = out.filter(pl.col("series") == "a")  # top 1: x for both users
    assert system["share"].to_list() == [0.0, 0 / 2, 2 / 2, 2 / 2, 2 / 2]
    popularity = pl.DataFrame({"item": ["z", "y"], "popularity": [3.0, 1.0]})
    given = plot.long_tail_data(_long(), k=1, popularity=popularity)
    catalog = given.filter(pl.col("series") == "catalog")  # z, y, then w, x at 0
    assert catalog["share"].to_list() == [0.0, 3 / 4, 4 / 4, 4 / 4, 4 / 4]
    _renders(plot.long_tail(_long(), k=1), tmp_path, "tail")


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: plot.distribution(_per_user(), "ndgc@10"), r"'ndgc@10'; did you mean 'ndcg@10'"),
        (lambda: plot.distribution(_per_user(), "gini@10"), r"one value per by group, not per"),
        (lambda: plot.distribution(_per_user(), "recall@10"), r"column 'recall@10' not found"),
        (
            lambda: plot.distribution(_per_user().with_columns(n_users=1, n_skipped=0), "ndcg@10"),
            r"pass the per-user frame",
        ),
        (lambda: plot.distribution(_per_user(), "ndcg@10", kind="violin"), r"kind must be one"),
        (lambda: plot.distribution(_per_user(), "ndcg@10", bins=0), r"bins must be a positive"),
        (
            lambda: plot.topic_differences(_per_user(), "ndcg@10", baseline="zz"),
            r"baseline 'zz' is not a value of column 'system'",
        ),
        (
            lambda: plot.topic_differences(
                _per_user(), "ndcg@10", baseline="a", compare=_compare_frame()
            ),
            r"compare result has 0 rows for metric 'ndcg@10', system 'b' and baseline 'a'",
        ),
        (lambda: plot.curves(pl.DataFrame({"x": [1]})), r"curves needs the frame of prk.curve"),
        (lambda: plot.pr_curves(pl.DataFrame({"x": [1]})), r"pr_curves needs the frame"),
        (lambda: plot.lorenz(_long(), k=0), r"must be a positive integer, got 0"),
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
    df = _long().drop("system")
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
        _renders(chart, tmp_path, name)


def test_topic_differences_of_many_users_is_an_area(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(differences, "MAX_POINTS", 4)
    n = 9
    per_user = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "user": list(range(n)) * 2,
            "ndcg@10": [i / 10 for i in range(n)] + [0.4] * n,
        }
    )
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b")
    spec = _renders(chart, tmp_path, "many")
    assert spec["vconcat"][0]["mark"]["type"] == "area"
    rows = chart.data  # one panel: Altair lifts its data to the top
    # Positions 1, 4, 7 (every third of 9) and the last, 9; differences sorted descending.
    assert rows["position"].to_list() == [1, 4, 7, 9]
    assert rows["diff"].to_list() == pytest.approx([0.8 - 0.4, 0.5 - 0.4, 0.2 - 0.4, 0.0 - 0.4])


def test_topic_differences_color_by_the_metric_direction() -> None:
    # fallout: lower is better, so a's lower values are gains over b.
    per_user = _per_user().rename({"ndcg@10": "fallout@3"})
    chart = plot.topic_differences(per_user, "fallout@3", baseline="b").to_dict()
    panel = chart["vconcat"][0]
    subtitle = panel["title"]["subtitle"][0]
    assert subtitle == "0 users better, 2 worse, 0 equal; 1 left out (undefined)"
    # With a compare result, its direction is the one read (here told: lower is better).
    per_user = _per_user()
    result = prk.compare_per_user(
        per_user, baseline="b", test="wilcoxon", higher_is_better={"ndcg@10": False}
    )
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b", compare=result).to_dict()
    assert chart["vconcat"][0]["title"]["subtitle"][0].startswith("0 users better, 2 worse")
    # No direction (a count): higher and lower.
    per_user = _per_user().rename({"ndcg@10": "num_ret@10"})
    chart = plot.topic_differences(per_user, "num_ret@10", baseline="b").to_dict()
    assert chart["vconcat"][0]["title"]["subtitle"][0].startswith("2 users higher, 0 lower")
# --------------------------------------------------------------------------- nothing to plot
def _all_null() -> pl.DataFrame:
    return _per_user().with_columns(pl.lit(None, dtype=pl.Float64).alias("ndcg@10"))


@pytest.mark.parametrize("kind", ["histogram", "ecdf"])
def test_distribution_of_a_metric_undefined_for_every_user(kind: str) -> None:
    # Was a ZeroDivisionError (histogram) or an empty chart (ecdf).
    with pytest.raises(ValueError, match=r"'ndcg@10' is undefined \(null\) for every user") as e:
        plot.distribution(_all_null(), "ndcg@10", kind=kind)  # type: ignore[arg-type]
    assert "(6 rows)" in str(e.value)
    assert "without a relevant item" in str(e.value)
    no_system = _all_null().filter(pl.col("system") == "a").drop("system")
    with pytest.raises(ValueError, match=r"undefined \(null\) for every user"):
        plot.distribution(no_system, "ndcg@10", by=None)


def test_charts_of_one_user_and_one_system(tmp_path: Path) -> None:
    one = _per_user().filter(pl.col("user") == 1)
    for kind in ("histogram", "ecdf"):
        _renders(plot.distribution(one, "ndcg@10", kind=kind), tmp_path, kind)  # type: ignore[arg-type]
    _renders(plot.topic_differences(one, "ndcg@10", baseline="b"), tmp_path, "one_diff")
    single = plot.distribution(_per_user().filter(pl.col("system") == "b"), "ndcg@10")
    _renders(single, tmp_path, "single")
    constant = _per_user().with_columns(pl.lit(0.5).alias("ndcg@10"))  # low == high
    _renders(plot.distribution(constant, "ndcg@10"), tmp_path, "constant")


def _empty_long() -> pl.DataFrame:
    return _long().head(0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: plot.distribution(_per_user().head(0), "ndcg@10"), r"per_user has no rows"),
        (
            lambda: plot.topic_differences(_per_user().head(0), "ndcg@10", baseline="b"),
            r"per_user has no rows",
        ),
        (
            lambda: plot.topic_differences(_all_null(), "ndcg@10", baseline="b"),
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
            lambda: plot.lorenz(_long().with_columns(score=pl.lit(None, pl.Float64)), k=2),
            r"lorenz: no item is in a top-2 list",
        ),
    ],
)
def test_nothing_to_plot_is_a_clear_error(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_distribution_names_a_system_without_a_defined_value(tmp_path: Path) -> None:
    per_user = _per_user().with_columns(
        pl.when(pl.col("system") == "a").then(None).otherwise(pl.col("ndcg@10")).alias("ndcg@10")
    )
    spec = _renders(plot.distribution(per_user, "ndcg@10"), tmp_path, "absent")
    assert spec["title"]["subtitle"] == [
        "3 of 6 user rows left out: ndcg@10 undefined (empty='skip'); no defined value for system a"
    ]


def test_topic_differences_write_an_underflowed_p_value_as_a_bound(tmp_path: Path) -> None:
    # A t test this clear underflows to p = 0.0; the subtitle says p < 1e-300, not p = 0.
    n = 400
    per_user = pl.DataFrame(
        {
            "system": ["a"] * n + ["b"] * n,
            "user": list(range(n)) * 2,
            "ndcg@10": [0.9 + (i % 7) / 100 for i in range(n)]
            + [0.1 + (i % 5) / 100 for i in range(n)],
        }
    )
    result = prk.compare_per_user(per_user, baseline="b", test="t")
    assert result["p_value"].to_list() == [0.0]
    chart = plot.topic_differences(per_user, "ndcg@10", baseline="b", compare=result)
    line = _renders(chart, tmp_path, "p0")["vconcat"][0]["title"]["subtitle"][1]
    assert "t test p < 1e-300, holm-adjusted p < 1e-300: significant" in line


# --------------------------------------------------------------------------- coinciding curves
def test_curve_gaps_hand_computed() -> None:
    frame = pl.DataFrame(
        {
            "s": ["a", "a", "a", "b", "b", "c", "c"],
            "x": [0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 1.0],
            "y": [0.0, 0.1, 1.0, 0.0, 1.0, 0.0, 0.9],
        }
    )
    gaps = plot.curve_gaps(frame, "s", "x", "y")
    # At x = 0.5: a 0.1, b 0.5, c 0.45; at x = 1: a 1, b 1, c 0.9.
    assert gaps.rows() == [
        ("a", "b", pytest.approx(0.5 - 0.1)),
        ("a", "c", pytest.approx(0.45 - 0.1)),
        ("b", "c", pytest.approx(1.0 - 0.9)),
    ]


def _twins() -> pl.DataFrame:
    """Systems a and b recommend the same lists; c puts z first for user 2 (a: x)."""
    a = _long()
    swap = (pl.col("user") == 2) & pl.col("score").is_not_null()
    c = a.with_columns(
        system=pl.lit("c"), score=pl.when(swap).then(3.0 - pl.col("score")).otherwise("score")
    )
    return pl.concat([a, a.with_columns(system=pl.lit("b")), c])


def test_coinciding_curves_are_named_and_drawn_so_each_shows(tmp_path: Path) -> None:
    spec = _renders(plot.lorenz(_twins(), k=1), tmp_path, "twins")
    assert spec["title"]["subtitle"][0] == "coinciding curves (closer than 0.02 everywhere): a = b"
    lines = spec["layer"][1:]  # after the diagonal: one layer per system, in legend order
    widths = [layer["mark"]["strokeWidth"] for layer in lines]
    assert widths == [1.5 + 2.0, 1.5, LINE_WIDTH]  # a under b, c as usual
    dashes = lines[0]["encoding"]["strokeDash"]["scale"]["range"]
    assert len({tuple(d) for d in dashes}) == 3  # each system its own pattern
    assert spec["datasets"]  # every layer's data is in the spec
    assert "a (Gini 0.750)" in json.dumps(spec)  # (2 * 4 - 4 - 1) * 2 / (4 * 2), 3 decimals
    tail = _renders(plot.long_tail(_twins(), k=1), tmp_path, "twins_tail")
    assert tail["title"]["subtitle"][0] == "coinciding curves (closer than 0.02 everywhere): a = b"
    apart = _renders(plot.lorenz(_long(), k=2), tmp_path, "apart")
    assert apart["title"] == "Lorenz curve of item exposure in the top 2"  # one curve: no note
    assert apart["layer"][1]["mark"]["type"] == "line"


def test_bounded_charts_display_past_altairs_row_limit() -> None:
    # The bundled example's Lorenz chart has 6,305 points (4 systems): to_dict (what a
    # notebook calls to display) raised MaxRowsError past Altair's 5,000 rows. These
    # charts are bounded by MAX_POINTS per series already; here the limit is lowered to 3
    # (the box statistics of 3 systems and the diagonal are tables of at most 3 rows).
    import altair as alt

    df = _twins()
    charts = {
        "lorenz": plot.lorenz(df, k=2),
        "lorenz_apart": plot.lorenz(_long(), k=2),
        "long_tail": plot.long_tail(df, k=2),
        "ecdf": plot.distribution(_per_user(), "ndcg@10", kind="ecdf"),  # 5 points
    }
    with alt.data_transformers.enable("default", max_rows=3):
        for name, chart in charts.items():
            spec = chart.to_dict()
            assert max(len(values) for values in spec["datasets"].values()) > 3, name

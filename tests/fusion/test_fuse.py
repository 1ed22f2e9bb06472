"""fuse: hand-computed values, ties, properties over every declared method, errors."""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.fusion.registry import fusion_methods

A = pl.DataFrame({"user": ["q"] * 2, "item": ["x", "y"], "score": [3.0, 1.0]})
B = pl.DataFrame({"user": ["q"] * 3, "item": ["x", "y", "z"], "score": [2.0, 4.0, 0.0]})
KEY = ["user", "item"]


def scores(frame: pl.DataFrame | pl.LazyFrame) -> dict[str, float]:
    frame = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return dict(frame.sort("item").select("item", "score").iter_rows())


def test_comb_mnz_after_min_max() -> None:
    # min-max: A x=1, y=0; B x=(2-0)/4, y=1, z=0.
    out = scores(prk.fuse({"a": A, "b": B}, method="comb_mnz"))
    assert out == pytest.approx({"x": (1 + 0.5) * 2, "y": (0 + 1) * 2, "z": 0 * 1})


def test_wsum_weights_and_missing_default() -> None:
    out = scores(prk.fuse({"a": A, "b": B}, method="wsum", weights=[2.0, 1.0]))
    assert out == pytest.approx({"x": 2 * 1 + 0.5, "y": 2 * 0 + 1, "z": 0.0})
    # a default score for an item a list lacks: z gets 0.25 from A
    filled = scores(prk.fuse({"a": A, "b": B}, method="wsum", weights=[2.0, 1.0], missing=0.25))
    assert filled["z"] == pytest.approx(2 * 0.25 + 0)


@pytest.mark.parametrize(
    ("method", "params", "want"),
    [
        # norm=None. a: x 1.0, y 0.5; b: x 1.0 (b lacks y: -0.25 with missing=-0.25).
        # Only a retrieves y, so the count of runs retrieving it stays 1.
        ("comb_mnz", {}, {"x": (1 + 1) * 2, "y": (0.5 - 0.25) * 1}),
        ("comb_anz", {}, {"x": (1 + 1) / 2, "y": (0.5 - 0.25) / 1}),
        ("comb_gmnz", {"gamma": 0.5}, {"x": (1 + 1) * 2**0.5, "y": (0.5 - 0.25) * 1**0.5}),
        # weights a 2, b 1: wmnz times the weights of the runs retrieving the item
        ("wmnz", {}, {"x": (1 + 1) * (2 + 1), "y": (0.5 - 0.25) * 2}),
        ("mixed", {}, {"x": (2 * 1 + 1 * 1) * 2**0.5, "y": (2 * 0.5 + 1 * -0.25) * 1**0.5}),
    ],
)
def test_missing_scores_are_not_retrievals(
    method: str, params: dict[str, float], want: dict[str, float]
) -> None:
    """A score given by ``missing=`` adds to the sums but is not a run retrieving the item."""
    a = pl.DataFrame({"user": ["q", "q"], "item": ["x", "y"], "score": [1.0, 0.5]})
    b = pl.DataFrame({"user": ["q"], "item": ["x"], "score": [1.0]})
    weights = [2.0, 1.0] if method in ("wmnz", "mixed") else None
    options: dict[str, Any] = {"method": method, "norm": None, "params": params}
    if weights is not None:
        options["weights"] = weights
    out = scores(prk.fuse({"a": a, "b": b}, missing=-0.25, **options))
    assert out == pytest.approx(want, abs=1e-15)
    # missing=0.0 adds nothing: the same fused scores as without it
    zero = prk.fuse({"a": a, "b": b}, missing=0.0, **options)
    plain = prk.fuse({"a": a, "b": b}, **options)
    assert_frame_equal(zero.sort(KEY), plain.sort(KEY))


BAD_RUNS = [  # (the run b's change, the message's start)
    ({"user": ["q", None]}, "run 'b': user column 'user' has 1 null value(s)"),
    ({"item": ["x", None]}, "run 'b': item column 'item' has 1 null value(s)"),
    ({"score": [1.0, float("nan")]}, "run 'b': score column 'score' has 1 NaN or infinite"),
    ({"score": [float("-inf"), 1.0]}, "run 'b': score column 'score' has 1 NaN or infinite"),
    (
        {"item": ["x", "x"]},
        "run 'b': 1 rows share a (user, item) key with another row, e.g. ('q', 'x')",
    ),
]


@pytest.mark.parametrize(("change", "match"), BAD_RUNS)
@pytest.mark.parametrize("lazy", [False, True])
def test_bad_rows_are_refused(change: dict[str, list[Any]], match: str, lazy: bool) -> None:
    """Null ids, NaN or infinite scores and a repeated item in a list raise, naming the run.

    A LazyFrame is not read at the call: the checks run, and raise, at ``collect``.
    """
    b = pl.DataFrame({"user": ["q", "q"], "item": ["x", "y"], "score": [2.0, 1.0]})
    b = b.with_columns(
        **{name: pl.Series(name, v, dtype=b[name].dtype) for name, v in change.items()}
    )
    runs = {"a": A.lazy(), "b": b.lazy()} if lazy else {"a": A, "b": b}
    for method in ("wsum", "rrf"):
        if lazy:
            out = prk.fuse(runs, method=method)  # no error before collect
            with pytest.raises(ValueError, match=re.escape(match)):
                out.collect()  # type: ignore[union-attr]
        else:
            with pytest.raises(ValueError, match=re.escape(match)):
                prk.fuse(runs, method=method)
    # validate=False: no check (the caller vouches for the rows)
    out = prk.fuse(runs, method="rrf", validate=False)
    assert isinstance(out.lazy().collect(), pl.DataFrame)


def test_rrf_and_weighted_rrf() -> None:
    out = scores(prk.fuse({"a": A, "b": B}, method="rrf", params={"k": 1}))
    assert out == pytest.approx({"x": 1 / 2 + 1 / 3, "y": 1 / 3 + 1 / 2, "z": 1 / 4})
    weighted = scores(
        prk.fuse({"a": A, "b": B}, method="w_rrf", weights={"a": 3, "b": 1}, params={"k": 1})
    )
    assert weighted == pytest.approx({"x": 3 / 2 + 1 / 3, "y": 3 / 3 + 1 / 2, "z": 1 / 4})


def test_bordafuse() -> None:
    # 3 candidates; A: x 3 points, y 2, z (3 - 2 + 1) / 2 = 1; B: y 3, x 2, z 1.
    out = scores(prk.fuse({"a": A, "b": B}, method="bordafuse"))
    assert out == pytest.approx({"x": 3 + 2, "y": 2 + 3, "z": 1 + 1})


def test_condorcet_copeland() -> None:
    c = pl.DataFrame({"user": ["q"] * 3, "item": ["x", "y", "z"], "score": [3.0, 2.0, 1.0]})
    # x beats y (A, C against B) and z (all); y beats z (B, C; A lacks z and y > z there).
    out = scores(prk.fuse({"a": A, "b": B, "c": c}, method="condorcet"))
    assert out == {"x": 1 + 2, "y": 1 + 1, "z": 1 + 0}


def test_dbsf_three_sigma() -> None:
    run = pl.DataFrame({"user": ["q"] * 3, "item": ["x", "y", "z"], "score": [1.0, 2.0, 3.0]})
    one = pl.DataFrame({"user": ["q"], "item": ["x"], "score": [7.0]})
    # mean 2, sample sd 1: (s - (2 - 3)) / 6; a list of one scores 0.5 (Qdrant).
    out = scores(prk.fuse({"a": run, "b": one}, method="dbsf"))
    assert out == pytest.approx({"x": 2 / 6 + 0.5, "y": 3 / 6, "z": 4 / 6})


def test_ties_follow_trec_eval_order() -> None:
    # x and y tie in A: item descending puts y first (trec_eval's order).
    tied = A.with_columns(score=pl.lit(1.0))
    out = scores(prk.fuse({"a": tied, "b": B.head(0)}, method="rrf", params={"k": 1}))
    assert out == pytest.approx({"x": 1 / 3, "y": 1 / 2})


def test_posfuse_learns_per_position() -> None:
    qrels = pl.DataFrame({"user": ["q"], "item": ["y"], "relevance": [1]})
    # training list of A: x, y -> P(rel | pos 1) = 0, P(rel | pos 2) = 1;
    # of B: y, x, z -> 1, 0, 0.
    out = scores(prk.fuse({"a": A, "b": B}, method="posfuse", qrels=qrels))
    assert out == pytest.approx({"x": 0 + 0, "y": 1 + 1, "z": 0.0})


def test_one_frame_with_a_system_column_equals_a_mapping() -> None:
    stacked = pl.concat([A.with_columns(system=pl.lit("a")), B.with_columns(system=pl.lit("b"))])
    one = prk.fuse(stacked, method="wmnz", weights={"a": 0.3, "b": 0.7})
    many = prk.fuse({"a": A, "b": B}, method="wmnz", weights=[0.3, 0.7])
    assert isinstance(one, pl.DataFrame)
    assert isinstance(many, pl.DataFrame)
    assert_frame_equal(one.sort(KEY), many.sort(KEY))


def test_trec_runs_by_path(tmp_path: Any) -> None:
    paths = []
    for name, frame in (("a.run", A), ("b.run", B)):
        path = tmp_path / name
        prk.trec.write_run(frame, path)
        paths.append(path)
    out = prk.fuse(paths, method="comb_sum")
    assert isinstance(out, pl.LazyFrame)
    assert scores(out) == pytest.approx(scores(prk.fuse({"a": A, "b": B}, method="comb_sum")))


# ------------------------------------------------------------------ properties
RUNS = {
    "a": pl.DataFrame(
        {
            "user": ["q1", "q1", "q1", "q2", "q2"],
            "item": ["x", "y", "z", "x", "w"],
            "score": [0.5, 0.5, 0.1, 2.0, 1.0],
        }
    ),
    "b": pl.DataFrame(
        {"user": ["q1", "q1", "q3"], "item": ["z", "v", "x"], "score": [3.0, 1.0, 1.0]}
    ),
    "c": pl.DataFrame(
        {"user": ["q1", "q2", "q2"], "item": ["y", "w", "u"], "score": [1.0, 0.2, 0.2]}
    ),
}
QRELS = pl.DataFrame({"user": ["q1", "q1", "q2"], "item": ["z", "v", "w"], "relevance": [1, 2, 0]})


def _call(name: str, runs: Any) -> pl.DataFrame:
    spec = fusion_methods()[name]
    out = prk.fuse(
        runs,
        method=name,
        weights=[0.2, 0.5, 0.3] if spec.weighted else None,
        qrels=QRELS if spec.trained else None,
    )
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("name", sorted(fusion_methods()))
def test_row_order_does_not_matter_and_eager_equals_lazy(name: str) -> None:
    eager = _call(name, RUNS)
    shuffled = {k: f.sample(fraction=1.0, shuffle=True, seed=7) for k, f in RUNS.items()}
    lazy = _call(name, {k: f.lazy() for k, f in shuffled.items()})
    assert_frame_equal(eager.sort(KEY), lazy.sort(KEY))
    # one row per (user, item) any run retrieved, a finite score each
    union = pl.concat(RUNS.values()).select(KEY).unique()
    assert_frame_equal(eager.select(KEY).sort(KEY), union.sort(KEY))
    assert all(math.isfinite(s) for s in eager["score"])


def test_every_method_is_declared_with_a_reference_and_a_grid_for_each_parameter() -> None:
    for spec in fusion_methods().values():
        assert spec.reference
        assert spec.summary
        assert set(spec.grid) == set(spec.params), spec.name
        for name, values in spec.grid.items():
            for value in values:
                spec.bind({name: value})  # every grid value is valid


# ------------------------------------------------------------------ errors
ERRORS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"method": "nope"}, ValueError, r"method must be one of \['bayesfuse', .*got 'nope'"),
    ({"norm": "l2"}, ValueError, r"norm must be one of \['borda', .*got 'l2'"),
    ({"norm": ["max"]}, ValueError, r"norm must hold one value per run \(2\), got 1"),
    ({"method": "rrf", "weights": [1, 2]}, ValueError, "weights apply to weighted methods"),
    ({"weights": [1.0]}, ValueError, r"weights must hold one value per run \(2\), got 1"),
    ({"weights": [1.0, float("nan")]}, ValueError, r"'weights' of fuse .*, got an entry nan"),
    (
        {"method": "rrf", "params": {"k": 0}},
        ValueError,
        r"parameter 'k' of method 'rrf' must be >= 1, got 0",
    ),
    ({"method": "rrf", "params": {"k": 1.5}}, TypeError, "parameter 'k' of method 'rrf'"),
    (
        {"method": "rrf", "params": {"kk": 1}},
        ValueError,
        r"params has no parameter 'kk' for method 'rrf'; valid: \['k'\]",
    ),
    ({"method": "posfuse"}, ValueError, "method 'posfuse' learns from training queries"),
    ({"method": "rrf", "missing": 0.0}, ValueError, "missing applies to the score-combining"),
    ({"missing": "0"}, TypeError, "'missing' of fuse must be a number or None, got str '0'"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), ERRORS)
def test_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.fuse({"a": A, "b": B}, **kwargs)


def test_one_run_is_refused() -> None:
    with pytest.raises(ValueError, match="runs must hold at least 2 runs to fuse, got 1"):
        prk.fuse({"a": A})
    with pytest.raises(TypeError, match="runs must be a frame with a system column"):
        prk.fuse(3)  # type: ignore[arg-type]


# ------------------------------------------------------------------ every method by hand
# norm=None. A: x 3, y 1 (positions x, y); B: y 4, x 2, z 0 (positions y, x, z).
# Training judgments: y is relevant (one query): A has it 2nd, B 1st.
R2, L4, MIN = math.sqrt(2), math.log(0.2 / 0.8), math.log(0.001 / 0.999)
BY_HAND: dict[str, tuple[dict[str, Any], dict[str, float]]] = {
    "comb_sum": ({}, {"x": 3 + 2, "y": 1 + 4, "z": 0}),
    "comb_min": ({}, {"x": 2, "y": 1, "z": 0}),
    "comb_max": ({}, {"x": 3, "y": 4, "z": 0}),
    "comb_med": ({}, {"x": (3 + 2) / 2, "y": (1 + 4) / 2, "z": 0}),
    "comb_anz": ({}, {"x": (3 + 2) / 2, "y": (1 + 4) / 2, "z": 0 / 1}),
    "comb_mnz": ({}, {"x": 5 * 2, "y": 5 * 2, "z": 0 * 1}),
    "comb_gmnz": ({"params": {"gamma": 0.5}}, {"x": 5 * R2, "y": 5 * R2, "z": 0}),
    "wsum": ({"weights": [2, 1]}, {"x": 2 * 3 + 2, "y": 2 * 1 + 4, "z": 0}),
    "wmnz": ({"weights": [2, 1]}, {"x": 5 * 3, "y": 5 * 3, "z": 0 * 1}),
    "mixed": ({"weights": [2, 1]}, {"x": (6 + 2) * R2, "y": (2 + 4) * R2, "z": 0}),
    # A: mean 2, sample sd sqrt(2); B: mean 2, sd 2; (s - (mean - 3 sd)) / (6 sd)
    "dbsf": (
        {"norm": "dbsf"},
        {
            "x": (1 + 3 * R2) / (6 * R2) + 6 / 12,
            "y": (-1 + 3 * R2) / (6 * R2) + 8 / 12,
            "z": 4 / 12,
        },
    ),
    "isr": ({}, {"x": (1 + 1 / 4) * 2, "y": (1 / 4 + 1) * 2, "z": 1 / 9 * 1}),
    "log_isr": ({}, {"x": 1.25 * math.log(2), "y": 1.25 * math.log(2), "z": 0.0}),
    "logn_isr": (
        {"params": {"sigma": 0.5}},
        {"x": 1.25 * math.log(2.5), "y": 1.25 * math.log(2.5), "z": 1 / 9 * math.log(1.5)},
    ),
    "rrf": ({"params": {"k": 1}}, {"x": 1 / 2 + 1 / 3, "y": 1 / 3 + 1 / 2, "z": 1 / 4}),
    "w_rrf": (
        {"params": {"k": 1}, "weights": [2, 1]},
        {"x": 2 / 2 + 1 / 3, "y": 2 / 3 + 1 / 2, "z": 1 / 4},
    ),
    "rbc": ({"params": {"phi": 0.5}}, {"x": 0.5 + 0.25, "y": 0.25 + 0.5, "z": 0.5 * 0.25}),
    "bordafuse": ({}, {"x": 3 + 2, "y": 2 + 3, "z": 1 + 1}),
    "w_bordafuse": ({"weights": [2, 1]}, {"x": 2 * 3 + 2, "y": 2 * 2 + 3, "z": 2 * 1 + 1}),
    # x-y: a draw (A for x, B for y); both beat z.
    "condorcet": ({}, {"x": 1 + 1 + 0.5, "y": 1 + 1 + 0.5, "z": 1}),
    "w_condorcet": ({"weights": [2, 1]}, {"x": 1 + 2, "y": 1 + 1, "z": 1}),
    # P(rel | position): A [0, 1], B [1, 0, 0]
    "posfuse": ({}, {"x": 0 + 0, "y": 1 + 1, "z": 0}),
    # 2 segments: A sizes 1 -> [0, 1]; B sizes 2 -> [1/2, 0]; divided by k
    "probfuse": (
        {"params": {"n_segments": 2}},
        {"x": 0 + 0.5 / 1, "y": 1 / 2 + 0.5 / 1, "z": 0 / 2},
    ),
    # first segment (5 positions): 1/5 in both; times score + 1
    "segfuse": ({}, {"x": 0.2 * 4 + 0.2 * 3, "y": 0.2 * 2 + 0.2 * 5, "z": 0.2 * 1}),
    "slidefuse": (
        {"params": {"w": 1}},
        {"x": (0 + 1) / 2 + (1 + 0 + 0) / 3, "y": (0 + 1) / 2 + (1 + 0) / 2, "z": (0 + 0) / 2},
    ),
    # MAP: A 1/2, B 1; divided by the rank
    "mapfuse": ({}, {"x": 0.5 / 1 + 1 / 2, "y": 0.5 / 2 + 1 / 1, "z": 1 / 3}),
    # first bucket: precision 1/5 in both -> log(0.2 / 0.8); z lacks A
    "bayesfuse": ({}, {"x": 2 * L4, "y": 2 * L4, "z": L4 + MIN}),
}


def test_every_method_has_a_hand_computed_case() -> None:
    assert set(BY_HAND) == set(fusion_methods())


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_by_hand(name: str) -> None:
    kwargs, expected = BY_HAND[name]
    kwargs = {"norm": None, **kwargs}
    if fusion_methods()[name].trained:
        kwargs["qrels"] = pl.DataFrame({"user": ["q"], "item": ["y"], "relevance": [1]})
    out = scores(prk.fuse({"a": A, "b": B}, method=name, **kwargs))
    assert out == pytest.approx(expected, rel=1e-12)

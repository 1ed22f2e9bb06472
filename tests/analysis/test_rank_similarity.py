"""RBO (rank_similarity and the registered ``rbo`` metric) and rank_correlation.

RBO is checked by hand, against a brute-force reference that builds the continuations
of the lists (min: the unseen items never match; max: they match as early as they can)
and sums the definition to a depth where p**d vanishes, against the ``rbo`` package
(changyaochen/rbo) when installed, and by its properties. tau_b is checked against
scipy, tau_ap by hand (a swap at the top costs more than one at the bottom).
"""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk

P = 0.9


def _truncated(s: list[object], t: list[object], p: float, depth: int) -> float:
    total, seen_s, seen_t, overlap = 0.0, set(), set(), 0
    for d in range(1, depth + 1):
        a, b = s[d - 1], t[d - 1]
        if a == b:
            overlap += 1
        else:
            overlap += (a in seen_t) + (b in seen_s)
        seen_s.add(a)
        seen_t.add(b)
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


def brute(s: list[str], t: list[str], p: float, estimate: str) -> float:
    depth = int(math.log(1e-17) / math.log(p)) + len(s) + len(t)
    if estimate == "min":
        fresh_s = [("s", i) for i in range(depth)]
        fresh_t = [("t", i) for i in range(depth)]
        return _truncated([*s, *fresh_s], [*t, *fresh_t], p, depth)
    if estimate == "max":
        short, long = (s, t) if len(s) <= len(t) else (t, s)
        a = short + [x for x in long if x not in short]
        b = long + [x for x in short if x not in long]
        same = [("c", i) for i in range(depth)]
        return _truncated([*a, *same], [*b, *same], p, depth)
    # ext (eq. 32), from its definition: the short list's agreement extrapolated.
    short, long = (s, t) if len(s) <= len(t) else (t, s)
    sl, ll = len(short), len(long)
    x = [len(set(short[:d]) & set(long[:d])) for d in range(ll + 1)]
    total = sum(p**d * x[d] / d for d in range(1, ll + 1))
    total += sum(p**d * x[sl] * (d - sl) / (sl * d) for d in range(sl + 1, ll + 1))
    return (1 - p) / p * total + ((x[ll] - x[sl]) / ll + x[sl] / sl) * p**ll


def _run(lists: dict[int, list[str]]) -> pl.DataFrame:
    rows = [
        (u, item, float(len(items) - i))
        for u, items in lists.items()
        for i, item in enumerate(items)
    ]
    return pl.DataFrame(
        rows, schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64}, orient="row"
    )


def _random_lists(seed: int, n: int = 30) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    rng = random.Random(seed)
    a, b = {}, {}
    for u in range(n):
        pool = [f"i{j}" for j in range(25)]
        a[u] = rng.sample(pool, rng.randint(1, 12))
        b[u] = rng.sample(pool, rng.randint(1, 12))
    return a, b


# --------------------------------------------------------------------------- by hand
def test_hand_computed() -> None:
    a = _run({1: list("abcd")})
    b = _run({1: list("bace")})
    # X_d = 0, 2, 3, 3; p = 1/2. ext = (1-p)/p * sum p**d X_d / d + X_4 / 4 * p**4.
    ext = 1.0 * (0.5**2 * 2 / 2 + 0.5**3 * 3 / 3 + 0.5**4 * 3 / 4) + 3 / 4 * 0.5**4
    # min: past depth 4 X_d stays 3: (1-p)/p * (sum_{d<=4} (X_d - 3) p**d / d - 3 ln(1-p)).
    low = 1.0 * ((0 - 3) * 0.5 + (2 - 3) * 0.5**2 / 2 - 3 * math.log(0.5))
    # max: e and d match at depth 5 (f = 4 + 4 - 3 = 5): A_d = 1 from depth 5 on.
    high = 1.0 * (0.5**2 * 2 / 2 + 0.5**3 * 3 / 3 + 0.5**4 * 3 / 4) + 0.5**4
    out = prk.rank_similarity(
        a,
        b,
        [
            "rbo(p=0.5)@4",
            "rbo(p=0.5,estimate=min)",
            "rbo(p=0.5,estimate=max)",
            "rbo(estimate=res,p=0.5)",
        ],
        per_user=True,
    )
    assert out["rbo(p=0.5)@4"].item() == pytest.approx(ext, abs=1e-15)
    assert out["rbo(estimate=min,p=0.5)"].item() == pytest.approx(low, abs=1e-15)
    assert out["rbo(estimate=max,p=0.5)"].item() == pytest.approx(high, abs=1e-15)
    assert out["rbo(estimate=res,p=0.5)"].item() == pytest.approx(high - low, abs=1e-15)


def test_identical_and_disjoint_lists() -> None:
    same = _run({1: list("abc"), 2: list("x")})
    out = prk.rank_similarity(
        same, same, ["rbo", "rbo(estimate=min)", "rbo(estimate=max)"], per_user=True
    )
    assert out["rbo"].to_list() == pytest.approx([1.0, 1.0], abs=1e-15)
    assert out["rbo(estimate=max)"].to_list() == pytest.approx([1.0, 1.0], abs=1e-15)
    # min of a one-item prefix: A_1 = 1, then X_d = 1: (1-p)/p * -ln(1-p).
    assert out["rbo(estimate=min)"][1] == pytest.approx((1 - P) / P * -math.log(1 - P), abs=1e-15)
    other = _run({1: list("def"), 2: list("y")})
    out = prk.rank_similarity(same, other, ["rbo", "rbo(estimate=min)"], per_user=True)
    assert out["rbo"].to_list() == [0.0, 0.0]
    assert out["rbo(estimate=min)"].to_list() == [0.0, 0.0]


@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
@pytest.mark.parametrize("estimate", ["ext", "min", "max"])
def test_matches_brute_force(p: float, estimate: str) -> None:
    lists_a, lists_b = _random_lists(int(p * 100))
    name = prk.parse_metric(f"rbo(p={p},estimate={estimate})").name
    out = prk.rank_similarity(_run(lists_a), _run(lists_b), [name, f"{name}@5"], per_user=True)
    for user, value, at5 in out.rows():
        s, t = lists_a[user], lists_b[user]
        assert value == pytest.approx(brute(s, t, p, estimate), abs=1e-12), user
        assert at5 == pytest.approx(brute(s[:5], t[:5], p, estimate), abs=1e-12), user


def test_matches_the_rbo_package() -> None:
    rbo = pytest.importorskip("rbo")  # not a declared dependency: it pins numpy < 2
    lists_a, lists_b = _random_lists(3)
    out = prk.rank_similarity(_run(lists_a), _run(lists_b), ["rbo(p=0.95)"], per_user=True)
    for user, value in out.rows():
        theirs = rbo.RankingSimilarity(lists_a[user], lists_b[user]).rbo_ext(p=0.95)
        assert value == pytest.approx(theirs, abs=1e-12)


# --------------------------------------------------------------------------- properties
def test_symmetric_bounded_and_row_order() -> None:
    lists_a, lists_b = _random_lists(11, n=40)
    a, b = _run(lists_a), _run(lists_b)
    measures = ["rbo@5", "rbo(estimate=min)", "rbo(estimate=max)", "rbo(estimate=res)", "rbo"]
    ab = prk.rank_similarity(a, b, measures, per_user=True)
    ba = prk.rank_similarity(
        b, a.sample(fraction=1.0, shuffle=True, seed=2), measures, per_user=True
    )
    assert np.allclose(ab.drop("user").to_numpy(), ba.drop("user").to_numpy(), atol=1e-14)
    low, high, ext = ab["rbo(estimate=min)"], ab["rbo(estimate=max)"], ab["rbo"]
    assert (
        (low >= -1e-15) & (low <= ext + 1e-12) & (ext <= high + 1e-12) & (high <= 1 + 1e-12)
    ).all()
    assert np.allclose(ab["rbo(estimate=res)"].to_numpy(), (high - low).to_numpy(), atol=1e-14)


def test_summary_counts_users_of_one_run_and_rank_column() -> None:
    a = _run({1: list("ab"), 2: list("c")})
    b = _run({1: list("ba"), 3: list("c")})
    out = prk.rank_similarity(a, b, ["rbo(p=0.5)"])
    # X_1 = 0, X_2 = 2: ext = (1-p)/p * p**2 * 2/2 + 1 * p**2.
    assert out.row(0, named=True) == {
        "rbo(p=0.5)": pytest.approx(0.25 + 0.25),
        "n_users": 1,
        "n_users(rbo(p=0.5))": 1,
        "n_users_only_a": 1,
        "n_users_only_b": 1,
    }
    ranks = a.with_columns(pos=pl.col("score").rank("ordinal", descending=True).over("user"))
    by_rank = prk.rank_similarity(
        ranks.drop("score"),
        b.with_columns(pos=-pl.col("score"))
        .drop("score")
        .with_columns(pos=pl.col("pos").rank("ordinal").over("user")),
        ["rbo(p=0.5)"],
        score=None,
        rank="pos",
    )
    assert by_rank["rbo(p=0.5)"].item() == pytest.approx(0.5)


def test_ties_break_by_item() -> None:
    a = pl.DataFrame({"user": [1, 1], "item": ["x", "y"], "score": [1.0, 1.0]})
    b = _run({1: ["x", "y"]})
    desc = prk.rank_similarity(a, b, ["rbo(p=0.5,estimate=min)@1"], ties="item_desc")
    asc = prk.rank_similarity(a, b, ["rbo(p=0.5,estimate=min)@1"], ties="item_asc")
    assert desc.item(0, 0) == 0.0  # y first against x
    assert asc.item(0, 0) == pytest.approx(1.0 * -math.log(0.5))  # x against x


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"measures": ["ndcg@10"]},
            ValueError,
            r"rank_similarity measures RBO or the intersection \(e.g. 'rbo@10', "
            r"'intersection@10'\), got 'ndcg@10'",
        ),
        (
            {"measures": ["rbo(p=1)"]},
            ValueError,
            r"parameter 'p' of metric 'rbo' must be in \(0, 1\)",
        ),
        ({"measures": ["rbo(reference=x)"]}, ValueError, "reference= names a column"),
        (
            {"ties": "random"},
            ValueError,
            r"argument 'ties' of rank_similarity must be one of "
            r"\['expected', 'item_asc', 'item_desc'\] or None, got 'random'",
        ),
        (
            {"ties": "expected"},
            ValueError,
            r"measure 'rbo@10': RBO needs one order of each list .* got ties='expected'",
        ),
        ({"score": "points"}, ValueError, r"run_a has no column 'points'"),
        ({"score": None}, ValueError, "pass exactly one of score= and rank="),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], match: str) -> None:
    a = _run({1: list("ab")})
    with pytest.raises(error, match=match):
        prk.rank_similarity(a, a, **kwargs)  # type: ignore[arg-type]


def test_bad_rows_are_errors() -> None:
    a = _run({1: list("ab")})
    dup = pl.concat([a, a.head(1)])
    with pytest.raises(
        ValueError, match=r"run_b has 2 rows whose \(user, item\) appears more than once"
    ):
        prk.rank_similarity(a, dup)
    # A null score: a judged item that was not recommended, not part of the ranking.
    null = a.with_columns(score=pl.when(pl.col("item") == "a").then(None).otherwise("score"))
    out = prk.rank_similarity(null, a, ["rbo(p=0.5)"], per_user=True)
    assert out["rbo(p=0.5)"].item() == pytest.approx(
        brute(["b"], ["a", "b"], 0.5, "ext"), abs=1e-15
    )


# --------------------------------------------------------------------------- the metric
def _long(seed: int) -> tuple[pl.DataFrame, dict[int, list[str]], dict[int, list[str]]]:
    """A long frame: recommendations (by score) and a graded truth (its ranking)."""
    rng = random.Random(seed)
    rows, recs, ideal = [], {}, {}
    for u in range(25):
        pool = [f"i{j:02d}" for j in range(20)]
        recommended = rng.sample(pool, rng.randint(1, 10))
        grades = {
            i: rng.choice([0, 1, 2, 3, 4, 5, 6, 7]) for i in rng.sample(pool, rng.randint(1, 10))
        }
        for item in sorted(set(recommended) | set(grades)):
            score = (
                float(len(recommended) - recommended.index(item)) if item in recommended else None
            )
            rows.append((u, item, score, grades.get(item)))
        recs[u] = recommended
        # The reference: positive grades descending, ties by item id descending.
        ideal[u] = [
            i
            for i, _ in sorted(
                ((i, g) for i, g in grades.items() if g > 0),
                key=lambda x: (x[1], x[0]),
                reverse=True,
            )
        ]
    df = pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )
    return df, recs, ideal


@pytest.mark.parametrize("estimate", ["ext", "min", "res"])
def test_metric_against_the_relevance_ranking(estimate: str) -> None:
    df, recs, ideal = _long(4)
    names = [
        prk.parse_metric(f"rbo(estimate={estimate})").name,
        prk.parse_metric(f"rbo(estimate={estimate})@3").name,
    ]
    out = prk.evaluate(df, names, ties="item_desc", per_user=True, users="all")
    checked = 0
    for user, full, at3 in out.rows():
        s, t = recs[user], ideal[user]
        if not t:
            continue
        if estimate == "res":
            assert full == pytest.approx(brute(s, t, P, "max") - brute(s, t, P, "min"), abs=1e-12)
        else:
            assert full == pytest.approx(brute(s, t, P, estimate), abs=1e-12)
            assert at3 == pytest.approx(brute(s[:3], t[:3], P, estimate), abs=1e-12)
        checked += 1
    assert checked > 15


def test_metric_reference_column_and_ties() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 1],
            "item": ["a", "b", "c"],
            "score": [3.0, 2.0, 1.0],
            "relevance": [1, 1, 0],
            "teacher": [1.0, 3.0, 2.0],
        }
    )
    # Against the teacher's ranking b, c, a: X = 0, 1, 3 -> ext = (1-p)/p sum + 1 * p**3.
    p = 0.5
    ext = 1.0 * (0.5**2 * 1 / 2 + 0.5**3 * 3 / 3) + 1.0 * 0.5**3
    out = prk.evaluate(df, ["rbo(p=0.5,reference=teacher)"], ties="item_asc")
    assert out["rbo(p=0.5,reference=teacher)"].item() == pytest.approx(ext, abs=1e-15)
    # The relevance ranking ties a and b: item_asc gives a, b (against the run's a, b, c:
    # X = 1, 2), item_desc b, a (X = 0, 2).
    asc = prk.evaluate(df, ["rbo(p=0.5)"], ties="item_asc")["rbo(p=0.5)"].item()
    desc = prk.evaluate(df, ["rbo(p=0.5)"], ties="item_desc")["rbo(p=0.5)"].item()
    assert asc == pytest.approx(brute(list("abc"), list("ab"), p, "ext"), abs=1e-15)
    assert desc == pytest.approx(brute(list("abc"), list("ba"), p, "ext"), abs=1e-15)
    with pytest.raises(ValueError, match=r"metric 'rbo' does not support ties='expected'"):
        prk.evaluate(df, ["rbo"])


def test_metric_in_compare() -> None:
    runs = prk.load_systems().filter(pl.col("user") < 50)
    out = prk.compare(runs, ["rbo@10"], baseline="bm25", ties="item_desc", n_resamples=200)
    assert out.height == 3
    assert out["mean"].is_between(0, 1).all()


# --------------------------------------------------------------------------- systems
def test_tau_b_matches_scipy_with_ties() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    a = pl.DataFrame(
        {
            "system": [f"s{i}" for i in range(12)],
            "m1": rng.integers(0, 5, 12).astype(float),
            "m2": rng.random(12),
        }
    )
    b = a.with_columns(
        m1=pl.Series(rng.integers(0, 4, 12).astype(float)), m2=pl.Series(rng.random(12))
    ).sample(fraction=1.0, shuffle=True, seed=1)
    out = prk.rank_correlation(a, b)
    joined = a.join(b, on="system", suffix="_b")
    for metric, value in zip(out["metric_a"], out["value"], strict=True):
        ref = stats.kendalltau(
            joined[metric].to_numpy(), joined[f"{metric}_b"].to_numpy()
        ).statistic
        assert value == pytest.approx(ref, abs=1e-14)
    pairs = prk.rank_correlation(a)
    assert pairs.rows() == [
        (
            "m1",
            "m2",
            "tau_b",
            12,
            pytest.approx(stats.kendalltau(a["m1"], a["m2"]).statistic, abs=1e-14),
        )
    ]


def test_tau_ap_by_hand() -> None:
    ref = pl.DataFrame({"system": ["s1", "s2", "s3", "s4"], "m": [4.0, 3.0, 2.0, 1.0]})
    top = ref.with_columns(m=pl.Series([3.0, 4.0, 2.0, 1.0]))  # s2, s1, s3, s4
    bottom = ref.with_columns(m=pl.Series([4.0, 3.0, 1.0, 2.0]))  # s1, s2, s4, s3
    # Top swap: C = 0, 2, 3 -> 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3.
    assert prk.rank_correlation(ref, top, method="tau_ap")["value"].item() == pytest.approx(1 / 3)
    # Bottom swap: C = 1, 2, 2 -> 2/3 * (1/1 + 2/2 + 2/3) - 1 = 7/9.
    assert prk.rank_correlation(ref, bottom, method="tau_ap")["value"].item() == pytest.approx(
        7 / 9
    )
    # Kendall's tau does not tell them apart: (5 - 1) / 6.
    assert prk.rank_correlation(ref, top)["value"].item() == pytest.approx(2 / 3)
    assert prk.rank_correlation(ref, bottom)["value"].item() == pytest.approx(2 / 3)
    assert prk.rank_correlation(ref, ref, method="tau_ap")["value"].item() == pytest.approx(1.0)


def test_rank_correlation_of_evaluate_outputs() -> None:
    runs = prk.load_systems()
    half = runs.filter(pl.col("user") % 2 == 0)
    other = runs.filter(pl.col("user") % 2 == 1)
    a = prk.evaluate(half, ["ndcg@10", "map@10"], by="system")
    b = prk.evaluate(other, ["ndcg@10", "map@10"], by="system")
    out = prk.rank_correlation(a, b, method="tau_ap")
    assert out["metric_a"].to_list() == ["ndcg@10", "map@10"]
    assert out["n_systems"].to_list() == [4, 4]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"method": "spearman"},
            ValueError,
            r"'method' of rank_correlation must be one of \['tau_ap', 'tau_b'\], got 'spearman'",
        ),
        ({"on": "run"}, ValueError, r"a has no key column 'run' \(on=\)"),
        ({"columns": ["x"]}, ValueError, r"a has no column\(s\) \['x'\]"),
        (
            {"method": "tau_ap"},
            ValueError,
            r"tau_ap needs orderings without ties; 'm' has tied values",
        ),
    ],
)
def test_rank_correlation_errors(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    a = pl.DataFrame({"system": ["s1", "s2", "s3"], "m": [1.0, 1.0, 2.0]})
    with pytest.raises(error, match=match):
        prk.rank_correlation(a, a, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'b' of rank_correlation must be .*, got dict"):
        prk.rank_correlation(a, {"s1": 1.0})  # type: ignore[arg-type]


def test_other_column_names_and_unrecommended_rows() -> None:
    a = pl.DataFrame({"u": [1, 1, 1], "doc": ["x", "y", "z"], "pts": [1.0, 1.0, None]})
    b = pl.DataFrame({"u": [1, 1], "doc": ["x", "y"], "pts": [2.0, 1.0]})
    kwargs = {"user": "u", "item": "doc", "score": "pts", "per_user": True}
    asc = prk.rank_similarity(a, b, ["rbo(estimate=min)@1"], ties="item_asc", **kwargs)  # type: ignore[arg-type]
    desc = prk.rank_similarity(a, b, ["rbo(estimate=min)@1"], ties="item_desc", **kwargs)  # type: ignore[arg-type]
    assert asc.columns == ["u", "rbo(estimate=min)@1"]
    # x against x at depth 1, then nothing more: (1 - p) / p * -ln(1 - p).
    assert asc.item(0, 1) == pytest.approx((1 - P) / P * -math.log(1 - P), abs=1e-15)
    assert desc.item(0, 1) == 0.0  # y against x


def test_users_of_one_run_compare_with_an_empty_list() -> None:
    a = _run({1: list("ab"), 2: list("c")})
    b = _run({1: list("ab")})
    out = prk.rank_similarity(
        a, b, ["rbo(p=0.5,estimate=min)", "rbo(p=0.5,estimate=max)"], users="a", per_user=True
    )
    # user 2 has no list in b: one empty list, min = 0 and max = 1 (rbo_frame's rule)
    assert out.row(1) == (2, 0.0, 1.0)
    summary = prk.rank_similarity(a, b, ["rbo(p=0.5)"], users="a")
    assert summary["n_users"].item() == 2
    assert summary["n_users_only_a"].item() == 1

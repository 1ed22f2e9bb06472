"""Inter- and intra-list diversity: by hand, against brute force (pairwise cosines in
numpy, every tie ordering), bucket invariance, errors, Jurity's sampled estimate."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._engines import engine_of
from tests._reference import orderings, rows_by_user
from tests.frames import TIED_TOP_TWO

# ---------------------------------------------------------------------- brute force


def top_sets(df: pl.DataFrame, k: int | None, ties: str) -> dict[Any, list[tuple[tuple, float]]]:
    """Per user: the distinct top-k item sets the tie policy allows, with probabilities."""
    out = {}
    for user, rows in rows_by_user(df).items():
        tops = [
            tuple(sorted(r.item for r in (ranked if k is None else ranked[:k])))
            for ranked, _ in orderings(rows, ties)
        ]
        counts = Counter(tops)
        out[user] = [(items, n / len(tops)) for items, n in counts.items()]
    return out


def inter_pairwise(sets: list[tuple]) -> float | None:
    """Mean cosine distance over every pair of non-empty binary vectors (numpy)."""
    sets = [s for s in sets if s]
    if len(sets) < 2:
        return None
    items = sorted({i for s in sets for i in s})
    x = np.zeros((len(sets), len(items)))
    for row, s in enumerate(sets):
        x[row, [items.index(i) for i in s]] = 1.0
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    upper = np.triu_indices(len(sets), 1)
    return float(np.mean(1.0 - (x @ x.T)[upper]))


def inter_brute_force(df: pl.DataFrame, k: int | None, ties: str) -> float | None:
    """The expectation over every combination of the users' possible top-k sets."""
    per_user = list(top_sets(df, k, ties).values())
    total = 0.0
    for combo in itertools.product(*per_user):
        value = inter_pairwise([s for s, _ in combo])
        if value is None:
            return None
        total += value * math.prod(p for _, p in combo)
    return total


def intra_pairwise(vectors: list[np.ndarray]) -> float | None:
    """Mean cosine distance over the pairs of a list; a zero vector has cosine 0."""
    if len(vectors) < 2:
        return None
    dist = []
    for u, v in itertools.combinations(vectors, 2):
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        cos = 0.0 if nu == 0 or nv == 0 else float(u @ v / (nu * nv))
        dist.append(1.0 - cos)
    return float(np.mean(dist))


def intra_brute_force(
    df: pl.DataFrame, features: dict[Any, np.ndarray], k: int | None, ties: str
) -> dict[Any, float | None]:
    out = {}
    for user, rows in rows_by_user(df).items():
        values = [
            intra_pairwise([features[r.item] for r in (ranked if k is None else ranked[:k])])
            for ranked, _ in orderings(rows, ties)
        ]
        out[user] = None if values[0] is None else float(np.mean(values))
    return out


def small_frame(seed: int, n_users: int = 4, n_items: int = 8, max_len: int = 5) -> pl.DataFrame:
    """Few users, heavy ties (scores 0..2), some judged-only rows (null score); the
    relevances of a user differ, so optimistic and pessimistic ties pick one order."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        items = rng.choice(n_items, size=int(rng.integers(1, max_len + 1)), replace=False)
        for rel, item in enumerate(items):
            score = None if rng.random() < 0.15 else float(rng.integers(0, 3))
            rows.append((user, int(item), score, rel))
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def feature_table(seed: int, n_items: int, dim: int = 3, kind: str = "list") -> pl.DataFrame:
    """Features with negative components and one zero vector (item 0)."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n_items, dim))
    vectors[0] = 0.0
    table = pl.DataFrame({"item": np.arange(n_items, dtype=np.int64), "features": vectors})
    if kind == "list":
        return table.with_columns(pl.col("features").cast(pl.List(pl.Float64)))
    if kind == "struct":
        fields = [pl.col("features").arr.get(i).alias(f"f{i}") for i in range(dim)]
        return table.select("item", pl.struct(fields).alias("features"))
    return table


# ---------------------------------------------------------------------- hand-computed
RECS = pl.DataFrame(
    {
        "user": [1, 1, 2, 2, 3, 3],
        "item": ["a", "b", "a", "c", "c", "d"],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [None] * 6,
    },
    schema_overrides={"relevance": pl.Int64},
)
ITEMS = pl.DataFrame(
    {
        "item": ["a", "b", "c", "d"],
        "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]],
    }
)


def test_inter_list_by_hand() -> None:
    got = prk.evaluate(RECS, ["inter_list_diversity@2", "inter_list_diversity@1"], users="recs")
    # @2: lists {a,b}, {a,c}, {c,d}: cosines 1/2, 0, 1/2 over the 3 pairs
    assert got.item(0, "inter_list_diversity@2") == pytest.approx(1 - (1 / 2 + 0 + 1 / 2) / 3)
    # @1: lists {a}, {a}, {c}: cosines 1, 0, 0
    assert got.item(0, "inter_list_diversity@1") == pytest.approx(1 - 1 / 3)


def test_intra_list_by_hand() -> None:
    got = prk.evaluate(RECS, "intra_list_diversity@2", items=ITEMS, users="recs", per_user=True)
    c = 1 / math.sqrt(2)  # cos(a, c) = cos(c, d)
    assert got.get_column("intra_list_diversity@2").to_list() == pytest.approx([1.0, 1 - c, 1 - c])
    one = prk.evaluate(RECS, "intra_list_diversity@1", items=ITEMS, users="recs", per_user=True)
    assert one.get_column("intra_list_diversity@1").null_count() == 3  # no pair: undefined


def test_undefined_and_users_universe() -> None:
    single = RECS.filter(pl.col("user") == 1)
    assert prk.evaluate(single, "inter_list_diversity@2", users="recs").item(0, 0) is None
    # the default users="truth" keeps users with a judged row: none here
    assert prk.evaluate(RECS, "inter_list_diversity@2").item(0, 0) is None


def test_ties_by_hand() -> None:
    # user 1 ties a, b, c; top 2 takes two of the three (each pair with probability 1/3)
    df = TIED_TOP_TWO
    items = ITEMS.vstack(pl.DataFrame({"item": ["e"], "features": [[0.0, 0.0]]}))
    got = prk.evaluate(df, ["inter_list_diversity@2", "intra_list_diversity@2"], items=items)
    # user 2's list {a, d}; user 1's list shares a with it in 2 of 3 cases: cosine 1/2
    assert got.item(0, "inter_list_diversity@2") == pytest.approx(1 - (2 / 3) * (1 / 2))
    c = 1 / math.sqrt(2)
    # intra: user 1 pairs ab, ac, bc: distances 1, 1 - c, 1 - c; user 2: a, d identical
    expected_u1 = (1 + 2 * (1 - c)) / 3
    assert got.item(0, "intra_list_diversity@2") == pytest.approx((expected_u1 + 0.0) / 2)
    # deterministic: item_asc gives user 1 {a, b}, item_desc {c, b}
    asc = prk.evaluate(df, "intra_list_diversity@2", items=items, ties="item_asc").item(0, 0)
    assert asc == pytest.approx((1.0 + 0.0) / 2)
    desc = prk.evaluate(df, "intra_list_diversity@2", items=items, ties="item_desc").item(0, 0)
    assert desc == pytest.approx((1 - c + 0.0) / 2)


# ---------------------------------------------------------------------- brute force
@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 2, 3, None])
def test_inter_list_matches_brute_force_every_tie_ordering(
    seed: int, ties: str, k: int | None
) -> None:
    df = small_frame(seed)
    metric = "inter_list_diversity" + (f"@{k}" if k else "")
    got = prk.evaluate(df, metric, ties=ties).item(0, 0)
    expected = inter_brute_force(df, k, ties)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_inter_list_matches_pairwise_on_many_users(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_users, n_items = 300, 40
    rows = [
        (u, int(i), float(rng.random()), None)
        for u in range(n_users)
        for i in rng.choice(n_items, size=int(rng.integers(0, 12)), replace=False)
    ]
    schema = {"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64}
    df = pl.DataFrame(rows, schema=schema, orient="row")
    for k in (1, 5, 10):
        got = prk.evaluate(df, f"inter_list_diversity@{k}", users="recs").item(0, 0)
        top = df.sort("score", descending=True).group_by("user").head(k)
        sets = [tuple(g.get_column("item")) for _, g in top.group_by("user")]
        assert got == pytest.approx(inter_pairwise(sets), abs=1e-12)


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [2, 3, None])
def test_intra_list_matches_brute_force_every_tie_ordering(
    seed: int, ties: str, k: int | None
) -> None:
    df = small_frame(seed, n_users=6, max_len=6)
    table = feature_table(seed, 8)
    features = dict(zip(table["item"], (np.array(v) for v in table["features"]), strict=True))
    metric = "intra_list_diversity" + (f"@{k}" if k else "")
    got = prk.evaluate(df, metric, ties=ties, items=table, per_user=True)
    expected = intra_brute_force(df, features, k, ties)
    for user, value in got.iter_rows():
        if expected[user] is None:
            assert value is None
        else:
            assert value == pytest.approx(expected[user], abs=1e-12)


@pytest.mark.parametrize("kind", ["list", "array", "struct"])
def test_feature_dtypes_agree(kind: str) -> None:
    df = small_frame(7, n_users=8, max_len=6)
    reference = prk.evaluate(df, "intra_list_diversity@4", items=feature_table(1, 8), per_user=True)
    got = prk.evaluate(
        df, "intra_list_diversity@4", items=feature_table(1, 8, kind=kind), per_user=True
    )
    assert_frame_equal(got, reference, check_exact=False, abs_tol=1e-12)


def test_features_from_the_data_itself() -> None:
    table = feature_table(3, 8)
    df = small_frame(3).join(table, on="item", how="left")
    got = prk.evaluate(df, "intra_list_diversity@3", per_user=True)
    expected = prk.evaluate(small_frame(3), "intra_list_diversity@3", items=table, per_user=True)
    assert_frame_equal(got, expected)


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_bucket_invariance_with_by(ties: str) -> None:
    a = small_frame(1, n_users=30).with_columns(system=pl.lit("a"))
    b = small_frame(2, n_users=30).with_columns(system=pl.lit("b"))
    df = pl.concat([a, b])
    metrics = ["inter_list_diversity@2", "inter_list_diversity", "intra_list_diversity@3"]
    options = {"by": "system", "items": feature_table(0, 8), "ties": ties}
    expected = prk.evaluate(df, metrics, engine="memory", **options)  # type: ignore[arg-type]
    assert expected.height == 2
    for strategy, n in (("buckets", 3), ("partition", 4)):
        got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=n), **options)  # type: ignore[arg-type]
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)
    per_user = prk.evaluate(df, metrics[2:], per_user=True, engine="memory", **options)  # type: ignore[arg-type]
    got = prk.evaluate(df, metrics[2:], per_user=True, engine=prk.Buckets(n_buckets=3), **options)  # type: ignore[arg-type]
    assert_frame_equal(got, per_user, check_exact=False, rel_tol=1e-12)


# ---------------------------------------------------------------------- errors
def items_with(item: str, value: Any) -> pl.DataFrame:
    return ITEMS.with_columns(
        pl.when(pl.col("item") == item)
        .then(pl.lit(value, dtype=pl.List(pl.Float64)))
        .otherwise("features")
        .alias("features")
    )


@pytest.mark.parametrize(
    ("items", "match"),
    [
        (
            ITEMS.filter(pl.col("item") != "c"),
            r"2 item\(s\) in the top k of 2 user\(s\).*e.g. item \['c'\]",
        ),
        (items_with("a", None), r"no usable feature vector in column 'features'.*\['a'\]"),
        (items_with("b", []), r"1 item\(s\).*\['b'\]"),
        (items_with("d", [1.0, None]), r"\['d'\]"),
        (items_with("d", [1.0, float("nan")]), r"\['d'\]"),
        (items_with("d", [1.0, float("inf")]), r"\['d'\]"),
        (items_with("d", [1.0, 0.0, 2.0]), r"differ in length, e.g. user \[3\]"),
    ],
)
def test_items_without_usable_features(items: pl.DataFrame, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prk.evaluate(RECS, "intra_list_diversity@2", items=items, users="recs")


def test_items_outside_the_top_k_need_no_features() -> None:
    items = ITEMS.filter(pl.col("item") != "b")  # b is second for user 1
    got = prk.evaluate(RECS, "intra_list_diversity@1", items=items, users="recs")
    assert got.item(0, 0) is None  # no pair anywhere, and no error


def test_feature_column_errors() -> None:
    with pytest.raises(ValueError, match=r"column 'emb' .* not found in the data or the items="):
        prk.evaluate(RECS, "intra_list_diversity(features=emb)@2", items=ITEMS, users="recs")
    bad = ITEMS.with_columns(features=pl.lit("x"))
    with pytest.raises(TypeError, match=r"must hold numeric feature vectors .* got String"):
        prk.evaluate(RECS, "intra_list_diversity@2", items=bad, users="recs")
    with pytest.raises(ValueError, match="not found in the data"):
        prk.evaluate(RECS, "intra_list_diversity@2", users="recs")
    with pytest.raises(ValueError, match="one value per by group"):
        prk.evaluate(RECS, "inter_list_diversity@2", users="recs", per_user=True)


# ---------------------------------------------------------------------- sampled estimate
def many_users(seed: int, n_users: int = 200) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (u, int(i), float(rng.integers(0, 4)))
        for u in range(n_users)
        for i in rng.choice(30, size=int(rng.integers(1, 8)), replace=False)
    ]
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")


def test_sampled_estimate_is_the_mean_over_exact_samples() -> None:
    df = many_users(0)
    exact = prk.evaluate(
        df.with_columns(relevance=pl.lit(None, dtype=pl.Int64)),
        "inter_list_diversity@3",
        users="recs",
    ).item(0, 0)
    assert prk.inter_list_diversity_sampled(df, 3, sample_size=None) == pytest.approx(exact)
    assert prk.inter_list_diversity_sampled(df, 3, sample_size=10**6) == pytest.approx(exact)
    # reproduce the draws: the same generator, users sorted
    users = np.sort(df.get_column("user").unique().to_numpy())
    rng = np.random.default_rng(42)
    values = []
    for _ in range(5):
        chosen = users[rng.choice(len(users), size=50, replace=False)]
        sample = df.filter(pl.col("user").is_in(chosen.tolist()))
        values.append(
            prk.evaluate(
                sample.with_columns(relevance=pl.lit(None, dtype=pl.Int64)),
                "inter_list_diversity@3",
                users="recs",
            ).item(0, 0)
        )
    got = prk.inter_list_diversity_sampled(df, 3, sample_size=50, runs=5, seed=42)
    assert got == pytest.approx(float(np.mean(values)))
    assert abs(got - exact) < 0.05  # a sampling error, not a different quantity


def test_sampled_estimate_options() -> None:
    df = many_users(1, n_users=20)
    assert math.isnan(prk.inter_list_diversity_sampled(df.head(3).filter(pl.col("user") == 0), 2))
    ranked = df.with_columns(rank=pl.col("score").rank("ordinal", descending=True).over("user"))
    by_rank = prk.inter_list_diversity_sampled(
        ranked.drop("score"), 2, rank="rank", sample_size=None
    )
    by_score = prk.inter_list_diversity_sampled(df, 2, sample_size=None, ties="item_asc")
    assert math.isfinite(by_rank)
    assert math.isfinite(by_score)
    for kwargs, match in [
        (
            {"sample_size": 0},
            r"'sample_size' of inter_list_diversity_sampled must be an integer >= 1 or None, got 0",
        ),
        ({"runs": 0}, r"'runs' of inter_list_diversity_sampled must be an integer >= 1, got 0"),
        (
            {"ties": "random"},
            r"'ties' of inter_list_diversity_sampled must be one of \[.*\] "
            r"or a Ties policy, got 'random'",
        ),
    ]:
        with pytest.raises(ValueError, match=match):
            prk.inter_list_diversity_sampled(df, 2, **kwargs)  # type: ignore[arg-type]
    # A wrong type is a TypeError (the integer rule of tests/api/test_integer_arguments.py).
    with pytest.raises(
        TypeError,
        match=r"'sample_size' of inter_list_diversity_sampled must be an integer >= 1 "
        r"or None, got float 0\.5",
    ):
        prk.inter_list_diversity_sampled(df, 2, sample_size=0.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- Jurity
@pytest.mark.parametrize("k", [1, 3, 5])
def test_inter_list_matches_jurity(k: int) -> None:
    jurity = pytest.importorskip("jurity.recommenders")
    df = many_users(k, n_users=80).with_columns(score=pl.int_range(pl.len()).cast(pl.Float64))
    metric = jurity.InterListDiversity(
        click_column="score",
        k=k,
        user_id_column="user",
        item_id_column="item",
        user_sample_size=None,
    )
    expected = metric.get_score(None, df.to_pandas())
    got = prk.inter_list_diversity_sampled(df, k, sample_size=None)
    assert got == pytest.approx(float(expected), abs=1e-12)


@pytest.mark.parametrize("k", [2, 4])
def test_intra_list_matches_jurity(k: int) -> None:
    jurity = pytest.importorskip("jurity.recommenders")
    df = many_users(k, n_users=60).with_columns(score=pl.int_range(pl.len()).cast(pl.Float64))
    table = feature_table(k, 30, dim=4, kind="array")
    columns = table.select(
        "item", *[pl.col("features").arr.get(i).alias(f"f{i}") for i in range(4)]
    )
    metric = jurity.IntraListDiversity(
        columns.to_pandas(),
        click_column="score",
        k=k,
        user_id_column="user",
        item_id_column="item",
        user_sample_size=None,
    )
    expected = metric.get_score(None, df.to_pandas())
    long = df.with_columns(relevance=pl.lit(None, dtype=pl.Int64))
    got = prk.evaluate(long, f"intra_list_diversity@{k}", items=table, users="recs").item(0, 0)
    assert got == pytest.approx(float(expected), abs=1e-12)


# ---------------------------------------------------------------------- other distances
def _distance(u: np.ndarray, v: np.ndarray, distance: str) -> float:
    """Reference distances (scipy; Hamming as RecTools: the number of differing components)."""
    from scipy.spatial import distance as sd

    if distance == "cosine":
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        return 1.0 - (0.0 if nu == 0 or nv == 0 else float(u @ v / (nu * nv)))
    if distance == "euclidean":
        return float(sd.euclidean(u, v))
    if distance == "hamming":
        return float(sd.hamming(u, v) * len(u))
    return float(sd.jaccard(u != 0, v != 0))


def test_intra_list_distances_by_hand() -> None:
    # RecTools tests/metrics/test_diversity.py: features i1 [0, 0], i2 [0, 1], i3 [1, 1];
    # u1 ranks i1, i2, i3; Hamming ILD @2 = 1, @3 = (1 + 2 + 1) / 3 = 4/3; u3 has one item.
    recs = pl.DataFrame(
        {"user": ["u1"] * 3 + ["u3"], "item": ["i1", "i2", "i3", "i1"], "rank": [1, 2, 3, 1]}
    ).with_columns(relevance=pl.lit(0))
    items = pl.DataFrame(
        {"item": ["i1", "i2", "i3"], "features": [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}
    )

    def per_user(metric: str) -> list[float | None]:
        got = prk.evaluate(recs, metric, rank="rank", items=items, per_user=True).sort("user")
        return got[:, 1].to_list()

    assert per_user("intra_list_diversity(distance=hamming)@2") == [1.0, None]
    assert per_user("intra_list_diversity(distance=hamming)@3") == pytest.approx([4 / 3, None])
    # Euclidean: |i1 i2| = 1, |i1 i3| = sqrt 2, |i2 i3| = 1
    got = per_user("intra_list_diversity(distance=euclidean)@3")[0]
    assert got == pytest.approx((1 + math.sqrt(2) + 1) / 3)
    # Jaccard of the non-zero components: i1 has none (distance 1 to both), i2 {2} vs
    # i3 {1, 2}: 1 - 1/2
    assert per_user("intra_list_diversity(distance=jaccard)@3")[0] == pytest.approx(2.5 / 3)
    # the default is cosine: i1 is a zero vector (distance 1), cos(i2, i3) = 1/sqrt 2
    cosine = (1 + 1 + (1 - 1 / math.sqrt(2))) / 3
    assert per_user("intra_list_diversity@3")[0] == pytest.approx(cosine)
    assert per_user("intra_list_diversity(distance=cosine)@3")[0] == pytest.approx(cosine)


@pytest.mark.parametrize("distance", ["euclidean", "hamming", "jaccard", "cosine"])
@pytest.mark.parametrize("ties", ["expected", "item_asc", "pessimistic"])
@pytest.mark.parametrize("k", [2, 3, None])
def test_intra_list_distances_match_brute_force_every_tie_ordering(
    distance: str, ties: str, k: int | None
) -> None:
    df = small_frame(5, n_users=6, max_len=6)
    rng = np.random.default_rng(5)
    # small integer components: Hamming and Jaccard see equal and zero components
    vectors = rng.integers(-1, 2, size=(8, 3)).astype(float)
    table = pl.DataFrame({"item": np.arange(8, dtype=np.int64), "features": vectors.tolist()})
    metric = f"intra_list_diversity(distance={distance})" + (f"@{k}" if k else "")
    got = prk.evaluate(df, metric, ties=ties, items=table, per_user=True)
    for user, rows in rows_by_user(df).items():
        values = []
        for ranked, _ in orderings(rows, ties):
            top = [vectors[r.item] for r in (ranked if k is None else ranked[:k])]
            pairs = [_distance(u, v, distance) for u, v in itertools.combinations(top, 2)]
            values.append(float(np.mean(pairs)) if pairs else None)
        value = got.filter(pl.col("user") == user)[:, 1].item()
        if values[0] is None:
            assert value is None
        else:
            assert value == pytest.approx(float(np.mean(values)), abs=1e-12)


@pytest.mark.parametrize("kind", ["array", "struct"])
def test_intra_list_distances_feature_dtypes_agree(kind: str) -> None:
    df = small_frame(7, n_users=8, max_len=6)
    for distance in ("euclidean", "hamming", "jaccard"):
        metric = f"intra_list_diversity(distance={distance})@4"
        reference = prk.evaluate(df, metric, items=feature_table(1, 8), per_user=True)
        got = prk.evaluate(df, metric, items=feature_table(1, 8, kind=kind), per_user=True)
        assert_frame_equal(got, reference, check_exact=False, abs_tol=1e-12)


def test_intra_list_distances_refuse_bad_vectors() -> None:
    items = ITEMS.with_columns(
        pl.when(pl.col("item") == "b").then(None).otherwise(pl.col("features")).alias("features")
    )
    with pytest.raises(ValueError, match="no usable feature vector"):
        prk.evaluate(RECS, "intra_list_diversity(distance=euclidean)@2", items=items)
    mixed = ITEMS.with_columns(
        pl.when(pl.col("item") == "b")
        .then(pl.lit([0.0, 1.0, 0.0]))
        .otherwise(pl.col("features"))
        .alias("features")
    )
    with pytest.raises(ValueError, match="differ in length"):
        prk.evaluate(RECS, "intra_list_diversity(distance=hamming)@2", items=mixed)

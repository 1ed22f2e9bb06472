"""miscalibration (Steck 2018): by hand, against scipy.stats.entropy, ties, errors."""

from __future__ import annotations

import math
import random
from collections import defaultdict

import polars as pl
import pytest
from scipy.stats import entropy

import polars_rankeval as prk
from tests._tie_brute import per_user

ITEMS = pl.DataFrame(
    {
        "item": ["a", "b", "c", "d"],
        "categories": [["x"], ["x"], ["x", "y"], ["y", "z"]],
        "weights": [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]],
    }
)
RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2],
        "item": ["a", "d", "b", "c", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [1, None, None, 1, None],
    }
)
HISTORY = pl.DataFrame(
    {"user": [1, 1, 2, 2, 2], "item": ["a", "c", "a", "b", "d"], "w": [1.0, 3.0, 1.0, 1.0, 2.0]}
)


def kl(p: dict[str, float], q: dict[str, float], alpha: float) -> float:
    return math.fsum(
        v * math.log(v / ((1 - alpha) * q.get(g, 0.0) + alpha * v)) for g, v in p.items()
    )


def test_by_hand() -> None:
    # User 1: history a (x), c (x, y half each): p = (x 3/4, y 1/4).
    # Top 2: a (x), d (y, z half each): q = (x 1/2, y 1/4, z 1/4).
    p1 = {"x": 0.75, "y": 0.25}
    q1 = {"x": 0.5, "y": 0.25, "z": 0.25}
    got = per_user(RECS, "miscalibration@2", items=ITEMS, history=HISTORY, ties="item_asc")
    assert got[1] == pytest.approx(
        0.75 * math.log(0.75 / (0.99 * 0.5 + 0.01 * 0.75))
        + 0.25 * math.log(0.25 / (0.99 * 0.25 + 0.01 * 0.25))
    )
    assert got[1] == pytest.approx(kl(p1, q1, 0.01))
    # User 2: history a, b (x), d (y, z): p = (x 2/3, y 1/6, z 1/6); list c, d:
    # q = (x 1/4, y 1/2, z 1/4).
    p2 = {"x": 2 / 3, "y": 1 / 6, "z": 1 / 6}
    q2 = {"x": 0.25, "y": 0.5, "z": 0.25}
    assert got[2] == pytest.approx(kl(p2, q2, 0.01))
    # alpha = 0 and a list without a category of the history: infinite.
    got = per_user(RECS, "miscalibration(alpha=0)@1", items=ITEMS, history=HISTORY, ties="item_asc")
    assert got[1] == got[2] == math.inf  # user 2's top 1, c, has no z
    got = per_user(RECS, "miscalibration(alpha=0)@2", items=ITEMS, history=HISTORY, ties="item_asc")
    assert got[2] == pytest.approx(kl(p2, q2, 0.0))


def test_weights_and_positions_by_hand() -> None:
    # Recency weights: user 1 a (1), c (3): p = x (1 + 3/2) / 4, y (3/2) / 4.
    p1 = {"x": 2.5 / 4, "y": 1.5 / 4}
    got = per_user(
        RECS, "miscalibration(weight=w)@2", items=ITEMS, history=HISTORY, ties="item_asc"
    )
    assert got[1] == pytest.approx(kl(p1, {"x": 0.5, "y": 0.25, "z": 0.25}, 0.01))
    # position=log: a at rank 1 weighs 1, d at rank 2 weighs 1/log2(3).
    w2 = 1 / math.log2(3)
    q1 = {"x": 1 / (1 + w2), "y": 0.5 * w2 / (1 + w2), "z": 0.5 * w2 / (1 + w2)}
    got = per_user(
        RECS, "miscalibration(position=log)@2", items=ITEMS, history=HISTORY, ties="item_asc"
    )
    assert got[1] == pytest.approx(kl({"x": 0.75, "y": 0.25}, q1, 0.01))


def test_weight_vectors_equal_labels_for_multi_hot() -> None:
    labels = per_user(RECS, "miscalibration@3", items=ITEMS, history=HISTORY, ties="item_asc")
    vectors = per_user(
        RECS,
        "miscalibration(categories=weights)@3",
        items=ITEMS,
        history=HISTORY,
        ties="item_asc",
    )
    assert labels == pytest.approx(vectors)
    arrays = ITEMS.with_columns(pl.col("weights").cast(pl.Array(pl.Float64, 3)))
    assert per_user(
        RECS,
        "miscalibration(categories=weights)@3",
        items=arrays,
        history=HISTORY,
        ties="item_asc",
    ) == pytest.approx(labels)


@pytest.mark.parametrize("seed", range(5))
def test_matches_scipy_entropy(seed: int) -> None:
    rng = random.Random(seed)
    cats = ["g0", "g1", "g2", "g3"]
    n_items = 12
    item_cats = {i: rng.sample(cats, rng.randint(1, 3)) for i in range(n_items)}
    items = pl.DataFrame({"item": list(item_cats), "categories": list(item_cats.values())})
    recs, hist = [], []
    for u in range(6):
        for i in rng.sample(range(n_items), 5):
            recs.append(
                {"user": u, "item": i, "score": float(rng.choice([1, 2, 3])), "relevance": 1}
            )
        hist += [{"user": u, "item": rng.randrange(n_items)} for _ in range(rng.randint(1, 6))]
    df, history = pl.DataFrame(recs), pl.DataFrame(hist)
    alpha, k = 0.05, 3
    got = per_user(
        df, f"miscalibration(alpha={alpha})@{k}", items=items, history=history, ties="item_desc"
    )
    for u in range(6):
        p: dict[str, float] = defaultdict(float)
        h = [r["item"] for r in hist if r["user"] == u]
        for i in h:
            for g in item_cats[i]:
                p[g] += 1 / len(item_cats[i]) / len(h)
        rows = sorted((r for r in recs if r["user"] == u), key=lambda r: (-r["score"], -r["item"]))
        q: dict[str, float] = defaultdict(float)
        for r in rows[:k]:
            for g in item_cats[r["item"]]:
                q[g] += 1 / len(item_cats[r["item"]]) / k
        pv = [p[g] for g in cats]
        qt = [(1 - alpha) * q[g] + alpha * p[g] for g in cats]
        assert got[u] == pytest.approx(entropy(pv, qt), abs=1e-12)


def test_calibrated_list_is_zero_and_values_nonnegative() -> None:
    recs = pl.DataFrame(
        {"user": [1, 1], "item": ["a", "d"], "score": [2.0, 1.0], "relevance": [1, 1]}
    )
    hist = pl.DataFrame({"user": [1, 1], "item": ["b", "d"]})
    # p = q = (x 1/2, y 1/4, z 1/4): 0 for every alpha.
    for alpha in (0.0, 0.01, 0.5):
        got = per_user(
            recs, f"miscalibration(alpha={alpha})@2", items=ITEMS, history=hist, ties="item_asc"
        )
        assert got[1] == pytest.approx(0.0, abs=1e-15)


def test_ties_deterministic_only_and_tied_scores() -> None:
    with pytest.raises(ValueError, match="does not support ties='expected'; supported: item_desc"):
        prk.evaluate(RECS, ["miscalibration@2"], items=ITEMS, history=HISTORY)
    tied = RECS.with_columns(score=pl.lit(1.0))
    # item_desc: user 1's tied list d, b, a: top 2 d (y, z), b (x): q = (1/2, 1/4, 1/4).
    got = per_user(tied, "miscalibration@2", items=ITEMS, history=HISTORY, ties="item_desc")
    assert got[1] == pytest.approx(
        kl({"x": 0.75, "y": 0.25}, {"x": 0.5, "y": 0.25, "z": 0.25}, 0.01)
    )
    # item_asc: a, b (x, x): q = x only.
    got = per_user(tied, "miscalibration@2", items=ITEMS, history=HISTORY, ties="item_asc")
    assert got[1] == pytest.approx(kl({"x": 0.75, "y": 0.25}, {"x": 1.0}, 0.01))


def test_undefined_users_and_buckets() -> None:
    hist = HISTORY.filter(pl.col("user") == 1)
    got = per_user(RECS, "miscalibration@2", items=ITEMS, history=hist, ties="item_asc")
    assert got[2] is None  # no history
    mem = prk.evaluate(RECS, ["miscalibration@2"], items=ITEMS, history=HISTORY, ties="item_asc")
    buckets = prk.evaluate(
        RECS,
        ["miscalibration@2"],
        items=ITEMS,
        history=HISTORY,
        ties="item_asc",
        engine=prk.Buckets(n_buckets=2),
    )
    assert buckets.item(0, "miscalibration@2") == pytest.approx(mem.item(0, "miscalibration@2"))


def test_errors() -> None:
    short = ITEMS.filter(pl.col("item") != "d")
    with pytest.raises(
        ValueError,
        match=r"metric 'miscalibration': 2 item\(s\) in the top k of 2 user\(s\) have no "
        r"categories .* e.g. item \['d'\]",
    ):
        prk.evaluate(RECS, ["miscalibration@2"], items=short, history=HISTORY, ties="item_asc")
    with pytest.raises(ValueError, match="reads the item side table: pass items="):
        prk.evaluate(RECS, ["miscalibration@2"], history=HISTORY, ties="item_asc")
    with pytest.raises(ValueError, match="pass history="):
        prk.evaluate(RECS, ["miscalibration@2"], items=ITEMS, ties="item_asc")
    with pytest.raises(ValueError, match="column 'nope' not found in the history= table"):
        prk.evaluate(
            RECS, ["miscalibration(weight=nope)@2"], items=ITEMS, history=HISTORY, ties="item_asc"
        )
    with pytest.raises(ValueError, match="column 'nope' not found in the items= table"):
        prk.evaluate(
            RECS,
            ["miscalibration(categories=nope)@2"],
            items=ITEMS,
            history=HISTORY,
            ties="item_asc",
        )
    with pytest.raises(TypeError, match="must hold a list of category labels"):
        prk.evaluate(
            RECS,
            ["miscalibration(categories=x)@2"],
            items=ITEMS.with_columns(pl.col("item").alias("x")),
            history=HISTORY,
            ties="item_asc",
        )
    with pytest.raises(ValueError, match="alpha"):
        prk.evaluate(
            RECS, ["miscalibration(alpha=1.5)@2"], items=ITEMS, history=HISTORY, ties="item_asc"
        )

"""novelty from history= (source=, unknown=, normalize=, aggregate=pooled) and
intra_list_diversity(distance=cooccurrence): by hand, tied scores, errors.

Tests the private unit MemoryEngine on purpose (a spy: errors come before the plan runs).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk

TRAIN = pl.DataFrame(
    {"user": [7, 7, 7, 8, 8, 9], "item": ["a", "a", "b", "a", "c", "b"]}
)  # 3 users; users holding: a 2, b 2, c 1; rows: a 3, b 2, c 1 (6 rows)


def recs(rows: list[tuple[int, str, float | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64}, orient="row"
    ).with_columns(relevance=pl.lit(None, dtype=pl.Float64))


def test_novelty_from_history_by_hand() -> None:
    df = recs([(1, "a", 3.0), (1, "c", 2.0), (1, "z", 1.0), (2, "b", 1.0)])
    users = "novelty(source=history_users,unknown=one)@3"
    rows = "novelty(source=history_interactions,unknown=zero)@3"
    surprisal = "novelty(source=history_users,unknown=one,normalize=true,denominator=k)@3"
    out = prk.evaluate(df, [users, rows, surprisal], history=TRAIN, users="recs", per_user=True)
    got = out.sort("user").rename(dict(zip(out.columns[1:], [users, rows, surprisal], strict=True)))
    # users: a 2/3, c 1/3, z cold -> 1/3: (log2 3/2 + log2 3 + log2 3) / 3; b 2/3.
    assert got[users].to_list() == pytest.approx(
        [(math.log2(1.5) + 2 * math.log2(3)) / 3, math.log2(1.5)]
    )
    # rows: a 3/6, c 1/6, z unknown adds 0 but counts: (1 + log2 6 + 0) / 3; b 2/6.
    assert got[rows].to_list() == pytest.approx([(1 + math.log2(6)) / 3, math.log2(3)])
    # RePlay Surprisal: log(3/u) / log 3 per item, / k = 3: (log3 1.5 + 1 + 1) / 3;
    # user 2's one item log3(1.5) / 3 (a short list padded with 0).
    w = math.log(1.5) / math.log(3)
    assert got[surprisal].to_list() == pytest.approx([(w + 2) / 3, w / 3])
    # The same as the recipe with a popularity column (item_popularity, unseen='one').
    pop = prk.item_popularity(TRAIN, catalog=df["item"], unseen="one")
    recipe = prk.evaluate(
        df, "novelty(denominator=k,log_base=3)@3", items=pop, users="recs", per_user=True
    )
    assert recipe.sort("user")[:, 1].to_list() == pytest.approx(got[surprisal].to_list())


def test_novelty_unknown_policies_and_errors() -> None:
    df = recs([(1, "a", 2.0), (1, "z", 1.0), (2, "y", 1.0)])
    with pytest.raises(
        ValueError,
        match=r"2 item\(s\) in the top k of 2 user\(s\) have no interaction in history= "
        r"\(source='history_users'\), e\.g\. item \['y', 'z'\]; pass unknown=one",
    ):
        prk.evaluate(df, "novelty(source=history_users)@2", history=TRAIN, users="recs")
    with pytest.raises(ValueError, match="reads the users' past interactions: pass history="):
        prk.evaluate(df, "novelty(source=history_users,unknown=one)@2", users="recs")
    with pytest.raises(ValueError, match=r"normalize=true\) divides by log\(#history users\)"):
        prk.evaluate(df, "novelty(normalize=true)@2", users="recs")
    with pytest.raises(ValueError, match=r"unknown=one\) counts an unknown item as one user"):
        prk.evaluate(df, "novelty(unknown=one)@2", users="recs")
    # unknown=zero with a popularity column: missing, null or 0 add nothing.
    pop = pl.DataFrame({"item": ["a", "z"], "popularity": [0.5, 0.0]})
    out = prk.evaluate(df, "novelty(unknown=zero)@2", items=pop, users="recs", per_user=True)
    assert out.sort("user")[:, 1].to_list() == pytest.approx([(1 + 0) / 2, 0.0])
    bad = pl.DataFrame({"item": ["a", "z", "y"], "popularity": [0.5, 1.5, 0.1]})
    with pytest.raises(ValueError, match=r"no popularity in \[0, 1\].*e\.g\. item \['z'\]"):
        prk.evaluate(df, "novelty(unknown=zero)@2", items=bad, users="recs")
    # normalize with a single history user: the largest self-information is 0 -> null.
    one = pl.DataFrame({"user": [7], "item": ["a"]})
    out = prk.evaluate(
        df,
        "novelty(source=history_users,unknown=one,normalize=true)@2",
        history=one,
        users="recs",
        per_user=True,
    )
    assert out[:, 1].to_list() == [None, None]


def test_novelty_denominator_k_pads_an_empty_list() -> None:
    # A user whose rows have no score: sum 0 over k slots = 0 with denominator=k, and
    # null (undefined: the mean of nothing) with denominator=list.
    df = recs([(1, "a", 1.0), (2, "b", None)]).with_columns(
        relevance=pl.when(pl.col("user") == 2).then(1.0)
    )
    names = [
        "novelty(source=history_users,denominator=k)@2",
        "novelty(source=history_users)@2",
    ]
    out = prk.evaluate(df, names, history=TRAIN, users="all", per_user=True).sort("user")
    assert out[:, 1].to_list() == pytest.approx([math.log2(1.5) / 2, 0.0])
    assert out[:, 2].to_list() == [pytest.approx(math.log2(1.5)), None]
    pop = prk.item_popularity(TRAIN)
    out = prk.evaluate(df, "novelty(denominator=k)@2", items=pop, users="all", per_user=True).sort(
        "user"
    )
    assert out[:, 1].to_list() == pytest.approx([math.log2(1.5) / 2, 0.0])


def test_novelty_pooled_is_the_mean_over_rows() -> None:
    # Pooled: every user's rows at once = the users' means weighted by their list sizes.
    df = recs([(1, "a", 3.0), (1, "b", 2.0), (1, "c", 1.0), (2, "c", 1.0)])
    name = "novelty(source=history_interactions,aggregate=pooled)"
    got = prk.evaluate(df, [name], history=TRAIN, users="recs")[:, 0].item()
    info = {"a": 1.0, "b": math.log2(3), "c": math.log2(6)}
    assert got == pytest.approx((info["a"] + info["b"] + info["c"] + info["c"]) / 4)
    # With a cutoff and tied scores: the expectation over the orderings (the row count
    # min(k, L) per user does not depend on them).
    tied = recs([(1, "a", 1.0), (1, "b", 1.0), (1, "c", 1.0), (2, "c", 2.0), (2, "a", 1.0)])
    got = prk.evaluate(tied, [name + "@1"], history=TRAIN, users="recs")[:, 0].item()
    assert got == pytest.approx(((info["a"] + info["b"] + info["c"]) / 3 + info["c"]) / 2)
    with pytest.raises(ValueError, match="it takes denominator=list only"):
        prk.evaluate(
            df,
            "novelty(source=history_users,denominator=k,aggregate=pooled)@2",
            history=TRAIN,
            users="recs",
        )
    with pytest.raises(ValueError, match=r"aggregate='pooled' is defined for auc, novelty only"):
        prk.evaluate(df, "precision(aggregate=pooled)@2", users="recs")


# --------------------------------------------------------------------------- co-occurrence
def cooc_distance(train: pl.DataFrame) -> dict[tuple[str, str], float]:
    """1 - c(i, j) / sqrt(c(i) c(j)) from the rows of ``train`` (MS Recommenders)."""
    counts = dict(train.group_by("item").len().iter_rows())
    pairs = train.join(train, on="user").filter(pl.col("item") != pl.col("item_right"))
    co = dict(((i, j), c) for i, j, c in pairs.group_by("item", "item_right").len().iter_rows())
    items = sorted({*counts, "z", "y"})
    out = {}
    for i, j in itertools.permutations(items, 2):
        c = co.get((i, j), 0)
        out[(i, j)] = 1.0 - (c / math.sqrt(counts[i] * counts[j]) if c else 0.0)
    return out


def test_cooccurrence_diversity_by_hand() -> None:
    # c: a 3 rows, b 2, c 1; pairs of rows of one user: (a, b) 2 (user 7's two a rows
    # with its b), (a, c) 1 (user 8). d(a, b) = 1 - 2 / sqrt(6), d(a, c) = 1 - 1 /
    # sqrt(3), d(b, c) = 1 (never together), z is not in the history (distance 1).
    df = recs([(1, "a", 3.0), (1, "b", 2.0), (1, "c", 1.0), (2, "a", 1.0), (2, "z", 0.5)])
    name = "intra_list_diversity(distance=cooccurrence)"
    out = prk.evaluate(df, [name, name + "@2"], history=TRAIN, users="recs", per_user=True).sort(
        "user"
    )
    d_ab, d_ac = 1 - 2 / math.sqrt(6), 1 - 1 / math.sqrt(3)
    assert out[name].to_list() == pytest.approx([(d_ab + d_ac + 1) / 3, 1.0])
    assert out[name + "@2"].to_list() == pytest.approx([d_ab, 1.0])
    # A single item has no pair: undefined (skipped), or 0 with short=zero.
    single = recs([(1, "a", 1.0)])
    got = prk.evaluate(
        single,
        [name, "intra_list_diversity(distance=cooccurrence,short=zero)"],
        history=TRAIN,
        users="recs",
        per_user=True,
    )
    assert got.row(0)[1:] == (None, 0.0)
    with pytest.raises(ValueError, match="reads the users' past interactions: pass history="):
        prk.evaluate(df, name, users="recs")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_cooccurrence_diversity_tied_scores_brute_force(k: int) -> None:
    rng = np.random.default_rng(k)
    train = pl.DataFrame({"user": rng.integers(0, 6, 25), "item": rng.choice(list("abcdef"), 25)})
    dist = cooc_distance(train)
    rows = []
    for user in range(5):
        for item in rng.choice(list("abcdefz"), size=int(rng.integers(1, 6)), replace=False):
            rows.append((user, str(item), float(rng.integers(0, 2))))
    df = recs(rows)
    name = f"intra_list_diversity(distance=cooccurrence)@{k}"
    got = prk.evaluate(df, name, history=train, users="recs", per_user=True).sort("user")
    for user, value in got.iter_rows():
        own = [r for r in rows if r[0] == user]
        values = []
        for perm in itertools.permutations(own):
            top = sorted(perm, key=lambda r: -r[2])[:k]
            pairs = list(itertools.combinations([r[1] for r in top], 2))
            if pairs:
                values.append(np.mean([dist[p] for p in pairs]))
        if not values:
            assert value is None
        else:
            assert value == pytest.approx(float(np.mean(values)), abs=1e-12)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    again = prk.evaluate(shuffled, name, history=train, users="recs")[:, 0].item()
    assert again == pytest.approx(
        prk.evaluate(df, name, history=train, users="recs")[:, 0].item(), abs=1e-12
    )


def test_bucketed_equals_in_memory() -> None:
    # The history is read whole by every bucket: the same values out of core.
    rng = np.random.default_rng(0)
    train = pl.DataFrame({"user": rng.integers(0, 30, 200), "item": rng.integers(0, 20, 200)})
    rows = [
        (u, int(i), float(rng.integers(0, 3)))
        for u in range(40)
        for i in rng.choice(22, size=int(rng.integers(1, 7)), replace=False)
    ]
    df = pl.DataFrame(rows, schema=["user", "item", "score"], orient="row").with_columns(
        relevance=pl.lit(None, dtype=pl.Float64)
    )
    items = pl.DataFrame({"item": range(22), "category": [i % 4 for i in range(22)]})
    metrics = [
        "novelty(source=history_interactions,unknown=zero,aggregate=pooled)@3",
        "intra_list_diversity(distance=cooccurrence)@3",
        "categorical_diversity@3",
        "novelty(source=history_users,unknown=one,normalize=true,denominator=k)@3",
    ]
    options = {"history": train, "items": items, "users": "recs"}
    memory = prk.evaluate(df, metrics, engine="memory", **options).row(0)[:4]
    buckets = prk.evaluate(df, metrics, engine=prk.Buckets(n_buckets=3), **options).row(0)[:4]
    assert buckets == pytest.approx(memory, rel=1e-12)


# --------------------------------------------------------------------------- from history alone
def test_novelty_and_arp_from_history_alone() -> None:
    """novelty@k and arp@k with history= only, no popularity column."""
    df = recs([(1, "a", 3.0), (1, "c", 2.0), (2, "b", 1.0)])
    out = prk.evaluate(
        df, ["novelty@2", "popularity_bias@2"], history=TRAIN, users="recs", per_user=True
    ).sort("user")
    # share of the 3 history users holding the item: a 2/3, b 2/3, c 1/3
    assert out["novelty@2"].to_list() == pytest.approx(
        [(math.log2(3 / 2) + math.log2(3)) / 2, math.log2(3 / 2)]
    )
    assert out["popularity_bias@2"].to_list() == pytest.approx([(2 / 3 + 1 / 3) / 2, 2 / 3])
    # the same numbers as the explicit source and the item_popularity() recipe
    explicit = prk.evaluate(
        df, ["novelty(source=history_users)@2"], history=TRAIN, users="recs", per_user=True
    )
    assert explicit.sort("user")[:, 1].to_list() == pytest.approx(out["novelty@2"].to_list())
    pop = prk.item_popularity(TRAIN)
    recipe = prk.evaluate(df, ["novelty@2", "arp@2"], items=pop, users="recs", per_user=True).sort(
        "user"
    )
    assert recipe["novelty@2"].to_list() == pytest.approx(out["novelty@2"].to_list())
    assert recipe["popularity_bias@2"].to_list() == pytest.approx(
        out["popularity_bias@2"].to_list()
    )
    # a popularity column, when there is one, still wins over history=
    mine = pl.DataFrame({"item": ["a", "b", "c"], "popularity": [0.5, 0.25, 0.125]})
    both = prk.evaluate(df, ["arp@2"], items=mine, history=TRAIN, users="recs", per_user=True)
    assert both.sort("user")[:, 1].to_list() == pytest.approx([(0.5 + 0.125) / 2, 0.25])


def test_arp_from_history_counts_a_cold_item_as_zero() -> None:
    df = recs([(1, "a", 3.0), (1, "z", 2.0)])
    rows = "popularity_bias(source=history_interactions)@2"
    out = prk.evaluate(df, ["arp@2", rows], history=TRAIN, users="recs")
    # z: no one interacted with it, popularity 0; a: 2/3 of the users, 3/6 of the rows
    assert out.row(0)[:2] == pytest.approx(((2 / 3 + 0) / 2, (3 / 6 + 0) / 2))


def test_history_metrics_without_a_popularity_say_how_to_give_one() -> None:
    df = recs([(1, "a", 3.0)])
    for name in ("novelty@2", "arp@2"):
        with pytest.raises(ValueError, match=r"pass history= .*or items=item_popularity"):
            prk.evaluate(df, [name], users="recs")


def test_novelty_cold_items_fail_before_the_plan_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars_rankeval.engines.memory as _run

    built: list[bool] = []
    real = _run.MemoryEngine.map_users

    def spy(self: object, *args: object, **kwargs: object) -> object:
        built.append(True)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_run.MemoryEngine, "map_users", spy)
    # z (user 1, rank 2) and y (user 2, rank 1) are cold; x is cold but at rank 3
    df = recs([(1, "a", 3.0), (1, "z", 2.0), (1, "x", 1.0), (2, "y", 1.0), (2, "b", 0.5)])
    with pytest.raises(
        ValueError,
        match=r"metric 'novelty': 2 item\(s\) in the top k of 2 user\(s\) have no interaction "
        r"in history= \(source='history_users'\), e\.g\. item \['y', 'z'\]; pass unknown=one",
    ):
        prk.evaluate(df, ["novelty@2"], history=TRAIN, users="recs")
    assert not built
    # lazy input too: the check runs when the result is collected, before the plan
    # (the call itself reads nothing; building the output schema over no rows is no run)
    lazy = prk.evaluate(
        df.lazy(), ["novelty(source=history_interactions)@2"], history=TRAIN, users="recs"
    )
    built.clear()
    with pytest.raises(ValueError, match=r"2 item\(s\) in the top k of 2 user\(s\) have no"):
        lazy.collect()
    assert not built
    # a cold item outside every top k is no error (x at rank 3 for @2; only a for @1)
    ok = recs([(1, "a", 3.0), (1, "b", 2.0), (1, "x", 1.0), (2, "a", 1.0), (2, "c", 0.6)])
    ok = pl.concat([ok, recs([(2, "x", 0.5)])])
    out = prk.evaluate(ok, ["novelty@2", "novelty@1"], history=TRAIN, users="recs")
    assert out["novelty@1"].item() == pytest.approx(math.log2(3 / 2))
    # tied with a cold item across the cutoff: under expected ties it may enter the top 1
    tied = recs([(1, "a", 1.0), (1, "x", 1.0)])
    with pytest.raises(ValueError, match=r"1 item\(s\) in the top k of 1 user\(s\)"):
        prk.evaluate(tied, ["novelty@1"], history=TRAIN, users="recs")
    # unknown=one or zero: no check
    prk.evaluate(df, ["novelty(unknown=one)@2"], history=TRAIN, users="recs")


def test_item_popularity_unseen_needs_a_catalog() -> None:
    with pytest.raises(ValueError, match=r"unseen='one' .* needs catalog="):
        prk.item_popularity(TRAIN, unseen="one")

"""Long tail, APLT/ACLT, PopREO/PopRSP and group exposure: by hand, Elliot's code, ties."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from tests._tie_brute import brute_per_user, per_user

TRAIN = pl.DataFrame(
    {
        "user": [1, 2, 3, 4, 1, 2, 3, 1, 2, 4],
        "item": ["a", "a", "a", "a", "b", "b", "b", "c", "d", "e"],
    }
)


def test_long_tail_items_follows_elliot_rule() -> None:
    # Users per item: a 4, b 3, c 1, d 1, e 1 (10 pairs). head_share 0.5: a (before 0)
    # and b (before 4 < 5) are the head; c has 7 before it.
    tail = prk.long_tail_items(TRAIN, head_share=0.5)
    assert tail.get_column("long_tail").to_list() == [False, False, True, True, True]
    assert tail.get_column("count").to_list() == [4, 3, 1, 1, 1]
    # 0.8: limit 8: a, b (before 7 < 8), c (before 7 < 8) head; d has 8 before it.
    assert prk.long_tail_items(TRAIN).get_column("long_tail").to_list() == [
        False,
        False,
        False,
        True,
        True,
    ]
    # Catalog items without interactions are long-tail with count 0.
    with_catalog = prk.long_tail_items(TRAIN, head_share=1.0, catalog=pl.Series(["a", "z"]))
    assert with_catalog.filter(pl.col("item") == "z").row(0) == ("z", 0, True)
    assert with_catalog.filter(pl.col("count") > 0).get_column("long_tail").sum() == 0
    # basis=interactions counts repeated rows.
    rep = pl.DataFrame({"user": [1, 1, 1, 2], "item": ["a", "a", "a", "b"]})
    assert prk.long_tail_items(rep, basis="interactions", head_share=0.7).get_column(
        "long_tail"
    ).to_list() == [False, True]
    assert prk.long_tail_items(rep, head_share=0.5).get_column("long_tail").to_list() == [
        False,
        True,
    ]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"head_share": 0.0}, ValueError, r"'head_share' of long_tail_items must be .*in \(0, 1\]"),
        ({"head_share": "x"}, TypeError, "'head_share' of long_tail_items must be a number"),
        ({"basis": "clicks"}, ValueError, "basis"),
        ({"user": "u"}, ValueError, "column 'u' not found in interactions"),
    ],
)
def test_long_tail_items_errors(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.long_tail_items(TRAIN, **kwargs)


RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 2, 3, 3],
        "item": ["a", "c", "d", "b", "e", "a", "d", "e"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [None, 1, 1, 1, None, None, 1, None],
    }
)


def test_aplt_aclt_by_hand() -> None:
    tail = prk.long_tail_items(TRAIN, head_share=0.5)  # tail: c, d, e
    got = per_user(RECS, "aplt@2", items=tail)
    # u1 top 2 a, c: 1/2; u2 b, e: 1/2; u3 d, e: 2/2.
    assert [got[u] for u in (1, 2, 3)] == pytest.approx([1 / 2, 1 / 2, 1.0])
    got = per_user(RECS, "aclt@3", items=tail)
    assert [got[u] for u in (1, 2, 3)] == pytest.approx([2.0, 1.0, 2.0])
    summary = prk.evaluate(RECS, ["aplt@2"], items=tail, users="all")
    assert summary.item(0, "aplt@2") == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)


def tied(seed: int) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = []
    for user in range(1, 5):
        for item in rng.sample("abcde", 4):
            rows.append(
                {
                    "user": user,
                    "item": item,
                    "score": float(rng.choice([1, 2, 2])),
                    "relevance": rng.choice([None, 1]),
                }
            )
    return pl.DataFrame(rows)


@pytest.mark.parametrize("metric", ["aplt@2", "aclt@3", "aplt"])
def test_aplt_aclt_expected_ties_match_brute_force(metric: str) -> None:
    df = tied(5)
    tail = prk.long_tail_items(TRAIN, head_share=0.5)
    got = per_user(df, metric, items=tail)
    want = brute_per_user(df, metric, items=tail)
    for user, value in want.items():
        assert got[user] == pytest.approx(value, abs=1e-12)


def test_aplt_ties_in_closed_form() -> None:
    # One user, 4 tied items, 2 long-tail: each is in the top 3 with probability 3/4.
    df = pl.DataFrame(
        {"user": [1] * 4, "item": ["a", "b", "c", "d"], "score": [1.0] * 4, "relevance": [1] * 4}
    )
    tail = prk.long_tail_items(TRAIN, head_share=0.5)
    assert per_user(df, "aclt@3", items=tail)[1] == pytest.approx(2 * 3 / 4)
    assert per_user(df, "aplt@3", items=tail)[1] == pytest.approx(2 * 3 / 4 / 3)


def test_reo_rsp_by_hand() -> None:
    tail = prk.long_tail_items(TRAIN, head_share=0.5)  # head a, b; tail c, d, e
    # REO@2: relevant rows u1 c (tail, in top 2), d (tail, rank 3); u2 b (head, top 2);
    # u3 d (tail, top 2). Head rate 1/1, tail 2/3: std / mean of (1, 2/3).
    rates = np.array([1.0, 2 / 3])
    out = prk.evaluate(RECS, ["reo@2"], items=tail)
    assert out.item(0, "reo@2") == pytest.approx(rates.std() / rates.mean())
    alias = prk.evaluate(RECS, ["pop_reo@2"], items=tail)
    assert alias.item(0, 0) == out.item(0, "reo@2")
    # RSP@2 over the 3 users: top-2 slots head: a (u1), b (u2) = 2, tail c, e, d, e = 4.
    # Candidates without history: 3 users x 2 head items, 3 x 3 tail items.
    out = prk.evaluate(RECS, ["rsp@2"], items=tail, users="recs")
    rates = np.array([2 / 6, 4 / 9])
    assert out.item(0, "rsp@2") == pytest.approx(rates.std() / rates.mean())
    # With the history: u1 saw a, b, c; u2 a, b, d; u3 a, b. No user has a head item
    # left to discover: the head group has no candidates and is left out; one group
    # left, std 0.
    out = prk.evaluate(RECS, ["rsp@2"], items=tail, users="recs", history=TRAIN)
    assert out.item(0, "rsp@2") == pytest.approx(0.0)
    # Head {a} only: a gets 1 slot of 3 candidates (nobody excluded without history);
    # the tail b, c, d, e gets 5 slots of 3 x 4.
    tail3 = prk.long_tail_items(TRAIN, head_share=0.3)
    out = prk.evaluate(RECS, ["rsp@2"], items=tail3, users="recs")
    rates = np.array([1 / 3, 5 / 12])
    assert out.item(0, "rsp@2") == pytest.approx(rates.std() / rates.mean())
    # With the history, the tail candidates drop by the tail items seen: u1 c, u2 d
    # (u3 none): 12 - 2 = 10; head a: seen by all, no candidates.
    out = prk.evaluate(RECS, ["rsp@2"], items=tail3, users="recs", history=TRAIN)
    assert out.item(0, "rsp@2") == pytest.approx(0.0)
    two = pl.DataFrame({"user": [1], "item": ["c"]})
    out = prk.evaluate(RECS, ["rsp@2"], items=tail3, users="recs", history=two)
    rates = np.array([1 / 3, 5 / 11])
    assert out.item(0, "rsp@2") == pytest.approx(rates.std() / rates.mean())


def elliot_reference(
    recs: dict[int, list[str]],
    test: dict[int, set[str]],
    train: dict[int, set[str]],
    head: set[str],
    tail: set[str],
    cutoff: int,
) -> tuple[float, float, float]:
    """Elliot's PopREO, PopRSP and APLT loops (elliot/evaluation/metrics/bias, transliterated)."""
    num, den = [], []
    for u, r in recs.items():
        rel = test.get(u, set())
        if len(rel):
            rec = {i for i in r[:cutoff] if i in rel}
            num.append([len(rec & head), len(rec & tail)])
            den.append([len((head & rel) - train[u]), len((tail & rel) - train[u])])
    pr = np.sum(np.array(num), axis=0) / np.sum(np.array(den), axis=0)
    reo = float(np.std(pr) / np.mean(pr))
    num, den = [], []
    for u, r in recs.items():
        rec = set(r[:cutoff])
        num.append([len(rec & head), len(rec & tail)])
        den.append([len(head - train[u]), len(tail - train[u])])
    pr = np.sum(np.array(num), axis=0) / np.sum(np.array(den), axis=0)
    rsp = float(np.std(pr) / np.mean(pr))
    aplt = float(np.mean([len(set(r[:cutoff]) & tail) / len(r[:cutoff]) for r in recs.values()]))
    return reo, rsp, aplt


@pytest.mark.parametrize("seed", range(3))
def test_matches_elliot_code(seed: int) -> None:
    rng = random.Random(seed)
    items = [f"i{j:02d}" for j in range(30)]
    weights = [1 / (j + 1) for j in range(30)]
    train_rows, rec_rows, test_rows = [], [], []
    train: dict[int, set[str]] = {}
    recs: dict[int, list[str]] = {}
    test: dict[int, set[str]] = {}
    for u in range(40):
        seen = set(rng.choices(items, weights, k=rng.randint(3, 10)))
        train[u] = seen
        train_rows += [{"user": u, "item": i} for i in seen]
        unseen = [i for i in items if i not in seen]
        recs[u] = rng.sample(unseen, 6)
        test[u] = set(rng.sample(unseen, 4))
        rec_rows += [{"user": u, "item": i, "score": float(6 - r)} for r, i in enumerate(recs[u])]
        test_rows += [{"user": u, "item": i, "relevance": 1} for i in test[u]]
    train_df = pl.DataFrame(train_rows)
    tail_df = prk.long_tail_items(train_df, catalog=pl.Series(items))
    known = set(train_df.get_column("item"))
    # Elliot's groups hold the training items only; keep recommendations among them.
    for u in recs:
        recs[u] = [i for i in recs[u] if i in known]
        test[u] = {i for i in test[u] if i in known}
    tail_set = set(tail_df.filter(pl.col("long_tail") & pl.col("item").is_in(known))["item"])
    head_set = known - tail_set
    recs_df = pl.DataFrame(rec_rows).filter(pl.col("item").is_in(known))
    test_df = pl.DataFrame(test_rows).filter(pl.col("item").is_in(known))
    data = prk.join(recs_df, test_df, relevance="relevance")
    groups = tail_df.filter(pl.col("item").is_in(known))
    reo, rsp, aplt = elliot_reference(recs, test, train, head_set, tail_set, 5)
    got = prk.evaluate(data, ["reo@5"], items=groups, users="truth")
    assert got.item(0, "reo@5") == pytest.approx(reo, rel=1e-12)
    got = prk.evaluate(data, ["rsp@5", "aplt@5"], items=groups, users="recs", history=train_df)
    assert got.item(0, "rsp@5") == pytest.approx(rsp, rel=1e-12)
    assert got.item(0, "aplt@5") == pytest.approx(aplt, rel=1e-12)


def test_group_exposure_and_ratio_by_hand() -> None:
    items = pl.DataFrame({"item": ["a", "b", "c", "d", "e"], "provider": ["p", "p", "q", "q", "r"]})
    # Top 2 slots: u1 a, c; u2 b, e; u3 d, e. p: 2, q: 2, r: 2 of 6.
    out = prk.evaluate(
        RECS,
        [
            "group_exposure(group=provider,level=p)@2",
            "exposure_ratio(group=provider,numerator=p,denominator=r)@2",
            "exposure_ratio(group=provider,numerator=p,denominator=r,per_item=true)@2",
            "group_exposure(group=provider,level=p,discount=log)@2",
        ],
        items=items,
        users="all",
    )
    assert out.item(0, 0) == pytest.approx(2 / 6)
    assert out.item(0, 1) == pytest.approx(2 / 2)
    assert out.item(0, 2) == pytest.approx((2 / 2) / (2 / 1))
    # Log discount: rank 1 weighs 1, rank 2 1/log2(3): p gets a (1) and b (1).
    w = 1 / np.log2(3)
    assert out.item(0, 3) == pytest.approx(2 / (3 * (1 + w)))


def test_group_exposure_expected_ties() -> None:
    # One user, 4 tied items, 2 of group p, top 2: E[p's exposure] = 2 x 1/2 = 1 of 2.
    df = pl.DataFrame(
        {
            "user": [1] * 4 + [2] * 2,
            "item": ["a", "b", "c", "d", "a", "c"],
            "score": [1.0] * 4 + [2.0, 1.0],
            "relevance": [1] * 6,
        }
    )
    items = pl.DataFrame({"item": ["a", "b", "c", "d"], "g": ["p", "p", "q", "q"]})
    out = prk.evaluate(df, ["group_exposure(group=g,level=p)@2"], items=items)
    assert out.item(0, 0) == pytest.approx((1 + 1) / 4)
    out = prk.evaluate(df, ["group_exposure(group=g,level=p)@1"], items=items)
    assert out.item(0, 0) == pytest.approx((1 / 2 + 1) / 2)


def test_by_groups_and_buckets() -> None:
    tail = prk.long_tail_items(TRAIN, head_share=0.5)
    df = pl.concat([RECS.with_columns(system=pl.lit(s)) for s in ("x", "y")])
    metrics = ["reo@2", "rsp@2", "aplt@2", "group_exposure(group=long_tail)@2"]
    mem = prk.evaluate(df, metrics, by="system", items=tail, history=TRAIN, users="recs")
    buckets = prk.evaluate(
        df,
        metrics,
        by="system",
        items=tail,
        history=TRAIN,
        users="recs",
        engine=prk.Buckets(n_buckets=3),
    )
    single = prk.evaluate(RECS, metrics, items=tail, history=TRAIN, users="recs")
    for name in metrics:
        assert buckets.get_column(name).to_list() == pytest.approx(mem.get_column(name).to_list())
        assert mem.item(0, name) == pytest.approx(single.item(0, name))


def test_errors() -> None:
    tail = prk.long_tail_items(TRAIN, head_share=0.5).filter(pl.col("item") != "e")
    with pytest.raises(
        ValueError,
        match=r"metric 'aplt': 2 item\(s\) .* no true/false value in column 'long_tail'"
        r".* e.g. item \['e'\]",
    ):
        prk.evaluate(RECS, ["aplt@2"], items=tail)
    with pytest.raises(ValueError, match=r"metric 'reo': 2 counted item row\(s\) have no group"):
        prk.evaluate(RECS.with_columns(relevance=pl.lit(1)), ["reo@2"], items=tail)
    with pytest.raises(ValueError, match="reads the item side table: pass items="):
        prk.evaluate(RECS.with_columns(long_tail=pl.lit(True)), ["rsp@2"])
    with pytest.raises(ValueError, match="no item of items= has provider = 'zz'"):
        prk.evaluate(
            RECS,
            ["exposure_ratio(group=provider,numerator=zz,per_item=true)@2"],
            items=pl.DataFrame({"item": ["a"], "provider": ["p"]}),
        )


def test_elliot_preset() -> None:
    tail = prk.long_tail_items(TRAIN, head_share=0.5)
    out = prk.evaluate(
        RECS,
        ["APLT@2", "PopRSP@2"],
        conventions="elliot",
        items=tail,
        history=TRAIN,
        users="recs",
    )
    assert out.item(0, 0) == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)
    assert out.item(0, 1) == pytest.approx(0.0)  # head candidates: none (see above)


def test_aplt_aclt_from_history_alone() -> None:
    """Without a long_tail column, history= gives the long tail."""
    train = pl.DataFrame({"user": [1, 2, 3, 1, 2, 3], "item": ["a", "a", "a", "b", "b", "c"]})
    recs = pl.DataFrame(
        {
            "user": [1, 1, 2, 2],
            "item": ["a", "c", "a", "z"],
            "score": [2.0, 1.0, 2.0, 1.0],
            "relevance": [None, 1, 1, None],
        }
    )
    names = ["aplt@2", "aclt@2", "aplt(head_share=0.5)@2"]
    got = prk.evaluate(recs, names, history=train, per_user=True).sort("user")
    # head_share 0.8 of the 6 pairs: a (3) and b (2) before reaching 4.8, c and the
    # cold z are the tail: user 1 {a, c} -> 1/2, user 2 {a, z} -> 1/2
    assert got["aplt@2"].to_list() == pytest.approx([1 / 2, 1 / 2])
    assert got["aclt@2"].to_list() == pytest.approx([1.0, 1.0])
    # the recipe with long_tail_items gives the same (z, outside it, in the catalog)
    tail = prk.long_tail_items(train, catalog=pl.Series(["a", "b", "c", "z"]))
    recipe = prk.evaluate(recs, names[:2], items=tail, per_user=True).sort("user")
    assert recipe["aplt@2"].to_list() == got["aplt@2"].to_list()
    half = prk.long_tail_items(train, head_share=0.5, catalog=pl.Series(["a", "b", "c", "z"]))
    recipe = prk.evaluate(recs, ["aplt@2"], items=half, per_user=True).sort("user")
    assert recipe["aplt@2"].to_list() == got["aplt(head_share=0.5)@2"].to_list()
    with pytest.raises(ValueError, match=r"pass history= .*or items=long_tail_items"):
        prk.evaluate(recs, ["aplt@2"])

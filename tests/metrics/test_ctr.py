"""Off-policy CTR (matching, IPS, doubly robust): by hand, with ties, against Jurity.

The long frame holds recommendations (rows with a score) and logged interactions (rows
with a relevance: the reward), with the propensity and a predicted reward as columns.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from tests._engines import engine_of

# user 1: items 10 (0.9, click, p .5), 11 (0.6, no click, p .25), 12 (0.2, no log)
# user 2: item 10 (0.8, no log), item 13 logged (click, p .5) but not recommended
LONG = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2],
        "item": [10, 11, 12, 10, 13],
        "score": [0.9, 0.6, 0.2, 0.8, None],
        "relevance": [1, 0, None, None, 1],
        "propensity": [0.5, 0.25, None, None, 0.5],
        "p_click": [0.6, 0.2, 0.1, 0.3, None],
    }
)
DR = "ctr(estimation=dr,predicted=p_click)"


def values(df: pl.DataFrame, metrics: list[str], **kwargs: object) -> dict[str, float]:
    out = prk.evaluate(df, metrics, users="recs", **kwargs)  # type: ignore[arg-type]
    return {m: out.item(0, prk.parse_metric(m).name) for m in metrics}


def test_hand_computed_top_2() -> None:
    got = values(LONG, ["ctr@2", "ctr(estimation=ips)@2", f"{DR}@2", "ctr(estimation=dr)@2"])
    # T = {u1:10, u1:11, u2:10}, M = {u1:10, u1:11}
    assert got["ctr@2"] == pytest.approx((1 + 0) / 2)
    assert got["ctr(estimation=ips)@2"] == pytest.approx((1 / 0.5 + 0 / 0.25) / 3)
    assert got[f"{DR}@2"] == pytest.approx(
        (0.6 + 0.2 + 0.3 + (1 - 0.6) / 0.5 + (0 - 0.2) / 0.25) / 3
    )
    # predicted reward defaults to the score (Jurity's predicted click)
    assert got["ctr(estimation=dr)@2"] == pytest.approx(
        (0.9 + 0.6 + 0.8 + (1 - 0.9) / 0.5 + (0 - 0.6) / 0.25) / 3
    )


def test_hand_computed_cutoffs() -> None:
    # @1: T = {u1:10, u2:10}, M = {u1:10}
    got = values(LONG, ["ctr@1", "ctr(estimation=ips)@1", f"{DR}@1"])
    assert got["ctr@1"] == pytest.approx(1.0)
    assert got["ctr(estimation=ips)@1"] == pytest.approx((1 / 0.5) / 2)
    assert got[f"{DR}@1"] == pytest.approx((0.6 + 0.3 + (1 - 0.6) / 0.5) / 2)
    # no cutoff: T adds u1:12 (no log), M unchanged
    got = values(LONG, ["ctr", "ctr(estimation=ips)", DR])
    assert got["ctr"] == pytest.approx(0.5)
    assert got["ctr(estimation=ips)"] == pytest.approx((1 / 0.5) / 4)
    assert got[DR] == pytest.approx((0.6 + 0.2 + 0.1 + 0.3 + 0.8 - 0.8) / 4)


def test_graded_rewards_and_users_universe() -> None:
    df = LONG.with_columns(pl.col("relevance") * 3)  # rewards 3 and 0
    assert values(df, ["ctr@2"])["ctr@2"] == pytest.approx(3 / 2)
    # users="truth" (default) keeps users with a logged interaction: user 2 has one (13)
    assert prk.evaluate(df, "ctr(estimation=ips)@2").item(0, 0) == pytest.approx(6 / 3)
    only_1 = prk.evaluate(df, "ctr(estimation=ips)@2", users=[1]).item(0, 0)
    assert only_1 == pytest.approx((3 / 0.5) / 2)


def test_undefined_without_matches_or_recommendations() -> None:
    no_match = LONG.filter(pl.col("user") == 2)
    got = prk.evaluate(no_match, ["ctr@1", "ctr(estimation=ips)@1"], users="all")
    assert got.item(0, "ctr@1") is None  # M empty
    assert got.item(0, "ctr(estimation=ips)@1") == 0.0  # T = {u2:10}, nothing matched
    zero = prk.evaluate(no_match, "ctr@1", users="all", empty="zero")
    assert zero.item(0, "ctr@1") == 0.0
    with pytest.raises(ValueError, match="undefined for 1 by group"):
        prk.evaluate(no_match, "ctr@1", users="all", empty="error")


def test_by_groups() -> None:
    a = LONG.with_columns(system=pl.lit("a"))
    b = LONG.with_columns(system=pl.lit("b"), score=-pl.col("score"))  # reversed lists
    got = prk.evaluate(pl.concat([a, b]), ["ctr@1", "ctr(estimation=ips)@1"], by="system")
    # b's top 1: u1 -> 12 (no log), u2 -> 10 (no log): M empty, IPS 0
    assert got.get_column("system").to_list() == ["a", "b"]
    assert got.get_column("ctr@1").to_list() == [1.0, None]
    assert got.get_column("ctr(estimation=ips)@1").to_list() == pytest.approx([1.0, 0.0])


# Ties: user 1 scores items 10, 11, 12 equally; top 2 takes two of the three.
TIED = LONG.with_columns(
    score=pl.when(pl.col("user") == 1).then(0.5).otherwise(pl.col("score")),
)


def test_ties_expected_ips_and_dr_are_exact_expectations() -> None:
    got = values(TIED, ["ctr(estimation=ips)@2", f"{DR}@2", "ctr@2"])
    # each of u1's items is in the top 2 with probability 2/3; |T| = 2 + 1 always
    ips = (2 / 3) * (1 / 0.5 + 0 / 0.25) / 3
    dr = ((2 / 3) * (0.6 + 0.2 + 0.1 + (1 - 0.6) / 0.5 + (0 - 0.2) / 0.25) + 0.3) / 3
    assert got["ctr(estimation=ips)@2"] == pytest.approx(ips)
    assert got[f"{DR}@2"] == pytest.approx(dr)
    # matching: the ratio of the expected sums, E[sum r] / E[|M|] = (2/3) / (4/3)
    assert got["ctr@2"] == pytest.approx((2 / 3 * 1) / (2 / 3 * 2))
    # the exact expectations by brute force over the 3 top-2 sets of user 1
    tops = list(itertools.combinations([10, 11, 12], 2))
    reward, prop, pred = {10: 1, 11: 0}, {10: 0.5, 11: 0.25}, {10: 0.6, 11: 0.2, 12: 0.1}
    ips_bf = np.mean([sum(reward.get(i, 0) / prop.get(i, 1) for i in t) / 3 for t in tops])
    dr_bf = np.mean(
        [
            (
                0.3
                + sum(
                    pred[i] + ((reward[i] - pred[i]) / prop[i] if i in reward else 0.0) for i in t
                )
            )
            / 3
            for t in tops
        ]
    )
    assert got["ctr(estimation=ips)@2"] == pytest.approx(ips_bf)
    assert got[f"{DR}@2"] == pytest.approx(dr_bf)


@pytest.mark.parametrize(
    ("ties", "top"),
    [("item_asc", (10, 11)), ("item_desc", (12, 11)), ("optimistic", (10, 11))],
)
def test_ties_deterministic(ties: str, top: tuple[int, int]) -> None:
    got = values(TIED, ["ctr@2", "ctr(estimation=ips)@2"], ties=ties)
    reward, prop = {10: 1, 11: 0}, {10: 0.5, 11: 0.25}
    matched = [i for i in top if i in reward]
    assert got["ctr@2"] == pytest.approx(sum(reward[i] for i in matched) / len(matched))
    assert got["ctr(estimation=ips)@2"] == pytest.approx(
        sum(reward[i] / prop[i] for i in matched) / 3
    )


def test_propensity_only_needed_on_matched_rows() -> None:
    # a null propensity on an unmatched or out-of-top-k row is fine
    df = LONG.with_columns(
        pl.when(pl.col("item") == 13).then(None).otherwise("propensity").alias("propensity")
    )
    assert values(df, ["ctr(estimation=ips)@2"])["ctr(estimation=ips)@2"] == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("change", "metric", "error", "match"),
    [
        (
            pl.when(pl.col("item") == 11).then(None).otherwise("propensity").alias("propensity"),
            "ctr(estimation=ips)@2",
            ValueError,
            r"1 logged interaction\(s\) in a top 2 have a missing or invalid propensity "
            r"\(column 'propensity' must be in \(0, 1\]\); e.g. of user\(s\) \[1\]",
        ),
        (
            pl.when(pl.col("item") == 10).then(0.0).otherwise("propensity").alias("propensity"),
            "ctr(estimation=dr)@2",
            ValueError,
            "missing or invalid propensity",
        ),
        (
            pl.col("propensity") + 1,
            "ctr(estimation=ips)@2",
            ValueError,
            r"2 logged interaction\(s\)",
        ),
        (
            pl.when(pl.col("item") == 10)
            .then(float("nan"))
            .otherwise("propensity")
            .alias("propensity"),
            "ctr(estimation=ips)",
            ValueError,
            "invalid propensity",
        ),
        (
            pl.when(pl.col("user") == 2).then(None).otherwise("p_click").alias("p_click"),
            f"{DR}@2",
            ValueError,
            r"1 recommendation\(s\) in a top 2 have a missing or non-finite predicted reward "
            r"\(column 'p_click'\); e.g. of user\(s\) \[2\]",
        ),
        (pl.lit(1).alias("other"), "ctr(estimation=ips,propensity=prop)", ValueError, "'prop'"),
        (pl.lit(1).alias("other"), "ctr(estimation=dr,predicted=x)", ValueError, "column 'x'"),
        (pl.lit(1).alias("other"), "ctr(estimation=ips,predicted=p_click)", ValueError, "only"),
        (pl.lit(1).alias("other"), "ctr(propensity=p)", ValueError, "only applies to"),
        (pl.lit(1).alias("other"), "ctr(estimation=snips)", ValueError, "must be one of"),
    ],
)
def test_errors(change: pl.Expr, metric: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        prk.evaluate(LONG.with_columns(change), metric, users="recs")


def test_missing_propensity_column_is_named() -> None:
    with pytest.raises(ValueError, match=r"column 'propensity' .* not found in the data"):
        prk.evaluate(LONG.drop("propensity"), "ctr(estimation=ips)@2")
    prk.evaluate(LONG.drop("propensity"), "ctr@2")  # matching does not read it


def test_dr_with_ranks_needs_a_predicted_column() -> None:
    ranked = LONG.with_columns(rank=pl.col("score").rank(descending=True).over("user"))
    ranked = ranked.drop("score")
    with pytest.raises(ValueError, match="pass predicted="):
        prk.evaluate(ranked, "ctr(estimation=dr)@2", rank="rank")
    got = prk.evaluate(ranked, f"{DR}@2", rank="rank", users="recs").item(0, 0)
    assert got == pytest.approx(values(LONG, [f"{DR}@2"])[f"{DR}@2"])


def random_logs(seed: int, n_users: int = 60) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recommendations (distinct scores) and logs (click, propensity) over 40 items."""
    rng = np.random.default_rng(seed)
    recs, logs = [], []
    for user in range(n_users):
        for item in rng.choice(40, size=int(rng.integers(1, 9)), replace=False):
            recs.append((user, int(item), float(rng.random())))
        for item in rng.choice(40, size=int(rng.integers(0, 12)), replace=False):
            logs.append((user, int(item), int(rng.random() < 0.4), float(rng.uniform(0.05, 1))))
    recs_df = pl.DataFrame(recs, schema=["user", "item", "score"], orient="row")
    logs_df = pl.DataFrame(logs, schema=["user", "item", "click", "propensity"], orient="row")
    return recs_df, logs_df


def long_frame(recs: pl.DataFrame, logs: pl.DataFrame) -> pl.DataFrame:
    return recs.join(
        logs.rename({"click": "relevance"}), on=["user", "item"], how="full", coalesce=True
    )


def brute_force(recs: pl.DataFrame, logs: pl.DataFrame, k: int, estimation: str) -> float:
    top = recs.sort("score", descending=True).group_by("user", maintain_order=True).head(k)
    log = {(u, i): (c, p) for u, i, c, p in logs.iter_rows()}
    matched, ips, dr = [], 0.0, 0.0
    for user, item, score in top.iter_rows():
        if (user, item) in log:
            click, prop = log[(user, item)]
            matched.append(click)
            ips += click / prop
            dr += score + (click - score) / prop
        else:
            dr += score
    if estimation == "matching":
        return sum(matched) / len(matched)
    return (ips if estimation == "ips" else dr) / top.height


@pytest.mark.parametrize("estimation", ["matching", "ips", "dr"])
@pytest.mark.parametrize("k", [1, 3, None])
def test_random_against_brute_force(estimation: str, k: int | None) -> None:
    recs, logs = random_logs(5)
    metric = f"ctr(estimation={estimation})" + (f"@{k}" if k else "")
    got = prk.evaluate(long_frame(recs, logs), metric, users="recs").item(0, 0)
    assert got == pytest.approx(brute_force(recs, logs, k or 99, estimation), rel=1e-12)


@pytest.mark.parametrize("k", [2, 5])
def test_bucket_invariance_with_by(k: int) -> None:
    frames = []
    for seed, system in ((1, "a"), (2, "b")):
        frames.append(long_frame(*random_logs(seed)).with_columns(system=pl.lit(system)))
    df = pl.concat(frames).with_columns(pl.col("score").round(1))  # ties
    metrics = [f"ctr@{k}", f"ctr(estimation=ips)@{k}", f"ctr(estimation=dr)@{k}"]
    options = {"by": "system", "users": "recs"}
    expected = prk.evaluate(df, metrics, engine="memory", **options)  # type: ignore[arg-type]
    for strategy in ("buckets", "partition"):
        got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=3), **options)  # type: ignore[arg-type]
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # Jurity's pandas inplace fillna
@pytest.mark.parametrize("estimation", ["matching", "ips", "dr"])
@pytest.mark.parametrize("k", [1, 3])
def test_matches_jurity(estimation: str, k: int) -> None:
    jurity = pytest.importorskip("jurity.recommenders")
    recs, logs = random_logs(11)
    metric = jurity.CTR(
        click_column="click",
        k=k,
        user_id_column="user",
        item_id_column="item",
        estimation=estimation,
        propensity_column="propensity",
    )
    expected = metric.get_score(logs.to_pandas(), recs.rename({"score": "click"}).to_pandas())
    got = prk.evaluate(
        long_frame(recs, logs), f"ctr(estimation={estimation})@{k}", users="recs"
    ).item(0, 0)
    assert got == pytest.approx(float(expected), rel=1e-12)
    assert math.isfinite(got)

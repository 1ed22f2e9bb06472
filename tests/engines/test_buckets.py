"""Bucketed (out-of-core) evaluation equals the in-memory engine, whatever the buckets.

Each user is computed from its own rows by the same plan, so values agree up to the
rounding of floating-point sums, whose order follows Polars' chunking and threads
(also between two in-memory runs on shuffled rows): compared at 1e-13 relative.

Tests the private unit polars_rankeval.engines.buckets on purpose (choose, parse_memory).
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval.engines.buckets import choose, parse_memory
from polars_rankeval.metrics.registry import registered
from tests._engines import engine_of
from tests._reference import random_frame


def assert_same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """Equal up to floating-point rounding (see the module docstring)."""
    assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-13, abs_tol=1e-15)


SPECS = registered()


def every_metric() -> list[str]:
    """One instance of every registered metric (with @3 where it takes a cutoff)."""
    return [f"{name}@3" if spec.takes_k else name for name, spec in SPECS.items()]


def systems_frame(seed: int = 3, n_users: int = 40) -> pl.DataFrame:
    """Two systems over the same users, string user ids, heavy ties, empty users."""
    a = random_frame(seed, n_users=n_users).with_columns(system=pl.lit("a"))
    b = random_frame(seed + 1, n_users=n_users).with_columns(system=pl.lit("b"))
    return pl.concat([a, b]).with_columns(pl.format("u{}", "user").alias("user"))


def metrics_for(ties: str) -> list[str]:
    # Item metrics (one row per item, per_item=True) have their own bucket tests.
    return [
        m
        for m in every_metric()
        if ties in SPECS[m.split("@")[0]].tie_policies and SPECS[m.split("@")[0]].scope != "item"
    ]


def side_table(df: pl.DataFrame) -> pl.DataFrame:
    """The items= columns that metrics read by default: popularity, features, seen, subtopics."""
    items = df.select(pl.col("item").unique().sort())
    return items.with_columns(
        popularity=(pl.col("item") % 7 + 1) / 8,
        features=pl.concat_list((pl.col("item") % 3).cast(pl.Float64), pl.col("item") % 5 - 2.0),
        seen=pl.col("item") % 2 == 0,
        categories=pl.concat_list(pl.format("g{}", pl.col("item") % 3), pl.lit("h")),
        long_tail=pl.col("item") % 3 == 0,
        group=pl.col("item") % 4 == 0,
        base_rank=pl.col("item") % 5 + 1,
        category=pl.col("item") % 3,  # categorical_diversity
        # the intent-aware metrics' judgments (tests/metrics/test_intent.py)
        subtopics=pl.concat_list(
            pl.struct(subtopic=pl.col("item") % 3, relevance=pl.lit(1)),
            pl.struct(subtopic=3 + pl.col("item") % 2, relevance=pl.col("item") % 4 // 2),
        ),
    )


def history(df: pl.DataFrame) -> pl.DataFrame:
    """Past interactions (history=): some of the users' items, some users without any."""
    return df.select("user", "item").unique().filter(pl.col("item") % 3 != 1).sort("user", "item")


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
@pytest.mark.parametrize("per_user", [False, True])
@pytest.mark.parametrize(("strategy", "k"), [("buckets", 1), ("buckets", 3), ("partition", 7)])
def test_buckets_equal_memory_for_every_metric(
    ties: str, per_user: bool, strategy: str, k: int
) -> None:
    df = systems_frame()
    metrics = metrics_for(ties)
    if per_user:
        metrics = [m for m in metrics if SPECS[m.split("@")[0]].scope == "user"]
    options = {"ties": ties, "by": "system", "per_user": per_user, "n_items": 60}
    options["items"] = side_table(df)
    options["history"] = history(df)
    expected = prk.evaluate(df, metrics, engine="memory", **options)
    got = prk.evaluate(df, metrics, engine=engine_of(strategy, n_buckets=k), **options)
    assert_same(got, expected)


USER_FORMS = {
    "truth": "truth",
    "recs": "recs",
    "both": "both",
    "all": "all",
    "list": ["u1", "u5", "u22", "nobody", "u1"],  # an id absent from the data, a repeat
    "series": pl.Series("user", ["u3", "u7", "absent"]),
    "frame": pl.DataFrame({"user": ["u2", "u9", "u11", "missing"]}),
}


@pytest.mark.parametrize("users", list(USER_FORMS))
@pytest.mark.parametrize("by", [None, "system"])
@pytest.mark.parametrize("strategy", ["buckets", "partition"])
def test_every_user_form_equals_memory(users: str, by: str | None, strategy: str) -> None:
    # 12 buckets for 8 users: most buckets hold one user or none, so only some
    # by values (the list must still be crossed with every by value of the input).
    df = systems_frame(11, n_users=8)
    # System b misses some users, so the buckets holding them see only system a.
    df = df.filter((pl.col("system") == "a") | ~pl.col("user").is_in(["u1", "u3", "u9", "u2"]))
    if by is None:
        df = df.filter(pl.col("system") == "a").drop("system")
    options = {"by": by, "users": USER_FORMS[users], "n_items": 60}
    metrics = ["ndcg@5", "map", "mrr@3", "recall@2", "num_rel", "coverage@2", "gini@3"]
    for per_user in (False, True):
        wanted = metrics[:5] if per_user else metrics
        expected = prk.evaluate(df, wanted, per_user=per_user, engine="memory", **options)
        got = prk.evaluate(
            df, wanted, per_user=per_user, engine=engine_of(strategy, n_buckets=12), **options
        )
        assert_same(got, expected)
    if not isinstance(USER_FORMS[users], str):
        listed = USER_FORMS[users]
        ids = listed.get_column("user") if isinstance(listed, pl.DataFrame) else listed
        n_listed = len(set(ids))  # ids absent from the data included
        assert expected.height == n_listed * (2 if by else 1)


@pytest.mark.parametrize("users", ["truth", ["u1", "u5", "nobody"]])
@pytest.mark.parametrize("empty", ["skip", "zero"])
def test_user_universes_and_empty_policies(users: object, empty: str) -> None:
    df = systems_frame(11)
    options = {"by": ["system"], "users": users, "empty": empty}
    metrics = ["ndcg@5", "map", "mrr@3", "recall@2", "num_rel"]
    for per_user in (False, True):
        expected = prk.evaluate(df, metrics, per_user=per_user, engine="memory", **options)
        got = prk.evaluate(
            df, metrics, per_user=per_user, engine=prk.Buckets(n_buckets=5), **options
        )
        assert_same(got, expected)


def test_aggregations_are_bucket_invariant() -> None:
    df = random_frame(5, n_users=60)
    aggs = ["mean", "gmean", "hmean", "qmean", "median", "std"]
    expected = prk.evaluate(df, ["ndcg@3", "map"], aggregate=aggs, engine="memory")
    got = prk.evaluate(df, ["ndcg@3", "map"], aggregate=aggs, engine=prk.Partition(n_buckets=4))
    assert_same(got, expected)


def test_parquet_scan_with_a_small_budget_is_bucketed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    df = random_frame(8, n_users=200)
    for i, part in enumerate(df.partition_by("user", as_dict=False)[:150:50]):
        part.write_parquet(tmp_path / f"part{i}.parquet")
    df.write_parquet(tmp_path / "all.parquet")
    lf = pl.scan_parquet(tmp_path / "all.parquet")
    expected = prk.evaluate(lf, ["ndcg@3", "precision@2"], engine="memory").collect()
    got = prk.evaluate(
        lf, ["ndcg@3", "precision@2"], engine=prk.Auto(memory_limit="20kB", progress=True)
    )
    assert isinstance(got, pl.LazyFrame)  # LazyFrame in, LazyFrame out
    assert_same(got.collect(), expected)
    err = capsys.readouterr().err
    assert "buckets to" in err  # the partition strategy was chosen
    assert "bucket 1/" in err or "bucket" in err


def test_glob_of_files(tmp_path: Path) -> None:
    df = random_frame(9, n_users=30)
    users = df.get_column("user").unique().sort().to_list()
    for i, chunk in enumerate((users[:10], users[10:20], users[20:])):
        df.filter(pl.col("user").is_in(chunk)).write_csv(tmp_path / f"run{i}.csv")
    lf = pl.scan_csv(tmp_path / "run*.csv")
    expected = prk.evaluate(df, ["map", "ndcg@3"])
    got = prk.evaluate(lf, ["map", "ndcg@3"], engine=prk.Partition(n_buckets=3)).collect()
    assert_same(got, expected)


def test_temporary_files_are_removed_on_success_and_on_error(tmp_path: Path) -> None:
    df = random_frame(4, n_users=50)
    work = tmp_path / "work"
    work.mkdir()
    prk.evaluate(df, "map", engine=prk.Partition(n_buckets=4, temp_dir=work))
    assert os.listdir(work) == []
    bad = pl.concat([df, df.head(1)])  # a duplicate (user, item) row
    with pytest.raises(ValueError, match="share a"):
        prk.evaluate(bad, "map", engine=prk.Partition(n_buckets=4, temp_dir=work))
    assert os.listdir(work) == []


def test_validation_runs_per_bucket() -> None:
    df = random_frame(4, n_users=20).with_columns(
        pl.when(pl.col("user") == 7).then(float("nan")).otherwise(pl.col("score")).alias("score")
    )
    with pytest.raises(ValueError, match="NaN or infinite"):
        prk.evaluate(df, "map", engine=prk.Buckets(n_buckets=3))
    prk.evaluate(df.filter(pl.col("user") != 7), "map", engine=prk.Buckets(n_buckets=3))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4GB", 4 * 10**9),
        ("512 MiB", 512 * 2**20),
        ("2.5gb", int(2.5 * 10**9)),
        (1024, 1024),
        ("100", 100),
    ],
)
def test_parse_memory(text: str | int, expected: int) -> None:
    assert parse_memory(text) == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"memory_limit": "lots"}, ValueError, "cannot read memory_limit 'lots'"),
        ({"memory_limit": -5}, ValueError, "memory_limit must be positive"),
        ({"memory_limit": 1.5}, TypeError, "memory_limit must be a number of bytes"),
        ({"n_buckets": 0}, ValueError, "n_buckets must be a positive integer, got 0"),
    ],
)
@pytest.mark.parametrize("engine", [prk.Auto, prk.Buckets, prk.Partition])
def test_bad_options(
    kwargs: dict[str, object], error: type[Exception], match: str, engine: Any
) -> None:
    if "n_buckets" in kwargs and engine is prk.Auto:
        return  # Auto has no bucket count
    with pytest.raises(error, match=match):
        engine(**kwargs)


def test_bad_engine_name() -> None:
    with pytest.raises(ValueError, match=r"^argument 'engine' of evaluate must be one of \['auto'"):
        prk.evaluate(random_frame(1), "map", engine="disk")  # type: ignore[arg-type]


def test_choose_picks_strategy_and_buckets_from_the_budget() -> None:
    base = {"n_metrics": 5, "n_buckets": None}
    per_row = 200 + 16 * 5
    assert choose("auto", n_rows=1000, memory_limit=10**9, in_memory_input=False, **base) == (
        "memory",
        1,
    )
    limit = 100 * per_row
    assert choose("auto", n_rows=1000, memory_limit=limit, in_memory_input=False, **base) == (
        "partition",
        10,
    )
    assert choose("auto", n_rows=1000, memory_limit=limit, in_memory_input=True, **base) == (
        "buckets",
        10,
    )
    assert choose("auto", n_rows=150, memory_limit=limit, in_memory_input=False, **base) == (
        "buckets",
        2,
    )
    assert choose("memory", n_rows=None, memory_limit=1, in_memory_input=False, **base) == (
        "memory",
        1,
    )


def test_the_sorted_head_path_has_its_own_estimate() -> None:
    base = {"n_buckets": None, "in_memory_input": False, "head": True}
    # 180 bytes per row whatever the number of metrics: 1000 rows need 180,000 bytes
    for n_metrics in (1, 5, 30):
        assert choose("auto", n_rows=1000, n_metrics=n_metrics, memory_limit=180_000, **base) == (
            "memory",
            1,
        )
        assert choose("auto", n_rows=1000, n_metrics=n_metrics, memory_limit=18_000, **base) == (
            "partition",
            10,
        )
    # 10**9 rows in 2 GB: 1.8e11 / 2e9 = 90 buckets (280 bytes per row: 140)
    assert choose("auto", n_rows=10**9, n_metrics=5, memory_limit=2 * 10**9, **base) == (
        "partition",
        90,
    )
    base["head"] = False
    assert choose("auto", n_rows=10**9, n_metrics=5, memory_limit=2 * 10**9, **base) == (
        "partition",
        140,
    )


def test_auto_uses_the_head_estimate_for_head_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    df = tied_frame(24, n_users=40).drop("system").unique(["user", "item"])
    df.write_parquet(tmp_path / "run.parquet")
    lf = pl.scan_parquet(tmp_path / "run.parquet")
    limit = df.height * 180 // 4 + 1  # 4 buckets at 180 bytes/row
    prk.evaluate(lf, HEAD_SUITE, engine=prk.Auto(memory_limit=limit, progress=True)).collect()
    assert "writing the input in 4 buckets" in capsys.readouterr().err
    # off the head path (ndcg has no cutoff): 200 + 16 x 2 metrics = 232 bytes/row
    k = math.ceil(df.height * 232 / limit)
    assert k == 6
    prk.evaluate(
        lf, ["map@3", "ndcg"], engine=prk.Auto(memory_limit=limit, progress=True)
    ).collect()
    assert f"writing the input in {k} buckets" in capsys.readouterr().err


def test_memory_strategy_keeps_a_lazyframe_lazy() -> None:
    lf = random_frame(2).lazy()
    out = prk.evaluate(lf, "map", engine="memory", validate=False)
    assert isinstance(out, pl.LazyFrame)


def test_temporary_files_are_removed_on_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars_rankeval.engines.buckets as _outofcore

    calls = []
    real = _outofcore.value_checks

    def interrupt_in_second_bucket(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_outofcore, "value_checks", interrupt_in_second_bucket)
    with pytest.raises(KeyboardInterrupt):
        prk.evaluate(
            random_frame(2, n_users=30), "map", engine=prk.Partition(n_buckets=4, temp_dir=tmp_path)
        )
    assert len(calls) == 2
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("options", "buckets"),
    [
        ({"engine": prk.Auto(memory_limit=1)}, 3),  # 3 rows x 216 bytes / 1 byte: 648 before
        ({"engine": prk.Buckets(n_buckets=100_000)}, 3),
        ({"engine": prk.Partition(n_buckets=100_000)}, 3),
        ({"engine": prk.Buckets(n_buckets=2)}, 2),
    ],
)
def test_buckets_are_capped_by_the_number_of_users(
    options: dict[str, object], buckets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars_rankeval.engines.buckets as _outofcore

    calls = []
    real = _outofcore.value_checks

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_outofcore, "value_checks", counted)
    df = pl.DataFrame(
        {"user": [1, 2, 3], "item": [1, 1, 1], "score": [1.0, 1.0, 1.0], "relevance": [1, 0, 1]}
    )
    got = prk.evaluate(df, ["mrr"], **options)  # type: ignore[arg-type]
    assert len(calls) == buckets  # one validation per bucket
    assert_same(got, prk.evaluate(df, ["mrr"], engine="memory"))


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"n_buckets": 10**9}, r"n_buckets must be at most 100,000 .*got 1,000,000,000"),
        ({"n_buckets": 100_001, "memory_limit": "1GB"}, r"n_buckets must be at most 100,000"),
    ],
)
@pytest.mark.parametrize("engine", [prk.Buckets, prk.Partition])
def test_absurd_bucket_counts_are_refused(
    options: dict[str, object], match: str, engine: Any
) -> None:
    with pytest.raises(ValueError, match=match):
        prk.evaluate(random_frame(1), "map", engine=engine(**options))


def test_a_budget_needing_absurdly_many_buckets_is_refused() -> None:
    # 10^9 rows x (200 + 16 x 5) bytes / 10^4 bytes = 28,000,000 buckets.
    with pytest.raises(
        ValueError, match=r"memory_limit=10,000 bytes would need 28,000,000 buckets"
    ):
        choose(
            "auto",
            n_rows=10**9,
            n_metrics=5,
            memory_limit=10**4,
            n_buckets=None,
            in_memory_input=False,
        )


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize(
    ("signals", "status"),
    [
        ((signal.SIGINT, signal.SIGINT), 130),  # Ctrl-C pressed twice in quick succession
        ((signal.SIGTERM, signal.SIGTERM), 143),
    ],
)
def test_cli_interrupted_mid_run_removes_every_file_and_exits_quietly(
    tmp_path: Path, signals: tuple[int, ...], status: int
) -> None:
    # 600 users in 600 buckets: seconds of work, interrupted once the first buckets'
    # files exist (a second signal used to stop the clean-up in its `finally`).
    data = tmp_path / "data.parquet"
    random_frame(6, n_users=600).write_parquet(data)
    work = tmp_path / "work"
    work.mkdir()
    command = [sys.executable, "-m", "polars_rankeval", "--data", str(data), "-m", "ndcg@3"]
    command += ["--strategy", "partition", "--buckets", "600", "--temp-dir", str(work)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(work.glob("*/per_user_*.parquet")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        for sig in signals:
            proc.send_signal(sig)
            time.sleep(0.002)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert "Traceback" not in err
    assert out == ""
    assert list(work.iterdir()) == []


def test_deferred_signals_hold_a_second_interrupt_until_the_clean_up_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In process: a SIGINT during the removal is held back, the files go, then the
    # KeyboardInterrupt is raised.
    import polars_rankeval.engines.buckets as _outofcore

    real = shutil.rmtree

    def interrupted_rmtree(path: Path, **kwargs: object) -> None:
        signal.raise_signal(signal.SIGINT)  # the second Ctrl-C, in the middle of it
        real(path, **kwargs)  # type: ignore[arg-type]

    def run() -> None:
        with _outofcore.temporary_directory(tmp_path) as work:
            (work / "partial.parquet").write_bytes(b"x")
            raise KeyboardInterrupt  # the first Ctrl-C

    monkeypatch.setattr(_outofcore.shutil, "rmtree", interrupted_rmtree)
    with pytest.raises(KeyboardInterrupt):
        run()
    assert list(tmp_path.iterdir()) == []
    assert not _outofcore._PENDING
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


# ------------------------------------------------- the sorted-head path, bucket by bucket
HEAD_SUITE = ["ndcg@3", "map@4", "mrr@2", "precision@3", "recall@5", "ndcg@10"]
"""Metrics the sorted-head path evaluates (``_head.applies``): cutoffs below, at and
beyond the head's tie margin, on lists of 1 to 14 rows."""


def tied_frame(seed: int, n_users: int = 30) -> pl.DataFrame:
    """Two systems, string ids, scores on a 3-value grid (long tie groups at every
    cutoff, some reaching past the head), some unjudged rows and users without rows."""
    rng = np.random.default_rng(seed)
    frames = []
    for system in ("a", "b"):
        sizes = rng.integers(1, 15, n_users)
        user = np.repeat(np.arange(n_users), sizes)
        frames.append(
            pl.DataFrame(
                {
                    "system": system,
                    "user": [f"u{u}" for u in user],
                    "item": np.concatenate([rng.permutation(40)[:s] for s in sizes]),
                    "score": rng.integers(0, 3, user.size) / 2,
                    "relevance": rng.choice([0, 1, 2, -9], user.size, p=[0.5, 0.2, 0.2, 0.1]),
                }
            ).with_columns(pl.col("relevance").replace(-9, None))  # -9: unjudged
        )
    return pl.concat(frames).filter(
        (pl.col("system") == "a") | (pl.col("user") != "u4")  # u4: system a only
    )


def test_head_suite_runs_on_the_sorted_head_path_in_every_bucket(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import polars_rankeval.plan.head as _head

    calls: list[int] = []
    real = _head.per_user

    def counted(*args: Any, **kwargs: Any) -> pl.LazyFrame:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_head, "per_user", counted)
    for ties in ("expected", "item_desc"):
        calls.clear()
        prk.evaluate(
            tied_frame(20), HEAD_SUITE, by="system", ties=ties, engine=prk.Partition(n_buckets=3)
        )
        assert len(calls) == 3, ties


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
@pytest.mark.parametrize("users", ["truth", "all", ["u1", "u4", "u17", "nobody"]])
@pytest.mark.parametrize(("strategy", "k"), [("buckets", 4), ("partition", 1), ("partition", 6)])
def test_head_path_buckets_equal_memory_with_ties(
    ties: str, users: object, strategy: str, k: int
) -> None:
    df = tied_frame(21)
    options = {"ties": ties, "by": "system", "users": users}
    for per_user in (False, True):
        expected = prk.evaluate(df, HEAD_SUITE, per_user=per_user, engine="memory", **options)
        got = prk.evaluate(
            df, HEAD_SUITE, per_user=per_user, engine=engine_of(strategy, n_buckets=k), **options
        )
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)
    assert not expected.is_empty()


def test_head_path_buckets_from_parquet_equal_memory(tmp_path: Path) -> None:
    df = tied_frame(22, n_users=50)
    df.write_parquet(tmp_path / "run.parquet")
    lf = pl.scan_parquet(tmp_path / "run.parquet")
    expected = prk.evaluate(df, HEAD_SUITE, by="system")
    got = prk.evaluate(lf, HEAD_SUITE, by="system", engine=prk.Partition(n_buckets=7))
    assert_frame_equal(got.collect(), expected, check_exact=False, rel_tol=1e-12, abs_tol=1e-15)


def _error(data: pl.DataFrame, metrics: list[str], **options: object) -> str:
    with pytest.raises(ValueError, match=r"\S") as info:
        prk.evaluate(data, metrics, **options)
    return str(info.value)


@pytest.mark.parametrize(
    "problem", ["duplicate", "nan_score", "null_user", "null_item", "negative_relevance"]
)
@pytest.mark.parametrize("strategy", ["buckets", "partition"])
def test_folded_checks_per_bucket_raise_the_in_memory_message(
    problem: str, strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars_rankeval.engines.buckets as _outofcore

    df = tied_frame(23).drop("system")
    df = df.unique(["user", "item"], keep="first").sort("user", "item")
    row = pl.col("user") == "u7"
    bad = {
        "duplicate": pl.concat([df, df.filter(row).head(1)]),
        "nan_score": df.with_columns(
            pl.when(row).then(float("nan")).otherwise(pl.col("score")).alias("score")
        ),
        "null_user": df.with_columns(
            pl.when(row).then(None).otherwise(pl.col("user")).alias("user")
        ),
        "null_item": df.with_columns(
            pl.when(row).then(None).otherwise(pl.col("item")).alias("item")
        ),
        "negative_relevance": df.with_columns(
            pl.when(row).then(-1).otherwise(pl.col("relevance")).alias("relevance")
        ),
    }[problem]
    expected = _error(bad, HEAD_SUITE, engine="memory")
    # The folded counts, not the separate check queries, find the problem in a bucket.
    calls: list[int] = []
    real = _outofcore.value_checks

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_outofcore, "value_checks", counted)
    assert _error(bad, HEAD_SUITE, engine=engine_of(strategy, n_buckets=5)) == expected
    assert calls == []
    # clean data passes; a metric off the head path (no cutoff) runs the check queries
    prk.evaluate(df, HEAD_SUITE, engine=engine_of(strategy, n_buckets=5))
    assert calls == []
    assert _error(bad, ["map"], engine=engine_of(strategy, n_buckets=5)) == _error(
        bad, ["map"], engine="memory"
    )
    assert calls

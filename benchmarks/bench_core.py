"""Core benchmark: polars_rankeval vs a Polars floor, ranx and pytrec_eval.

The data is generated on the fly with numpy (nothing is written to disk): ``--users``
users x ``--candidates`` candidate items (default 100,000 x 100 = 10M rows) with graded
relevance (mostly 0, some 1/2/3; the per-user relevant rate varies, so some users have
no relevant item), scores rounded to 3 decimals (so there are ties) and 5% of the rows
judged but not recommended (null score).

Measured, as the median of ``--repeats`` runs:

1. the floor: ``df.lazy().group_by("user").agg(pl.col("relevance").sum()).collect()``;
2. ``prk.evaluate`` of {ndcg, map, mrr, precision, recall}@10 for ties="expected" and
   ties="item_desc", with validate=False and validate=True;
3. ranx end-to-end (Polars frame -> dicts -> Qrels/Run -> ``ranx.evaluate``) and
   evaluate-only on prebuilt Qrels/Run (after a numba warm-up on tiny data);
4. pytrec_eval end-to-end (Polars frame -> nested dicts -> RelevanceEvaluator ->
   evaluate -> means) and evaluate-only on prebuilt dicts;
5. peak RSS of a child process that only generates the data and runs ``prk.evaluate``;
6. "same numbers": polars_rankeval (ties="item_desc") against pytrec_eval, per user and
   on the means.

Usage::

    python benchmarks/bench_core.py                  # 10M rows
    python benchmarks/bench_core.py --users 10000    # 1M rows, quick
    python benchmarks/bench_core.py --record         # also rewrite benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib
import importlib.metadata
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import polars as pl

import polars_rankeval as prk

METRICS: list[str] = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"]
RANX_METRICS: list[str] = METRICS
TREC_MEASURES: set[str] = {"ndcg_cut_10", "map_cut_10", "recip_rank", "P_10", "recall_10"}
# polars_rankeval metric -> pytrec_eval measure, for the "same numbers" check. trec_eval's
# recip_rank has no cutoff, so it is compared with prk's uncut "mrr".
SAME_NUMBERS: dict[str, str] = {
    "ndcg@10": "ndcg_cut_10",
    "map@10": "map_cut_10",
    "precision@10": "P_10",
    "recall@10": "recall_10",
    "mrr": "recip_rank",
}
N_ITEMS = 1_000_000  # item catalogue; ids 0 .. N_ITEMS-1
NULL_SCORE_FRACTION = 0.05
TARGET_FLOOR_RATIO = 3.0
TARGET_RANX_E2E = 50.0
TARGET_RANX_EVAL = 5.0
TARGET_TREC_E2E = 20.0
RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS.md"
NOTES_START = "<!-- notes:start -->"
NOTES_END = "<!-- notes:end -->"

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


# --------------------------------------------------------------------------- data
def make_data(n_users: int, n_candidates: int, seed: int = 0) -> pl.DataFrame:
    """The long frame: user, item (Int64), score (Float64, 3 decimals), relevance (Int32)."""
    if not 1 <= n_candidates <= N_ITEMS // 2:
        msg = f"--candidates must be in 1..{N_ITEMS // 2}, got {n_candidates}"
        raise ValueError(msg)
    rng = np.random.default_rng(seed)
    n = n_users * n_candidates
    user = np.repeat(np.arange(n_users, dtype=np.int64), n_candidates)
    # Distinct items per user: offset_u + j * stride (mod N_ITEMS), stride * (C-1) < N_ITEMS.
    stride = N_ITEMS // n_candidates - 1
    offset = rng.integers(0, N_ITEMS, n_users, dtype=np.int64)
    item = ((offset[:, None] + np.arange(n_candidates, dtype=np.int64) * stride) % N_ITEMS).ravel()
    del offset
    # Relevant with a per-user rate ~ U(0, 0.15): ~6-7% of users have no relevant item.
    rate = np.repeat(rng.uniform(0.0, 0.15, n_users), n_candidates)
    is_rel = rng.random(n) < rate
    del rate
    grade = rng.choice(np.array([1, 2, 3], dtype=np.int32), size=n, p=[0.6, 0.3, 0.1])
    relevance = np.where(is_rel, grade, 0).astype(np.int32)
    del is_rel, grade
    # Scores in [0, 1], mildly informative, rounded to 3 decimals: ~5 tied pairs per user.
    score = np.round((rng.random(n) + 0.25 * relevance) / 1.75, 3)
    not_recommended = rng.random(n) < NULL_SCORE_FRACTION
    frame = pl.DataFrame(
        {
            "user": user,
            "item": item,
            "score": pl.Series("score", score).set(pl.Series(not_recommended), None),
            "relevance": relevance,
        }
    )
    return frame


def describe_data(df: pl.DataFrame) -> dict[str, Any]:
    """Row/user counts, relevant shares and tie rate of the generated frame."""
    stats = (
        df.lazy()
        .group_by("user")
        .agg(
            (pl.col("relevance") > 0).sum().alias("n_rel"),
            pl.col("score")
            .filter(pl.col("score").is_not_null())
            .is_duplicated()
            .sum()
            .alias("tied"),
            pl.col("score").is_not_null().sum().alias("n_ret"),
        )
        .select(
            pl.len().alias("users"),
            (pl.col("n_rel") == 0).sum().alias("users_without_relevant"),
            (pl.col("tied").sum() / pl.col("n_ret").sum()).alias("tied_share"),
        )
        .collect()
        .row(0, named=True)
    )
    grades = df.group_by("relevance").len().sort("relevance")
    return {
        "rows": df.height,
        "users": stats["users"],
        "users_without_relevant": stats["users_without_relevant"],
        "tied_share": stats["tied_share"],
        "null_score_share": df.get_column("score").null_count() / df.height,
        "grades": dict(zip(grades["relevance"].to_list(), grades["len"].to_list(), strict=True)),
        "size_mb": df.estimated_size("mb"),
    }


def id_width() -> int:
    """Width of the zero-padded string item ids (numeric order == string order)."""
    return len(str(N_ITEMS - 1))


def string_ids(df: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """User ids as strings, item ids as fixed-width zero-padded strings."""
    return df.lazy().with_columns(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String).str.zfill(id_width()),
    )


# --------------------------------------------------------------------------- competitors
def build_dicts(df: pl.DataFrame) -> tuple[Qrels, Run]:
    """Nested dicts for ranx / pytrec_eval from the long frame.

    qrels keep the relevant rows only (relevance > 0; explicit zero judgments change
    none of the five measures) and run the recommended rows (non-null score). Both are
    restricted to users with at least one relevant and one recommended row: ranx needs
    equal query sets, and pytrec_eval evaluates only queries present in both.
    """
    lf = string_ids(df)
    rel = lf.filter(pl.col("relevance") > 0)
    rec = lf.filter(pl.col("score").is_not_null())
    users = rel.select("user").unique().join(rec.select("user").unique(), on="user", how="semi")
    q_lf = rel.join(users, on="user", how="semi").group_by("user").agg("item", "relevance")
    r_lf = rec.join(users, on="user", how="semi").group_by("user").agg("item", "score")
    q, r = pl.collect_all([q_lf, r_lf])
    qrels: Qrels = {
        u: dict(zip(items, rels, strict=True))
        for u, items, rels in zip(
            q["user"].to_list(), q["item"].to_list(), q["relevance"].to_list(), strict=True
        )
    }
    run: Run = {
        u: dict(zip(items, scores, strict=True))
        for u, items, scores in zip(
            r["user"].to_list(), r["item"].to_list(), r["score"].to_list(), strict=True
        )
    }
    return qrels, run


def trec_means(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    """Mean of every measure over the evaluated queries."""
    values = list(per_query.values())
    return {m: statistics.fmean(v[m] for v in values) for m in sorted(TREC_MEASURES)}


def pytrec_evaluate(
    trec: ModuleType, qrels: Qrels, run: Run
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """RelevanceEvaluator + evaluate; returns (means, per-query values)."""
    per_query = trec.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    return trec_means(per_query), per_query


def pytrec_end_to_end(trec: ModuleType, df: pl.DataFrame) -> dict[str, float]:
    qrels, run = build_dicts(df)
    return pytrec_evaluate(trec, qrels, run)[0]


def ranx_end_to_end(ranx: ModuleType, df: pl.DataFrame) -> dict[str, float]:
    qrels, run = build_dicts(df)
    return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX_METRICS)


def ranx_warm_up(ranx: ModuleType) -> float:
    """Compile ranx's numba kernels on tiny data; returns the seconds it took.

    It uses 20 queries: ``ranx.evaluate`` calls ``numba.set_num_threads(1)`` for fewer
    than 10 queries and never resets it, which would make every later call
    single-threaded. The thread count is restored explicitly anyway.
    """
    t0 = time.perf_counter()
    tiny = make_data(20, 30, seed=1)
    qrels, run = build_dicts(tiny)
    ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX_METRICS)
    numba = importlib.import_module("numba")
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return time.perf_counter() - t0


def optional_import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# --------------------------------------------------------------------------- timing
@dataclass
class Row:
    """One line of the results table."""

    key: str
    label: str
    times: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def measure(fn: Callable[[], object], repeats: int) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls (the result is dropped before the next)."""
    times: list[float] = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    gc.collect()
    return times


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` calls of ``fn`` (wall-clock seconds) and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def prk_call(
    df: pl.DataFrame, ties: str, validate: bool, metrics: list[str] | None = None
) -> Callable[[], pl.DataFrame]:
    def call() -> pl.DataFrame:
        return prk.evaluate(df, metrics or METRICS, ties=ties, validate=validate)  # type: ignore[arg-type]

    return call


# --------------------------------------------------------------------------- memory
def _proc_status_kib(field_name: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field_name}:\s+(\d+)\s+kB", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def _reset_peak_rss() -> bool:
    """Reset this process's VmHWM (Linux >= 4.0: ``echo 5 > /proc/self/clear_refs``).

    It does not reset ``ru_maxrss``, which is also at least the launching process's peak
    RSS (Linux carries the old address space's high-water mark across ``exec``).
    """
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


def memory_child(n_users: int, n_candidates: int, seed: int, ties: str, validate: bool) -> None:
    """Body of the child process: generate, then evaluate; print RSS figures as JSON (KiB)."""
    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    df = make_data(n_users, n_candidates, seed)
    gc.collect()
    gen_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    after_gen = _proc_status_kib("VmRSS")
    reset = _reset_peak_rss()
    t0 = time.perf_counter()
    prk.evaluate(df, METRICS, ties=ties, validate=validate)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "start_maxrss_kib": start,
                "gen_maxrss_kib": gen_peak,
                "after_gen_kib": after_gen,
                "final_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "eval_hwm_kib": _proc_status_kib("VmHWM") if reset else None,
                "data_mb": df.estimated_size("mb"),
                "seconds": seconds,
            }
        )
    )


def measure_memory(
    n_users: int, n_candidates: int, seed: int, ties: str, validate: bool
) -> dict[str, Any]:
    """Run :func:`memory_child` in a fresh interpreter and parse its report."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--memory-child",
        f"--users={n_users}",
        f"--candidates={n_candidates}",
        f"--seed={seed}",
        f"--ties={ties}",
        *(["--validate"] if validate else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    report.update(ties=ties, validate=validate)
    return report


# --------------------------------------------------------------------------- same numbers
def same_numbers(trec: ModuleType, df: pl.DataFrame) -> dict[str, Any]:
    """Compare prk (ties="item_desc") with pytrec_eval per user and on the means.

    trec_eval breaks score ties by docno descending *as strings*. Item ids are Int64 in
    polars_rankeval and fixed-width zero-padded strings for pytrec_eval, so numeric and
    string order coincide and ties="item_desc" is the same ordering. prk is also run on the
    zero-padded String ids to confirm it. Users without a relevant item are absent from the
    qrels (pytrec_eval skips them) and null in prk (empty="skip").
    """
    metrics = list(SAME_NUMBERS)
    prk_int = prk.evaluate(df, metrics, ties="item_desc", per_user=True, validate=False)
    prk_str = prk.evaluate(
        string_ids(df).collect(), metrics, ties="item_desc", per_user=True, validate=False
    )
    qrels, run = build_dicts(df)
    trec_mean, per_query = pytrec_evaluate(trec, qrels, run)
    trec_df = pl.DataFrame(
        {
            "user": [int(u) for u in per_query],
            **{m: [v[m] for v in per_query.values()] for m in SAME_NUMBERS.values()},
        }
    )
    joined = prk_int.join(trec_df, on="user", how="inner", suffix="_trec")
    rows = []
    for metric, measure_name in SAME_NUMBERS.items():
        prk_mean = prk_int.get_column(metric).mean()
        per_user_diff = (joined[metric] - joined[measure_name]).abs().max()
        rows.append(
            {
                "prk": metric,
                "pytrec_eval": measure_name,
                "prk_mean": prk_mean,
                "trec_mean": trec_mean[measure_name],
                "mean_abs_diff": abs(prk_mean - trec_mean[measure_name]),  # type: ignore[operator]
                "max_user_abs_diff": per_user_diff,
                "n_prk": prk_int.get_column(metric).count(),
                "n_trec": len(per_query),
            }
        )
    by_ids = prk_int.join(
        prk_str.with_columns(pl.col("user").cast(pl.Int64)), on="user", suffix="_str"
    )
    str_vs_int = max(
        by_ids.select((pl.col(c) - pl.col(f"{c}_str")).abs().max()).item() or 0.0 for c in metrics
    )
    return {"rows": rows, "string_vs_int_ids_max_abs_diff": str_vs_int}


def tie_order_demo(trec: ModuleType) -> dict[str, float]:
    """Why the ids are zero-padded: three tied items 3, 9, 10, only item 3 relevant."""

    def recip_rank(ids: list[str]) -> float:
        evaluator = trec.RelevanceEvaluator({"q": {ids[0]: 1}}, {"recip_rank"})
        return float(evaluator.evaluate({"q": dict.fromkeys(ids, 1.0)})["q"]["recip_rank"])

    frame = pl.DataFrame(
        {"user": [1] * 3, "item": [3, 9, 10], "score": [1.0] * 3, "relevance": [1, 0, 0]}
    )
    return {
        # "9" > "3" > "10" as strings: item 3 is second.
        "pytrec_unpadded": recip_rank(["3", "9", "10"]),
        # "10" > "09" > "03", as 10 > 9 > 3: item 3 is third.
        "pytrec_padded": recip_rank(["03", "09", "10"]),
        "prk_item_desc": prk.evaluate(frame, "mrr", ties="item_desc").item(0, "mrr"),
        "prk_expected": prk.evaluate(frame, "mrr").item(0, "mrr"),
    }


# --------------------------------------------------------------------------- reporting
def package_revision() -> str:
    """Git commit of the imported polars_rankeval, with its uncommitted files if any."""
    root = Path(prk.__file__).resolve().parent.parent

    def git(*cmd: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *cmd], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD")
    if not commit:
        return f"{root} (not a git checkout)"
    dirty = git("status", "--porcelain", "--", "polars_rankeval").splitlines()
    changed = ", ".join(line[3:] for line in dirty)
    return f"{commit}" + (f" + uncommitted changes in {changed}" if dirty else "")


def machine_info() -> dict[str, Any]:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    cpu = platform.processor() or "unknown"
    try:
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = found.group(1).strip() if found else cpu
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(ram, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "polars": pl.__version__,
        "polars_threads": pl.thread_pool_size(),
        "numpy": np.__version__,
        "polars_rankeval": prk.__version__,
        "revision": package_revision(),
        "ranx": version("ranx"),
        "pytrec_eval": version("pytrec_eval-terrier"),
        "numba": version("numba"),
    }


def fmt_s(seconds: float) -> str:
    return f"{seconds:.3f}" if seconds < 10 else f"{seconds:.1f}"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def faster(ratio: float) -> str:
    """'3.0x faster' for ratio >= 1, else '2.0x slower'."""
    return f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"


def check(ok: bool) -> str:
    return "met" if ok else "**not met**"


@dataclass
class Report:
    """Everything the run measured, rendered to the console and to RESULTS.md."""

    args: argparse.Namespace
    info: dict[str, Any]
    data: dict[str, Any]
    rows: dict[str, Row]
    notes: list[str]
    memory: list[dict[str, Any]]
    same: dict[str, Any] | None
    tie_demo: dict[str, float] | None
    ranx_means: dict[str, float] | None
    prk_means: dict[str, dict[str, float]]
    per_metric: dict[str, dict[str, float]]
    load: tuple[tuple[float, float, float], tuple[float, float, float]]
    round_loads: list[float]
    parent_rss_mib: float

    def median(self, key: str) -> float | None:
        row = self.rows.get(key)
        return row.median if row and row.times else None

    def main_table(self) -> str:
        floor = self.median("floor")
        default = self.median("prk_expected_val")
        like = self.median("prk_item_desc_noval")
        targets = {
            "ranx_e2e": TARGET_RANX_E2E,
            "ranx_eval": TARGET_RANX_EVAL,
            "trec_e2e": TARGET_TREC_E2E,
        }
        out: list[list[str]] = []
        for key, row in self.rows.items():
            if not row.times:
                out.append([row.label, "skipped", "", "", "", row.note])
                continue
            runs = ", ".join(fmt_s(t) for t in row.times)
            ratio = f"{row.median / floor:.0f}x" if floor else ""
            target = status = ""
            if key.startswith("prk_") and floor:
                target = f"<= {TARGET_FLOOR_RATIO:.0f}x floor"
                status = check(row.median / floor <= TARGET_FLOOR_RATIO)
            elif key.startswith(("ranx", "trec")) and default and like:
                speed = f"{row.median / default:.1f}x / {row.median / like:.1f}x"
                ratio = f"{ratio} (prk speed-up {speed})"
                if key in targets:
                    goal = targets[key]
                    target = f"prk >= {goal:.0f}x faster"
                    if row.median / default >= goal:
                        status = "met"
                    elif row.median / like >= goal:
                        status = "met only like-for-like"
                    else:
                        status = "**not met**"
            out.append([row.label, fmt_s(row.median), runs, ratio, target, status])
        header = ["what", "median s", "runs s", "vs floor", "target", "status"]
        return markdown_table(header, out)

    def same_table(self) -> str:
        if not self.same:
            return "skipped (pytrec_eval not installed, or --no-pytrec)."
        body = [
            [
                f"`{r['prk']}` / `{r['pytrec_eval']}`",
                f"{r['prk_mean']:.6f}",
                f"{r['trec_mean']:.6f}",
                f"{r['mean_abs_diff']:.1e}",
                f"{r['max_user_abs_diff']:.1e}",
                f"{r['n_prk']} / {r['n_trec']}",
            ]
            for r in self.same["rows"]
        ]
        header = [
            "prk / pytrec_eval",
            "prk mean",
            "pytrec_eval mean",
            "abs diff of means",
            "max per-user abs diff",
            "users prk / trec",
        ]
        return markdown_table(header, body)

    def memory_table(self) -> str:
        if not self.memory:
            return "skipped"
        body = []
        for m in self.memory:
            after = m["after_gen_kib"] or 0
            final = m["final_maxrss_kib"]
            hwm = m["eval_hwm_kib"]
            body.append(
                [
                    f"ties={m['ties']!r}, validate={m['validate']}",
                    f"{m['data_mb']:.0f}",
                    f"{m['gen_maxrss_kib'] / 1024:.0f}",
                    f"{after / 1024:.0f}",
                    f"{final / 1024:.0f}",
                    f"{hwm / 1024:.0f}" if hwm else "n/a",
                    f"{(max(final, hwm or 0) - after) / 1024:.0f}",
                    fmt_s(m["seconds"]),
                ]
            )
        header = [
            "child runs prk.evaluate",
            "frame MB",
            "ru_maxrss after data generation MiB",
            "RSS after generation MiB",
            "ru_maxrss at end MiB",
            "VmHWM of evaluate MiB",
            "evaluate increment MiB",
            "evaluate s",
        ]
        return markdown_table(header, body)

    def per_metric_table(self) -> str:
        body = [
            [m, *(fmt_s(self.per_metric[t][m]) for t in ("expected", "item_desc"))] for m in METRICS
        ]
        return markdown_table(["metric alone (validate=False)", "expected s", "item_desc s"], body)

    def interpretation(self) -> list[str]:
        s: list[str] = []
        floor = self.median("floor")
        default = self.median("prk_expected_val")
        like = self.median("prk_item_desc_noval")
        best = min(
            (self.median(k) or float("inf"))
            for k in ("prk_expected_noval", "prk_item_desc_noval", "prk_expected_val")
        )
        if floor and default and like:
            s.append(
                f"The suite takes {default / floor:.0f}x the floor with the defaults "
                f"(ties='expected', validate=True) and {like / floor:.0f}x as "
                f"ties='item_desc', validate=False (fastest prk row: {best / floor:.0f}x); "
                f"target <= {TARGET_FLOOR_RATIO:.0f}x: "
                f"{check(best / floor <= TARGET_FLOOR_RATIO)}."
            )
        val_e, noval_e = self.median("prk_expected_val"), self.median("prk_expected_noval")
        val_i, noval_i = self.median("prk_item_desc_val"), self.median("prk_item_desc_noval")
        if val_e and noval_e and val_i and noval_i:
            s.append(
                f"validate=True adds {val_e - noval_e:+.2f} s (expected) / "
                f"{val_i - noval_i:+.2f} s (item_desc)."
            )
        for key, goal, name in (
            ("ranx_e2e", TARGET_RANX_E2E, "ranx end-to-end"),
            ("ranx_eval", TARGET_RANX_EVAL, "ranx evaluate-only"),
            ("trec_e2e", TARGET_TREC_E2E, "pytrec_eval end-to-end"),
            ("trec_eval", None, "pytrec_eval evaluate-only"),
        ):
            comp = self.median(key)
            if comp and default and like:
                tail = ""
                if goal is not None:
                    tail = (
                        f" (target >= {goal:.0f}x: {check(comp / default >= goal)} for the "
                        f"defaults, {check(comp / like >= goal)} like-for-like)"
                    )
                s.append(
                    f"Against {name} ({fmt_s(comp)} s) prk is {faster(comp / default)} with "
                    f"the defaults and {faster(comp / like)} as item_desc without "
                    f"validation{tail}."
                )
        if self.same:
            rows = self.same["rows"]
            worst_mean = max(r["mean_abs_diff"] for r in rows)
            worst_user = max(r["max_user_abs_diff"] for r in rows)
            s.append(
                f"Same numbers: prk ties='item_desc' vs pytrec_eval, max abs difference of the "
                f"means {worst_mean:.1e}, max per-user difference {worst_user:.1e} over "
                f"{rows[0]['n_trec']} users; prk on zero-padded String ids vs Int64 ids: "
                f"{self.same['string_vs_int_ids_max_abs_diff']:.1e}."
            )
        if self.ranx_means and self.prk_means:
            diffs = {
                m: abs(self.ranx_means[m] - self.prk_means["expected"][m]) for m in RANX_METRICS
            }
            s.append(
                "ranx breaks score ties by an unstable numba argsort (neither item order), so "
                "its means are compared with prk ties='expected' only as a sanity check: max "
                f"abs diff {max(diffs.values()):.1e}."
            )
        return s

    def render_markdown(self, notes: str) -> str:
        i, d, a = self.info, self.data, self.args
        load0, load1 = self.load
        lines = [
            "# Core benchmark results",
            "",
            "Generated by `python benchmarks/bench_core.py "
            + " ".join(sys.argv[1:]).strip()
            + "`; do not edit outside the notes block (it is kept on re-recording).",
            "",
            f"- date: {i['date']}",
            f"- machine: {i['cpu']}, {i['cores']} cores, {i['ram_gib']} GiB RAM, {i['platform']}",
            f"- load average (1/5/15 min) at start {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, "
            f"at end {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f}; 1-min load at the start of "
            f"each timing round: {', '.join(f'{x:.1f}' for x in self.round_loads)}",
            f"- polars_rankeval revision: {i['revision']} (code as imported at the start)",
            f"- versions: Python {i['python']}, polars {i['polars']} "
            f"({i['polars_threads']} threads), numpy {i['numpy']}, polars_rankeval "
            f"{i['polars_rankeval']}, ranx {i['ranx']} (numba {i['numba']}), "
            f"pytrec_eval-terrier {i['pytrec_eval']}",
            f"- data: {d['rows']:,} rows = {d['users']:,} users x {a.candidates} candidates "
            f"(seed {a.seed}), {d['size_mb']:.0f} MB in Polars; relevance counts "
            f"{d['grades']}; {d['users_without_relevant']:,} users without a relevant item; "
            f"{d['null_score_share']:.1%} rows judged but not recommended (null score); "
            f"{d['tied_share']:.1%} of recommended rows share their score with another row of "
            "the user",
            f"- median of {a.repeats} interleaved rounds; metrics {', '.join(METRICS)}",
            "",
            "## Timings",
            "",
            self.main_table(),
            "",
            "`vs floor` is median / floor median. For competitors, `prk speed-up` is the "
            "competitor's median over prk's (above 1: prk is faster) with the defaults "
            "(ties='expected', validate=True) / with ties='item_desc', validate=False "
            "(like-for-like: ranx and pytrec_eval neither validate nor average over tied "
            "orderings).",
            "",
            "## Peak memory",
            "",
            self.memory_table(),
            "",
            "Each row is a fresh `python bench_core.py --memory-child` process, launched "
            "before the parent generates anything, that generates the data and runs one "
            "`prk.evaluate`. `ru_maxrss` is `getrusage(RUSAGE_SELF).ru_maxrss` (a running peak: "
            "the end value covers generation and evaluate). `VmHWM of evaluate` is the peak RSS "
            "since the watermark was reset after generation (`echo 5 > /proc/self/clear_refs`). "
            "increment = evaluate peak - RSS after generation. Linux carries the launching "
            "process's peak RSS into the child's `ru_maxrss` across `exec`, which is why the "
            f"children run first (the parent's peak then was {self.parent_rss_mib:.0f} MiB).",
            "",
        ]
        if self.per_metric:
            lines += ["## Per-metric cost", "", self.per_metric_table(), ""]
        lines += ["## Same numbers (pytrec_eval)", "", self.same_table(), ""]
        if self.tie_demo:
            t = self.tie_demo
            lines += [
                "Tie order: trec_eval sorts tied scores by docno descending as strings. Three "
                "tied items 3, 9, 10 (only 3 relevant): pytrec_eval recip_rank = "
                f"{t['pytrec_unpadded']:.4g} with ids '3','9','10' ('9' > '3' > '10') but "
                f"{t['pytrec_padded']:.4g} with '03','09','10', which matches prk "
                f"ties='item_desc' on Int64 ids ({t['prk_item_desc']:.4g}); ties='expected' "
                f"gives {t['prk_expected']:.4g}. So the comparison feeds pytrec_eval "
                f"fixed-width zero-padded item ids ({id_width()} digits).",
                "",
            ]
        lines += ["## Method notes", "", *[f"- {n}" for n in self.notes], ""]
        lines += ["## Interpretation (generated)", "", *[f"- {x}" for x in self.interpretation()]]
        lines += [""]
        lines += [NOTES_START, notes.strip("\n"), NOTES_END, ""]
        return "\n".join(lines)


def existing_notes(path: Path) -> str:
    if path.exists():
        text = path.read_text()
        if NOTES_START in text and NOTES_END in text:
            return text.split(NOTES_START, 1)[1].split(NOTES_END, 1)[0]
    return "\n## Notes\n\n(hand-written observations go here; kept when re-recording)\n"


# --------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--users", type=int, default=None, help="users (default 100000)")
    size.add_argument("--rows", type=int, default=None, help="rows (= users x candidates)")
    parser.add_argument("--candidates", type=int, default=100, help="candidates per user")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", action="store_true", help="rewrite benchmarks/RESULTS.md")
    parser.add_argument("--results", type=Path, default=RESULTS_PATH, help="RESULTS.md path")
    parser.add_argument("--per-metric", action="store_true", help="time each metric alone")
    parser.add_argument("--no-ranx", action="store_true", help="skip ranx")
    parser.add_argument("--no-pytrec", action="store_true", help="skip pytrec_eval")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS children")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ties", default="expected", help=argparse.SUPPRESS)
    parser.add_argument("--validate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rows is not None:
        args.users = max(1, args.rows // args.candidates)
    elif args.users is None:
        args.users = 100_000
    return args


def log(message: str) -> None:
    print(message, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.memory_child:
        memory_child(args.users, args.candidates, args.seed, args.ties, args.validate)
        return 0
    load0 = os.getloadavg()
    info = machine_info()
    log(f"machine: {info}")
    # Peak-memory children first, while this process is still small (see memory_table).
    parent_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    memory: list[dict[str, Any]] = []
    if not args.no_memory:
        for ties in ("expected", "item_desc"):
            log(f"peak memory child: ties={ties!r}, validate=True ...")
            memory.append(measure_memory(args.users, args.candidates, args.seed, ties, True))
            log(f"  {memory[-1]}")
    t0 = time.perf_counter()
    df = make_data(args.users, args.candidates, args.seed)
    log(f"generated {df.height:,} rows in {time.perf_counter() - t0:.1f} s")
    data = describe_data(df)
    log(f"data: {data}")
    notes: list[str] = [
        "Data is user-contiguous (rows grouped by user), as a recommender emits it; "
        "ids are Int64 in the Polars frame.",
        "prk runs on the eager DataFrame (so the result is collected); one untimed warm-up "
        "call precedes the timings.",
        "Timings are interleaved: each round runs every row once (floor, prk rows, "
        "competitors), so a slow spell of a shared machine hits all rows alike; the table "
        "gives the median over rounds and every run.",
        "Competitor dicts are built from the same frame with Polars (string ids, zero-padded "
        "items, `group_by(user).agg(item, relevance|score)`, then `dict(zip(...))`); qrels "
        "hold only rows with relevance > 0 (explicit zero judgments do not change these "
        "measures) and both sides only users with a relevant and a recommended row, which "
        "is what prk's empty='skip' evaluates. Building them is part of end-to-end.",
    ]
    reps = args.repeats
    # (key, label, callable or None, note). Rows are timed in interleaved rounds (every
    # case once per round), so a slow spell of a shared machine hits all rows alike.
    cases: list[tuple[str, str, Callable[[], object] | None, str]] = [
        (
            "floor",
            'floor: `group_by("user").agg(pl.col("relevance").sum())`',
            lambda: df.lazy().group_by("user").agg(pl.col("relevance").sum()).collect(),
            "",
        )
    ]
    for ties in ("expected", "item_desc"):
        for validate in (False, True):
            cases.append(
                (
                    f"prk_{ties}_{'val' if validate else 'noval'}",
                    f"prk suite, ties={ties!r}, validate={validate}",
                    prk_call(df, ties, validate),
                    "",
                )
            )
    df_str = string_ids(df).collect()
    cases.append(
        (
            "prk_item_desc_noval_strids",
            "prk suite, ties='item_desc', validate=False, String ids",
            prk_call(df_str, "item_desc", False),
            "",
        )
    )
    if args.per_metric:
        for ties in ("expected", "item_desc"):
            for metric in METRICS:
                label = f"{metric} alone, ties={ties!r}"
                cases.append(
                    (f"metric:{ties}:{metric}", label, prk_call(df, ties, False, [metric]), "")
                )
    prk.evaluate(df, METRICS, validate=False)  # warm-up
    prk_means = {
        t: prk.evaluate(df, METRICS, ties=t, validate=False).row(0, named=True)  # type: ignore[arg-type]
        for t in ("expected", "item_desc")
    }

    ranx = None if args.no_ranx else optional_import("ranx")
    ranx_means: dict[str, float] | None = None
    if ranx is None:
        reason = "skipped (--no-ranx)" if args.no_ranx else "ranx not installed"
        cases.append(("ranx_e2e", "ranx end-to-end", None, reason))
        cases.append(("ranx_eval", "ranx evaluate-only", None, reason))
    else:
        warm = ranx_warm_up(ranx)
        notes.append(
            f"ranx: numba JIT warmed up once on tiny data (20 users; {warm:.1f} s, not timed) "
            "before timing; ranx uses all cores through numba. ranx.evaluate runs with its "
            "defaults (it also stores per-query scores in the Run)."
        )
        qrels, run = build_dicts(df)
        r_qrels, r_run = ranx.Qrels(qrels), ranx.Run(run)
        del qrels, run
        ranx_means = {k: float(v) for k, v in ranx.evaluate(r_qrels, r_run, RANX_METRICS).items()}
        cases.append(
            (
                "ranx_e2e",
                "ranx end-to-end (frame -> dicts -> Qrels/Run -> evaluate)",
                lambda: ranx_end_to_end(ranx, df),
                "",
            )
        )
        cases.append(
            (
                "ranx_eval",
                "ranx evaluate-only (prebuilt Qrels/Run)",
                lambda: ranx.evaluate(r_qrels, r_run, RANX_METRICS),
                "",
            )
        )

    trec = None if args.no_pytrec else optional_import("pytrec_eval")
    if trec is None:
        reason = "skipped (--no-pytrec)" if args.no_pytrec else "pytrec_eval not installed"
        cases.append(("trec_e2e", "pytrec_eval end-to-end", None, reason))
        cases.append(("trec_eval", "pytrec_eval evaluate-only", None, reason))
    else:
        notes.append(
            "pytrec_eval: measures ndcg_cut_10, map_cut_10, recip_rank, P_10, recall_10; "
            "recip_rank is NOT cut at 10 (prk times mrr@10; the same-numbers check compares "
            "recip_rank with prk's uncut mrr). Single-threaded. evaluate-only = "
            "RelevanceEvaluator(qrels) + evaluate(run) + means, on prebuilt dicts."
        )
        t_qrels, t_run = build_dicts(df)
        cases.append(
            (
                "trec_e2e",
                "pytrec_eval end-to-end (frame -> dicts -> evaluate -> means)",
                lambda: pytrec_end_to_end(trec, df),
                "",
            )
        )
        cases.append(
            (
                "trec_eval",
                "pytrec_eval evaluate-only (prebuilt dicts)",
                lambda: pytrec_evaluate(trec, t_qrels, t_run)[0],
                "",
            )
        )

    timed = {key: Row(key, label, note=note) for key, label, _, note in cases}
    loads: list[float] = []
    for round_no in range(1, reps + 1):
        loads.append(os.getloadavg()[0])
        log(f"round {round_no}/{reps} (load {loads[-1]:.1f})")
        for key, label, fn, _ in cases:
            if fn is not None:
                timed[key].times += measure(fn, 1)
                log(f"  {label}: {timed[key].times[-1]:.3f} s")
    rows = {k: r for k, r in timed.items() if not k.startswith("metric:")}
    per_metric: dict[str, dict[str, float]] = {}
    for key, row in timed.items():
        if key.startswith("metric:"):
            _, ties, metric = key.split(":", 2)
            per_metric.setdefault(ties, {})[metric] = row.median
    del cases, df_str
    if ranx is not None:
        del r_qrels, r_run
    gc.collect()

    same: dict[str, Any] | None = None
    tie_demo: dict[str, float] | None = None
    if trec is not None:
        del t_qrels, t_run
        gc.collect()
        log("same numbers vs pytrec_eval ...")
        same = same_numbers(trec, df)
        tie_demo = tie_order_demo(trec)
        log(json.dumps(same, indent=1, default=str))
        log(f"tie-order demo: {tie_demo}")

    report = Report(
        args=args,
        info=info,
        data=data,
        rows=rows,
        notes=notes,
        memory=memory,
        same=same,
        tie_demo=tie_demo,
        ranx_means=ranx_means,
        prk_means=prk_means,
        per_metric=per_metric,
        load=(load0, os.getloadavg()),
        round_loads=loads,
        parent_rss_mib=parent_rss_mib,
    )
    print()
    print(report.main_table())
    print()
    print(report.memory_table())
    if per_metric:
        print()
        print(report.per_metric_table())
    print()
    print(report.same_table())
    print()
    for sentence in report.interpretation():
        print(sentence)
    if args.record:
        args.results.write_text(report.render_markdown(existing_notes(args.results)))
        log(f"\nwrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

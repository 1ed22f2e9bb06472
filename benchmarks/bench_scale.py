"""Scale benchmark: evaluate tables larger than memory from Parquet, bucket by bucket.

Data: ``users x 100`` candidate rows (user Int64, item Int32, score Float64 rounded to
3 decimals so there are ties, relevance Int8 in {0, 1, 2}), generated with numpy in
chunks of 100,000 users (10M rows) and written as one Parquet file per chunk into a
temporary directory (never whole in memory; removed at the end).

Each measurement runs in a child process that only scans the files and calls
``prk.evaluate`` on {ndcg, map, mrr, precision, recall}@10; its wall time and peak
RSS (``ru_maxrss`` of the child: the whole process, Python and Polars included) are
recorded. Configurations:

* the curve: 10M, 100M, 1B rows with ``engine="auto"`` (the default budget);
* 100M rows in memory (``engine="memory"``) beside the bucketed default.

Beside wall time each run reports its CPU time (user + system of the child, all its
threads) and the 1-minute load average at its start and end: on a shared machine the
wall time swings with the load, the CPU time much less. ``--baseline DIR`` runs every
configuration alternately with another checkout of the package (``DIR`` holds its
``polars_rankeval`` folder, e.g. from ``git worktree add``) and with this one,
``--rounds`` times, and prints the ratio of the medians (after / before).

Usage::

    python benchmarks/bench_scale.py                     # 10M, 100M, 1B rows
    python benchmarks/bench_scale.py --rows 10M 100M     # a shorter curve
    python benchmarks/bench_scale.py --record            # also write RESULTS_SCALE.md
    python benchmarks/bench_scale.py --rows 100M --memory-limit 2GB --no-memory-run \
        --baseline /tmp/base --rounds 3                  # before/after, interleaved
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

METRICS = ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"]
CANDIDATES = 100
CHUNK_USERS = 100_000
N_ITEMS = 1_000_000
HERE = Path(__file__).resolve().parent


def parse_rows(text: str) -> int:
    scale = {"k": 10**3, "m": 10**6, "b": 10**9}
    text = text.strip().lower()
    return int(float(text[:-1]) * scale[text[-1]]) if text[-1] in scale else int(text)


def generate(folder: Path, rows: int, seed: int = 7) -> float:
    """Write ``rows`` rows as Parquet chunks into ``folder``; return the seconds taken."""
    start = time.perf_counter()
    users = rows // CANDIDATES
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    j = np.arange(CANDIDATES, dtype=np.int64)
    for chunk, first in enumerate(range(0, users, CHUNK_USERS)):
        n = min(CHUNK_USERS, users - first)
        user = np.repeat(np.arange(first, first + n, dtype=np.int64), CANDIDATES)
        item = ((user * 7919 + np.tile(j, n) * 104_729) % N_ITEMS).astype(np.int32)
        score = np.round(rng.random(n * CANDIDATES), 3)
        relevance = rng.choice(
            np.array([0, 1, 2], dtype=np.int8), n * CANDIDATES, p=[0.85, 0.10, 0.05]
        )
        pl.DataFrame(
            {"user": user, "item": item, "score": score, "relevance": relevance}
        ).write_parquet(folder / f"chunk_{chunk:05d}.parquet", row_group_size=1_000_000)
    return time.perf_counter() - start


def child(folder: str, strategy: str, memory_limit: str | None) -> None:
    """Run in a fresh process: scan, evaluate, print wall time, peak RSS and result."""
    import polars_rankeval as prk

    load = os.getloadavg()[0]
    start = time.perf_counter()
    lf = pl.scan_parquet(Path(folder) / "*.parquet")
    if strategy == "memory":
        engine = prk.Memory()
    else:
        engine = prk.Auto(memory_limit=memory_limit, progress=False)
    result = prk.evaluate(lf, METRICS, engine=engine).collect()
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak": usage.ru_maxrss * 1024,
        "load": [load, os.getloadavg()[0]],
        "result": result.to_dicts()[0],
    }
    print(json.dumps(out))


def measure(
    folder: Path, strategy: str, memory_limit: str | None, code: str | None = None
) -> dict[str, Any]:
    """One child run; ``code``: a folder put first on its ``PYTHONPATH`` (a baseline)."""
    cmd = [sys.executable, __file__, "--child", str(folder), "--strategy", strategy]
    if memory_limit:
        cmd += ["--memory-limit", memory_limit]
    env = dict(os.environ)
    root = code or str(HERE.parent)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    got: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return got


def compare(
    folder: Path, rows: int, strategy: str, limit: str | None, baseline: str, rounds: int
) -> None:
    """Baseline and this checkout alternately, ``rounds`` times; medians and ratios."""
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for i in range(rounds):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for which in order:
            got = measure(folder, strategy, limit, baseline if which == "before" else None)
            runs[which].append(got)
            print(
                f"round {i} {which:>6}: {rows:,} rows {strategy} limit={limit or 'default'}: "
                f"wall {got['seconds']:.1f} s, cpu {got['cpu']:.1f} s, "
                f"peak {got['peak'] / 1e9:.2f} GB, load {got['load'][0]:.1f}-{got['load'][1]:.1f}, "
                f"ndcg@10 {got['result']['ndcg@10']!r}",
                flush=True,
            )
    med = {
        which: {key: statistics.median(r[key] for r in got) for key in ("seconds", "cpu", "peak")}
        for which, got in runs.items()
    }
    for key in ("seconds", "cpu", "peak"):
        b, a = med["before"][key], med["after"][key]
        print(f"median {key}: before {b:.2f}, after {a:.2f}, after/before {a / b:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", default=["10M", "100M", "1B"])
    parser.add_argument("--memory-limit", default=None, help="budget passed to evaluate")
    parser.add_argument("--no-memory-run", action="store_true", help="skip 100M in memory")
    parser.add_argument("--temp-dir", default=None)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--baseline", default=None, help="a checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="rounds with --baseline")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--strategy", default="auto", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.strategy, args.memory_limit)
        return

    import polars_rankeval as prk
    from polars_rankeval.engines.buckets import default_memory_limit

    budget = args.memory_limit or f"{default_memory_limit() / 1e9:.1f}GB (default)"
    lines: list[dict[str, Any]] = []
    root = Path(tempfile.mkdtemp(prefix="prk-scale-", dir=args.temp_dir))
    try:
        for text in args.rows:
            rows = parse_rows(text)
            folder = root / text
            gen = generate(folder, rows)
            size = sum(p.stat().st_size for p in folder.iterdir())
            runs = [("auto", args.memory_limit)]
            if rows == 100_000_000 and not args.no_memory_run:
                runs.append(("memory", None))
            for strategy, limit in runs:
                if args.baseline:
                    compare(folder, rows, strategy, limit, args.baseline, args.rounds)
                    continue
                got = measure(folder, strategy, limit)
                line = {
                    "rows": rows,
                    "strategy": strategy,
                    "seconds": got["seconds"],
                    "cpu": got["cpu"],
                    "load": got["load"],
                    "peak_gb": got["peak"] / 1e9,
                    "gen_seconds": gen,
                    "parquet_gb": size / 1e9,
                    "ndcg@10": got["result"]["ndcg@10"],
                }
                lines.append(line)
                print(
                    f"{rows:>13,} rows  {strategy:>6}  {line['seconds']:8.1f} s  "
                    f"cpu {line['cpu']:8.1f} s  load {line['load'][0]:.1f}-{line['load'][1]:.1f}  "
                    f"peak RSS {line['peak_gb']:5.2f} GB  (parquet {line['parquet_gb']:.1f} GB, "
                    f"generated in {gen:.0f} s)",
                    flush=True,
                )
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.baseline:  # the comparison is printed, not recorded
        return

    table = [
        "| rows | strategy | wall time (s) | CPU time (s) | load avg (start-end) "
        "| peak RSS (GB) | s per 100M rows | Parquet (GB) |",
        "|---:|---|---:|---:|---|---:|---:|---:|",
    ]
    for line in lines:
        table.append(
            f"| {line['rows']:,} | {line['strategy']} | {line['seconds']:.1f} | "
            f"{line['cpu']:.1f} | {line['load'][0]:.1f}-{line['load'][1]:.1f} | "
            f"{line['peak_gb']:.2f} | {line['seconds'] / line['rows'] * 1e8:.1f} | "
            f"{line['parquet_gb']:.1f} |"
        )
    print("\n".join(table))
    if args.record:
        header = [
            "# Scale benchmark (benchmarks/bench_scale.py)",
            "",
            f"Recorded {dt.date.today()} on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, Polars {pl.__version__}, "
            f"polars_rankeval {prk.__version__}. Memory budget: {budget}.",
            "",
            f"Metrics: {', '.join(METRICS)} (ties='expected', validate=True). Data: users x "
            f"{CANDIDATES} rows from Parquet chunks of 10M rows (scores rounded to 3 decimals,"
            " relevance 0/1/2). Wall time and peak RSS are of a child process that scans"
            " the files and evaluates (the whole process).",
            "",
        ]
        notes_path = HERE / "RESULTS_SCALE.md"
        notes = ""
        if notes_path.exists():
            old = notes_path.read_text()
            if "<!-- notes -->" in old:
                notes = old[old.index("<!-- notes -->") :]
        text = "\n".join([*header, *table, "", notes or "<!-- notes -->\n"])
        notes_path.write_text(text)


if __name__ == "__main__":
    main()

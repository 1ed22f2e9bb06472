"""The sorted-head path of this checkout against the same path at another git revision.

Interleaved in one process (the shared machine's slow spells hit both alike): the
head path's four modules (``plan/head.py``, ``head_request.py``, ``head_sums.py``,
``head_cumulative.py``) are read at ``--base`` with ``git show`` and loaded under
other names; each case runs ``prk.evaluate`` once with the checkout's path and once
with the base's (the rest of the package is the checkout's), beside the in-memory
per-user sort primitive of ``bench_head.py`` (``prim2``). Prints medians of wall and
CPU seconds, their ratios to the primitive, and the largest difference of the means
between the two revisions (they must agree).

Usage::

    python benchmarks/bench_head_ab.py --base HEAD~3                  # 10M rows
    python benchmarks/bench_head_ab.py --base main --users 20000 --rounds 3 \\
        --case suite:item_desc --case map100:item_desc

A case is ``REQUEST:TIES`` with REQUEST one of ``suite`` (ndcg, map, mrr, precision,
recall @10), ``ndcg10``, ``p20`` (P@20, recall@20), ``map100`` (``map@1..100``),
``ndcg100`` (``ndcg@1`` ... ``ndcg@100``), with ``validate=False`` (``--validate``:
True). Records nothing: paste what matters into ``RESULTS_HEAD.md``'s hand-written
notes.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import make_data

import polars_rankeval as prk
import polars_rankeval.plan.build as _build
import polars_rankeval.plan.head as _head

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["head_request", "head_cumulative", "head_sums", "head"]  # import order
REQUESTS: dict[str, Any] = {
    "suite": ["ndcg@10", "map@10", "mrr@10", "precision@10", "recall@10"],
    "ndcg10": ["ndcg@10"],
    "p20": ["P@20", "recall@20"],
    "map100": "map@1..100",
    "ndcg100": [f"ndcg@{k}" for k in range(1, 101)],
}


def base_head(revision: str) -> types.ModuleType:
    """The head path's modules at ``revision``, loaded as ``_base_<name>``."""
    names = {f"polars_rankeval.plan.{m}": f"_base_{m}" for m in MODULES}
    loaded: dict[str, types.ModuleType] = {}
    for module in MODULES:
        path = f"polars_rankeval/plan/{module}.py"
        source = subprocess.run(
            ["git", "show", f"{revision}:{path}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for old, new in names.items():
            source = source.replace(old, new)
        name = f"_base_{module}"
        loaded[module] = types.ModuleType(name)
        loaded[module].__file__ = f"{revision}:{path}"
        sys.modules[name] = loaded[module]
        exec(compile(source, f"{revision}:{path}", "exec"), loaded[module].__dict__)
    return loaded["head"]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--case", action="append", help="REQUEST:TIES (repeatable)")
    parser.add_argument("--validate", action="store_true", help="evaluate(validate=True)")
    args = parser.parse_args()
    cases_arg = args.case or ["suite:item_desc", "suite:expected", "map100:item_desc"]
    old = base_head(args.base)
    df = make_data(args.users, 100)
    relevance = pl.col("relevance").sort_by(["score", "item"], descending=True).head(10)

    def primitive() -> object:
        return df.lazy().group_by("user").agg(relevance).collect(engine="in-memory")

    cases: dict[str, Callable[[], Any]] = {"prim2 (in-memory)": primitive}
    for case in cases_arg:
        request, ties = case.split(":")
        for label, module in (("base", old), ("this", _head)):

            def run(
                module: types.ModuleType = module, request: str = request, ties: str = ties
            ) -> Any:
                _build._head = module  # type: ignore[attr-defined]
                try:
                    return prk.evaluate(  # type: ignore[call-overload]
                        df, REQUESTS[request], ties=ties, validate=args.validate
                    )
                finally:
                    _build._head = _head  # type: ignore[attr-defined]

            cases[f"{case} {label}"] = run
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    results: dict[str, Any] = {}
    for _ in range(args.rounds):
        for name, call in cases.items():
            start, start_cpu = time.perf_counter(), cpu()
            results[name] = call()
            elapsed = time.perf_counter() - start
            times[name].append((elapsed, cpu() - start_cpu))
    wall0 = statistics.median(w for w, _ in times["prim2 (in-memory)"])
    cpu0 = statistics.median(c for _, c in times["prim2 (in-memory)"])
    print(f"{args.users * 100:,} rows, {args.rounds} interleaved rounds, base {args.base}")
    print("| case | wall s | / prim2 | cpu s | / prim2 |\n|---|---|---|---|---|")
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu_s = statistics.median(c for _, c in runs)
        print(f"| {name} | {wall:.3f} | {wall / wall0:.2f}x | {cpu_s:.3f} | {cpu_s / cpu0:.2f}x |")
    for case in cases_arg:
        a, b = results[f"{case} base"], results[f"{case} this"]
        floats = [c for c in a.columns if a.schema[c] == pl.Float64]
        print(case, "largest difference of the means:", max(abs(a[c][0] - b[c][0]) for c in floats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""trec_eval's ``-R qrels_prefs``, ``prefs`` and ``qrels_jg``: polars_rankeval beside trec_eval.

Generates (seeded, into a temporary directory removed afterwards) a TREC run of
``--queries`` x ``--docs`` lines with tied scores, graded qrels with two judgment groups
per query (read as ``qrels_prefs`` and as ``qrels_jg``) and a preference file (20 users
per query, each ranking 5 of 8 docs in one or two sub-groups). Times end to end (reading
both files, evaluating, summarising), each tool in its own process, interleaved:

* the reference trec_eval 10.0-rc3 (built from ``../shared/tools``), ``-R <fmt> -m <group>``;
* ``polars_rankeval.trec_eval.prefs`` (``read_relations`` + ``trec.read_run`` +
  ``relation_measures`` + ``summarize``);

checks that the summary lines agree to the printed 4 decimals, and prints a table; with
``--record`` the table goes to ``benchmarks/RESULTS_TREC_PREFS.md``.

Usage: ``python benchmarks/bench_trec_prefs.py [--queries 1000] [--docs 1000] [--repeat 3]
[--record]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).parent
REPO = HERE.parent
CASES = (  # (relation format, file, -m group)
    ("qrels_prefs", "qrels", "all_prefs"),
    ("qrels_jg", "qrels", "qrels_jg"),
    ("prefs", "prefs", "all_prefs"),
)
OURS = """
import sys
import polars_rankeval.io.trec as trec
import polars_rankeval.trec_eval.prefs as tp
fmt, rel, run, group = sys.argv[1:5]
relations = tp.read_relations(rel, fmt)
frame = trec.read_run(run).select("user", "item", "score")
per_q = tp.relation_measures(relations, None, frame, [(group, ())], relation_format=fmt)
for m, v in tp.summarize(per_q).rows():
    print(f"{m:<22}\\tall\\t{tp.format_value(m, v)}")
"""


def generate(tmp: Path, queries: int, docs: int, seed: int = 0) -> None:
    """Write ``run``, ``qrels`` (two judgment groups per query) and ``prefs`` into ``tmp``."""
    rng = random.Random(seed)
    judged = max(docs // 10, 10)
    with (
        (tmp / "run").open("w") as run,
        (tmp / "qrels").open("w") as qrels,
        (tmp / "prefs").open("w") as prefs,
    ):
        for q in range(queries):
            pool = [f"D{q}-{i}" for i in range(3 * docs)]
            for rank, d in enumerate(rng.sample(pool, docs)):
                run.write(f"{q} Q0 {d} {rank} {rng.randint(0, 5000) / 100:g} bench\n")
            for jg in ("0", "1"):
                for d in rng.sample(pool[: 3 * docs // 2], judged):
                    qrels.write(f"{q} {jg} {d} {rng.choice([0, 0, 0, 0, 1, 1, 2])}\n")
            for user in range(20):
                some = rng.sample(pool[: 3 * docs // 2], 8)
                hidden = {d: rng.choice([0, 1, 2, 3]) for d in some}
                for sub in range(rng.choice([1, 2])):
                    for d in rng.sample(some, 5):
                        prefs.write(f"{q} u{user} s{sub} {d} {hidden[d]}\n")


def trec_eval_binary() -> str | None:
    for shared in (
        REPO.parent / "shared",
        Path("/work/shared"),
        Path(os.environ.get("PRK_SHARED", "-")),
    ):
        script = shared / "tools" / "build-trec-eval"
        if script.exists():
            done = subprocess.run([str(script)], capture_output=True, text=True, check=False)
            if done.returncode == 0:
                return done.stdout.strip().splitlines()[-1]
    return None


def timed(cmd: list[str]) -> tuple[float, float | None, str]:
    """Wall seconds, peak RSS in MB (when /usr/bin/time exists) and stdout of ``cmd``."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    full = [gnu_time, "-f", "%M", *cmd] if gnu_time else cmd
    start = time.perf_counter()
    done = subprocess.run(
        full,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    seconds = time.perf_counter() - start
    rss = float(done.stderr.strip().splitlines()[-1]) / 1024 if gnu_time else None
    return seconds, rss, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec-eval-repeat-prefs", type=int, default=1)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    binary = trec_eval_binary()
    rows = []
    notes = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        generate(tmp, args.queries, args.docs)
        lines = {f: sum(1 for _ in (tmp / f).open()) for f in ("run", "qrels", "prefs")}
        for fmt, rel, group in CASES:
            ours_cmd = [sys.executable, "-c", OURS, fmt, str(tmp / rel), str(tmp / "run"), group]
            theirs_cmd = (
                [binary, "-R", fmt, "-m", group, str(tmp / rel), str(tmp / "run")]
                if binary
                else None
            )
            ours_t, theirs_t, ours_m, theirs_m = [], [], [], []
            ours_out = theirs_out = ""
            for i in range(args.repeat):
                s, m, ours_out = timed(ours_cmd)
                ours_t.append(s)
                ours_m.append(m)
                if theirs_cmd and (fmt != "prefs" or i < args.trec_eval_repeat_prefs):
                    s, m, theirs_out = timed(theirs_cmd)
                    theirs_t.append(s)
                    theirs_m.append(m)
            ref = {tuple(x.split("\t")[:2]): x.split("\t")[2] for x in theirs_out.splitlines()}
            got = {tuple(x.split("\t")[:2]): x.split("\t")[2] for x in ours_out.splitlines()}
            same = [k for k in got if ref.get(k) == got[k]]
            if theirs_cmd:
                notes.append(
                    f"{fmt}: {len(same)}/{len(got)} summary lines identical to trec_eval's"
                )
            theirs_med = statistics.median(theirs_t) if theirs_t else float("nan")
            rows.append(
                (
                    f"-R {fmt} -m {group}",
                    statistics.median(ours_t),
                    theirs_med,
                    max(m for m in ours_m if m is not None)
                    if ours_m[0] is not None
                    else float("nan"),
                    max(m for m in theirs_m if m is not None)
                    if theirs_m and theirs_m[0] is not None
                    else float("nan"),
                )
            )
    table = [
        "| case | polars_rankeval s | trec_eval s | speed-up | polars_rankeval MB | trec_eval MB |",
        "|---|---|---|---|---|---|",
    ]
    for case, ours_s, theirs_s, ours_mb, theirs_mb in rows:
        table.append(
            f"| {case} | {ours_s:.2f} | {theirs_s:.2f} | {theirs_s / ours_s:.1f}x "
            f"| {ours_mb:.0f} | {theirs_mb:.0f} |"
        )
    header = [
        "# trec_eval -R qrels_prefs / qrels_jg / prefs benchmark",
        "",
        "Generated by `python benchmarks/bench_trec_prefs.py --record`.",
        "",
        f"- {platform.machine()}, {os.cpu_count()} cores, polars {pl.__version__}",
        f"- run {lines['run']:,} lines ({args.queries:,} queries x {args.docs:,} docs, tied "
        f"scores); qrels {lines['qrels']:,} lines (2 judgment groups per query); prefs "
        f"{lines['prefs']:,} lines",
        "- end to end, each tool in its own process (Python start-up and import included); "
        f"median of {args.repeat} interleaved runs (trec_eval on prefs: "
        f"{args.trec_eval_repeat_prefs})",
        "",
    ]
    text = "\n".join([*header, *table, "", *(f"- {n}" for n in notes), ""])
    print(text)
    if args.record:
        (HERE / "RESULTS_TREC_PREFS.md").write_text(text)


if __name__ == "__main__":
    main()

"""trec_eval from files: ``polars-rankeval trec-eval`` beside the real trec_eval and pytrec_eval.

Generates a TREC run (default 1,000 queries x 1,000 documents = 1M lines, tied scores
included) and graded qrels into a temporary directory (removed afterwards), then runs,
each as its own process so that time and peak memory (``ru_maxrss`` from ``wait4``) are
measured the same way, in interleaved rounds:

* trec_eval 10.0-rc3 (built from ``shared/tools``) with its default measures
  (``default``), ``-m all_trec`` (``summary``) and ``-q -m all_trec`` (``-q``);
* ``polars-rankeval trec-eval`` with the same arguments (its output is checked to be
  byte-identical to trec_eval's);
* the floor: the interpreter importing Polars and the clone, reading nothing;
* pytrec_eval: ``parse_qrel`` / ``parse_run`` + ``RelevanceEvaluator`` over every measure
  it supports + per-query values (its ``-q`` equivalent) and their means.

Usage: ``python benchmarks/bench_trec.py [--queries 1000] [--docs 1000] [--rounds 3] [--sorted]
[--record] [--baseline DIR]``; ``--queries 10000`` for the 10M-line run; ``--sorted`` writes
the run by query then rank, as retrieval tools do (else its lines are in no order).
``--baseline DIR`` adds ``polars-rankeval (baseline)``: the package found in DIR (e.g. an
older checkout, exported with ``git archive``), run in the same interleaved rounds.
``--record`` writes this size's (and order's) section of RESULTS_TREC.md (other sections
and the hand-written notes are kept); the table gives each tool's wall time, CPU time
(user + system, all threads), peak memory, its time beside trec_eval's and pytrec_eval's
time divided by it, and its peak memory beside trec_eval's (the same arguments; the
floor beside trec_eval's default run).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    q = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    r = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(q, pytrec_eval.supported_measures).evaluate(r)
names = next(iter(per_query.values())).keys()
means = {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in names}
print(len(per_query), len(means))
"""


def generate(
    tmp: Path, queries: int, docs: int, seed: int = 0, *, ordered: bool = False
) -> tuple[Path, Path]:
    """Write a run (scores with ties) and graded qrels; return their paths.

    The run's lines are in no particular order, or with ``ordered`` as retrieval tools
    write them: each query's lines together (queries in numeric order), by rank (score
    descending; tied scores in the generator's order, not trec_eval's docno order).
    """
    rng = np.random.default_rng(seed)
    n = queries * docs
    qid = np.repeat(np.arange(queries), docs)
    doc = rng.integers(0, 50 * docs, size=n)
    run = (
        pl.DataFrame({"q": qid, "d": doc, "s": np.round(rng.random(n), 3)})
        .unique(["q", "d"], keep="first")
        .with_columns(pl.col("s").rank("ordinal", descending=True).over("q").alias("r"))
        .select(
            pl.format("{}", pl.col("q")).alias("qid"), pl.lit("Q0").alias("q0"),
            pl.format("D{}", pl.col("d")).alias("docno"), "r", "s", pl.lit("bench").alias("tag"),
        )
    )  # fmt: skip
    judged = run.group_by("qid").head(docs // 5)
    if ordered:
        run = run.sort(pl.col("qid").cast(pl.Int64), "r")
    qrels = judged.select(
        "qid",
        pl.lit("0").alias("iter"),
        "docno",
        pl.Series("rel", rng.choice([0, 0, 0, 1, 1, 2, 3], size=judged.height)),
    )
    run_path, qrels_path = tmp / "run.txt", tmp / "qrels.txt"
    run.write_csv(run_path, separator=" ", include_header=False)
    qrels.write_csv(qrels_path, separator=" ", include_header=False)
    return qrels_path, run_path


def measure(cmd: list[str], out: Path, path: Path = REPO) -> tuple[float, float, float]:
    """Run ``cmd`` with stdout to ``out``; return (seconds, peak RSS in MB, CPU seconds).

    The peak RSS comes from GNU time when installed (a child forked from this big Python
    process would otherwise report the parent's pages), else from ``wait4``; CPU time is
    user + system time of the process (all its threads), from GNU time or ``wait4``.
    """
    env = dict(os.environ, PYTHONPATH=str(path))
    gnu_time = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    report = out.with_suffix(".time")
    full = [gnu_time, "-f", "%M %U %S", "-o", str(report), *cmd] if gnu_time else cmd
    start = time.perf_counter()
    with out.open("wb") as sink:
        # run in ``path``: ``python -m`` puts the working directory first on sys.path
        proc = subprocess.Popen(full, stdout=sink, stderr=subprocess.PIPE, env=env, cwd=path)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise RuntimeError(f"{cmd[0]} failed: {err}")
    if gnu_time:
        peak, user, system = report.read_text().split()[-3:]
        return seconds, int(peak) / 1024, float(user) + float(system)
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _record(section: str, lines: int) -> None:  # section starts with its "## " heading
    """Put ``section`` (one run size) into RESULTS_TREC.md, keeping other sizes and notes."""
    target = HERE / "RESULTS_TREC.md"
    previous = target.read_text() if target.exists() else ""
    notes = previous[previous.find("## Notes") :] if "## Notes" in previous else ""
    sections = {}
    for part in previous[: len(previous) - len(notes)].split("\n## ")[1:]:
        heading = part.split("\n", 1)[0]
        if "run lines" in heading:
            key = (int(heading.split()[0].replace(",", "")), heading)
            sections[key] = "## " + part.rstrip() + "\n"
    sections[(lines, section.split("\n", 1)[0][3:])] = section
    header = (
        "# trec_eval benchmark\n\nGenerated by `python benchmarks/bench_trec.py --record` "
        "(`--queries 10000` for the 10M-line run).\n\n"
        f"- {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"polars {pl.__version__}\n"
        "- each tool a separate process (time includes start-up, reading the files and "
        "printing), interleaved rounds; pytrec_eval parses with its own `parse_qrel` / "
        "`parse_run`\n\n"
    )
    body = "\n".join(sections[k] for k in sorted(sections))
    target.write_text(header + body + ("\n" + notes if notes else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    parser.add_argument(
        "--sorted",
        action="store_true",
        help="write the run as retrieval tools do: by query, then rank (see generate)",
    )
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument(
        "--baseline-label", default="an older checkout", help="how --record describes it"
    )
    args = parser.parse_args()

    from tests.trec_eval.trec_diff import reference_binary

    binary, reason = reference_binary()
    load_before = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="prk-bench-trec-"))
    try:
        qrels, run = generate(tmp, args.queries, args.docs, ordered=args.sorted)
        lines = sum(1 for _ in run.open())
        print(f"{lines:,} run lines, {sum(1 for _ in qrels.open()):,} qrels lines")
        ours = [sys.executable, "-m", "polars_rankeval", "trec-eval"]
        tools: dict[str, list[str]] = {}
        paths: dict[str, Path] = {}
        for flags, name in (
            ([], "default"),
            (["-m", "all_trec"], "summary"),
            (["-q", "-m", "all_trec"], "-q"),
        ):
            files = [*flags, str(qrels), str(run)]
            if binary:
                tools[f"trec_eval {name}"] = [binary, *files]
            if args.baseline is not None:
                tools[f"polars-rankeval (baseline) {name}"] = [*ours, *files]
                paths[f"polars-rankeval (baseline) {name}"] = args.baseline.resolve()
            tools[f"polars-rankeval {name}"] = [*ours, *files]
        # the floor: the interpreter with Polars and the clone imported, nothing read
        tools["floor (import only)"] = [
            sys.executable, "-c", "import polars_rankeval.trec_eval.command",
        ]  # fmt: skip
        try:
            import pytrec_eval  # noqa: F401

            tools["pytrec_eval (per query + means)"] = [
                sys.executable, "-c", PYTREC, str(qrels), str(run),
            ]  # fmt: skip
        except ImportError:
            print("pytrec_eval not installed: skipped")
        samples: dict[str, list[tuple[float, float, float]]] = {k: [] for k in tools}
        loads = []
        for _ in range(args.rounds):  # interleaved: every tool once per round
            for label, cmd in tools.items():
                out = tmp / f"{label.replace(' ', '_')}.out"
                samples[label].append(measure(cmd, out, paths.get(label, REPO)))
            loads.append(os.getloadavg()[0])
        same = {}
        if binary:
            for name in ("default", "summary", "-q"):
                a = (tmp / f"trec_eval_{name}.out").read_bytes()
                b = (tmp / f"polars-rankeval_{name}.out").read_bytes()
                same[name] = a == b
                if args.baseline is not None:
                    c = (tmp / f"polars-rankeval_(baseline)_{name}.out").read_bytes()
                    same[f"baseline {name}"] = a == c
        reference = {
            name: statistics.median(v[0] for v in samples[f"trec_eval {name}"])
            for name in ("default", "summary", "-q")
            if binary
        }
        peaks = {
            name: max(v[1] for v in samples[f"trec_eval {name}"])
            for name in ("default", "summary", "-q")
            if binary
        }
        py_label = "pytrec_eval (per query + means)"
        py_ref = statistics.median(v[0] for v in samples[py_label]) if py_label in samples else None
        py_cpu = (
            statistics.median(c for _, _, c in samples[py_label]) if py_label in samples else None
        )
        table = [
            "| tool | median s | median CPU s | peak MB | time / trec_eval's "
            "| pytrec_eval's time / this | pytrec_eval's CPU / this | peak / trec_eval's |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for label, values in samples.items():
            t = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[2] for v in values)
            mb = max(v[1] for v in values)
            kind = (
                "-q" if label.endswith("-q") or "pytrec" in label
                else "default" if label.endswith("default") or "floor" in label
                else "summary"
            )  # fmt: skip
            ref = reference.get(kind)
            peak_ratio = f"{mb / peaks[kind]:.2f}" if kind in peaks else "n/a"
            ratio = f"{t / ref:.2f}" if ref else "n/a"
            speedup = f"{py_ref / t:.2f}" if py_ref else "n/a"
            cpu_speedup = f"{py_cpu / cpu:.2f}" if py_cpu and cpu else "n/a"
            table.append(
                f"| {label} | {t:.2f} | {cpu:.2f} | {mb:.0f} | {ratio} | {speedup} "
                f"| {cpu_speedup} | {peak_ratio} |"
            )
        text = "\n".join(table)
        print(text)
        print(f"outputs identical to trec_eval's: {same}" if binary else f"no trec_eval: {reason}")
        if args.record:
            load_after = os.getloadavg()[0]
            order = (
                "by query, then rank (ties not in trec_eval's docno order)"
                if args.sorted
                else "in no particular order"
            )
            section = (
                f"## {lines:,} run lines{', sorted run' if args.sorted else ''}\n\n"
                f"- {lines:,} run lines ({args.queries:,} queries x {args.docs:,} docs, tied "
                f"scores; lines {order}), graded qrels (20% of each list judged); "
                "`default`: trec_eval's default measures, `summary`: `-m all_trec`, "
                "`-q`: `-q -m all_trec`\n"
                f"- {args.rounds} interleaved rounds, median time, peak RSS; load average "
                f"{load_before:.1f} before, {load_after:.1f} after, after each round: "
                f"{', '.join(f'{x:.1f}' for x in loads)}\n"
                + (
                    f"- `polars-rankeval (baseline)`: {args.baseline_label}\n"
                    if args.baseline is not None
                    else ""
                )
                + f"- polars-rankeval's output byte-identical to trec_eval's: {same}\n\n"
                + text
                + "\n"
            )
            _record(section, lines)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

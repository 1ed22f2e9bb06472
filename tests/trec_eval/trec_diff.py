"""Differential testing of ``polars-rankeval trec-eval`` against the real trec_eval.

A random case is a qrels file, a run file and a trec_eval command line. Both tools run
on it (the reference as a subprocess, ours in-process through :func:`polars_rankeval.cli.app.main`)
and their standard output is compared line for line. A case agrees when

- trec_eval exits 0 and ours exits 0 with byte-identical standard output, or
- trec_eval fails (exit status != 0) and ours fails too (the messages differ on purpose).

Cases that fall on a documented deviation (README, "trec_eval" section) are skipped with
the reason, see :func:`deviation`. A differing case is shrunk (:func:`shrink`) to a few
lines by deleting lines of both files and arguments while it still differs.

Run thousands of cases during development::

    python -m tests.trec_eval.trec_diff --cases 5000 --seed 1

The test suite (``tests/trec_eval/test_trec_differential.py``) runs a bounded, seeded subset.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- reference


def shared_dir() -> Path | None:
    """``$PRK_SHARED``, else ``<repo>/../shared``, else ``/work/shared`` (first that exists)."""
    candidates = [os.environ.get("PRK_SHARED"), REPO.parent / "shared", "/work/shared"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "tools" / "build-trec-eval").is_file():
            return Path(candidate)
    return None


_BINARY: list[str | None] = []


def reference_binary() -> tuple[str | None, str]:
    """Build (once) and return the real trec_eval, or ``None`` and the reason it is missing."""
    if _BINARY:
        return _BINARY[0], "cached"
    shared = shared_dir()
    if shared is None:
        return None, "no shared tools folder (set PRK_SHARED, or put shared/ beside the repo)"
    if not (shutil.which("cc") or shutil.which("gcc")):
        return None, "no C compiler (cc or gcc) to build the reference trec_eval"
    if not shutil.which("make"):
        return None, "no make to build the reference trec_eval"
    env = dict(os.environ)
    if not shutil.which(env.get("CC", "cc")):
        env["CC"] = "gcc"
    done = subprocess.run(
        ["bash", str(shared / "tools" / "build-trec-eval")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        return None, f"building trec_eval failed: {done.stderr.strip()[-500:]}"
    _BINARY.append(done.stdout.strip().splitlines()[-1])
    return _BINARY[0], ""


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One differential case: file contents and the option list (files appended last)."""

    qrels: tuple[str, ...]
    run: tuple[str, ...]
    args: tuple[str, ...] = ()
    run_from_stdin: bool = False
    zscores: tuple[str, ...] | None = None  # -Z file lines; ``@Z`` in args stands for it
    eol: str = "\n"
    final_newline: bool = True
    note: str = field(default="", compare=False)

    def text(self, lines: tuple[str, ...]) -> str:
        body = self.eol.join(lines)
        return body + (self.eol if self.final_newline and lines else "")

    def describe(self) -> str:
        out = [
            "# args: " + " ".join(self.args) + ("  (run on stdin)" if self.run_from_stdin else "")
        ]
        out += ["# qrels:"] + [f"  {line!r}" for line in self.qrels]
        out += ["# run:"] + [f"  {line!r}" for line in self.run]
        if self.zscores is not None:
            out += ["# zscores:"] + [f"  {line!r}" for line in self.zscores]
        return "\n".join(out)


@dataclass
class Outcome:
    status: str  # "same", "differ", "skip"
    reason: str = ""
    ours: tuple[int, str, str] = (0, "", "")
    theirs: tuple[int, str, str] = (0, "", "")


@contextlib.contextmanager
def _files(case: Case) -> Iterator[tuple[Path, Path, Path | None, bytes]]:
    with tempfile.TemporaryDirectory(prefix="prk_trec_diff_") as tmp:
        qrels = Path(tmp) / "qrels"
        run = Path(tmp) / "run"
        qrels.write_bytes(case.text(case.qrels).encode())
        run_bytes = case.text(case.run).encode()
        run.write_bytes(run_bytes)
        zpath = None
        if case.zscores is not None:
            zpath = Path(tmp) / "zscores"
            zpath.write_bytes(case.text(case.zscores).encode())
        yield qrels, run, zpath, run_bytes


def _argv(case: Case, qrels: Path, run: Path, zpath: Path | None) -> list[str]:
    args = [str(zpath) if a == "@Z" else a for a in case.args]
    return [*args, str(qrels), "-" if case.run_from_stdin else str(run)]


def run_reference(case: Case, binary: str) -> tuple[int, str, str]:
    with _files(case) as (qrels, run, zpath, run_bytes):
        done = subprocess.run(
            [binary, *_argv(case, qrels, run, zpath)],
            input=run_bytes if case.run_from_stdin else b"",
            capture_output=True,
            timeout=60,
            check=False,
        )
    return (
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def run_ours(case: Case) -> tuple[int, str, str]:
    from polars_rankeval.cli.app import main

    with _files(case) as (qrels, run, zpath, run_bytes):
        out, err = io.StringIO(), io.StringIO()
        stdin = io.TextIOWrapper(io.BytesIO(run_bytes if case.run_from_stdin else b""))
        saved = sys.stdin
        sys.stdin = stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(["trec-eval", *_argv(case, qrels, run, zpath)])
                except SystemExit as exc:  # pragma: no cover - main returns codes
                    code = exc.code if isinstance(exc.code, int) else 1
                except Exception as exc:
                    code = 99
                    err.write(f"CRASH {type(exc).__name__}: {exc}")
        finally:
            sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- deviations


def _fields(line: str) -> list[str]:
    return line.split()


def _atol(text: str) -> int:
    sign, digits, i = 1, "", 0
    text = text.lstrip()
    if text[:1] in "+-" and text:
        sign = -1 if text[0] == "-" else 1
        i = 1
    while i < len(text) and text[i].isdigit():
        digits += text[i]
        i += 1
    return sign * int(digits) if digits else 0


def _atof(text: str) -> float:
    import re

    match = re.match(
        r"\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|(?i:inf|nan)))", text
    )
    return float(match.group(1)) if match else 0.0


_GAIN_MEASURES = (
    "ndcg",
    "dcg",
    "ideal_dcg",
    "ndcg_rel",
    "Rndcg",
    "G",
    "rbp",
    "ndcg_cut",
    "all_trec",
)


def _measure_args(case: Case) -> list[str]:
    out, args = [], list(case.args)
    for i, a in enumerate(args):
        if a in ("-m", "--measure") and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith("--measure="):
            out.append(a.split("=", 1)[1])
        elif a.startswith("-m") and len(a) > 2:
            out.append(a[2:])
    return out or ["official"]


MISSING = "a qrels query missing from the run without -c (10.0-rc3 exits 4; we skip it)"


def without_missing_queries(case: Case) -> Case:
    """The reference for deviation 1: the qrels without the queries the run lacks.

    trec_eval 10.0-rc3 exits on a qrels query without results (unless -c); its documented
    behaviour is to ignore such a query, which is what it prints when the query's
    judgments are removed.
    """
    run_q = {f[0] for line in case.run if len(f := _fields(line)) >= 6 and not f[0].startswith("#")}
    kept = tuple(
        line for line in case.qrels
        if not (len(f := _fields(line)) == 4 and not line.startswith("#") and f[0] not in run_q)
    )  # fmt: skip
    return replace(case, qrels=kept)


def deviation(case: Case) -> str | None:
    """Why trec_eval's output on ``case`` is not the reference (a README deviation), or None."""
    qrels: dict[str, list[int]] = {}
    for line in case.qrels:
        f = _fields(line)
        if len(f) >= 4 and not line.startswith("#"):
            qrels.setdefault(f[0], []).append(_atol(f[3]))
    run_q = {f[0] for line in case.run if len(f := _fields(line)) >= 6 and not f[0].startswith("#")}
    if case.qrels and case.qrels[-1].startswith("#"):
        return "a comment as the last qrels line (trec_eval reads past its buffer)"
    if "-R" in case.args and case.args[case.args.index("-R") + 1 :][:1] != ("qrels",):
        return None  # -R qrels_jg / prefs / qrels_prefs: trec_prefs follows trec_eval there
    args = case.args
    complete = any(a in ("-c", "--complete_rel_info_wanted") for a in args)
    debug_q = [
        a.split(".", 1)[1] for a in args if a.startswith(("-D", "--Debug_level")) and "." in a
    ]
    wanted = set(qrels) if not debug_q else {debug_q[0]} & set(qrels)
    if not complete and any(q not in run_q for q in wanted):
        return MISSING
    measures = _measure_args(case)
    names = {m.split(".", 1)[0] for m in measures}
    if names - {"runid", "num_q"} and any(max(v) < 0 for q, v in qrels.items() if q in wanted):
        return "a query with only negative judgments (trec_eval fails or reuses older levels)"
    trio = {"dcg", "ideal_dcg", "ndcg"}
    requested = (names | ({"ndcg"} if "all_trec" in names else set())) & trio
    if len(requested) >= 2 and any(m.partition(".")[0] in trio and "." in m for m in measures):
        return "dcg, ideal_dcg and ndcg share their parameters; trec_eval frees them twice"
    for m in measures:
        name, _, params = m.partition(".")
        if name in ("ndcg", "dcg", "ideal_dcg", "ndcg_rel", "Rndcg", "G") and params:
            gains = [p.split("=", 1)[1] for p in params.split(",") if "=" in p]
            if any(not _atof(g).is_integer() for g in gains):
                return "fractional gains in a gain map (trec_eval sorts gains as integers)"
    return None


def _filter(stdout: str, case: Case) -> str:
    """Drop the lines of a documented deviation that depends on trec_eval's memory (rbp).

    trec_eval 10.0-rc3's rbp compares gains with uninitialised ``min``/``max`` and may
    rescale them by whatever the stack holds; we follow its comment (rescale into [0, 1]
    only when a gain lies outside), so its rbp lines are not compared.
    """
    return "".join(
        line
        for line in stdout.splitlines(keepends=True)
        if not line.startswith(("rbp ", "rbp_p", "Zrbp ", "Zrbp_p"))
    )


def compare(case: Case, binary: str) -> Outcome:
    reason = deviation(case)
    reference = case
    if reason == MISSING:
        reference = without_missing_queries(case)
        reason = deviation(reference) if reference.qrels else reason
    if reason:
        return Outcome("skip", reason)
    theirs = run_reference(reference, binary)
    ours = run_ours(case)
    if theirs[0] != 0:
        status = "same" if ours[0] != 0 else "differ"
        why = (
            ""
            if status == "same"
            else f"trec_eval failed ({theirs[0]}: {theirs[2].strip()}), ours did not"
        )
        return Outcome(status, why, ours, theirs)
    if ours[0] != 0:
        return Outcome("differ", f"ours failed: {ours[2].strip()}", ours, theirs)
    if _filter(ours[1], case) == _filter(theirs[1], case):
        return Outcome("same", "", ours, theirs)
    return Outcome("differ", "output differs", ours, theirs)


# --------------------------------------------------------------------------- generator

_QIDS = ("1", "2", "10", "9", "01", "q1", "Q2", "a", "b-2", "301", "30", "3", "é")
_DOCS = ("d1", "d2", "d10", "d9", "D3", "1", "2", "10", "01", "x", "doc_5", "zz", "a.b", "FT-1")


def _num_rel(rng: random.Random, value: int) -> str:
    forms = [str(value), str(value), f"+{value}" if value >= 0 else str(value), f"{value}.0",
             f"{value}e3", f"{value}.9", f"0{value}" if value >= 0 else str(value)]  # fmt: skip
    return rng.choice(forms)


def _num_score(rng: random.Random, value: float) -> str:
    forms = [repr(value), f"{value:.3f}", f"{value:e}", f"{value:+g}", f"{value}", f"{value:.1e}"]
    text = rng.choice(forms)
    if rng.random() < 0.05:
        text += rng.choice(["abc", "e", "e+"])  # atof reads the number prefix
    return text


def _sep(rng: random.Random, odd: bool) -> str:
    if not odd:
        return " "
    return rng.choice([" ", "\t", "  ", " \t", "\t ", "\t\t"])


_MEASURES = (
    "official", "all_trec", "set", "P", "P.5", "P.1,3,10", "P.3,1", "P.2.7", "recall.2,4",
    "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall",
    "iprec_at_recall.0,0.5,1", "iprec_at_recall.0.25,.75", "relstring", "relstring.20",
    "relstring.3", "infAP", "gm_bpref", "Rprec_mult", "Rprec_mult.0.5,1.5,3", "utility",
    "utility.2,-1,0.5,0.1", "11pt_avg", "11pt_avg.0.2,0.5,0.8", "11pt_avg.0.5,0.2,0.9",
    "11pt_avg.0.9,0.1,0.5,0,0.3", "11pt_avg.1,0", "binG", "G", "G.0=0,1=1,2=5",
    "dcg", "ideal_dcg", "ndcg", "ndcg.0=0,1=1,2=3,3=7", "ndcg.1=3,2=9", "ndcg.2=0",
    "ndcg.-1=2", "dcg.1=2", "ideal_dcg.3=1", "ndcg_rel", "ndcg_rel.1=2", "Rndcg",
    "Rndcg.1=3,2=1", "ndcg_cut", "ndcg_cut.1,3,5", "map_cut.2,5", "relative_P.1,4",
    "success", "success.2", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "set_F.0.5", "set_F.2", "num_nonrel_judged_ret", "yaap", "rbp", "rbp.p=0.5", "rbp_resid",
    "rbp_resid.p=0.8", "unj", "unj.1,2", "runid", "num_q", "num_ret", "num_rel", "num_rel_ret",
)  # fmt: skip
_BAD_MEASURES = (
    "P.0",
    "P.5,5",
    "nosuch",
    "P.",
    "utility.1,2",
    "ndcg.1=",
    "iprec_at_recall.0.5,0.5",
)


def _order_run(rng: random.Random, lines: list[str]) -> None:
    """Put the run lines in a random order, or (half the time) as runs are usually written.

    Shuffled (half), or each query's lines together (queries in a random or sorted
    order) and within a query: in trec_eval's order (score descending, then docno
    descending), by score with ties in any order, or as generated (not by score).
    """
    if rng.random() < 0.5:
        rng.shuffle(lines)
        return
    within = rng.choice(["trec", "score", "generated"])
    by_query: dict[str, list[str]] = {}
    for line in lines:
        by_query.setdefault(_fields(line)[0], []).append(line)
    queries = list(by_query)
    if rng.random() < 0.5:
        queries.sort()
    else:
        rng.shuffle(queries)

    def score(line: str) -> tuple[bool, float]:
        value = _atof(_fields(line)[4])
        return (math.isnan(value), -value if not math.isnan(value) else 0.0)

    lines.clear()
    for q in queries:
        block = by_query[q]
        if within == "trec":
            block.sort(key=lambda ln: _fields(ln)[2].encode(), reverse=True)
        if within != "generated":
            block.sort(key=score)  # stable: ties keep the docno order above
        lines.extend(block)


def generate(rng: random.Random) -> Case:
    """A random case: see the module docstring for what varies."""
    odd = rng.random() < 0.4
    n_q = rng.randint(1, 5)
    qids = rng.sample(_QIDS, n_q)
    qrels_lines: list[str] = []
    run_lines: list[str] = []
    graded = rng.random() < 0.6
    tie_scores = rng.random() < 0.5
    tag = rng.choice(["tagA", "run-1", "STANDARD"])
    for q in qids:
        only_run = rng.random() < 0.12
        only_qrels = rng.random() < 0.04
        docs = rng.sample(_DOCS, rng.randint(1, len(_DOCS)))
        judged = docs[: rng.randint(0, len(docs))]
        if not only_run:
            levels = [-1, 0, 0, 1, 1, 2, 3, 4] if graded else [0, 0, 1, 1]
            if not judged:
                judged = docs[:1]
            rels = [rng.choice(levels) for _ in judged]
            if max(rels) < 0 and rng.random() < 0.8:
                rels[0] = rng.choice([0, 1])
            for d, r in zip(judged, rels, strict=True):
                s = _sep(rng, odd)
                lead = rng.choice(["", " ", "\t"]) if odd else ""
                trail = rng.choice(["", " ", "\t"]) if odd else ""
                it = rng.choice(["0", "Q0", "1"])
                qrels_lines.append(
                    f"{lead}{q}{s}{it}{_sep(rng, odd)}{d}{_sep(rng, odd)}{_num_rel(rng, r)}{trail}"
                )
        if only_qrels and not only_run:
            continue
        retrieved = rng.sample(_DOCS, rng.randint(0 if rng.random() < 0.1 else 1, len(_DOCS)))
        if not retrieved:
            continue
        nan_query = rng.random() < 0.05
        for rank, d in enumerate(retrieved):
            if nan_query:
                score = "nan"
            elif tie_scores:
                score = _num_score(rng, rng.choice([0.0, 0.5, 1.0, 2.0, -1.0]))
            else:
                score = _num_score(rng, round(rng.uniform(-5, 5), rng.choice([1, 3, 6])))
            if rng.random() < 0.03 and not nan_query:
                score = rng.choice(["inf", "-inf", "1e308", "-0", "0x1A", "-0X10"])
            rank_text = rng.choice([str(rank + 1), str(rank + 1), "0", "x", f"{rank}.5"])
            run_tag = tag if rng.random() < 0.9 else rng.choice(["other", "t2"])
            extra = rng.choice(["", "", "", " extra", "\tmore fields here"]) if odd else ""
            lead = rng.choice(["", " ", "\t"]) if odd else ""
            it = rng.choice(["Q0", "0", "q0"])
            s = [_sep(rng, odd) for _ in range(5)]
            run_lines.append(
                f"{lead}{q}{s[0]}{it}{s[1]}{d}{s[2]}{rank_text}{s[3]}{score}{s[4]}{run_tag}{extra}"
            )
        if rng.random() < 0.02 and retrieved:
            run_lines.append(run_lines[-1])  # a duplicate document: trec_eval refuses it
    _order_run(rng, run_lines)
    if rng.random() < 0.6:
        rng.shuffle(qrels_lines)
    if rng.random() < 0.02 and qrels_lines:
        qrels_lines.append(qrels_lines[0])  # a duplicate judgment
    if odd:
        for _ in range(rng.randint(0, 3)):
            pos = rng.randint(0, len(run_lines))
            run_lines.insert(
                pos, rng.choice(["", "   ", "# comment", "  # indented comment", "\t"])
            )
        if rng.random() < 0.3 and len(qrels_lines) > 1:
            pos = rng.randint(0, len(qrels_lines) - 1)  # never last, never twice in a row
            qrels_lines.insert(pos, "# a qrels comment")
        if rng.random() < 0.03:
            qrels_lines.insert(rng.randint(0, len(qrels_lines)), "")  # blank qrels line: an error
    if not run_lines or not any(ln.strip() and not ln.strip().startswith("#") for ln in run_lines):
        run_lines.append(f"{qids[0]} Q0 d1 1 1.0 {tag}")
    if not qrels_lines:
        qrels_lines.append(f"{qids[0]} 0 d1 1")
    args = _options(rng, qids)
    zscores = None
    if "@Z" in args:
        zscores = _zscores(rng, qids)
    return Case(
        qrels=tuple(qrels_lines),
        run=tuple(run_lines),
        args=tuple(args),
        run_from_stdin=rng.random() < 0.05,
        zscores=zscores,
        eol="\r\n" if odd and rng.random() < 0.1 else "\n",
        final_newline=rng.random() < 0.9,
    )


def _zscores(rng: random.Random, qids: list[str]) -> tuple[str, ...]:
    names = ["map", "P_5", "num_ret", "num_rel", "recip_rank", "ndcg", "bpref", "Rprec"]
    lines = []
    for q in qids:
        if rng.random() < 0.8:
            for n in rng.sample(names, rng.randint(1, len(names))):
                lines.append(f"{q} {n} {rng.choice([0.1, 0.25, 3])} {rng.choice([0.5, 2, 0])}")
            lines.append(
                f"{q} \u00ff\u00ff 0 1"
            )  # keeps trec_eval's binary search inside the array
    lines.append("\u00ff\u00ff \u00ff\u00ff 0 1")
    rng.shuffle(lines)
    return tuple(lines)


def _options(rng: random.Random, qids: list[str]) -> list[str]:
    args: list[str] = []
    long_names = rng.random() < 0.2
    if rng.random() < 0.4:
        args.append("--query_eval_wanted" if long_names else "-q")
    if rng.random() < 0.25:
        args.append("--complete_rel_info_wanted" if long_names else "-c")
    if rng.random() < 0.08:
        args.append("--nosummary" if long_names else "-n")
    if rng.random() < 0.25:
        level = rng.choice(["0", "2", "3", "1", "2.5", "-1", "-2"])
        args += (
            ["--level_for_rel", level]
            if long_names
            else rng.choice([["-l", level], [f"-l{level}"]])
        )
    if rng.random() < 0.2:
        m = rng.choice(["0", "1", "3", "5", "10"])
        args += ["--Max_retrieved_per_topic", m] if long_names else ["-M", m]
    if rng.random() < 0.2:
        args.append("--Judged_docs_only" if long_names else "-J")
    if rng.random() < 0.1:
        args += ["-N", rng.choice(["0", "100", "20"])]
    if rng.random() < 0.05:
        args += ["-D", f"0.{rng.choice(qids)}"]
    if rng.random() < 0.04:
        args += ["-T", "trec_results"]
    if rng.random() < 0.04:
        args += ["-R", "qrels"]
    if rng.random() < 0.05:
        args += ["-Z", "@Z"]
    if rng.random() < 0.01:
        args.append("-v")
    n_measures = rng.choice([0, 1, 1, 2, 3, 5])
    for _ in range(n_measures):
        m = rng.choice(_BAD_MEASURES) if rng.random() < 0.03 else rng.choice(_MEASURES)
        args += (
            [f"--measure={m}"]
            if long_names and rng.random() < 0.5
            else rng.choice([["-m", m], [f"-m{m}"]])
        )
    return args


# --------------------------------------------------------------------------- -R formats


def relation_case(seed: int, fmt: str) -> Case:
    """A random ``-R qrels_jg / prefs / qrels_prefs`` case (test_trec_prefs.py's generator).

    The relations file takes the place of the qrels; ``-R fmt`` and the options are in
    the arguments.
    """
    from tests.trec_eval.test_trec_prefs import measures_for, random_case

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        opts = random_case(rng, fmt, Path(tmp))
        rel = tuple((Path(tmp) / f"rel.{fmt}").read_text().split("\n")[:-1])
        run = tuple((Path(tmp) / "run").read_text().split("\n")[:-1])
    measures = measures_for(rng, fmt)
    args = ["-R", fmt]
    if rng.random() < 0.6:
        args.append("-q")
    if opts.get("complete"):
        args.append("-c")
    if "max_docs" in opts:
        args += ["-M", str(opts["max_docs"])]
    if opts.get("judged"):
        args.append("-J")
    if "level" in opts:
        args += ["-l", str(opts["level"])]
    for m in measures:
        args += ["-m", m]
    return Case(qrels=rel, run=run, args=tuple(args))


# --------------------------------------------------------------------------- shrinker


def shrink(case: Case, still_fails: Callable[[Case], bool], *, max_steps: int = 400) -> Case:
    """Delete lines of both files and arguments while ``still_fails`` holds (greedy ddmin)."""
    steps = 0

    def attempts(c: Case) -> Iterator[Case]:
        for name in ("run", "qrels"):
            lines = getattr(c, name)
            chunk = max(1, len(lines) // 2)
            while chunk >= 1:
                for start in range(0, len(lines), chunk):
                    kept = lines[:start] + lines[start + chunk :]
                    if kept:
                        yield replace(c, **{name: kept})
                chunk //= 2
        args = list(c.args)
        for i in range(len(args)):
            if args[i] in ("-q", "-c", "-J", "-n", "--query_eval_wanted", "-v"):
                yield replace(c, args=tuple(args[:i] + args[i + 1 :]))
            elif args[i] in ("-m", "-M", "-l", "-N", "-D", "-T", "-R") and i + 1 < len(args):
                yield replace(c, args=tuple(args[:i] + args[i + 2 :]))
        if c.run_from_stdin:
            yield replace(c, run_from_stdin=False)

    current = case
    progress = True
    while progress and steps < max_steps:
        progress = False
        for candidate in attempts(current):
            steps += 1
            if steps >= max_steps:
                break
            if still_fails(candidate):
                current = candidate
                progress = True
                break
    return current


def differs(binary: str) -> Callable[[Case], bool]:
    def check(case: Case) -> bool:
        return compare(case, binary).status == "differ"

    return check


# --------------------------------------------------------------------------- driver


SKIPS: dict[str, int] = {}


def run_cases(
    n: int, seed: int, binary: str
) -> tuple[dict[str, int], list[tuple[int, Case, Outcome]]]:
    counts = {"same": 0, "differ": 0, "skip": 0}
    failures = []
    for i in range(n):
        case = generate(random.Random(seed * 1_000_003 + i))
        outcome = compare(case, binary)
        counts[outcome.status] += 1
        if outcome.status == "skip":
            SKIPS[outcome.reason] = SKIPS.get(outcome.reason, 0) + 1
        if outcome.status == "differ":
            failures.append((i, case, outcome))
    return counts, failures


def show_diff(outcome: Outcome) -> str:
    import difflib

    if outcome.reason != "output differs":
        return outcome.reason
    diff = difflib.unified_diff(
        outcome.theirs[1].splitlines(),
        outcome.ours[1].splitlines(),
        "trec_eval",
        "ours",
        lineterm="",
        n=1,
    )
    return "\n".join(list(diff)[:40])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="shrink and print this many failures")
    parser.add_argument(
        "--relations", type=int, default=0, help="also this many -R cases per format"
    )
    args = parser.parse_args(argv)
    binary, reason = reference_binary()
    if binary is None:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    counts, failures = run_cases(args.cases, args.seed, binary)
    compared = counts["same"] + counts["differ"]
    rate = counts["same"] / compared if compared else math.nan
    print(f"cases {args.cases}: identical {counts['same']}, differ {counts['differ']}, "
          f"skipped (documented deviations) {counts['skip']}; agreement {rate:.4f}")  # fmt: skip
    for fmt in ("qrels_jg", "prefs", "qrels_prefs") if args.relations else ():
        same = 0
        for i in range(args.relations):
            outcome = compare(relation_case(args.seed * 1_000_003 + i, fmt), binary)
            same += outcome.status == "same"
            if outcome.status == "differ" and len(failures) < 50:
                failures.append((i, relation_case(args.seed * 1_000_003 + i, fmt), outcome))
        print(f"-R {fmt}: {args.relations} cases, identical {same}")
    for reason, count in sorted(SKIPS.items(), key=lambda kv: -kv[1]):
        print(f"  skipped {count}: {reason}")
    for i, case, _ in failures[: args.show]:
        small = shrink(case, differs(binary))
        print(f"\n=== case {i} (seed {args.seed}), shrunk:\n{small.describe()}")
        print(show_diff(compare(small, binary)))
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())

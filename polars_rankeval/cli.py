"""The ``polars-rankeval`` command line (also ``python -m polars_rankeval``).

``polars-rankeval`` with no arguments evaluates the bundled example (trec_eval's test
run and its relevance judgments); ``--recs`` and ``--truth`` evaluate your own files.
``polars-rankeval metrics`` lists every metric the grammar knows.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import logging
import os
import shutil
import signal
import sys
import textwrap
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import polars as pl

from polars_rankeval import __version__
from polars_rankeval._types import (
    AGGREGATIONS,
    EMPTY_POLICIES,
    STRATEGIES,
    SUMMARY_FORMS,
    TIE_POLICIES,
    USER_UNIVERSES,
)

if TYPE_CHECKING:
    from polars_rankeval.registry import MetricSpec

# The heavy modules (evaluate, registry, _plan) are imported where used: the trec-eval
# command line starts without them.

PROG = "polars-rankeval"
INTERRUPTED_EXIT = 128 + signal.SIGINT
"""Exit status after Ctrl-C (130)."""
TERMINATED_EXIT = 128 + signal.SIGTERM
"""Exit status after SIGTERM (143)."""
CONVENTION_PRESETS: tuple[str, ...] = (
    "trec_eval",
    "ranx",
    "ir_measures",
    "rectools",
    "replay",
    "recommenders",
    "lenskit",
    "torchmetrics",
    "recbole",
    "jurity",
    "hivemall",
    "sklearn",
    "cornac",
    "elliot",
)
"""The presets of ``--conventions`` (``polars_rankeval.conventions.PRESETS``, kept here
so that the command line starts without importing the metrics)."""
DEFAULT_METRICS: tuple[str, ...] = (
    "ndcg@10",
    "map@10",
    "mrr@10",
    "precision@10",
    "recall@10",
    "hit_rate@10",
    "auc",
)
FORMATS: tuple[str, ...] = ("table", "csv", "json", "markdown")
SUBCOMMANDS: tuple[str, ...] = ("evaluate", "metrics", "trec-eval", "compare", "plot")
COMPARE_FORMATS: tuple[str, ...] = ("markdown", "latex", "html", "table", "csv", "json")
FLOAT_PRECISION = 4
SYSTEM_COLUMN = "system"
"""The column naming the system of each ``--recs`` file when several are given."""
ID_TYPES: tuple[str, ...] = ("infer", "string")

_SCANNERS: dict[str, Callable[[Path], pl.LazyFrame]] = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".tsv": lambda path: pl.scan_csv(path, separator="\t"),
    ".tab": lambda path: pl.scan_csv(path, separator="\t"),
    ".ndjson": pl.scan_ndjson,
    ".jsonl": pl.scan_ndjson,
}
# TREC files: a run (qid Q0 docno rank score tag) or qrels (qid iter docno rel).
_TREC_SUFFIXES = {".run": "trec-run", ".qrels": "trec-qrels", ".div": "trec-div-qrels"}
INPUT_FORMATS: tuple[str, ...] = (
    "parquet", "csv", "tsv", "ndjson", "trec-run", "trec-qrels", "trec-div-qrels",
)  # fmt: skip
_TEXT_SUFFIXES = (".csv", ".tsv", ".tab")
_FORMAT_SUFFIX = {"parquet": ".parquet", "csv": ".csv", "tsv": ".tsv", "ndjson": ".ndjson"}


class UsageError(ValueError):
    """A mistake in the command line that argparse cannot see (e.g. --recs without --truth)."""


# --------------------------------------------------------------------------- parsing
def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with the ``evaluate`` and ``metrics`` subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The top-level parser; ``evaluate`` is the subcommand used when none is given.
    """
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Evaluate rankings and recommendations with Polars. Without a subcommand, "
            "'evaluate' runs; without --recs/--truth it evaluates the bundled example."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{evaluate,metrics,trec-eval,compare,plot}")

    ev = sub.add_parser(
        "evaluate",
        help="evaluate metrics (the default subcommand)",
        description=(
            "Evaluate metrics over recommendations joined with ground truth. Without "
            "--recs/--truth, evaluates the bundled example (trec_eval's test run)."
        ),
    )
    ev.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help=(
            "metric in the grammar name[(key=value,...)][@k], e.g. ndcg@10 or "
            "'precision(rel=2)@5'; repeatable (default: " + ", ".join(DEFAULT_METRICS) + ")"
        ),
    )
    ev.add_argument(
        "--ties",
        choices=TIE_POLICIES,
        default="expected",
        help="how tied scores are ordered (default: expected)",
    )
    ev.add_argument(
        "--users",
        choices=USER_UNIVERSES,
        default="truth",
        help="which users are evaluated (default: truth)",
    )
    ev.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help=(
            "what an undefined per-user value becomes: skip (default; each metric's mean "
            "over the users it is defined for, counted in n_users(METRIC)), skip_row (a "
            "user undefined for any metric is left out of every mean), zero, error"
        ),
    )
    _add_conventions(ev)
    ev.add_argument(
        "--summary",
        choices=("auto", *SUMMARY_FORMS),
        default="auto",
        help=(
            "wide (one row per --by group) or long (one row per group, metric and "
            "aggregation: metric, aggregation, value, n_users, n_skipped); auto (default) "
            "is long for --format table and markdown, which people read, and wide for "
            "csv and json, which programs read"
        ),
    )
    ev.add_argument(
        "--per-user",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help=(
            "one row per user: printed instead of the means, or with FILE written there "
            "(.csv, .parquet, .json, .ndjson) while the means are printed"
        ),
    )
    ev.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    ev.add_argument(
        "--recs",
        action="append",
        metavar="PATH",
        help=(
            "recommendations (user, item, score): .parquet, .csv, .tsv, .ndjson or .run; "
            "repeatable and globs ('runs/*.run', quoted) for several systems, each file one "
            f"system named by its file stem in a {SYSTEM_COLUMN!r} column"
        ),
    )
    ev.add_argument(
        "--system",
        action="append",
        metavar="NAME",
        help=(
            "name of the system of each --recs file, in order (default: the file stem); repeatable"
        ),
    )
    ev.add_argument(
        "--id-type",
        choices=ID_TYPES,
        default="infer",
        help=(
            "infer (default): ids keep the dtype each file gives them, and must be of one "
            "kind (integers or strings) in --recs and --truth; string: read the user and "
            "item ids of every file as text (keeps leading zeros: '007' is not 7)"
        ),
    )
    ev.add_argument(
        "--truth",
        type=Path,
        metavar="PATH",
        help="ground truth (user, item[, relevance]): .parquet, .csv, .tsv, .ndjson or .qrels",
    )
    ev.add_argument(
        "--recs-format", choices=INPUT_FORMATS, help="format of --recs (default: from extension)"
    )
    ev.add_argument(
        "--truth-format",
        choices=INPUT_FORMATS,
        help="format of --truth (default: from extension)",
    )
    ev.add_argument("--user", default="user", metavar="COL", help="user column (default: user)")
    ev.add_argument("--item", default="item", metavar="COL", help="item column (default: item)")
    ev.add_argument("--score", default=None, metavar="COL", help="score column (default: score)")
    ev.add_argument(
        "--rank",
        default=None,
        metavar="COL",
        help="order by this rank column (1 = best) instead of a score",
    )
    ev.add_argument(
        "--rank-positions",
        choices=("relative", "absolute"),
        default="relative",
        help=(
            "with --rank: relative (default: ranks only order a user's items, renumbered "
            "1..n) or absolute (the ranks are the positions, gaps kept, as RecTools: an "
            "item at rank 9 is outside @3; distinct integer ranks >= 1 per user)"
        ),
    )
    ev.add_argument(
        "--relevance",
        default=None,
        metavar="COL",
        help=(
            "relevance column of the truth (default: relevance; a truth without that "
            "column marks every row relevant); a column named here must exist"
        ),
    )
    ev.add_argument(
        "--subtopic",
        default=None,
        metavar="COL",
        help=(
            "subtopic (intent) column of --truth, one row per (user, item, subtopic), for "
            "alpha_ndcg, err_ia, nrbp, s_recall, precision_ia and map_ia (default: "
            "subtopic for TREC diversity qrels, --truth-format trec-div-qrels or a .div file)"
        ),
    )
    _add_pool_unjudged(ev)
    ev.add_argument(
        "--by",
        action="append",
        default=None,
        metavar="COL",
        help="column of --recs naming a system or segment; repeatable",
    )
    ev.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="a joined long table (user, item, score, relevance) instead of --recs/--truth",
    )
    ev.add_argument(
        "--aggregate",
        action="append",
        choices=AGGREGATIONS,
        default=None,
        help="aggregation over users (default: mean); repeatable, e.g. --aggregate mean "
        "--aggregate gmean",
    )
    ev.add_argument(
        "--ci",
        choices=("bootstrap", "t"),
        default=None,
        help="also each mean's standard error and confidence interval: se(M), ci_low(M), "
        "ci_high(M) (t: Student t; bootstrap: percentile, 10,000 resamples, seed 0)",
    )
    ev.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help="level of the --ci intervals, in (0, 1) (default: 0.95)",
    )
    ev.add_argument(
        "--n-items", type=int, metavar="N", help="catalog size (default: distinct items)"
    )
    ev.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="auto",
        help="in memory or bucket by bucket (default: auto, from --memory-limit)",
    )
    ev.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="memory budget, e.g. 4GB (default: half of the available memory)",
    )
    ev.add_argument("--buckets", type=int, metavar="K", help="force K buckets of users")
    ev.add_argument("--temp-dir", type=Path, metavar="DIR", help="temporary files of bucketed runs")
    ev.set_defaults(handler=_run_evaluate)

    mt = sub.add_parser(
        "metrics",
        help="list the registered metrics, or show one",
        description=(
            "List every registered metric (sorted by name) with its options, fitted to "
            "the terminal; 'metrics NAME' shows one metric in full: definition, options "
            "with defaults and choices, aliases and examples."
        ),
    )
    mt.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="a metric name, alias or full metric string (e.g. ndcg, P, 'ndcg(gain=exp)@10')",
    )
    mt.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    mt.add_argument(
        "--width",
        type=int,
        metavar="N",
        help="width of the table in characters (default: the terminal's width)",
    )
    mt.set_defaults(handler=_run_metrics)

    te = sub.add_parser(
        "trec-eval",
        help="trec_eval on TREC qrels and run files, with trec_eval's output",
        description=(
            "A drop-in trec_eval 10.0-rc3: trec_eval's options (-q -m -c -l -n -D -J -N -M "
            "-R -T -Z -v and the long names, '-' for a run on standard input), measures and "
            "output, byte for byte. Example: polars-rankeval trec-eval -q -m all_trec "
            "qrels run. This help comes from polars-rankeval; the options are parsed as "
            "trec_eval parses them (see the README's trec_eval section)."
        ),
    )
    te.add_argument("qrels", type=Path, help="TREC qrels file (qid iter docno rel)")
    te.add_argument("run", help="TREC run file (qid Q0 docno rank score tag), or - for stdin")
    te.set_defaults(handler=_run_trec_eval)
    _add_compare(sub)
    _add_plot_parser(sub)
    return parser


def _add_compare(sub: Any) -> None:
    from polars_rankeval._stats import CI_METHODS, CORRECTIONS, TESTS

    cp = sub.add_parser(
        "compare",
        help="paired significance tests between systems, as a report table",
        description=(
            "Compare systems on per-user metric values: paired tests, corrections, effect "
            "sizes and intervals (polars_rankeval.compare). Input: --data (a long table "
            "with a system column), --recs/--truth with --by, or TREC runs (--run, one "
            "system per file) with --qrels. Without input, the bundled four-system "
            "example. --format markdown/latex/html prints the report; table/csv/json the "
            "full result."
        ),
    )
    cp.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="per-user metric, repeatable (default: ndcg@10)",
    )
    cp.add_argument("--data", type=Path, metavar="PATH", help="joined long table with --by")
    cp.add_argument("--recs", type=Path, metavar="PATH", help="recommendations with --by")
    cp.add_argument("--truth", type=Path, metavar="PATH", help="ground truth for --recs")
    cp.add_argument(
        "--run",
        action="append",
        dest="runs",
        metavar="[NAME=]PATH",
        help="TREC run file of one system (name: NAME or the file name without its "
        "extension); repeatable, with --qrels",
    )
    cp.add_argument("--qrels", type=Path, metavar="PATH", help="TREC qrels for --run")
    cp.add_argument(
        "--subtopic",
        default=None,
        metavar="COL",
        help=(
            "subtopic column of --truth for the intent-aware metrics (default: subtopic "
            "for TREC diversity qrels: a .div --truth or --qrels file)"
        ),
    )
    cp.add_argument("--by", default="system", metavar="COL", help="system column (default: system)")
    _add_pool_unjudged(cp)
    cp.add_argument("--baseline", metavar="NAME", help="compare every system with this one")
    cp.add_argument("--test", choices=TESTS, default="randomization", help="default: randomization")
    cp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=None,
        help="default: holm (none for tukey)",
    )
    cp.add_argument(
        "--family",
        choices=("all", "metric"),
        default="all",
        help="comparisons corrected together (default: all)",
    )
    cp.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cp.add_argument(
        "--n-resamples", type=int, default=10_000, metavar="N", help="resamples (default 10000)"
    )
    cp.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    cp.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    cp.add_argument("--ci", choices=CI_METHODS, default="auto", help="interval (default: auto)")
    cp.add_argument(
        "--ties", choices=TIE_POLICIES, default="expected", help="tie policy (default: expected)"
    )
    cp.add_argument(
        "--users", choices=USER_UNIVERSES, default="truth", help="users evaluated (default: truth)"
    )
    cp.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help="undefined per-user values (default: skip)",
    )
    _add_conventions(cp)
    cp.add_argument(
        "--format",
        choices=COMPARE_FORMATS,
        default="markdown",
        help="report (markdown, latex, html) or the full result (table, csv, json); "
        "default: markdown",
    )
    cp.add_argument(
        "--progress",
        action="store_true",
        help="report resampling progress on stderr (default: when it is a terminal)",
    )
    cp.set_defaults(handler=_run_compare)


def _add_pool_unjudged(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool-unjudged",
        nargs="?",
        const="pooled",
        default=None,
        metavar="COL",
        help=(
            "read truth relevance < 0 as trec_eval's infAP does: pooled but not judged "
            "(the relevance becomes unjudged) and add a boolean column COL (default: "
            "pooled), true for every row judged in the truth, for -m 'inf_ap(pool=COL)' "
            "('infAP(pool=pooled)' under --conventions trec_eval or ir_measures); "
            "without it a negative relevance is an error"
        ),
    )


def _pooled(args: argparse.Namespace, data: pl.LazyFrame, relevance: str) -> pl.LazyFrame:
    """``--pool-unjudged``: :func:`polars_rankeval.trec.pool_unjudged` on the long frame."""
    if args.pool_unjudged is None:
        return data
    from polars_rankeval.trec import pool_unjudged

    out = pool_unjudged(data, relevance=relevance, pool=args.pool_unjudged)
    assert isinstance(out, pl.LazyFrame)  # lazy in, lazy out
    return out


def _add_conventions(parser: argparse.ArgumentParser) -> None:
    """``--conventions LIBRARY`` (evaluate and compare)."""
    parser.add_argument(
        "--conventions",
        choices=CONVENTION_PRESETS,
        default=None,
        metavar="LIBRARY",
        help=(
            "reproduce a library's numbers: -m takes that library's metric names (e.g. "
            "MAP@10 for rectools), ties/empty/users default to its rules and the columns "
            "read NAME@k[LIBRARY]; one of " + ", ".join(CONVENTION_PRESETS)
        ),
    )


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """Prepend ``evaluate`` unless a subcommand or a top-level flag comes first."""
    args = list(argv)
    if args and (args[0] in SUBCOMMANDS or args[0] in ("-h", "--help", "--version")):
        return args
    return ["evaluate", *args]


# --------------------------------------------------------------------------- input
def read_table(path: Path, fmt: str | None = None, *, text_ids: Sequence[str] = ()) -> pl.LazyFrame:
    """Scan a Parquet, CSV, TSV, NDJSON or TREC file lazily.

    Parameters
    ----------
    path
        The file; its suffix (case-insensitive) picks the reader: ``.parquet``,
        ``.csv``, ``.tsv``, ``.ndjson``/``.jsonl``, ``.run`` (TREC run) or ``.qrels``.
    fmt
        One of :data:`INPUT_FORMATS` to override the suffix.
    text_ids
        Columns read as text (``--id-type string``): a CSV or TSV file's values are
        taken as written (``"007"`` stays ``"007"``), other formats are cast to String.

    Returns
    -------
    polars.LazyFrame
        The file, not yet read.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the extension is not one of the supported ones.
    """
    if not path.is_file():
        msg = f"no such file: {str(path)!r}"
        raise FileNotFoundError(msg)
    kind = fmt or _TREC_SUFFIXES.get(path.suffix.lower())
    if kind == "trec-run":
        from polars_rankeval.trec import scan_run

        return scan_run(path).select("user", "item", "score")
    if kind == "trec-qrels":
        from polars_rankeval.trec import scan_qrels

        return scan_qrels(path).select("user", "item", "relevance")
    if kind == "trec-div-qrels":
        from polars_rankeval.trec import scan_diversity_qrels

        return scan_diversity_qrels(path)
    suffix = _FORMAT_SUFFIX[kind] if kind else path.suffix.lower()
    if text_ids and suffix in _TEXT_SUFFIXES:
        overrides = dict.fromkeys(text_ids, pl.String)
        separator = "," if suffix == ".csv" else "\t"
        return pl.scan_csv(path, separator=separator, schema_overrides=overrides)
    scan = _SCANNERS.get(suffix)
    if scan is None:
        known = ", ".join([*sorted(_SCANNERS), *_TREC_SUFFIXES])
        msg = (
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{known}, or --recs-format/--truth-format"
        )
        raise ValueError(msg)
    frame = scan(path)
    return _as_text_ids(frame, text_ids) if text_ids else frame


def _as_text_ids(frame: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """Cast the id columns present in ``frame`` to String (``--id-type string``)."""
    schema = frame.collect_schema()
    return frame.with_columns(pl.col(c).cast(pl.String) for c in columns if c in schema)


def _text_ids(args: argparse.Namespace) -> list[str]:
    return [args.user, args.item] if getattr(args, "id_type", "infer") == "string" else []


def recs_paths(patterns: Sequence[str]) -> list[Path]:
    """Expand the ``--recs`` arguments: each a path or a glob (``*``, ``?``, ``[...]``).

    Raises
    ------
    FileNotFoundError
        If a glob matches no file (a plain path is checked by :func:`read_table`).
    """
    paths: list[Path] = []
    for pattern in patterns:
        if any(ch in pattern for ch in "*?["):
            matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True))
            matches = [p for p in matches if p.is_file()]
            if not matches:
                msg = f"--recs {pattern!r} matches no file"
                raise FileNotFoundError(msg)
            paths.extend(matches)
        else:
            paths.append(Path(pattern))
    seen: set[Path] = set()
    for path in paths:
        if path in seen:
            msg = f"--recs names the file {str(path)!r} twice"
            raise UsageError(msg)
        seen.add(path)
    return paths


def system_names(paths: Sequence[Path], labels: Sequence[str] | None) -> list[str]:
    """The system name of each run file: ``--system`` labels in order, else the file stems."""
    if labels:
        if len(labels) != len(paths):
            files = ", ".join(str(p) for p in paths)
            msg = (
                f"--system is given {len(labels)} time(s) but --recs names {len(paths)} "
                f"file(s) ({files}); give one --system per file, in order"
            )
            raise UsageError(msg)
        names = list(labels)
    else:
        names = [p.stem for p in paths]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = (
            f"several --recs files have the system name {', '.join(map(repr, repeated))}; "
            "name them with --system, one per file"
        )
        raise UsageError(msg)
    return names


def read_recs(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str]]:
    """The ``--recs`` files as one frame, and the ``by`` columns to evaluate with.

    One file without ``--system``: the file as it is. Several files (or ``--system``):
    one system each, stacked with a ``system`` column (the ``--system`` labels in order,
    else the file stems), which becomes the first ``by`` column.
    """
    patterns = args.recs if isinstance(args.recs, list) else [str(args.recs)]
    paths = recs_paths(patterns)
    by = list(args.by or [])
    frames = [read_table(p, args.recs_format, text_ids=_text_ids(args)) for p in paths]
    labels = getattr(args, "system", None)
    if len(paths) == 1 and not labels:
        return frames[0], by
    names = system_names(paths, labels)
    if SYSTEM_COLUMN in by:
        msg = f"--by {SYSTEM_COLUMN} is implied by several --recs files (or --system)"
        raise UsageError(msg)
    first = frames[0].collect_schema()
    for path, frame in zip(paths[1:], frames[1:], strict=True):
        schema = frame.collect_schema()
        if SYSTEM_COLUMN in schema:
            msg = (
                f"{str(path)!r} already has a {SYSTEM_COLUMN!r} column; with several "
                f"--recs files, each file is one system"
            )
            raise UsageError(msg)
        for column in (args.user, args.item):
            if column in first and column in schema and first[column] != schema[column]:
                msg = (
                    f"column {column!r} has dtype {first[column]} in {str(paths[0])!r} but "
                    f"{schema[column]} in {str(path)!r}; pass --id-type string to read the "
                    "ids of every file as text"
                )
                raise TypeError(msg)
    if SYSTEM_COLUMN in first:
        msg = (
            f"{str(paths[0])!r} already has a {SYSTEM_COLUMN!r} column; with several "
            "--recs files (or --system), each file is one system"
        )
        raise UsageError(msg)
    labelled = [
        f.with_columns(pl.lit(n).alias(SYSTEM_COLUMN)) for f, n in zip(frames, names, strict=True)
    ]
    stacked = pl.concat(labelled, how="diagonal_relaxed")
    return stacked, [SYSTEM_COLUMN, *by]


def load_data(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str]]:
    """Build the long evaluation frame from ``--recs``/``--truth`` or the bundled example.

    Parameters
    ----------
    args
        Parsed ``evaluate`` arguments.

    Returns
    -------
    tuple of polars.LazyFrame and list of str
        Columns by, user, item, score (or rank) and relevance; and the ``by`` columns
        (``system`` first when several ``--recs`` files are given).
    """
    from polars_rankeval._evaluate import join

    by = list(args.by or [])
    if args.data is not None:
        if args.recs is not None or args.truth is not None or getattr(args, "system", None):
            msg = "--data cannot be combined with --recs/--truth/--system"
            raise UsageError(msg)
        return read_table(args.data, text_ids=_text_ids(args)), by
    if args.recs is None and args.truth is None:
        from polars_rankeval.datasets import load_example

        print(
            f"{PROG}: no --recs/--truth given; evaluating the bundled example "
            "(trec_eval's test run: 3 queries)",
            file=sys.stderr,
        )
        return load_example().lazy(), by
    if args.recs is None or args.truth is None:
        msg = "--recs and --truth must be given together"
        raise UsageError(msg)
    recs, by = read_recs(args)
    truth = read_table(args.truth, args.truth_format, text_ids=_text_ids(args))
    subtopic = args.subtopic
    diversity = (args.truth_format or _TREC_SUFFIXES.get(args.truth.suffix.lower())) == (
        "trec-div-qrels"
    )
    if subtopic is None and diversity:
        subtopic = "subtopic"
    try:
        joined = join(
            recs, truth, **_column_options(args), by=by, check_overlap=True, subtopic=subtopic
        )
    except TypeError as exc:
        if _text_ids(args) or "has dtype" not in str(exc):
            raise
        msg = f"{exc}; on the command line, pass --id-type string to compare ids as text"
        raise TypeError(msg) from None
    assert isinstance(joined, pl.LazyFrame)  # both inputs are lazy
    return joined, by


def _column_options(args: argparse.Namespace, *, joined: bool = False) -> dict[str, Any]:
    """Column options for ``join`` (``relevance`` may be None) or, joined, ``evaluate``."""
    relevance = args.relevance
    if joined and relevance is None:
        relevance = "relevance"
    return {
        "user": args.user,
        "item": args.item,
        "score": args.score,
        "relevance": relevance,
        "rank": args.rank,
    }


# --------------------------------------------------------------------------- output
def _cell(value: Any, precision: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.{precision}f}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pl.DataFrame, precision: int = FLOAT_PRECISION) -> str:
    """Render a frame as a GitHub-flavoured Markdown table.

    Parameters
    ----------
    frame
        The frame to render.
    precision
        Decimals shown for floats.

    Returns
    -------
    str
        The table, numeric columns right-aligned, one line per row, ending in a newline.

    Examples
    --------
    >>> import polars as pl
    >>> print(to_markdown(pl.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})), end="")
    | metric | value |
    | --- | ---: |
    | ndcg@10 | 0.5000 |
    """
    header = "| " + " | ".join(frame.columns) + " |"
    rule = "| " + " | ".join("---:" if d.is_numeric() else "---" for d in frame.dtypes) + " |"
    rows = ["| " + " | ".join(_cell(v, precision) for v in row) + " |" for row in frame.rows()]
    return "\n".join([header, rule, *rows]) + "\n"


def write_frame(frame: pl.DataFrame, fmt: str, out: TextIO, *, bare: bool = False) -> None:
    """Write a result frame to ``out`` in one of :data:`FORMATS`.

    Parameters
    ----------
    frame
        The result to print.
    fmt
        ``"table"`` (Polars' own printing, every row and column, 4 decimals),
        ``"csv"``, ``"json"`` (an array of row objects) or ``"markdown"``.
    out
        Where to write.
    bare
        For ``"table"``: hide the shape line and the column dtypes.
    """
    if fmt == "table":
        with pl.Config(
            tbl_rows=-1,
            tbl_cols=-1,
            float_precision=FLOAT_PRECISION,
            fmt_str_lengths=1000,
            tbl_width_chars=10_000,
            tbl_hide_dataframe_shape=bare,
            tbl_hide_column_data_types=bare,
        ):
            out.write(f"{frame}\n")
    elif fmt == "csv":
        out.write(frame.write_csv())
    elif fmt == "json":
        out.write(frame.write_json() + "\n")
    elif fmt == "markdown":
        out.write(to_markdown(frame))
    else:  # pragma: no cover - argparse restricts the choices
        msg = f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}"
        raise ValueError(msg)


# --------------------------------------------------------------------------- commands
def _summary_form(args: argparse.Namespace) -> str:
    """``--summary auto``: long for the formats people read, wide for the others."""
    if args.summary != "auto":
        return str(args.summary)
    return "long" if args.format in ("table", "markdown") else "wide"


def _run_evaluate(args: argparse.Namespace) -> int:
    from polars_rankeval._evaluate import evaluate, parse_metrics, summarize
    from polars_rankeval._finish import long_summary, with_intervals

    if args.conventions is not None:  # library names: resolved before reading data
        from polars_rankeval.conventions import explicit_rules, shown_names

        if not args.metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        metrics: Any = list(args.metrics)
        names = shown_names(args.conventions, metrics, **explicit_rules(vars(args)))
    else:
        metrics = parse_metrics(args.metrics or DEFAULT_METRICS)  # fail before reading data
        names = [m.name for m in metrics]
    args.summary = _summary_form(args)
    if args.ci is not None and args.per_user == "-":
        msg = (
            f"--ci {args.ci} gives intervals of the means; --per-user without FILE prints "
            "the per-user values instead of the means (give --per-user FILE)"
        )
        raise UsageError(msg)
    _progress("reading ...")
    data, by = load_data(args)
    data = _pooled(args, data, _column_options(args, joined=True)["relevance"])
    _progress(f"evaluating {len(metrics)} metric(s) ...")
    result = evaluate(
        data,
        metrics,
        **_column_options(args, joined=True),
        ties=args.ties,
        by=by or None,
        per_user=args.per_user is not None,
        users=args.users,
        empty=args.empty,
        aggregate=args.aggregate or "mean",
        summary=args.summary,
        ci=args.ci if args.per_user is None else None,
        confidence=args.confidence,
        n_items=args.n_items,
        strategy=args.strategy,
        memory_limit=args.memory_limit,
        n_buckets=args.buckets,
        temp_dir=args.temp_dir,
        progress=sys.stderr.isatty(),
        conventions=args.conventions,
        rank_positions=args.rank_positions,
    ).collect()
    if args.per_user in (None, "-"):
        write_frame(result, args.format, sys.stdout)
        return 0
    _write_per_user(result, Path(args.per_user))
    aggregate = args.aggregate or ["mean"]
    # zero and error were applied to the per-user values already.
    empty: Literal["skip", "skip_row"] = "skip_row" if args.empty == "skip_row" else "skip"
    summary = summarize(
        result.lazy(),
        names,
        by,
        aggregate=aggregate,
        empty=empty,
        ci=args.ci,
        confidence=args.confidence,
    )
    if args.summary == "long":
        summary = long_summary(summary, by, names, with_intervals(aggregate, args.ci))
    write_frame(summary.collect(), args.format, sys.stdout)
    return 0


def _write_per_user(frame: pl.DataFrame, path: Path) -> None:
    """Write the per-user table to ``path``; the format comes from the extension."""
    suffix = path.suffix.lower()
    writers: dict[str, Callable[[Path], None]] = {
        ".csv": frame.write_csv,
        ".tsv": lambda p: frame.write_csv(p, separator="\t"),
        ".parquet": frame.write_parquet,
        ".json": frame.write_json,
        ".ndjson": frame.write_ndjson,
        ".jsonl": frame.write_ndjson,
    }
    if suffix not in writers:
        msg = f"cannot write {str(path)!r}: use a .csv, .tsv, .parquet, .json or .ndjson file"
        raise ValueError(msg)
    # Write next to the target, then rename: a failed run leaves no half-written file.
    partial = path.with_name(path.name + ".partial")
    try:
        writers[suffix](partial)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def _run_metrics(args: argparse.Namespace) -> int:
    from polars_rankeval.registry import list_metrics

    width = args.width if args.width is not None else shutil.get_terminal_size().columns
    if width < 1:
        msg = f"--width must be a positive number of characters, got {width}"
        raise UsageError(msg)
    table = list_metrics().sort("name")
    if args.name is not None:
        spec = _metric_spec(args.name)
        if args.format != "table":
            write_frame(table.filter(pl.col("name") == spec.name), args.format, sys.stdout)
            return 0
        sys.stdout.write(describe_metric(spec, width))
        return 0
    if args.format != "table":  # machine-readable formats: every field, in full
        write_frame(table, args.format, sys.stdout)
        return 0
    rows = [
        [
            row["name"],
            "yes" if row["cutoff"] else "no",
            row["aliases"] or "-",
            row["options"] or "-",
            row["summary"],
        ]
        for row in table.iter_rows(named=True)
    ]
    header = ["name", "@k", "aliases", "options (default)", "definition"]
    sys.stdout.write(fit_table(header, rows, width, shrink=(2, 3, 4)))
    closing = f"{len(rows)} metrics; '{PROG} metrics NAME' shows one in full."
    sys.stdout.write("\n" + "\n".join(textwrap.wrap(closing, max(width, 20))) + "\n")
    return 0


def _metric_spec(name: str) -> MetricSpec:
    """The spec of a metric given by name, alias or full metric string (``ndcg@10``)."""
    from polars_rankeval.registry import get_spec, parse_metric

    try:
        return get_spec(name)
    except ValueError:
        return parse_metric(name).spec  # "ndcg(gain=exp)@10"; else the parse error


def fit_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], width: int, *, shrink: Sequence[int]
) -> str:
    """A plain-text table at most ``width`` characters wide, cells wrapped to fit.

    Columns not in ``shrink`` keep their natural width; the ``shrink`` columns share
    what is left, the last one taking the rest, and their cells are wrapped on word
    boundaries. When even that cannot fit (a very narrow terminal), each shrink column
    keeps at least 8 characters and lines may be longer than ``width``.

    Examples
    --------
    >>> print(fit_table(["a", "b"], [["x", "one two three"]], 12, shrink=[1]), end="")
    a  b
    -  ---------
    x  one two
       three
    """
    sep = "  "
    natural = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    widths = list(natural)
    fixed = sum(w for i, w in enumerate(widths) if i not in shrink) + len(sep) * (len(header) - 1)
    left = width - fixed
    if sum(natural[i] for i in shrink) > left:
        floor = min(8, max(1, left // len(shrink)))
        share = dict.fromkeys(shrink, floor)
        spare = max(0, left - floor * len(shrink))
        for i in shrink[:-1]:  # the earlier columns get a share, the last one the rest
            extra = max(0, min(natural[i] - floor, spare // (len(shrink) + 1)))
            share[i] += extra
            spare -= extra
        share[shrink[-1]] += spare
        for i in shrink:
            widths[i] = min(natural[i], share[i])

    def render(row: Sequence[str]) -> list[str]:
        cells = [
            textwrap.wrap(cell, w, break_on_hyphens=False) or [""] if i in shrink else [cell]
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        return [
            sep.join(
                (c[n] if n < len(c) else "").ljust(w) for c, w in zip(cells, widths, strict=True)
            ).rstrip()
            for n in range(max(len(c) for c in cells))
        ]

    lines = [*render(header), sep.join("-" * w for w in widths)]
    for row in rows:
        lines.extend(render(row))
    return "\n".join(lines) + "\n"


def metric_examples(spec: MetricSpec) -> list[str]:
    """Metric strings that use ``spec``: plain, and with a non-default option if it has one."""
    suffix = "@10" if spec.takes_k else ""
    examples = [spec.name + suffix]
    for param in spec.params.values():
        if param.choices:
            other = next(c for c in param.choices if c != param.default)
            examples.append(f"{spec.name}({param.name}={other}){suffix}")
            break
    return examples


def describe_metric(spec: MetricSpec, width: int) -> str:
    """One metric in full: summary, definition, options, tie policies, aliases, examples."""
    wrap = max(width - 2, 20)

    def para(text: str) -> list[str]:
        return ["  " + line for line in textwrap.wrap(text, wrap, break_on_hyphens=False)]

    scope = {
        "user": "a value per user, averaged over users",
        "global": "one value per by group",
        "item": "a value per item (evaluate with per_item=True)",
    }.get(spec.scope, spec.scope)
    lines = textwrap.wrap(f"{spec.name}: {spec.summary}", max(width, 20))
    lines += [
        "",
        *para(f"family: {spec.family}; @k: {'yes' if spec.takes_k else 'no'}; {scope}"),
        *para(f"aliases: {', '.join(spec.aliases) or '-'}"),
        "",
        "definition:",
        *para(spec.definition),
        "",
    ]
    rows = [(p.name, _fmt_option(p.default), p.values, p.doc) for p in spec.params.values()]
    if spec.scope == "user":  # the one option every per-user metric takes (_aggregate)
        from polars_rankeval import _aggregate

        choices = [a for a in _aggregate.USER_AGGREGATES if a != "pooled" or spec.name in
                   _aggregate.POOLED]  # fmt: skip
        doc = "the aggregation over users (mean, or a global value: see the README's grammar)"
        rows.append((_aggregate.OPTION, _aggregate.DEFAULT, " | ".join(choices), doc))
    if rows:
        lines.append("options (name, default, values):")
        name_w = max(len(r[0]) for r in rows)
        default_w = max(len(r[1]) for r in rows)
        for name, default, values, doc in rows:
            head = f"  {name.ljust(name_w)}  {default.ljust(default_w)}  "
            # Long choice lists continue under the first value, split at the bars.
            rest = textwrap.wrap(values, max(width - len(head), 20), break_on_hyphens=False)
            lines += [head + rest[0], *(" " * len(head) + line for line in rest[1:])]
            if doc:
                lines += ["      " + line for line in textwrap.wrap(doc, max(wrap - 4, 20))]
    else:
        lines.append("options: none")
    ties = spec.tie_policies
    lines += [
        "",
        f"tie policies (--ties): {'all' if set(ties) == set(TIE_POLICIES) else ', '.join(ties)}",
        "",
        "examples:",
    ]
    examples = metric_examples(spec)
    if spec.scope == "item":
        lines.append("  (the command line evaluates no item metrics: use Python)")
    else:
        lines.append(f"  {PROG} {' '.join(f'-m {e!r}' for e in examples)}")
    per_item = ", per_item=True" if spec.scope == "item" else ""
    lines.append(f"  prk.evaluate(df, {examples!r}{per_item})")
    return "\n".join(lines) + "\n"


def _fmt_option(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _progress(message: str) -> None:
    """A status line on stderr, only when a person is watching (a terminal)."""
    if sys.stderr.isatty():
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _run_trec_eval(args: argparse.Namespace) -> int:
    """Reached only through argparse (``trec-eval`` is normally parsed by trec_eval's rules)."""
    from polars_rankeval.trec_eval import command_line

    return command_line([str(args.qrels), str(args.run)])


def _compare_data(args: argparse.Namespace) -> pl.LazyFrame:
    """The long frame with a system column from --data, --recs/--truth, --run/--qrels."""
    from polars_rankeval._evaluate import join

    given = [
        name
        for name, value in (("--data", args.data), ("--recs", args.recs), ("--run", args.runs))
        if value
    ]
    if len(given) > 1:
        msg = f"give one input: {' or '.join(given)}, not both"
        raise UsageError(msg)
    if args.data is not None:
        return read_table(args.data)
    if args.recs is not None or args.truth is not None:
        if args.recs is None or args.truth is None:
            msg = "--recs and --truth must be given together"
            raise UsageError(msg)
        # join's rule for the ids (as in evaluate): no silent cast of integers to text.
        diversity = _TREC_SUFFIXES.get(args.truth.suffix.lower()) == "trec-div-qrels"
        joined = join(
            read_table(args.recs),
            read_table(args.truth),
            by=args.by,
            check_overlap=True,
            subtopic=args.subtopic or ("subtopic" if diversity else None),
        )
        assert isinstance(joined, pl.LazyFrame)
        return joined
    if args.runs:
        if args.qrels is None:
            msg = "--run needs --qrels"
            raise UsageError(msg)
        from polars_rankeval.trec import scan_qrels, scan_run

        parts, names = [], []
        for spec in args.runs:
            name, sep, path_text = spec.partition("=")
            path = Path(path_text) if sep else Path(spec)
            name = name if sep else path.name.split(".")[0]
            if not path.is_file():
                msg = f"no such file: {str(path)!r}"
                raise FileNotFoundError(msg)
            if name in names:
                msg = f"two runs are named {name!r}; name them with --run NAME=PATH"
                raise UsageError(msg)
            names.append(name)
            run = scan_run(path).select(pl.lit(name).alias(args.by), "user", "item", "score")
            parts.append(run)
        if len(names) < 2:
            msg = f"compare needs at least 2 runs, got {len(names)}"
            raise UsageError(msg)
        if not args.qrels.is_file():
            msg = f"no such file: {str(args.qrels)!r}"
            raise FileNotFoundError(msg)
        if args.subtopic is not None or args.qrels.suffix.lower() == ".div":
            from polars_rankeval.trec import scan_diversity_qrels

            div = scan_diversity_qrels(args.qrels)
            joined = join(pl.concat(parts), div, by=args.by, subtopic="subtopic")
        else:
            qrels = scan_qrels(args.qrels).select("user", "item", "relevance")
            joined = join(pl.concat(parts), qrels, by=args.by)
        assert isinstance(joined, pl.LazyFrame)
        return joined
    if args.qrels is not None:
        msg = "--qrels needs --run files"
        raise UsageError(msg)
    from polars_rankeval.datasets import load_systems

    print(
        f"{PROG}: no input given; comparing the bundled example (4 systems, 500 users)",
        file=sys.stderr,
    )
    return load_systems().lazy()


def _run_compare(args: argparse.Namespace) -> int:
    from polars_rankeval._evaluate import parse_metrics
    from polars_rankeval.compare import compare
    from polars_rankeval.report import report

    if args.conventions is not None:  # library names, resolved by compare
        from polars_rankeval.conventions import explicit_rules

        metrics = list(args.metrics or [])
        if not metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        rules: dict[str, Any] = {"conventions": args.conventions, **explicit_rules(vars(args))}
    else:
        metrics = [m.name for m in parse_metrics(args.metrics or ["ndcg@10"])]
        rules = {"ties": args.ties, "users": args.users, "empty": args.empty}
    data = _pooled(args, _compare_data(args), "relevance")
    result = compare(
        data,
        metrics,
        by=args.by,
        baseline=args.baseline,
        test=args.test,
        correction=args.correction,
        family=args.family,
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
        ci=args.ci,
        progress=True if args.progress else None,
        **rules,
    )
    if args.format in ("table", "csv", "json"):
        write_frame(result, args.format, sys.stdout)
    elif args.format == "html":
        sys.stdout.write(report(result, "html").as_raw_html() + "\n")
    else:
        text = report(result, args.format)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


# --------------------------------------------------------------------------- plot
PLOT_KINDS: tuple[str, ...] = ("curve", "pr", "distribution", "differences", "lorenz", "long-tail")


def _add_plot_parser(sub: Any) -> None:
    """The ``plot`` subcommand: a chart of polars_rankeval.plot saved to --out."""
    pt = sub.add_parser(
        "plot",
        help="draw a chart (metric@k curves, precision-recall, distributions, ...) to a file",
        description=(
            "Draw a chart of polars_rankeval.plot and save it (.png, .svg, .html or .json; "
            "needs the [plot] extra). Without --data/--recs/--truth, plots the bundled "
            "multi-system example (datasets.load_systems, --by system)."
        ),
    )
    pt.add_argument(
        "kind",
        choices=PLOT_KINDS,
        help=(
            "curve: metric@k over k (-m NAME, --ks); pr: interpolated precision-recall; "
            "distribution: per-user values of -m METRIC; differences: per-user differences "
            "against --baseline; lorenz: Lorenz curve of item exposure at --k; long-tail: "
            "popularity of the top --k items vs the catalog"
        ),
    )
    pt.add_argument("--out", type=Path, required=True, metavar="PATH", help="the chart file")
    pt.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="curve: metric names without @k (repeatable, default ndcg); distribution and "
        "differences: one per-user metric (default ndcg@10)",
    )
    pt.add_argument("--ks", default="1..20", metavar="KS", help="curve cutoffs (default 1..20)")
    pt.add_argument("--k", type=int, default=10, help="lorenz/long-tail cutoff (default 10)")
    pt.add_argument("--baseline", metavar="SYSTEM", help="differences: the baseline system")
    pt.add_argument(
        "--compare",
        action="store_true",
        help="differences: run prk.compare and show its result in each panel",
    )
    pt.add_argument(
        "--kind",
        dest="dist_kind",
        choices=("histogram", "ecdf"),
        default="histogram",
        help="distribution: histogram (default) or ecdf",
    )
    pt.add_argument("--levels", type=int, default=11, help="pr: number of recall levels")
    pt.add_argument("--title", help="chart title")
    pt.add_argument("--ties", choices=TIE_POLICIES, default=None, help="tie policy")
    pt.add_argument("--users", choices=USER_UNIVERSES, default="truth", help="users evaluated")
    pt.add_argument("--empty", choices=EMPTY_POLICIES, default="skip", help="undefined values")
    pt.add_argument("--data", type=Path, metavar="PATH", help="a joined long table")
    pt.add_argument("--recs", type=Path, metavar="PATH", help="recommendations")
    pt.add_argument("--truth", type=Path, metavar="PATH", help="ground truth")
    pt.add_argument("--recs-format", choices=INPUT_FORMATS, help="format of --recs")
    pt.add_argument("--truth-format", choices=INPUT_FORMATS, help="format of --truth")
    pt.add_argument("--user", default="user", metavar="COL", help="user column")
    pt.add_argument("--item", default="item", metavar="COL", help="item column")
    pt.add_argument("--score", default=None, metavar="COL", help="score column")
    pt.add_argument("--rank", default=None, metavar="COL", help="rank column (1 = best)")
    pt.add_argument(
        "--relevance",
        default=None,
        metavar="COL",
        help="relevance column (default: relevance; a column named here must exist)",
    )
    pt.add_argument(
        "--by", action="append", default=None, metavar="COL", help="system column; repeatable"
    )
    pt.set_defaults(handler=_run_plot)


def _run_plot(args: argparse.Namespace) -> int:
    from polars_rankeval import curves, plot
    from polars_rankeval._evaluate import evaluate

    if args.data is None and args.recs is None and args.truth is None:
        from polars_rankeval.datasets import load_systems

        print(f"{PROG}: no input given; plotting the bundled multi-system example", file=sys.stderr)
        data: pl.LazyFrame = load_systems().lazy()
        by = args.by or ["system"]
    else:
        data, by = load_data(args)
    options: dict[str, Any] = {
        **_column_options(args, joined=True),
        "users": args.users,
        "empty": args.empty,
    }
    if args.ties is not None:
        options["ties"] = args.ties
    by_arg = by or None
    chart: Any
    if args.kind == "curve":
        names = args.metrics or ["ndcg"]
        ks = curves.cutoffs_of(args.ks)
        frame = curves.curve(data, names, ks=ks, by=by_arg, **options)
        chart = plot.curves(frame, title=args.title)
    elif args.kind == "pr":
        options.setdefault("ties", "item_desc")
        chart = plot.pr_curves(
            curves.pr_curve(data, levels=args.levels, by=by_arg, **options), title=args.title
        )
    elif args.kind in ("distribution", "differences"):
        metric = (args.metrics or ["ndcg@10"])[0]
        per_user = evaluate(data, [metric], by=by_arg, per_user=True, **options)
        if args.kind == "distribution":
            chart = plot.distribution(
                per_user, metric, by=by_arg, kind=args.dist_kind, title=args.title
            )
        else:
            if len(by) != 1 or args.baseline is None:
                msg = "plot differences needs one --by column and --baseline SYSTEM"
                raise UsageError(msg)
            result = None
            if args.compare:
                from polars_rankeval.compare import compare

                result = compare(data, [metric], by=by[0], baseline=args.baseline, **options)
            chart = plot.topic_differences(
                per_user, metric, baseline=args.baseline, by=by[0], compare=result, title=args.title
            )
    elif args.kind == "lorenz":
        chart = plot.lorenz(data, k=args.k, by=by_arg, title=args.title, **options)
    else:
        chart = plot.long_tail(data, k=args.k, by=by_arg, title=args.title, **options)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    chart.save(str(args.out))
    print(f"{PROG}: wrote {args.out}", file=sys.stderr)
    return 0


def _one_line(exc: BaseException) -> str:
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text or type(exc).__name__


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(TERMINATED_EXIT)


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """SIGTERM raises ``SystemExit(143)``, so that clean-ups in ``finally`` run.

    Its default action kills the process at once. Only in the main thread (where
    handlers can be set) and when no other handler is installed; restored after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv
        The arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 on success, 2 on a usage error (bad option, unknown metric,
        missing file, invalid data), reported as one line on standard error; 130 after
        Ctrl-C and 143 after SIGTERM (128 + the signal number, as shells report it),
        without a traceback, once the temporary files of a bucketed run are removed.

    Examples
    --------
    Aliases are accepted and the output columns use the canonical names:

    >>> main(["-m", "ndcg@10", "-m", "P@5", "--format", "csv"])
    ndcg@10,precision@5,n_users(ndcg@10),n_users(precision@5),n_users,n_skipped
    0.3015...,0.2666...,3,3,3,0
    0
    """
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["trec-eval"] and not set(raw[1:2]) & {"-h", "--help"}:
        from polars_rankeval.trec_eval import command_line

        try:
            return command_line(raw[1:])
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return INTERRUPTED_EXIT
    parser = build_parser()
    try:
        args = parser.parse_args(_with_default_command(raw))
    except SystemExit as exit_:  # argparse has printed usage or help already
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    with warnings.catch_warnings(), _overlap_log():
        # Warnings (e.g. OverlapWarning: ids that barely match) are one line on stderr.
        from polars_rankeval._overlap import OverlapWarning

        warnings.simplefilter("always", OverlapWarning)
        warnings.showwarning = _show_warning
        try:
            with _sigterm_exits():
                return int(args.handler(args))
        except KeyboardInterrupt:
            # Ctrl-C: temporary files are already removed; exit quietly, as shells expect.
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a further Ctrl-C: no traceback
            return INTERRUPTED_EXIT
        except BrokenPipeError:  # e.g. `polars-rankeval metrics | head`: stop quietly
            _silence_stdout()
            return 0
        except (ValueError, TypeError, OSError, pl.exceptions.PolarsError) as exc:
            print(f"{PROG}: error: {_one_line(exc)}{_pool_hint(args, exc)}", file=sys.stderr)
            return 2


def _pool_hint(args: argparse.Namespace, exc: BaseException) -> str:
    """Point to --pool-unjudged where an error is about trec_eval's pooled judgments."""
    if not hasattr(args, "pool_unjudged") or args.pool_unjudged is not None:
        return ""
    text = str(exc)
    pooled = (
        "(read by " in text
        and ") not found in" in text
        and any("pool=" in m for m in args.metrics or [])
    )
    if "pool_unjudged" in text or pooled:
        return (
            "; on the command line, --pool-unjudged [COL] reads relevance < 0 as pooled "
            "but not judged (and adds the pool column COL, default pooled)"
        )
    return ""


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured)
        pass


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"{PROG}: warning: {_one_line(Exception(str(message)))}", file=sys.stderr)


@contextlib.contextmanager
def _overlap_log() -> Iterator[None]:
    """On a terminal, show join's overlap line (users, items, rows matched) on stderr."""
    logger = logging.getLogger("polars_rankeval")
    if not sys.stderr.isatty():
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{PROG}: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)

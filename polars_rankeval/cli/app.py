"""The ``polars-rankeval`` command line (also ``python -m polars_rankeval``).

``polars-rankeval`` with no arguments evaluates the bundled example (trec_eval's test
run and its relevance judgments); ``--recs`` and ``--truth`` evaluate your own files.
``polars-rankeval metrics`` lists every metric the grammar knows.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
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
from polars_rankeval._utils.files import write_atomically
from polars_rankeval._utils.markup import markdown_escape
from polars_rankeval._utils.types import (
    AGGREGATIONS,
    EMPTY_POLICIES,
    STRATEGIES,
    SUMMARY_FORMS,
    TIE_POLICIES,
    USER_UNIVERSES,
)
from polars_rankeval.conventions.presets import PRESETS

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

    from polars_rankeval.metrics.registry import MetricSpec

# The heavy modules (evaluate, registry, _plan) are imported where used: the trec-eval
# command line starts without them.

PROG = "polars-rankeval"
INTERRUPTED_EXIT = 128 + signal.SIGINT
"""Exit status after Ctrl-C (130)."""
TERMINATED_EXIT = 128 + signal.SIGTERM
"""Exit status after SIGTERM (143)."""
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
IDS: tuple[str, str] = ("user", "item")
"""The id columns of compare's inputs (it has no --user/--item)."""

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
class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that a failed write of help to standard output is raised.

    argparse ignores an ``OSError`` while printing; ``main`` reports it as for any
    other output (``--help > /dev/full`` is an error, ``--help | head -1`` is not).
    """

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        if message and file is sys.stdout:
            file.write(message)
        else:
            super()._print_message(message, file)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with the ``evaluate`` and ``metrics`` subcommands.

    Returns
    -------
    argparse.ArgumentParser
        The top-level parser; ``evaluate`` is the subcommand used when none is given.
    """
    parser = _Parser(
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
        metavar="[NAME=]PATH",
        help=(
            "recommendations (user, item, score): .parquet, .csv, .tsv, .ndjson or .run; "
            "a file or a quoted glob ('recs/part-*.parquet'), whose files are stacked as "
            "ONE system (the partitions of one model's output); repeat --recs for several "
            f"systems, each named NAME or by its file name without extension in a "
            f"{SYSTEM_COLUMN!r} column"
        ),
    )
    ev.add_argument(
        "--system",
        action="append",
        metavar="NAME",
        help=(
            "name of the system of each --recs, in order (default: NAME= or the file "
            "name without extension); repeatable"
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
        metavar="PATH",
        help="a joined long table (user, item, score, relevance) instead of --recs/--truth; "
        "a file or a quoted glob whose files are stacked",
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
    _add_side_inputs(ev)
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
    from polars_rankeval._utils.stats import CI_METHODS, CORRECTIONS, TESTS

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
    cp.add_argument("--data", metavar="PATH", help="joined long table with --by (a path or a glob)")
    cp.add_argument(
        "--recs",
        action="append",
        metavar="[NAME=]PATH",
        help="recommendations: one --recs, with a --by column; or one --recs per system "
        "(a file or a quoted glob of its partitions, named NAME or by the file name)",
    )
    cp.add_argument("--truth", type=Path, metavar="PATH", help="ground truth for --recs")
    cp.add_argument(
        "--run",
        action="append",
        dest="runs",
        metavar="[NAME=]PATH",
        help="TREC run file of one system, or a quoted glob of its parts (name: NAME or "
        "the file name without its extension); repeatable, with --qrels",
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
    cp.add_argument(
        "--baseline",
        metavar="NAME",
        help="compare every system with this one (default: with two systems, the first "
        "given; with more, every pair)",
    )
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
    _add_side_inputs(cp)
    cp.add_argument(
        "--format",
        choices=COMPARE_FORMATS,
        default="markdown",
        help="report (markdown, latex, html) or the full result (table, csv, json); "
        "default: markdown",
    )
    cp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report resampling progress on stderr, a tqdm bar with the [progress] extra "
        "(default: when stderr is a terminal)",
    )
    cp.set_defaults(handler=_run_compare)


def _add_side_inputs(parser: argparse.ArgumentParser) -> None:
    """``--history`` and ``--items`` (evaluate and compare): evaluate's side inputs."""
    parser.add_argument(
        "--history",
        metavar="PATH",
        help=(
            "the users' past interactions, e.g. the training data (user and item "
            "columns, one row per interaction; a file or a quoted glob): history= of "
            "evaluate, read by novelty, arp (popularity_bias), serendipity, "
            "unexpectedness, miscalibration, rsp and intra_list_diversity(distance="
            "cooccurrence); novelty@10 and arp@10 take the item popularity from it"
        ),
    )
    parser.add_argument(
        "--items",
        metavar="PATH",
        help=(
            "an item side table, one row per item (e.g. popularity, long_tail, "
            "categories, features columns; a file or a quoted glob): items= of evaluate"
        ),
    )


def _side_inputs(args: argparse.Namespace) -> tuple[pl.LazyFrame | None, pl.LazyFrame | None]:
    """``items=`` and ``history=`` of evaluate from ``--items`` and ``--history``."""
    out: dict[str, pl.LazyFrame] = {}
    ids = [getattr(args, "user", "user"), getattr(args, "item", "item")]
    for option, key in (("--history", "history"), ("--items", "items")):
        pattern = getattr(args, key, None)
        if pattern is None:
            continue
        files = _files_of(option, pattern)
        out[key] = read_files(files, None, text_ids=_text_ids(args), ids=ids)
    return out.get("items"), out.get("history")


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
    """``--pool-unjudged``: :func:`polars_rankeval.io.trec.pool_unjudged` on the long frame."""
    if args.pool_unjudged is None:
        return data
    from polars_rankeval.io.trec import pool_unjudged

    out = pool_unjudged(data, relevance=relevance, pool=args.pool_unjudged)
    assert isinstance(out, pl.LazyFrame)  # lazy in, lazy out
    return out


def _add_conventions(parser: argparse.ArgumentParser) -> None:
    """``--conventions LIBRARY`` (evaluate and compare)."""
    parser.add_argument(
        "--conventions",
        choices=tuple(PRESETS),
        default=None,
        metavar="LIBRARY",
        help=(
            "reproduce a library's numbers: -m takes that library's metric names (e.g. "
            "MAP@10 for rectools), ties/empty/users default to its rules and the columns "
            "read NAME@k[LIBRARY]; one of " + ", ".join(PRESETS)
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
        from polars_rankeval.io.trec import scan_run

        return scan_run(path).select("user", "item", "score")
    if kind == "trec-qrels":
        from polars_rankeval.io.trec import scan_qrels

        return scan_qrels(path).select("user", "item", "relevance")
    if kind == "trec-div-qrels":
        from polars_rankeval.io.trec import scan_diversity_qrels

        return scan_diversity_qrels(path)
    suffix = _FORMAT_SUFFIX[kind] if kind else path.suffix.lower()
    if text_ids and suffix in _TEXT_SUFFIXES:
        overrides = dict.fromkeys(text_ids, pl.String)
        separator = "," if suffix == ".csv" else "\t"
        frame = pl.scan_csv(path, separator=separator, schema_overrides=overrides)
        return _drop_blank_lines(frame)
    scan = _SCANNERS.get(suffix)
    if scan is None:
        known = ", ".join([*sorted(_SCANNERS), *_TREC_SUFFIXES])
        msg = (
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{known}, or --recs-format/--truth-format"
        )
        raise ValueError(msg)
    frame = scan(path)
    if suffix in _TEXT_SUFFIXES:
        frame = _drop_blank_lines(frame)
    return _as_text_ids(frame, text_ids) if text_ids else frame


def _as_text_ids(frame: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """Cast the id columns present in ``frame`` to String (``--id-type string``)."""
    schema = frame.collect_schema()
    return frame.with_columns(pl.col(c).cast(pl.String) for c in columns if c in schema)


def _text_ids(args: argparse.Namespace) -> list[str]:
    return [args.user, args.item] if getattr(args, "id_type", "infer") == "string" else []


def _drop_blank_lines(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Leave out the rows of a CSV/TSV file with no value at all (blank lines).

    Polars reads a blank line (e.g. the empty line after a file's last newline) as a
    row of nulls; a row with a value in some column keeps its nulls, which the checks
    of ``evaluate`` report (a null id is an error).
    """
    return frame.filter(~pl.all_horizontal(pl.all().is_null()))


_GLOB_CHARS = "*?["


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in _GLOB_CHARS)


def _matching_files(pattern: str) -> list[Path]:
    """The files a path or glob (``*``, ``?``, ``[...]``, ``**``) names, sorted."""
    if _is_glob(pattern):
        return sorted(p for p in map(Path, glob.glob(pattern, recursive=True)) if p.is_file())
    path = Path(pattern)
    return [path] if path.is_file() else []


def _files_of(option: str, pattern: str) -> list[Path]:
    """The files of a path or glob argument; a ``FileNotFoundError`` when none."""
    files = _matching_files(pattern)
    if not files:
        msg = f"{option} {pattern!r} matches no file" if _is_glob(pattern) else None
        raise FileNotFoundError(msg or f"no such file: {pattern!r}")
    return files


def _plain_name(text: str) -> bool:
    """A system name: not empty, no path separator, no glob character, no '='."""
    return bool(text) and not any(ch in text for ch in ("/", os.sep, "=", *_GLOB_CHARS))


def named_files(spec: str, option: str) -> tuple[str | None, str, list[Path]]:
    """Read a ``[NAME=]PATTERN`` argument: the name (or None), the pattern, its files.

    The whole argument is a path (or glob) when it names files, even with a ``=`` in
    it (``runs/bm25_k1=0.9.run``). Otherwise it is split on the first ``=`` when the
    left part is a plain name (no path separator or glob character) and the right
    part names files.

    Raises
    ------
    FileNotFoundError
        If neither reading names a file; the message gives both readings.
    """
    files = _matching_files(spec)
    if files:
        return None, spec, files
    name, eq, rest = spec.partition("=")
    if eq and _plain_name(name):
        files = _matching_files(rest)
        if files:
            return name, rest, files
        msg = (
            f"{option} {spec!r}: no file {spec!r}, and no file {rest!r} for a system named {name!r}"
        )
        raise FileNotFoundError(msg)
    if _is_glob(spec):
        msg = f"{option} {spec!r} matches no file"
        raise FileNotFoundError(msg)
    msg = f"no such file: {spec!r}"
    raise FileNotFoundError(msg)


def default_name(pattern: str) -> str | None:
    """A system's name from its pattern: the file name without its extension.

    ``bm25_k1=0.9`` for ``runs/bm25_k1=0.9.run``; None for a glob (``runs/*.run``).
    """
    stem = Path(pattern).stem
    return None if _is_glob(stem) or not stem else stem


def read_files(
    files: Sequence[Path],
    fmt: str | None,
    *,
    text_ids: Sequence[str] = (),
    ids: Sequence[str] = (),
) -> pl.LazyFrame:
    """The files of one argument (a path or the matches of a glob) as one frame.

    The files' rows are stacked (columns matched by name); the ``ids`` columns must
    have one dtype in every file.
    """
    frames = [read_table(p, fmt, text_ids=text_ids) for p in files]
    if len(frames) == 1:
        return frames[0]
    _same_id_dtypes([str(p) for p in files], frames, ids)
    return pl.concat(frames, how="diagonal_relaxed")


def _same_id_dtypes(
    names: Sequence[str], frames: Sequence[pl.LazyFrame], ids: Sequence[str]
) -> None:
    """The ``ids`` columns have one dtype in every frame (no silent cast when stacked)."""
    first = frames[0].collect_schema()
    for name, frame in zip(names[1:], frames[1:], strict=True):
        schema = frame.collect_schema()
        for column in ids:
            if column in first and column in schema and first[column] != schema[column]:
                msg = (
                    f"column {column!r} has dtype {first[column]} in {names[0]!r} but "
                    f"{schema[column]} in {name!r}; pass --id-type string to read the "
                    "ids of every file as text"
                )
                raise TypeError(msg)


def _several_files(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The ``--recs``/``--run``/``--data`` arguments that matched several files."""
    return list(getattr(args, "several_files", []))


def stack_systems(
    args: argparse.Namespace,
    specs: Sequence[str],
    option: str,
    column: str,
    read: Callable[[list[Path]], pl.LazyFrame],
    labels: Sequence[str] | None = None,
    ids: Sequence[str] = (),
) -> tuple[pl.LazyFrame, list[str] | None]:
    """One system per ``[NAME=]PATTERN`` argument, the files of a glob stacked.

    One argument without a name: its files as they are (a ``system`` column of the
    files, if any, is the caller's ``--by``). Several arguments (or a name): one
    system each, stacked with ``column`` holding its name: ``NAME=``, else the
    ``--system`` label of that argument (in order), else the file name without its
    extension; a glob without a name is an error then. Returns the frame and the
    systems' names in the order given (None when no ``column`` was added).
    """
    parsed = [named_files(spec, option) for spec in specs]
    args.several_files = [(pattern, len(files)) for _, pattern, files in parsed if len(files) > 1]
    seen: dict[Path, str] = {}
    for _, pattern, files in parsed:
        for path in files:
            if path in seen:
                msg = f"{option} names the file {str(path)!r} twice ({seen[path]!r}, {pattern!r})"
                raise UsageError(msg)
            seen[path] = pattern
    frames = [read(files) for _, _, files in parsed]
    _same_id_dtypes([pattern for _, pattern, _ in parsed], frames, ids)
    if len(parsed) == 1 and not labels and parsed[0][0] is None:
        return frames[0], None
    if labels:
        if len(labels) != len(parsed):
            msg = (
                f"--system is given {len(labels)} time(s) but {option} names "
                f"{len(parsed)} system(s); give one --system per {option}, in order"
            )
            raise UsageError(msg)
        named = [spec for spec, (name, _, _) in zip(specs, parsed, strict=True) if name]
        if named:
            msg = f"{option} {named[0]!r} has a NAME= and --system names it too; use one"
            raise UsageError(msg)
        names = list(labels)
    else:
        names = []
        for name, pattern, _ in parsed:
            found = name or default_name(pattern)
            if found is None:
                msg = (
                    f"{option} {pattern!r} is one system among several and a glob has no "
                    f"name: name it, {option} NAME={pattern!r} (or --system NAME)"
                )
                raise UsageError(msg)
            names.append(found)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = (
            f"several {option} arguments have the system name "
            f"{', '.join(map(repr, repeated))}; name them with {option} NAME=PATH"
        )
        raise UsageError(msg)
    for (_, pattern, _), frame in zip(parsed, frames, strict=True):
        if column in frame.collect_schema():
            msg = (
                f"{pattern!r} already has a {column!r} column; with several {option} "
                f"arguments (or a name), each {option} is one system"
            )
            raise UsageError(msg)
    labelled = [f.with_columns(pl.lit(n).alias(column)) for f, n in zip(frames, names, strict=True)]
    return pl.concat(labelled, how="diagonal_relaxed"), names


def read_recs(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str]]:
    """The ``--recs`` arguments as one frame, and the ``by`` columns to evaluate with.

    Each ``--recs [NAME=]PATTERN`` is one system: a file, or the files a glob
    matches, stacked (the partitions of one model's output). One ``--recs`` without a
    name or ``--system``: the files as they are. Several (or a name): one system
    each, in a ``system`` column that becomes the first ``by`` column.
    """
    specs = args.recs if isinstance(args.recs, list) else [str(args.recs)]
    by = list(args.by or [])
    text_ids, ids = _text_ids(args), [args.user, args.item]

    def read(files: list[Path]) -> pl.LazyFrame:
        return read_files(files, args.recs_format, text_ids=text_ids, ids=ids)

    frame, labelled = stack_systems(
        args, specs, "--recs", SYSTEM_COLUMN, read, getattr(args, "system", None), ids
    )
    if not labelled:
        return frame, by
    if SYSTEM_COLUMN in by:
        msg = f"--by {SYSTEM_COLUMN} is implied by several --recs (or --system or NAME=)"
        raise UsageError(msg)
    return frame, [SYSTEM_COLUMN, *by]


def read_data(args: argparse.Namespace) -> pl.LazyFrame:
    """``--data PATTERN``: a joined long table, the files of a glob stacked."""
    pattern = str(args.data)
    files = _files_of("--data", pattern)
    args.several_files = [(str(args.data), len(files))] if len(files) > 1 else []
    ids = [getattr(args, "user", "user"), getattr(args, "item", "item")]
    return read_files(files, None, text_ids=_text_ids(args), ids=ids)


def _with_system(frame: pl.LazyFrame, by: list[str]) -> list[str]:
    """A ``system`` column of the input splits the systems: it is a ``by`` column.

    Without it, the lists of several systems for one user would be merged into one
    list (silently, when their items differ).
    """
    if SYSTEM_COLUMN in by or SYSTEM_COLUMN not in frame.collect_schema():
        return by
    return [SYSTEM_COLUMN, *by]


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
        (``system`` first when several ``--recs`` are given or the input has a
        ``system`` column).
    """
    from polars_rankeval.api.evaluate import join

    by = list(args.by or [])
    if args.data is not None:
        if args.recs is not None or args.truth is not None or getattr(args, "system", None):
            msg = "--data cannot be combined with --recs/--truth/--system"
            raise UsageError(msg)
        data = read_data(args)
        return data, _with_system(data, by)
    if args.recs is None and args.truth is None:
        from polars_rankeval.io.datasets import load_example

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
    by = _with_system(recs, by)
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
    return markdown_escape(str(value))


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
    header = "| " + " | ".join(map(markdown_escape, frame.columns)) + " |"
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
    from polars_rankeval.api.evaluate import evaluate, parse_metrics, summarize
    from polars_rankeval.plan.finish import long_summary, with_intervals

    if args.conventions is not None:  # library names: resolved before reading data
        from polars_rankeval.conventions.resolve import explicit_rules, shown_names

        if not args.metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        metrics: Any = list(args.metrics)
        names = shown_names(args.conventions, metrics, **explicit_rules(vars(args), evaluate))
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
    items, history = _side_inputs(args)
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
        items=items,
        history=history,
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
    write_atomically(path, writers[suffix])


def _run_metrics(args: argparse.Namespace) -> int:
    from polars_rankeval.metrics.registry import list_metrics

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
    from polars_rankeval.metrics.registry import get_spec, parse_metric

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
        import polars_rankeval.metrics.aggregate as _aggregate

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
    from polars_rankeval.trec_eval.program import command_line

    return command_line([str(args.qrels), str(args.run)])


def _compare_data(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str] | None]:
    """The long frame with a system column from --data, --recs/--truth, --run/--qrels.

    And the systems in the order given: of the --run options, of their first row in
    --recs (the join does not keep it); ``None``: the data's own order (--data).
    """
    from polars_rankeval.api.evaluate import join

    given = [
        name
        for name, value in (("--data", args.data), ("--recs", args.recs), ("--run", args.runs))
        if value
    ]
    if len(given) > 1:
        msg = f"give one input: {' or '.join(given)}, not both"
        raise UsageError(msg)
    if args.data is not None:
        return read_data(args), None
    if args.recs is not None or args.truth is not None:
        if args.recs is None or args.truth is None:
            msg = "--recs and --truth must be given together"
            raise UsageError(msg)
        # join's rule for the ids (as in evaluate): no silent cast of integers to text.
        diversity = _TREC_SUFFIXES.get(args.truth.suffix.lower()) == "trec-div-qrels"
        recs, names = stack_systems(
            args,
            args.recs,
            "--recs",
            args.by,
            lambda files: read_files(files, None, ids=IDS),
            ids=IDS,
        )
        order = names
        if order is None and args.by in recs.collect_schema():
            order = (
                recs.select(
                    pl.col(args.by).cast(pl.String).drop_nulls().unique(maintain_order=True)
                )
                .collect()
                .get_column(args.by)
                .to_list()
            )
        joined = join(
            recs,
            read_table(args.truth),
            by=args.by,
            check_overlap=True,
            subtopic=args.subtopic or ("subtopic" if diversity else None),
        )
        assert isinstance(joined, pl.LazyFrame)
        return joined, order
    if args.runs:
        if args.qrels is None:
            msg = "--run needs --qrels"
            raise UsageError(msg)
        from polars_rankeval.io.trec import scan_qrels, scan_run

        if len(args.runs) < 2:
            msg = f"compare needs at least 2 runs, got {len(args.runs)}"
            raise UsageError(msg)

        def read_runs(files: list[Path]) -> pl.LazyFrame:
            return pl.concat([scan_run(p).select("user", "item", "score") for p in files])

        runs, names = stack_systems(args, args.runs, "--run", args.by, read_runs)
        parts = [runs.select(args.by, "user", "item", "score")]
        if not args.qrels.is_file():
            msg = f"no such file: {str(args.qrels)!r}"
            raise FileNotFoundError(msg)
        if args.subtopic is not None or args.qrels.suffix.lower() == ".div":
            from polars_rankeval.io.trec import scan_diversity_qrels

            div = scan_diversity_qrels(args.qrels)
            joined = join(pl.concat(parts), div, by=args.by, subtopic="subtopic")
        else:
            qrels = scan_qrels(args.qrels).select("user", "item", "relevance")
            joined = join(pl.concat(parts), qrels, by=args.by)
        assert isinstance(joined, pl.LazyFrame)
        return joined, names
    if args.qrels is not None:
        msg = "--qrels needs --run files"
        raise UsageError(msg)
    from polars_rankeval.io.datasets import load_systems

    print(
        f"{PROG}: no input given; comparing the bundled example (4 systems, 500 users)",
        file=sys.stderr,
    )
    return load_systems().lazy(), None


def _run_compare(args: argparse.Namespace) -> int:
    from polars_rankeval.analysis.compare import compare
    from polars_rankeval.analysis.report import report
    from polars_rankeval.api.evaluate import parse_metrics

    if args.conventions is not None:  # library names, resolved by compare
        from polars_rankeval.api.evaluate import evaluate
        from polars_rankeval.conventions.resolve import explicit_rules

        metrics = list(args.metrics or [])
        if not metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        rules: dict[str, Any] = {
            "conventions": args.conventions,
            **explicit_rules(vars(args), evaluate),
        }
    else:
        metrics = [m.name for m in parse_metrics(args.metrics or ["ndcg@10"])]
        rules = {"ties": args.ties, "users": args.users, "empty": args.empty}
    data, order = _compare_data(args)
    data = _pooled(args, data, "relevance")
    items, history = _side_inputs(args)
    result = compare(
        data,
        metrics,
        by=args.by,
        baseline=args.baseline,
        systems=order,
        test=args.test,
        correction=args.correction,
        family=args.family,
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
        ci=args.ci,
        progress=args.progress,
        items=items,
        history=history,
        **rules,
    )
    if args.baseline is None:
        # Which system is the baseline, when the command line chose it.
        given = list(
            dict.fromkeys(x for row in result.select("baseline", "system").rows() for x in row)
        )
        if len(given) == 2:
            print(
                f"{PROG}: baseline: {given[0]} (the first system given; choose one with "
                "--baseline)",
                file=sys.stderr,
            )
        else:
            print(
                f"{PROG}: no --baseline: every pair of the {len(given)} systems, in the "
                f"order given: {', '.join(given)} (each pair against the one given first; "
                "choose one baseline with --baseline)",
                file=sys.stderr,
            )
    if args.format == "table":
        write_frame(_p_values_as_text(result), "table", sys.stdout)
    elif args.format in ("csv", "json"):
        write_frame(result, args.format, sys.stdout)
    else:
        text = report(result, args.format)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


# --------------------------------------------------------------------------- plot
PLOT_KINDS: tuple[str, ...] = (
    "curves",
    "distribution",
    "long_tail",
    "lorenz",
    "pr_curves",
    "topic_differences",
)
"""The charts of ``plot``: each is named as its function in polars_rankeval.plot."""
PLOT_FORMATS = frozenset({"html", "json", "pdf", "png", "svg"})
"""The --out extensions of ``plot`` (what Altair's ``save`` writes without a browser)."""


def _add_plot_parser(sub: Any) -> None:
    """The ``plot`` subcommand: a chart of polars_rankeval.plot saved to --out."""
    pt = sub.add_parser(
        "plot",
        help="draw a chart (metric@k curves, precision-recall, distributions, ...) to a file",
        description=(
            "Draw a chart of polars_rankeval.plot and save it (.png, .svg, .pdf, .html or .json; "
            "needs the [plot] extra). Without --data/--recs/--truth, plots the bundled "
            "multi-system example (datasets.load_systems, --by system)."
        ),
    )
    pt.add_argument(
        "kind",
        choices=PLOT_KINDS,
        help=(
            "the function of polars_rankeval.plot to draw. curves: metric@k over k (-m NAME, "
            "--ks); pr_curves: interpolated precision-recall; distribution: per-user values "
            "of -m METRIC; topic_differences: per-user differences against --baseline; "
            "lorenz: Lorenz curve of item exposure at --k; long_tail: popularity of the top "
            "--k items vs the catalog"
        ),
    )
    pt.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="PATH",
        help="the chart file (.png, .svg, .pdf, .html or .json); written whole or not at all",
    )
    pt.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="curves: metric names without @k (repeatable, default ndcg); distribution and "
        "topic_differences: one per-user metric (default ndcg@10)",
    )
    pt.add_argument("--ks", default="1..20", metavar="KS", help="curves cutoffs (default 1..20)")
    pt.add_argument("--k", type=int, default=10, help="lorenz/long_tail cutoff (default 10)")
    pt.add_argument("--baseline", metavar="SYSTEM", help="topic_differences: the baseline system")
    pt.add_argument(
        "--compare",
        action="store_true",
        help="topic_differences: run prk.compare and show its result in each panel",
    )
    pt.add_argument(
        "--kind",
        dest="dist_kind",
        choices=("histogram", "ecdf"),
        default="histogram",
        help="distribution: histogram (default) or ecdf",
    )
    pt.add_argument("--levels", type=int, default=11, help="pr_curves: number of recall levels")
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
    import polars_rankeval.analysis.curves as curves
    from polars_rankeval.api.evaluate import evaluate
    from polars_rankeval.plot import charts as plot

    out: Path = args.out
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:  # before reading the data
        formats = ", ".join(f".{f}" for f in sorted(PLOT_FORMATS))
        msg = f"cannot write {str(out)!r}: use a {formats} file"
        raise UsageError(msg)
    if args.data is None and args.recs is None and args.truth is None:
        from polars_rankeval.io.datasets import load_systems

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
    if args.kind == "curves":
        names = args.metrics or ["ndcg"]
        ks = curves.cutoffs_of(args.ks)
        frame = curves.curve(data, names, ks=ks, by=by_arg, **options)
        chart = plot.curves(frame, title=args.title)
    elif args.kind == "pr_curves":
        options.setdefault("ties", "item_desc")
        chart = plot.pr_curves(
            curves.pr_curve(data, levels=args.levels, by=by_arg, **options), title=args.title
        )
    elif args.kind in ("distribution", "topic_differences"):
        metric = (args.metrics or ["ndcg@10"])[0]
        per_user = evaluate(data, [metric], by=by_arg, per_user=True, **options)
        if args.kind == "distribution":
            chart = plot.distribution(
                per_user, metric, by=by_arg, kind=args.dist_kind, title=args.title
            )
        else:
            if len(by) != 1 or args.baseline is None:
                msg = "plot topic_differences needs one --by column and --baseline SYSTEM"
                raise UsageError(msg)
            result = None
            if args.compare:
                from polars_rankeval.analysis.compare import compare

                result = compare(data, [metric], by=by[0], baseline=args.baseline, **options)
            chart = plot.topic_differences(
                per_user, metric, baseline=args.baseline, by=by[0], compare=result, title=args.title
            )
    elif args.kind == "lorenz":
        chart = plot.lorenz(data, k=args.k, by=by_arg, title=args.title, **options)
    else:
        chart = plot.long_tail(data, k=args.k, by=by_arg, title=args.title, **options)
    out.parent.mkdir(parents=True, exist_ok=True)
    # The temporary file's name does not end in the format: it is given to save.
    write_atomically(out, lambda partial: chart.save(str(partial), format=suffix))
    print(f"{PROG}: wrote {out}", file=sys.stderr)
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
        Standard output that cannot be written: 0 when its reader went away
        (``| head -1``), else 2 with one line on standard error (``> /dev/full``); the
        same for ``trec-eval``, whose other statuses are trec_eval's.

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
        from polars_rankeval.trec_eval.program import command_line

        try:
            status = command_line(raw[1:])
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return INTERRUPTED_EXIT
        except OSError as exc:  # writing the output (command_line reports reading errors)
            return _output_failed(exc, "trec_eval: ")
        return _flushed(status, "trec_eval: ")
    parser = build_parser()
    try:
        args = parser.parse_args(_with_default_command(raw))
    except SystemExit as exit_:  # argparse has printed usage or help already
        code = exit_.code
        return _flushed(code if isinstance(code, int) else (0 if code is None else 2))
    except OSError as exc:  # printing the help or usage
        return _output_failed(exc)
    with warnings.catch_warnings(), _overlap_log():
        # Warnings (e.g. OverlapWarning: ids that barely match) are one line on stderr.
        from polars_rankeval.api.overlap import OverlapWarning

        warnings.simplefilter("always", OverlapWarning)
        warnings.showwarning = _show_warning
        try:
            with _sigterm_exits():
                status = int(args.handler(args))
        except KeyboardInterrupt:
            # Ctrl-C: temporary files are already removed; exit quietly, as shells expect.
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a further Ctrl-C: no traceback
            return INTERRUPTED_EXIT
        except (ValueError, TypeError, OSError, pl.exceptions.PolarsError) as exc:
            if isinstance(exc, OSError) and _closed_pipe(exc):
                return _output_failed(exc)  # e.g. `polars-rankeval metrics | head`: quietly
            hints = _pool_hint(args, exc) + _several_files_hint(args, exc) + _id_hint(args, exc)
            print(f"{PROG}: error: {_one_line(exc)}{hints}", file=sys.stderr)
            _flush_or_drop()  # the lines printed before the error, if stdout takes them
            return 2
        return _flushed(status)


def _p_values_as_text(result: pl.DataFrame) -> pl.DataFrame:
    """The p-value columns of a comparison as the one p-value text (``< 1e-300``, not 0).

    For the table people read; csv and json keep the numbers.
    """
    from polars_rankeval._utils.pvalue import format_p

    columns = [c for c in ("p_value", "p_adjusted") if c in result.columns]
    return result.with_columns(
        pl.Series(c, [format_p(v) for v in result.get_column(c).to_list()], dtype=pl.String)
        for c in columns
    )


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


_ERROR = f"{PROG}: error: "


def _closed_pipe(exc: OSError) -> bool:
    """Whether a write failed because the reader went away (EPIPE).

    Polars' writers raise a plain ``OSError`` whose text ends in ``(os error 32)``.
    """
    return (
        isinstance(exc, BrokenPipeError)
        or exc.errno == errno.EPIPE
        or str(exc).endswith(f"(os error {errno.EPIPE})")
    )


def _output_failed(exc: OSError, prefix: str = _ERROR) -> int:
    """The end of a command whose standard output cannot be written.

    A reader that went away (``... | head -1``) ends it quietly with status 0; any other
    failure (a full device, ``> /dev/full``) is one line on standard error, status 2.
    What stdout still buffers is dropped, so that Python's final flush stays quiet.
    """
    _silence_stdout()
    if _closed_pipe(exc):
        return 0
    print(f"{prefix}{_one_line(exc)}", file=sys.stderr)
    return 2


def _flush_or_drop() -> OSError | None:
    """Flush standard output; when it cannot be written, drop what it buffers instead.

    Returns the write error, if any. Without this, a write failing at the final flush
    ends in Python's "Exception ignored" message (status 120) after the command has
    reported success.
    """
    try:
        sys.stdout.flush()
    except OSError as exc:
        _silence_stdout()
        return exc
    return None


def _flushed(status: int, prefix: str = _ERROR) -> int:
    """``status`` once standard output is written; see :func:`_output_failed` if it is not."""
    exc = _flush_or_drop()
    if exc is None or _closed_pipe(exc):
        return status
    return _output_failed(exc, prefix)


def _id_hint(args: argparse.Namespace, exc: BaseException) -> str:
    """Ids of a side input (--history, --items) of another dtype: --id-type string."""
    text = str(exc)
    side = " in history= but " in text or " in items= but " in text
    if not side or getattr(args, "id_type", "string") != "infer":
        return ""
    return "; on the command line, pass --id-type string to read the ids of every file as text"


def _several_files_hint(args: argparse.Namespace, exc: BaseException) -> str:
    """Rows sharing a key after a glob matched several files: they were one system."""
    several = _several_files(args)
    if not several or "rows share a (" not in str(exc):
        return ""
    pattern, count = several[0]
    return (
        f"; {pattern!r} matched {count} files, read as one system (their rows stacked): "
        "for one system per file, give each its own --recs NAME=PATH (--run for compare)"
    )


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

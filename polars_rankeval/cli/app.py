"""The ``polars-rankeval`` command line (``python -m polars_rankeval``): parser and :func:`main`.

``polars-rankeval`` with no arguments evaluates the bundled example (trec_eval's test
run and its relevance judgments); ``--recs`` and ``--truth`` evaluate your own files.
``polars-rankeval metrics`` lists every metric the grammar knows. Each subcommand lives
in its own module (its options and its run); :func:`main` dispatches to it and turns
errors, Ctrl-C and SIGTERM into one line on standard error and an exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

import polars as pl

import polars_rankeval.cli.compare as compare
import polars_rankeval.cli.differences as differences
import polars_rankeval.cli.evaluate as evaluate
import polars_rankeval.cli.fuse as fuse
import polars_rankeval.cli.meta as meta
import polars_rankeval.cli.metrics as metrics
import polars_rankeval.cli.plot as plot
import polars_rankeval.cli.power as power
import polars_rankeval.cli.repro as repro
import polars_rankeval.cli.trec_eval as trec_eval
from polars_rankeval._utils.signals import sigterm_exits
from polars_rankeval._utils.version import __version__
from polars_rankeval.cli.inputs import several_files
from polars_rankeval.cli.output import (
    PROG,
    closed_pipe,
    flush_or_drop,
    flushed,
    one_line,
    output_failed,
)

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

# The heavy modules (evaluate, registry, _plan) are imported where used: the trec-eval
# command line starts without them.

INTERRUPTED_EXIT = 128 + signal.SIGINT
"""Exit status after Ctrl-C (130)."""
SUBCOMMANDS: tuple[str, ...] = (
    "evaluate",
    "metrics",
    "trec-eval",
    "compare",
    "plot",
    "differences",
    "judgements",
    "fuse",
    "meta",
    "repro",
    "power",
)


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
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")

    evaluate.add_parser(sub)
    metrics.add_parser(sub)
    trec_eval.add_parser(sub)
    compare.add_parser(sub)
    plot.add_parser(sub)
    differences.add_parser(sub)
    fuse.add_parser(sub)
    meta.add_parser(sub)
    repro.add_parser(sub)
    power.add_parser(sub)
    return parser


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """Prepend ``evaluate`` unless a subcommand or a top-level flag comes first."""
    args = list(argv)
    if args and (args[0] in SUBCOMMANDS or args[0] in ("-h", "--help", "--version")):
        return args
    return ["evaluate", *args]


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
        return trec_eval.command(raw[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(_with_default_command(raw))
    except SystemExit as exit_:  # argparse has printed usage or help already
        code = exit_.code
        return flushed(code if isinstance(code, int) else (0 if code is None else 2))
    except OSError as exc:  # printing the help or usage
        return output_failed(exc)
    with warnings.catch_warnings(), _overlap_log():
        # Warnings (e.g. OverlapWarning: ids that barely match) are one line on stderr.
        from polars_rankeval.api.overlap import OverlapWarning

        warnings.simplefilter("always", OverlapWarning)
        warnings.showwarning = _show_warning
        try:
            with sigterm_exits():
                status = int(args.handler(args))
        except KeyboardInterrupt:
            # Ctrl-C: temporary files are already removed; exit quietly, as shells expect.
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a further Ctrl-C: no traceback
            return INTERRUPTED_EXIT
        except (ValueError, TypeError, OSError, pl.exceptions.PolarsError) as exc:
            if isinstance(exc, OSError) and closed_pipe(exc):
                return output_failed(exc)  # e.g. `polars-rankeval metrics | head`: quietly
            hints = _pool_hint(args, exc) + _several_files_hint(args, exc) + _id_hint(args, exc)
            print(f"{PROG}: error: {one_line(exc)}{hints}", file=sys.stderr)
            flush_or_drop()  # the lines printed before the error, if stdout takes them
            return 2
        return flushed(status)


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


def _id_hint(args: argparse.Namespace, exc: BaseException) -> str:
    """Ids of a side input (--history, --items) of another dtype: --id-type string."""
    text = str(exc)
    side = " in history= but " in text or " in items= but " in text
    if not side or getattr(args, "id_type", "string") != "infer":
        return ""
    return "; on the command line, pass --id-type string to read the ids of every file as text"


def _several_files_hint(args: argparse.Namespace, exc: BaseException) -> str:
    """Rows sharing a key after a glob matched several files: they were one system."""
    several = several_files(args)
    if not several or "rows share a (" not in str(exc):
        return ""
    pattern, count = several[0]
    return (
        f"; {pattern!r} matched {count} files, read as one system (their rows stacked): "
        "for one system per file, give each its own --recs NAME=PATH (--run for compare)"
    )


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"{PROG}: warning: {one_line(Exception(str(message)))}", file=sys.stderr)


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

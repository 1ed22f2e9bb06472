"""The ``polars-rankeval trec-eval`` command: trec_eval's getopt and its exit statuses.

:func:`command_line` reads trec_eval's options (short and long, ``getopt_long`` rules:
bundled flags, attached or separate values, abbreviated long names, ``--``; ``-`` as
the run reads standard input),
runs :func:`~polars_rankeval.trec_eval.program.trec_eval` and prints what trec_eval
prints, its usage text and its messages on standard error included; it returns the exit
status trec_eval returns. The CLI (``polars_rankeval.cli``) calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval.io.cnumbers import atol
from polars_rankeval.trec_eval.errors import TrecEvalError
from polars_rankeval.trec_eval.measures import REL_FORMATS, parse_measures
from polars_rankeval.trec_eval.output import print_trec, read_zscores
from polars_rankeval.trec_eval.program import trec_eval

VERSION = "10.0-rc3"

_SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
_LONG = {
    "help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m",
    "complete_rel_info_wanted": "c", "level_for_rel": "l", "nosummary": "n",
    "Debug_level": "D", "Judged_docs_only": "J", "Number_docs_in_coll": "N",
    "Max_retrieved_per_topic": "M", "Rel_info_format": "R", "Results_format": "T",
    "Output_old_results_format": "o", "Zscore": "Z",
}  # fmt: skip
_TAKES_ARG = {c for i, c in enumerate(_SHORT) if i + 1 < len(_SHORT) and _SHORT[i + 1] == ":"}
_TAKES_ARG |= {"o"}  # the obsolete --Output_old_results_format takes an argument
USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)


class _UsageError(Exception):
    pass


def _getopt(argv: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """GNU ``getopt_long`` with trec_eval's options: permutes, bundles, abbreviates."""
    options: list[tuple[str, str]] = []
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional += argv[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            matches = [n for n in _LONG if n == name] or [n for n in _LONG if n.startswith(name)]
            if len(matches) != 1:
                raise _UsageError(f"unrecognized or ambiguous option {arg!r}")
            short = _LONG[matches[0]]
            if short in _TAKES_ARG:
                if not eq:
                    if i >= len(argv):
                        raise _UsageError(f"option {arg!r} requires an argument")
                    value = argv[i]
                    i += 1
            elif eq:
                raise _UsageError(f"option {arg!r} doesn't allow an argument")
            options.append((short, value))
            continue
        if arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                c = arg[j]
                if c not in _SHORT.replace(":", ""):
                    raise _UsageError(f"invalid option -- {c!r}")
                if c in _TAKES_ARG and c != "o":
                    value = arg[j + 1 :]
                    if not value:
                        if i >= len(argv):
                            raise _UsageError(f"option requires an argument -- {c!r}")
                        value = argv[i]
                        i += 1
                    options.append((c, value))
                    break
                options.append((c, ""))
                j += 1
            continue
        positional.append(arg)
    return options, positional


def command_line(argv: Sequence[str]) -> int:
    """``polars-rankeval trec-eval``: trec_eval's command line, options and output.

    Options are trec_eval's (``-q -m -c -l -n -D -J -N -M -R -T -Z -v -h`` and their
    long names, ``-`` reads the run from standard input); the output is byte for byte
    trec_eval's. Returns trec_eval's exit status (0, or 1 for a usage error or an
    illegal measure, 2 for unreadable input, 4 for duplicate documents, 7 when no query
    has both results and judgments).
    """
    try:
        options, positional = _getopt(argv)
    except _UsageError as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        sys.stderr.write(USAGE)
        return 1
    measures: list[str] = []
    kwargs: dict[str, Any] = {}
    help_wanted = False
    zfile: str | None = None
    rel_format, results_format = "qrels", "trec_results"
    for opt, value in options:
        if opt == "h":
            help_wanted = True
        elif opt == "v":
            print(f"trec_eval version {VERSION}", file=sys.stderr)
            return 0
        elif opt == "q":
            kwargs["per_query"] = True
        elif opt == "m":
            try:
                parse_measures([value])
            except TrecEvalError:
                print(f"trec_eval: illegal measure '{value}'", file=sys.stderr)
                return 1
            measures.append(value)
        elif opt == "c":
            kwargs["complete"] = True
        elif opt == "l":
            kwargs["rel_level"] = atol(value)
        elif opt == "n":
            kwargs["summary"] = False
        elif opt == "D":
            level, dot, qid = value.partition(".")
            if dot:
                kwargs["query"] = qid
            if atol(level) > 0:
                print("trec_eval: note: debug output (-D > 0) is not reproduced", file=sys.stderr)
        elif opt == "J":
            kwargs["judged_only"] = True
        elif opt == "N":
            kwargs["num_docs"] = atol(value)
        elif opt == "M":
            kwargs["max_docs"] = max(atol(value), 0)
        elif opt == "R":
            rel_format = value
        elif opt == "T":
            results_format = value
        elif opt == "Z":
            zfile = value
    if help_wanted:
        sys.stdout.write(USAGE)
        return 0
    if len(positional) != 2:
        sys.stderr.write(USAGE)
        return 1
    if rel_format not in REL_FORMATS:
        print(f"trec_eval: Illegal rel_format '{rel_format}'", file=sys.stderr)
        return 2
    kwargs["rel_format"] = rel_format
    if results_format != "trec_results":
        print(f"trec_eval: Illegal retrieval results format '{results_format}'", file=sys.stderr)
        return 2
    qrels_path, run_path = positional
    try:
        run_source: Any = sys.stdin.buffer.read() if run_path == "-" else Path(run_path)
        if run_path != "-" and not Path(run_path).is_file():
            raise TrecEvalError(f"cannot read results file {run_path!r}", 2)
        if not Path(qrels_path).is_file():
            raise TrecEvalError(f"cannot read qrels file {qrels_path!r}", 2)
        zscores = read_zscores(zfile) if zfile is not None else None
        result = trec_eval(
            Path(qrels_path), run_source, measures or ["official"], zscores=zscores, **kwargs
        )
    except TrecEvalError as exc:
        print(exc.stderr, file=sys.stderr)
        return exc.status
    except (ValueError, OSError, pl.exceptions.PolarsError) as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        return 2
    print_trec(result)
    return 0

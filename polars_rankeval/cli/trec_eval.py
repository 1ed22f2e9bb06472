"""The ``trec-eval`` subcommand's glue: its help; its options are parsed by trec_eval's rules.

:func:`polars_rankeval.cli.app.main` hands ``trec-eval`` straight to
:func:`polars_rankeval.trec_eval.program.command_line`; argparse sees it only for ``--help``.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    """The ``trec-eval`` subcommand's help (its options are parsed by trec_eval's rules)."""
    te = sub.add_parser(
        "trec-eval",
        help="trec_eval on TREC qrels and run files, with trec_eval's output",
        description=(
            "A drop-in trec_eval 10.0-rc3: trec_eval's options (-q -m -c -l -n -D -J -N -M "
            "-R -T -Z -v and the long names, '-' for a run on standard input), measures and "
            "output, byte for byte. Example: polars-rankeval trec-eval -q -m all_trec "
            "qrels run. This help comes from polars-rankeval; the options are parsed as "
            "trec_eval parses them (see the docs' trec_eval page)."
        ),
    )
    te.add_argument("qrels", type=Path, help="TREC qrels file (qid iter docno rel)")
    te.add_argument("run", help="TREC run file (qid Q0 docno rank score tag), or - for stdin")
    te.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Reached only through argparse (``trec-eval`` is normally parsed by trec_eval's rules)."""
    from polars_rankeval.trec_eval.command import command_line

    return command_line([str(args.qrels), str(args.run)])


def command(args: list[str]) -> int:
    """``trec-eval ARGS`` parsed by trec_eval's own rules; the command line's exit status.

    130 after Ctrl-C; standard output that cannot be written: 0 when its reader went
    away, else 2 (as :func:`polars_rankeval.cli.app.main`); otherwise trec_eval's status.
    Imports only the clone (not the other subcommands), so the process stays small.
    """
    from polars_rankeval.cli.output import flushed, output_failed
    from polars_rankeval.trec_eval.command import command_line

    try:
        status = command_line(args)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return 128 + signal.SIGINT
    except OSError as exc:  # writing the output (command_line reports reading errors)
        return output_failed(exc, "trec_eval: ")
    return flushed(status, "trec_eval: ")

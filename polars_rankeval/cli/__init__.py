"""The ``polars-rankeval`` command line.

:func:`main` is the console script's entry point: ``trec-eval`` goes straight to the
trec_eval clone (:func:`polars_rankeval.cli.trec_eval.command`), without importing the
other subcommands; everything else to :func:`polars_rankeval.cli.app.main`.
May import every layer.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (see :func:`polars_rankeval.cli.app.main`)."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["trec-eval"] and not set(raw[1:2]) & {"-h", "--help"}:
        from polars_rankeval.cli.trec_eval import command

        return command(raw[1:])
    from polars_rankeval.cli.app import main as app_main

    return app_main(raw)


__all__ = ["main"]

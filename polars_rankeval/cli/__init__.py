"""The ``polars-rankeval`` command line.

:func:`main` (in :mod:`polars_rankeval.cli.app`) is the console script's entry point.
May import every layer.
"""

from polars_rankeval.cli.app import main

__all__ = ["main"]

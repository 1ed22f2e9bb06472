"""``python -m polars_rankeval``: the ``polars-rankeval`` command line."""

from polars_rankeval.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

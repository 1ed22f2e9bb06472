"""Tests of polars_rankeval.plot (mirrors the package)."""

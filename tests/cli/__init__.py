"""Tests of polars_rankeval.cli (mirrors the package)."""

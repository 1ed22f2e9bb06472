"""Tests of polars_rankeval.metrics (mirrors the package)."""

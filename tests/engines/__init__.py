"""Tests of polars_rankeval.engines (mirrors the package)."""

"""Tests of polars_rankeval.analysis (mirrors the package)."""

"""Tests of polars_rankeval._utils (mirrors the package)."""

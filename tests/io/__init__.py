"""Tests of polars_rankeval.io (mirrors the package)."""

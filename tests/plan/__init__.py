"""Tests of polars_rankeval.plan (mirrors the package)."""

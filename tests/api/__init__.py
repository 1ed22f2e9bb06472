"""Tests of polars_rankeval.api (mirrors the package)."""

"""Tests of polars_rankeval.conventions (mirrors the package)."""

"""Tests of polars_rankeval.trec_eval (mirrors the package)."""

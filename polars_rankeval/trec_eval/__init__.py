"""trec_eval 10.0-rc3, reproduced.

The program (:mod:`~polars_rankeval.trec_eval.program`) and its relation formats
(:mod:`~polars_rankeval.trec_eval.prefs`).

May import: ``io`` and the layers below it.
"""

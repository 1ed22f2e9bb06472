"""Charts of evaluation results.

:mod:`~polars_rankeval.plot.charts`, also ``prk.plot``. May import: ``trec_eval`` and
the layers below it.
"""

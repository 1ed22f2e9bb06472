"""trec_eval 10.0-rc3, reproduced: the ``trec-eval`` command's engine.

One concept per module: :mod:`.errors` (the one :class:`~.errors.TrecEvalError`),
:mod:`.measures` (the measure table and the ``-m`` parser), :mod:`.ranking` (each
query's ranking in trec_eval's order), :mod:`.compute` and :mod:`.gains` (the
per-query measures), :mod:`.output` (C's ``printf`` formats, the summary, ``-Z``),
:mod:`.program` (:func:`~.program.trec_eval`, the evaluation), :mod:`.command` (the
command line), and the relation formats ``-R qrels_jg/prefs/qrels_prefs`` in
:mod:`.prefs` and its ``prefs_*`` modules. C's ``atof``/``atol`` are
:mod:`polars_rankeval.io.cnumbers`, shared with the io readers. The clone keeps its
own copy of the measures the metric registry also has, because byte-identical output
depends on trec_eval's tie order, summation order and printing.

May import: ``io`` and the layers below it.
"""

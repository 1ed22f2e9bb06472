"""Files and data: TREC run and qrels files, the bundled examples.

May import: ``analysis`` and the layers below it.
"""

"""Files and data: TREC run and qrels files, the bundled examples.

May import: ``plan``, ``metrics``, ``_utils``.
"""

"""Analysis on top of ``evaluate``.

Significance tests, reports, curves, rank similarity, sampled metrics and their
corrections, item popularity.

May import: ``api`` and the layers below it.
"""

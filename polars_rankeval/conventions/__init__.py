"""Named presets that reproduce another library's numbers.

``conventions="rectools"`` and the others: see
:mod:`~polars_rankeval.conventions.presets`.

May import: ``plan``, ``metrics``, ``_utils``.
"""

"""Fusion: combine runs and recommenders given as long frames.

:func:`fuse` fuses runs with any of ranx's methods (and Qdrant's ``dbsf``, weighted
RRF), after a normalisation per run; :func:`optimize_fusion` tunes weights and
parameters on training queries with k-fold cross-validation, every candidate evaluated
in one plan. Each method is declared once (:mod:`polars_rankeval.fusion.registry`).
"""

from polars_rankeval.fusion.fuse import fuse
from polars_rankeval.fusion.registry import list_fusion_methods

__all__ = ["fuse", "list_fusion_methods"]

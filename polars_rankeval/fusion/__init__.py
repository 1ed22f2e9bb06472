"""Fusion: combine runs and recommenders given as long frames.

:func:`fuse` fuses runs with any of ranx's methods (and Qdrant's ``dbsf``, weighted
RRF ``w_rrf``), after a normalisation per run; :func:`optimize_fusion` tunes weights and
parameters on training queries with k-fold cross-validation, every candidate evaluated
in one plan. Each method is declared once (:mod:`polars_rankeval.fusion.registry`):
name, kernel, parameters with their ranges, whether it learns, its reference and the
tuning grid; :func:`list_fusion_methods` prints the table. May import: ``analysis`` and
the layers below it.

Where ranx (0.3.21) and this package differ, and why (``tests/fusion`` checks the
numbers are otherwise equal):

- Ties. ranx orders tied scores by numba's quicksort (not stable), so the positions
  RRF, ISR, RBC, Borda, ... read are unspecified among ties; here a list is ordered by
  score descending, then item descending (trec_eval's order, the TREC writer's).
- Queries. ``ranx.fuse`` asserts that every run has the same queries; here a query is
  fused from the runs that have it (a run without it is an empty list, which is what
  ranx computes with an empty list).
- ``zmuv``. ranx's parallel loop loses the list that follows an empty one; here every
  list is normalised.
- ``borda`` and ``min-max-inverted`` followed by a positional method. ranx reads the
  positions of a Borda-normalised run in the order of a Python set (hash-seeded), and
  re-sorts an inverted run unstably; here the positions follow the normalised score
  (then the raw position, then item descending).
- Condorcet. ranx sorts with a comparator that is not an order (majority cycles; equal
  votes count for the first item compared; a run lacking both items votes for the
  second), so its scores depend on the order of a set. Here: Copeland's rule, 1 + wins
  + draws / 2 over strict pairwise majorities; equal to ranx's scores wherever every
  run ranks every item and the majority relation is a strict order.
- CombMIN / CombMAX. ranx gives a missing score 1e9 / -1e9; here the min / max is over
  the runs retrieving the item (the same unless a score passes +-1e9).
- BayesFuse. ranx reads its 1000 learned log odds past position 1000 (out of bounds,
  unchecked in numba); here a position beyond 1000 gets the log odds of an item a run
  lacks, log(0.001 / 0.999).
- Training. ranx pairs the judgments and a run query by query in sorted order, which
  is only right when both have the same queries; here they are joined by query, and
  averages divide by the number of training queries (the users in ``qrels``).
- Weights. ``ranx.fuse`` requires them for ``wsum``; here they default to 1.
- ``optimize_fusion``. ranx keeps the weight vectors whose float sum ``== 1.0`` (62 of
  the 66 tenths summing to 1 for three runs: (0.1, 0.2, 0.7) sums to 1.0000000000000002)
  and the last of equally scored candidates; here the exact tenths and the first
  candidate. ranx scores a query without a relevant item 0; :func:`evaluate` leaves it
  out (its ``empty`` policy).

Where ranx's docs and code disagree: ``logn_isr``'s docstring says "Log_ISR" while the
code computes log(count + sigma) (LogN_ISR: followed, the code); ``mapfuse`` documents
``map_scores`` as one "normalization factor" while the code takes one MAP per run
(followed, the code); several docstrings type ``runs`` as ``numba.typed.List`` while
the code takes a list of ``Run``; ``probfuse`` documents "probabilities for runs'
positions" where the code reads one per segment (followed, the code).
"""

from polars_rankeval.fusion.fuse import fuse
from polars_rankeval.fusion.optimize import FusionSearch, optimize_fusion
from polars_rankeval.fusion.registry import list_fusion_methods

__all__ = ["FusionSearch", "fuse", "list_fusion_methods", "optimize_fusion"]

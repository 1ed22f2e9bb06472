"""What the public fusion functions accept, declared once (see ``_utils.constraints``).

The checks that need the runs (one weight or normalisation per run, a method's own
parameters, whether it learns from qrels) stay in :func:`~polars_rankeval.fusion.fuse.prepare`.
"""

from __future__ import annotations

from collections.abc import Mapping

from polars_rankeval._utils.constraints import (
    COLUMN,
    FLAG,
    Frame,
    Instance,
    ListOf,
    Number,
    Spec,
    Text,
    Unchecked,
)

RUNS = Unchecked(
    "a frame with a system column, a mapping of run name to frame or TREC run file, "
    "or a sequence of them (checked with the runs)"
)
METHOD = Text("a fusion method name (str), see list_fusion_methods()")
NORM = Unchecked("a normalisation name, None, or one per run (checked with the runs)")
COLUMNS: dict[str, Spec] = {
    name: COLUMN for name in ("system", "user", "item", "score", "relevance")
}
FUSE: dict[str, Spec] = {
    "runs": RUNS,
    "method": METHOD,
    "norm": NORM,
    "weights": [
        ListOf(Number(), what="a list of weights, one per run"),
        Instance(Mapping, what="a mapping of run name to weight"),
        None,
    ],
    "params": [Instance(Mapping, what="a mapping of parameter name to value"), None],
    "qrels": [Frame("polars"), None],
    "missing": [Number(), None],
    **COLUMNS,
    "validate": FLAG,
}
"""The parameters of :func:`polars_rankeval.fuse`."""

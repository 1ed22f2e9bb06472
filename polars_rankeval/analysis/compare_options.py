"""The options of the paired tests, declared once for every analysis that runs them.

:func:`~polars_rankeval.compare`, :func:`~polars_rankeval.compare_per_user` and the
analyses over the same paired per-user values (differences, power, the systems'
values; judgements for its tie tolerance) take the same test, correction, level,
resampling and tie options; their constraints (and the one relation between two of
them) live here, apart from any one function, so that each declares them by name.
"""

from __future__ import annotations

from typing import Literal

from polars_rankeval._utils.constraints import (
    FLAG,
    Integer,
    ListOf,
    Number,
    Options,
    Spec,
    Unchecked,
)
from polars_rankeval._utils.stats import CIMethod, CorrectionName, TestName
from polars_rankeval.metrics.params import Interval

Family = Literal["all", "metric"]
FAMILIES: tuple[str, ...] = ("all", "metric")
_PROBABILITY = Number(Interval(0, 1, closed="neither"))
TIE_TOLERANCE = Number(Interval(0, None))
"""``tie_tolerance``: two values this close are a tie (compare, differences, judgements)."""

TEST_OPTIONS: dict[str, Spec] = {
    "baseline": Unchecked("a system id, looked up in the data"),
    "systems": [ListOf(what="a list of system ids"), None],
    "test": Options.of(TestName),
    "correction": [Options.of(CorrectionName), None],
    "family": Options.of(Family),
    "alpha": _PROBABILITY,
    "n_resamples": Integer(Interval(1, None)),
    "seed": Integer(Interval(0, None)),
    "confidence": _PROBABILITY,
    "ci": Options.of(CIMethod),
    "progress": [FLAG, None],
    "tie_tolerance": TIE_TOLERANCE,
}
"""The options of the paired tests, shared by :func:`compare` and :func:`compare_per_user`."""


def _check_options(
    *,
    test: str,
    correction: str | None,
    family: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    confidence: float,
    ci: str,
) -> None:
    # The values themselves are declared (TEST_OPTIONS); this is their one relation.
    if test == "tukey" and correction not in (None, "none"):
        msg = (
            f"test='tukey' controls the family-wise error over all pairs by construction; "
            f"it takes correction='none' (or no correction=), got {correction!r}"
        )
        raise ValueError(msg)

"""One library's conventions as data: :class:`Convention` and its :class:`Mapped` metrics.

The declarations of each library are in :mod:`polars_rankeval.conventions.presets`; how
a call under a preset is resolved is in :mod:`polars_rankeval.conventions.resolve`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from polars_rankeval.plan.positions import RankPositions

Cutoff = Literal["required", "optional", "none"]
Entry = Literal["evaluate", "rank_similarity"]


@dataclass(frozen=True)
class Mapped:
    """One metric of a library and the polars_rankeval metric that reproduces it.

    ``metric`` is in the metric grammar without the cutoff (``"map(denominator=k)"``);
    ``None`` means the library's metric cannot be reproduced and ``note`` says why.
    ``cutoff`` says whether the library's metric takes a cutoff. ``ties`` and ``users``
    are set when this metric needs another tie rule or user set than the preset's
    (one call has one rule: a tie rule must be passed explicitly; the user set is the
    call's when every requested metric has it and ``users=`` is left out).
    """

    name: str
    metric: str | None
    cutoff: Cutoff = "required"
    note: str = ""
    ties: str | None = None
    users: str | None = None
    ties_at_k: str | None = None
    """The tie policy the library uses when this metric is given a cutoff."""
    entry: Entry = "evaluate"
    """The function that computes it: ``evaluate`` (one run against the truth) or
    ``rank_similarity`` (a run against a reference run, e.g. RecTools' Intersection)."""
    options: tuple[str, ...] = ()
    """Library options passed through as the same option of ``metric``
    (``Intersection(ref_k=20)`` -> ``intersection(ref_k=20)``)."""


@dataclass(frozen=True)
class Spelled:
    """One metric of a library's own spelling of a measure (trec_eval's ``P.5,10``).

    ``name`` is the metric in the preset's table, ``cutoff`` its cutoff (``None``:
    none), ``options`` the options added to its polars_rankeval metric
    (``"level=0.1"``) and ``label`` the name the library prints (``P_5``), which names
    the output column.
    """

    name: str
    cutoff: int | None
    options: str
    label: str


@dataclass(frozen=True)
class Convention:
    """The conventions of one library: metric names, ties, empty users, user set.

    ``ties`` is the tie policy passed to ``evaluate``; ``ties_note`` says what the
    library does (several libraries have no defined tie order: their numbers on tied
    scores depend on a sort's internals, and the preset gives the expectation over the
    tied orderings). ``empty`` is what a user without relevant items becomes and
    ``users`` which users are averaged, as in ``evaluate``.
    """

    name: str
    library: str
    version: str
    ties: str
    ties_note: str
    empty: str
    users: str
    metrics: tuple[Mapped, ...]
    notes: tuple[str, ...] = field(default=())
    rank_positions: RankPositions = "relative"
    """How the library reads explicit ranks (``rank=``): as an order (``"relative"``)
    or as positions with gaps kept (``"absolute"``, RecTools); see ``evaluate``."""
    spelling: Callable[[str], list[Spelled] | None] | None = None
    """The library's own spelling of its measures, beside ``Name@k``: a name to the
    metrics it stands for, or ``None`` when it is not such a spelling (trec_eval's
    ``-m`` arguments and printed labels: ``P.5,10``, ``P_10``, ``gm_map``)."""

    def lookup(self, name: str, *, text: str | None = None) -> Mapped:
        """The library metric called ``name`` (case and spaces ignored).

        ``text`` is what the caller wrote, named in the error (default ``name``).
        """
        key = _key(name)
        for mapped in self.metrics:
            if _key(mapped.name) == key:
                return mapped
        text = name if text is None else text
        known = ", ".join(m.name for m in self.metrics if m.metric is not None)
        msg = (
            f"{self.library} has no metric {text!r} that conventions={self.name!r} "
            f"reproduces; its metrics here: {known}"
        )
        # A cutoff written into the name (MAP_10, NDCG.10): point to the grammar.
        cutoff = re.fullmatch(r"(.+?)[_.](\d+)", text.strip())
        if cutoff and any(_key(m.name) == _key(cutoff[1]) for m in self.metrics):
            msg += f"; a cutoff is written with @: {cutoff[1]}@{cutoff[2]}"
        raise ValueError(msg)


def _key(name: str) -> str:
    return re.sub(r"\s+", "", name).lower()


HISTORY_USERS = "history"
"""The user set of a metric averaged over the users of the training history (RePlay's
Novelty): no ``users=`` value of ``evaluate`` names it, so the call passes their ids."""


UNDEFINED_TIES = (
    "no defined tie order ({how}): on tied scores the preset gives the expectation over "
    "the tied orderings; the library's value depends on its sort. Equal on tie-free data."
)

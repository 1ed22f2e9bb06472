"""Tie policies as objects: how tied scores are ordered, and what each policy offers.

A policy is one :class:`Ties` object in :data:`POLICIES`; everything else reads its
capabilities instead of comparing names:

* ``deterministic``: every tie is broken by a total order (``breaks``, after the
  score), so each row gets one position; otherwise (``"expected"``) a metric is the
  exact expectation over the orderings of each tie group.
* ``breaks``: the tie-break keys after the score, in order (see :data:`TieKey`);
  :class:`polars_rankeval.metrics.features.Features` builds the positions from them.
* ``unjudged``: how it orders unjudged rows (null relevance) among equal scores.
* ``pair_weight``: what a tied (relevant, non-relevant) pair counts for a pairwise
  statistic over many users (``global_auc``): 1/2, 1 or 0; ``None`` when item ids
  decide, which mean nothing across users.

Metrics declare the capabilities they require (:data:`Capability`, ``ties_require=``
of :func:`polars_rankeval.metrics.registry.register`), and :func:`resolve_ties` and
:func:`check_supported` are the one place where a ``ties=`` value is checked. The
public API keeps accepting the names (``ties="expected"``); a new policy is one more
object here (and its name in :data:`polars_rankeval._utils.types.TiePolicy` for type
checkers; a test checks that the two agree).

Ids order by their text whatever their dtype (:func:`id_order`): String and
Categorical ids already do in Polars, an Enum would follow its category list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import polars as pl
import polars.selectors as cs

TieKey = Literal["item_desc", "item_asc", "relevance_desc", "relevance_asc", "judged_first"]
"""A tie-break key after the score: the item id, the relevance, or judged rows first."""

Capability = Literal["deterministic", "pair_weight"]
"""What a metric may require of a policy: a total order, or a weight for tied pairs."""


@dataclass(frozen=True)
class Ties:
    """One tie policy and its capabilities (see the module docstring)."""

    name: str
    description: str
    deterministic: bool
    breaks: tuple[TieKey, ...] = ()
    unjudged: str = ""
    pair_weight: float | None = None

    def has(self, capability: Capability) -> bool:
        """Whether this policy offers ``capability``."""
        if capability == "deterministic":
            return self.deterministic
        return self.pair_weight is not None

    @property
    def order(self) -> str:
        """The total order in words (deterministic policies), for docs and errors."""
        words = {
            "item_desc": "item id descending",
            "item_asc": "item id ascending",
            "relevance_desc": "relevance descending",
            "relevance_asc": "relevance ascending",
            "judged_first": "judged rows before unjudged ones",
        }
        return ", then ".join(["score descending", *(words[key] for key in self.breaks)])

    def __str__(self) -> str:
        return self.name


_JUDGED = "after judged rows of equal score and relevance, then by item id ascending"
POLICIES: dict[str, Ties] = {
    policy.name: policy
    for policy in (
        Ties(
            "expected",
            "the exact expected value over all orderings of the tied items "
            "(McSherry & Najork, 2008); does not depend on row order",
            deterministic=False,
            unjudged="within the tie group like any row (the expectation covers them)",
            pair_weight=0.5,
        ),
        Ties(
            "item_desc",
            "ties broken by item id descending, as trec_eval (and RePlay) do",
            deterministic=True,
            breaks=("item_desc",),
            unjudged="by item id, like judged rows",
        ),
        Ties(
            "item_asc",
            "ties broken by item id ascending",
            deterministic=True,
            breaks=("item_asc",),
            unjudged="by item id, like judged rows",
        ),
        Ties(
            "optimistic",
            "the most relevant item first within a tie (an upper bound)",
            deterministic=True,
            breaks=("relevance_desc", "judged_first", "item_asc"),
            unjudged=_JUDGED,
            pair_weight=1.0,
        ),
        Ties(
            "pessimistic",
            "the least relevant item first within a tie (a lower bound)",
            deterministic=True,
            breaks=("relevance_asc", "judged_first", "item_asc"),
            unjudged=_JUDGED,
            pair_weight=0.0,
        ),
    )
}
"""Every tie policy by name, in the order the docs and the command line list them."""

TIE_POLICIES: tuple[str, ...] = tuple(POLICIES)


def resolve_ties(value: str | Ties) -> Ties:
    """The policy named ``value`` (or ``value`` itself); a ``ValueError`` for an unknown one."""
    if isinstance(value, Ties):
        return value
    policy = POLICIES.get(value) if isinstance(value, str) else None
    if policy is None:
        msg = f"ties must be one of {sorted(POLICIES)}, got {value!r}"
        raise ValueError(msg)
    return policy


def supported(require: Iterable[Capability]) -> tuple[str, ...]:
    """The names of the policies offering every capability of ``require``."""
    needed = tuple(require)
    return tuple(p.name for p in POLICIES.values() if all(p.has(c) for c in needed))


def check_supported(metric: str, require: Iterable[Capability], ties: str | Ties) -> Ties:
    """The policy, or the one error for a metric that cannot use it."""
    policy = resolve_ties(ties)
    needed = tuple(require)
    if not all(policy.has(c) for c in needed):
        msg = (
            f"metric {metric!r} does not support ties={policy.name!r}; "
            f"supported: {', '.join(supported(needed))}"
        )
        raise ValueError(msg)
    return policy


def id_order(name: str) -> pl.Expr:
    """Column ``name`` as a sort key that orders ids by their text, whatever their dtype.

    Polars orders String and Categorical values by their text but an Enum by its
    category list, so the same ids would break ties differently when read from Parquet
    (an Enum) and from CSV (a String), or after a join that keeps or drops the Enum. An
    Enum is read as Categorical here (no string copy); every other dtype (integers
    numerically, strings by their bytes) is the column itself. Needs no schema, so
    it also serves the metric functions' expressions. Keyed by the name ``name``.
    """
    enum = cs.by_name(name) & cs.enum()
    return pl.coalesce(enum.cast(pl.Categorical), cs.by_name(name) - cs.enum()).alias(name)

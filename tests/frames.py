"""Small frames shared by several test files: published examples and tiny hand cases.

Each is a module-level constant (Polars frames are immutable), named after where it
comes from or what it shows, with the values the tests' hand computations read.
"""

from __future__ import annotations

import polars as pl

# --------------------------------------------------------------------------- Hivemall
# Hivemall's ranking-measure tests: the list [1, 3, 2, 6] (scores 10, 8, 6, 2) against
# the relevant items {1, 2, 4} (item 4 never recommended).
HIVEMALL_LIST = [1, 3, 2, 6]
HIVEMALL_RELEVANT = [1, 2, 4]
HIVEMALL_RECS = pl.DataFrame(
    {
        "user": [u for u in (1, 2, 3) for _ in range(4)],
        "item": HIVEMALL_LIST * 3,
        "score": [10.0, 8.0, 6.0, 2.0] * 3,
    }
)
"""The recommendations of three users, each the Hivemall list."""
HIVEMALL_TRUTH = pl.DataFrame(
    {"user": [u for u in (1, 2, 3) for _ in range(3)], "item": HIVEMALL_RELEVANT * 3}
)
"""The relevant items of the three users of :data:`HIVEMALL_RECS`."""

# --------------------------------------------------------------------------- lecture
LECTURE_SCORES = [5.0, 4.0, 3.0, 2.0, 1.0]
LECTURE_RELEVANCE = [1, 0, 1, 1, 0]
LECTURE_AP = pl.DataFrame(
    {
        "user": [1] * 5,
        "item": list("ABCDE"),
        "score": LECTURE_SCORES,
        "relevance": LECTURE_RELEVANCE,
    }
)
"""The lecture's average-precision example: relevant A, C, D among A..E, AP (1 + 2/3 + 3/4) / 3."""

# --------------------------------------------------------------------------- RecTools
# RecTools' Serendipity docstring example (rectools 0.19.0, metrics/serendipity.py).
RECTOOLS_RECO = pl.DataFrame(
    {
        "user": ["u1", "u1", "u2", "u2", "u3", "u4", "u4"],
        "item": ["i1", "i2", "i2", "i3", "i3", "i2", "i3"],
        "rank": [1, 2, 1, 2, 1, 1, 2],
    }
)
RECTOOLS_TEST = pl.DataFrame(
    {"user": ["u1", "u1", "u2", "u2", "u3", "u4"], "item": ["i1", "i2", "i2", "i3", "i2", "i2"]}
)
RECTOOLS_PREV = pl.DataFrame(
    {"user": ["u1", "u1", "u2", "u2", "u3"], "item": ["i1", "i2", "i1", "i2", "i1"]}
)


# RecTools' own tests (rectools/tests/metrics): recommendation and interaction dicts.
def rectools_frame(
    reco: dict[int, list[tuple[int, int]]], inter: dict[int, set[int]]
) -> pl.DataFrame:
    """RecTools' test data: reco (item, rank) per user, gaps kept; every interaction is
    relevant, recommended non-interacted items relevance 0, users without interactions
    null."""
    rows = []
    for user in sorted({*reco, *inter}):
        liked = inter.get(user)
        ranked = dict(reco.get(user, []))
        for item in sorted({*ranked, *(liked or ())}):
            rel = None if liked is None else float(item in liked)
            rows.append((user, item, ranked.get(item), rel))
    schema = {"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64, "relevance": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


# --------------------------------------------------------------------------- Recommenders
MS_TRAIN = pl.DataFrame({"user": [1, 1, 1, 2, 2, 3, 3, 3], "item": [1, 2, 4, 3, 4, 3, 4, 5]})
"""The training interactions of MS Recommenders' diversity tests (its unit conftest.py)."""

# --------------------------------------------------------------------------- small cases
ONE_ROW = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [1]})
"""One user with one recommended relevant item: no negative candidate."""
TWO_RANKED = pl.DataFrame(
    {"user": [1, 1], "item": [1, 2], "score": [1.0, 0.5], "relevance": [1, 0]}
)
"""One user: the relevant item first, the other second."""
TWO_TIED = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [1.0, 1.0], "relevance": [1, 0]})
"""One user: a relevant and a non-relevant item tied at the top."""
TWO_POSITIVES = pl.DataFrame(
    {
        "user": [1] * 5,
        "item": [1, 2, 3, 4, 5],
        "score": [0.9, 0.8, 0.5, 0.4, 0.1],
        "relevance": [1, 0, 1, 0, 0],
    }
)
"""One user: positives at scores 0.9 and 0.5, negatives at 0.8, 0.4 and 0.1."""
TIED_TOP_TWO = pl.DataFrame(
    {  # user 1 ties a, b, c (top 2 takes two); user 2: a then d
        "user": [1, 1, 1, 2, 2],
        "item": ["a", "b", "c", "a", "d"],
        "score": [1.0, 1.0, 1.0, 2.0, 1.0],
        "relevance": [1] * 5,
    }
)
"""Two users, every item relevant: user 1 ties a, b and c; user 2 ranks a then d."""


def tied_user() -> pl.DataFrame:
    """One user: a three-way tie, a row above and below it, and an unscored relevant row.

    Scores: item 4 at 0.9, items 1, 2, 3 tied at 0.5, item 5 at 0.1, item 6 not
    recommended (relevant, grade 2). Relevance: 4 -> 0, 1 -> 1, 2 -> 0, 3 -> 3, 5 -> 1.
    """
    return pl.DataFrame(
        {
            "user": [7] * 6,
            "item": [1, 2, 3, 4, 5, 6],
            "score": [0.5, 0.5, 0.5, 0.9, 0.1, None],
            "relevance": [1, 0, 3, 0, 1, 2],
        }
    )

"""RecTools' test data as a long frame (shared by the RecTools-derived tests)."""

from __future__ import annotations

import polars as pl


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

"""The order of the documents: Kendall's tau Union (KTU) and rank-biased overlap (RBO).

The first level of :func:`~polars_rankeval.reproducibility` (reproductions only, where
both runs rank the same topics): per topic, how close the reproduced ranking comes to
the original one, as ``repro_eval`` computes KTU (over the union of the two lists, its
inversions counted by a merge sort vectorised over topics) and RBO (extrapolated, to
a depth). Kept apart from the effectiveness and effect measures, which read the
metrics' scores, not the rankings.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["ORDERING_COLUMNS"]

#: The columns of :attr:`Reproducibility.ordering`, in order.
ORDERING_COLUMNS: tuple[str, ...] = (
    "run",
    "ktu",
    "rbo",
    "n_topics",
    "n_topics(ktu)",
    "n_topics_only_original",
    "n_topics_only_reproduced",
)


_CHUNK = 1 << 22  # padded positions per chunk of the KTU kernel


def _inversions(perm: np.ndarray) -> np.ndarray:
    """Inversions per row of ``perm`` (values distinct within a row), by merge sort.

    The width is a power of two. Each level merges sorted blocks of ``w`` pairwise: a
    stable sort of each pair of blocks, and each element of the right block passes the
    left-block elements that sort after it (the cross inversions).
    """
    rows, width = perm.shape
    out = np.zeros(rows, dtype=np.int64)
    if width < 2:
        return out
    # Level 1 directly: adjacent pairs.
    left, right = perm[:, 0::2], perm[:, 1::2]
    out += (left > right).sum(axis=1)
    a = np.empty_like(perm)
    a[:, 0::2], a[:, 1::2] = np.minimum(left, right), np.maximum(left, right)
    w = 2
    while w < width:
        blocks = a.reshape(rows, width // (2 * w), 2 * w)
        order = np.argsort(blocks, axis=-1, kind="stable")
        from_left = order < w
        left_before = np.cumsum(from_left, axis=-1)
        out += ((w - left_before) * ~from_left).sum(axis=(1, 2))
        a = np.take_along_axis(blocks, order, axis=-1).reshape(rows, width)
        w *= 2
    return out


def _ktu(lists: pl.DataFrame) -> np.ndarray:
    """KTU per row of ``lists`` (``n`` and the two lists' ``sa``, ``sb``), as repro_eval.

    repro_eval pairs the two lists position by position: the i-th document of the
    original and the i-th of the reproduced list, each replaced by its index in the
    sorted union of the two lists, and Kendall's tau of those two index sequences. An
    index in a sorted union orders documents by id, so that is Kendall's tau between the
    ids found at each rank. Both lists are cut to the shorter one (repro_eval needs
    equal lengths). The ids are distinct within a list (no ties): tau = 1 - 4 D /
    (n (n - 1)) with D the discordant pairs, the inversions of the reproduced ids'
    ranks read in the order of the original ids. ``sa`` and ``sb`` are each list's
    positions (0-based) in id order; NaN for n < 2.
    """
    n_of = lists["n"].to_numpy().astype(np.int64)
    topics = len(n_of)
    discordant = np.zeros(topics, dtype=np.int64)
    width = 1 << max(0, (int(n_of.max(initial=1)) - 1).bit_length())
    step = max(1, _CHUNK // width)
    ends = np.cumsum(n_of)
    sa_all = lists["sa"].explode().to_numpy().astype(np.int32)
    sb_all = lists["sb"].explode().to_numpy().astype(np.int32)
    for start in range(0, topics, step):
        stop = min(topics, start + step)
        n = n_of[start:stop]
        lo, hi = int(ends[start] - n_of[start]), int(ends[stop - 1])
        rows = np.repeat(np.arange(stop - start), n)
        cols = np.arange(hi - lo) - np.repeat(np.cumsum(n) - n, n)
        # rank_b[r, p]: the rank (0-based) of the reproduced id at position p
        rank_b = np.zeros((stop - start, width), dtype=np.int32)
        rank_b[rows, sb_all[lo:hi]] = cols
        # Read in the original ids' order; pads after, larger and increasing: no
        # inversion with them.
        seq = np.broadcast_to(width + np.arange(width, dtype=np.int32), rank_b.shape).copy()
        seq[rows, cols] = rank_b[rows, sa_all[lo:hi]]
        discordant[start:stop] = _inversions(seq)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = 1.0 - 4.0 * discordant / (n_of * (n_of - 1))
    return np.where(n_of >= 2, tau, np.nan)


def _rbo(
    a: pl.LazyFrame, b: pl.LazyFrame, both: pl.LazyFrame, p: float, depth: int
) -> pl.LazyFrame:
    """repro_eval's RBO per topic of ``both``: the agreements to ``depth``, weights normalised.

    ``sum_{d=1}^{D} p^(d-1) |A_:d ∩ B_:d| / d / sum_{d=1}^{D} p^(d-1)`` (Clarke et al.'s
    normalisation, the code repro_eval copies): no extrapolation past the lists, and a
    list shorter than D keeps its overlap while d grows. A common document first
    counted at depth m = max of its two ranks adds ``tail(m) = sum_{d=m}^{D}
    p^(d-1) / d``: one table lookup per common document.
    """
    d = np.arange(1, depth + 1, dtype=np.float64)
    weight = p ** (d - 1)
    tail = np.cumsum((weight / d)[::-1])[::-1]
    norm = float(weight.sum())
    table = pl.LazyFrame({"m": np.arange(1, depth + 1, dtype=np.int64), "tail": tail})
    sums = (
        a.join(b, on=["__prk_user", "item"], how="inner", nulls_equal=True)
        .select("__prk_user", m=pl.max_horizontal("pos", "pos_right").cast(pl.Int64))
        .filter(pl.col("m") <= depth)
        .join(table, on="m", how="inner")
        .group_by("__prk_user")
        .agg(s=pl.col("tail").sum())
    )
    return both.join(sums, on="__prk_user", how="left", nulls_equal=True).select(
        "__prk_user", rbo=pl.col("s").fill_null(0.0) / norm
    )


def _ordering(
    a: pl.LazyFrame, b: pl.LazyFrame, rbo_p: float, rbo_depth: int
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Per-topic KTU and RBO of one pair, and the counts of topics in one run only.

    One aggregation per run gives each topic's list (by position), from which the
    lengths, the topics in one run only and KTU's id orders come.
    """

    def listed(lf: pl.LazyFrame, name: str) -> pl.LazyFrame:
        return lf.group_by("__prk_user").agg(pl.col("item").sort_by("pos").alias(name))

    la, lb = listed(a, "la"), listed(b, "lb")
    n = pl.min_horizontal("n_original", "n_reproduced")
    first_n = pl.element().arg_sort()
    both, counts = pl.collect_all(
        [
            la.join(lb, on="__prk_user", how="inner", nulls_equal=True)
            .sort("__prk_user")
            .with_columns(
                n_original=pl.col("la").list.len().cast(pl.Int64),
                n_reproduced=pl.col("lb").list.len().cast(pl.Int64),
            )
            .with_columns(n=n)
            .select(
                "__prk_user",
                "n_original",
                "n_reproduced",
                "n",
                sa=pl.col("la").list.head(pl.col("n")).list.eval(first_n),
                sb=pl.col("lb").list.head(pl.col("n")).list.eval(first_n),
            ),
            pl.concat(
                [
                    la.join(lb, on="__prk_user", how="anti", nulls_equal=True).select(
                        only_original=pl.len()
                    ),
                    lb.join(la, on="__prk_user", how="anti", nulls_equal=True).select(
                        only_reproduced=pl.len()
                    ),
                ],
                how="horizontal",
            ),
        ]
    )
    ktu = _ktu(both)
    topics = both.select("__prk_user", "n_original", "n_reproduced").with_columns(
        ktu=pl.Series(ktu).fill_nan(None)
    )
    rbo = _rbo(a, b, topics.lazy().select("__prk_user"), rbo_p, rbo_depth).collect()
    per = topics.join(rbo, on="__prk_user", how="left", nulls_equal=True, maintain_order="left")
    return per, counts.row(0, named=True)

"""``DataFrame.rankeval`` and ``LazyFrame.rankeval``: thin methods over the functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

import polars as pl

if TYPE_CHECKING:
    from polars_rankeval.api.evaluate import MetricsArg

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


class _RankEval(Generic[FrameT]):
    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    def evaluate(self, metrics: MetricsArg, **options: Any) -> FrameT:
        """Summary of ``metrics`` over users; see :func:`polars_rankeval.evaluate`."""
        from polars_rankeval.api.evaluate import evaluate

        return evaluate(self._frame, metrics, **options)  # type: ignore[return-value]

    def per_user(self, metrics: MetricsArg, **options: Any) -> FrameT:
        """One row per user with one column per metric (``evaluate(per_user=True)``)."""
        from polars_rankeval.api.evaluate import evaluate

        return evaluate(self._frame, metrics, per_user=True, **options)  # type: ignore[return-value]

    def per_item(self, metrics: MetricsArg, **options: Any) -> FrameT:
        """One row per item for item metrics (``evaluate(per_item=True)``)."""
        from polars_rankeval.api.evaluate import evaluate

        return evaluate(self._frame, metrics, per_item=True, **options)  # type: ignore[return-value]

    def compare(self, metrics: MetricsArg, **options: Any) -> pl.DataFrame:
        """Paired tests between systems; see :func:`polars_rankeval.compare`.

        Always a DataFrame (a LazyFrame is executed): the tests need the numbers.
        """
        from polars_rankeval.analysis.compare import compare

        return compare(self._frame, metrics, **options)

    def curve(self, metrics: str | list[str], ks: Any = None, **options: Any) -> pl.DataFrame:
        """Metric@k as a long frame; see :func:`polars_rankeval.curve` (a DataFrame)."""
        from polars_rankeval.analysis.curves import curve

        return curve(self._frame, metrics, ks, **options)

    def pr_curve(self, **options: Any) -> pl.DataFrame:
        """Interpolated precision-recall curve; see :func:`polars_rankeval.pr_curve`."""
        from polars_rankeval.analysis.curves import pr_curve

        return pr_curve(self._frame, **options)


@pl.api.register_dataframe_namespace("rankeval")
class DataFrameRankEval(_RankEval[pl.DataFrame]):
    """Evaluation methods on a long (user, item, score, relevance) DataFrame.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval  # registers the namespace
    >>> df = pl.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2],
    ...                    "score": [0.9, 0.1, 0.2, 0.8], "relevance": [1, 0, 1, 0]})
    >>> df.rankeval.evaluate(["ndcg@1", "recall@1"])
    shape: (1, 6)
    ┌────────┬──────────┬─────────────────┬───────────────────┬─────────┬───────────┐
    │ ndcg@1 ┆ recall@1 ┆ n_users(ndcg@1) ┆ n_users(recall@1) ┆ n_users ┆ n_skipped │
    │ ---    ┆ ---      ┆ ---             ┆ ---               ┆ ---     ┆ ---       │
    │ f64    ┆ f64      ┆ i64             ┆ i64               ┆ i64     ┆ i64       │
    ╞════════╪══════════╪═════════════════╪═══════════════════╪═════════╪═══════════╡
    │ 0.5    ┆ 0.5      ┆ 2               ┆ 2                 ┆ 2       ┆ 0         │
    └────────┴──────────┴─────────────────┴───────────────────┴─────────┴───────────┘
    """


@pl.api.register_lazyframe_namespace("rankeval")
class LazyFrameRankEval(_RankEval[pl.LazyFrame]):
    """Evaluation methods on a long LazyFrame; they return LazyFrames.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval
    >>> lf = pl.LazyFrame({"user": [1, 1], "item": [1, 2], "score": [0.9, 0.1],
    ...                    "relevance": [0, 1]})
    >>> lf.rankeval.per_user(["mrr"]).collect()
    shape: (1, 2)
    ┌──────┬─────┐
    │ user ┆ mrr │
    │ ---  ┆ --- │
    │ i64  ┆ f64 │
    ╞══════╪═════╡
    │ 1    ┆ 0.5 │
    └──────┴─────┘
    """

"""``DataFrame.rankeval`` and ``LazyFrame.rankeval``: thin methods over the functions."""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from polars_rankeval._utils.stats import CIMethod, CorrectionName, TestName
    from polars_rankeval.analysis.compare_options import Family
    from polars_rankeval.analysis.curves import KsArg
    from polars_rankeval.api.evaluate import (
        Aggregation,
        EmptyPolicy,
        EngineArg,
        MetricsArg,
        NItemsArg,
        RankPositions,
        SummaryForm,
        TiePolicy,
        UsersArg,
    )

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


class _Method:
    """A namespace method that is ``target(frame, ...)`` with the target's real signature.

    The method is built on first access (the target's module is imported then, so
    ``import polars_rankeval`` stays cheap): its signature is the target's without the
    frame argument and without the ``fixed`` arguments, so ``help(df.rankeval.evaluate)``
    and ``inspect.signature`` show every parameter, and a misspelt keyword is a
    ``TypeError`` naming it.
    """

    def __init__(self, module: str, target: str, doc: str, **fixed: Any) -> None:
        self.module, self.target, self.doc, self.fixed = module, target, doc, fixed
        self.built: Callable[..., Any] | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def build(self) -> Callable[..., Any]:
        if self.built is None:
            function = getattr(importlib.import_module(self.module), self.target)
            fixed = self.fixed
            signature = inspect.signature(function)
            parameters = list(signature.parameters.values())
            kept = [p for p in parameters[1:] if p.name not in fixed]  # not the frame

            def method(self: _RankEval[Any], *args: Any, **kwargs: Any) -> Any:
                return function(self._frame, *args, **kwargs, **fixed)

            method.__name__ = method.__qualname__ = self.name
            method.__doc__ = f"{self.doc}\n\nSee :func:`polars_rankeval.{self.target}`."
            own = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            method.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=[own, *kept]
            )
            self.built = method
        return self.built

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        method = self.build()
        return method if obj is None else types.MethodType(method, obj)


class _RankEval(Generic[FrameT]):
    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    if TYPE_CHECKING:  # the targets' parameters (tests/test_public_params.py keeps them equal)

        def evaluate(
            self,
            metrics: MetricsArg,
            *,
            user: str = "user",
            item: str = "item",
            score: str | None = None,
            relevance: str = "relevance",
            rank: str | None = None,
            rank_positions: RankPositions = "relative",
            ties: TiePolicy = "expected",
            by: str | Sequence[str] | None = None,
            per_user: bool = False,
            per_item: bool = False,
            users: UsersArg = "truth",
            empty: EmptyPolicy = "skip",
            aggregate: Aggregation | Sequence[Aggregation] = "mean",
            summary: SummaryForm = "wide",
            ci: Literal["t", "bootstrap"] | None = None,
            confidence: float = 0.95,
            n_items: NItemsArg = None,
            items: pl.DataFrame | pl.LazyFrame | None = None,
            history: Any = None,
            rating_range: tuple[float, float] | None = None,
            validate: bool = True,
            engine: EngineArg = "auto",
            conventions: str | None = None,
        ) -> FrameT: ...
        def per_user(
            self,
            metrics: MetricsArg,
            *,
            user: str = "user",
            item: str = "item",
            score: str | None = None,
            relevance: str = "relevance",
            rank: str | None = None,
            rank_positions: RankPositions = "relative",
            ties: TiePolicy = "expected",
            by: str | Sequence[str] | None = None,
            per_item: bool = False,
            users: UsersArg = "truth",
            empty: EmptyPolicy = "skip",
            aggregate: Aggregation | Sequence[Aggregation] = "mean",
            summary: SummaryForm = "wide",
            ci: Literal["t", "bootstrap"] | None = None,
            confidence: float = 0.95,
            n_items: NItemsArg = None,
            items: pl.DataFrame | pl.LazyFrame | None = None,
            history: Any = None,
            rating_range: tuple[float, float] | None = None,
            validate: bool = True,
            engine: EngineArg = "auto",
            conventions: str | None = None,
        ) -> FrameT: ...
        def per_item(
            self,
            metrics: MetricsArg,
            *,
            user: str = "user",
            item: str = "item",
            score: str | None = None,
            relevance: str = "relevance",
            rank: str | None = None,
            rank_positions: RankPositions = "relative",
            ties: TiePolicy = "expected",
            by: str | Sequence[str] | None = None,
            per_user: bool = False,
            users: UsersArg = "truth",
            empty: EmptyPolicy = "skip",
            aggregate: Aggregation | Sequence[Aggregation] = "mean",
            summary: SummaryForm = "wide",
            ci: Literal["t", "bootstrap"] | None = None,
            confidence: float = 0.95,
            n_items: NItemsArg = None,
            items: pl.DataFrame | pl.LazyFrame | None = None,
            history: Any = None,
            rating_range: tuple[float, float] | None = None,
            validate: bool = True,
            engine: EngineArg = "auto",
            conventions: str | None = None,
        ) -> FrameT: ...
        def compare(
            self,
            metrics: MetricsArg,
            *,
            by: str = "system",
            baseline: Any = None,
            systems: Sequence[Any] | None = None,
            test: TestName = "randomization",
            correction: CorrectionName | None = None,
            family: Family = "all",
            alpha: float = 0.05,
            n_resamples: int = 10000,
            seed: int = 0,
            confidence: float = 0.95,
            ci: CIMethod = "auto",
            tie_tolerance: float = 1e-09,
            progress: bool | None = None,
            **evaluate_options: Any,
        ) -> pl.DataFrame: ...
        def curve(
            self,
            metrics: str | Sequence[str],
            ks: KsArg = None,
            *,
            by: str | Sequence[str] | None = None,
            aggregate: Aggregation = "mean",
            **options: Any,
        ) -> pl.DataFrame: ...
        def pr_curve(
            self,
            *,
            levels: int | Sequence[float] = 11,
            rel: float = 1.0,
            by: str | Sequence[str] | None = None,
            ties: TiePolicy = "item_desc",
            **options: Any,
        ) -> pl.DataFrame: ...

    else:
        evaluate = _Method(
            "polars_rankeval.api.evaluate",
            "evaluate",
            "Summary of ``metrics`` over users (``evaluate(frame, metrics, ...)``).",
        )
        per_user = _Method(
            "polars_rankeval.api.evaluate",
            "evaluate",
            "One row per user with one column per metric (``evaluate(per_user=True)``).",
            per_user=True,
        )
        per_item = _Method(
            "polars_rankeval.api.evaluate",
            "evaluate",
            "One row per item for item metrics (``evaluate(per_item=True)``).",
            per_item=True,
        )
        compare = _Method(
            "polars_rankeval.analysis.compare",
            "compare",
            "Paired tests between systems; always a DataFrame (the tests need the numbers).",
        )
        curve = _Method(
            "polars_rankeval.analysis.curves",
            "curve",
            "Metric@k as a long frame (a DataFrame).",
        )
        pr_curve = _Method(
            "polars_rankeval.analysis.curves",
            "pr_curve",
            "Interpolated precision-recall curve (a DataFrame).",
        )


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

"""The stand-alone metric expressions equal ``evaluate(per_user=True)`` on every metric.

Registry-driven: every registered per-user metric with a public ``pl.Expr`` function,
under every tie policy it supports, on a small frame with tied scores, unjudged rows and
not-recommended rows; eager and lazy; grouped by the user and by (system, user); and a
few metrics per user with ``.over("user")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.metrics.grammar import bind
from polars_rankeval.metrics.registry import registered

N_ITEMS = 40
TOL = 1e-12
K = 4
# Options a stand-alone expression takes without a default (Public(required=...)).
REQUIRED = {"max_grade": 3, "low": 0.0, "high": 3.0}


def _frame(seed: int = 7) -> pl.DataFrame:
    """Two systems x 12 users x 9 items; scores on a coarse grid, so ties abound."""
    rng = np.random.default_rng(seed)
    rows = []
    for system in ("a", "b"):
        for user in range(12):
            n = 9 if user % 4 else 3
            items = rng.choice(N_ITEMS, size=n, replace=False)
            for item in items:
                score = None if rng.random() < 0.15 else float(rng.integers(0, 4)) / 2
                rel = (
                    None if rng.random() < 0.15 else int(rng.integers(0, 4) * (rng.random() < 0.6))
                )
                rows.append((system, user, int(item), score, rel))
    return pl.DataFrame(
        rows,
        schema={
            "system": pl.String,
            "user": pl.Int64,
            "item": pl.Int64,
            "score": pl.Float64,
            "relevance": pl.Int32,
        },
        orient="row",
    )


def _public() -> list[Any]:
    return [s for s in registered().values() if s.public is not None and s.scope == "user"]


def _call(spec: Any, ties: str, cutoff: bool = True) -> tuple[str, pl.Expr]:
    """The metric's canonical name (for evaluate) and its expression (@K or no cutoff)."""
    options = {name: REQUIRED[name] for name in spec.public.required}
    k = K if spec.takes_k and cutoff else None
    name = bind(spec.name, k, **options).name
    kwargs: dict[str, Any] = {"ties": ties, **options}
    if "n_items" in spec.needs and "n_items" not in spec.public.required:
        kwargs["n_items"] = N_ITEMS
    fn = getattr(prk, spec.name)
    expr = fn(k, **kwargs) if spec.takes_k else fn(**kwargs)
    return name, expr


def _by_policy() -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for spec in _public():
        for ties in spec.tie_policies:
            out.setdefault(ties, []).append(spec)
    return out


def _evaluate(
    data: pl.DataFrame | pl.LazyFrame, names: list[str], ties: str, by: str | None
) -> pl.DataFrame:
    out = prk.evaluate(
        data, names, per_user=True, ties=ties, by=by, n_items=N_ITEMS, rating_range=(0.0, 3.0)
    )
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _compare(
    expected: pl.DataFrame, got: pl.DataFrame, keys: list[str], names: list[str], where: str
) -> None:
    joined = expected.join(got, on=keys, how="full", suffix="__expr", coalesce=True)
    assert joined.height == expected.height == got.height, where
    bad = []
    for name in names:
        a, b = joined[name], joined[name + "__expr"]
        same_null = (a.is_null() == b.is_null()).all()
        both = a.is_not_null() & b.is_not_null()
        diff = (a.filter(both) - b.filter(both)).abs()
        nan_ok = (a.filter(both).is_nan() == b.filter(both).is_nan()).all()
        if not same_null or not nan_ok or (diff.filter(~diff.is_nan()).max() or 0.0) > TOL:
            bad.append(name)
    assert not bad, f"{where}: expressions differ from evaluate on {bad}"


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize("keys", [["user"], ["system", "user"]], ids=["user", "system_user"])
@pytest.mark.parametrize("cutoff", [True, False], ids=["at_k", "no_cutoff"])
def test_expressions_match_evaluate(ties: str, lazy: bool, keys: list[str], cutoff: bool) -> None:
    # No cutoff: every row counts, the not-recommended rows (a null score, sorted last)
    # included, e.g. in auc's ranks.
    specs = _by_policy()[ties]
    calls = [_call(spec, ties, cutoff) for spec in specs]
    names = [name for name, _ in calls]
    df = _frame()
    if keys == ["user"]:
        df = df.filter(pl.col("system") == "a").drop("system")
    data: pl.DataFrame | pl.LazyFrame = df.lazy() if lazy else df
    expected = _evaluate(data, names, ties, "system" if len(keys) == 2 else None)
    grouped = data.group_by(keys).agg(expr for _, expr in calls)
    got = grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped
    _compare(expected.select(*keys, *names), got, keys, names, f"ties={ties}")


def test_every_public_metric_is_covered() -> None:
    covered = {spec.name for specs in _by_policy().values() for spec in specs}
    assert covered == {spec.name for spec in _public()}
    assert len(covered) > 40


@pytest.mark.parametrize("ties", ["expected", "item_desc"])
def test_over_user_matches_evaluate(ties: str) -> None:
    df = _frame().filter(pl.col("system") == "a").drop("system")
    calls = [_call(registered()[n], ties) for n in ("ndcg", "map", "mrr", "recall", "auc")]
    names = [name for name, _ in calls]
    rows = df.with_columns(expr.over("user") for _, expr in calls)
    got = rows.group_by("user").agg(pl.col(n).first() for n in names)
    for name in names:  # one value per user, broadcast to each of its rows
        assert rows.group_by("user").agg(pl.col(name).n_unique())[name].max() == 1
    _compare(_evaluate(df, names, ties, None).select("user", *names), got, ["user"], names, ties)

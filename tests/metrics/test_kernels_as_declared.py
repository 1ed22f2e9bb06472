"""Every kernel does what its declaration says: kind, columns read, statistics, history check.

``evaluate`` decides the plan from the declarations alone (``Metric.kind``,
``Metric.reads``, ``Metric.history_source``; no kernel runs in ``Job.create``). This is
the one place a kernel runs on a probe provider: for every registered metric, over the
values its declaration offers (each choice, both booleans, ``None`` for an optional
option, the defaults otherwise), with and without a cutoff, and in inputs with and
without the columns, ``history=`` and ``items=``, the kernel's own output and reads must
be the declared ones. A kernel refusing a combination (its own option errors) is
skipped: it raises the same error when the plan is built.

Tests the private units polars_rankeval.metrics.registry and .spec on purpose.
"""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval._utils.ties import supported
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption, Param
from polars_rankeval.metrics.registry import _REGISTRY, register
from polars_rankeval.metrics.spec import FramePlan, GlobalPlan, Metric, MetricSpec

NAMES = sorted(_REGISTRY)
COLS = make_columns(score="score")


def _values(param: Param) -> list[Any]:
    if param.choices:
        out: list[Any] = list(param.choices)
    elif param.kind == "bool":
        out = [False, True]
    else:
        out = [param.default]
    if param.optional and None not in out:
        out.append(None)
    if param.optional and param.column is not None and param.default is None:
        out.append(f"col_{param.name}")  # an optional column option, given
    return out


def _combinations(spec: MetricSpec) -> list[dict[str, Any]]:
    names = list(spec.params)
    grids = [_values(spec.params[n]) for n in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*grids)]


def _column_names(spec: MetricSpec) -> list[str]:
    names = [*spec.reads]
    for param in spec.params.values():
        if param.column is not None:
            names += [v for v in _values(param) if isinstance(v, str)]
    return names


def _environments(spec: MetricSpec) -> list[tuple[bool, bool, bool]]:
    """(columns in the data, history= given, items= given with the columns)."""
    if not _column_names(spec) and spec.history_items is None:
        return [(False, True, True)]
    return list(itertools.product([False, True], [False, True], [False, True]))


def _kind(out: object, spec: MetricSpec) -> str:
    if isinstance(out, GlobalPlan):
        return "item" if spec.scope == "item" else "global"
    return "frame" if isinstance(out, FramePlan) else "expr"


class _Recording(Features):
    """A provider recording the data-wide statistics a kernel reads (``needs``)."""

    read: list[str]

    @property
    def n_items(self) -> pl.Expr:
        self.__dict__.setdefault("read", []).append("n_items")
        return super().n_items

    @property
    def rating_range(self) -> tuple[float, float]:
        self.__dict__.setdefault("read", []).append("rating_range")
        return super().rating_range


def _check(spec: MetricSpec, metric: Metric, env: tuple[bool, bool, bool]) -> int:
    in_data, with_history, with_items = env
    names = _column_names(spec)
    data = ["user", "item", "score", "relevance", *(names if in_data else [])]
    items = (
        pl.LazyFrame(schema={"item": pl.Int64, **dict.fromkeys(names, pl.Boolean)})
        if with_items
        else None
    )
    history = pl.LazyFrame(schema={"user": pl.Int64, "item": pl.Int64}) if with_history else None
    probe = _Recording(
        COLS,
        supported(spec.ties_require)[0],
        ["user"],
        n_items=10,
        rating_range=(0.0, 1.0),
        order_dtype=pl.Float64,
        items=items,
        history=history,
        data_columns=data,
    )
    try:
        out = metric.plan(probe)
    except (ValueError, TypeError):
        return 0  # refused by the kernel: the same error when the plan is built
    side = set(names) if with_items else set()

    def present(name: str) -> bool:
        return name in data or name in side

    label = f"{metric.name} (columns in data {in_data}, history {with_history}, items {with_items})"
    assert _kind(out, spec) == metric.kind, label
    assert list(probe.extra) == list(metric.reads(present, with_history)), label
    source = metric.history_source(present, with_history)
    assert probe.history_checks == ([source] if source is not None else []), label
    assert set(probe.__dict__.get("read", [])) <= set(metric.needs), label
    return 1


@pytest.mark.parametrize("name", NAMES)
def test_kernel_does_what_its_declaration_says(name: str) -> None:
    spec = _REGISTRY[name]
    cutoffs = [3, None] if spec.takes_k else [None]
    ran = 0
    for options in _combinations(spec):
        for k in cutoffs:
            metric = Metric(spec, k, tuple(sorted(options.items())))
            for env in _environments(spec):
                ran += _check(spec, metric, env)
    assert ran > 0  # the declaration's own defaults build a plan somewhere


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ndcg(aggregate=sum)@3", "global"),
        ("auc(aggregate=pooled)", "global"),
        ("novelty(aggregate=pooled)@3", "global"),
        ("map(aggregate=gmean)", "global"),
        ("mae(average=global)", "global"),
        ("rmse", "expr"),
        ("ndcg(estimator=bv)@3", "frame"),
        ("kendall_tau", "frame"),
        ("coverage@3", "global"),
        ("item_hits@3", "item"),
    ],
)
def test_kind_of_options_and_aggregates(name: str, kind: str) -> None:
    metric = prk.parse_metric(name)
    assert metric.kind == kind
    spec = metric.spec
    assert _check(spec, metric, (True, True, True)) == 1


def test_the_cases_the_declarations_distinguish() -> None:
    def reads(name: str, columns: tuple[str, ...], history: bool) -> dict[str, str | None]:
        return prk.parse_metric(name).reads(lambda c: c in columns, history)

    # a fallback: the column if present, else history=, else the error with its hint
    assert reads("aplt@3", ("long_tail",), False) == {"long_tail": ""}
    assert reads("aplt@3", (), True) == {}
    assert reads("aplt@3", (), False)["long_tail"].startswith("pass history=")  # type: ignore[union-attr]
    # source=column never falls back: no hint
    assert reads("novelty(source=column)@3", (), True) == {"popularity": ""}
    assert reads("novelty(normalize=true)@3", (), False) == {}
    # an option value that reads no column, and one the kernel checks itself
    assert reads("ctr@3", (), False) == {}
    assert reads("ctr(estimation=dr,predicted=p)@3", (), False) == {"propensity": "", "p": ""}
    assert reads("rsp@3", (), False) == {"long_tail": None}
    novelty = prk.parse_metric("novelty@3")
    assert novelty.history_source(lambda c: False, True) == "history_users"
    assert novelty.history_source(lambda c: True, True) is None  # the column is read
    assert novelty.history_source(lambda c: False, False) is None
    zero = prk.parse_metric("novelty(unknown=zero,source=history_interactions)@3")
    assert zero.history_source(lambda c: False, True) is None


def test_fixed_name_reads_come_first_and_a_missing_one_is_named() -> None:
    @register(
        "t_declared_reads",
        family="test",
        summary="s",
        definition="s",
        normalized=False,
        reads=("w",),
    )
    def _kernel(f: Features, k: int | None) -> pl.Expr:
        return (f.column("w") * f.p_in(k)).sum()

    try:
        metric = prk.parse_metric("t_declared_reads@2")
        assert metric.reads(lambda c: False, False) == {"w": ""}
        data = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [1]})
        with pytest.raises(
            ValueError, match=r"column 'w' \(read by t_declared_reads@2\) not found"
        ):
            prk.evaluate(data, "t_declared_reads@2", score="score")
    finally:
        del _REGISTRY["t_declared_reads"]


def test_a_kernel_annotated_against_its_scope_is_refused() -> None:
    with pytest.raises(TypeError, match="'t_bad_form': its kernel must be annotated to return"):

        @register("t_bad_form", family="test", summary="s", definition="s", scope="global")
        def _kernel(f: Features, k: int | None) -> pl.Expr:
            return f.p_in(k).sum()

    assert "t_bad_form" not in _REGISTRY
    assert ColumnOption().table == "rows"

"""The metric-name grammar, the registry and list_metrics."""

from __future__ import annotations

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.metrics.grammar import bind, parse_metric
from polars_rankeval.metrics.registry import registered
from tests.frames import TWO_RANKED


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg@10", "ndcg@10"),
        (" ndcg @ 10 ", "ndcg@10"),
        ("ndcg(gain=exp)@10", "ndcg(gain=exp)@10"),
        ("ndcg(gain=linear)@10", "ndcg@10"),
        ("ndcg(base=2.0)@10", "ndcg@10"),
        ("ndcg(discount=log_clipped,gain=exp)@3", "ndcg(discount=log_clipped,gain=exp)@3"),
        ("ndcg(gain=exp, discount=log_clipped)@3", "ndcg(discount=log_clipped,gain=exp)@3"),
        ("ndcg(discount=half_life,half_life=5)", "ndcg(discount=half_life,half_life=5)"),
        ("precision(rel=2)@5", "precision(rel=2)@5"),
        ("precision(rel=2.0)@5", "precision(rel=2)@5"),
        ("precision(rel=1.5)@5", "precision(rel=1.5)@5"),
        ("map(denominator=min_k_relevant)@10", "map(denominator=min_k_relevant)@10"),
        ("P@5", "precision@5"),
        ("success@1", "hit_rate@1"),
        ("recip_rank", "mrr"),
        ("Rprec", "r_precision"),
        ("ndcg()", "ndcg"),
        ("auc", "auc"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    metric = parse_metric(text)
    assert metric.name == canonical
    assert str(metric) == canonical


@pytest.mark.parametrize("name", sorted(registered()))
def test_every_metric_round_trips_with_non_default_options(name: str) -> None:
    spec = registered()[name]
    options = {}
    for param in spec.params.values():
        if param.choices:
            options[param.name] = param.choices[-1]
        elif param.kind == "float" and param.name != "half_life":
            in_unit = param.interval is not None and param.interval.high == 1
            options[param.name] = 0.3 if in_unit or param.name in ("level", "p") else 3.0
    if options.get("discount") == "half_life":
        options["half_life"] = 4.0
    metric = bind(name, 7 if spec.takes_k else None, **options)
    again = parse_metric(metric.name)
    assert again == metric
    assert again.name == metric.name


def test_output_columns_are_canonical_names() -> None:
    df = TWO_RANKED
    out = prk.evaluate(df, ["ndcg(base=2)@1", "P(rel=1.0)@1"])
    counts = ["n_users(ndcg@1)", "n_users(precision@1)", "n_users", "n_skipped"]
    assert out.columns == ["ndcg@1", "precision@1", *counts]


def test_function_and_grammar_build_the_same_expression() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 1],
            "item": [1, 2, 3],
            "score": [1.0, 1.0, 0.2],
            "relevance": [2, 0, 1],
        }
    )
    by_function = df.group_by("user").agg(
        prk.ndcg(2, gain="exp"), prk.map(denominator="min_k_relevant")
    )
    by_name = prk.evaluate(
        df, ["ndcg(gain=exp)@2", "map(denominator=min_k_relevant)"], per_user=True
    )
    assert by_function.columns == by_name.columns
    for column in by_name.columns[1:]:
        assert by_function[column].item() == pytest.approx(by_name[column].item(), abs=1e-15)


@pytest.mark.parametrize(
    ("text", "exc", "match"),
    [
        ("ndgc@10", ValueError, r"unknown metric 'ndgc@10'; did you mean 'ndcg@10'\? \(see "),
        ("foo", ValueError, r"unknown metric 'foo'; see polars_rankeval\.list_metrics\(\)"),
        ("ndcg@0", ValueError, r"cutoff k of metric 'ndcg' must be a positive integer, got 0"),
        ("ndcg@-3", ValueError, r"must be a positive integer, got -3"),
        ("ndcg@1.5", ValueError, r"cutoff in 'ndcg@1.5' must be a positive integer, got '1.5'"),
        ("ndcg@", ValueError, r"must be a positive integer, got ''"),
        ("ndcg(foo=1)@10", ValueError, r"unknown parameter 'foo' for metric 'ndcg'; valid"),
        ("ndcg(gain=cubic)", ValueError, r"parameter 'gain' of metric 'ndcg' must be one of"),
        ("ndcg(gain)", ValueError, r"parameter 'gain' in 'ndcg\(gain\)' must look like key=value"),
        ("ndcg(gain=exp,gain=exp)", ValueError, r"parameter 'gain' given twice"),
        ("ndcg(base=x)", TypeError, r"parameter 'base' of metric 'ndcg' must be a number"),
        ("ndcg(base=1)", ValueError, r"'base' of metric 'ndcg' must be > 1, got 1.0"),
        ("ndcg(base=inf)", ValueError, r"must be a finite number"),
        ("ndcg(discount=half_life)", ValueError, r"needs half_life > 1, got None"),
        ("ndcg(discount=half_life,half_life=1)", ValueError, r"needs half_life > 1, got 1.0"),
        ("ndcg(half_life=3)", ValueError, r"only applies to discount='half_life'"),
        ("precision(rel=0)@5", ValueError, r"'rel' of metric 'precision' must be > 0"),
        ("r_precision@5", ValueError, r"metric 'r_precision' takes no cutoff @k"),
        ("num_rel@3", ValueError, r"metric 'num_rel' takes no cutoff"),
        ("ndcg@10@5", ValueError, r"cannot parse metric 'ndcg@10@5'"),
        ("ndcg((x))", ValueError, r"cannot parse metric"),
        ("", ValueError, r"cannot parse metric ''"),
        (
            10,
            TypeError,
            r"argument 'text' of parse_metric must be a metric name such as 'ndcg@10' "
            r"\(str\) or a Metric, got int 10",
        ),
    ],
)
def test_grammar_errors(text: object, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        parse_metric(text)  # type: ignore[arg-type]


def test_list_metrics_lists_every_registered_metric() -> None:
    table = prk.list_metrics()
    assert sorted(table["name"].to_list()) == sorted(registered())
    assert set(table.columns) >= {"name", "family", "options", "summary", "definition"}
    ndcg = table.filter(pl.col("name") == "ndcg").row(0, named=True)
    assert "gain=linear (linear|exp)" in ndcg["options"]
    assert "idcg=cut (cut|all|k)" in ndcg["options"]
    assert all(table["definition"].str.len_chars() > 20)

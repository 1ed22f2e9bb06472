"""Every metric is declared once; everything else is derived from that declaration.

As scikit-learn's ``test_public_functions.py`` does for its parameter constraints,
these tests walk the whole registry: the generated public functions are current and
match the declared options, every declared range and choice rejects values outside
it (for every metric), the tie-policy capabilities decide what each metric supports,
and bounds / directions are declared for every metric.

Tests the private unit polars_rankeval.metrics.registry on purpose (the declarations).
"""

from __future__ import annotations

import importlib.util
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

import polars as pl
import pytest

import polars_rankeval as prk
import polars_rankeval._utils.ties as _ties
import polars_rankeval.metrics.registry as registry
from polars_rankeval._utils.ties import POLICIES, Ties, resolve_ties
from polars_rankeval.metrics import functions
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import bind
from polars_rankeval.metrics.params import Interval, Param
from polars_rankeval.metrics.registry import register, registered
from tests.frames import ONE_ROW, TWO_RANKED

ROOT = Path(__file__).resolve().parents[2]
SPECS = registered()
PUBLIC = {name: spec for name, spec in SPECS.items() if spec.public is not None}
COLUMN_KEYWORDS = ("ties", "item", "score", "relevance", "rank")


def generator() -> ModuleType:
    path = ROOT / "scripts" / "gen_metric_functions.py"
    spec = importlib.util.spec_from_file_location("gen_metric_functions", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_code_is_current() -> None:
    stale = generator().outdated()
    assert not stale, f"out of date: {stale}; run: python scripts/gen_metric_functions.py --write"


def test_every_declared_public_function_is_exported() -> None:
    assert sorted(functions.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(prk, name) is getattr(functions, name)
        assert getattr(prk.metrics, name) is getattr(functions, name)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_signature_matches_the_declaration(name: str) -> None:
    spec = PUBLIC[name]
    public = spec.public
    assert public is not None
    parameters = inspect.signature(getattr(prk, name)).parameters
    hints = typing.get_type_hints(getattr(prk, name))
    options = [key for key in spec.params if key not in public.omit]
    expected = (["k"] if spec.takes_k else []) + (["n_items"] if "n_items" in spec.needs else [])
    expected += options + ["ties", "item", "score", "relevance"] + (["rank"] if public.rank else [])
    assert list(parameters) == expected
    for key in options:
        param = spec.params[key]
        assert parameters[key].kind is inspect.Parameter.KEYWORD_ONLY
        if key in public.required:
            assert parameters[key].default is inspect.Parameter.empty
        else:
            assert parameters[key].default == param.default
        if param.choices:
            assert get_args(hints[key]) == param.choices
    assert parameters["ties"].default in spec.tie_policies
    doc = getattr(prk, name).__doc__
    for section in ("Parameters", "Returns", "Notes", "Examples"):
        assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, section
    for key in [p for p in expected if p not in COLUMN_KEYWORDS] + ["ties"]:
        assert f"\n    {key}\n" in doc, key


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_option_is_described(name: str) -> None:
    for param in SPECS[name].params.values():
        assert param.doc, f"option {param.name!r} of {name!r} has no description"
        assert "\n" not in param.doc


def invalid_values(param: Param) -> list[tuple[Any, type[Exception], str]]:
    """Values the declaration rejects: (value, error type, message pattern)."""
    where = f"parameter '{param.name}' of metric"
    out: list[tuple[Any, type[Exception], str]] = []
    if param.choices:
        out.append(("not_a_choice", ValueError, f"{where} .* must be one of"))
    elif param.kind in ("int", "float"):
        out.append(("x", TypeError, f"{where} .* must be a"))
        out.append((True, TypeError if param.kind == "int" else ValueError, where))
        if param.interval is not None:
            text = param.interval.text.replace("(", r"\(").replace(")", r"\)")
            text = text.replace("[", r"\[").replace("]", r"\]")
            outside = param.interval.outside()
            values = [int(v) for v in outside] if param.kind == "int" else outside
            out += [(v, ValueError, f"{where} .* must be {text}") for v in values]
    elif param.kind == "bool":
        out.append(("maybe", TypeError, f"{where} .* must be true or false"))
    if not param.optional:
        out.append((None, ValueError, f"{where} .* cannot be None"))
    return out


CASES = [
    pytest.param(name, key, value, error, match, id=f"{name}-{key}-{value!r}")
    for name, spec in SPECS.items()
    for key, param in spec.params.items()
    for value, error, match in invalid_values(param)
]


@pytest.mark.parametrize(("name", "key", "value", "error", "match"), CASES)
def test_declared_constraints_reject_invalid_values(
    name: str, key: str, value: Any, error: type[Exception], match: str
) -> None:
    k = 5 if SPECS[name].takes_k else None
    with pytest.raises(error, match=match):
        bind(name, k, **{key: value})
    if value is True:
        return  # the grammar reads "true" as text, not as a bool
    text = "none" if value is None else str(value)
    with pytest.raises(error, match=match):  # the grammar goes through the same checks
        prk.parse_metric(f"{name}({key}={text})" + (f"@{k}" if k else ""))


def test_the_constraints_cover_the_ranges_once_checked_by_option_name() -> None:
    # The ranges the registry used to check by option name, now declared per option.
    texts = {
        (n, k): p.interval.text for n, s in SPECS.items() for k, p in s.params.items() if p.interval
    }
    assert texts[("ndcg", "base")] == "> 1"
    assert texts[("precision", "rel")] == "> 0"
    assert texts[("iprec_at_recall", "level")] == "in [0, 1]"
    assert texts[("rbp", "p")] == "in (0, 1)"
    assert texts[("fbeta", "beta")] == "> 0"
    assert texts[("r_precision", "mult")] == "> 0"
    # An option named p elsewhere would not inherit rbp's range: ranges follow the
    # declaration, not the name.
    assert {k for (n, k) in texts if k == "p"} == {"p"}
    assert {n for (n, k) in texts if k == "p"} == {"rbp", "rbp_resid", "rbo"}  # each declares it


@pytest.mark.parametrize(
    ("interval", "inside", "outside", "text"),
    [
        (Interval(0, None, closed="neither"), [1e-9, 5.0], [0.0, -1.0], "> 0"),
        (Interval(0, 1), [0.0, 1.0], [-1.0, 2.0], "in [0, 1]"),
        (Interval(0, 1, closed="neither"), [0.5], [0.0, 1.0, -1.0, 2.0], "in (0, 1)"),
        (Interval(None, 3, closed="right"), [3.0, -1e9], [4.0], "<= 3"),
        (Interval(0.5, 2, closed="left"), [0.5], [2.0, -0.5], "in [0.5, 2)"),
    ],
)
def test_interval(interval: Interval, inside: list[float], outside: list[float], text: str) -> None:
    assert interval.text == text
    assert all(v in interval for v in inside)
    assert not any(v in interval for v in outside)
    assert not any(v in interval for v in interval.outside())


def test_bounds_and_direction_are_declared_for_every_metric() -> None:
    for name, spec in SPECS.items():
        low, high = spec.bounds
        assert low is None or high is None or low < high, name
        if spec.normalized:
            assert spec.bounds == (0.0, 1.0), name
            assert spec.higher_is_better, name
    signed = {n for n, s in SPECS.items() if s.bounds[0] is None or s.bounds[0] < 0}
    assert signed == {
        "utility",
        "markedness",
        "informedness",
        "mcc",
        "boolean_kendall_tau",
        "spearman",
        "kendall_tau",
    }
    lower_is_better = {n for n, s in SPECS.items() if s.higher_is_better is False}
    assert {"mae", "mse", "rmse", "nmae", "fallout", "miss_rate"} <= lower_is_better


def perfect_and_reversed() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two relevant and two irrelevant recommended items per user, best first or last."""
    rows = []
    for user in range(3):
        for i, rel in enumerate((2, 1, 0, 0)):
            rows.append((user, i, 4.0 - i, rel))
        rows.append((user, 9, None, 1))  # a relevant item not recommended
    df = pl.DataFrame(rows, schema=["user", "item", "score", "relevance"], orient="row")
    return df, df.with_columns(score=-pl.col("score"))


# Metrics whose value does not depend on the order of the recommended items.
ORDERLESS = {"num_ret", "num_rel", "unjudged"}


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, s in SPECS.items()
        if s.scope == "user"
        and s.higher_is_better is not None
        and s.family != "rating"
        and n not in ("popularity_bias", "novelty", "unseen_share", "intra_list_diversity")
        and s.family != "intent"  # a subtopics column: tests/metrics/test_intent.py
        # beyond-accuracy metrics read side inputs (history=, items=): direction tested
        # in their own test files
        and s.family not in ("serendipity", "calibration", "popularity_bias", "categorical")
    ),
)
def test_higher_is_better_is_the_direction_of_a_better_ranking(name: str) -> None:
    spec = SPECS[name]
    metric = f"{name}@2" if spec.takes_k else name
    good, bad = perfect_and_reversed()
    ties = spec.tie_policies[0]
    options: dict[str, Any] = {"ties": ties}
    if "n_items" in spec.needs:
        options["n_items"] = 20
    a = prk.evaluate(good, [metric], **options)[metric].item()  # type: ignore[arg-type]
    b = prk.evaluate(bad, [metric], **options)[metric].item()  # type: ignore[arg-type]
    if name in ORDERLESS:
        assert a == pytest.approx(b)
    elif spec.higher_is_better:
        assert a >= b - 1e-12, (a, b)
    else:
        assert a <= b + 1e-12, (a, b)


# --------------------------------------------------------------------------- tie policies
def test_tie_policy_names_agree_with_the_type_alias() -> None:
    assert get_args(prk.TiePolicy) == tuple(POLICIES) == prk.TIE_POLICIES


def test_tie_policies_are_objects_with_capabilities() -> None:
    expected = POLICIES["expected"]
    assert not expected.deterministic
    assert expected.pair_weight == 0.5
    assert POLICIES["item_desc"].breaks == ("item_desc",)
    assert POLICIES["optimistic"].order == (
        "score descending, then relevance descending, then judged rows before unjudged "
        "ones, then item id ascending"
    )
    assert resolve_ties("item_asc") is POLICIES["item_asc"]
    assert resolve_ties(POLICIES["item_asc"]) is POLICIES["item_asc"]
    with pytest.raises(ValueError, match=r"ties must be one of .*, got 'random'"):
        resolve_ties("random")


def test_supported_policies_follow_the_declared_capabilities() -> None:
    assert SPECS["ndcg"].tie_policies == tuple(POLICIES)
    assert SPECS["inf_ap"].tie_policies == ("item_desc", "item_asc", "optimistic", "pessimistic")
    assert SPECS["global_auc"].tie_policies == ("expected", "optimistic", "pessimistic")
    for name, spec in SPECS.items():
        for policy in POLICIES.values():
            ok = all(policy.has(c) for c in spec.ties_require)
            assert (policy.name in spec.tie_policies) == ok, (name, policy.name)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: prk.inf_ap(ties="expected"), "metric 'inf_ap' does not support ties='expected'"),
        (
            lambda: prk.evaluate(
                ONE_ROW,
                ["g"],
                ties="expected",
            ),
            "metric 'g' does not support ties='expected'; supported: item_desc, item_asc",
        ),
        (lambda: prk.ndcg(ties="nope"), "ties must be one of"),  # type: ignore[arg-type]
    ],
)
def test_one_error_for_an_unsupported_policy(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.fixture
def relevance_first(monkeypatch: pytest.MonkeyPatch) -> Iterator[Ties]:
    """A new deterministic policy: relevance descending, then item id descending."""
    policy = Ties(
        "relevance_item_desc",
        "most relevant first, then the larger item id",
        deterministic=True,
        breaks=("relevance_desc", "item_desc"),
        unjudged="by item id",
    )
    monkeypatch.setitem(_ties.POLICIES, policy.name, policy)
    return policy


def test_a_new_policy_is_one_object(relevance_first: Ties) -> None:
    # Four items tied at one score: relevance 0, 1, null (unjudged), 1 for items 1..4.
    # The new policy ranks 4, 2 (relevance 1, item id descending), then 3 (relevance
    # null, read as 0) before 1 (relevance 0): item id descending again.
    df = pl.DataFrame(
        {"user": [1] * 4, "item": [1, 2, 3, 4], "score": [1.0] * 4, "relevance": [0, 1, None, 1]}
    )
    assert "relevance_item_desc" in SPECS["inf_ap"].tie_policies
    metrics = ["P@1", "mrr", "ndcg@2", "unjudged@3"]
    out = prk.evaluate(df, metrics, ties=relevance_first.name)  # type: ignore[arg-type]
    # The unjudged item 3 is at rank 3 (1 of the top 3); optimistic puts judged rows
    # first (item 1 at rank 3: 0 unjudged).
    assert out.select("precision@1", "mrr", "ndcg@2", "unjudged@3").row(0) == (1.0, 1.0, 1.0, 1 / 3)
    optimistic = prk.evaluate(df, ["unjudged@3"], ties="optimistic")
    assert optimistic["unjudged@3"].item() == 0.0
    # The expression functions take the object too.
    assert df.select(prk.unjudged(3, ties=relevance_first)).item() == 1 / 3  # type: ignore[arg-type]


# --------------------------------------------------------------------------- needs
@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))


@pytest.mark.usefixtures("scratch_registry")
def test_needs_are_declared_and_an_undeclared_read_asks_for_the_statistic() -> None:
    @register("t_catalog_share", family="test", summary="s", definition="s", needs=("n_items",))
    def _share(f: Features, k: int | None) -> pl.Expr:
        return pl.len() / f.n_items

    @register("t_undeclared_share", family="test", summary="s", definition="s")
    def _undeclared(f: Features, k: int | None) -> pl.Expr:
        return pl.len() / f.n_items  # reads n_items without declaring it

    assert registry.get_spec("t_catalog_share").needs == ("n_items",)
    assert registry.get_spec("t_undeclared_share").needs == ()  # no probe at registration
    df = TWO_RANKED
    out = prk.evaluate(df, ["t_catalog_share"], n_items=8)
    assert out["t_catalog_share"].item() == 2 / 8
    # Without n_items=, evaluate counts the catalog itself (the distinct items: 2).
    assert prk.evaluate(df, ["t_catalog_share"])["t_catalog_share"].item() == 2 / 2
    # Undeclared: evaluate computes no catalog size, and the kernel's read says what to pass.
    with pytest.raises(ValueError, match="pass n_items="):
        prk.evaluate(df, ["t_undeclared_share"])
    assert prk.evaluate(df, ["t_undeclared_share"], n_items=8)["t_undeclared_share"].item() == 2 / 8


@pytest.mark.usefixtures("scratch_registry")
def test_a_capability_no_policy_offers_is_refused_at_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_ties, "POLICIES", {"expected": POLICIES["expected"]})
    with pytest.raises(ValueError, match=r"requires .*deterministic.*which no tie policy offers"):

        @register(
            "t_nothing", family="test", summary="s", definition="s", ties_require=("deterministic",)
        )
        def _nothing(f: Features, k: int | None) -> pl.Expr:
            return pl.len()

"""Every public function declares a constraint for each of its parameters, and keeps it.

The public functions are found, not listed: the callables of ``prk.__all__`` (not the
generated metric functions, which validate through the registry, nor the classes) and
the public functions of ``prk.trec``, ``prk.plot``, ``prk.datasets`` and ``prk.spark``.
For each, the constraints declared by ``@validate_params`` must cover the signature
(``**options`` forwarded to another declared function excepted), each default must
satisfy its constraint, and every invalid value a constraint generates must raise a
``ValueError`` or ``TypeError`` whose message names the parameter and the function.
A parameter added without a constraint fails here.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval._utils.constraints import Unchecked, check, declared

MODULES = ("trec", "plot", "datasets", "spark")
DF = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [1]})
# A stand-in a Frame("pyspark") constraint accepts (told apart by its module): the
# calls below refuse another argument before any data is read.
SPARK_FRAME = type("DataFrame", (), {"__module__": "pyspark.sql.dataframe"})()
PLACEHOLDERS: list[Any] = [DF, "ndcg@1", 1, 10, 0.5, True, ["user"], SPARK_FRAME, None]


def public_functions() -> dict[str, Callable[..., Any]]:
    """Name -> function, for every public function of the package."""
    found: dict[str, Callable[..., Any]] = {}
    for name in prk.__all__:
        value = getattr(prk, name)
        if isinstance(value, types.ModuleType):
            continue
        if inspect.isfunction(value) and value.__module__ != "polars_rankeval.metrics.functions":
            found[name] = value
    for module_name in MODULES:
        module = getattr(prk, module_name)
        names = getattr(module, "__all__", None) or [
            n for n in vars(module) if not n.startswith("_")
        ]
        for name in names:
            value = getattr(module, name)
            if inspect.isfunction(value) and value.__module__.startswith(module.__name__):
                found[f"{module_name}.{name}"] = value
    return found


FUNCTIONS = public_functions()
DECLARED = sorted(FUNCTIONS)


def test_the_enumeration_finds_the_public_functions() -> None:
    for name in ("evaluate", "join", "compare", "report", "trec.read_run", "plot.curves"):
        assert name in FUNCTIONS
    assert "ndcg" not in FUNCTIONS  # a metric function validates through the registry


@pytest.mark.parametrize("name", DECLARED)
def test_constraints_cover_the_signature(name: str) -> None:
    table = declared(FUNCTIONS[name])
    assert table is not None, f"{name} declares no constraints (@validate_params)"
    parameters = {
        p.name: p
        for p in inspect.signature(FUNCTIONS[name]).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD  # forwarded, checked by the callee
    }
    assert set(table) == set(parameters), f"{name}: undeclared {set(parameters) - set(table)}"
    for parameter in parameters.values():
        if parameter.default is not inspect.Parameter.empty:
            check(name, parameter.name, parameter.default, table[parameter.name])


def _invalid_cases() -> list[Any]:
    cases = []
    for name in DECLARED:
        table = declared(FUNCTIONS[name]) or {}
        for parameter, alternatives in table.items():
            if any(isinstance(a, Unchecked) for a in alternatives):
                continue
            values = [v for a in alternatives if a is not None for v in a.invalid()]
            refused = [v for v in values if _refused(name, parameter, v, alternatives)]
            assert refused, f"{name}: no invalid value generated for {parameter!r}"
            cases += [
                pytest.param(name, parameter, v, id=f"{name}-{parameter}-{i}")
                for i, v in enumerate(refused)
            ]
    return cases


def _refused(name: str, parameter: str, value: Any, alternatives: Any) -> bool:
    try:
        check(name, parameter, value, alternatives)
    except (TypeError, ValueError):
        return True
    return False


@pytest.mark.parametrize(("name", "parameter", "value"), _invalid_cases())
def test_an_invalid_value_is_refused_at_the_call(name: str, parameter: str, value: Any) -> None:
    """The call itself refuses it, before any data is read, naming both."""
    function = FUNCTIONS[name]
    signature = inspect.signature(function)
    # The other required arguments get a value their constraints accept.
    table = declared(function) or {}
    arguments: dict[str, Any] = {}
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if p.default is inspect.Parameter.empty:
            arguments[p.name] = next(
                v for v in PLACEHOLDERS if not _refused(name, p.name, v, table[p.name])
            )
    arguments[parameter] = value
    positional = [
        arguments.pop(p.name)
        for p in signature.parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_ONLY
    ]
    with pytest.raises((TypeError, ValueError)) as error:
        function(*positional, **arguments)
    short = name.rsplit(".", 1)[-1]
    assert f"argument {parameter!r} of {short}" in str(error.value)


def test_the_namespace_methods_show_the_functions_parameters() -> None:
    """``help(df.rankeval.evaluate)`` lists evaluate's parameters, without the frame."""
    frame = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [1]})
    evaluate = inspect.signature(prk.evaluate).parameters
    method = inspect.signature(frame.rankeval.evaluate).parameters
    assert list(method) == list(evaluate)[1:]
    assert "per_user" not in inspect.signature(frame.lazy().rankeval.per_user).parameters
    assert "ks" in inspect.signature(frame.rankeval.curve).parameters
    assert "levels" in inspect.signature(frame.rankeval.pr_curve).parameters
    with pytest.raises(TypeError, match="unexpected keyword argument 'tie'"):
        frame.rankeval.evaluate("mrr", tie="expected")

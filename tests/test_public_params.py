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

import ast
import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval import namespace
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


def _stubs() -> dict[str, ast.FunctionDef]:
    """The static signatures of the namespace methods (its ``if TYPE_CHECKING:`` block)."""
    tree = ast.parse(inspect.getsource(namespace))
    rank_eval = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "_RankEval")
    block = next(n for n in rank_eval.body if isinstance(n, ast.If))
    return {n.name: n for n in block.body if isinstance(n, ast.FunctionDef)}


def _stub_parameters(stub: ast.FunctionDef) -> list[tuple[str, str, str, Any]]:
    """(name, kind, annotation, default) of each parameter after ``self``."""
    args = stub.args

    def annotation(node: ast.expr | None) -> str:
        return ast.dump(node) if node is not None else ""

    positional = args.args[1:]
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults))
    defaults += [ast.literal_eval(d) for d in args.defaults]
    out = [
        (a.arg, "POSITIONAL_OR_KEYWORD", annotation(a.annotation), d)
        for a, d in zip(positional, defaults, strict=True)
    ]
    out += [
        (
            a.arg,
            "KEYWORD_ONLY",
            annotation(a.annotation),
            inspect.Parameter.empty if d is None else ast.literal_eval(d),
        )
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg is not None:
        out.append(
            (
                args.kwarg.arg,
                "VAR_KEYWORD",
                annotation(args.kwarg.annotation),
                inspect.Parameter.empty,
            )
        )
    return out


def _target_parameters(method: Any) -> list[tuple[str, str, str, Any]]:
    """The same for the target of a namespace method, without the frame and fixed ones."""
    function = getattr(importlib.import_module(method.module), method.target)
    return [
        (
            p.name,
            p.kind.name,
            ast.dump(ast.parse(str(p.annotation), mode="eval").body),
            p.default,
        )
        for p in list(inspect.signature(function).parameters.values())[1:]
        if p.name not in method.fixed
    ]


STUBS = _stubs()


def test_every_namespace_method_has_a_static_signature() -> None:
    methods = {n for n, v in vars(namespace._RankEval).items() if isinstance(v, namespace._Method)}
    assert set(STUBS) == methods


@pytest.mark.parametrize("name", sorted(STUBS))
def test_the_namespace_stubs_declare_the_targets_parameters(name: str) -> None:
    """Names, kinds, annotations and defaults as the target's: mypy sees what runs."""
    method = vars(namespace._RankEval)[name]
    assert _stub_parameters(STUBS[name]) == _target_parameters(method)


def test_a_generator_argument_is_read_once_and_passed_on() -> None:
    """A generator given where a list is declared is checked and still reaches the body."""
    df = pl.DataFrame(
        {"user": [1, 1, 2], "item": [1, 2, 1], "score": [0.9, 0.1, 0.5], "relevance": [1, 0, 1]}
    )
    expected = prk.evaluate(df, ["ndcg@2", "recall@1"])
    got = prk.evaluate(df, (name for name in ["ndcg@2", "recall@1"]))
    assert got.equals(expected)
    with pytest.raises(TypeError, match=r"argument 'metrics' of evaluate .*got an entry int 5"):
        prk.evaluate(df, (m for m in ["ndcg@2", 5]))  # type: ignore[misc]

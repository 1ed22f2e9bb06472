"""The package's import graph: ``metrics`` is a bottom layer, and no import cycles.

The graph is read from the source with ``ast`` (nothing is imported). An edge is an
``import x`` or ``from x import y`` (and ``x.y`` when that is a module of the
package); importing ``a.b`` is not counted as importing the package ``a``.

Two kinds of import are left out of the cycle check, on purpose:

* under ``if TYPE_CHECKING:``: never run;
* inside a function: the package's lazy loading. ``import polars_rankeval`` must stay
  cheap (the ``trec-eval`` command line is started once per evaluation), so the
  package, the dataframe namespace and the command line import their heavy parts on
  first use, and the registry imports the metric families on its first lookup. Such
  an import runs after every module involved has finished initialising, so it cannot
  see a half-initialised module, which is what a cycle at module level risks.

The ``metrics`` package is checked more strictly: its modules may not import the upper
layers even inside a function (the one exception, documented in
``polars_rankeval/metrics/__init__.py``, is the module ``__getattr__`` that keeps the
former path of ``inter_list_diversity_sampled`` working).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "polars_rankeval"
UPPER = (
    "evaluate",
    "_evaluate",
    "engine",
    "_run",
    "_job",
    "_build",
    "_finish",
    "_spark_engine",
    "_spark_ops",
    "compare",
    "cli",
    "plot",
    "spark",
    "_plan",
    "_outofcore",
    "report",
)
# What metrics/ may import at module level, besides itself: the registry and what the
# registry stands on.
BELOW_METRICS = {
    "polars_rankeval.registry",
    "polars_rankeval._features",
    "polars_rankeval._ties",
    "polars_rankeval._types",
}
# Function-level imports allowed in metrics/ (module, target): see the module docstring.
METRICS_LAZY_EXCEPTIONS = {("polars_rankeval.metrics", "polars_rankeval.sampled")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _targets(node: ast.Import | ast.ImportFrom, current: str) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: resolve against the current package
            package = current.split(".")
            if MODULES[current].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return [name for name in names if name in MODULES and name != current]


def imports(module: str) -> tuple[list[str], list[str]]:
    """(module-level imports, imports inside functions) of a package module."""
    top: list[str] = []
    lazy: list[str] = []

    def walk(nodes: list[ast.stmt], inside: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                (lazy if inside else top).extend(_targets(node, module))
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse, inside)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                walk(node.body, True)
            else:
                for field in ("body", "orelse", "finalbody"):
                    walk(getattr(node, field, []), inside)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body, inside)

    walk(ast.parse(MODULES[module].read_text("utf-8")).body, False)
    return top, lazy


GRAPH = {module: imports(module) for module in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    # A sanity check of the parser: known edges are found, TYPE_CHECKING ones are not.
    top, _ = GRAPH["polars_rankeval.metrics.binary"]
    assert "polars_rankeval.registry" in top
    assert "polars_rankeval.metrics._common" in top
    assert "polars_rankeval.metrics" in GRAPH["polars_rankeval.registry"][1]  # lazy
    assert "polars_rankeval.evaluate" not in GRAPH["polars_rankeval"][0]  # TYPE_CHECKING
    assert "polars_rankeval.namespace" in GRAPH["polars_rankeval"][0]


def test_no_import_cycles_at_module_level() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, (top, _) in GRAPH.items():
        edges[module].update(top)
    assert cycles(edges) == []


def test_a_cycle_would_be_found() -> None:
    edges: dict[str, set[str]] = defaultdict(set, {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})
    assert cycles(edges) == [["a", "b", "c"]]


def test_metrics_is_a_bottom_layer() -> None:
    for module, (top, lazy) in GRAPH.items():
        if not module.startswith("polars_rankeval.metrics"):
            continue
        outside = {t for t in top if not t.startswith("polars_rankeval.metrics")}
        assert outside <= BELOW_METRICS, (module, outside - BELOW_METRICS)
        for target in top + lazy:
            name = target.removeprefix("polars_rankeval.")
            assert name not in UPPER, (module, target)
        for target in lazy:
            if not target.startswith("polars_rankeval.metrics"):
                assert (module, target) in METRICS_LAZY_EXCEPTIONS, (module, target)


def test_the_layers_below_metrics_do_not_import_it() -> None:
    for module in BELOW_METRICS:
        top, _ = GRAPH[module]
        assert not [t for t in top if t.startswith("polars_rankeval.metrics")], module

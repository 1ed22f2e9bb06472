"""The package's import graph: each folder is a layer, importing only the layers below.

The graph is read from the source with ``ast`` (nothing is imported). An edge is an
``import x`` or ``from x import y`` (and ``x.y`` when that is a module of the package),
at module level or inside a function; imports under ``if TYPE_CHECKING:`` never run and
are left out. Inside a function, an import runs after every module involved has finished
initialising (the package's lazy loading, which keeps ``import polars_rankeval`` cheap),
so only module-level imports must be free of cycles; but an import of a higher layer,
even inside a function, breaks the layering and fails here (:data:`KNOWN_UPWARD` is
empty and is to stay so). The one exception is the package face, which loads its own
submodules lazily.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "polars_rankeval"
# Bottom to top; the package face (polars_rankeval/__init__.py, __main__.py,
# namespace.py) is above them all.
ORDER = [
    "_utils",
    "metrics",
    "plan",
    "io",
    "trec_eval",
    "conventions",
    "engines",
    "api",
    "analysis",
    "fusion",
    "plot",
    "cli",
]
# (importing package, imported package): imports of a higher layer, to be removed.
KNOWN_UPWARD: set[tuple[str, str]] = set()


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


def layer(module: str) -> str:
    """The package (folder) of a module; "" for the package face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ORDER) else ""


def rank(package: str) -> int:
    return ORDER.index(package) if package else len(ORDER)


def upward_edges() -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, (top, lazy) in GRAPH.items():
        for target in top + lazy:
            a, b = layer(module), layer(target)
            if a != b and rank(b) > rank(a):
                found[a, b].append(f"{module} -> {target}")
    return found


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
    assert "polars_rankeval.metrics.registry" in top
    assert "polars_rankeval.metrics._common" in top
    assert "polars_rankeval.metrics" in GRAPH["polars_rankeval.metrics.registry"][1]  # lazy
    assert "polars_rankeval.api.evaluate" not in GRAPH["polars_rankeval"][0]  # TYPE_CHECKING
    assert "polars_rankeval.namespace" in GRAPH["polars_rankeval"][0]


def test_every_folder_is_a_layer() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert folders == set(ORDER)


def test_no_import_cycles_at_module_level() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, (top, _) in GRAPH.items():
        edges[module].update(top)
    assert cycles(edges) == []


def test_a_cycle_would_be_found() -> None:
    edges: dict[str, set[str]] = defaultdict(set, {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})
    assert cycles(edges) == [["a", "b", "c"]]


def test_a_package_imports_only_the_packages_below_it() -> None:
    found = upward_edges()
    new = {edge: found[edge] for edge in set(found) - KNOWN_UPWARD}
    assert not new, new
    assert not KNOWN_UPWARD - set(found), "fixed: remove from KNOWN_UPWARD"


def test_metrics_import_only_utils() -> None:
    for module, (top, lazy) in GRAPH.items():
        if layer(module) == "metrics":
            outside = {layer(t) for t in top + lazy} - {"metrics", "_utils"}
            assert not outside, (module, outside)

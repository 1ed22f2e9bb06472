"""A metric is declared once: outside metrics/, conventions/ and trec_eval/ no code names one.

The plan, the engines and the layers above read what a metric can do from its
declaration (:class:`polars_rankeval.metrics.spec.MetricSpec`), never from a table of
names; and every capability set is derived from the declarations.
"""

from __future__ import annotations

import ast
from pathlib import Path

import polars_rankeval as prk
from polars_rankeval.metrics.cutoff_kernels import curve_metrics
from polars_rankeval.metrics.registry import registered
from polars_rankeval.metrics.sampled_estimators import check_target
from polars_rankeval.plan.positions import absolute_metrics, repeat_safe_metrics

PACKAGE = Path(prk.__file__).parent
ALLOWED_FOLDERS = ("metrics", "conventions", "trec_eval")
"""Where metric names may be written: the declarations, the other libraries' names,
and trec_eval's own measure names."""
COLUMNS = {"precision", "recall", "gini", "unjudged", "rbo", "rmse"}
"""Output column names that coincide with a metric's name (``pr_curve``'s
``recall``/``precision`` columns, the Lorenz chart's ``gini`` column, judgement_gaps'
``unjudged`` share, reproducibility's ``rbo`` and ``rmse``, computed as repro_eval
defines them): allowed in the modules of :data:`COLUMN_MODULES` only."""
COLUMN_MODULES = (
    "plot/",
    "analysis/curves.py",
    "analysis/judgements.py",
    "analysis/reproducibility.py",
    "analysis/reproducibility_effectiveness.py",
    "analysis/reproducibility_ordering.py",
)
"""The modules building or drawing those frames."""


def _names() -> set[str]:
    out: set[str] = set()
    for name, spec in registered().items():
        out.add(name)
        out.update(spec.aliases)
    return out


def _exempt(tree: ast.Module) -> set[int]:
    """The constants that are not code: docstrings, format specs, ``__all__``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for stmt in body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    out.add(id(stmt.value))  # docstrings (of the module, a class, a constant)
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            out.update(id(n) for n in ast.walk(node.format_spec))  # f"{x:g}"
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            public = ("__all__", "_SHADOWING", "_METRIC_FUNCTIONS")
            if any(isinstance(t, ast.Name) and t.id in public for t in targets):
                # Public function names (``prk.ndcg``), not metric names.
                out.update(id(n) for n in ast.walk(node))
    return out


def offenders() -> list[str]:
    """``path:line: 'name'`` for each metric name written as code outside the folders."""
    names = _names()
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] in ALLOWED_FOLDERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exempt = _exempt(tree)
        columns = str(path.relative_to(PACKAGE)).startswith(COLUMN_MODULES)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if node.value not in names or id(node) in exempt:
                continue
            if node.value in COLUMNS and columns:
                continue
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    return found


def test_no_metric_name_outside_the_declarations() -> None:
    assert offenders() == []


def test_the_check_finds_a_name() -> None:
    tree = ast.parse('"""ndcg in a docstring."""\nx = "ndcg"\ny = f"{x:g}"\n')
    names = _names()
    exempt = _exempt(tree)
    hits = [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and n.value in names and id(n) not in exempt
    ]
    assert hits == ["ndcg"]


def test_the_head_capable_set_is_the_declared_head_forms() -> None:
    specs = registered()
    head = {name for name, spec in specs.items() if spec.head is not None}
    assert head == {"precision", "recall", "f1", "hit_rate", "mrr", "map", "dcg", "ndcg", "arhr"}
    # A head form covers only options the metric has.
    for name in head:
        assert set(specs[name].head.options) <= set(specs[name].params), name  # type: ignore[union-attr]


def test_the_curve_capable_set_is_the_declared_curve_kernels() -> None:
    curve = {name for name, spec in registered().items() if spec.curve is not None}
    assert curve == set(curve_metrics())
    # Every head form has a curve kernel: a cutoff list is one pass on either path.
    assert {name for name, spec in registered().items() if spec.head is not None} <= curve


def test_the_sampled_targets_are_the_declared_ones() -> None:
    sampled = {name for name, spec in registered().items() if spec.sampled is not None}
    assert sampled == {"precision", "recall", "hit_rate", "mrr", "map", "auc", "dcg", "ndcg"}
    for name in sampled:
        spec = registered()[name]
        k = None if spec.sampled.cutoff == "refused" else 5  # type: ignore[union-attr]
        options = {key: p.default for key, p in spec.params.items()}
        assert check_target(name, k, options, name).kind == spec.sampled.kind  # type: ignore[union-attr]


def test_the_absolute_positions_sets_are_the_declared_ones() -> None:
    specs = registered()
    assert absolute_metrics() == tuple(sorted(n for n, s in specs.items() if s.absolute_positions))
    assert set(repeat_safe_metrics()) <= set(absolute_metrics())
    assert absolute_metrics() == tuple(sorted({
        "aclt", "accuracy", "aplt", "arhr", "coverage", "dcg", "f1", "fallout", "fbeta",
        "hit_rate", "informedness", "intra_list_diversity", "inverse_precision",
        "inverse_recall", "map", "markedness", "mcc", "miss_rate", "mrr", "ndcg",
        "novelty", "num_rel", "num_rel_ret", "num_ret", "pap", "partial_auc",
        "popularity_bias", "precision", "r_precision", "recall", "relative_precision",
        "serendipity", "unexpectedness",
    }))  # fmt: skip

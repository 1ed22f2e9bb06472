"""MkDocs hook: the pages and pictures that are generated when the site is built.

Nothing here is committed output; every build derives it again from the code, so the
site cannot drift from the library:

- ``reference/metrics/<family>.md``: one page per metric family, read from the metric
  registry (:func:`polars_rankeval.metrics.registry.registered`): definition, options
  with their values and defaults, tie policies, direction, bounds and the declaration's
  own text and examples.
- ``performance/<name>.md``: the benchmarks' recorded results, ``benchmarks/RESULTS_*.md``
  as the benchmark scripts wrote them.
- ``assets/charts/<name>.svg``: the guide's charts, drawn by :mod:`polars_rankeval.plot`
  on the bundled systems and rendered to SVG by vl-convert.
- ``<!-- generated: NAME -->`` markers in a hand-written page are replaced by a block
  (the matrix of other libraries' metric names, the list of metric families, the list
  of recorded benchmarks).

``tests/docs/test_pages.py`` imports this module to check that every family has a
title here and every registered metric a section.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"

# A new family needs a title and a sentence here: tests/docs/test_pages.py fails until
# it has them (so a family never lands on the site as a bare identifier).
FAMILIES: dict[str, tuple[str, str]] = {
    "binary": (
        "Binary relevance",
        "Precision, recall, hit rate, MRR, MAP, AUC and their relatives: an item is "
        "relevant when its relevance is at least `rel`.",
    ),
    "graded": ("Graded relevance", "DCG, nDCG and ERR: the relevance grade is the gain."),
    "cascade": (
        "Cascade and C/W/L measures",
        "Users who go down the list and stop: nERR, INST and INSQ.",
    ),
    "classification": (
        "Full-catalog classification",
        "The top k read as a yes/no classifier of the whole catalog (Schröder's measures); "
        "the true negatives need the catalog size `n_items=`.",
    ),
    "judged": (
        "Judged and unjudged items",
        "trec_eval's measures for incomplete judgments: bpref, infAP, judged shares, utility.",
    ),
    "trec_gain": (
        "trec_eval gain measures",
        "Rank-biased precision and trec_eval's gain-based measures.",
    ),
    "count": (
        "Counts",
        "Numbers of retrieved and relevant items; `aggregate=sum` gives trec_eval's totals.",
    ),
    "correlation": (
        "Rank correlation",
        "How well the scores order the judged items: Spearman, Kendall's tau, FCP.",
    ),
    "rating": ("Rating error", "The score read as a predicted rating: MAE, MSE, RMSE, NMAE."),
    "ctr": ("Off-policy click-through rate", "The CTR of the top k estimated from logged data."),
    "exposure": (
        "Coverage, exposure and novelty",
        "How the top-k slots spread over the catalog, and how popular their items are.",
    ),
    "item": ("Item-side metrics", "One value per item (evaluate with `per_item=True`)."),
    "diversity": (
        "Diversity",
        "How different the items of a list, or the lists of the users, are.",
    ),
    "categorical": ("Categorical diversity", "Distinct categories in the top k."),
    "serendipity": (
        "Serendipity and unexpectedness",
        "The list against what the user knew (`history=`) or a baseline's list.",
    ),
    "calibration": (
        "Calibration",
        "The category mix of the list against that of the user's history (Steck 2018).",
    ),
    "popularity_bias": (
        "Popularity bias and group exposure",
        "Long-tail shares, popularity-group disparities and the exposure of item groups.",
    ),
    "intent": (
        "Intent-aware (diversity) measures",
        "TREC ndeval's measures over the subtopics of a query.",
    ),
    "similarity": (
        "Rank similarity",
        "The recommended list against a reference ranking: RBO and the intersection.",
    ),
}


# ------------------------------------------------------------------ metric reference


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def families() -> dict[str, list[str]]:
    """Every family of the registry with its metric names, in the registry's order."""
    import polars_rankeval as prk

    out: dict[str, list[str]] = {}
    for name, family in prk.list_metrics().select("name", "family").iter_rows():
        out.setdefault(family, []).append(name)
    return out


def _doc_sections(doc: str) -> tuple[str, str]:
    """The declaration's prose and its doctest examples (a numpydoc Examples section)."""
    parts = re.split(r"^Examples\n-+\n", doc.strip("\n"), maxsplit=1, flags=re.MULTILINE)
    prose = parts[0].strip()
    examples = parts[1].strip() if len(parts) > 1 else ""
    return prose, examples


def metric_section(name: str) -> str:
    """One metric's entry: summary, facts, definition, options, text and examples."""
    import inspect

    import polars_rankeval.metrics.aggregate as aggregate
    from polars_rankeval._utils.types import TIE_POLICIES
    from polars_rankeval.metrics.registry import get_spec

    spec = get_spec(name)
    scope = {
        "user": "a value per user, averaged over users",
        "global": "one value per `by` group",
        "item": "a value per item (`per_item=True`)",
    }.get(spec.scope, spec.scope)
    ties = spec.tie_policies
    ties_text = "all" if set(ties) == set(TIE_POLICIES) else ", ".join(f"`{t}`" for t in ties)
    direction = {True: "higher is better", False: "lower is better", None: "a count"}[
        spec.higher_is_better
    ]
    facts = [
        f"**@k**: {'yes' if spec.takes_k else 'no'}",
        scope,
        f"**ties**: {ties_text}",
        direction,
    ]
    if spec.bounds is not None:
        facts.append(f"**range**: [{_fmt(spec.bounds[0])}, {_fmt(spec.bounds[1])}]")
    if spec.aliases:
        facts.append("**aliases**: " + ", ".join(f"`{a}`" for a in spec.aliases))
    lines = [f"## `{name}` {{#{name}}}", "", spec.summary, "", " · ".join(facts), ""]
    lines += ["**Definition.** " + spec.definition, ""]
    rows = [(p.name, _fmt(p.default), p.values, p.doc) for p in spec.params.values()]
    if spec.scope == "user":
        choices = [
            a for a in aggregate.USER_AGGREGATES if a != "pooled" or name in aggregate.POOLED
        ]
        rows.append(
            (
                aggregate.OPTION,
                aggregate.DEFAULT,
                " | ".join(choices),
                "the aggregation over users (see [the metric grammar](../../guide/evaluate.md))",
            )
        )
    if rows:
        lines += ["| option | default | values | meaning |", "| --- | --- | --- | --- |"]
        lines += [f"| `{n}` | `{_cell(d)}` | {_cell(v)} | {_cell(doc)} |" for n, d, v, doc in rows]
        lines.append("")
    prose, examples = _doc_sections(inspect.cleandoc(spec.doc or ""))
    if prose:
        lines += [prose, ""]
    suffix = "@10" if spec.takes_k else ""
    names = [name + suffix]
    for param in spec.params.values():
        if param.choices:
            other = next(c for c in param.choices if c != param.default)
            names.append(f"{name}({param.name}={other}){suffix}")
            break
    per_item = ", per_item=True" if spec.scope == "item" else ""
    lines += ["```python", f"prk.evaluate(df, {names!r}{per_item})", "```", ""]
    for chunk in re.split(r"\n\s*\n", examples):
        if chunk.strip():
            is_code = chunk.lstrip().startswith(">>>")
            lines += ["```pycon", chunk, "```", ""] if is_code else [chunk.strip(), ""]
    return "\n".join(lines)


def family_page(family: str, names: list[str]) -> str:
    """The reference page of one family."""
    title, intro = FAMILIES.get(family, (family, ""))
    head = [
        f"# {title}",
        "",
        intro,
        "",
        "Generated from the metric registry when the site is built. Each metric is used by "
        "name in `evaluate` (the [metric grammar](../../guide/evaluate.md): "
        "`name(option=value)@k`); the examples are the declaration's own doctests.",
        "",
        " · ".join(f"[`{n}`](#{n})" for n in names),
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(metric_section(n) for n in names)


def family_list() -> str:
    """The metric families with their metrics, for the reference's index page."""
    lines = ["| family | metrics |", "| --- | --- |"]
    for family, names in families().items():
        title = FAMILIES.get(family, (family, ""))[0]
        links = ", ".join(f"[`{n}`]({family}.md#{n})" for n in names)
        lines.append(f"| [{title}]({family}.md) | {links} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ other blocks


def _script(name: str) -> ModuleType:
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        msg = f"cannot load {path}"
        raise ImportError(msg)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark_results() -> dict[str, Path]:
    """The recorded results, by page name (``RESULTS_HEAD.md`` -> ``head``)."""
    return {
        p.stem.removeprefix("RESULTS").strip("_").lower() or "core": p
        for p in sorted(BENCHMARKS.glob("RESULTS*.md"))
    }


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def benchmark_list() -> str:
    """The recorded results with their titles, for the performance page."""
    lines = ["| results | recorded by |", "| --- | --- |"]
    for name, path in benchmark_results().items():
        text = path.read_text(encoding="utf-8")
        found = re.search(r"`(python benchmarks/[^`]+)`", text)
        script = f"`{found.group(1)}`" if found else "—"
        lines.append(f"| [{_cell(_title(path))}](performance/{name}.md) | {script} |")
    return "\n".join(lines) + "\n"


def benchmark_page(path: Path) -> str:
    """A recorded result as a page; links into the repository point at the file."""
    text = path.read_text(encoding="utf-8")
    # A link to another results file points at its page.
    text = re.sub(
        r"\]\((?:benchmarks/)?RESULTS_?([A-Z0-9_]*)\.md\)",
        lambda m: f"]({m[1].lower() or 'core'}.md)",
        text,
    )
    note = (
        f"\n\n*Read from `benchmarks/{path.name}` when the site was built; "
        "the numbers are those the benchmark recorded on the machine it describes.*\n"
    )
    title, _, rest = text.partition("\n")
    return title + note + rest


def fusion_methods() -> str:
    """The fusion methods' table, read from their declarations (``prk.list_fusion_methods``)."""
    import polars_rankeval as prk

    rows = [
        "| method | what | parameters | weighted | trained | reference |",
        "|---|---|---|---|---|---|",
    ]
    for m in prk.list_fusion_methods().iter_rows(named=True):
        cells = [
            f"`{m['method']}`",
            m["summary"],
            m["parameters"] or "",
            _fmt(m["weighted"]),
            _fmt(m["trained"]),
            m["reference"],
        ]
        rows.append("| " + " | ".join(_cell(str(c)) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def fusion_differences() -> str:
    """Where fusion differs from ranx, and why: the fusion package's docstring, as Markdown."""
    import polars_rankeval.fusion as fusion

    doc = fusion.__doc__ or ""
    text = doc[doc.index("Where ranx") :]
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


BLOCKS: dict[str, Callable[[], str]] = {
    "metric-families": family_list,
    "fusion-methods": fusion_methods,
    "fusion-differences": fusion_differences,
    "conventions-matrix": lambda: _script("gen_convention_matrix").matrix(),
    "benchmarks": benchmark_list,
}


# ------------------------------------------------------------------ charts


def _charts() -> dict[str, Callable[[], Any]]:
    import polars as pl

    import polars_rankeval as prk

    @cache
    def systems() -> Any:
        return prk.load_systems()

    @cache
    def per_user() -> Any:
        return prk.evaluate(systems(), ["ndcg@10"], by="system", per_user=True)

    return {
        "curves": lambda: prk.plot.curves(
            prk.curve(systems(), ["ndcg", "recall"], ks=range(1, 21), by="system")
        ),
        "pr_curves": lambda: prk.plot.pr_curves(prk.pr_curve(systems(), by="system")),
        "distribution": lambda: prk.plot.distribution(per_user(), "ndcg@10"),
        "topic_differences": lambda: prk.plot.topic_differences(
            per_user(), "ndcg@10", baseline="bm25"
        ),
        "lorenz": lambda: prk.plot.lorenz(systems(), k=10),
        "long_tail": lambda: prk.plot.long_tail(systems(), k=10),
        "largest_differences": lambda: prk.plot.largest_differences(
            prk.largest_differences(
                systems().filter(pl.col("system").is_in(["bm25", "dense"])),
                ["ndcg@10"],
                baseline="bm25",
                n=5,
            )
        ),
        "judgement_gaps": lambda: prk.plot.judgement_gaps(
            prk.judgement_gaps(systems(), ["ndcg@10", "precision@5"])
        ),
        "asl_curves": lambda: prk.plot.asl_curves(
            prk.discriminative_power(
                systems().filter(pl.col("user") <= 40), ["ndcg@10", "precision@5", "mrr@10"]
            )
        ),
        "power_curve": lambda: prk.plot.power_curve(prk.sample_size(delta=[0.02, 0.05], sd=0.2)),
    }


CHARTS = (
    "curves",
    "pr_curves",
    "distribution",
    "topic_differences",
    "lorenz",
    "long_tail",
    "largest_differences",
    "judgement_gaps",
    "asl_curves",
    "power_curve",
)


def chart_svg(name: str) -> str:
    """One chart of the guide, drawn by the library, as SVG text."""
    import vl_convert as vlc

    chart = _charts()[name]()
    return vlc.vegalite_to_svg(chart.to_dict())


# ------------------------------------------------------------------ MkDocs events


def _extend(nav: Any, page: str, entries: list[dict[str, str]]) -> bool:
    """Append ``entries`` to the nav section whose list holds ``page``."""
    if isinstance(nav, dict):
        return any(_extend(value, page, entries) for value in nav.values())
    if isinstance(nav, list):
        if page in nav:
            nav.extend(entries)
            return True
        return any(_extend(item, page, entries) for item in nav)
    return False


def on_config(config: Any) -> Any:
    """Put the generated reference and performance pages into the navigation."""
    metrics = [{FAMILIES.get(f, (f, ""))[0]: f"reference/metrics/{f}.md"} for f in families()]
    results = [{_title(p): f"performance/{n}.md"} for n, p in benchmark_results().items()]
    for page, entries in (("reference/metrics/index.md", metrics), ("performance.md", results)):
        if not _extend(config.nav, page, entries):
            msg = f"mkdocs.yml: no nav section lists {page}"
            raise ValueError(msg)
    return config


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages and charts to the site's files."""
    from mkdocs.structure.files import File

    for family, names in families().items():
        files.append(
            File.generated(
                config, f"reference/metrics/{family}.md", content=family_page(family, names)
            )
        )
    for name, path in benchmark_results().items():
        files.append(File.generated(config, f"performance/{name}.md", content=benchmark_page(path)))
    for name in CHARTS:
        files.append(File.generated(config, f"assets/charts/{name}.svg", content=chart_svg(name)))
    return files


_MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the ``<!-- generated: NAME -->`` markers by their blocks."""

    def block(match: re.Match[str]) -> str:
        name = match[1]
        if name not in BLOCKS:
            msg = f"{page.file.src_uri}: unknown generated block {name!r}; known: {sorted(BLOCKS)}"
            raise ValueError(msg)
        return BLOCKS[name]()

    return _MARKER.sub(block, markdown)

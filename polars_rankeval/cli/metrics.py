"""The ``metrics`` subcommand: every registered metric, fitted to the terminal, or one in full."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_rankeval._utils.types import (
    TIE_POLICIES,
)
from polars_rankeval.cli.inputs import UsageError
from polars_rankeval.cli.output import FORMATS, PROG, write_frame

if TYPE_CHECKING:
    from polars_rankeval.metrics.spec import MetricSpec


def add_parser(sub: Any) -> None:
    """The ``metrics`` subcommand's options."""
    mt = sub.add_parser(
        "metrics",
        help="list the registered metrics, or show one",
        description=(
            "List every registered metric (sorted by name) with its options, fitted to "
            "the terminal; 'metrics NAME' shows one metric in full: definition, options "
            "with defaults and choices, aliases and examples."
        ),
    )
    mt.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="a metric name, alias or full metric string (e.g. ndcg, P, 'ndcg(gain=exp)@10')",
    )
    mt.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    mt.add_argument(
        "--width",
        type=int,
        metavar="N",
        help="width of the table in characters (default: the terminal's width)",
    )
    mt.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """List the metrics, or describe the one named."""
    from polars_rankeval.metrics.registry import list_metrics

    width = args.width if args.width is not None else shutil.get_terminal_size().columns
    if width < 1:
        msg = f"--width must be a positive number of characters, got {width}"
        raise UsageError(msg)
    table = list_metrics().sort("name")
    if args.name is not None:
        spec = _metric_spec(args.name)
        if args.format != "table":
            write_frame(table.filter(pl.col("name") == spec.name), args.format, sys.stdout)
            return 0
        sys.stdout.write(describe_metric(spec, width))
        return 0
    if args.format != "table":  # machine-readable formats: every field, in full
        write_frame(table, args.format, sys.stdout)
        return 0
    rows = [
        [
            row["name"],
            "yes" if row["cutoff"] else "no",
            row["aliases"] or "-",
            row["options"] or "-",
            row["summary"],
        ]
        for row in table.iter_rows(named=True)
    ]
    header = ["name", "@k", "aliases", "options (default)", "definition"]
    sys.stdout.write(fit_table(header, rows, width, shrink=(2, 3, 4)))
    closing = f"{len(rows)} metrics; '{PROG} metrics NAME' shows one in full."
    sys.stdout.write("\n" + "\n".join(textwrap.wrap(closing, max(width, 20))) + "\n")
    return 0


def _metric_spec(name: str) -> MetricSpec:
    """The spec of a metric given by name, alias or full metric string (``ndcg@10``)."""
    from polars_rankeval.metrics.grammar import parse_metric
    from polars_rankeval.metrics.registry import get_spec

    try:
        return get_spec(name)
    except ValueError:
        return parse_metric(name).spec  # "ndcg(gain=exp)@10"; else the parse error


def fit_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], width: int, *, shrink: Sequence[int]
) -> str:
    """A plain-text table at most ``width`` characters wide, cells wrapped to fit.

    Columns not in ``shrink`` keep their natural width; the ``shrink`` columns share
    what is left, the last one taking the rest, and their cells are wrapped on word
    boundaries. When even that cannot fit (a very narrow terminal), each shrink column
    keeps at least 8 characters and lines may be longer than ``width``.

    Examples
    --------
    >>> print(fit_table(["a", "b"], [["x", "one two three"]], 12, shrink=[1]), end="")
    a  b
    -  ---------
    x  one two
       three
    """
    sep = "  "
    natural = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    widths = list(natural)
    fixed = sum(w for i, w in enumerate(widths) if i not in shrink) + len(sep) * (len(header) - 1)
    left = width - fixed
    if sum(natural[i] for i in shrink) > left:
        floor = min(8, max(1, left // len(shrink)))
        share = dict.fromkeys(shrink, floor)
        spare = max(0, left - floor * len(shrink))
        for i in shrink[:-1]:  # the earlier columns get a share, the last one the rest
            extra = max(0, min(natural[i] - floor, spare // (len(shrink) + 1)))
            share[i] += extra
            spare -= extra
        share[shrink[-1]] += spare
        for i in shrink:
            widths[i] = min(natural[i], share[i])

    def render(row: Sequence[str]) -> list[str]:
        cells = [
            textwrap.wrap(cell, w, break_on_hyphens=False) or [""] if i in shrink else [cell]
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        return [
            sep.join(
                (c[n] if n < len(c) else "").ljust(w) for c, w in zip(cells, widths, strict=True)
            ).rstrip()
            for n in range(max(len(c) for c in cells))
        ]

    lines = [*render(header), sep.join("-" * w for w in widths)]
    for row in rows:
        lines.extend(render(row))
    return "\n".join(lines) + "\n"


def metric_examples(spec: MetricSpec) -> list[str]:
    """Metric strings that use ``spec``: plain, and with a non-default option if it has one."""
    suffix = "@10" if spec.takes_k else ""
    examples = [spec.name + suffix]
    for param in spec.params.values():
        if param.choices:
            other = next(c for c in param.choices if c != param.default)
            examples.append(f"{spec.name}({param.name}={other}){suffix}")
            break
    return examples


def describe_metric(spec: MetricSpec, width: int) -> str:
    """One metric in full: summary, definition, options, tie policies, aliases, examples."""
    wrap = max(width - 2, 20)

    def para(text: str) -> list[str]:
        return ["  " + line for line in textwrap.wrap(text, wrap, break_on_hyphens=False)]

    scope = {
        "user": "a value per user, averaged over users",
        "global": "one value per by group",
        "item": "a value per item (evaluate with per_item=True)",
    }.get(spec.scope, spec.scope)
    lines = textwrap.wrap(f"{spec.name}: {spec.summary}", max(width, 20))
    lines += [
        "",
        *para(f"family: {spec.family}; @k: {'yes' if spec.takes_k else 'no'}; {scope}"),
        *para(f"aliases: {', '.join(spec.aliases) or '-'}"),
        "",
        "definition:",
        *para(spec.definition),
        "",
    ]
    rows = [(p.name, _fmt_option(p.default), p.values, p.doc) for p in spec.params.values()]
    if spec.scope == "user":  # the one option every per-user metric takes (_aggregate)
        import polars_rankeval.metrics.aggregate as _aggregate

        choices = [a for a in _aggregate.USER_AGGREGATES if a != "pooled" or spec.name in
                   _aggregate.POOLED]  # fmt: skip
        doc = "the aggregation over users (mean, or a global value: see the docs' metric grammar)"
        rows.append((_aggregate.OPTION, _aggregate.DEFAULT, " | ".join(choices), doc))
    if rows:
        lines.append("options (name, default, values):")
        name_w = max(len(r[0]) for r in rows)
        default_w = max(len(r[1]) for r in rows)
        for name, default, values, doc in rows:
            head = f"  {name.ljust(name_w)}  {default.ljust(default_w)}  "
            # Long choice lists continue under the first value, split at the bars.
            rest = textwrap.wrap(values, max(width - len(head), 20), break_on_hyphens=False)
            lines += [head + rest[0], *(" " * len(head) + line for line in rest[1:])]
            if doc:
                lines += ["      " + line for line in textwrap.wrap(doc, max(wrap - 4, 20))]
    else:
        lines.append("options: none")
    ties = spec.tie_policies
    lines += [
        "",
        f"tie policies (--ties): {'all' if set(ties) == set(TIE_POLICIES) else ', '.join(ties)}",
        "",
        "examples:",
    ]
    examples = metric_examples(spec)
    if spec.scope == "item":
        lines.append("  (the command line evaluates no item metrics: use Python)")
    else:
        lines.append(f"  {PROG} {' '.join(f'-m {e!r}' for e in examples)}")
    per_item = ", per_item=True" if spec.scope == "item" else ""
    lines.append(f"  prk.evaluate(df, {examples!r}{per_item})")
    return "\n".join(lines) + "\n"


def _fmt_option(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

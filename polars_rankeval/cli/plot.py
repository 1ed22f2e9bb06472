"""The ``plot`` subcommand: charts of a result (bars, curves, distributions) to a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.files import write_atomically
from polars_rankeval._utils.types import (
    EMPTY_POLICIES,
    TIE_POLICIES,
    USER_UNIVERSES,
)
from polars_rankeval.cli.inputs import INPUT_FORMATS, UsageError, column_options, load_data
from polars_rankeval.cli.output import PROG
from polars_rankeval.metrics.defaults import CURVE_DEFAULT

PLOT_KINDS: tuple[str, ...] = (
    "curves",
    "distribution",
    "long_tail",
    "lorenz",
    "pr_curves",
    "topic_differences",
)
"""The charts of ``plot``: each is named as its function in polars_rankeval.plot."""
PLOT_FORMATS = frozenset({"html", "json", "pdf", "png", "svg"})
"""The --out extensions of ``plot`` (what Altair's ``save`` writes without a browser)."""


def add_parser(sub: Any) -> None:
    """The ``plot`` subcommand: a chart of polars_rankeval.plot saved to --out."""
    pt = sub.add_parser(
        "plot",
        help="draw a chart (metric@k curves, precision-recall, distributions, ...) to a file",
        description=(
            "Draw a chart of polars_rankeval.plot and save it (.png, .svg, .pdf, .html or .json; "
            "needs the [plot] extra). Without --data/--recs/--truth, plots the bundled "
            "multi-system example (datasets.load_systems, --by system)."
        ),
    )
    pt.add_argument(
        "kind",
        choices=PLOT_KINDS,
        help=(
            "the function of polars_rankeval.plot to draw. curves: metric@k over k (-m NAME, "
            "--ks); pr_curves: interpolated precision-recall; distribution: per-user values "
            "of -m METRIC; topic_differences: per-user differences against --baseline; "
            "lorenz: Lorenz curve of item exposure at --k; long_tail: popularity of the top "
            "--k items vs the catalog"
        ),
    )
    pt.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="PATH",
        help="the chart file (.png, .svg, .pdf, .html or .json); written whole or not at all",
    )
    pt.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="curves: metric names without @k (repeatable, default ndcg); distribution and "
        "topic_differences: one per-user metric (default ndcg@10)",
    )
    pt.add_argument("--ks", default="1..20", metavar="KS", help="curves cutoffs (default 1..20)")
    pt.add_argument("--k", type=int, default=10, help="lorenz/long_tail cutoff (default 10)")
    pt.add_argument("--baseline", metavar="SYSTEM", help="topic_differences: the baseline system")
    pt.add_argument(
        "--compare",
        action="store_true",
        help="topic_differences: run prk.compare and show its result in each panel",
    )
    pt.add_argument(
        "--kind",
        dest="dist_kind",
        choices=("histogram", "ecdf"),
        default="histogram",
        help="distribution: histogram (default) or ecdf",
    )
    pt.add_argument("--levels", type=int, default=11, help="pr_curves: number of recall levels")
    pt.add_argument("--title", help="chart title")
    pt.add_argument("--ties", choices=TIE_POLICIES, default=None, help="tie policy")
    pt.add_argument("--users", choices=USER_UNIVERSES, default="truth", help="users evaluated")
    pt.add_argument("--empty", choices=EMPTY_POLICIES, default="skip", help="undefined values")
    pt.add_argument("--data", type=Path, metavar="PATH", help="a joined long table")
    pt.add_argument("--recs", type=Path, metavar="PATH", help="recommendations")
    pt.add_argument("--truth", type=Path, metavar="PATH", help="ground truth")
    pt.add_argument("--recs-format", choices=INPUT_FORMATS, help="format of --recs")
    pt.add_argument("--truth-format", choices=INPUT_FORMATS, help="format of --truth")
    pt.add_argument("--user", default="user", metavar="COL", help="user column")
    pt.add_argument("--item", default="item", metavar="COL", help="item column")
    pt.add_argument("--score", default=None, metavar="COL", help="score column")
    pt.add_argument("--rank", default=None, metavar="COL", help="rank column (1 = best)")
    pt.add_argument(
        "--relevance",
        default=None,
        metavar="COL",
        help="relevance column (default: relevance; a column named here must exist)",
    )
    pt.add_argument(
        "--by", action="append", default=None, metavar="COL", help="system column; repeatable"
    )
    pt.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate what the chart needs and save it to ``--output``."""
    import polars_rankeval.analysis.curves as curves
    import polars_rankeval.plot as plot
    from polars_rankeval.api.evaluate import evaluate

    out: Path = args.out
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:  # before reading the data
        formats = ", ".join(f".{f}" for f in sorted(PLOT_FORMATS))
        msg = f"cannot write {str(out)!r}: use a {formats} file"
        raise UsageError(msg)
    if args.data is None and args.recs is None and args.truth is None:
        from polars_rankeval.api.datasets import load_systems

        print(f"{PROG}: no input given; plotting the bundled multi-system example", file=sys.stderr)
        data: pl.LazyFrame = load_systems().lazy()
        by = args.by or ["system"]
    else:
        data, by = load_data(args)
    options: dict[str, Any] = {
        **column_options(args, joined=True),
        "users": args.users,
        "empty": args.empty,
    }
    if args.ties is not None:
        options["ties"] = args.ties
    by_arg = by or None
    chart: Any
    if args.kind == "curves":
        names = args.metrics or [CURVE_DEFAULT]
        ks = curves.cutoffs_of(args.ks)
        frame = curves.curve(data, names, ks=ks, by=by_arg, **options)
        chart = plot.curves(frame, title=args.title)
    elif args.kind == "pr_curves":
        options.setdefault("ties", "item_desc")
        chart = plot.pr_curves(
            curves.pr_curve(data, levels=args.levels, by=by_arg, **options), title=args.title
        )
    elif args.kind in ("distribution", "topic_differences"):
        metric = (args.metrics or ["ndcg@10"])[0]
        per_user = evaluate(data, [metric], by=by_arg, per_user=True, **options)
        if args.kind == "distribution":
            chart = plot.distribution(
                per_user, metric, by=by_arg, kind=args.dist_kind, title=args.title
            )
        else:
            if len(by) != 1 or args.baseline is None:
                msg = "plot topic_differences needs one --by column and --baseline SYSTEM"
                raise UsageError(msg)
            result = None
            if args.compare:
                from polars_rankeval.analysis.compare import compare

                result = compare(data, [metric], by=by[0], baseline=args.baseline, **options)
            chart = plot.topic_differences(
                per_user, metric, baseline=args.baseline, by=by[0], compare=result, title=args.title
            )
    elif args.kind == "lorenz":
        chart = plot.lorenz(data, k=args.k, by=by_arg, title=args.title, **options)
    else:
        chart = plot.long_tail(data, k=args.k, by=by_arg, title=args.title, **options)
    out.parent.mkdir(parents=True, exist_ok=True)
    # The temporary file's name does not end in the format: it is given to save.
    write_atomically(out, lambda partial: chart.save(str(partial), format=suffix))
    print(f"{PROG}: wrote {out}", file=sys.stderr)
    return 0

"""The ``compare`` subcommand: systems compared per metric, with tests and intervals."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval._utils.types import (
    EMPTY_POLICIES,
    TIE_POLICIES,
    USER_UNIVERSES,
)
from polars_rankeval.cli.inputs import (
    IDS,
    TREC_SUFFIXES,
    UsageError,
    add_conventions,
    add_pool_unjudged,
    add_side_inputs,
    pooled,
    read_data,
    read_files,
    read_table,
    side_inputs,
    stack_systems,
)
from polars_rankeval.cli.output import PROG, write_frame

COMPARE_FORMATS: tuple[str, ...] = ("markdown", "latex", "html", "table", "csv", "json")


def add_parser(sub: Any) -> None:
    """The ``compare`` subcommand's options."""
    from polars_rankeval._utils.stats import CI_METHODS, CORRECTIONS, TESTS

    cp = sub.add_parser(
        "compare",
        help="paired significance tests between systems, as a report table",
        description=(
            "Compare systems on per-user metric values: paired tests, corrections, effect "
            "sizes and intervals (polars_rankeval.compare). Input: --data (a long table "
            "with a system column), --recs/--truth with --by, or TREC runs (--run, one "
            "system per file) with --qrels. Without input, the bundled four-system "
            "example. --format markdown/latex/html prints the report; table/csv/json the "
            "full result."
        ),
    )
    add_system_inputs(cp)
    cp.add_argument(
        "--baseline",
        metavar="NAME",
        help="compare every system with this one (default: with two systems, the first "
        "given; with more, every pair)",
    )
    cp.add_argument("--test", choices=TESTS, default="randomization", help="default: randomization")
    cp.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default=None,
        help="default: holm (none for tukey)",
    )
    cp.add_argument(
        "--family",
        choices=("all", "metric"),
        default="all",
        help="comparisons corrected together (default: all)",
    )
    cp.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cp.add_argument(
        "--n-resamples", type=int, default=10_000, metavar="N", help="resamples (default 10000)"
    )
    cp.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    cp.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    cp.add_argument("--ci", choices=CI_METHODS, default="auto", help="interval (default: auto)")
    cp.add_argument(
        "--tie-tolerance",
        type=float,
        default=1e-9,
        metavar="X",
        help="a user whose two values differ by at most X is a tie, else a win or a loss "
        "(default 1e-9)",
    )
    cp.add_argument(
        "--win-tie-loss",
        action="store_true",
        help="the report adds a table of wins / ties / losses per pair and metric",
    )
    cp.add_argument(
        "--ties", choices=TIE_POLICIES, default="expected", help="tie policy (default: expected)"
    )
    cp.add_argument(
        "--users", choices=USER_UNIVERSES, default="truth", help="users evaluated (default: truth)"
    )
    cp.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help="undefined per-user values (default: skip)",
    )
    add_conventions(cp)
    add_side_inputs(cp)
    cp.add_argument(
        "--format",
        choices=COMPARE_FORMATS,
        default="markdown",
        help="report (markdown, latex, html) or the full result (table, csv, json); "
        "default: markdown",
    )
    cp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report resampling progress on stderr, a tqdm bar with the [progress] extra "
        "(default: when stderr is a terminal)",
    )
    cp.set_defaults(handler=run)


def add_system_inputs(cp: argparse.ArgumentParser) -> None:
    """The input options of the commands over several systems (compare, differences, judgements).

    ``-m``, ``--data``, ``--recs``/``--truth``, ``--run``/``--qrels``, ``--subtopic``,
    ``--by`` and ``--pool-unjudged``, read by :func:`_compare_data`.
    """
    cp.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="per-user metric, repeatable (default: ndcg@10)",
    )
    cp.add_argument("--data", metavar="PATH", help="joined long table with --by (a path or a glob)")
    cp.add_argument(
        "--recs",
        action="append",
        metavar="[NAME=]PATH",
        help="recommendations: one --recs, with a --by column; or one --recs per system "
        "(a file or a quoted glob of its partitions, named NAME or by the file name)",
    )
    cp.add_argument("--truth", type=Path, metavar="PATH", help="ground truth for --recs")
    cp.add_argument(
        "--run",
        action="append",
        dest="runs",
        metavar="[NAME=]PATH",
        help="TREC run file of one system, or a quoted glob of its parts (name: NAME or "
        "the file name without its extension); repeatable, with --qrels",
    )
    cp.add_argument("--qrels", type=Path, metavar="PATH", help="TREC qrels for --run")
    cp.add_argument(
        "--subtopic",
        default=None,
        metavar="COL",
        help=(
            "subtopic column of --truth for the intent-aware metrics (default: subtopic "
            "for TREC diversity qrels: a .div --truth or --qrels file)"
        ),
    )
    cp.add_argument("--by", default="system", metavar="COL", help="system column (default: system)")
    add_pool_unjudged(cp)


def _compare_data(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str] | None]:
    """The long frame with a system column from --data, --recs/--truth, --run/--qrels.

    And the systems in the order given: of the --run options, of their first row in
    --recs (the join does not keep it); ``None``: the data's own order (--data).
    """
    from polars_rankeval.api.evaluate import join

    given = [
        name
        for name, value in (("--data", args.data), ("--recs", args.recs), ("--run", args.runs))
        if value
    ]
    if len(given) > 1:
        msg = f"give one input: {' or '.join(given)}, not both"
        raise UsageError(msg)
    if args.data is not None:
        return read_data(args), None
    if args.recs is not None or args.truth is not None:
        if args.recs is None or args.truth is None:
            msg = "--recs and --truth must be given together"
            raise UsageError(msg)
        # join's rule for the ids (as in evaluate): no silent cast of integers to text.
        diversity = TREC_SUFFIXES.get(args.truth.suffix.lower()) == "trec-div-qrels"
        recs, names = stack_systems(
            args,
            args.recs,
            "--recs",
            args.by,
            lambda files: read_files(files, None, ids=IDS),
            ids=IDS,
        )
        order = names
        if order is None and args.by in recs.collect_schema():
            order = (
                recs.select(
                    pl.col(args.by).cast(pl.String).drop_nulls().unique(maintain_order=True)
                )
                .collect()
                .get_column(args.by)
                .to_list()
            )
        joined = join(
            recs,
            read_table(args.truth),
            by=args.by,
            check_overlap=True,
            subtopic=args.subtopic or ("subtopic" if diversity else None),
        )
        assert isinstance(joined, pl.LazyFrame)
        return joined, order
    if args.runs:
        if args.qrels is None:
            msg = "--run needs --qrels"
            raise UsageError(msg)
        from polars_rankeval.io.trec.read import scan_qrels, scan_run

        if len(args.runs) < 2:
            msg = f"compare needs at least 2 runs, got {len(args.runs)}"
            raise UsageError(msg)

        def read_runs(files: list[Path]) -> pl.LazyFrame:
            return pl.concat([scan_run(p).select("user", "item", "score") for p in files])

        runs, names = stack_systems(args, args.runs, "--run", args.by, read_runs)
        parts = [runs.select(args.by, "user", "item", "score")]
        if not args.qrels.is_file():
            msg = f"no such file: {str(args.qrels)!r}"
            raise FileNotFoundError(msg)
        if args.subtopic is not None or args.qrels.suffix.lower() == ".div":
            from polars_rankeval.io.trec.read import scan_diversity_qrels

            div = scan_diversity_qrels(args.qrels)
            joined = join(pl.concat(parts), div, by=args.by, subtopic="subtopic")
        else:
            qrels = scan_qrels(args.qrels).select("user", "item", "relevance")
            joined = join(pl.concat(parts), qrels, by=args.by)
        assert isinstance(joined, pl.LazyFrame)
        return joined, names
    if args.qrels is not None:
        msg = "--qrels needs --run files"
        raise UsageError(msg)
    from polars_rankeval.api.datasets import load_systems

    print(
        f"{PROG}: no input given; comparing the bundled example (4 systems, 500 users)",
        file=sys.stderr,
    )
    return load_systems().lazy(), None


def run(args: argparse.Namespace) -> int:
    """Compare the systems; the table goes to standard output (or ``--output``)."""
    from polars_rankeval.analysis.compare import compare
    from polars_rankeval.analysis.report import report
    from polars_rankeval.api.evaluate import parse_metrics

    if args.conventions is not None:  # library names, resolved by compare
        from polars_rankeval.api.evaluate import evaluate
        from polars_rankeval.conventions.resolve import explicit_rules

        metrics = list(args.metrics or [])
        if not metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        rules: dict[str, Any] = {
            "conventions": args.conventions,
            **explicit_rules(vars(args), evaluate),
        }
    else:
        metrics = [m.name for m in parse_metrics(args.metrics or ["ndcg@10"])]
        rules = {"ties": args.ties, "users": args.users, "empty": args.empty}
    data, order = _compare_data(args)
    data = pooled(args, data, "relevance")
    items, history = side_inputs(args)
    result = compare(
        data,
        metrics,
        by=args.by,
        baseline=args.baseline,
        systems=order,
        test=args.test,
        correction=args.correction,
        family=args.family,
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        seed=args.seed,
        confidence=args.confidence,
        ci=args.ci,
        tie_tolerance=args.tie_tolerance,
        progress=args.progress,
        items=items,
        history=history,
        **rules,
    )
    if args.baseline is None:
        # Which system is the baseline, when the command line chose it.
        given = list(
            dict.fromkeys(x for row in result.select("baseline", "system").rows() for x in row)
        )
        if len(given) == 2:
            print(
                f"{PROG}: baseline: {given[0]} (the first system given; choose one with "
                "--baseline)",
                file=sys.stderr,
            )
        else:
            print(
                f"{PROG}: no --baseline: every pair of the {len(given)} systems, in the "
                f"order given: {', '.join(given)} (each pair against the one given first; "
                "choose one baseline with --baseline)",
                file=sys.stderr,
            )
    if args.format == "table":
        write_frame(_p_values_as_text(result), "table", sys.stdout)
    elif args.format in ("csv", "json"):
        write_frame(result, args.format, sys.stdout)
    else:
        text = report(result, args.format, win_tie_loss=args.win_tie_loss)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _p_values_as_text(result: pl.DataFrame) -> pl.DataFrame:
    """The p-value columns of a comparison as the one p-value text (``< 1e-300``, not 0).

    And ``tie_tolerance`` as ``1e-09`` (the table's 4 decimals would show 0). For the
    table people read; csv and json keep the numbers.
    """
    from polars_rankeval._utils.pvalue import format_p

    columns = [c for c in ("p_value", "p_adjusted") if c in result.columns]
    result = result.with_columns(
        pl.Series(c, [format_p(v) for v in result.get_column(c).to_list()], dtype=pl.String)
        for c in columns
    )
    if "tie_tolerance" in result.columns:
        result = result.with_columns(
            pl.col("tie_tolerance").map_elements(lambda v: f"{v:g}", return_dtype=pl.String)
        )
    return result

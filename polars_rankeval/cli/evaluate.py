"""The ``evaluate`` subcommand (the default): metrics over recommendations and truth."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import polars as pl

from polars_rankeval._utils.files import write_atomically
from polars_rankeval._utils.types import (
    AGGREGATIONS,
    EMPTY_POLICIES,
    STRATEGIES,
    SUMMARY_FORMS,
    TIE_POLICIES,
    USER_UNIVERSES,
)
from polars_rankeval.cli.inputs import (
    ID_TYPES,
    INPUT_FORMATS,
    SYSTEM_COLUMN,
    UsageError,
    add_conventions,
    add_pool_unjudged,
    add_side_inputs,
    column_options,
    load_data,
    pooled,
    side_inputs,
)
from polars_rankeval.cli.output import FORMATS, progress, write_frame
from polars_rankeval.metrics.defaults import EVALUATE_DEFAULTS

DEFAULT_METRICS: tuple[str, ...] = EVALUATE_DEFAULTS


def add_parser(sub: Any) -> None:
    """The ``evaluate`` subcommand's options."""
    ev = sub.add_parser(
        "evaluate",
        help="evaluate metrics (the default subcommand)",
        description=(
            "Evaluate metrics over recommendations joined with ground truth. Without "
            "--recs/--truth, evaluates the bundled example (trec_eval's test run)."
        ),
    )
    ev.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help=(
            "metric in the grammar name[(key=value,...)][@k], e.g. ndcg@10 or "
            "'precision(rel=2)@5'; repeatable (default: " + ", ".join(DEFAULT_METRICS) + ")"
        ),
    )
    ev.add_argument(
        "--ties",
        choices=TIE_POLICIES,
        default="expected",
        help="how tied scores are ordered (default: expected)",
    )
    ev.add_argument(
        "--users",
        choices=USER_UNIVERSES,
        default="truth",
        help="which users are evaluated (default: truth)",
    )
    ev.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help=(
            "what an undefined per-user value becomes: skip (default; each metric's mean "
            "over the users it is defined for, counted in n_users(METRIC)), skip_row (a "
            "user undefined for any metric is left out of every mean), zero, error"
        ),
    )
    add_conventions(ev)
    ev.add_argument(
        "--summary",
        choices=("auto", *SUMMARY_FORMS),
        default="auto",
        help=(
            "wide (one row per --by group) or long (one row per group, metric and "
            "aggregation: metric, aggregation, value, n_users, n_skipped); auto (default) "
            "is long for --format table and markdown, which people read, and wide for "
            "csv and json, which programs read"
        ),
    )
    ev.add_argument(
        "--per-user",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help=(
            "one row per user: printed instead of the means, or with FILE written there "
            "(.csv, .parquet, .json, .ndjson) while the means are printed"
        ),
    )
    ev.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    ev.add_argument(
        "--recs",
        action="append",
        metavar="[NAME=]PATH",
        help=(
            "recommendations (user, item, score): .parquet, .csv, .tsv, .ndjson or .run; "
            "a file or a quoted glob ('recs/part-*.parquet'), whose files are stacked as "
            "ONE system (the partitions of one model's output); repeat --recs for several "
            f"systems, each named NAME or by its file name without extension in a "
            f"{SYSTEM_COLUMN!r} column"
        ),
    )
    ev.add_argument(
        "--system",
        action="append",
        metavar="NAME",
        help=(
            "name of the system of each --recs, in order (default: NAME= or the file "
            "name without extension); repeatable"
        ),
    )
    ev.add_argument(
        "--id-type",
        choices=ID_TYPES,
        default="infer",
        help=(
            "infer (default): ids keep the dtype each file gives them, and must be of one "
            "kind (integers or strings) in --recs and --truth; string: read the user and "
            "item ids of every file as text (keeps leading zeros: '007' is not 7)"
        ),
    )
    ev.add_argument(
        "--truth",
        type=Path,
        metavar="PATH",
        help="ground truth (user, item[, relevance]): .parquet, .csv, .tsv, .ndjson or .qrels",
    )
    ev.add_argument(
        "--recs-format", choices=INPUT_FORMATS, help="format of --recs (default: from extension)"
    )
    ev.add_argument(
        "--truth-format",
        choices=INPUT_FORMATS,
        help="format of --truth (default: from extension)",
    )
    ev.add_argument("--user", default="user", metavar="COL", help="user column (default: user)")
    ev.add_argument("--item", default="item", metavar="COL", help="item column (default: item)")
    ev.add_argument("--score", default=None, metavar="COL", help="score column (default: score)")
    ev.add_argument(
        "--rank",
        default=None,
        metavar="COL",
        help="order by this rank column (1 = best) instead of a score",
    )
    ev.add_argument(
        "--rank-positions",
        choices=("relative", "absolute"),
        default="relative",
        help=(
            "with --rank: relative (default: ranks only order a user's items, renumbered "
            "1..n) or absolute (the ranks are the positions, gaps kept, as RecTools: an "
            "item at rank 9 is outside @3; distinct integer ranks >= 1 per user)"
        ),
    )
    ev.add_argument(
        "--relevance",
        default=None,
        metavar="COL",
        help=(
            "relevance column of the truth (default: relevance; a truth without that "
            "column marks every row relevant); a column named here must exist"
        ),
    )
    ev.add_argument(
        "--subtopic",
        default=None,
        metavar="COL",
        help=(
            "subtopic (intent) column of --truth, one row per (user, item, subtopic), for "
            "alpha_ndcg, err_ia, nrbp, s_recall, precision_ia and map_ia (default: "
            "subtopic for TREC diversity qrels, --truth-format trec-div-qrels or a .div file)"
        ),
    )
    add_pool_unjudged(ev)
    ev.add_argument(
        "--by",
        action="append",
        default=None,
        metavar="COL",
        help="column of --recs naming a system or segment; repeatable",
    )
    ev.add_argument(
        "--data",
        metavar="PATH",
        help="a joined long table (user, item, score, relevance) instead of --recs/--truth; "
        "a file or a quoted glob whose files are stacked",
    )
    ev.add_argument(
        "--aggregate",
        action="append",
        choices=AGGREGATIONS,
        default=None,
        help="aggregation over users (default: mean); repeatable, e.g. --aggregate mean "
        "--aggregate gmean",
    )
    ev.add_argument(
        "--ci",
        choices=("bootstrap", "t"),
        default=None,
        help="also each mean's standard error and confidence interval: se(M), ci_low(M), "
        "ci_high(M) (t: Student t; bootstrap: percentile, 10,000 resamples, seed 0)",
    )
    ev.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help="level of the --ci intervals, in (0, 1) (default: 0.95)",
    )
    ev.add_argument(
        "--n-items", type=int, metavar="N", help="catalog size (default: distinct items)"
    )
    add_side_inputs(ev)
    ev.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="auto",
        help="in memory or bucket by bucket (default: auto, from --memory-limit): "
        "evaluate's engine= (prk.Memory, prk.Buckets, prk.Partition, prk.Auto)",
    )
    ev.add_argument(
        "--memory-limit",
        metavar="SIZE",
        help="memory budget, e.g. 4GB (default: half of the available memory)",
    )
    ev.add_argument("--buckets", type=int, metavar="K", help="force K buckets of users")
    ev.add_argument("--temp-dir", type=Path, metavar="DIR", help="temporary files of bucketed runs")
    ev.set_defaults(handler=run)


def engine_option(args: argparse.Namespace) -> Any:
    """The ``engine=`` of ``evaluate`` from the command line's engine flags.

    ``--strategy``, ``--memory-limit``, ``--buckets`` and ``--temp-dir``; progress on
    stderr when it is a terminal.

    ``--strategy auto --buckets K`` forces K buckets of the input (a scan): read by
    one pass per bucket for K <= 2, else written once partitioned by bucket.
    """
    from polars_rankeval.engines.choice import Auto, Buckets, Memory, Partition

    if args.strategy == "memory":
        return Memory()
    options = {
        "memory_limit": args.memory_limit,
        "temp_dir": args.temp_dir,
        "progress": sys.stderr.isatty(),
    }
    if args.strategy == "auto" and args.buckets is None:
        return Auto(**options)
    kind = args.strategy
    if kind == "auto":
        kind = "buckets" if args.buckets <= 2 else "partition"
    return (Buckets if kind == "buckets" else Partition)(n_buckets=args.buckets, **options)


def _summary_form(args: argparse.Namespace) -> str:
    """``--summary auto``: long for the formats people read, wide for the others."""
    if args.summary != "auto":
        return str(args.summary)
    return "long" if args.format in ("table", "markdown") else "wide"


def run(args: argparse.Namespace) -> int:
    """Evaluate the metrics and write the summary (and ``--per-user``)."""
    from polars_rankeval.api.evaluate import evaluate, parse_metrics, summarize
    from polars_rankeval.plan.finish import long_summary, with_intervals

    if args.conventions is not None:  # library names: resolved before reading data
        from polars_rankeval.conventions.resolve import explicit_rules, shown_names

        if not args.metrics:
            msg = f"--conventions {args.conventions} needs -m with that library's metric names"
            raise UsageError(msg)
        metrics: Any = list(args.metrics)
        names = shown_names(args.conventions, metrics, **explicit_rules(vars(args), evaluate))
    else:
        metrics = parse_metrics(args.metrics or DEFAULT_METRICS)  # fail before reading data
        names = [m.name for m in metrics]
    args.summary = _summary_form(args)
    if args.ci is not None and args.per_user == "-":
        msg = (
            f"--ci {args.ci} gives intervals of the means; --per-user without FILE prints "
            "the per-user values instead of the means (give --per-user FILE)"
        )
        raise UsageError(msg)
    progress("reading ...")
    data, by = load_data(args)
    items, history = side_inputs(args)
    data = pooled(args, data, column_options(args, joined=True)["relevance"])
    progress(f"evaluating {len(metrics)} metric(s) ...")
    result = evaluate(
        data,
        metrics,
        **column_options(args, joined=True),
        ties=args.ties,
        by=by or None,
        per_user=args.per_user is not None,
        users=args.users,
        empty=args.empty,
        aggregate=args.aggregate or "mean",
        summary=args.summary,
        ci=args.ci if args.per_user is None else None,
        confidence=args.confidence,
        n_items=args.n_items,
        engine=engine_option(args),
        conventions=args.conventions,
        rank_positions=args.rank_positions,
        items=items,
        history=history,
    ).collect()
    if args.per_user in (None, "-"):
        write_frame(result, args.format, sys.stdout)
        return 0
    _write_per_user(result, Path(args.per_user))
    aggregate = args.aggregate or ["mean"]
    # zero and error were applied to the per-user values already.
    empty: Literal["skip", "skip_row"] = "skip_row" if args.empty == "skip_row" else "skip"
    summary = summarize(
        result.lazy(),
        names,
        by,
        aggregate=aggregate,
        empty=empty,
        ci=args.ci,
        confidence=args.confidence,
    )
    if args.summary == "long":
        summary = long_summary(summary, by, names, with_intervals(aggregate, args.ci))
    write_frame(summary.collect(), args.format, sys.stdout)
    return 0


def _write_per_user(frame: pl.DataFrame, path: Path) -> None:
    """Write the per-user table to ``path``; the format comes from the extension."""
    suffix = path.suffix.lower()
    writers: dict[str, Callable[[Path], None]] = {
        ".csv": frame.write_csv,
        ".tsv": lambda p: frame.write_csv(p, separator="\t"),
        ".parquet": frame.write_parquet,
        ".json": frame.write_json,
        ".ndjson": frame.write_ndjson,
        ".jsonl": frame.write_ndjson,
    }
    if suffix not in writers:
        msg = f"cannot write {str(path)!r}: use a .csv, .tsv, .parquet, .json or .ndjson file"
        raise ValueError(msg)
    write_atomically(path, writers[suffix])

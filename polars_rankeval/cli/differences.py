"""The ``differences`` and ``judgements`` subcommands: the users behind a comparison.

``differences`` lists the users where two systems differ most, both ways
(:func:`polars_rankeval.largest_differences`); ``judgements`` sets the metrics on
condensed lists (unjudged items removed) beside unjudged-as-non-relevant
(:func:`polars_rankeval.judgement_gaps`). Both read their input as ``compare`` does.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from polars_rankeval._utils.types import EMPTY_POLICIES, TIE_POLICIES, USER_UNIVERSES
from polars_rankeval.cli.compare import _compare_data, add_system_inputs
from polars_rankeval.cli.inputs import UsageError, add_side_inputs, pooled, side_inputs
from polars_rankeval.cli.output import FORMATS, write_frame

PARTS: tuple[str, ...] = ("both", "summary", "users")


def add_parser(sub: Any) -> None:
    """The ``differences`` and ``judgements`` subcommands' options."""
    dp = sub.add_parser(
        "differences",
        help="the users where two systems differ most, both ways",
        description=(
            "Per compared pair of systems (as compare pairs them) and metric, the N users "
            "with the largest difference in each direction, as a table keyed by user "
            "(polars_rankeval.largest_differences). Input as for compare."
        ),
    )
    add_system_inputs(dp)
    dp.add_argument(
        "--baseline",
        metavar="NAME",
        help="every system against this one (default: every pair, each against the one "
        "given first)",
    )
    _add_common(dp)
    dp.set_defaults(handler=run_differences)

    jp = sub.add_parser(
        "judgements",
        help="metrics with unjudged items removed (condensed lists) and as non-relevant",
        description=(
            "Per system and metric, the share of unjudged items in the top k, the metric "
            "on condensed lists (unjudged removed, Sakai 2007) and with unjudged as "
            "non-relevant, side by side; then the N users where the two differ most "
            "(polars_rankeval.judgement_gaps). Input as for compare."
        ),
    )
    add_system_inputs(jp)
    _add_common(jp)
    jp.add_argument(
        "--part",
        choices=PARTS,
        default="both",
        help="which table: the summary, the users, or both (table and markdown only; "
        "default: both)",
    )
    jp.set_defaults(handler=run_judgements)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-n", type=int, default=10, metavar="N", help="users per direction (default 10)"
    )
    parser.add_argument(
        "--tie-tolerance",
        type=float,
        default=1e-9,
        metavar="X",
        help="values within X are equal: not a difference (default 1e-9)",
    )
    parser.add_argument(
        "--ties", choices=TIE_POLICIES, default="expected", help="tie policy (default: expected)"
    )
    parser.add_argument(
        "--users", choices=USER_UNIVERSES, default="truth", help="users evaluated (default: truth)"
    )
    parser.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help="undefined per-user values (default: skip)",
    )
    add_side_inputs(parser)
    parser.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )


def _inputs(args: argparse.Namespace) -> tuple[Any, list[str] | None, list[str], dict[str, Any]]:
    from polars_rankeval.api.evaluate import parse_metrics

    metrics = [m.name for m in parse_metrics(args.metrics or ["ndcg@10"])]
    data, order = _compare_data(args)
    data = pooled(args, data, "relevance")
    items, history = side_inputs(args)
    options = {
        "ties": args.ties,
        "users": args.users,
        "empty": args.empty,
        "items": items,
        "history": history,
    }
    return data, order, metrics, options


def run_differences(args: argparse.Namespace) -> int:
    """List the largest per-user differences on standard output."""
    from polars_rankeval.analysis.differences import largest_differences

    data, order, metrics, options = _inputs(args)
    out = largest_differences(
        data,
        metrics,
        by=args.by,
        baseline=args.baseline,
        systems=order,
        n=args.n,
        tie_tolerance=args.tie_tolerance,
        **options,
    )
    write_frame(out, args.format, sys.stdout)
    return 0


def run_judgements(args: argparse.Namespace) -> int:
    """Write the judgement gaps (summary, users or both) on standard output."""
    from polars_rankeval.analysis.judgements import judgement_gaps

    if args.part == "both" and args.format in ("csv", "json"):
        msg = (
            f"--format {args.format} writes one table: pass --part summary or --part users "
            "(--part both is for table and markdown)"
        )
        raise UsageError(msg)
    data, _, metrics, options = _inputs(args)
    summary, users = judgement_gaps(
        data, metrics, by=args.by, n=args.n, tie_tolerance=args.tie_tolerance, **options
    )
    if args.part in ("both", "summary"):
        if args.part == "both":
            sys.stdout.write("Per system and metric:\n")
        write_frame(summary, args.format, sys.stdout)
    if args.part in ("both", "users"):
        if args.part == "both":
            sys.stdout.write(f"\nThe users where the two differ most (up to {args.n} each):\n")
        write_frame(users, args.format, sys.stdout)
    return 0

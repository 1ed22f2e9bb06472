"""The ``power`` subcommand: users needed to detect a difference, and post-hoc power.

Three questions, one table each:

- by default, the users a paired t test needs to detect ``--delta`` with ``--power``
  (:func:`polars_rankeval.sample_size`), from ``--sd`` given or from data (the observed
  sd of the per-user differences of every compared pair);
- ``--design paired_t|anova|ci``: Sakai's topic set size design
  (:func:`polars_rankeval.topic_set_size`), from ``--variance`` or from data;
- ``--achieved``: the post-hoc power of a paired t comparison of the data, beside the
  users its observed difference needs (:func:`polars_rankeval.achieved_power`).

The data are read as ``compare`` reads them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from polars_rankeval._utils.types import EMPTY_POLICIES, TIE_POLICIES, USER_UNIVERSES
from polars_rankeval.cli.compare import _compare_data, add_system_inputs
from polars_rankeval.cli.inputs import UsageError, add_side_inputs, pooled, side_inputs
from polars_rankeval.cli.output import FORMATS, write_frame

# The choices of analysis.power and analysis.topic_set_size (checked equal in the tests):
# the parser is built without importing the analysis.
ALTERNATIVES: tuple[str, ...] = ("one-sided", "two-sided")
DESIGNS: tuple[str, ...] = ("anova", "ci", "paired_t")
VARIANCE_ESTIMATES: tuple[str, ...] = ("one_way", "two_way")


def add_parser(sub: Any) -> None:
    """The ``power`` subcommand's options."""
    pp = sub.add_parser(
        "power",
        help="users needed to detect a difference (sample size, topic set size), post-hoc power",
        description=(
            "The users a paired t test needs to detect a mean difference --delta with power "
            "--power, from --sd (the sd of the per-user differences) or from data: one row "
            "per compared pair of systems, as compare pairs them "
            "(polars_rankeval.sample_size). --design: Sakai's topic set size design "
            "(polars_rankeval.topic_set_size). --achieved: the post-hoc power of a paired "
            "t comparison of the data (polars_rankeval.achieved_power). Input as for compare."
        ),
    )
    add_system_inputs(pp)
    pp.add_argument(
        "--delta",
        action="append",
        type=float,
        metavar="X",
        help="the mean difference to detect (the minimum detectable difference or range "
        "with --design), in the metric's units; repeatable",
    )
    pp.add_argument(
        "--sd", type=float, metavar="S", help="sd of the per-user differences (instead of data)"
    )
    pp.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    pp.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    pp.add_argument(
        "--alternative",
        choices=ALTERNATIVES,
        default="two-sided",
        help="two-sided (default) or one-sided test",
    )
    pp.add_argument(
        "--baseline",
        metavar="NAME",
        help="every system against this one (default: every pair, each against the one "
        "given first)",
    )
    pp.add_argument(
        "--design",
        choices=DESIGNS,
        help="Sakai's topic set size design: paired t test, one-way ANOVA over "
        "--n-systems, or a cap --half-width on the interval of a mean difference",
    )
    pp.add_argument(
        "--variance",
        type=float,
        metavar="V",
        help="with --design, instead of data: the variance of the per-user differences "
        "(paired_t, ci) or within a system (anova)",
    )
    pp.add_argument(
        "--n-systems", type=int, metavar="M", help="with --design anova: the systems compared"
    )
    pp.add_argument(
        "--half-width",
        action="append",
        type=float,
        metavar="H",
        help="with --design ci: the largest expected half-width; repeatable",
    )
    pp.add_argument(
        "--variance-estimate",
        choices=VARIANCE_ESTIMATES,
        default="two_way",
        help="with --design and data: residual variance of a two-way ANOVA without "
        "replication (default) or one-way",
    )
    pp.add_argument(
        "--achieved",
        action="store_true",
        help="post-hoc power of a paired t comparison of the data, with the users its "
        "observed difference needs at --power",
    )
    pp.add_argument(
        "--ties", choices=TIE_POLICIES, default="expected", help="tie policy (default: expected)"
    )
    pp.add_argument(
        "--users", choices=USER_UNIVERSES, default="truth", help="users evaluated (default: truth)"
    )
    pp.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help="undefined per-user values (default: skip)",
    )
    add_side_inputs(pp)
    pp.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    pp.set_defaults(handler=run_power)


def _has_data(args: argparse.Namespace) -> bool:
    return bool(args.data or args.recs or args.runs or args.truth or args.qrels)


def _data(args: argparse.Namespace) -> tuple[Any, list[str] | None, list[str], dict[str, Any]]:
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


def run_power(args: argparse.Namespace) -> int:
    """Print the sample size, topic set size or achieved power table on standard output."""
    from polars_rankeval.analysis.compare import compare
    from polars_rankeval.analysis.power import achieved_power, sample_size
    from polars_rankeval.analysis.topic_set_size import topic_set_size

    given = args.sd is not None or args.variance is not None
    if given and _has_data(args):
        msg = "give --sd/--variance or data (--data, --recs, --run), not both"
        raise UsageError(msg)
    if args.design is None:
        for flag, value in (
            ("--variance", args.variance),
            ("--n-systems", args.n_systems),
            ("--half-width", args.half_width),
        ):
            if value is not None:
                msg = f"{flag} is for --design (Sakai's topic set size design)"
                raise UsageError(msg)
    if args.achieved:
        if args.design is not None or given or args.delta:
            msg = "--achieved reads the difference and sd from the data: no --delta, --sd, --design"
            raise UsageError(msg)
        if not _has_data(args):
            msg = "--achieved needs data (--data, --recs/--truth or --run/--qrels)"
            raise UsageError(msg)
        data, order, metrics, options = _data(args)
        result = compare(
            data, metrics, by=args.by, baseline=args.baseline, systems=order, test="t",
            alpha=args.alpha, ci="none", **options,
        )  # fmt: skip
        out = achieved_power(result, power=args.power, alternative=args.alternative)
    elif args.design is not None:
        if args.sd is not None:
            msg = "--design takes --variance (the design's variance), not --sd"
            raise UsageError(msg)
        if args.baseline is not None:
            msg = "--design estimates one variance over all the systems: no --baseline"
            raise UsageError(msg)
        common: dict[str, Any] = {
            "design": args.design,
            "min_diff": args.delta,
            "half_width": args.half_width,
            "n_systems": args.n_systems,
            "alpha": args.alpha,
            "power": args.power,
        }
        if args.variance is not None:
            out = topic_set_size(variance=args.variance, **common)
        else:
            if not _has_data(args):
                msg = "--design needs --variance or data (--data, --recs/--truth, --run/--qrels)"
                raise UsageError(msg)
            data, order, metrics, options = _data(args)
            out = topic_set_size(
                data, metrics, by=args.by, systems=order,
                variance_estimate=args.variance_estimate, **common, **options,
            )  # fmt: skip
    else:
        if not args.delta:
            msg = "power needs --delta (the mean difference to detect), or --achieved"
            raise UsageError(msg)
        common = {
            "delta": args.delta,
            "alpha": args.alpha,
            "power": args.power,
            "alternative": args.alternative,
        }
        if args.sd is not None:
            out = sample_size(sd=args.sd, **common)
        else:
            if not _has_data(args):
                msg = "power needs --sd or data (--data, --recs/--truth or --run/--qrels)"
                raise UsageError(msg)
            data, order, metrics, options = _data(args)
            out = sample_size(
                data, metrics, by=args.by, baseline=args.baseline, systems=order,
                **common, **options,
            )  # fmt: skip
    write_frame(out, args.format, sys.stdout)
    return 0

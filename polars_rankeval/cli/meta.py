"""The ``meta`` subcommand: meta-evaluation of the metrics on a set of systems and users.

One ``evaluate(per_user=True)`` plan over the input (read as ``compare`` reads it), then
the discriminative power and ASLs (:func:`polars_rankeval.discriminative_power_per_user`),
the swap rates (:func:`polars_rankeval.swap_rate_per_user`) and the agreement of the
metrics' system orderings (:func:`polars_rankeval.metric_agreement_per_user`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from polars_rankeval._utils.types import EMPTY_POLICIES, TIE_POLICIES, USER_UNIVERSES
from polars_rankeval.cli.compare import add_system_inputs
from polars_rankeval.cli.differences import _inputs
from polars_rankeval.cli.inputs import UsageError, add_side_inputs
from polars_rankeval.cli.output import FORMATS, write_frame

#: The tables ``--part`` chooses; ``all`` is power, swaps and agreement.
PARTS: tuple[str, ...] = ("all", "power", "asl", "swaps", "swap-bins", "agreement")

_TITLES = {
    "power": "Discriminative power (share of system pairs with ASL <= alpha):",
    "asl": "ASL of every system pair, sorted (the ASL curves):",
    "swaps": "Swap rates between disjoint user subsets:",
    "swap-bins": "Swap rates by |difference| on the first subset:",
    "agreement": "Agreement of the metrics' system orderings:",
}


def add_parser(sub: Any) -> None:
    """The ``meta`` subcommand's options."""
    mp = sub.add_parser(
        "meta",
        help="meta-evaluation: discriminative power, swap rates, metric agreement",
        description=(
            "Per metric, the share of system pairs significantly different (Sakai's "
            "discriminative power, with every pair's ASL), the swap rates of system pairs "
            "between disjoint user subsets (Voorhees & Buckley), and Kendall's tau and "
            "tau_ap between the system orderings of every two metrics; from one "
            "evaluate plan. Input as for compare."
        ),
    )
    add_system_inputs(mp)
    mp.add_argument(
        "--part",
        choices=PARTS,
        default="all",
        help="which table (all: power, swaps and agreement; table and markdown only; default: all)",
    )
    mp.add_argument(
        "--test",
        choices=("bootstrap", "tukey"),
        default="bootstrap",
        help="test of the ASLs (default: bootstrap)",
    )
    mp.add_argument(
        "--statistic",
        choices=("t", "mean"),
        default="t",
        help="the bootstrap's statistic: t (studentized, Sakai 2006) or mean (compare's); "
        "default: t",
    )
    mp.add_argument(
        "--alpha", type=float, default=0.05, metavar="A", help="significance level (0.05)"
    )
    mp.add_argument(
        "--resamples",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples or Tukey permutations (default 1000)",
    )
    mp.add_argument(
        "--subset-size",
        type=int,
        action="append",
        dest="subset_sizes",
        metavar="C",
        help="users per subset of the swap rates, repeatable (default: n/20, n/8, n/4, n/2)",
    )
    mp.add_argument(
        "--trials", type=int, default=100, metavar="T", help="trials per subset size (100)"
    )
    mp.add_argument("--bins", type=int, default=10, metavar="K", help="bins of the swap rates (10)")
    mp.add_argument("--seed", type=int, default=0, help="seed of the resampling (0)")
    mp.add_argument(
        "--ties", choices=TIE_POLICIES, default="expected", help="tie policy (default: expected)"
    )
    mp.add_argument(
        "--users", choices=USER_UNIVERSES, default="truth", help="users evaluated (default: truth)"
    )
    mp.add_argument(
        "--empty",
        choices=EMPTY_POLICIES,
        default="skip",
        help="undefined per-user values (default: skip)",
    )
    add_side_inputs(mp)
    mp.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    mp.set_defaults(handler=run_meta)


def run_meta(args: argparse.Namespace) -> int:
    """Write the meta-evaluation tables on standard output."""
    from polars_rankeval.analysis._system_values import evaluate_per_user
    from polars_rankeval.analysis.discriminative import discriminative_power_per_user
    from polars_rankeval.analysis.metric_agreement import metric_agreement_per_user
    from polars_rankeval.analysis.swap_rate import swap_rate_per_user

    if args.part == "all" and args.format in ("csv", "json"):
        msg = (
            f"--format {args.format} writes one table: pass --part power, asl, swaps, "
            "swap-bins or agreement (--part all is for table and markdown)"
        )
        raise UsageError(msg)
    data, order, metrics, options = _inputs(args)
    if args.part == "agreement" and len(metrics) < 2:
        msg = f"--part agreement needs at least 2 metrics (-m), got {len(metrics)}"
        raise UsageError(msg)
    frame, names, found = evaluate_per_user(
        data, metrics, by=args.by, options=options, caller="meta"
    )
    systems = order if order is not None else found
    wanted = ("power", "swaps", "agreement") if args.part == "all" else (args.part,)
    tables = {}
    if "power" in wanted or "asl" in wanted:
        power = discriminative_power_per_user(
            frame,
            names,
            by=args.by,
            systems=systems,
            test=args.test,
            statistic=args.statistic,
            alpha=args.alpha,
            n_resamples=args.resamples,
            seed=args.seed,
        )
        tables["power"], tables["asl"] = power.summary, power.asl
    if "swaps" in wanted or "swap-bins" in wanted:
        swaps = swap_rate_per_user(
            frame,
            names,
            by=args.by,
            systems=systems,
            subset_sizes=args.subset_sizes,
            n_trials=args.trials,
            bins=args.bins,
            seed=args.seed,
        )
        tables["swaps"], tables["swap-bins"] = swaps.summary, swaps.bins
    if "agreement" in wanted and len(names) >= 2:
        tables["agreement"] = metric_agreement_per_user(frame, names, by=args.by, systems=systems)
    first = True
    for part in wanted:
        if args.part == "all":
            sys.stdout.write(("" if first else "\n") + _TITLES[part] + "\n")
            first = False
            if part not in tables:
                sys.stdout.write("(needs at least 2 metrics: give -m more than once)\n")
                continue
        write_frame(tables[part], args.format, sys.stdout)
    return 0

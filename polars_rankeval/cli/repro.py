"""The ``repro`` subcommand: reproducibility (and replicability) of a run, as repro_eval.

``repro`` sets an original run beside its reproduction (same topics and qrels):
Kendall's tau Union and RBO of the rankings, RMSE, nRMSE and the paired t-test of the
per-topic scores, and with a baseline pair ER and DeltaRI
(:func:`polars_rankeval.reproducibility`). With ``--replicated-qrels`` the second run
is a replication on another collection: the unpaired t-test, ER and DeltaRI
(:func:`polars_rankeval.replicability`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval.cli.inputs import TREC_SUFFIXES, UsageError, read_table
from polars_rankeval.cli.output import FORMATS, write_frame

PARTS: tuple[str, ...] = ("all", "ordering", "topics", "effectiveness", "effects")


def add_parser(sub: Any) -> None:
    """The ``repro`` subcommand's options."""
    rp = sub.add_parser(
        "repro",
        help="reproducibility measures of a reproduced run (KTU, RBO, RMSE, ER, DeltaRI)",
        description=(
            "Compare an original run with its reproduction, as repro_eval (Breuer et al. "
            "2020) does: Kendall's tau Union and RBO of the rankings, RMSE, nRMSE and "
            "paired t-tests of the per-topic scores, and with a baseline pair the effect "
            "ratio and delta relative improvement (polars_rankeval.reproducibility). With "
            "--replicated-qrels, a replication on other topics: unpaired t-tests, ER and "
            "DeltaRI (polars_rankeval.replicability). Runs and qrels are TREC files "
            "unless their extension says otherwise (.parquet, .csv ...)."
        ),
    )
    rp.add_argument("--qrels", required=True, metavar="PATH", help="qrels of the original run")
    rp.add_argument("--orig-run", required=True, metavar="PATH", help="the original (advanced) run")
    rp.add_argument(
        "--repr-run", required=True, metavar="PATH", help="its reproduction (or replication)"
    )
    rp.add_argument("--orig-baseline", metavar="PATH", help="the original baseline run")
    rp.add_argument("--repr-baseline", metavar="PATH", help="the reproduced baseline run")
    rp.add_argument(
        "--replicated-qrels",
        metavar="PATH",
        help="qrels of another collection: the second runs are a replication on it",
    )
    rp.add_argument(
        "-m",
        "--metrics",
        nargs="+",
        default=None,
        metavar="METRIC",
        help="per-topic metrics (default: map ndcg@10 precision@10)",
    )
    rp.add_argument(
        "--depth",
        type=int,
        default=1000,
        metavar="K",
        help="top documents kept per topic of every run (repro_eval's trim; default 1000)",
    )
    rp.add_argument(
        "--rbo-p", type=float, default=0.95, metavar="PERSISTENCE", help="RBO's persistence p"
    )
    rp.add_argument(
        "--rbo-depth", type=int, default=1000, metavar="D", help="RBO's depth (default 1000)"
    )
    rp.add_argument(
        "--part",
        choices=PARTS,
        default="all",
        help="which table: ordering (KTU, RBO means), topics (per topic), effectiveness, "
        "effects, or all (table and markdown only; default: all)",
    )
    rp.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    rp.set_defaults(handler=run_repro)


def _read(path: str, kind: str, columns: tuple[str, ...]) -> pl.LazyFrame:
    """A run or qrels file, lazily: TREC unless the extension names another format."""
    file = Path(path)
    known = file.suffix.lower() in (".parquet", ".pq", ".csv", ".tsv", ".tab", ".ndjson", ".jsonl")
    fmt = None if known or file.suffix.lower() in TREC_SUFFIXES else kind
    return read_table(file, fmt).select(columns)


def run_repro(args: argparse.Namespace) -> int:
    """Print the reproducibility (or replicability) tables on standard output."""
    from polars_rankeval.analysis.reproducibility import (
        DEFAULT_METRICS,
        replicability,
        reproducibility,
    )

    if args.part == "all" and args.format in ("csv", "json"):
        msg = (
            f"--format {args.format} writes one table: pass --part ordering, topics, "
            "effectiveness or effects (--part all is for table and markdown)"
        )
        raise UsageError(msg)
    if (args.orig_baseline is None) != (args.repr_baseline is None):
        msg = "--orig-baseline and --repr-baseline go together: pass both or neither"
        raise UsageError(msg)
    run_columns = ("user", "item", "score")
    qrels = _read(args.qrels, "trec-qrels", ("user", "item", "relevance"))
    runs = [
        None if path is None else _read(path, "trec-run", run_columns)
        for path in (args.orig_run, args.repr_run, args.orig_baseline, args.repr_baseline)
    ]
    metrics = args.metrics or list(DEFAULT_METRICS)
    tables: list[tuple[str, str, pl.DataFrame | None]]
    if args.replicated_qrels is not None:
        if args.part in ("ordering", "topics"):
            msg = f"--part {args.part}: a replication (--replicated-qrels) has no ordering tables"
            raise UsageError(msg)
        out = replicability(
            runs[0],  # type: ignore[arg-type]
            runs[1],  # type: ignore[arg-type]
            qrels_original=qrels,
            qrels_replicated=_read(
                args.replicated_qrels, "trec-qrels", ("user", "item", "relevance")
            ),
            baseline_original=runs[2],
            baseline_replicated=runs[3],
            metrics=metrics,
            depth=args.depth,
        )
        tables = [
            ("effectiveness", "Per-topic scores (unpaired t-test):", out.effectiveness),
            ("effects", "Effect of the advanced run over the baseline:", out.effects),
        ]
    else:
        rpd = reproducibility(
            runs[0],  # type: ignore[arg-type]
            runs[1],  # type: ignore[arg-type]
            qrels=qrels,
            baseline_original=runs[2],
            baseline_reproduced=runs[3],
            metrics=metrics,
            depth=args.depth,
            rbo_p=args.rbo_p,
            rbo_depth=args.rbo_depth,
        )
        tables = [
            ("ordering", "Ordering of the documents (means over the topics):", rpd.ordering),
            ("topics", "Ordering per topic:", rpd.ordering_per_topic),
            ("effectiveness", "Per-topic scores (RMSE, paired t-test):", rpd.effectiveness),
            ("effects", "Effect of the advanced run over the baseline:", rpd.effects),
        ]
    if args.part == "all":
        tables = [t for t in tables if t[0] != "topics"]  # per topic: --part topics
    else:
        tables = [t for t in tables if t[0] == args.part]
        if tables and tables[0][2] is None:
            msg = "--part effects needs the baseline pair (--orig-baseline, --repr-baseline)"
            raise UsageError(msg)
    first = True
    for _, title, frame in tables:
        if frame is None:
            continue
        if args.part == "all":
            sys.stdout.write(("" if first else "\n") + title + "\n")
        write_frame(frame, args.format, sys.stdout)
        first = False
    return 0

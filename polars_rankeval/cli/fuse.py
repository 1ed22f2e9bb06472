"""The ``fuse`` subcommand: fuse TREC runs into one TREC run (:func:`polars_rankeval.fuse`)."""

from __future__ import annotations

import argparse
from typing import Any

from polars_rankeval.cli.inputs import UsageError


def add_parser(sub: Any) -> None:
    """The ``fuse`` subcommand's options."""
    from polars_rankeval.fusion.normalize import NORMS

    fu = sub.add_parser(
        "fuse",
        help="fuse TREC runs into one (RRF, CombMNZ, Borda, ... every method of ranx)",
        description=(
            "Fuse two or more TREC runs into one TREC run: every run's scores are "
            "normalised per query (--norm), then combined (--method). The methods, with "
            "their parameters, are listed by python -c 'import polars_rankeval as prk; "
            "print(prk.list_fusion_methods())'."
        ),
    )
    fu.add_argument(
        "--run",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="a TREC run (repeat: at least two); NAME defaults to the file name",
    )
    fu.add_argument(
        "--method",
        default="wsum",
        metavar="NAME",
        help="the fusion method (default: wsum, as prk.fuse and ranx)",
    )
    fu.add_argument(
        "--norm",
        default="auto",
        metavar="NORM",
        help=f"normalisation: one of {', '.join(NORMS)}, none, or auto (the method's own; default)",
    )
    fu.add_argument(
        "--weight",
        action="append",
        type=float,
        metavar="W",
        help="one weight per --run, in order (weighted methods)",
    )
    fu.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the method, e.g. k=60 for rrf (repeat)",
    )
    fu.add_argument(
        "--qrels",
        metavar="PATH",
        help="training relevance judgments (TREC qrels) for the methods that learn",
    )
    fu.add_argument(
        "--missing",
        type=float,
        metavar="SCORE",
        help="a score for an item a run lacks (score-combining methods)",
    )
    fu.add_argument("--tag", default="fused", help="the run tag written (default: fused)")
    fu.add_argument("--out", required=True, metavar="PATH", help="the fused TREC run to write")
    fu.set_defaults(handler=run)


def _runs(values: list[str]) -> dict[str, str]:
    runs: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            from pathlib import Path

            name, path = Path(value).name, value
        if name in runs:
            msg = f"--run: two runs named {name!r}; name them with NAME=PATH"
            raise UsageError(msg)
        runs[name] = path
    return runs


def _params(values: list[str], method: str) -> dict[str, Any]:
    from polars_rankeval.fusion.registry import get_method

    spec = get_method(method)
    out: dict[str, Any] = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep:
            msg = f"--param must read NAME=VALUE, got {value!r}"
            raise UsageError(msg)
        param = spec.params.get(name)
        try:
            out[name] = int(text) if param is not None and param.kind == "int" else float(text)
        except ValueError:
            msg = f"--param {name}: not a number, got {text!r}"
            raise UsageError(msg) from None
    return out


def run(args: argparse.Namespace) -> int:
    """Fuse the runs and write the fused run."""
    from polars_rankeval.fusion.fuse import fuse
    from polars_rankeval.io.trec.read import scan_qrels
    from polars_rankeval.io.trec.write import write_run

    qrels = scan_qrels(args.qrels) if args.qrels else None
    fused = fuse(
        _runs(args.run),
        method=args.method,
        norm=None if args.norm == "none" else args.norm,
        weights=args.weight,
        params=_params(args.param, args.method),
        qrels=qrels,
        missing=args.missing,
    )
    write_run(fused.lazy().collect(), args.out, tag=args.tag)
    return 0

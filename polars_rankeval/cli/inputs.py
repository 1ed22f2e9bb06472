"""The command line's inputs: tables, globs, ``NAME=PATH`` systems and side inputs.

Reading ``--recs``/``--truth``/``--data`` (parquet, csv, tsv, ndjson, TREC files), the
options shared by ``evaluate`` and ``compare`` (``--history``, ``--items``,
``--pool-unjudged``, ``--conventions``) and :class:`UsageError`, a mistake in the
command line that argparse cannot see.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval.cli.output import PROG
from polars_rankeval.conventions.presets import PRESETS

SYSTEM_COLUMN = "system"
"""The column naming the system of each ``--recs`` file when several are given."""
ID_TYPES: tuple[str, ...] = ("infer", "string")
IDS: tuple[str, str] = ("user", "item")
"""The id columns of compare's inputs (it has no --user/--item)."""
_SCANNERS: dict[str, Callable[[Path], pl.LazyFrame]] = {
    ".parquet": pl.scan_parquet,
    ".pq": pl.scan_parquet,
    ".csv": pl.scan_csv,
    ".tsv": lambda path: pl.scan_csv(path, separator="\t"),
    ".tab": lambda path: pl.scan_csv(path, separator="\t"),
    ".ndjson": pl.scan_ndjson,
    ".jsonl": pl.scan_ndjson,
}


# TREC files: a run (qid Q0 docno rank score tag) or qrels (qid iter docno rel).
TREC_SUFFIXES = {".run": "trec-run", ".qrels": "trec-qrels", ".div": "trec-div-qrels"}
INPUT_FORMATS: tuple[str, ...] = (
    "parquet", "csv", "tsv", "ndjson", "trec-run", "trec-qrels", "trec-div-qrels",
)  # fmt: skip
_TEXT_SUFFIXES = (".csv", ".tsv", ".tab")
_FORMAT_SUFFIX = {"parquet": ".parquet", "csv": ".csv", "tsv": ".tsv", "ndjson": ".ndjson"}


class UsageError(ValueError):
    """A mistake in the command line that argparse cannot see (e.g. --recs without --truth)."""


def add_side_inputs(parser: argparse.ArgumentParser) -> None:
    """``--history`` and ``--items`` (evaluate and compare): evaluate's side inputs."""
    parser.add_argument(
        "--history",
        metavar="PATH",
        help=(
            "the users' past interactions, e.g. the training data (user and item "
            "columns, one row per interaction; a file or a quoted glob): history= of "
            "evaluate, read by novelty, arp (popularity_bias), serendipity, "
            "unexpectedness, miscalibration, rsp and intra_list_diversity(distance="
            "cooccurrence); novelty@10 and arp@10 take the item popularity from it"
        ),
    )
    parser.add_argument(
        "--items",
        metavar="PATH",
        help=(
            "an item side table, one row per item (e.g. popularity, long_tail, "
            "categories, features columns; a file or a quoted glob): items= of evaluate"
        ),
    )


def side_inputs(args: argparse.Namespace) -> tuple[pl.LazyFrame | None, pl.LazyFrame | None]:
    """``items=`` and ``history=`` of evaluate from ``--items`` and ``--history``."""
    out: dict[str, pl.LazyFrame] = {}
    ids = [getattr(args, "user", "user"), getattr(args, "item", "item")]
    for option, key in (("--history", "history"), ("--items", "items")):
        pattern = getattr(args, key, None)
        if pattern is None:
            continue
        files = _files_of(option, pattern)
        out[key] = read_files(files, None, text_ids=_text_ids(args), ids=ids)
    return out.get("items"), out.get("history")


def add_pool_unjudged(parser: argparse.ArgumentParser) -> None:
    """``--pool-unjudged [COL]`` (evaluate and compare)."""
    parser.add_argument(
        "--pool-unjudged",
        nargs="?",
        const="pooled",
        default=None,
        metavar="COL",
        help=(
            "read truth relevance < 0 as trec_eval's infAP does: pooled but not judged "
            "(the relevance becomes unjudged) and add a boolean column COL (default: "
            "pooled), true for every row judged in the truth, for -m 'inf_ap(pool=COL)' "
            "('infAP(pool=pooled)' under --conventions trec_eval or ir_measures); "
            "without it a negative relevance is an error"
        ),
    )


def pooled(args: argparse.Namespace, data: pl.LazyFrame, relevance: str) -> pl.LazyFrame:
    """``--pool-unjudged``: :func:`polars_rankeval.trec.pool_unjudged` on the long frame."""
    if args.pool_unjudged is None:
        return data
    from polars_rankeval.io.trec.read import pool_unjudged

    out = pool_unjudged(data, relevance=relevance, pool=args.pool_unjudged)
    assert isinstance(out, pl.LazyFrame)  # lazy in, lazy out
    return out


def add_conventions(parser: argparse.ArgumentParser) -> None:
    """``--conventions LIBRARY`` (evaluate and compare)."""
    parser.add_argument(
        "--conventions",
        choices=tuple(PRESETS),
        default=None,
        metavar="LIBRARY",
        help=(
            "reproduce a library's numbers: -m takes that library's metric names (e.g. "
            "MAP@10 for rectools), ties/empty/users default to its rules and the columns "
            "read NAME@k[LIBRARY]; one of " + ", ".join(PRESETS)
        ),
    )


# --------------------------------------------------------------------------- input
def read_table(path: Path, fmt: str | None = None, *, text_ids: Sequence[str] = ()) -> pl.LazyFrame:
    """Scan a Parquet, CSV, TSV, NDJSON or TREC file lazily.

    Parameters
    ----------
    path
        The file; its suffix (case-insensitive) picks the reader: ``.parquet``,
        ``.csv``, ``.tsv``, ``.ndjson``/``.jsonl``, ``.run`` (TREC run) or ``.qrels``.
    fmt
        One of :data:`INPUT_FORMATS` to override the suffix.
    text_ids
        Columns read as text (``--id-type string``): a CSV or TSV file's values are
        taken as written (``"007"`` stays ``"007"``), other formats are cast to String.

    Returns
    -------
    polars.LazyFrame
        The file, not yet read.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the extension is not one of the supported ones.
    """
    if not path.is_file():
        msg = f"no such file: {str(path)!r}"
        raise FileNotFoundError(msg)
    kind = fmt or TREC_SUFFIXES.get(path.suffix.lower())
    if kind == "trec-run":
        from polars_rankeval.io.trec.read import scan_run

        return scan_run(path).select("user", "item", "score")
    if kind == "trec-qrels":
        from polars_rankeval.io.trec.read import scan_qrels

        return scan_qrels(path).select("user", "item", "relevance")
    if kind == "trec-div-qrels":
        from polars_rankeval.io.trec.read import scan_diversity_qrels

        return scan_diversity_qrels(path)
    suffix = _FORMAT_SUFFIX[kind] if kind else path.suffix.lower()
    if text_ids and suffix in _TEXT_SUFFIXES:
        overrides = dict.fromkeys(text_ids, pl.String)
        separator = "," if suffix == ".csv" else "\t"
        frame = pl.scan_csv(path, separator=separator, schema_overrides=overrides)
        return _drop_blank_lines(frame)
    scan = _SCANNERS.get(suffix)
    if scan is None:
        known = ", ".join([*sorted(_SCANNERS), *TREC_SUFFIXES])
        msg = (
            f"cannot tell the format of {str(path)!r} from its extension; use one of "
            f"{known}, or --recs-format/--truth-format"
        )
        raise ValueError(msg)
    frame = scan(path)
    if suffix in _TEXT_SUFFIXES:
        frame = _drop_blank_lines(frame)
    return _as_text_ids(frame, text_ids) if text_ids else frame


def _as_text_ids(frame: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
    """Cast the id columns present in ``frame`` to String (``--id-type string``)."""
    schema = frame.collect_schema()
    return frame.with_columns(pl.col(c).cast(pl.String) for c in columns if c in schema)


def _text_ids(args: argparse.Namespace) -> list[str]:
    return [args.user, args.item] if getattr(args, "id_type", "infer") == "string" else []


def _drop_blank_lines(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Leave out the rows of a CSV/TSV file with no value at all (blank lines).

    Polars reads a blank line (e.g. the empty line after a file's last newline) as a
    row of nulls; a row with a value in some column keeps its nulls, which the checks
    of ``evaluate`` report (a null id is an error).
    """
    return frame.filter(~pl.all_horizontal(pl.all().is_null()))


_GLOB_CHARS = "*?["


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in _GLOB_CHARS)


def _matching_files(pattern: str) -> list[Path]:
    """The files a path or glob (``*``, ``?``, ``[...]``, ``**``) names, sorted."""
    if _is_glob(pattern):
        return sorted(p for p in map(Path, glob.glob(pattern, recursive=True)) if p.is_file())
    path = Path(pattern)
    return [path] if path.is_file() else []


def _files_of(option: str, pattern: str) -> list[Path]:
    """The files of a path or glob argument; a ``FileNotFoundError`` when none."""
    files = _matching_files(pattern)
    if not files:
        msg = f"{option} {pattern!r} matches no file" if _is_glob(pattern) else None
        raise FileNotFoundError(msg or f"no such file: {pattern!r}")
    return files


def _plain_name(text: str) -> bool:
    """A system name: not empty, no path separator, no glob character, no '='."""
    return bool(text) and not any(ch in text for ch in ("/", os.sep, "=", *_GLOB_CHARS))


def named_files(spec: str, option: str) -> tuple[str | None, str, list[Path]]:
    """Read a ``[NAME=]PATTERN`` argument: the name (or None), the pattern, its files.

    The whole argument is a path (or glob) when it names files, even with a ``=`` in
    it (``runs/bm25_k1=0.9.run``). Otherwise it is split on the first ``=`` when the
    left part is a plain name (no path separator or glob character) and the right
    part names files.

    Raises
    ------
    FileNotFoundError
        If neither reading names a file; the message gives both readings.
    """
    files = _matching_files(spec)
    if files:
        return None, spec, files
    name, eq, rest = spec.partition("=")
    if eq and _plain_name(name):
        files = _matching_files(rest)
        if files:
            return name, rest, files
        msg = (
            f"{option} {spec!r}: no file {spec!r}, and no file {rest!r} for a system named {name!r}"
        )
        raise FileNotFoundError(msg)
    if _is_glob(spec):
        msg = f"{option} {spec!r} matches no file"
        raise FileNotFoundError(msg)
    msg = f"no such file: {spec!r}"
    raise FileNotFoundError(msg)


def default_name(pattern: str) -> str | None:
    """A system's name from its pattern: the file name without its extension.

    ``bm25_k1=0.9`` for ``runs/bm25_k1=0.9.run``; None for a glob (``runs/*.run``).
    """
    stem = Path(pattern).stem
    return None if _is_glob(stem) or not stem else stem


def read_files(
    files: Sequence[Path],
    fmt: str | None,
    *,
    text_ids: Sequence[str] = (),
    ids: Sequence[str] = (),
) -> pl.LazyFrame:
    """The files of one argument (a path or the matches of a glob) as one frame.

    The files' rows are stacked (columns matched by name); the ``ids`` columns must
    have one dtype in every file.
    """
    frames = [read_table(p, fmt, text_ids=text_ids) for p in files]
    if len(frames) == 1:
        return frames[0]
    _same_id_dtypes([str(p) for p in files], frames, ids)
    return pl.concat(frames, how="diagonal_relaxed")


def _same_id_dtypes(
    names: Sequence[str], frames: Sequence[pl.LazyFrame], ids: Sequence[str]
) -> None:
    """The ``ids`` columns have one dtype in every frame (no silent cast when stacked)."""
    first = frames[0].collect_schema()
    for name, frame in zip(names[1:], frames[1:], strict=True):
        schema = frame.collect_schema()
        for column in ids:
            if column in first and column in schema and first[column] != schema[column]:
                msg = (
                    f"column {column!r} has dtype {first[column]} in {names[0]!r} but "
                    f"{schema[column]} in {name!r}; pass --id-type string to read the "
                    "ids of every file as text"
                )
                raise TypeError(msg)


def several_files(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The ``--recs``/``--run``/``--data`` arguments that matched several files."""
    return list(getattr(args, "several_files", []))


def stack_systems(
    args: argparse.Namespace,
    specs: Sequence[str],
    option: str,
    column: str,
    read: Callable[[list[Path]], pl.LazyFrame],
    labels: Sequence[str] | None = None,
    ids: Sequence[str] = (),
) -> tuple[pl.LazyFrame, list[str] | None]:
    """One system per ``[NAME=]PATTERN`` argument, the files of a glob stacked.

    One argument without a name: its files as they are (a ``system`` column of the
    files, if any, is the caller's ``--by``). Several arguments (or a name): one
    system each, stacked with ``column`` holding its name: ``NAME=``, else the
    ``--system`` label of that argument (in order), else the file name without its
    extension; a glob without a name is an error then. Returns the frame and the
    systems' names in the order given (None when no ``column`` was added).
    """
    parsed = [named_files(spec, option) for spec in specs]
    args.several_files = [(pattern, len(files)) for _, pattern, files in parsed if len(files) > 1]
    seen: dict[Path, str] = {}
    for _, pattern, files in parsed:
        for path in files:
            if path in seen:
                msg = f"{option} names the file {str(path)!r} twice ({seen[path]!r}, {pattern!r})"
                raise UsageError(msg)
            seen[path] = pattern
    frames = [read(files) for _, _, files in parsed]
    _same_id_dtypes([pattern for _, pattern, _ in parsed], frames, ids)
    if len(parsed) == 1 and not labels and parsed[0][0] is None:
        return frames[0], None
    if labels:
        if len(labels) != len(parsed):
            msg = (
                f"--system is given {len(labels)} time(s) but {option} names "
                f"{len(parsed)} system(s); give one --system per {option}, in order"
            )
            raise UsageError(msg)
        named = [spec for spec, (name, _, _) in zip(specs, parsed, strict=True) if name]
        if named:
            msg = f"{option} {named[0]!r} has a NAME= and --system names it too; use one"
            raise UsageError(msg)
        names = list(labels)
    else:
        names = []
        for name, pattern, _ in parsed:
            found = name or default_name(pattern)
            if found is None:
                msg = (
                    f"{option} {pattern!r} is one system among several and a glob has no "
                    f"name: name it, {option} NAME={pattern!r} (or --system NAME)"
                )
                raise UsageError(msg)
            names.append(found)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        msg = (
            f"several {option} arguments have the system name "
            f"{', '.join(map(repr, repeated))}; name them with {option} NAME=PATH"
        )
        raise UsageError(msg)
    for (_, pattern, _), frame in zip(parsed, frames, strict=True):
        if column in frame.collect_schema():
            msg = (
                f"{pattern!r} already has a {column!r} column; with several {option} "
                f"arguments (or a name), each {option} is one system"
            )
            raise UsageError(msg)
    labelled = [f.with_columns(pl.lit(n).alias(column)) for f, n in zip(frames, names, strict=True)]
    return pl.concat(labelled, how="diagonal_relaxed"), names


def read_recs(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str]]:
    """The ``--recs`` arguments as one frame, and the ``by`` columns to evaluate with.

    Each ``--recs [NAME=]PATTERN`` is one system: a file, or the files a glob
    matches, stacked (the partitions of one model's output). One ``--recs`` without a
    name or ``--system``: the files as they are. Several (or a name): one system
    each, in a ``system`` column that becomes the first ``by`` column.
    """
    specs = args.recs if isinstance(args.recs, list) else [str(args.recs)]
    by = list(args.by or [])
    text_ids, ids = _text_ids(args), [args.user, args.item]

    def read(files: list[Path]) -> pl.LazyFrame:
        return read_files(files, args.recs_format, text_ids=text_ids, ids=ids)

    frame, labelled = stack_systems(
        args, specs, "--recs", SYSTEM_COLUMN, read, getattr(args, "system", None), ids
    )
    if not labelled:
        return frame, by
    if SYSTEM_COLUMN in by:
        msg = f"--by {SYSTEM_COLUMN} is implied by several --recs (or --system or NAME=)"
        raise UsageError(msg)
    return frame, [SYSTEM_COLUMN, *by]


def read_data(args: argparse.Namespace) -> pl.LazyFrame:
    """``--data PATTERN``: a joined long table, the files of a glob stacked."""
    pattern = str(args.data)
    files = _files_of("--data", pattern)
    args.several_files = [(str(args.data), len(files))] if len(files) > 1 else []
    ids = [getattr(args, "user", "user"), getattr(args, "item", "item")]
    return read_files(files, None, text_ids=_text_ids(args), ids=ids)


def _with_system(frame: pl.LazyFrame, by: list[str]) -> list[str]:
    """A ``system`` column of the input splits the systems: it is a ``by`` column.

    Without it, the lists of several systems for one user would be merged into one
    list (silently, when their items differ).
    """
    if SYSTEM_COLUMN in by or SYSTEM_COLUMN not in frame.collect_schema():
        return by
    return [SYSTEM_COLUMN, *by]


def load_data(args: argparse.Namespace) -> tuple[pl.LazyFrame, list[str]]:
    """Build the long evaluation frame from ``--recs``/``--truth`` or the bundled example.

    Parameters
    ----------
    args
        Parsed ``evaluate`` arguments.

    Returns
    -------
    tuple of polars.LazyFrame and list of str
        Columns by, user, item, score (or rank) and relevance; and the ``by`` columns
        (``system`` first when several ``--recs`` are given or the input has a
        ``system`` column).
    """
    from polars_rankeval.api.evaluate import join

    by = list(args.by or [])
    if args.data is not None:
        if args.recs is not None or args.truth is not None or getattr(args, "system", None):
            msg = "--data cannot be combined with --recs/--truth/--system"
            raise UsageError(msg)
        data = read_data(args)
        return data, _with_system(data, by)
    if args.recs is None and args.truth is None:
        from polars_rankeval.api.datasets import load_example

        print(
            f"{PROG}: no --recs/--truth given; evaluating the bundled example "
            "(trec_eval's test run: 3 queries)",
            file=sys.stderr,
        )
        return load_example().lazy(), by
    if args.recs is None or args.truth is None:
        msg = "--recs and --truth must be given together"
        raise UsageError(msg)
    recs, by = read_recs(args)
    by = _with_system(recs, by)
    truth = read_table(args.truth, args.truth_format, text_ids=_text_ids(args))
    subtopic = args.subtopic
    diversity = (args.truth_format or TREC_SUFFIXES.get(args.truth.suffix.lower())) == (
        "trec-div-qrels"
    )
    if subtopic is None and diversity:
        subtopic = "subtopic"
    try:
        joined = join(
            recs, truth, **column_options(args), by=by, check_overlap=True, subtopic=subtopic
        )
    except TypeError as exc:
        if _text_ids(args) or "has dtype" not in str(exc):
            raise
        msg = f"{exc}; on the command line, pass --id-type string to compare ids as text"
        raise TypeError(msg) from None
    assert isinstance(joined, pl.LazyFrame)  # both inputs are lazy
    return joined, by


def column_options(args: argparse.Namespace, *, joined: bool = False) -> dict[str, Any]:
    """Column options for ``join`` (``relevance`` may be None) or, joined, ``evaluate``."""
    relevance = args.relevance
    if joined and relevance is None:
        relevance = "relevance"
    return {
        "user": args.user,
        "item": args.item,
        "score": args.score,
        "relevance": relevance,
        "rank": args.rank,
    }

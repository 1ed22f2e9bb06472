"""The command line's output: tables in every format, Markdown, and a standard output that fails.

:func:`write_frame` writes a result as a table, csv, json or Markdown; the helpers at the
end turn a standard output that cannot be written into an exit status (quiet when its
reader went away, one line on standard error otherwise).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, TextIO

import polars as pl

from polars_rankeval._utils.markup import markdown_escape

PROG = "polars-rankeval"
FORMATS: tuple[str, ...] = ("table", "csv", "json", "markdown")
FLOAT_PRECISION = 4


def _cell(value: Any, precision: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.{precision}f}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return markdown_escape(str(value))


def to_markdown(frame: pl.DataFrame, precision: int = FLOAT_PRECISION) -> str:
    """Render a frame as a GitHub-flavoured Markdown table.

    Parameters
    ----------
    frame
        The frame to render.
    precision
        Decimals shown for floats.

    Returns
    -------
    str
        The table, numeric columns right-aligned, one line per row, ending in a newline.

    Examples
    --------
    >>> import polars as pl
    >>> print(to_markdown(pl.DataFrame({"metric": ["ndcg@10"], "value": [0.5]})), end="")
    | metric | value |
    | --- | ---: |
    | ndcg@10 | 0.5000 |
    """
    header = "| " + " | ".join(map(markdown_escape, frame.columns)) + " |"
    rule = "| " + " | ".join("---:" if d.is_numeric() else "---" for d in frame.dtypes) + " |"
    rows = ["| " + " | ".join(_cell(v, precision) for v in row) + " |" for row in frame.rows()]
    return "\n".join([header, rule, *rows]) + "\n"


def write_frame(frame: pl.DataFrame, fmt: str, out: TextIO, *, bare: bool = False) -> None:
    """Write a result frame to ``out`` in one of :data:`FORMATS`.

    Parameters
    ----------
    frame
        The result to print.
    fmt
        ``"table"`` (Polars' own printing, every row and column, 4 decimals),
        ``"csv"``, ``"json"`` (an array of row objects) or ``"markdown"``.
    out
        Where to write.
    bare
        For ``"table"``: hide the shape line and the column dtypes.
    """
    if fmt == "table":
        with pl.Config(
            tbl_rows=-1,
            tbl_cols=-1,
            float_precision=FLOAT_PRECISION,
            fmt_str_lengths=1000,
            tbl_width_chars=10_000,
            tbl_hide_dataframe_shape=bare,
            tbl_hide_column_data_types=bare,
        ):
            out.write(f"{frame}\n")
    elif fmt == "csv":
        out.write(frame.write_csv())
    elif fmt == "json":
        out.write(frame.write_json() + "\n")
    elif fmt == "markdown":
        out.write(to_markdown(frame))
    else:  # pragma: no cover - argparse restricts the choices
        msg = f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}"
        raise ValueError(msg)


def progress(message: str) -> None:
    """A status line on stderr, only when a person is watching (a terminal)."""
    if sys.stderr.isatty():
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def one_line(exc: BaseException) -> str:
    """An error's text on one line, for ``polars-rankeval: error: ...``."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return text or type(exc).__name__


_ERROR = f"{PROG}: error: "


def closed_pipe(exc: OSError) -> bool:
    """Whether a write failed because the reader went away (EPIPE).

    Polars' writers raise a plain ``OSError`` whose text ends in ``(os error 32)``.
    """
    return (
        isinstance(exc, BrokenPipeError)
        or exc.errno == errno.EPIPE
        or str(exc).endswith(f"(os error {errno.EPIPE})")
    )


def output_failed(exc: OSError, prefix: str = _ERROR) -> int:
    """The end of a command whose standard output cannot be written.

    A reader that went away (``... | head -1``) ends it quietly with status 0; any other
    failure (a full device, ``> /dev/full``) is one line on standard error, status 2.
    What stdout still buffers is dropped, so that Python's final flush stays quiet.
    """
    _silence_stdout()
    if closed_pipe(exc):
        return 0
    print(f"{prefix}{one_line(exc)}", file=sys.stderr)
    return 2


def flush_or_drop() -> OSError | None:
    """Flush standard output; when it cannot be written, drop what it buffers instead.

    Returns the write error, if any. Without this, a write failing at the final flush
    ends in Python's "Exception ignored" message (status 120) after the command has
    reported success.
    """
    try:
        sys.stdout.flush()
    except OSError as exc:
        _silence_stdout()
        return exc
    return None


def flushed(status: int, prefix: str = _ERROR) -> int:
    """``status`` once standard output is written; see :func:`output_failed` if it is not."""
    exc = flush_or_drop()
    if exc is None or closed_pipe(exc):
        return status
    return output_failed(exc, prefix)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured)
        pass

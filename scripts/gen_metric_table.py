"""Print the README's metric table, generated from the metric registry.

Usage::

    python scripts/gen_metric_table.py          # print the Markdown table
    python scripts/gen_metric_table.py --write  # replace it in README.md

The README holds the table between ``<!-- metrics:start -->`` and
``<!-- metrics:end -->``; ``tests/test_readme.py`` fails when it differs from what
this script prints.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import polars_rankeval as prk

# Options are listed ", "-separated; a range such as "(in [0, 1])" holds ", " itself.
_OPTION_SEP = re.compile(r", (?![^\[\(]*[\]\)])")
START = "<!-- metrics:start -->"
END = "<!-- metrics:end -->"
README = Path(__file__).resolve().parents[1] / "README.md"


def _escape(text: str) -> str:
    """Escape the characters that would break a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{_escape(text)}`" if text else ""


def metric_table() -> str:
    """Return every registered metric as a Markdown table, one row per metric.

    Returns
    -------
    str
        The table (header, rule and rows), ending in a newline.
    """
    lines = [
        "| Metric | Aliases | @k | Options (default) | Definition |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in prk.list_metrics().iter_rows(named=True):
        aliases = ", ".join(_code(a) for a in row["aliases"].split(", ") if a)
        options = ", ".join(_code(o) for o in _OPTION_SEP.split(row["options"]) if o) or "—"
        cutoff = "yes" if row["cutoff"] else "no"
        cells = [_code(row["name"]), aliases or "—", cutoff, options, _escape(row["definition"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def readme_table(text: str) -> str:
    """Return the text between the README's metric-table markers.

    Parameters
    ----------
    text
        The README's content.

    Returns
    -------
    str
        What lies between the markers, without the blank lines around it.
    """
    if START not in text or END not in text:
        msg = f"README.md must contain {START} and {END}"
        raise ValueError(msg)
    inner = text.split(START, 1)[1].split(END, 1)[0]
    return inner.strip("\n") + "\n"


def replace_table(text: str, table: str) -> str:
    """Return ``text`` with the table between the markers replaced by ``table``.

    Parameters
    ----------
    text
        The README's content.
    table
        The new table, as :func:`metric_table` prints it.

    Returns
    -------
    str
        The updated README.
    """
    readme_table(text)  # checks the markers
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{START}\n\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Print the table, or write it into README.md with ``--write``.

    Parameters
    ----------
    argv
        Command-line arguments without the program name.

    Returns
    -------
    int
        The exit status.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update README.md in place")
    args = parser.parse_args(argv)
    table = metric_table()
    if args.write:
        README.write_text(replace_table(README.read_text(encoding="utf-8"), table), "utf-8")
        print(f"updated {README}", file=sys.stderr)
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Text written into Markdown and LaTeX tables: names escaped so they stay plain text.

A system, metric or column name is data: a ``|`` must not end a Markdown table cell,
a ``*`` or ``_`` must not start emphasis, an ``&`` must not end a LaTeX cell. Used by
the report (:mod:`polars_rankeval.report`) and the command line's Markdown output.
"""

from __future__ import annotations

__all__ = ["latex_escape", "markdown_escape"]

_LATEX_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}

# CommonMark's backslash escapes for the characters that would start emphasis, code,
# links, HTML, strikethrough or math, or end a table cell (``|``), in GitHub's renderer.
_MARKDOWN_SPECIAL = frozenset("\\`*_[]<>|~$&")


def latex_escape(text: str) -> str:
    r"""``text`` for LaTeX's text mode, on one line.

    Examples
    --------
    >>> print(latex_escape("bm25_v2 & 50% {#1}"))
    bm25\_v2 \& 50\% \{\#1\}
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in _one_line(text))


def markdown_escape(text: str) -> str:
    r"""``text`` for a GitHub-flavoured Markdown table cell, on one line.

    Examples
    --------
    >>> print(markdown_escape("a|b *c* <d>"))
    a\|b \*c\* \<d\>
    """
    return "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in _one_line(text))


def _one_line(text: str) -> str:
    """A name on one line: a line break would end a table row."""
    return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text

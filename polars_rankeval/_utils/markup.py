"""Text written into Markdown and LaTeX tables: names escaped so they stay plain text.

A system, metric or column name is data: a ``|`` must not end a Markdown table cell,
a ``*`` or ``_`` must not start emphasis, an ``&`` must not end a LaTeX cell. Used by
the report (:mod:`polars_rankeval.analysis.report`) and the command line's Markdown output.
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
# An ``_`` between two letters or digits (``n_users``, ``hit_rate``) cannot open or
# close emphasis, so it stays as it is; elsewhere it is escaped.
_MARKDOWN_SPECIAL = frozenset("\\`*[]<>|~$&")


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
    >>> print(markdown_escape("a|b *c* <d> n_users _x_"))
    a\|b \*c\* \<d\> n_users \_x\_
    """
    line = _one_line(text)
    out = []
    for i, ch in enumerate(line):
        if ch in _MARKDOWN_SPECIAL or (ch == "_" and not _intraword(line, i)):
            out.append("\\")
        out.append(ch)
    return "".join(out)


def _intraword(text: str, i: int) -> bool:
    """Whether position ``i`` has a letter or digit on both sides."""
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def _one_line(text: str) -> str:
    """A name on one line: a line break would end a table row."""
    return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text

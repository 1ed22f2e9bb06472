"""``report``: a comparison (:func:`polars_rankeval.compare`) as a Markdown, LaTeX or HTML table.

Systems are rows and metrics columns; each cell is the system's mean over the paired
users, the best per metric in bold, with significance marks: against the baseline
(``▲`` significantly better, ``▼`` significantly worse) or, when every pair was
compared, ranx-style superscript letters (the systems it is significantly better
than). The test, correction, alpha and conventions are stated under the table.
Markdown and LaTeX (booktabs) are written directly -- great_tables' LaTeX output would
escape the math-mode superscripts and arrows -- and HTML is Polars' own table styling,
``DataFrame.style`` (great_tables, the ``[report]`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from polars_rankeval._types import check_choice, integer

__all__ = ["LOWER_IS_BETTER", "report"]

ReportFormat = Literal["markdown", "latex", "html"]
Marks = Literal["auto", "baseline", "letters", "none"]

#: Metrics (registry names) for which a lower value is better.
LOWER_IS_BETTER: frozenset[str] = frozenset(
    {"fallout", "miss_rate", "mae", "mse", "rmse", "nmae", "unjudged", "rbp_resid"}
)

_TEST_NAMES = {
    "t": "paired Student t test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "sign": "sign test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test",
    "tukey": "randomized Tukey HSD test",
}
_CORRECTION_NAMES = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "hochberg": "Hochberg correction",
    "bh": "Benjamini-Hochberg correction",
    "by": "Benjamini-Yekutieli correction",
}
_NEEDED = ("metric", "system", "baseline", "mean", "baseline_mean", "diff", "significant")


def report(
    result: pl.DataFrame,
    format: ReportFormat = "markdown",
    *,
    marks: Marks = "auto",
    digits: int = 4,
    lower_is_better: Sequence[str] = (),
    caption: str | None = None,
) -> Any:
    r"""Render a comparison as a table: systems as rows, metrics as columns.

    Parameters
    ----------
    result
        The output of :func:`polars_rankeval.compare` or
        :func:`polars_rankeval.compare_per_user`.
    format
        ``"markdown"`` (GitHub-flavoured; superscripts as ``<sup>``), ``"latex"``
        (a ``table`` with ``booktabs`` rules: ``\usepackage{booktabs}``) or
        ``"html"`` (a ``great_tables.GT`` built with ``DataFrame.style``; its
        ``as_raw_html()`` is the HTML, and notebooks display it).
    marks
        ``"baseline"``: ``▲``/``▼`` (LaTeX ``$\uparrow$``/``$\downarrow$``) after a
        system significantly better/worse than the baseline; ``"letters"``: each
        system gets a letter and a cell lists, as a superscript, the letters of the
        systems it is significantly better than (ranx's style); ``"auto"`` (default):
        ``baseline`` when every row has the same baseline, else ``letters``;
        ``"none"``.
    digits
        Decimals shown.
    lower_is_better
        Metric columns where lower is better, in addition to the registry's
        (``fallout``, ``miss_rate``, ``mae``, ``mse``, ``rmse``, ``nmae``,
        ``unjudged``, ``rbp_resid``): they decide the bold cell and the direction of
        the marks.
    caption
        A caption (LaTeX ``\caption``, Markdown and HTML title).

    Returns
    -------
    str or great_tables.GT
        The Markdown or LaTeX text, or the styled HTML table.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> per_user = pl.DataFrame({
    ...     "system": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.2, 0.4, 0.1, 0.3, 0.5, 0.6, 0.4, 0.7],
    ... })
    >>> result = prk.compare_per_user(per_user, baseline="a", test="t")
    >>> table, note = prk.report(result, digits=3).split("\n\n")
    >>> print(table)
    | System | ndcg@10 |
    | :--- | ---: |
    | a | 0.250 |
    | b | **0.550**▲ |
    >>> print(note.replace(". ", ".\n").replace("; ", ";\n"))
    Means over the 4 paired users.
    Paired Student t test, two-sided;
    Holm correction over all 1 comparison(s);
    significant: adjusted p ≤ 0.05.
    ▲/▼: significantly better/worse than a.
    Bold: best per metric.
    """
    check_choice("format", format, ("markdown", "latex", "html"))
    check_choice("marks", marks, ("auto", "baseline", "letters", "none"))
    if not isinstance(result, pl.DataFrame):
        msg = f"result must be the DataFrame returned by compare(), got {type(result).__name__}"
        raise TypeError(msg)
    missing = [c for c in _NEEDED if c not in result.columns]
    if missing:
        msg = (
            f"result is missing the column(s) {', '.join(missing)}; pass the DataFrame "
            "returned by compare()"
        )
        raise ValueError(msg)
    if result.height == 0:
        msg = "result has no rows; nothing to report"
        raise ValueError(msg)
    digits = integer("digits", digits, what="an int >= 0")
    if digits < 0:
        msg = f"digits must be an int >= 0, got {digits!r}"
        raise ValueError(msg)
    table = _Table.build(result, marks, digits, set(lower_is_better))
    if format == "markdown":
        return table.markdown(caption)
    if format == "latex":
        return table.latex(caption)
    return table.html(caption)


class _Table:
    """The cells of the report, independent of the output format."""

    def __init__(
        self,
        metrics: list[str],
        systems: list[str],
        means: dict[tuple[str, str], float],
        best: dict[str, set[str]],
        up: dict[tuple[str, str], str],
        mode: str,
        letters: dict[str, str],
        note: str,
        digits: int,
    ) -> None:
        self.metrics, self.systems, self.means, self.best = metrics, systems, means, best
        self.up, self.mode, self.letters, self.note, self.digits = (
            up,
            mode,
            letters,
            note,
            digits,
        )

    @classmethod
    def build(cls, result: pl.DataFrame, marks: str, digits: int, lower: set[str]) -> _Table:
        rows = result.to_dicts()
        metrics = list(dict.fromkeys(r["metric"] for r in rows))
        order: list[str] = []
        for r in rows:
            for name in (r["baseline"], r["system"]):
                if name not in order:
                    order.append(name)
        baselines = {r["baseline"] for r in rows}
        mode = marks
        if marks == "auto":
            mode = "baseline" if len(baselines) == 1 else "letters"
        if mode == "baseline" and len(baselines) != 1:
            msg = (
                "marks='baseline' needs one baseline; this result compares "
                f"{len(baselines)} baselines (use marks='letters')"
            )
            raise ValueError(msg)
        means: dict[tuple[str, str], float] = {}
        for r in rows:
            means[(r["metric"], r["system"])] = r["mean"]
            means[(r["metric"], r["baseline"])] = r["baseline_mean"]
        lower_names = {m for m in metrics if m in lower or _registry_lower(m)}
        best: dict[str, set[str]] = {}
        for metric in metrics:
            shown = {s: round(means[(metric, s)], digits) for s in order if (metric, s) in means}
            target = (min if metric in lower_names else max)(shown.values())
            best[metric] = {s for s, v in shown.items() if v == target}
        up: dict[tuple[str, str], str] = {}  # (metric, system) -> marks text
        letters = {s: _letter(i) for i, s in enumerate(order)} if mode == "letters" else {}
        beats: dict[tuple[str, str], list[str]] = {}
        for r in rows:
            if not r["significant"]:
                continue
            sign = -1.0 if r["metric"] in lower_names else 1.0
            better = sign * r["diff"] > 0
            if mode == "baseline":
                up[(r["metric"], r["system"])] = "up" if better else "down"
            elif mode == "letters":
                winner, loser = (
                    (r["system"], r["baseline"]) if better else (r["baseline"], r["system"])
                )
                beats.setdefault((r["metric"], winner), []).append(loser)
        for key, losers in beats.items():
            up[key] = "".join(sorted(letters[x] for x in losers))
        note = _note(result, metrics, mode, next(iter(baselines)), lower_names)
        return cls(metrics, order, means, best, up, mode, letters, note, digits)

    # ----------------------------------------------------------------- cells
    def _cell(self, metric: str, system: str, style: str) -> str:
        value = self.means.get((metric, system))
        if value is None:
            return ""
        text = f"{value:.{self.digits}f}"
        if system in self.best[metric]:
            text = {"markdown": f"**{text}**", "latex": f"\\textbf{{{text}}}"}.get(
                style, f"**{text}**"
            )
        mark = self.up.get((metric, system))
        if mark:
            if self.mode == "baseline":
                if style == "latex":
                    text += "$^{\\uparrow}$" if mark == "up" else "$^{\\downarrow}$"
                else:
                    text += "▲" if mark == "up" else "▼"
            elif style == "latex":
                text += f"$^{{\\mathrm{{{mark}}}}}$"
            else:
                text += f"<sup>{mark}</sup>"
        return text

    def _label(self, system: str, style: str) -> str:
        name = _latex_escape(system) if style == "latex" else system
        if self.mode == "letters":
            return f"({self.letters[system]}) {name}"
        return name

    # ----------------------------------------------------------------- formats
    def markdown(self, caption: str | None) -> str:
        lines = []
        if caption:
            lines += [f"**{caption}**", ""]
        lines.append("| System | " + " | ".join(self.metrics) + " |")
        lines.append("| :--- | " + " | ".join("---:" for _ in self.metrics) + " |")
        for system in self.systems:
            cells = [self._cell(m, system, "markdown") for m in self.metrics]
            lines.append(f"| {self._label(system, 'markdown')} | " + " | ".join(cells) + " |")
        lines += ["", self.note]
        return "\n".join(lines)

    def latex(self, caption: str | None) -> str:
        note = _latex_escape(self.note)
        note = note.replace("▲/▼", "$\\uparrow$/$\\downarrow$").replace("≤", "$\\leq$")
        lines = ["\\begin{table}[t]", "\\centering"]
        if caption:
            lines.append(f"\\caption{{{_latex_escape(caption)}}}")
        lines.append("\\begin{tabular}{l" + "r" * len(self.metrics) + "}")
        lines.append("\\toprule")
        header = " & ".join(["System", *(_latex_escape(m) for m in self.metrics)])
        lines += [header + " \\\\", "\\midrule"]
        for system in self.systems:
            cells = [self._cell(m, system, "latex") for m in self.metrics]
            lines.append(" & ".join([self._label(system, "latex"), *cells]) + " \\\\")
        lines += [
            "\\bottomrule",
            "\\end{tabular}",
            "\\par\\smallskip",
            f"\\parbox{{\\linewidth}}{{\\footnotesize {note}}}",
            "\\end{table}",
        ]
        return "\n".join(lines) + "\n"

    def html(self, caption: str | None) -> Any:
        try:
            import great_tables  # noqa: F401
        except ImportError as error:  # pragma: no cover - installed in the tests
            msg = (
                'report(format="html") needs great_tables; install it with: '
                'pip install "polars-rankeval[report]"'
            )
            raise ImportError(msg) from error
        data: dict[str, list[str]] = {"System": [self._label(s, "html") for s in self.systems]}
        for metric in self.metrics:
            data[metric] = [self._cell(metric, s, "html") for s in self.systems]
        frame = pl.DataFrame(data)
        table = (
            frame.style.fmt_markdown(columns=self.metrics)
            .cols_align("right", columns=self.metrics)
            .tab_source_note(self.note)
        )
        if caption:
            table = table.tab_header(title=caption)
        return table


def _letter(index: int) -> str:
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("a") + rest) + text
    return text


def _registry_lower(metric: str) -> bool:
    from polars_rankeval.registry import parse_metric

    try:
        return parse_metric(metric).spec.name in LOWER_IS_BETTER
    except (ValueError, TypeError):
        return False


def _first(result: pl.DataFrame, column: str) -> Any:
    if column not in result.columns:
        return None
    values = result.get_column(column).drop_nulls().unique(maintain_order=True).to_list()
    return values[0] if len(values) == 1 else (values or None)


def _note(
    result: pl.DataFrame, metrics: list[str], mode: str, baseline: str, lower: set[str]
) -> str:
    counts = set(result.select(c for c in ("n_users", "n_dropped") if c in result.columns).rows())
    if len(counts) == 1 and "n_users" in result.columns:
        n_users, *dropped = next(iter(counts))
        text = f"Means over the {n_users:,} paired users"
        if dropped and dropped[0]:
            text += f" ({dropped[0]:,} dropped: not defined for every system)"
        parts = [text + "."]
    else:
        users = []
        for metric in metrics:
            part = result.filter(pl.col("metric") == metric)
            text = f"{metric}: {part['n_users'][0]:,}" if "n_users" in part.columns else metric
            if "n_dropped" in part.columns and part["n_dropped"][0]:
                text += f" ({part['n_dropped'][0]:,} dropped)"
            users.append(text)
        parts = [f"Means over the paired users ({'; '.join(users)})."]
    test = _first(result, "test")
    if isinstance(test, str):
        text = _TEST_NAMES.get(test, test)
        text = text[0].upper() + text[1:]
        n_resamples = _first(result, "n_resamples")
        if isinstance(n_resamples, int) and test in ("randomization", "bootstrap", "tukey"):
            text += f" ({n_resamples:,} resamples, seed {_first(result, 'seed')})"
        text += ", two-sided"
        correction = _first(result, "correction")
        family = _first(result, "family")
        if isinstance(correction, str):
            if test == "tukey":
                text += "; family-wise error controlled over all pairs by the test"
            else:
                scope = (
                    f"all {result.height} comparison(s)"
                    if family == "all"
                    else "the comparisons of each metric"
                )
                text += f"; {_CORRECTION_NAMES.get(correction, correction)} over {scope}"
        alpha = _first(result, "alpha")
        if isinstance(alpha, float):
            text += f"; significant: adjusted p ≤ {alpha:g}"
        parts.append(text + ".")
    if mode == "baseline":
        parts.append(f"▲/▼: significantly better/worse than {baseline}.")
    elif mode == "letters":
        parts.append("Superscript letters: the systems this one is significantly better than.")
    parts.append("Bold: best per metric.")
    if lower:
        parts.append(f"Lower is better for {', '.join(sorted(lower))}.")
    conventions = _first(result, "conventions")
    if isinstance(conventions, str):
        parts.append(f"Conventions: {conventions}.")
    return " ".join(parts)


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


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)

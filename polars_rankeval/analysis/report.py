"""``report``: a comparison (:func:`polars_rankeval.compare`) as a Markdown, LaTeX or HTML table.

Systems are rows and metrics columns; each cell is the system's mean over the paired
users, the best per metric in bold, with significance marks: against the baseline
(``▲`` significantly better, ``▼`` significantly worse) or, when every pair was
compared, ranx-style superscript letters (the systems it is significantly better
than). The test, correction, alpha and conventions are stated under the table.
Markdown and LaTeX (booktabs) are written directly -- great_tables' LaTeX output would
escape the math-mode superscripts and arrows -- and HTML is Polars' own table styling,
``DataFrame.style`` (great_tables, the ``[report]`` extra). Every format is text, a
:class:`ReportText`: a ``str`` that a notebook shows rendered.
"""

from __future__ import annotations

from typing import Any, Literal

import polars as pl

from polars_rankeval._utils.constraints import (
    FLAG,
    Instance,
    Integer,
    Options,
    Text,
    validate_params,
)
from polars_rankeval._utils.markup import latex_escape, markdown_escape
from polars_rankeval.metrics.params import Interval

__all__ = ["ReportText", "report"]

ReportFormat = Literal["markdown", "latex", "html"]
Marks = Literal["auto", "baseline", "letters", "none"]

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
_NEEDED = (
    "metric",
    "higher_is_better",
    "system",
    "baseline",
    "mean",
    "baseline_mean",
    "diff",
    "significant",
)


class ReportText(str):
    """The text of a report: a ``str``, shown rendered in a notebook.

    ``syntax`` is its format (``"markdown"``, ``"latex"`` or ``"html"``). In Jupyter,
    a Markdown or HTML report displays as a table (``_repr_markdown_``,
    ``_repr_html_``); ``print`` and everything else see the text.
    """

    syntax: str

    def __new__(cls, text: str, syntax: str) -> ReportText:
        """The report ``text``, written in ``syntax``."""
        self = super().__new__(cls, text)
        self.syntax = syntax
        return self

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return (str(self), self.syntax)

    def _repr_html_(self) -> str | None:
        return str(self) if self.syntax == "html" else None

    def _repr_markdown_(self) -> str | None:
        return str(self) if self.syntax == "markdown" else None


@validate_params(
    {
        "result": Instance(pl.DataFrame, what="the DataFrame returned by compare()"),
        "format": Options.of(ReportFormat),
        "marks": Options.of(Marks),
        "digits": Integer(Interval(0, None)),
        "caption": [Text(), None],
        "win_tie_loss": FLAG,
    }
)
def report(
    result: pl.DataFrame,
    format: ReportFormat = "markdown",
    *,
    marks: Marks = "auto",
    digits: int = 4,
    caption: str | None = None,
    win_tie_loss: bool = False,
) -> ReportText:
    r"""Render a comparison as a table: systems as rows, metrics as columns.

    Parameters
    ----------
    result
        The output of :func:`polars_rankeval.compare` or
        :func:`polars_rankeval.compare_per_user`.
    format
        ``"markdown"`` (GitHub-flavoured; superscripts as ``<sup>``), ``"latex"``
        (a ``table`` with ``booktabs`` rules: ``\usepackage{booktabs}``) or
        ``"html"`` (the HTML of ``DataFrame.style``, great_tables: the ``[report]``
        extra).
    marks
        ``"baseline"``: ``▲``/``▼`` (LaTeX ``$\uparrow$``/``$\downarrow$``) after a
        system significantly better/worse than the baseline; ``"letters"``: each
        system gets a letter and a cell lists, as a superscript, the letters of the
        systems it is significantly better than (ranx's style); ``"auto"`` (default):
        ``baseline`` when every row has the same baseline, else ``letters``;
        ``"none"``.
    digits
        Decimals shown.
    caption
        A caption (LaTeX ``\caption``, Markdown and HTML title).
    win_tie_loss
        Add a second table, one row per compared pair (``system vs baseline``) and one
        column per metric, each cell ``wins / ties / losses``: the paired users where the
        system is better than the baseline, within ``tie_tolerance`` of it, worse (the
        ``wins``, ``ties``, ``losses`` columns of the result; for a metric without a
        direction, higher counts as a win). Default ``False``.

    Returns
    -------
    ReportText
        The text of the table and its note, in every format: a ``str``, which a
        notebook displays rendered (Markdown and HTML).

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
    Baseline: a.
    ▲/▼: significantly better/worse than the baseline.
    Bold: best per metric.

    With ``win_tie_loss=True``, how many users each pair won, tied and lost:

    >>> print(prk.report(result, digits=3, win_tie_loss=True).split("\n\n")[1])
    | Pair | ndcg@10 |
    | :--- | ---: |
    | b vs a | 4 / 0 / 0 |
    """
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
    digits = int(digits)
    if win_tie_loss:
        lacking = [c for c in ("wins", "ties", "losses") if c not in result.columns]
        if lacking:
            msg = (
                f"win_tie_loss=True needs the column(s) {', '.join(lacking)} of compare()'s "
                "result; this result has none"
            )
            raise ValueError(msg)
    table = _Table.build(result, marks, digits)
    if win_tie_loss:
        table.add_win_tie_loss(result)
    if format == "markdown":
        return ReportText(table.markdown(caption), format)
    if format == "latex":
        return ReportText(table.latex(caption), format)
    return ReportText(table.html(caption), format)


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
        self.pairs: list[str] = []  # "system vs baseline", with win_tie_loss
        self.counts: dict[tuple[str, str], str] = {}  # (pair, metric) -> "w / t / l"

    def add_win_tie_loss(self, result: pl.DataFrame) -> None:
        """The second table: ``wins / ties / losses`` per pair and metric, and its note."""
        for row in result.select(
            "metric", "system", "baseline", "wins", "ties", "losses"
        ).iter_rows(named=True):
            pair = f"{row['system']} vs {row['baseline']}"
            if pair not in self.pairs:
                self.pairs.append(pair)
            self.counts[(pair, row["metric"])] = (
                f"{row['wins']:,} / {row['ties']:,} / {row['losses']:,}"
            )
        tolerance = _first(result, "tie_tolerance")
        within = f"within {tolerance:g} of" if isinstance(tolerance, float) else "tied with"
        self.note += (
            f" Pairs: wins / ties / losses, the users where the system is better than, "
            f"{within}, worse than the baseline (for a metric without a direction, "
            "higher wins)."
        )

    def _pair_rows(self) -> list[tuple[str, list[str]]]:
        return [
            (pair, [self.counts.get((pair, m), "") for m in self.metrics]) for pair in self.pairs
        ]

    @classmethod
    def build(cls, result: pl.DataFrame, marks: str, digits: int) -> _Table:
        rows = result.to_dicts()
        metrics = list(dict.fromkeys(r["metric"] for r in rows))
        direction = _directions(result)
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
        best: dict[str, set[str]] = {}
        for metric in metrics:
            if direction[metric] is None:  # neither higher nor lower is better: no best
                best[metric] = set()
                continue
            shown = {s: round(means[(metric, s)], digits) for s in order if (metric, s) in means}
            target = (max if direction[metric] else min)(shown.values())
            best[metric] = {s for s, v in shown.items() if v == target}
        up: dict[tuple[str, str], str] = {}  # (metric, system) -> marks text
        letters = _labels(order) if mode == "letters" else {}
        beats: dict[tuple[str, str], list[str]] = {}
        for r in rows:
            if not r["significant"]:
                continue
            # better, or higher for a metric without a direction
            sign = -1.0 if direction[r["metric"]] is False else 1.0
            better = sign * r["diff"] > 0
            if mode == "baseline":
                up[(r["metric"], r["system"])] = "up" if better else "down"
            elif mode == "letters":
                winner, loser = (
                    (r["system"], r["baseline"]) if better else (r["baseline"], r["system"])
                )
                beats.setdefault((r["metric"], winner), []).append(loser)
        joiner = "" if len(order) <= len(_ALPHABET) else ","  # "ab"; "1,12" (not "112")
        for key, losers in beats.items():
            up[key] = joiner.join(letters[x] for x in sorted(losers, key=order.index))
        numbers = len(order) > len(_ALPHABET)
        note = _note(result, metrics, mode, next(iter(baselines)), direction, numbers)
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
        name = _ESCAPE[style](system) if style in _ESCAPE else system
        if self.mode == "letters":
            return f"({self.letters[system]}) {name}"
        return name

    # ----------------------------------------------------------------- formats
    def markdown(self, caption: str | None) -> str:
        lines = []
        if caption:
            lines += [f"**{markdown_escape(caption)}**", ""]
        lines.append("| System | " + " | ".join(map(markdown_escape, self.metrics)) + " |")
        lines.append("| :--- | " + " | ".join("---:" for _ in self.metrics) + " |")
        for system in self.systems:
            cells = [self._cell(m, system, "markdown") for m in self.metrics]
            lines.append(f"| {self._label(system, 'markdown')} | " + " | ".join(cells) + " |")
        if self.pairs:
            lines += ["", "| Pair | " + " | ".join(map(markdown_escape, self.metrics)) + " |"]
            lines.append("| :--- | " + " | ".join("---:" for _ in self.metrics) + " |")
            for pair, cells in self._pair_rows():
                lines.append(f"| {markdown_escape(pair)} | " + " | ".join(cells) + " |")
        lines += ["", markdown_escape(self.note)]
        return "\n".join(lines)

    def latex(self, caption: str | None) -> str:
        note = latex_escape(self.note)
        note = note.replace("▲/▼", "$\\uparrow$/$\\downarrow$").replace("≤", "$\\leq$")
        lines = ["\\begin{table}[t]", "\\centering"]
        if caption:
            lines.append(f"\\caption{{{latex_escape(caption)}}}")
        lines.append("\\begin{tabular}{l" + "r" * len(self.metrics) + "}")
        lines.append("\\toprule")
        header = " & ".join(["System", *(latex_escape(m) for m in self.metrics)])
        lines += [header + " \\\\", "\\midrule"]
        for system in self.systems:
            cells = [self._cell(m, system, "latex") for m in self.metrics]
            lines.append(" & ".join([self._label(system, "latex"), *cells]) + " \\\\")
        if self.pairs:
            pairs = " & ".join(["Pair", *(latex_escape(m) for m in self.metrics)])
            lines += ["\\midrule", pairs + " \\\\", "\\midrule"]
            for pair, cells in self._pair_rows():
                lines.append(" & ".join([latex_escape(pair), *cells]) + " \\\\")
        lines += [
            "\\bottomrule",
            "\\end{tabular}",
            "\\par\\smallskip",
            f"\\parbox{{\\linewidth}}{{\\footnotesize {note}}}",
            "\\end{table}",
        ]
        return "\n".join(lines) + "\n"

    def html(self, caption: str | None) -> str:
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
        html = str(table.as_raw_html())
        if self.pairs:
            counts: dict[str, list[str]] = {"Pair": [pair for pair, _ in self._pair_rows()]}
            for j, metric in enumerate(self.metrics):
                counts[metric] = [cells[j] for _, cells in self._pair_rows()]
            second = (
                pl.DataFrame(counts)
                .style.cols_align("right", columns=self.metrics)
                .tab_header(title="Wins / ties / losses")
            )
            html += "\n" + str(second.as_raw_html())
        return html


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def _labels(order: list[str]) -> dict[str, str]:
    """Each system's label: a to z, or 1 to n beyond 26 systems.

    Letters are written side by side in a superscript (``ab``); two-letter labels
    would make that ambiguous (``aab``: a and ab, or aa and b?), so more than 26
    systems are numbered instead and their numbers separated by commas.
    """
    if len(order) <= len(_ALPHABET):
        return {s: _ALPHABET[i] for i, s in enumerate(order)}
    return {s: str(i + 1) for i, s in enumerate(order)}


def _directions(result: pl.DataFrame) -> dict[str, bool | None]:
    """Each metric's direction, from the ``higher_is_better`` column of the result."""
    pairs = result.select("metric", "higher_is_better").unique(maintain_order=True)
    counts = pairs.group_by("metric").len().filter(pl.col("len") > 1)
    if counts.height:
        metric = counts["metric"][0]
        msg = (
            f"result has more than one higher_is_better for metric {metric!r}; one metric "
            "has one direction"
        )
        raise ValueError(msg)
    return dict(pairs.iter_rows())


def _first(result: pl.DataFrame, column: str) -> Any:
    if column not in result.columns:
        return None
    values = result.get_column(column).drop_nulls().unique(maintain_order=True).to_list()
    return values[0] if len(values) == 1 else (values or None)


def _note(
    result: pl.DataFrame,
    metrics: list[str],
    mode: str,
    baseline: str,
    direction: dict[str, bool | None],
    numbers: bool = False,
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
        parts.append(f"Baseline: {baseline}. ▲/▼: significantly better/worse than the baseline.")
    elif mode == "letters":
        kind = "numbers" if numbers else "letters"
        parts.append(f"Superscript {kind}: the systems this one is significantly better than.")
    parts.append("Bold: best per metric.")
    lower = [m for m in metrics if direction[m] is False]
    if lower:
        parts.append(f"Lower is better for {', '.join(lower)}.")
    neither = [m for m in metrics if direction[m] is None]
    if neither:
        marked = {
            "baseline": "▲/▼ mark a significantly higher/lower value, ",
            "letters": f"the {'numbers' if numbers else 'letters'} are of the systems with a "
            "significantly lower value, ",
        }.get(mode, "")
        parts.append(f"No direction for {', '.join(neither)}: {marked}no bold.")
    conventions = _first(result, "conventions")
    if isinstance(conventions, str):
        parts.append(f"Conventions: {conventions}.")
    return " ".join(parts)


# great_tables escapes HTML in the labels, title and note itself.
_ESCAPE = {"markdown": markdown_escape, "latex": latex_escape}

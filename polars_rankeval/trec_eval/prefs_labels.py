"""Names, labels and printing of trec_eval's preference and ``*_avgjg`` measures.

The measures of ``-R prefs``/``qrels_prefs`` (``prefs_simp``, ``prefs_pair`` ...) and of
``-R qrels_jg`` (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``): which relation format
each needs and trec_eval's failure otherwise, their groups and defaults, the printed
labels (cutoff labels through C's ``snprintf("%s_%3.2f")``, truncated as trec_eval
truncates them), the summary rule (the three ``prefs_num_prefs_*`` counts are summed and
printed as integers, the rest averaged and printed as ``%6.4f``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from polars_rankeval.io.cnumbers import atof, atol
from polars_rankeval.trec_eval.errors import TrecEvalError

RelationFormat = Literal["qrels_jg", "prefs", "qrels_prefs"]
RELATION_FORMATS: tuple[str, ...] = ("qrels_jg", "prefs", "qrels_prefs")

_PREFS_NAMES = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)
_JG_NAMES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
PREFS_MEASURES: tuple[str, ...] = (*_PREFS_NAMES, *_JG_NAMES)
"""The measures of this module, in trec_eval's print order."""

PRINT_AFTER = "num_nonrel_judged_ret"
"""The trec_eval measure printed right before ``PREFS_MEASURES``."""
PRINT_BEFORE = "yaap"
"""The trec_eval measure printed right after ``PREFS_MEASURES``."""

MEASURE_DEFAULTS: dict[str, tuple[str, ...]] = {
    "P_avgjg": ("5", "10", "15", "20", "30", "100", "200", "500", "1000"),
    "Rprec_mult_avgjg": ("0.2", "0.4", "0.6", "0.8", "1.0", "1.2", "1.4", "1.6", "1.8", "2.0"),
}
"""Default parameters of the measures that take some (as trec_eval's ``-m`` text)."""

MEASURE_GROUPS: dict[str, tuple[str, ...]] = {
    "all_prefs": ("runid", "num_q", *_PREFS_NAMES),
    "prefs": (
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ),
    "qrels_jg": ("runid", "num_q", *_JG_NAMES),
}
"""trec_eval's ``-m`` group names that name these measures (runid, num_q included)."""

INTEGER_MEASURES = frozenset(_PREFS_NAMES[:3])
"""Printed as integers and summed (not averaged) over queries."""


def required_format(name: str) -> Literal["qrels_jg", "prefs"]:
    """The relation format a measure of this module needs.

    ``"prefs"`` means ``-R prefs`` or ``-R qrels_prefs``.

    Examples
    --------
    >>> required_format("P_avgjg"), required_format("prefs_simp")
    ('qrels_jg', 'prefs')
    """
    if name in _JG_NAMES:
        return "qrels_jg"
    if name in _PREFS_NAMES:
        return "prefs"
    raise ValueError(f"measure must be one of {', '.join(sorted(PREFS_MEASURES))}, got {name!r}")


def format_accepts(name: str, relation_format: str) -> bool:
    """Whether trec_eval computes measure ``name`` under ``-R relation_format``.

    Examples
    --------
    >>> format_accepts("prefs_pair", "qrels_prefs"), format_accepts("map_avgjg", "qrels")
    (True, False)
    """
    need = required_format(name)
    if need == "qrels_jg":
        return relation_format == "qrels_jg"
    return relation_format in ("prefs", "qrels_prefs")


def incompatible_format_error(name: str, *, query: str | None = None) -> TrecEvalError:
    """trec_eval's failure for measure ``name`` under a relation format it cannot use.

    Also the failure of a common measure (``map``, ``P``...) under ``-R qrels_jg``,
    ``prefs`` or ``qrels_prefs``: pass its name; the message is the plain-qrels one.

    Examples
    --------
    >>> print(incompatible_format_error("P_avgjg").message)
    trec_eval: rel_info format not qrels_jg or results format not trec_results
    trec_eval: Can't calculate measure 'P_avgjg'
    """
    if name in _JG_NAMES:
        first = "trec_eval: rel_info format not qrels_jg or results format not trec_results"
    elif name in _PREFS_NAMES:
        first = (
            "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or "
            "results format not trec_results"
        )
    else:
        first = (
            "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results"
        )
    return TrecEvalError(
        f"{first}\ntrec_eval: Can't calculate measure '{name}'", status=4, query=query
    )


def summary_rule(label: str) -> Literal["mean", "sum"]:
    """How trec_eval summarises a printed label over queries.

    Examples
    --------
    >>> summary_rule("prefs_num_prefs_ful"), summary_rule("P_avgjg_10")
    ('sum', 'mean')
    """
    return "sum" if label in INTEGER_MEASURES else "mean"


def format_value(label: str, value: float) -> str:
    """The text trec_eval prints for ``value`` of the printed label ``label``.

    The three ``prefs_num_prefs_*`` counts print as C's ``%ld`` of the value, the rest
    as ``%6.4f`` (``inf``/``-nan`` spelled as glibc does).

    Examples
    --------
    >>> format_value("prefs_num_prefs_poss", 13.0), format_value("prefs_simp", 0.4)
    ('13', '0.4000')
    """
    if label in INTEGER_MEASURES:
        return str(int(value))
    if value != value:
        return "-nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return f"{value:6.4f}"


def append_double(name: str, value: float) -> str:
    """A label with a real cutoff, cut as trec_eval's fixed-size buffer cuts it."""
    # append_double: snprintf(buf, strlen(name) + 10, "%s_%3.2f", ...) truncates
    return f"{name}_{value:3.2f}"[: len(name) + 9]


def resolve_requests(
    requests: Sequence[tuple[str, tuple[str, ...]]],
) -> dict[str, tuple[str, ...]]:
    """Measure name -> parameter text, for the measures of this module requested."""
    wanted: set[str] = set()
    params: dict[str, tuple[str, ...]] = {}
    for name, par in requests:
        if not isinstance(name, str):
            raise TypeError(f"requests must hold (name, params) pairs, got {name!r}")
        if name in MEASURE_GROUPS:
            wanted.update(n for n in MEASURE_GROUPS[name] if n in PREFS_MEASURES)
        elif name in PREFS_MEASURES:
            wanted.add(name)
        if par and name not in params:
            params[name] = tuple(par)
    return {
        name: params.get(name, MEASURE_DEFAULTS.get(name, ()))
        for name in PREFS_MEASURES
        if name in wanted
    }


def long_cutoffs(name: str, params: tuple[str, ...]) -> list[int]:
    """Integer cutoffs, sorted; trec_eval's errors for a non-positive or repeated one."""
    cutoffs = sorted(atol(p) for p in params)
    if cutoffs[0] <= 0:
        raise TrecEvalError(
            f"trec_eval: Negative cutoff detected\ntrec_eval: Cannot initialize measure '{name}'",
            status=2,
        )
    if len(set(cutoffs)) != len(cutoffs):
        raise TrecEvalError(
            f"trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure '{name}'",
            status=2,
        )
    return cutoffs


def double_cutoffs(name: str, params: tuple[str, ...]) -> list[float]:
    """Real cutoffs, sorted; trec_eval's error for a repeated one."""
    cutoffs = sorted(atof(p) for p in params)
    if len(set(cutoffs)) != len(cutoffs):
        raise TrecEvalError(
            f"trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure '{name}'",
            status=2,
        )
    return cutoffs


def measure_labels(requests: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    """The printed labels of the requested measures of this module, in print order.

    Examples
    --------
    >>> measure_labels([("P_avgjg", ("10", "5")), ("prefs_simp", ())])
    ['prefs_simp', 'P_avgjg_5', 'P_avgjg_10']
    """
    labels: list[str] = []
    for name, params in resolve_requests(requests).items():
        if name == "P_avgjg":
            labels += [f"P_avgjg_{c}" for c in long_cutoffs(name, params)]
        elif name == "Rprec_mult_avgjg":
            labels += [append_double(name, c) for c in double_cutoffs(name, params)]
        else:
            labels.append(name)
    return labels


# Reading

"""trec_eval's relation formats ``-R qrels_jg``, ``prefs``, ``qrels_prefs`` and their measures.

trec_eval 10.0-rc3 reads relevance information in three formats besides plain qrels
(``-R``), and computes two measure families only from them. This module reproduces both
as Polars frame operations (joins, group-bys, window functions; no per-query Python
loop). The C sources are the specification: ``get_qrels_jg.c``, ``get_prefs.c``,
``get_qrels_prefs.c``, ``form_prefs_counts.c``, ``form_res_rels_jg.c`` and the
``m_prefs_*.c`` / ``m_*_avgjg.c`` measure files.

Contract (for the ``trec-eval`` command and ``trec_eval.py``)
-------------------------------------------------------------
``read_relations(path_or_frame, relation_format) -> pl.DataFrame``
    ``relation_format`` is ``"qrels_jg"``, ``"prefs"`` or ``"qrels_prefs"``. Columns:

    * ``qrels_jg`` (line ``qid jg docno rel``): ``user`` (String, query id), ``jg``
      (String, judgment group), ``item`` (String, docno), ``relevance`` (Int64, read as
      C's ``atol``). A repeated (qid, jg, docno) is an error, as in trec_eval.
    * ``prefs`` (line ``qid jg jsg docno rel_level``) and ``qrels_prefs`` (a qrels line
      ``qid jg docno rel_level``, every line in judgment sub-group ``"0"``): ``user``,
      ``jg``, ``jsg``, ``item`` (String) and ``rel_level`` (Float64, read as C's
      ``atof``).

    Files are read as trec_eval reads them: fields separated by white space, exactly
    that many fields per line (else ``TrecEvalError`` "Malformed line N", exit 2),
    blank lines malformed, a line starting with ``#`` skipped (but, as in the C code, a
    line right after a skipped comment line is always parsed). A frame is checked for
    the columns above (``qrels_jg`` and ``qrels_prefs`` also accept a qrels frame
    ``user, iter, item, relevance``: iter is the judgment group) and cast.

``PREFS_MEASURES: tuple[str, ...]``
    The measure names, in trec_eval's print order: ``prefs_num_prefs_poss``,
    ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``, ``prefs_simp``, ``prefs_pair``,
    ``prefs_avgjg``, ``prefs_avgjg_Rnonrel``, ``prefs_simp_ret``, ``prefs_pair_ret``,
    ``prefs_avgjg_ret``, ``prefs_avgjg_Rnonrel_ret``, ``prefs_simp_imp``,
    ``prefs_pair_imp``, ``prefs_avgjg_imp``, ``map_avgjg``, ``P_avgjg``,
    ``Rprec_mult_avgjg``. In trec_eval's full list they come right after
    ``num_nonrel_judged_ret`` and before ``yaap`` (see ``PRINT_AFTER`` / ``PRINT_BEFORE``).
    Parameters (``MEASURE_DEFAULTS``): ``P_avgjg`` cutoffs ``5,10,15,20,30,100,200,500,1000``
    (labels ``P_avgjg_5``...), ``Rprec_mult_avgjg`` multiples ``0.2,0.4,...,2.0`` (labels
    ``Rprec_mult_avgjg_0.20``..., ``%3.2f``); the others take none (parameters are
    ignored, as trec_eval does). ``-m`` group names (``MEASURE_GROUPS``): ``all_prefs``
    = runid, num_q and the 14 ``prefs_*`` measures; ``prefs`` = runid, num_q,
    ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret``,
    ``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``; ``qrels_jg`` = runid, num_q,
    ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``. (runid and num_q are the caller's.)
    Which relation format each measure needs: ``required_format(name)``; trec_eval's
    error when it does not match: ``incompatible_format_error(name)`` (exit 4, nothing
    printed for that query). With ``-R qrels_jg``/``prefs``/``qrels_prefs`` no common
    measure works (they all need plain qrels), and with ``-R qrels`` none of these does.

``relation_measures(relations, qrels, run, requests, *, relation_format, rel_level=1,
max_docs_per_query=None, judged_docs_only=False, complete=False) -> pl.DataFrame``
    ``relations`` is the frame from ``read_relations`` (``qrels`` is only used to give
    trec_eval's error when ``relation_format="qrels"`` and one of these measures is
    requested). ``run`` has columns ``user`` (String), ``item`` (String), ``score``
    (Float64): one row per run line as read, **not deduplicated, not cut by -M and not
    filtered by -J**: pass ``max_docs_per_query`` (``-M``) and ``judged_docs_only``
    (``-J``) instead, because these families order ties differently from the common
    measures (prefs: score descending then docno *ascending*; qrels_jg: docno
    descending, as the common measures) and ``-J`` is per judgment group for qrels_jg
    and ignored for prefs. A docno repeated within the first ``max_docs_per_query``
    documents of a query is trec_eval's "duplicate docs" failure (raised here).
    ``requests`` are ``(name, params)`` pairs as parsed from ``-m`` (group names are
    expanded here; names of other measures are ignored; the first non-empty params of a
    measure win, as in trec_eval). ``rel_level`` is ``-l`` (qrels_jg only).
    ``complete`` is ``-c``: a query of the relations absent from the run is evaluated
    on trec_eval's placeholder ranking (one unjudged document) and gets rows; without
    it such a query is skipped (trec_eval 10.0-rc3 exits instead, a regression; the
    documented intent is to skip it). Queries of the run without relations are ignored.

    Returns one row per (query, printed label): ``query`` (String), ``measure`` (the
    label, e.g. ``P_avgjg_5``), ``value`` (Float64), ``summary`` (``"mean"`` or
    ``"sum"``), sorted as trec_eval prints with ``-q`` (queries in byte order, then
    measure order). The summary (``summarize``) is the mean over the evaluated queries
    (with ``-c``: over all queries of the relations, each present as rows) or, for the
    three ``prefs_num_prefs_*`` counts, the sum. A query never yields a missing value:
    trec_eval prints 0 where a ratio is undefined (and reports ``inf`` where it divides
    by zero; so do we). ``format_value(label, value)`` gives the printed text: the three
    counts as integers (``%ld``), everything else ``%6.4f``.

``measure_labels(requests)`` lists the printed labels in order (parameters sorted as
trec_eval sorts them; a bad cutoff raises trec_eval's "Cannot initialize measure",
exit 2).

Failures trec_eval reports (malformed lines, duplicate docs, a doc at two levels of a
one-subgroup judgment group, 0 and non-0 levels of a doc, cyclic preferences) raise
``TrecEvalError`` (a ``ValueError``): ``message`` is trec_eval's stderr text,
``exit_code`` its exit status (134 for the cycle, where trec_eval calls ``abort()``),
``query`` the query being evaluated: the first failure trec_eval meets (queries in byte
order, then judgment groups), so with ``-q`` trec_eval has printed the lines of the
queries before it.

Where trec_eval's behaviour is undefined we choose: a ``#`` line as the last line of a
relations file (trec_eval reads past its buffer) is skipped; in
``prefs_avgjg_Rnonrel(_ret)`` a lowest class smaller than R (the C code reads past the
array) contributes the rows it has; per-pair preference counts do not wrap at 65,535
judgment groups; NaN scores or levels sort as Polars sorts them.

Examples
--------
>>> import polars as pl
>>> from polars_rankeval.trec_eval import prefs as trec_prefs
>>> prefs = pl.DataFrame(
...     {"user": ["q1"] * 3, "jg": ["u1"] * 3, "jsg": ["s1"] * 3,
...      "item": ["d1", "d2", "d3"], "rel_level": [3.0, 2.0, 0.0]}
... )
>>> run = pl.DataFrame({"user": ["q1", "q1"], "item": ["d2", "d1"], "score": [2.0, 1.0]})
>>> out = trec_prefs.relation_measures(
...     prefs, None, run, [("prefs_simp", ()), ("prefs_num_prefs_poss", ())],
...     relation_format="prefs",
... )
>>> out.select("measure", "value").rows()
[('prefs_num_prefs_poss', 3.0), ('prefs_simp', 0.6666666666666666)]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import polars as pl

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

BOGUS_DOCNO = "ceci_nest_pas_un_docno"
"""The docno of trec_eval's placeholder ranking for a query missing from the run (-c)."""


class TrecEvalError(ValueError):
    """A failure trec_eval reports: its stderr text, exit status and query (if any)."""

    def __init__(self, message: str, *, exit_code: int, query: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.query = query


# ---------------------------------------------------------------------------------------
# Measure names, formats and printing


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
    raise ValueError(f"measure must be one of {', '.join(PREFS_MEASURES)}, got {name!r}")


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
        f"{first}\ntrec_eval: Can't calculate measure '{name}'", exit_code=4, query=query
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


def _c_atol(text: str) -> int:
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


_ATOF = r"^\s*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|(?i:infinity|inf|nan)))"


def _c_atof(text: str) -> float:
    match = re.match(_ATOF, text)
    return float(match.group(1)) if match else 0.0


def _append_double(name: str, value: float) -> str:
    # append_double: snprintf(buf, strlen(name) + 10, "%s_%3.2f", ...) truncates
    return f"{name}_{value:3.2f}"[: len(name) + 9]


def _resolve_requests(
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


def _long_cutoffs(name: str, params: tuple[str, ...]) -> list[int]:
    cutoffs = sorted(_c_atol(p) for p in params)
    if cutoffs[0] <= 0:
        raise TrecEvalError(
            f"trec_eval: Negative cutoff detected\ntrec_eval: Cannot initialize measure '{name}'",
            exit_code=2,
        )
    if len(set(cutoffs)) != len(cutoffs):
        raise TrecEvalError(
            f"trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure '{name}'",
            exit_code=2,
        )
    return cutoffs


def _double_cutoffs(name: str, params: tuple[str, ...]) -> list[float]:
    cutoffs = sorted(_c_atof(p) for p in params)
    if len(set(cutoffs)) != len(cutoffs):
        raise TrecEvalError(
            f"trec_eval: duplicate cutoffs detected\ntrec_eval: Cannot initialize measure '{name}'",
            exit_code=2,
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
    for name, params in _resolve_requests(requests).items():
        if name == "P_avgjg":
            labels += [f"P_avgjg_{c}" for c in _long_cutoffs(name, params)]
        elif name == "Rprec_mult_avgjg":
            labels += [_append_double(name, c) for c in _double_cutoffs(name, params)]
        else:
            labels.append(name)
    return labels


# ---------------------------------------------------------------------------------------
# Reading


_FIELDS: dict[str, tuple[str, ...]] = {
    "qrels_jg": ("user", "jg", "item", "relevance"),
    "prefs": ("user", "jg", "jsg", "item", "rel_level"),
    "qrels_prefs": ("user", "jg", "item", "rel_level"),
}
_READER = {"qrels_jg": "get_qrels_jg", "prefs": "get_prefs", "qrels_prefs": "get_qrels_prefs"}
_WS = "[ \t\r\x0b\x0c]"
_NOT_WS = "[^ \t\r\x0b\x0c]+"


def _check_format(relation_format: str) -> None:
    if relation_format not in RELATION_FORMATS:
        raise ValueError(
            f"relation_format must be one of {', '.join(RELATION_FORMATS)}, got {relation_format!r}"
        )


def read_relations(
    source: str | Path | pl.DataFrame, relation_format: RelationFormat
) -> pl.DataFrame:
    """Read a ``-R qrels_jg``, ``prefs`` or ``qrels_prefs`` file as trec_eval does.

    Parameters
    ----------
    source
        A file path, or a frame with the output columns (see below).
    relation_format
        ``"qrels_jg"`` (``qid jg docno rel``), ``"prefs"`` (``qid jg jsg docno rel_level``)
        or ``"qrels_prefs"`` (``qid jg docno rel_level``, one sub-group ``"0"``).

    Returns
    -------
    polars.DataFrame
        qrels_jg: ``user, jg, item`` (String), ``relevance`` (Int64, C ``atol``).
        prefs, qrels_prefs: ``user, jg, jsg, item`` (String), ``rel_level`` (Float64,
        C ``atof``). Rows in file order.

    Raises
    ------
    TrecEvalError
        An empty or unreadable file, a malformed line (trec_eval's line number counts
        parsed lines), a repeated (qid, jg, docno) in qrels_jg.

    Examples
    --------
    >>> import io, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "prefs")
    >>> _ = open(path, "w").write(chr(10).join(["q1 u1 s1 d1 3", "# note", "q1 u1 s1 d2 1e0", ""]))
    >>> read_relations(path, "prefs").rows()
    [('q1', 'u1', 's1', 'd1', 3.0), ('q1', 'u1', 's1', 'd2', 1.0)]
    """
    _check_format(relation_format)
    if isinstance(source, pl.DataFrame):
        return _relations_from_frame(source, relation_format)
    if not isinstance(source, (str, Path)):
        raise TypeError(f"source must be a path or a polars DataFrame, got {type(source).__name__}")
    reader = _READER[relation_format]
    kind = "qrels" if relation_format == "qrels_jg" else "prefs"
    try:
        data = Path(source).read_bytes()
    except OSError:
        data = b""
    if not data:
        raise TrecEvalError(
            f"trec_eval.{reader}: Cannot read {kind} file '{source}'\n"
            f"trec_eval: Quit in file '{source}'",
            exit_code=2,
        )
    lines = data.decode("utf-8", errors="replace").split("\n")
    if data.endswith(b"\n"):
        lines.pop()
    fields = _FIELDS[relation_format]
    frame = pl.DataFrame({"line": lines}, schema={"line": pl.String})
    line = pl.col("line")
    is_comment = line.str.starts_with("#")
    # a '#' line is skipped, then the next line is parsed whatever it holds: in a run of
    # consecutive '#' lines the 1st, 3rd, ... are skipped and the others parsed
    run_id = (is_comment != is_comment.shift(1, fill_value=False)).cum_sum()
    frame = (
        frame.with_columns(is_comment.alias("c"), run_id.alias("r"))
        .with_columns(pl.int_range(pl.len()).over("r").alias("k"))
        .filter(~(pl.col("c") & (pl.col("k") % 2 == 0)))
        .with_columns(line.str.extract_all(_NOT_WS).alias("f"))
    )
    bad = frame.with_row_index("n", offset=1).filter(pl.col("f").list.len() != len(fields))
    if bad.height:
        number = bad["n"][0]
        raise TrecEvalError(
            f"trec_eval.{reader}: Malformed line {number}\ntrec_eval: Quit in file '{source}'",
            exit_code=2,
        )
    out = frame.select(pl.col("f").list.get(i).alias(name) for i, name in enumerate(fields))
    if relation_format == "qrels_jg":
        out = out.with_columns(_atol_expr(pl.col("relevance")))
        _check_qrels_jg_duplicates(out, source)
        return out
    out = out.with_columns(_atof_expr(pl.col("rel_level")))
    if relation_format == "qrels_prefs":
        out = out.select("user", "jg", pl.lit("0").alias("jsg"), "item", "rel_level")
    return out


def _atol_expr(expr: pl.Expr) -> pl.Expr:
    """C ``atol`` of a String column: the leading integer, 0 if none."""
    return (
        expr.str.extract(r"^\s*([+-]?\d+)", 1)
        .str.strip_prefix("+")
        .cast(pl.Int64, strict=False)
        .fill_null(0)
    )


def _atof_expr(expr: pl.Expr) -> pl.Expr:
    """C ``atof`` of a String column: the leading decimal number, inf or nan; 0 if none."""
    return expr.str.extract(_ATOF, 1).cast(pl.Float64, strict=False).fill_null(0.0)


def _check_qrels_jg_duplicates(frame: pl.DataFrame, source: object) -> None:
    dup = (
        frame.filter(pl.struct("user", "jg", "item").is_duplicated())
        .sort("user", "jg", "item")
        .head(1)
    )
    if dup.height:
        raise TrecEvalError(
            f"trec_eval.get_qrels: duplicate docs {dup['item'][0]}\n"
            f"trec_eval: Quit in file '{source}'",
            exit_code=2,
        )


def _relations_from_frame(frame: pl.DataFrame, relation_format: str) -> pl.DataFrame:
    cols = set(frame.columns)
    if relation_format == "qrels_jg" and "jg" not in cols and "iter" in cols:
        frame = frame.rename({"iter": "jg"})  # a qrels frame: its iter field is the group
    if relation_format == "qrels_prefs" and "jsg" not in cols:
        if "jg" not in cols and "iter" in cols:
            frame = frame.rename({"iter": "jg"})
        if "rel_level" not in cols and "relevance" in frame.columns:
            frame = frame.rename({"relevance": "rel_level"})
        frame = frame.with_columns(pl.lit("0").alias("jsg"))
    fields = _FIELDS["prefs" if relation_format == "qrels_prefs" else relation_format]
    missing = [c for c in fields if c not in frame.columns]
    if missing:
        raise ValueError(
            f"relations frame for {relation_format!r} is missing column(s) {', '.join(missing)}; "
            f"expected {', '.join(fields)}"
        )
    value = fields[-1]
    dtype = pl.Int64 if relation_format == "qrels_jg" else pl.Float64
    out = frame.select(*(pl.col(c).cast(pl.String) for c in fields[:-1]), pl.col(value).cast(dtype))
    nulls = [c for c in fields if out[c].null_count()]
    if nulls:
        raise ValueError(f"relations frame has null values in column(s) {', '.join(nulls)}")
    if relation_format == "qrels_jg":
        _check_qrels_jg_duplicates(out, "<frame>")
    return out


# ---------------------------------------------------------------------------------------
# Evaluation


def relation_measures(
    relations: pl.DataFrame | None,
    qrels: pl.DataFrame | None,
    run: pl.DataFrame | pl.LazyFrame,
    requests: Sequence[tuple[str, tuple[str, ...]]],
    *,
    relation_format: str,
    rel_level: int = 1,
    max_docs_per_query: int | None = None,
    judged_docs_only: bool = False,
    complete: bool = False,
) -> pl.DataFrame:
    """Per-query values of the preference and ``*_avgjg`` measures, as trec_eval computes them.

    Parameters
    ----------
    relations
        From ``read_relations`` in ``relation_format``.
    qrels
        A plain qrels frame; unused except that with ``relation_format="qrels"`` a
        requested measure of this module raises trec_eval's format failure.
    run
        ``user`` (String), ``item`` (String), ``score`` (Float64); unique (user, item)
        among the first ``max_docs_per_query`` documents of a query; not cut by -M nor
        filtered by -J (see ``max_docs_per_query`` and ``judged_docs_only``).
    requests
        ``(name, params)`` from ``-m``; group names expanded; other measures ignored.
    relation_format
        ``"qrels_jg"``, ``"prefs"``, ``"qrels_prefs"`` (or ``"qrels"``, see ``qrels``).
    rel_level
        ``-l``: a qrels_jg judgment counts as relevant when ``relevance >= rel_level``.
    max_docs_per_query
        ``-M``: only the first this many documents of each query (after sorting).
    judged_docs_only
        ``-J``: qrels_jg measures rank only the documents judged (relevance >= 0) in each
        judgment group; trec_eval ignores it for the preference measures.
    complete
        ``-c``: queries of the relations absent from the run get trec_eval's placeholder
        ranking and rows; otherwise they are skipped.

    Returns
    -------
    polars.DataFrame
        ``query``, ``measure`` (printed label), ``value`` (Float64), ``summary``
        (``"mean"``/``"sum"``), in trec_eval's ``-q`` order.

    Examples
    --------
    >>> import polars as pl
    >>> jg = pl.DataFrame({"user": ["q"] * 3, "jg": ["a", "a", "b"],
    ...                    "item": ["d1", "d2", "d2"], "relevance": [1, 0, 1]})
    >>> run = pl.DataFrame({"user": ["q", "q"], "item": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> relation_measures(jg, None, run, [("map_avgjg", ())], relation_format="qrels_jg").rows()
    [('q', 'map_avgjg', 0.75, 'mean')]
    """
    wanted = _resolve_requests(requests)
    if relation_format == "qrels":
        if wanted:
            raise incompatible_format_error(next(iter(wanted)))
        return _empty()
    _check_format(relation_format)
    if not wanted:
        return _empty()
    if relations is None:
        raise ValueError(
            f"relations must be a frame for relation_format={relation_format!r}, got None"
        )
    for name in wanted:
        if not format_accepts(name, relation_format):
            raise incompatible_format_error(name)
    labels = measure_labels(list(wanted.items()))
    if isinstance(run, pl.LazyFrame):
        run = run.collect()
    if not isinstance(run, pl.DataFrame):
        raise TypeError(f"run must be a polars DataFrame or LazyFrame, got {type(run).__name__}")
    missing = [c for c in ("user", "item", "score") if c not in run.columns]
    if missing:
        raise ValueError(
            f"run is missing column(s) {', '.join(missing)}; expected user, item, score"
        )
    if max_docs_per_query is not None and max_docs_per_query < 0:
        raise ValueError(f"max_docs_per_query must be >= 0, got {max_docs_per_query}")
    run = run.select(
        pl.col("user").cast(pl.String),
        pl.col("item").cast(pl.String),
        (pl.col("score").cast(pl.Float64) + 0.0).alias("score"),  # -0.0 == 0.0 as in C
    )
    queries = relations.select("user").unique()
    present = run.join(queries, on="user", how="semi")
    if complete:
        absent = queries.join(present.select("user").unique(), on="user", how="anti")
        bogus = absent.with_columns(pl.lit(BOGUS_DOCNO).alias("item"), pl.lit(1.0).alias("score"))
        present = pl.concat([present, bogus])
    evaluated = present.select("user").unique()
    relations = relations.join(evaluated, on="user", how="semi")
    try:
        if relation_format == "qrels_jg":
            values = _jg_values(
                relations, present, wanted, rel_level, max_docs_per_query, judged_docs_only
            )
        else:
            values = _prefs_values(relations, present, wanted, max_docs_per_query)
    except TrecEvalError as failure:
        if failure.message.endswith("Can't calculate measure"):
            # trec_eval names the first requested measure (in its order) that failed
            raise TrecEvalError(
                f"{failure.message} '{next(iter(wanted))}'",
                exit_code=failure.exit_code,
                query=failure.query,
            ) from None
        raise
    order = pl.DataFrame({"measure": labels, "_o": range(len(labels))})
    out = (
        values.join(order, on="measure", how="inner")
        .sort(pl.col("user"), "_o")
        .select(
            pl.col("user").alias("query"),
            "measure",
            pl.col("value").cast(pl.Float64),
            pl.when(pl.col("measure").is_in(list(INTEGER_MEASURES)))
            .then(pl.lit("sum"))
            .otherwise(pl.lit("mean"))
            .alias("summary"),
        )
    )
    return out


def summarize(per_query: pl.DataFrame) -> pl.DataFrame:
    """trec_eval's summary (``all``) line values from ``relation_measures`` output.

    Sums in query order (as trec_eval accumulates), then divides by the number of
    queries for the ``"mean"`` measures.

    Examples
    --------
    >>> frame = pl.DataFrame({"query": ["a", "b"], "measure": ["prefs_simp"] * 2,
    ...                       "value": [0.5, 0.25], "summary": ["mean"] * 2})
    >>> summarize(frame).rows()
    [('prefs_simp', 0.375)]
    """
    n = per_query["query"].n_unique()
    order = per_query.select("measure").unique(maintain_order=True).with_row_index("_o")
    return (
        per_query.join(order, on="measure")
        .group_by("measure", "_o", "summary", maintain_order=True)
        .agg(pl.col("value").cum_sum().last().alias("total"))
        .sort("_o")
        .select(
            "measure",
            pl.when(pl.col("summary") == "sum")
            .then(pl.col("total"))
            .otherwise(pl.col("total") / pl.lit(max(n, 1), dtype=pl.Float64))
            .alias("value"),
        )
    )


def _empty() -> pl.DataFrame:
    return pl.DataFrame(
        schema={"query": pl.String, "measure": pl.String, "value": pl.Float64, "summary": pl.String}
    )


_Failure = tuple[str, int, int, str, int]  # query, JG number, stage, message, exit status


def _raise_first(failures: list[_Failure]) -> None:
    """Raise the failure trec_eval meets first: queries in byte order, then JGs, stages."""
    if failures:
        query, _, _, message, code = min(
            failures, key=lambda f: (f[0].encode("utf-8", "surrogateescape"), f[1], f[2])
        )
        raise TrecEvalError(message, exit_code=code, query=query)


# Polars sorts String columns in byte order, as trec_eval's strcmp compares (the tests
# check orders on ids that sort differently as text and as bytes).


def _rank(
    run: pl.DataFrame,
    *,
    docno_descending: bool,
    max_docs: int | None,
    failures: list[_Failure] | None = None,
) -> pl.DataFrame:
    """Rank (1-based) by score descending, ties by docno; cut at ``max_docs``.

    A docno repeated within the cut list is trec_eval's "duplicate docs" failure (the
    first in docno order of each query); collected into ``failures`` or raised.
    """
    ranked = run.sort(
        pl.col("user"),
        pl.col("score"),
        pl.col("item"),
        descending=[False, True, docno_descending],
    ).with_columns(pl.int_range(1, pl.len() + 1).over("user").alias("rank"))
    if max_docs is not None:
        ranked = ranked.filter(pl.col("rank") <= max_docs)
    dup = (
        ranked.filter(pl.struct("user", "item").is_duplicated())
        .sort(pl.col("item"))
        .group_by("user", maintain_order=True)
        .agg(pl.col("item").first())
    )
    where = "form_prefs_counts" if not docno_descending else "form_res_qrels"
    found: list[_Failure] = [
        (
            user,
            -1,
            0,
            f"trec_eval.{where}: duplicate docs {item}trec_eval: Can't calculate measure",
            4,
        )
        for user, item in dup.rows()
    ]
    if failures is None:
        _raise_first(found)
    else:
        failures.extend(found)
    return ranked


# ---------------------------------------------------------------------------------------
# qrels_jg: map_avgjg, P_avgjg, Rprec_mult_avgjg


def _jg_values(
    rels: pl.DataFrame,
    run: pl.DataFrame,
    wanted: dict[str, tuple[str, ...]],
    rel_level: int,
    max_docs: int | None,
    judged_only: bool,
) -> pl.DataFrame:
    ranked = _rank(run, docno_descending=True, max_docs=max_docs).select("user", "item", "rank")
    jgs = rels.select("user", "jg").unique()
    num_jgs = jgs.group_by("user").agg(pl.len().alias("num_jgs"))
    rel_value = (
        pl.when(pl.col("relevance").is_null())
        .then(-1)  # not in this JG's pool
        .when(pl.col("relevance") < 0)
        .then(-2)  # in the pool, not judged
        .otherwise(pl.col("relevance"))
        .alias("rel")
    )
    if rel_level < 0:
        # unjudged docs count as relevant: every JG ranks the whole (cut) run
        lists = jgs.join(ranked, on="user", how="inner").join(
            rels, on=["user", "jg", "item"], how="left"
        )
    else:
        # only judged docs can be relevant: a JG's list needs just its judged docs, at
        # their rank in the run (or, under -J, their rank among the JG's judged docs)
        lists = rels.join(ranked, on=["user", "item"], how="inner")
    lists = lists.with_columns(rel_value)
    if judged_only:
        lists = lists.filter(pl.col("rel") >= 0)
    lists = lists.sort("user", "jg", "rank")
    position = (
        pl.int_range(1, pl.len() + 1).over("user", "jg")
        if judged_only or rel_level < 0
        else pl.col("rank")
    )
    lists = lists.with_columns(
        position.alias("pos"), (pl.col("rel") >= rel_level).cast(pl.Int64).alias("is_rel")
    ).with_columns(pl.col("is_rel").cum_sum().over("user", "jg").alias("rel_so_far"))
    num_rel = (
        rels.filter((pl.col("relevance") >= 0) & (pl.col("relevance") >= rel_level))
        .group_by("user", "jg")
        .agg(pl.len().alias("num_rel"))
    )
    counts = lists.group_by("user", "jg").agg(
        pl.len().alias("num_ret"),
        pl.col("is_rel").sum().alias("num_rel_ret"),
        # form_res_rels_jg counts only judged docs in num_rel_ret (matters for -l < 0)
        ((pl.col("is_rel") == 1) & (pl.col("rel") >= 0)).sum().alias("judged_rel_ret"),
    )
    if not judged_only and rel_level >= 0:
        # the list of every JG is the whole cut run
        counts = counts.drop("num_ret")
        run_len = ranked.group_by("user").agg(pl.len().alias("num_ret"))
        per_jg = jgs.join(run_len, on="user", how="left").join(
            counts, on=["user", "jg"], how="left"
        )
    else:
        per_jg = jgs.join(counts, on=["user", "jg"], how="left")
    per_jg = per_jg.join(num_rel, on=["user", "jg"], how="left").with_columns(
        pl.col("num_ret", "num_rel_ret", "judged_rel_ret", "num_rel").fill_null(0)
    )
    parts: list[pl.DataFrame] = []

    def avg_over_jgs(frame: pl.DataFrame) -> pl.DataFrame:
        # sum over jgs in jg order, divided by num_jgs when there are several
        return (
            frame.sort("user", pl.col("jg"))
            .group_by("user", "measure", maintain_order=True)
            .agg(pl.col("v").cum_sum().last().alias("s"))
            .join(num_jgs, on="user")
            .select(
                "user",
                "measure",
                pl.when(pl.col("num_jgs") > 1)
                .then(pl.col("s") / pl.col("num_jgs"))
                .otherwise(pl.col("s"))
                .alias("value"),
            )
        )

    if "map_avgjg" in wanted:
        ap = (
            lists.filter(pl.col("is_rel") == 1)
            .group_by("user", "jg", maintain_order=True)
            .agg(
                (pl.col("rel_so_far") / pl.col("pos")).cum_sum().last().alias("sum"),
            )
        )
        v = per_jg.join(ap, on=["user", "jg"], how="left").with_columns(
            pl.when(pl.col("sum").is_not_null())
            .then(pl.col("sum") / pl.col("num_rel"))
            .otherwise(0.0)
            .alias("v"),
            pl.lit("map_avgjg").alias("measure"),
        )
        parts.append(avg_over_jgs(v.select("user", "jg", "measure", "v")))

    def precision_at(cut: pl.DataFrame) -> pl.DataFrame:
        # cut: user, jg, measure, c (Int64). value: rel in top min(c, num_ret) / c, 0 if c < 1
        top = (
            cut.with_columns(pl.col("c").clip(lower_bound=0).alias("k"))
            .sort("k")
            .join_asof(
                lists.select("user", "jg", pl.col("pos").alias("k"), "rel_so_far").sort("k"),
                on="k",
                by=["user", "jg"],
                strategy="backward",
                check_sortedness=False,  # sorted on k globally, hence within each group
            )
            .with_columns(pl.col("rel_so_far").fill_null(0))
        )
        return top.select(
            "user",
            "jg",
            "measure",
            pl.when(pl.col("c") >= 1)
            .then(pl.col("rel_so_far") / pl.col("c"))
            .otherwise(0.0)
            .alias("v"),
        )

    def rprec_at(cut: pl.DataFrame) -> pl.DataFrame:
        # m_Rprec_mult_avgjg.c walks the list upwards from num_ret starting from the
        # judged relevant count A and dropping each doc with rel >= rel_level (T in all):
        # at c <= num_ret the count is A - T + rel_in_top(c) (= rel_in_top(c) unless
        # -l < 0 lets unjudged docs count); the walk stops at 0. Past the list: A / c.
        top = (
            cut.with_columns(pl.col("c").clip(lower_bound=0).alias("k"))
            .sort("k")
            .join_asof(
                lists.select("user", "jg", pl.col("pos").alias("k"), "rel_so_far").sort("k"),
                on="k",
                by=["user", "jg"],
                strategy="backward",
                check_sortedness=False,
            )
            .with_columns(pl.col("rel_so_far").fill_null(0))
        )
        left = pl.col("judged_rel_ret") - pl.col("num_rel_ret") + pl.col("rel_so_far")
        return top.select(
            "user",
            "jg",
            "measure",
            pl.when(pl.col("c") < 1)
            .then(0.0)
            .when(pl.col("c") > pl.col("num_ret"))
            .then(pl.col("judged_rel_ret") / pl.col("c"))
            .when(left > 0)
            .then(left / pl.col("c"))
            .otherwise(0.0)
            .alias("v"),
        )

    if "P_avgjg" in wanted:
        cuts = _long_cutoffs("P_avgjg", wanted["P_avgjg"])
        table = pl.DataFrame(
            {"measure": [f"P_avgjg_{c}" for c in cuts], "c": cuts},
            schema={"measure": pl.String, "c": pl.Int64},
        )
        parts.append(avg_over_jgs(precision_at(jgs.join(table, how="cross"))))
    if "Rprec_mult_avgjg" in wanted:
        mults = _double_cutoffs("Rprec_mult_avgjg", wanted["Rprec_mult_avgjg"])
        table = pl.DataFrame(
            {"measure": [_append_double("Rprec_mult_avgjg", m) for m in mults], "m": mults},
            schema={"measure": pl.String, "m": pl.Float64},
        )
        cut = per_jg.join(table, how="cross").with_columns(
            (pl.col("m") * pl.col("num_rel").cast(pl.Float64) + 0.9)
            .cast(pl.Int64, strict=False)
            .alias("c")
        )
        parts.append(
            avg_over_jgs(
                rprec_at(
                    cut.select(
                        "user", "jg", "measure", "c", "num_ret", "num_rel_ret", "judged_rel_ret"
                    )
                )
            )
        )
    return (
        pl.concat(parts)
        if parts
        else pl.DataFrame(schema={"user": pl.String, "measure": pl.String, "value": pl.Float64})
    )


# ---------------------------------------------------------------------------------------
# prefs / qrels_prefs: the prefs_* measures


def _prefs_values(
    rels: pl.DataFrame,
    run: pl.DataFrame,
    wanted: dict[str, tuple[str, ...]],
    max_docs: int | None,
) -> pl.DataFrame:
    failures: list[_Failure] = []
    ranked = _rank(run, docno_descending=False, max_docs=max_docs, failures=failures).select(
        "user", "item", "rank"
    )
    rels = rels.select("user", "jg", "jsg", "item", pl.col("rel_level").alias("lvl"))
    # judgment groups numbered in trec_eval's order (query, then jg, as bytes)
    jgs = (
        rels.select("user", "jg")
        .unique()
        .sort(pl.col("user"), pl.col("jg"))
        .with_row_index("g")
        .with_columns(pl.col("g").cast(pl.Int64))
    )
    judged = rels.select("user", "item").unique()
    # internal docids: retrieved judged docs by rank (0..njr-1), then the others by docno
    ret = (
        ranked.join(judged, on=["user", "item"], how="semi")
        .sort("user", "rank")
        .with_columns(pl.int_range(pl.len()).over("user").alias("d"))
    )
    njr = (
        judged.select("user")
        .unique()
        .join(ret.group_by("user").agg(pl.len().alias("njr")), on="user", how="left")
        .with_columns(pl.col("njr").fill_null(0).cast(pl.Int64))
    )
    unret = (
        judged.join(ret, on=["user", "item"], how="anti")
        .sort("user", pl.col("item"))
        .join(njr, on="user")
        .with_columns((pl.col("njr") + pl.int_range(pl.len()).over("user")).alias("d"))
    )
    docs = pl.concat(
        [
            ret.select("user", "item", pl.col("d").cast(pl.Int64)),
            unret.select("user", "item", pl.col("d").cast(pl.Int64)),
        ]
    )
    rows = (
        rels.join(docs, on=["user", "item"])
        .join(njr, on="user")
        .join(jgs, on=["user", "jg"])
        .with_columns((pl.col("d") < pl.col("njr")).alias("ret"))
    )
    kind = rows.group_by("g").agg((pl.col("jsg").n_unique() > 1).alias("pa"))
    rows = rows.join(kind, on="g")
    ec = rows.filter(~pl.col("pa")).select("user", "g", "item", "lvl", "d", "njr", "ret")
    pa_rows = rows.filter(pl.col("pa")).drop("pa")
    _check_ec_levels(ec, failures)
    pa_rel = _pa_rel_levels(pa_rows, failures).join(jgs, on=["user", "jg"])
    pa_edges = _pa_closure(pa_rows, failures).join(jgs, on=["user", "jg"])
    _raise_first(failures)

    # ---- EC judgment groups (one JSG): counted from level counts, no pair expansion
    lc = _level_pair_counts(ec, ["g"])
    conc = _concordant(ec, ["g"])
    ec_counts = lc.join(conc, on="g", how="left").select(
        "g",
        pl.col("c").fill_null(0).alias("ful_ret"),
        pl.col("p_rr").alias("poss_ret"),
        pl.col("p_ru").alias("ful_imp"),
        (pl.col("p_ru") + pl.col("p_ur")).alias("poss_imp"),
        pl.col("p_uu").alias("notoccur"),
    )
    # ---- preference-array judgment groups: transitive closure of the JSG preferences
    x_ret = pl.col("d") < pl.col("njr")
    y_ret = pl.col("d_y") < pl.col("njr")
    pa_counts = pa_edges.group_by("g").agg(
        (x_ret & y_ret & (pl.col("d") < pl.col("d_y"))).sum().alias("ful_ret"),
        (x_ret & y_ret).sum().alias("poss_ret"),
        (x_ret & ~y_ret).sum().alias("ful_imp"),
        (x_ret ^ y_ret).sum().alias("poss_imp"),
        (~x_ret & ~y_ret).sum().alias("notoccur"),
    )
    # relevant / nonrelevant counts: EC rows (with multiplicity; lvl <= 0 is nonrel),
    # PA docs by their final rel_level (> 0 rel, == 0 nonrel, < 0 neither)
    ec_rel = ec.group_by("g").agg(
        (pl.col("lvl") > 0).sum().alias("num_rel"),
        ((pl.col("lvl") > 0) & pl.col("ret")).sum().alias("num_rel_ret"),
        (pl.col("lvl") <= 0).sum().alias("num_nonrel"),
        ((pl.col("lvl") <= 0) & pl.col("ret")).sum().alias("num_nonrel_ret"),
    )
    pa_relc = pa_rel.group_by("g").agg(
        (pl.col("lvl") > 0).sum().alias("num_rel"),
        ((pl.col("lvl") > 0) & x_ret).sum().alias("num_rel_ret"),
        (pl.col("lvl") == 0).sum().alias("num_nonrel"),
        ((pl.col("lvl") == 0) & x_ret).sum().alias("num_nonrel_ret"),
    )
    count_cols = ["ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur"]
    rel_cols = ["num_rel", "num_rel_ret", "num_nonrel", "num_nonrel_ret"]
    jg_table = (
        jgs.join(kind, on="g")
        .join(
            pl.concat([ec_rel, pa_relc]).with_columns(pl.col(rel_cols).cast(pl.Int64)),
            on="g",
            how="left",
        )
        .join(
            pl.concat(
                [
                    ec_counts.with_columns(pl.col(count_cols).cast(pl.Int64)),
                    pa_counts.with_columns(pl.col(count_cols).cast(pl.Int64)),
                ]
            ),
            on="g",
            how="left",
        )
        .with_columns(pl.col(*rel_cols, *count_cols).fill_null(0))
        .sort("g")
    )
    parts: list[pl.DataFrame] = []
    per_q = jg_table.group_by("user", maintain_order=True).agg(
        pl.len().alias("num_jgs"), *(pl.col(c).sum() for c in count_cols)
    )
    ful_all = pl.col("ful_ret") + pl.col("ful_imp")
    poss_all = pl.col("poss_ret") + pl.col("poss_imp") + pl.col("notoccur")
    poss_imp = pl.col("poss_ret") + pl.col("poss_imp")

    def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        return pl.when(den > 0).then(num / den).otherwise(0.0)

    simple = {
        "prefs_num_prefs_poss": poss_all.cast(pl.Float64),
        "prefs_num_prefs_ful": ful_all.cast(pl.Float64),
        "prefs_num_prefs_ful_ret": pl.col("ful_ret").cast(pl.Float64),
        "prefs_simp": ratio(ful_all, poss_all),
        "prefs_simp_ret": ratio(pl.col("ful_ret"), pl.col("poss_ret")),
        "prefs_simp_imp": ratio(ful_all, poss_imp),
    }
    for name, expr in simple.items():
        if name in wanted:
            parts.append(per_q.select("user", pl.lit(name).alias("measure"), expr.alias("value")))

    def avg_jg(name: str, jg_ratio: pl.Expr, table: pl.DataFrame = jg_table) -> None:
        # sum of per-jg ratios in jg order; value sum / num_jgs when sum > 0 (NaN -> 0)
        agg = (
            table.sort("g")
            .group_by("user", maintain_order=True)
            .agg(jg_ratio.cum_sum().last().alias("s"), pl.len().alias("n"))
        )
        parts.append(
            agg.select(
                "user",
                pl.lit(name).alias("measure"),
                pl.when((pl.col("s") > 0) & ~pl.col("s").is_nan())
                .then(pl.col("s") / pl.col("n"))
                .otherwise(0.0)
                .alias("value"),
            )
        )

    if "prefs_avgjg" in wanted:
        avg_jg("prefs_avgjg", ratio(ful_all, poss_all))
    if "prefs_avgjg_ret" in wanted:
        avg_jg("prefs_avgjg_ret", ratio(pl.col("ful_ret"), pl.col("poss_ret")))
    if "prefs_avgjg_imp" in wanted:
        avg_jg("prefs_avgjg_imp", ratio(ful_all, poss_imp))
    if "prefs_avgjg_Rnonrel" in wanted or "prefs_avgjg_Rnonrel_ret" in wanted:
        recalc = _rnonrel_recalc(ec, pa_edges, pa_rel, jg_table)
        table = jg_table.join(recalc, on="g", how="left").with_columns(
            pl.col("rc_ful", "rc_poss", "rcr_ful", "rcr_poss").fill_null(0)
        )
        if "prefs_avgjg_Rnonrel" in wanted:
            r, n = pl.col("num_rel"), pl.col("num_nonrel")
            jg_ratio = (
                pl.when(r >= n)
                .then(
                    (ful_all + pl.col("num_rel_ret") * (r - n))
                    / (poss_all + pl.col("num_rel") * (r - n))
                )
                .otherwise(pl.col("rc_ful") / pl.col("rc_poss"))
            )
            avg_jg("prefs_avgjg_Rnonrel", jg_ratio, table)
        if "prefs_avgjg_Rnonrel_ret" in wanted:
            r, n = pl.col("num_rel_ret"), pl.col("num_nonrel_ret")
            jg_ratio = (
                pl.when(r >= n)
                .then(
                    (pl.col("ful_ret") + pl.col("num_rel_ret") * (r - n))
                    / (pl.col("poss_ret") + pl.col("num_rel") * (r - n))
                )
                .otherwise(pl.col("rcr_ful") / pl.col("rcr_poss"))
            )
            avg_jg("prefs_avgjg_Rnonrel_ret", jg_ratio, table)
    pair_names = [n for n in ("prefs_pair", "prefs_pair_ret", "prefs_pair_imp") if n in wanted]
    if pair_names:
        parts.append(_pair_values(ec, pa_edges, rows, per_q.select("user"), pair_names))
    return pl.concat([p.select("user", "measure", pl.col("value").cast(pl.Float64)) for p in parts])


def _check_ec_levels(ec: pl.DataFrame, failures: list[_Failure]) -> None:
    """A doc at two rel_levels in a one-JSG judgment group is trec_eval's failure."""
    clash = (
        ec.group_by("user", "g", "d")
        .agg(pl.col("lvl").n_unique().alias("n"), pl.col("lvl").max().alias("top"))
        .filter(pl.col("n") > 1)
        # the first the pair loop meets: highest level, then lowest docid
        .sort("g", pl.col("top"), "d", descending=[False, True, False])
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            1,
            f"trec_eval.form_prefs_counts: Internal docid {d} occurs with different "
            "rel_level in same jsg\ntrec_eval: Can't calculate measure",
            4,
        )
        for g, user, d in clash.select("g", "user", "d").rows()
    )


def _level_pair_counts(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pairs (x over y: lvl_x > lvl_y) by retrieval of x and y, from level counts.

    ``p_rr`` both retrieved, ``p_ru`` only x, ``p_ur`` only y, ``p_uu`` neither.
    """
    nr, nu = pl.col("nr"), pl.col("nu")
    return (
        rows.group_by(*keys, "lvl")
        .agg(pl.col("ret").sum().alias("nr"), (~pl.col("ret")).sum().alias("nu"))
        .sort(*keys, "lvl")
        .with_columns(
            (nr.cum_sum().over(keys) - nr).alias("lr"),  # rows at lower levels
            (nu.cum_sum().over(keys) - nu).alias("lu"),
        )
        .group_by(keys)
        .agg(
            (nr * pl.col("lr")).sum().alias("p_rr"),
            (nr * pl.col("lu")).sum().alias("p_ru"),
            (nu * pl.col("lr")).sum().alias("p_ur"),
            (nu * pl.col("lu")).sum().alias("p_uu"),
        )
    )


def _concordant(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Pairs of retrieved rows with lvl_x > lvl_y and d_x < d_y (fulfilled, both retrieved).

    For each retrieved row x and each lower level L of its group: the level-L rows after
    x = all level-L rows minus those before x (an as-of lookup of a running count).
    """
    r = rows.filter(pl.col("ret")).select(*keys, "lvl", "d")
    if not r.height:
        return pl.DataFrame(schema={**{k: rows.schema[k] for k in keys}, "c": pl.Int64})
    per_level = r.group_by(*keys, "lvl").agg(pl.len().alias("n_l")).rename({"lvl": "low"})
    running = (
        r.group_by(*keys, "lvl", "d")
        .agg(pl.len().alias("k"))
        .sort("d")
        .with_columns(pl.col("k").cum_sum().over(*keys, "lvl").alias("before"))
        .select(*keys, pl.col("lvl").alias("low"), "d", "before")
    )
    lower = (
        r.join(per_level, on=keys)
        .filter(pl.col("low") < pl.col("lvl"))
        .sort("d")
        .join_asof(
            running,
            on="d",
            by=[*keys, "low"],
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,  # sorted on d globally, hence within each group
        )
    )
    return lower.group_by(keys).agg(
        (pl.col("n_l") - pl.col("before").fill_null(0)).sum().cast(pl.Int64).alias("c")
    )


def _rnonrel_recalc(
    ec: pl.DataFrame,
    pa_edges: pl.DataFrame,
    pa_rel: pl.DataFrame,
    jg_table: pl.DataFrame,
) -> pl.DataFrame:
    """The ``recalculate`` of m_prefs_avgjg_Rnonrel(_ret).c.

    For JGs with more nonrelevant than relevant docs: ``rc_*`` (all docs) and ``rcr_*``
    (retrieved docs only). One-JSG groups: the lowest-level class L is replaced by its
    first R rows S (R = num_rel; num_rel_ret and retrieved rows for ``_ret``); pairs are
    those between the other classes O plus every row against S (the C code also pairs L
    with S); a pair is fulfilled when x is retrieved and ranked above y. Counted from
    running counts. Preference-array groups: the nonrelevant docs after the R-th (by
    internal rank) are dropped from the closed preferences.
    """
    need = jg_table.filter(
        (pl.col("num_rel") < pl.col("num_nonrel"))
        | (pl.col("num_rel_ret") < pl.col("num_nonrel_ret"))
    ).select(
        "g",
        "num_rel",
        "num_rel_ret",
        "ful_ret",
        "poss_ret",
        "ful_imp",
        "poss_imp",
        "notoccur",
    )
    schema = {
        "g": pl.Int64,
        "rc_ful": pl.Int64,
        "rc_poss": pl.Int64,
        "rcr_ful": pl.Int64,
        "rcr_poss": pl.Int64,
    }
    if not need.height:
        return pl.DataFrame(schema=schema)
    # --- one-JSG groups
    rows = (
        ec.join(need.select("g", "num_rel", "num_rel_ret"), on="g")
        .sort("g", "d")
        .with_columns((pl.col("lvl") == pl.col("lvl").min().over("g")).alias("in_l"))
    )
    ret_i = pl.col("ret").cast(pl.Int64)
    o_ret = (~pl.col("in_l") & pl.col("ret")).cast(pl.Int64)
    rows = rows.with_columns(
        # rows strictly before d: running count minus the rows sharing this d
        (ret_i.cum_sum().over("g") - ret_i.cum_sum().over("g", "d")).alias("ret_before"),
        (o_ret.cum_sum().over("g") - o_ret.cum_sum().over("g", "d")).alias("o_ret_before"),
        pl.int_range(pl.len()).over("g", "in_l").alias("k"),
    )
    in_l, ret = pl.col("in_l"), pl.col("ret")
    in_s = in_l & (pl.col("k") < pl.col("num_rel"))
    in_s_ret = in_l & ret & (pl.col("k") < pl.col("num_rel_ret"))
    parts = rows.group_by("g").agg(
        pl.len().alias("n"),
        ret.sum().alias("n_ret"),
        (~in_l).sum().alias("n_o"),
        in_l.sum().alias("n_l"),
        (~in_l & ret).sum().alias("n_o_ret"),
        (in_l & ret).sum().alias("n_l_ret"),
        pl.col("o_ret_before").filter(in_l).sum().alias("sub_a"),
        pl.col("o_ret_before").filter(in_l & ret).sum().alias("sub_a_ret"),
        pl.col("ret_before").filter(in_s).sum().alias("ful_b"),
        in_s.sum().alias("n_s"),
        pl.col("ret_before").filter(in_s_ret).sum().alias("ful_b_ret"),
        in_s_ret.sum().alias("n_s_ret"),
    )
    c = pl.col
    p_all = c("poss_ret") + c("poss_imp") + c("notoccur")
    ec_rc = (
        parts.join(need, on="g")
        .with_columns(pl.all().exclude("g").cast(pl.Int64))
        .select(
            "g",
            (c("ful_ret") + c("ful_imp") - c("sub_a") + c("ful_b")).alias("rc_ful"),
            (p_all - c("n_o") * c("n_l") + c("n") * c("n_s")).alias("rc_poss"),
            (c("ful_ret") - c("sub_a_ret") + c("ful_b_ret")).alias("rcr_ful"),
            (c("poss_ret") - c("n_o_ret") * c("n_l_ret") + c("n_ret") * c("n_s_ret")).alias(
                "rcr_poss"
            ),
        )
    )
    # --- preference-array groups: nonrel docs after the (R+1)-th (by docid) are dropped
    pa_need = pa_rel.join(need.select("g", "num_rel"), on="g", how="inner")
    nonrel = pa_need.filter(pl.col("lvl") == 0).sort("g", "d")
    drop_all = nonrel.with_columns(pl.int_range(pl.len()).over("g").alias("k")).filter(
        pl.col("k") >= pl.col("num_rel")
    )
    drop_ret = (
        nonrel.filter(pl.col("d") < pl.col("njr"))
        .with_columns(pl.int_range(pl.len()).over("g").alias("k"))
        .filter(pl.col("k") >= pl.col("num_rel"))
    )
    edges = pa_edges.join(need.select("g"), on="g", how="semi").select("g", "d", "d_y", "njr")

    def keep(frame: pl.DataFrame, dropped: pl.DataFrame) -> pl.DataFrame:
        dd = dropped.select("g", "d")
        return frame.join(dd, on=["g", "d"], how="anti").join(
            dd.rename({"d": "d_y"}), on=["g", "d_y"], how="anti"
        )

    ful = (pl.col("d") < pl.col("d_y")) & (pl.col("d") < pl.col("njr"))
    pa_all = (
        keep(edges, drop_all)
        .group_by("g")
        .agg(ful.sum().alias("rc_ful"), pl.len().alias("rc_poss"))
    )
    pa_ret = (
        keep(edges, drop_ret)
        .filter((pl.col("d") < pl.col("njr")) & (pl.col("d_y") < pl.col("njr")))
        .group_by("g")
        .agg(ful.sum().alias("rcr_ful"), pl.len().alias("rcr_poss"))
    )
    pa_rc = (
        need.select("g")
        .join(pa_need.select("g").unique(), on="g", how="semi")
        .join(pa_all, on="g", how="left")
        .join(pa_ret, on="g", how="left")
    )
    cols = ["rc_ful", "rc_poss", "rcr_ful", "rcr_poss"]
    return pl.concat(
        [
            ec_rc.select("g", *(pl.col(x).cast(pl.Int64) for x in cols)),
            pa_rc.select("g", *(pl.col(x).fill_null(0).cast(pl.Int64) for x in cols)),
        ]
    )


def _pair_values(
    ec: pl.DataFrame,
    pa_edges: pl.DataFrame,
    rows: pl.DataFrame,
    queries: pl.DataFrame,
    names: Iterable[str],
) -> pl.DataFrame:
    """prefs_pair(_ret, _imp): mean over doc pairs of the share favouring the better-ranked.

    Per unordered doc pair, the share of its preferences (over JGs, with multiplicity)
    that favour the better-ranked doc, averaged over pairs (area 0: both retrieved, 1:
    one, 2: neither, which counts as a pair with share 0). A pair can be judged more than
    once only when both docs occur in two or more JGs: those pairs (and the preference
    array pairs) are expanded and grouped; the other one-JSG pairs are single and counted
    from level counts of the distinct (JG, doc) rows.
    """
    multi = (
        rows.group_by("user", "d")
        .agg(pl.col("g").n_unique().alias("n_g"))
        .filter(pl.col("n_g") > 1)
        .select("user", "d")
    )
    dedup = ec.unique(["g", "d"])
    # pairs between docs both in several JGs, with row multiplicity (a doc listed twice
    # in a one-JSG group counts twice in that group's preferences)
    dm = ec.join(multi, on=["user", "d"], how="semi")
    expanded = (
        dm.lazy()
        .join(
            dm.lazy().select("g", pl.col("lvl").alias("lvl_y"), pl.col("d").alias("d_y")),
            on="g",
        )
        .filter(pl.col("lvl") > pl.col("lvl_y"))
        .select("g", "user", "d", "d_y", "njr")
        .collect()
    )

    # single pairs: all distinct one-JSG pairs minus the expanded (multi-multi) ones
    def area_counts(pairs_lc: pl.DataFrame, conc: pl.DataFrame, sign: int) -> pl.DataFrame:
        return (
            pairs_lc.join(conc, on="user", how="left")
            .with_columns(pl.col("c").fill_null(0))
            .select(
                "user",
                (sign * pl.col("p_rr")).alias("n0"),
                (sign * pl.col("c")).alias("s0"),
                (sign * (pl.col("p_ru") + pl.col("p_ur"))).alias("n1"),
                (sign * pl.col("p_ru")).alias("s1"),
                (sign * pl.col("p_uu")).alias("n2"),
            )
        )

    all_lc = (
        _level_pair_counts(dedup, ["g", "user"]).group_by("user").agg(pl.all().exclude("g").sum())
    )
    all_c = _concordant(dedup, ["g", "user"]).group_by("user").agg(pl.col("c").sum())
    x_ret = pl.col("d") < pl.col("njr")
    y_ret = pl.col("d_y") < pl.col("njr")
    exp_counts = (
        expanded.unique(["g", "d", "d_y"])
        .group_by("user")
        .agg(
            (x_ret & y_ret).sum().alias("p_rr"),
            (x_ret & ~y_ret).sum().alias("p_ru"),
            (~x_ret & y_ret).sum().alias("p_ur"),
            (~x_ret & ~y_ret).sum().alias("p_uu"),
            (x_ret & y_ret & (pl.col("d") < pl.col("d_y"))).sum().alias("c"),
        )
    )
    singles = (
        pl.concat(
            [
                area_counts(
                    all_lc.with_columns(pl.all().exclude("user").cast(pl.Int64)),
                    all_c.with_columns(pl.col("c").cast(pl.Int64)),
                    1,
                ),
                area_counts(
                    exp_counts.drop("c").with_columns(pl.all().exclude("user").cast(pl.Int64)),
                    exp_counts.select("user", pl.col("c").cast(pl.Int64)),
                    -1,
                ),
            ]
        )
        .group_by("user")
        .agg(pl.all().sum())
    )
    by_pair = _by_pair(pl.concat([expanded.drop("g"), pa_edges.select("user", "d", "d_y", "njr")]))
    grouped = by_pair.group_by("user").agg(
        *((pl.col("area") == a).sum().alias(f"gn{a}") for a in (0, 1, 2)),
        *(pl.col("share").filter(pl.col("area") == a).sum().alias(f"gs{a}") for a in (0, 1)),
    )
    table = (
        queries.join(singles, on="user", how="left")
        .join(grouped, on="user", how="left")
        .with_columns(pl.all().exclude("user").fill_null(0))
        .with_columns(
            (pl.col("n0") + pl.col("gn0")).alias("n0"),
            (pl.col("n1") + pl.col("gn1")).alias("n1"),
            (pl.col("n2") + pl.col("gn2")).alias("n2"),
            (pl.col("s0") + pl.col("gs0")).alias("s0"),
            (pl.col("s0") + pl.col("gs0") + pl.col("s1") + pl.col("gs1")).alias("s01"),
        )
    )
    # Shares like 1/3 (three JGs in conflict) make a floating-point sum depend on its
    # order; dyadic shares (0, 1, 1/2, 3/4...) add up exactly in any order. For queries
    # with a non-dyadic share, add them up as trec_eval does, pair by pair in order.
    scaled = pl.col("share") * 1048576.0
    mixed = (
        by_pair.filter((pl.col("area") < 2) & (scaled != scaled.round())).select("user").unique()
    )
    if mixed.height:
        # single pairs met: (x over y) with x retrieved and ranked above y, share 1
        e = (
            dedup.join(mixed, on="user", how="semi")
            .join(multi.with_columns(pl.lit(True).alias("m")), on=["user", "d"], how="left")
            .with_columns(pl.col("m").fill_null(False))
        )
        singles_met = (
            e.lazy()
            .join(
                e.lazy().select(
                    "g",
                    pl.col("lvl").alias("lvl_y"),
                    pl.col("d").alias("d_y"),
                    pl.col("m").alias("m_y"),
                ),
                on="g",
            )
            .filter(
                (pl.col("lvl") > pl.col("lvl_y"))
                & (pl.col("d") < pl.col("d_y"))
                & (pl.col("d") < pl.col("njr"))
                & ~(pl.col("m") & pl.col("m_y"))
            )
            .select(
                "user",
                pl.col("d").alias("lo"),
                pl.col("d_y").alias("hi"),
                (pl.col("d_y") < pl.col("njr")).alias("area0"),
                pl.lit(1.0).alias("share"),
            )
            .collect()
        )
        shared_met = by_pair.join(mixed, on="user", how="semi").filter(
            (pl.col("area") < 2) & (pl.col("fav") > 0)
        )
        exact = _ordered_share_sums(
            pl.concat(
                [
                    singles_met,
                    shared_met.select(
                        "user", "lo", "hi", (pl.col("area") == 0).alias("area0"), "share"
                    ),
                ]
            )
        )
        table = (
            table.join(exact, on="user", how="left")
            .with_columns(
                pl.when(pl.col("user").is_in(mixed["user"].implode()))
                .then(pl.col("x0").fill_null(0.0))
                .otherwise(pl.col("s0"))
                .alias("s0"),
                pl.when(pl.col("user").is_in(mixed["user"].implode()))
                .then(pl.col("x01").fill_null(0.0))
                .otherwise(pl.col("s01"))
                .alias("s01"),
            )
            .drop("x0", "x01")
        )
    spec = {
        "prefs_pair": (pl.col("s01"), pl.col("n0") + pl.col("n1") + pl.col("n2")),
        "prefs_pair_ret": (pl.col("s0"), pl.col("n0")),
        "prefs_pair_imp": (pl.col("s01"), pl.col("n0") + pl.col("n1")),
    }
    return pl.concat(
        [
            table.select(
                "user",
                pl.lit(name).alias("measure"),
                pl.when(spec[name][1] > 0)
                .then(spec[name][0] / spec[name][1])
                .otherwise(0.0)
                .alias("value"),
            )
            for name in names
        ]
    )


def _ordered_share_sums(met: pl.DataFrame) -> pl.DataFrame:
    """Per query, the pair shares added up in trec_eval's order (x0: area 0, x01: 0 and 1).

    ``met``: one row per doc pair with a share > 0 (``user, lo, hi, area0, share``).
    trec_eval adds the shares pair by pair, by internal rank of the better doc then of
    the other, area 0 first; floating-point addition depends on that order (adding the
    zero shares changes nothing).
    """
    queries = met.select("user").unique().with_row_index("q")
    ordered = (
        met.join(queries, on="user")
        .select("q", "area0", "lo", "hi", "share")
        .sort("q", "area0", "lo", "hi", descending=[False, True, False, False])
    )
    x0 = (
        ordered.filter(pl.col("area0"))
        .with_columns(pl.col("share").cum_sum().over("q").alias("x0"))
        .group_by("q")
        .agg(pl.col("x0").last())
    )
    x01 = (
        ordered.with_columns(pl.col("share").cum_sum().over("q").alias("x01"))
        .group_by("q")
        .agg(pl.col("x01").last())
    )
    return (
        queries.join(x0, on="q", how="left")
        .join(x01, on="q", how="left")
        .select("user", pl.col("x0").fill_null(0.0), pl.col("x01").fill_null(0.0))
    )


def _by_pair(pairs: pl.DataFrame) -> pl.DataFrame:
    """Preferences (d over d_y) grouped by unordered doc pair (lo, hi) of a query.

    ``fav`` counts those favouring the better-ranked doc ``lo``, ``tot`` all of them;
    ``area`` 0: both retrieved, 1: only ``lo``, 2: neither; ``share`` = fav / tot.
    """
    return (
        pairs.with_columns(
            pl.min_horizontal("d", "d_y").alias("lo"), pl.max_horizontal("d", "d_y").alias("hi")
        )
        .group_by("user", "lo", "hi")
        .agg(
            (pl.col("d") == pl.col("lo")).sum().alias("fav"),
            pl.len().alias("tot"),
            pl.col("njr").first(),
        )
        .with_columns(
            pl.when(pl.col("hi") < pl.col("njr"))
            .then(0)
            .when(pl.col("lo") < pl.col("njr"))
            .then(1)
            .otherwise(2)
            .alias("area"),
            (pl.col("fav") / pl.col("tot")).alias("share"),
        )
    )


def _pa_rel_levels(pa_rows: pl.DataFrame, failures: list[_Failure]) -> pl.DataFrame:
    """Final rel_level of each doc of a preference-array JG; check 0 vs non-0 clashes."""
    ordered = pa_rows.sort(
        pl.col("user"),
        pl.col("jg"),
        pl.col("jsg"),
        pl.col("lvl"),
        pl.col("d"),
        descending=[False, False, False, True, False],
    ).with_row_index("_seq")
    prev = pl.col("lvl").shift(1).over("user", "jg", "d", order_by="_seq").fill_null(-1.0)
    checked = ordered.with_columns(prev.alias("prev"))
    bad = (
        checked.filter(
            ((pl.col("prev") > 0) & (pl.col("lvl") == 0))
            | ((pl.col("prev") == 0) & (pl.col("lvl") > 0))
        )
        .sort("_seq")
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            1,
            f"trec_eval.form_prefs_counts: doc '{item}' has both 0 and non-0 "
            "rel_level assigned\ntrec_eval: Can't calculate measure",
            4,
        )
        for user, g, item in bad.select("user", "g", "item").rows()
    )
    return (
        checked.sort("_seq")
        .group_by("user", "jg", "d", maintain_order=True)
        .agg(pl.col("lvl").last(), pl.col("njr").first(), pl.col("item").first())
    )


def _pa_closure(pa_rows: pl.DataFrame, failures: list[_Failure]) -> pl.DataFrame:
    """Distinct preferences (d over d_y) of each preference-array JG, transitively closed.

    A conflict (both directions) is trec_eval's abort.
    """
    base = pa_rows.select("user", "jg", "jsg", "lvl", "d")
    edges = (
        base.join_where(
            base.rename({"user": "u2", "jg": "j2", "jsg": "s2", "lvl": "lvl_y", "d": "d_y"}),
            pl.col("user") == pl.col("u2"),
            pl.col("jg") == pl.col("j2"),
            pl.col("jsg") == pl.col("s2"),
            pl.col("lvl") > pl.col("lvl_y"),
        )
        .select("user", "jg", "d", "d_y")
        .filter(pl.col("d") != pl.col("d_y"))
        .unique()
    )
    size = edges.height
    while size:
        step = (
            edges.join(
                edges.rename({"d": "d_y", "d_y": "d_z"}), on=["user", "jg", "d_y"], how="inner"
            )
            .select("user", "jg", "d", pl.col("d_z").alias("d_y"))
            .filter(pl.col("d") != pl.col("d_y"))
        )
        edges = pl.concat([edges, step]).unique()
        if edges.height == size:
            break
        size = edges.height
    conflict = (
        edges.join(
            edges.rename({"d": "d_y", "d_y": "d"}), on=["user", "jg", "d", "d_y"], how="semi"
        )
        .join(pa_rows.select("user", "jg", "g").unique(), on=["user", "jg"])
        .sort("g", "d", "d_y")
        .group_by("g", maintain_order=True)
        .first()
    )
    failures.extend(
        (
            user,
            g,
            2,
            "trec_eval.form_prefs_counts: Pref inconsistency found\n"
            f"      internal rank {d} and internal rank {d_y} are conflicted",
            134,
        )
        for user, g, d, d_y in conflict.select("user", "g", "d", "d_y").rows()
    )
    njr = pa_rows.select("user", "njr").unique()
    return edges.join(njr, on="user")

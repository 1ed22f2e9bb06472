"""trec_eval's measure table and its ``-m`` parser.

:data:`MEASURES` lists trec_eval 10.0-rc3's measures in the order it prints them, with
their kind (how their parameters read: cutoffs, levels, gain pairs ...); :data:`NICKNAMES`
its measure sets (``official``, ``all_trec``, ``trec_prefs`` ...). :func:`parse_measures`
reads ``-m`` arguments as trec_eval does (``P.5,10``, a bare ``P`` for its default
cutoffs, parameters read by C's ``atof``/``atol``), and ``columns_of`` turns the requests
into the printed columns, labels spelled as trec_eval spells them (``P_10``,
``iprec_at_recall_0.10``, ``set_F``). These names are trec_eval's own, kept apart from the
metric registry: a label, its parameter order and its duplicate rules are part of the
output that must be byte-identical, and ``conventions.presets`` reads trec_eval names with
this parser.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from polars_rankeval.io.cnumbers import atof, atol
from polars_rankeval.trec_eval.errors import TrecEvalError

Kind = Literal[
    "runid", "num_q", "long", "double", "gm", "cut_long", "cut_double", "p_double", "pairs",
    "relstring", "prefs",
]  # fmt: skip


@dataclass(frozen=True)
class Measure:
    """One entry of trec_eval's measure table (``measures.c``), in print order."""

    name: str
    kind: Kind
    default: tuple[float, ...] = ()
    summary: Literal["mean", "sum", "gm", "count", "none"] = "mean"

    @property
    def integer(self) -> bool:
        """Printed with ``%ld`` (num_ret, num_rel, ...)."""
        return self.kind in ("long", "num_q")


_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_LEVELS = tuple(i / 10 for i in range(11))
_PREFS = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
    "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg",
)  # fmt: skip

MEASURES: tuple[Measure, ...] = (
    Measure("runid", "runid", summary="none"),
    Measure("num_q", "num_q", summary="count"),
    Measure("num_ret", "long", summary="sum"),
    Measure("num_rel", "long", summary="sum"),
    Measure("num_rel_ret", "long", summary="sum"),
    Measure("map", "double"),
    Measure("gm_map", "gm", summary="gm"),
    Measure("Rprec", "double"),
    Measure("bpref", "double"),
    Measure("recip_rank", "double"),
    Measure("iprec_at_recall", "cut_double", _LEVELS),
    Measure("P", "cut_long", _CUTS),
    Measure("relstring", "relstring", (10.0,), summary="none"),
    Measure("recall", "cut_long", _CUTS),
    Measure("infAP", "double"),
    Measure("gm_bpref", "gm", summary="gm"),
    Measure("Rprec_mult", "cut_double", tuple(i / 10 for i in range(2, 21, 2))),
    Measure("utility", "p_double", (1.0, -1.0, 0.0, 0.0)),
    Measure("11pt_avg", "p_double", _LEVELS),
    Measure("binG", "double"),
    Measure("G", "pairs"),
    Measure("dcg", "pairs"),
    Measure("ideal_dcg", "pairs"),
    Measure("ndcg", "pairs"),
    Measure("ndcg_rel", "pairs"),
    Measure("Rndcg", "pairs"),
    Measure("ndcg_cut", "cut_long", _CUTS),
    Measure("map_cut", "cut_long", _CUTS),
    Measure("relative_P", "cut_long", _CUTS),
    Measure("success", "cut_long", (1.0, 5.0, 10.0)),
    Measure("set_P", "double"),
    Measure("set_relative_P", "double"),
    Measure("set_recall", "double"),
    Measure("set_map", "double"),
    Measure("set_F", "p_double", (1.0,)),
    Measure("num_nonrel_judged_ret", "long", summary="sum"),
    *(Measure(name, "prefs") for name in _PREFS),
    Measure("yaap", "double"),
    Measure("rbp", "pairs"),
    Measure("rbp_resid", "pairs"),
    Measure("unj", "cut_long", (5.0, 10.0, 20.0)),
)
BY_NAME = {m.name: m for m in MEASURES}
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
        "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp",
        "rbp_resid", "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P",
        "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
    "all_prefs": ("runid", "num_q", *_PREFS[:14]),
    "prefs": ("runid", "num_q", *_PREFS[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}  # fmt: skip


RelFormat = Literal["qrels", "qrels_jg", "prefs", "qrels_prefs"]
REL_FORMATS: tuple[str, ...] = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


@dataclass(frozen=True)
class Request:
    """A requested measure with its parameters (``None``: the measure's defaults)."""

    measure: str
    params: str | None = None


def parse_measures(specs: Iterable[str]) -> list[Request]:
    """Parse ``-m`` arguments as trec_eval does; return the measures in print order.

    ``name.params`` gives parameters; nicknames (``official``, ``all_trec``, ``set``,
    ``prefs``, ``all_prefs``, ``qrels_jg``) add their measures. A measure named twice is
    computed once, with the parameters of its first occurrence that has parameters
    (trec_eval's rule). Measures that take no parameters ignore them (``map.5`` is map).

    Examples
    --------
    >>> [(r.measure, r.params) for r in parse_measures(["P.5,10", "map", "P.20", "runid"])]
    [('runid', None), ('map', None), ('P', '5,10')]
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs:
        name, dot, param = spec.partition(".")
        if dot:
            if not param:
                msg = f"illegal measure {spec!r}: empty parameter list"
                raise TrecEvalError(msg, 1)
            params.setdefault(name, param)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in BY_NAME:
            marked.add(name)
        else:
            msg = (
                f"illegal measure {spec!r}; known: {', '.join(BY_NAME)} and {', '.join(NICKNAMES)}"
            )
            raise TrecEvalError(msg, 1)
    return [Request(m.name, params.get(m.name)) for m in MEASURES if m.name in marked]


@dataclass(frozen=True)
class Column:
    """One printed value of a measure: its label and what to compute."""

    label: str
    measure: Measure
    param: float = 0.0  # the cutoff / level of an array measure
    raw: str | None = None  # the parameter string the measure computes with


def _sorted_cutoffs(measure: Measure, raw: str | None, *, integer: bool) -> list[float]:
    if raw is None:
        return list(measure.default)
    values = sorted(float(atol(p)) if integer else atof(p) for p in raw.split(","))
    if integer and values[0] <= 0:
        msg = f"cannot initialize measure {measure.name!r}: cutoffs must be positive, got {raw!r}"
        raise TrecEvalError(msg, 2)
    if any(a == b for a, b in itertools.pairwise(values)):
        msg = f"cannot initialize measure {measure.name!r}: duplicate cutoffs in {raw!r}"
        raise TrecEvalError(msg, 2)
    return values


def param_pairs(measure: Measure, raw: str | None) -> list[tuple[str, float]]:
    """``get_param_pairs``: ``name=value`` entries separated by commas."""
    if raw is None:
        return []
    last = ","
    for char in raw:
        if char == ",":
            if last == ",":
                break
            last = ","
        elif char == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        msg = (
            f"cannot initialize measure {measure.name!r}: parameters must be name=value "
            f"pairs, got {raw!r}"
        )
        raise TrecEvalError(msg, 2)
    out = []
    for item in raw.split(","):
        name, _, value = item.partition("=")
        out.append((name, atof(value)))
    return out


def valid_int(text: str) -> bool:
    """Whether ``text`` is an optional sign and ASCII digits (a parameter read as a long)."""
    body = text[1:] if text[:1] in "+-" else text
    return body.isascii() and body.isdigit()


# dcg, ideal_dcg and ndcg share one parameter block in trec_eval (m_ndcg.c): the last of
# them initialised with parameters sets the gains of all three, and each label shows the
# parameters set when it was initialised.
_SHARED_GAINS = ("dcg", "ideal_dcg", "ndcg")


def columns_of(requests: list[Request]) -> list[Column]:
    """The printed columns of the requests, in print order: one per cutoff or label.

    A cutoff measure gives one column per sorted cutoff; ``dcg``, ``ideal_dcg`` and
    ``ndcg`` share their gain parameters as trec_eval's shared parameter block does.
    """
    columns: list[Column] = []
    shared = [r.params for r in requests if r.measure in _SHARED_GAINS and r.params is not None]
    shared_final = shared[-1] if shared else None
    shared_now: str | None = None
    for request in requests:
        measure = BY_NAME[request.measure]
        raw = request.params
        if measure.kind == "cut_long":
            for cut in _sorted_cutoffs(measure, raw, integer=True):
                columns.append(Column(f"{measure.name}_{int(cut)}", measure, cut, raw))
        elif measure.kind == "cut_double":
            for cut in _sorted_cutoffs(measure, raw, integer=False):
                columns.append(Column(f"{measure.name}_{cut:3.2f}", measure, cut, raw))
        elif measure.name in _SHARED_GAINS:
            if raw is not None:
                param_pairs(measure, raw)
                shared_now = raw
            label = measure.name if shared_now is None else f"{measure.name}_{shared_now}"
            columns.append(Column(label, measure, 0.0, shared_final))
        elif measure.kind in ("p_double", "pairs", "relstring"):
            if measure.kind == "pairs":
                param_pairs(measure, raw)
            label = measure.name if raw is None else f"{measure.name}_{raw}"
            columns.append(Column(label, measure, 0.0, raw))
        else:
            columns.append(Column(measure.name, measure))
    return columns


def params_double(column: Column, measure: Measure) -> list[float]:
    """The column's comma-separated parameters read by C's ``atof`` (else the defaults)."""
    if column.raw is None:
        return list(measure.default)
    return [atof(p) for p in column.raw.split(",")]

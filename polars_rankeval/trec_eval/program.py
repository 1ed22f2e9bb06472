"""trec_eval 10.0-rc3, reproduced in Polars: same measures, same numbers, same output.

The C source of trec_eval is the specification. Each query's ranked list is built as
``form_res_rels.c`` builds it (score descending, then docno descending by byte order;
``-M`` cuts it, then ``-J`` drops unjudged documents; relevance -1 for a document not in
the qrels and -2 for a negative judgment), and every measure is a Polars expression over
that list: running counts and sums (``cum_sum`` keeps C's left-to-right summation, so the
printed digits agree on ``.xxxx5`` boundaries), values at cutoffs, and small joins for the
measures that read the ideal ranking (``ndcg``, ``Rndcg``, ``G`` ...). The summary is the
sum over queries in qrels order divided by the number of queries, as trec_eval does, and
numbers are printed as C's ``printf("%6.4f")`` prints them. A run whose lines already
are in that order per query (as most runs are written) is not sorted again.

Where trec_eval's behaviour is accidental (reads of uninitialised memory, the 10.0-rc3
exit on a qrels query without results) the documented intent is followed; the README's
trec_eval section lists each such deviation.

Examples
--------
>>> import polars_rankeval as prk
>>> from polars_rankeval.trec_eval.program import format_trec, trec_eval
>>> qrels, run = prk.datasets.example_paths()
>>> print(format_trec(trec_eval(qrels, run, ["P.5,10", "map"])), end="")
map                   	all	0.1785
P_5                   	all	0.2667
P_10                  	all	0.3000
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from polars_rankeval.io.trec import atof, atol, read_trec_eval_qrels, read_trec_eval_run

MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 1e-5
MISSING_ZSCORE = -1000000.0
BOGUS_DOCNO = "ceci_nest_pas_un_docno"
VERSION = "10.0-rc3"

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
_BY_NAME = {m.name: m for m in MEASURES}
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


class TrecEvalError(ValueError):
    """A condition on which trec_eval itself stops with an error (``status`` is its exit code)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------------- measures and labels


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
        elif name in _BY_NAME:
            marked.add(name)
        else:
            msg = (
                f"illegal measure {spec!r}; known: {', '.join(_BY_NAME)} and {', '.join(NICKNAMES)}"
            )
            raise TrecEvalError(msg, 1)
    return [Request(m.name, params.get(m.name)) for m in MEASURES if m.name in marked]


@dataclass(frozen=True)
class _Column:
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


def _pairs(measure: Measure, raw: str | None) -> list[tuple[str, float]]:
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


def _valid_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isascii() and body.isdigit()


# dcg, ideal_dcg and ndcg share one parameter block in trec_eval (m_ndcg.c): the last of
# them initialised with parameters sets the gains of all three, and each label shows the
# parameters set when it was initialised.
_SHARED_GAINS = ("dcg", "ideal_dcg", "ndcg")


def _columns(requests: list[Request]) -> list[_Column]:
    columns: list[_Column] = []
    shared = [r.params for r in requests if r.measure in _SHARED_GAINS and r.params is not None]
    shared_final = shared[-1] if shared else None
    shared_now: str | None = None
    for request in requests:
        measure = _BY_NAME[request.measure]
        raw = request.params
        if measure.kind == "cut_long":
            for cut in _sorted_cutoffs(measure, raw, integer=True):
                columns.append(_Column(f"{measure.name}_{int(cut)}", measure, cut, raw))
        elif measure.kind == "cut_double":
            for cut in _sorted_cutoffs(measure, raw, integer=False):
                columns.append(_Column(f"{measure.name}_{cut:3.2f}", measure, cut, raw))
        elif measure.name in _SHARED_GAINS:
            if raw is not None:
                _pairs(measure, raw)
                shared_now = raw
            label = measure.name if shared_now is None else f"{measure.name}_{shared_now}"
            columns.append(_Column(label, measure, 0.0, shared_final))
        elif measure.kind in ("p_double", "pairs", "relstring"):
            if measure.kind == "pairs":
                _pairs(measure, raw)
            label = measure.name if raw is None else f"{measure.name}_{raw}"
            columns.append(_Column(label, measure, 0.0, raw))
        else:
            columns.append(_Column(measure.name, measure))
    return columns


# --------------------------------------------------------------------------- C arithmetic

_LOG2_CACHE: list[pl.Series] = []


def _log2_int(n_max: int) -> pl.Series:
    """``log2(k)`` for k = 0..n_max exactly as C's libm computes it (``math.log2``)."""
    have = _LOG2_CACHE[0] if _LOG2_CACHE else pl.Series(dtype=pl.Float64)
    if have.len() <= n_max:
        size = max(n_max + 1, 2 * have.len(), 1024)
        have = pl.Series([-math.inf, *map(math.log2, range(1, size))], dtype=pl.Float64)
        _LOG2_CACHE[:] = [have]
    return have


def _with_log2(frame: pl.DataFrame, source: str, target: str) -> pl.DataFrame:
    """Add ``target = log2(source)`` computed as C's ``log2`` (exact for integer arguments)."""
    col = frame[source]
    if col.len() == 0:
        return frame.with_columns(pl.lit(None, pl.Float64).alias(target))
    if col.dtype.is_integer():
        # an integer column: one pass for its range, then a lookup in the table
        low, big = col.min(), col.max()
        if isinstance(low, int) and isinstance(big, int) and low >= 0 and big < 50_000_000:
            table = _log2_int(big + 1)
            return frame.with_columns(table.gather(col).alias(target))
    finite = col.filter(col.is_finite())
    integral = finite.len() == 0 or bool((finite == finite.floor()).all())
    big = float(finite.max()) if finite.len() else 0.0  # type: ignore[arg-type]
    if integral and (finite.min() or 0) >= 0 and big < 50_000_000:  # type: ignore[operator]
        table = _log2_int(int(big) + 1)
        return frame.with_columns(
            table.gather(col.fill_nan(0).clip(0).cast(pl.Int64)).alias(target)
        )
    uniques = col.unique()
    values = pl.Series(list(map(math.log2, uniques.to_list())), dtype=pl.Float64)
    mapping = pl.DataFrame({source: uniques, target: values})
    return frame.join(mapping, on=source, how="left", nulls_equal=True, maintain_order="left")


def _lround(x: pl.Expr) -> pl.Expr:
    """C's ``lround``: nearest integer, halves away from zero."""
    mag = x.abs()
    base = mag.floor()
    up = (mag - base) >= 0.5
    return (pl.when(up).then(base + 1).otherwise(base) * x.sign()).cast(pl.Int64)


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class _Options:
    level: int
    max_docs: int | None
    judged_only: bool
    num_docs: int
    complete: bool
    checks: bool = True  # trec_eval checks duplicates only when a measure reads the rankings


def _string_codes(values: pl.Series, keys: pl.Series) -> pl.Series:
    """Each value's position in ``keys`` (distinct strings) as UInt32, null if absent.

    A cast to the Enum of ``keys`` (Polars' string lookup: exact, no hash to check).
    """
    return values.cast(pl.Enum(keys), strict=False).to_physical().cast(pl.UInt32)


def _docno_codes(docno: pl.Series) -> tuple[pl.DataFrame, pl.Series]:
    """The run's distinct docnos in byte order (``docno``, ``__dc``) and each row's code."""
    docnos = docno.unique().sort().alias("docno").to_frame().with_row_index("__dc")
    return docnos, _string_codes(docno, docnos["docno"])


def _judged_codes(qrels: pl.DataFrame, docnos: pl.DataFrame) -> pl.DataFrame:
    """The qrels rows whose docno is in the run, with its code ``__dc``.

    A column ``__dc`` already in ``qrels`` is taken as those codes.
    """
    if "__dc" in qrels.columns:
        return qrels.filter(pl.col("__dc").is_not_null())
    code = _string_codes(qrels["docno"], docnos["docno"])
    return qrels.with_columns(code.alias("__dc")).filter(pl.col("__dc").is_not_null())


def _positions(qid: pl.Series) -> pl.Series:
    """Each row's 0-based position within its query (``qid`` sorted, small integer codes)."""
    n = int(qid.max() or 0) + 1  # type: ignore[arg-type]
    codes = pl.int_range(n, dtype=pl.Int64, eager=True).cast(qid.dtype)
    starts = qid.search_sorted(codes, side="left")
    return pl.int_range(qid.len(), dtype=pl.Int64, eager=True) - starts.gather(qid).cast(pl.Int64)


@dataclass(frozen=True)
class _Order:
    """How a run's rows become trec_eval's order; needs no docno codes (see :func:`_order`).

    ``sim``: the scores with -0.0 read as 0.0. ``blocks``: when each query's rows are
    contiguous with scores not increasing (in trec_eval's order, NaN lowest), the row
    indices that put the blocks in query code order (empty: they are); else ``None`` and
    ``score_rank`` holds each score's dense rank (0 = highest, NaN last) for the sort.
    """

    sim: pl.Series
    blocks: pl.Series | None
    score_rank: pl.Series | None


def _order(run: pl.DataFrame) -> _Order:
    """:class:`_Order` of ``run`` (``qid`` codes, ``sim``): one comparison of consecutive rows.

    Most runs list each query's documents together by score descending; those need no
    score ranks and no sort (:func:`_in_trec_order`).
    """
    # -0.0 ranks as 0.0 (C compares them equal); NaN ranks below every number (trec_eval's
    # order for a query mixing NaN with numbers depends on its qsort: a README deviation).
    sim = run.select(pl.when(pl.col("sim") == 0).then(0.0).otherwise(pl.col("sim"))).to_series()
    qid = run["qid"]
    n = qid.len()
    blocks = None
    if n:
        q, s = pl.col("qid"), pl.col("sim")
        nq, ns = q.shift(-1), s.shift(-1)
        # the next row of the query ranks above this one (NaN ranks below every number;
        # Polars orders NaN above them: spelled out)
        above = ns.is_not_nan() & (s.is_nan() | (ns > s))
        frame = pl.DataFrame({"qid": qid, "sim": sim})
        # a run in no order shows it in its first rows: the whole check is skipped
        unsorted = frame.head(4096).select(((q == nq) & above).any()).item()
        if not unsorted:
            checked = frame.select(
                ((q == nq) & above).any().alias("unsorted"),
                # one past each block's last row (the last row always ends one)
                pl.int_range(1, n + 1, dtype=pl.UInt32)
                .filter((q != nq).fill_null(True))
                .alias("ends"),
            )
            if not checked["unsorted"][0]:
                blocks = _block_order(qid, checked["ends"])
    return _Order(sim, blocks, _score_ranks(sim) if blocks is None else None)


def _score_ranks(sim: pl.Series) -> pl.Series:
    """Each score's dense rank, 0 = highest, NaN last (``sim`` without -0.0)."""
    n = sim.len()
    # mostly distinct scores (a lookup table as big as the run costs more than a sort):
    # ``rank("dense")``, when no NaN needs placing last
    if (
        n > 1_000_000
        and sim.head(100_000).n_unique() > 50_000
        and not sim.is_nan().any()
        and int(sim.approx_n_unique()) > 0.3 * n  # type: ignore[arg-type]
    ):
        return (sim.rank("dense", descending=True) - 1).cast(pl.UInt32)
    # a lookup in the sorted distinct scores: much cheaper than ``rank("dense")``
    distinct = sim.filter(sim.is_not_nan()).unique().sort(descending=True)
    n_sr = distinct.len()
    return sim.replace_strict(
        distinct,
        pl.int_range(n_sr, dtype=pl.UInt32, eager=True),
        default=pl.lit(n_sr, pl.UInt32),
        return_dtype=pl.UInt32,
    )


def _ranked(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    opts: _Options,
    names: pl.Series,
    coded: tuple[pl.DataFrame, pl.Series] | None = None,
    order: _Order | None = None,
) -> pl.DataFrame:
    """Each query's ranked list: ``qid, i`` (0-based rank), ``rel``.

    ``rel`` is the judgment, -1 for a document not in the qrels, -2 for a negative one.
    ``coded``: :func:`_docno_codes` of the run's docnos (row for row), when already known;
    ``order``: :func:`_order` of the run, when already known.
    """
    # Ties: docno descending in byte order, through its dense rank (an integer).
    docnos, doc_codes = coded if coded is not None else _docno_codes(run["docno"])
    if order is None:
        order = _order(run)
    qid, n_dc = run["qid"], docnos.height
    with ThreadPoolExecutor(max_workers=1) as pool:
        # the duplicate check (a hash of every (query, docno) pair; the row order does
        # not matter) beside the sort; with -M only the kept ranks count (after it)
        distinct = None
        if opts.checks and opts.max_docs is None:
            distinct = pool.submit(lambda: _pair_keys(qid, doc_codes).n_unique())
        ranked = None
        if order.blocks is not None:
            ranked = _in_trec_order(qid, order.sim, order.blocks, doc_codes, n_dc)
        if ranked is None:
            score_rank = order.score_rank
            if score_rank is None:
                score_rank = _score_ranks(order.sim)
            ranked = _sorted_ranking(qid, score_rank, doc_codes, n_dc)
        return _looked_up(ranked, qrels, opts, names, docnos, distinct)


def _pair_keys(qid: pl.Series, doc_codes: pl.Series) -> pl.Series:
    """``(query code, docno code)`` as one UInt64 per row."""
    return qid.cast(pl.UInt64) * 2**32 + doc_codes.cast(pl.UInt64)


def _in_trec_order(
    qid: pl.Series, sim: pl.Series, blocks: pl.Series, doc_codes: pl.Series, n_dc: int
) -> pl.DataFrame | None:
    """``qid, __dc`` in trec_eval's order without a full sort (:class:`_Order`'s ``blocks``).

    When the docnos of tied scores of a query (byte order; ``doc_codes`` from
    :func:`_docno_codes`) are not all descending already, each run of tied scores is
    sorted by docno descending (one sort of a key that keeps the runs in place); then
    the query blocks are put in code order by ``blocks``. ``None`` when that sort's key
    would not fit in 64 bits (sort everything).
    """
    frame = pl.DataFrame({"qid": qid, "sim": sim, "__dc": doc_codes.cast(pl.UInt32)})
    q, s, d = pl.col("qid"), pl.col("sim"), pl.col("__dc")
    # scores do not increase within a query (see _order), so a tie is an equal score
    # (Polars: NaN == NaN)
    if frame.select(((q == q.shift(-1)) & (s == s.shift(-1)) & (d < d.shift(-1))).any()).item():
        bits = max(n_dc.bit_length(), 1)
        if qid.len().bit_length() + bits > 64:
            return None
        new_run = ((q != q.shift(1)) | (s != s.shift(1))).fill_null(True)
        # (run number, docno descending) as one UInt64: sorted, the runs stay in place
        key = frame.select(
            (
                new_run.cum_sum().cast(pl.UInt64) * pl.lit(2**bits, pl.UInt64)
                + (n_dc - 1 - d.cast(pl.Int64)).cast(pl.UInt64)
            ).sort()
        ).to_series()
        frame = frame.with_columns(
            (n_dc - 1 - (key % 2**bits).cast(pl.Int64)).cast(pl.UInt32).alias("__dc")
        )
    frame = frame.select("qid", "__dc")
    return frame[blocks] if blocks.len() else frame


def _block_order(qid: pl.Series, ends: pl.Series) -> pl.Series | None:
    """Row indices that put contiguous query blocks (ending before ``ends``) in code order.

    ``None`` when a query has two blocks (not contiguous); empty when in order already.
    """
    starts = pl.concat([pl.Series([0], dtype=pl.UInt32), ends.head(-1)])
    block_q = qid.gather(starts)
    if block_q.n_unique() != block_q.len():
        return None
    if block_q.is_sorted():
        return pl.Series("index", [], dtype=pl.UInt32)
    blocks = pl.DataFrame({"q": block_q, "start": starts, "end": ends}).sort("q")
    return blocks.select(
        pl.int_ranges("start", "end", dtype=pl.UInt32).explode().alias("index")
    ).to_series()


def _sorted_ranking(
    qid: pl.Series, score_rank: pl.Series, doc_codes: pl.Series, n_dc: int
) -> pl.DataFrame:
    """``qid, __dc`` sorted by query, score rank, then docno descending (byte order).

    ``score_rank``: :func:`_score_ranks` of the scores.
    """
    n_sr = int(score_rank.max() or 0)  # type: ignore[arg-type]
    # From here on a document is its code (``__dc``, its rank in byte order among the
    # run's docnos): the strings are dropped before sorting and joining.
    ranked = pl.DataFrame({"qid": qid, "__dc": doc_codes, "__sr": score_rank})
    qid_type = ranked.schema["qid"]
    n_q = int(ranked["qid"].max() or 0) + 1  # type: ignore[arg-type]
    bits = [max(int(n).bit_length(), 1) for n in (n_q, n_sr + 1, n_dc)]
    if sum(bits) <= 63:
        # one UInt64 key (query, score rank, reversed docno rank): a single radix sort of
        # the key alone, which then gives back the query and the document
        low, high = 2 ** bits[2], 2 ** (bits[1] + bits[2])
        key = ranked.select(
            (
                pl.col("qid").cast(pl.UInt64) * pl.lit(high, pl.UInt64)
                + pl.col("__sr").cast(pl.UInt64) * pl.lit(low, pl.UInt64)
                + (n_dc - 1 - pl.col("__dc").cast(pl.Int64)).cast(pl.UInt64)
            ).sort()
        ).to_series()
        ranked = pl.select(
            (key // high).cast(qid_type).alias("qid"),
            (n_dc - 1 - (key % low).cast(pl.Int64)).cast(pl.UInt32).alias("__dc"),
        )
    else:
        ranked = ranked.sort(["qid", "__sr", "__dc"], descending=[False, False, True]).select(
            "qid", pl.col("__dc").cast(pl.UInt32)
        )
    return ranked


def _looked_up(
    ranked: pl.DataFrame,
    qrels: pl.DataFrame,
    opts: _Options,
    names: pl.Series,
    docnos: pl.DataFrame,
    distinct: Future[int] | None = None,
) -> pl.DataFrame:
    """The sorted ``qid, __dc`` with positions ``i`` and judgments ``rel`` (-M, -J applied).

    ``distinct``: the number of distinct pairs of the rows (before -M), when counted
    already; else counted here (when ``opts.checks``).
    """
    ranked = ranked.with_columns(_positions(ranked["qid"]).alias("i"))
    if opts.max_docs is not None:
        ranked = ranked.filter(pl.col("i") < opts.max_docs)
    pair = _pair_keys(ranked["qid"], ranked["__dc"])
    # the duplicate check (a hash of every pair) runs beside the qrels lookup
    with ThreadPoolExecutor(max_workers=1) as pool:
        if distinct is None and opts.checks:
            distinct = pool.submit(pair.n_unique)
        judged_rows = _judged_codes(qrels, docnos)
        judged = pl.DataFrame(
            {
                "__pair": _pair_keys(judged_rows["qid"], judged_rows["__dc"]),
                "rel": judged_rows["rel"],
            }
        )
        # the judged rows of the ranking (an inner join: a fifth of the rows here; their
        # order does not matter to the scatter below); every other row is a document
        # not in the qrels (-1)
        hits = (
            pair.to_frame("__pair")
            .with_row_index("__row")
            .lazy()
            .join(judged.lazy(), on="__pair", how="inner")
            .select(
                "__row",
                pl.when(pl.col("rel") < 0)
                .then(-2)
                .otherwise(pl.col("rel"))
                .cast(pl.Int64)
                .alias("rel"),
            )
            .collect()
        )
        n_distinct = distinct.result() if distinct is not None else ranked.height
    if n_distinct != ranked.height:
        dup = ranked.filter(pl.struct("qid", "__dc").is_duplicated())
        code, dc = dup.row(0)[:2]
        docno = docnos["docno"][dc]
        msg = f"duplicate docno {docno!r} in the results of query {names[code]!r}"
        raise TrecEvalError(msg, 4)
    rel = pl.repeat(-1, ranked.height, dtype=pl.Int64, eager=True)
    ranked = ranked.with_columns(rel.scatter(hits["__row"], hits["rel"]).alias("rel"))
    if opts.judged_only:
        ranked = ranked.filter(pl.col("rel") >= 0)
        ranked = ranked.with_columns(_positions(ranked["qid"]).alias("i"))
    return ranked.select(pl.col("qid").set_sorted(), "i", "rel")  # in (qid, i) order


def _judged_subset(ranked: pl.DataFrame, columns: list[_Column], level: int) -> pl.DataFrame:
    """The ranks where a running value can change: judged or relevant documents.

    All of ``ranked`` when a measure reads the others (see :func:`_reads_unjudged`).
    """
    if _reads_unjudged(columns, level):
        return ranked
    rel = pl.col("rel")
    return ranked.filter((rel != -1) | (rel >= level))


def _query_stats(
    ranked: pl.DataFrame,
    qrels: pl.DataFrame,
    queries: pl.DataFrame,
    opts: _Options,
    subset: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Per query: num_ret, num_rel, num_rel_ret, num_nonpool, num_unjudged, num_nonrel_judged.

    ``subset``: :func:`_judged_subset` of ``ranked`` (every row with rel != -1 or
    relevant); the counts are taken over it, and ``ranked`` gives only the lengths.
    """
    level = opts.level
    rel = pl.col("rel")
    if subset is None:
        subset = ranked
    ret = subset.group_by("qid").agg(
        pl.len().alias("__n"),
        ((rel >= 0) & (rel >= level)).sum().alias("num_rel_ret"),
        (rel == -1).sum().alias("num_nonpool"),
        (rel == -2).sum().alias("num_unjudged"),
        (rel >= level).sum().alias("R_all"),
    )
    lengths = ranked.group_by("qid").agg(pl.len().alias("num_ret"))
    # the rows left out of ``subset`` are documents not in the qrels (rel -1)
    ret = (
        lengths.join(ret, on="qid", how="left")
        .with_columns(pl.exclude("qid").fill_null(0))
        .with_columns(pl.col("num_nonpool") + pl.col("num_ret") - pl.col("__n"))
        .drop("__n")
    )
    judged = (
        qrels.join(queries, on="qid", how="semi")
        .group_by("qid")
        .agg(
            (rel >= max(level, 0)).sum().alias("num_rel"),
            ((rel >= 0) & (rel < level)).sum().alias("num_nonrel"),
            (pl.when(rel >= 0).then(rel).max() + 1).fill_null(0).alias("num_rel_levels"),
        )
    )
    return (
        queries.join(ret, on="qid", how="left", maintain_order="left")
        .join(judged, on="qid", how="left", maintain_order="left")
        .with_columns(pl.exclude("qid").fill_null(0).cast(pl.Int64))
    )


def _gain_expr(pairs: list[tuple[str, float]]) -> pl.Expr:
    """trec_eval's get_gain: the gain map's value for a level, else the level (0 if negative)."""
    gains = {atol(name): value for name, value in reversed(pairs) if _valid_int(name)}
    rel = pl.col("rel")
    default = pl.when(rel >= 0).then(rel.cast(pl.Float64)).otherwise(0.0)
    if not gains:
        return default
    return rel.replace_strict(
        list(gains), list(gains.values()), default=default, return_dtype=pl.Float64
    )


def _rank_keys(frame: pl.DataFrame) -> pl.Series:
    """``(query code, rank)`` as one UInt64 per row: increasing over a ranked frame."""
    return frame["qid"].cast(pl.UInt64) * 2**32 + frame["i"].cast(pl.UInt64)


def _value_after(
    frame: pl.DataFrame, keys: pl.Series, source: str, qid: pl.Series, k: pl.Series
) -> pl.Series:
    """A running column after the first ``k`` ranks of each query ``qid``.

    ``frame`` holds some of each query's ranks in (query, rank) order (``keys`` are its
    :func:`_rank_keys`), among them every rank where ``source`` changes: its value after
    ``k`` ranks is the one at the frame's last row of the query with rank < k, 0 when
    there is none, null when ``k < 1``. Binary searches on the sorted keys, no join.
    """
    return _values_after(frame, keys, source, qid, [k])[0]


def _values_after(
    frame: pl.DataFrame,
    keys: pl.Series,
    source: str,
    qid: pl.Series,
    ks: Sequence[pl.Series],
) -> list[pl.Series]:
    """:func:`_value_after` for several cutoff series ``ks`` at once (one search each way)."""
    if not ks:
        return []
    n = qid.len()
    k = pl.concat([x.cast(pl.Int64) for x in ks])
    base = qid.cast(pl.UInt64) * 2**32
    start = keys.search_sorted(base, side="left")
    bases = pl.concat([base] * len(ks))
    lookup = pl.DataFrame(
        {
            "k": k,
            "end": keys.search_sorted(bases + k.clip(0, 2**32 - 1).cast(pl.UInt64), side="left"),
            "start": pl.concat([start] * len(ks)),
        }
    )
    index = lookup.select(
        pl.when(pl.col("end") > pl.col("start")).then(pl.col("end").cast(pl.Int64) - 1)
    )["end"]
    got = frame[source].gather(index)
    values = pl.select(pl.when(k >= 1).then(got.fill_null(0))).to_series().alias(source)
    return [values.slice(j * n, n) for j in range(len(ks))]


def _reads_unjudged(columns: list[_Column], level: int) -> bool:
    """Whether a measure's running value changes at a document not in the qrels (rel -1).

    Only ``unj``, ``relstring`` and ``rbp_resid`` read those (handled apart), unless
    -1 counts as relevant (``-l`` below 0) or a gain map gives level -1 a gain.
    """
    if level <= -1:
        return True
    for column in columns:
        if column.measure.kind == "pairs" and column.measure.name not in ("rbp_resid",):
            shared = column.raw
            names = [n for n, _ in _pairs(column.measure, shared)]
            if any(_valid_int(n) and atol(n) == -1 for n in names):
                return True
    return False


def _compute(
    ranked: pl.DataFrame,
    subset: pl.DataFrame,
    qrels: pl.DataFrame,
    stats: pl.DataFrame,
    columns: list[_Column],
    opts: _Options,
) -> pl.DataFrame:
    """The per-query value of every column (wide: one row per query, one column per label).

    Every running value (relevant documents so far, average precision, dcg, the
    bpref/infAP counts ...) changes only at judged or relevant documents: they are
    computed over those rows alone (``rows``), in the ranking's order, and read at a
    rank by a binary search. The documents not in the qrels (most of a long ranking)
    are read only by the per-query counts, ``unj``/``relstring`` (the head of each
    ranking) and ``rbp_resid``.
    """
    level = opts.level
    rel, i = pl.col("rel"), pl.col("i")
    isrel = rel >= level
    # a query's code is its row in ``stats`` (sorted): per-query values by gather, no join
    stats = stats.sort("qid")
    full = ranked
    rows = _with_log2(subset.with_columns((i + 2).alias("disc_arg")), "disc_arg", "disc")
    # the gain family (G, ndcg, rbp ...) reads only ``rows``' ranks, judgments and
    # discounts, ``full`` and the per-query counts: computed in a second thread beside
    # the rest (Polars releases the GIL)
    # (rbp/rbp_resid apart from the others: two threads; small operations wait less)
    gain_cols = [c for c in columns if c.measure.kind == "pairs" or c.measure.name == "ndcg_cut"]
    rbp_cols = [c for c in gain_cols if c.measure.name in ("rbp", "rbp_resid")]
    groups = [g for g in ([c for c in gain_cols if c not in rbp_cols], rbp_cols) if g]
    gains: list[tuple[Future[pl.DataFrame], list[_Column]]] = []
    if groups:
        pool = ThreadPoolExecutor(max_workers=len(groups))
        gains = [
            (pool.submit(_gain_measures, rows, full, qrels, stats, group), group)
            for group in groups
        ]
        pool.shutdown(wait=False)
    rows = rows.with_columns(
        isrel.alias("isrel"),
        isrel.cast(pl.Int64).cum_sum().over("qid").alias("Rc"),
        ((rel >= 0) & (rel < level)).cast(pl.Int64).cum_sum().over("qid").alias("nonrel_c"),
        (rel == -2).cast(pl.Int64).cum_sum().over("qid").alias("unjudged_c"),
        ((rel >= 0) & (rel >= level)).cast(pl.Int64).cum_sum().over("qid").alias("bprel_c"),
    )
    rc = pl.col("Rc")
    rows = rows.with_columns(
        pl.when("isrel").then(rc / (i + 1)).otherwise(0.0).cum_sum().over("qid").alias("ap_c"),
    )
    names = {c.measure.name for c in columns}
    extra_frames: list[pl.DataFrame] = []
    wide_exprs: dict[str, pl.Expr] = {}
    n_ret, n_rel = pl.col("num_ret"), pl.col("num_rel")
    n_rr = pl.col("num_rel_ret")
    judged_rel = (rel >= 0) & (rel >= level)
    # Running sums over each query's ranks (C's left-to-right sums), read at a rank below.
    running: dict[str, pl.Expr] = {}
    if names & {"binG"}:
        term = pl.when("isrel").then(1.0 / pl.col("bing_log")).otherwise(0.0)
        running["bing_c"] = term
    if names & {"bpref", "gm_bpref"}:
        nonrel_b = pl.col("nonrel_c")
        denom = pl.min_horizontal(pl.col("num_nonrel"), n_rel).cast(pl.Float64)
        running["bpref_c"] = (
            pl.when(judged_rel)
            .then(
                pl.when(nonrel_b > 0)
                .then(1.0 - pl.min_horizontal(nonrel_b, n_rel).cast(pl.Float64) / denom)
                .otherwise(1.0)
            )
            .otherwise(0.0)
        )
    if "infAP" in names:
        fj = i.cast(pl.Float64)
        rs1 = pl.col("bprel_c") - 1
        nonrel_b, unj_b = pl.col("nonrel_c"), pl.col("unjudged_c")
        inner = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
            (rs1 + nonrel_b + unj_b).cast(pl.Float64) / fj
        ) * (
            (rs1.cast(pl.Float64) + INFAP_EPSILON)
            / ((rs1 + nonrel_b).cast(pl.Float64) + 2 * INFAP_EPSILON)
        )
        running["infap_c"] = (
            pl.when(judged_rel).then(pl.when(i == 0).then(1.0).otherwise(inner)).otherwise(0.0)
        )
    # the sums after a query's last rank (0.0 without relevant rows, null without rows),
    # one column per running sum, in query code order
    finals = pl.DataFrame()
    if running:
        # These sums are read only after the last rank, and their terms are 0.0 except on
        # relevant rows (adding 0.0 leaves a sum unchanged): sum over those rows alone,
        # left to right within each query.
        per_row = ("num_rel", "num_nonrel")
        relevant = rows.filter("isrel")
        relevant = relevant.with_columns(
            *[stats[c].gather(relevant["qid"]).alias(c) for c in per_row],
            (3 + i - rc).alias("bing_arg"),
        )
        if "bing_c" in running:
            relevant = _with_log2(relevant, "bing_arg", "bing_log")
        totals = relevant.group_by("qid").agg(
            [expr.cum_sum().last().alias(name) for name, expr in running.items()]
        )
        finals = (
            stats.select("qid", "num_ret")
            .join(totals, on="qid", how="left", maintain_order="left")
            .select(
                pl.when(pl.col("num_ret") >= 1).then(pl.col(name).fill_null(0.0)).alias(name)
                for name in running
            )
        )
    # rows are sorted by (query, rank) and hold num_ret rows per query: the value of a
    # running column after rank k of a query is at row start + min(k, num_ret) - 1.
    wide = stats.sort("qid")
    row_keys = _rank_keys(rows)
    unj_cuts = [c.param for c in columns if c.measure.name == "unj"]
    if unj_cuts:
        # unj reads the head of each ranking only: every row up to the largest cutoff
        head = full.filter(i < max(unj_cuts)).with_columns(
            (rel < 0).cast(pl.Int64).cum_sum().over("qid").alias("unj_c")
        )
        head_keys = _rank_keys(head)

    # (source, cutoff) -> the cutoff and the labels reading it: resolved after the loop,
    # each source's cutoffs in one binary search
    wanted: dict[tuple[str, str], tuple[pl.Expr, list[str]]] = {}

    def at(label: str, source: str, k: pl.Expr) -> None:
        wanted.setdefault((source, str(k)), (k, []))[1].append(label)

    extra_columns: dict[str, pl.Series] = {}

    def total(label: str, source: str) -> None:
        extra_columns[label] = finals[source]

    for column in columns:
        m, label, k = column.measure, column.label, column.param
        name = m.name
        kl = pl.lit(k)
        if name in ("map", "gm_map"):
            at(label, "ap_c", n_ret)
        elif name == "Rprec":
            at(label, "Rc", pl.min_horizontal(n_ret, n_rel))
        elif name == "recip_rank":
            first = (
                rows.select("qid", "i", "isrel", "Rc")
                .filter(pl.col("isrel") & (rc == 1))
                .select("qid", (1.0 / (i + 1)).alias(label))
            )
            extra_frames.append(first)
        elif name in ("P", "recall", "relative_P", "success"):
            at(label, "Rc", kl)
        elif name == "map_cut":
            at(label, "ap_c", kl)
        elif name == "unj":
            at(label, "unj_c", kl)
        elif name == "binG":
            total(label, "bing_c")
        elif name in ("bpref", "gm_bpref"):
            total(label, "bpref_c")
        elif name == "infAP":
            total(label, "infap_c")
        elif name == "relstring":
            length = max(int(_params_double(column, m)[0]), 0)
            char = (
                pl.when(rel > 9).then(pl.lit(">"))
                .when(rel >= 0).then(rel.cast(pl.String))
                .when(rel == -1).then(pl.lit("-"))
                .when(rel == -2).then(pl.lit("."))
                .otherwise(pl.lit("<"))
            )  # fmt: skip
            strings = (
                full.select("qid", "i", "rel")
                .filter(i < length)
                .group_by("qid")
                .agg(char.str.join("").alias(label))
            )
            extra_frames.append(strings)
        elif name == "Rprec_mult":
            cut = (kl * n_rel.cast(pl.Float64) + 0.9).cast(pl.Int64)
            extra_columns[label + "\x00c"] = wide.select(cut.alias("c"))["c"]
            at(label, "Rc", cut)
    if wanted:
        cutoffs = wide.select(
            pl.min_horizontal(k, n_ret).alias(f"k{j}") for j, (k, _) in enumerate(wanted.values())
        )
        by_source: dict[str, list[int]] = {}
        for j, (source, _) in enumerate(wanted):
            by_source.setdefault(source, []).append(j)
        entries = list(wanted.values())
        for source, js in by_source.items():
            frame, keys = (head, head_keys) if source == "unj_c" else (rows, row_keys)
            ks = [cutoffs[f"k{j}"] for j in js]
            found = _values_after(frame, keys, source, wide["qid"], ks)
            for j, values in zip(js, found, strict=True):
                for label in entries[j][1]:
                    extra_columns[label] = values
    wide = wide.with_columns(
        pl.lit(0).alias("__n"), *[series.alias(lb) for lb, series in extra_columns.items()]
    )
    for extra in extra_frames:
        wide = wide.join(extra, on="qid", how="left", maintain_order="left")
    # Polars divides by a scalar as a multiplication by its reciprocal; C does not:
    # divide by a column of the constant instead (``one * k``).
    wide = wide.with_columns(
        pl.col("__n").fill_null(0), (pl.col("num_ret") * 0 + 1).cast(pl.Float64).alias("__one")
    )
    one = pl.col("__one")

    def f(x: pl.Expr | str) -> pl.Expr:
        return (pl.col(x) if isinstance(x, str) else x).cast(pl.Float64)

    nrel_f, nret_f, nrr_f = f(n_rel), f(n_ret), f(n_rr)
    for column in columns:
        m, label, k = column.measure, column.label, column.param
        name = m.name
        got = pl.col(label)
        if name == "num_q":
            wide_exprs[label] = pl.lit(1.0)
        elif name == "num_ret":
            wide_exprs[label] = nret_f
        elif name == "num_rel":
            wide_exprs[label] = nrel_f
        elif name == "num_rel_ret":
            wide_exprs[label] = nrr_f
        elif name == "map":
            wide_exprs[label] = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(0.0)
        elif name == "gm_map":
            ap = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(f(got).fill_null(0.0))
            wide_exprs[label] = (
                pl.when((ap > MIN_GEO_MEAN) & ~ap.is_nan()).then(ap).otherwise(MIN_GEO_MEAN).log()
            )
        elif name == "Rprec":
            wide_exprs[label] = (
                pl.when(pl.min_horizontal(n_ret, n_rel) > 0).then(f(got) / nrel_f).otherwise(0.0)
            )
        elif name == "recip_rank":
            wide_exprs[label] = f(got).fill_null(0.0)
        elif name == "P":
            wide_exprs[label] = f(got).fill_null(0.0) / (one * k)
        elif name == "recall":
            wide_exprs[label] = (
                pl.when(n_rel > 0).then(f(got).fill_null(0.0) / nrel_f).otherwise(0.0)
            )
        elif name == "relative_P":
            wide_exprs[label] = (
                pl.when(n_rel > 0)
                .then(f(got).fill_null(0.0) / pl.min_horizontal(pl.lit(k), nrel_f))
                .otherwise(0.0)
            )
        elif name == "success":
            wide_exprs[label] = pl.when(f(got).fill_null(0.0) > 0).then(1.0).otherwise(0.0)
        elif name == "map_cut":
            wide_exprs[label] = (
                pl.when(n_rel > 0).then(f(got).fill_null(0.0) / nrel_f).otherwise(0.0)
            )
        elif name == "unj":
            wide_exprs[label] = f(got).fill_null(0.0) / (one * k)
        elif name == "binG":
            wide_exprs[label] = pl.when(pl.col("R_all") > 0).then(f(got) / nrel_f).otherwise(0.0)
        elif name in ("bpref", "gm_bpref"):
            value = f(got).fill_null(0.0)
            value = pl.when(n_rel > 0).then(value / nrel_f).otherwise(value)
            if name == "gm_bpref":
                value = (
                    pl.when((value > MIN_GEO_MEAN) & ~value.is_nan())
                    .then(value)
                    .otherwise(MIN_GEO_MEAN)
                    .log()
                )
            wide_exprs[label] = value
        elif name == "infAP":
            value = f(got).fill_null(0.0)
            wide_exprs[label] = pl.when(n_rel > 0).then(value / nrel_f).otherwise(value)
        elif name == "Rprec_mult":
            cut = pl.col(label + "\x00c").fill_null((k * nrel_f + 0.9).cast(pl.Int64))
            # trec_eval's counter at rank cut: R(cut) - (R_all - num_rel_ret), see above
            counter = f(got).fill_null(0.0) - f(pl.col("R_all") - n_rr)
            wide_exprs[label] = (
                pl.when(cut > n_ret)
                .then(nrr_f / f(cut))
                .when((cut > 0) & (counter > 0))
                .then(counter / f(cut))
                .otherwise(0.0)
            )
        elif name == "utility":
            params = _params_double(column, m)
            if len(params) != 4:
                msg = (
                    f"cannot calculate measure 'utility': it takes 4 parameters, got {len(params)}"
                )
                raise TrecEvalError(msg, 4)
            a, b, c, d = params
            wide_exprs[label] = (
                a * nrr_f
                + b * f(n_ret - n_rr)
                + c * f(n_rel - n_rr)
                + d * f(opts.num_docs + n_rr - n_ret - n_rel)
            )
        elif name == "set_P":
            wide_exprs[label] = pl.when(n_ret > 0).then(nrr_f / nret_f).otherwise(0.0)
        elif name == "set_relative_P":
            wide_exprs[label] = (
                pl.when((n_ret > 0) & (n_rel > 0))
                .then(nrr_f / f(pl.min_horizontal(n_ret, n_rel)))
                .otherwise(0.0)
            )
        elif name == "set_recall":
            wide_exprs[label] = pl.when(n_rel > 0).then(nrr_f / nrel_f).otherwise(0.0)
        elif name == "set_map":
            wide_exprs[label] = (
                pl.when((n_ret > 0) & (n_rel > 0))
                .then((nrr_f * nrr_f) / (nret_f * nrel_f))
                .otherwise(0.0)
            )
        elif name == "set_F":
            x = _params_double(column, m)[0]
            p_, r_ = nrr_f / nret_f, nrr_f / nrel_f
            wide_exprs[label] = (
                pl.when(n_rr > 0).then((x + 1.0) * p_ * r_ / (x * p_ + r_)).otherwise(0.0)
            )
        elif name == "num_nonrel_judged_ret":
            wide_exprs[label] = f(n_ret - pl.col("num_nonpool") - pl.col("num_unjudged") - n_rr)
        elif name == "yaap":
            s = pl.col("__yaap").fill_null(0.0)
            wide_exprs[label] = ((1.0 + s) / ((1.0 + nrel_f) - s)).log()
        elif name == "relstring":
            wide_exprs[label] = pl.col(label).fill_null("")
    if "yaap" in names:
        yaap = rows.group_by("qid").agg(pl.col("ap_c").last().alias("__yaap"))
        wide = wide.join(yaap, on="qid", how="left", maintain_order="left")
    interp = [c for c in columns if c.measure.name in ("iprec_at_recall", "11pt_avg")]
    if interp:
        wide = _interpolated(rows, wide, interp)
        for column in interp:
            wide_exprs[column.label] = pl.col(column.label)
    for future, group in gains:
        labels = [c.label for c in group]
        wide = wide.join(
            future.result().select("qid", *labels), on="qid", how="left", maintain_order="left"
        )
        for column in group:
            wide_exprs[column.label] = pl.col(column.label)
    out = wide.select("qid", *[expr.alias(label) for label, expr in wide_exprs.items()])
    return out


def _params_double(column: _Column, measure: Measure) -> list[float]:
    if column.raw is None:
        return list(measure.default)
    return [atof(p) for p in column.raw.split(",")]


def _interpolated(rows: pl.DataFrame, wide: pl.DataFrame, columns: list[_Column]) -> pl.DataFrame:
    """iprec_at_recall and 11pt_avg: interpolated precision at recall levels."""
    # trec_eval walks up from the last rank with a counter that starts at num_rel_ret
    # (judged relevant) and drops at every document with rel >= level; below -l 0 the
    # two differ by D = the unjudged documents counted as relevant.
    shift = pl.col("R_all") - pl.col("num_rel_ret")
    wide = wide.sort("qid")  # a query's code is its row
    per_query = wide.select(shift.alias("__shift"))["__shift"]
    prec = (pl.col("Rc") - pl.col("__shift")).cast(pl.Float64) / (pl.col("i") + 1).cast(pl.Float64)
    # the relevant rows in (query, rank) order; a query's k-th one is at rel_start + k - 1
    smax = (
        rows.select("qid", "Rc", "i", "isrel", per_query.gather(rows["qid"]).alias("__shift"))
        .select(prec.cum_max(reverse=True).over("qid").alias("smax"), pl.col("isrel"))
        .filter("isrel")["smax"]
    )
    # one lazy plan for every level of every column (one collect; ``smax`` a literal)
    wide_lf = wide.lazy().with_columns(
        (pl.col("R_all").cum_sum() - pl.col("R_all")).alias("__rstart")
    )
    table = pl.lit(smax)
    n_rel = pl.col("num_rel").cast(pl.Float64)
    r_all = pl.col("num_rel_ret")
    final = pl.col("num_rel_ret").cast(pl.Float64) / pl.col("num_ret").cast(pl.Float64)
    for column in columns:
        levels = (
            [column.param]
            if column.measure.name == "iprec_at_recall"
            else _params_double(column, column.measure)
        )
        # trec_eval's pass over the levels from the last one: levels above num_rel_ret
        # at the end are skipped (0), each next level is reached when the counter falls
        # to it; one it cannot reach (above the last one reached, or <= 0) stops the pass
        # and it and all before it take the final interpolated precision. For increasing
        # levels this is each level's own value.
        wide_lf = wide_lf.with_columns(
            pl.col("num_rel_ret").alias("__limit"),
            pl.lit(True).alias("__skip"),
            pl.lit(False).alias("__blocked"),
        )
        one_index = pl.when(r_all >= 1).then(pl.col("__rstart") + 1 + shift - 1).cast(pl.Int64)
        wide_lf = wide_lf.with_columns(
            pl.when(r_all >= 1).then(table.gather(one_index)).otherwise(final).alias("__final")
        )
        parts: list[str] = []
        for j in reversed(range(len(levels))):
            key = f"__lev{j}"
            k = _lround(pl.lit(levels[j]) * n_rel)
            zero = pl.col("__skip") & (k > r_all)
            matched = ~zero & ~pl.col("__blocked") & (k >= 1) & (k <= pl.col("__limit"))
            index = pl.when(matched).then(pl.col("__rstart") + k + shift - 1).cast(pl.Int64)
            wide_lf = wide_lf.with_columns(table.gather(index).alias(key))
            wide_lf = wide_lf.with_columns(
                pl.when(zero).then(0.0).when(matched).then(pl.col(key)).otherwise(pl.col("__final"))
                .alias(key),
                (pl.col("__skip") & zero).alias("__skip"),
                pl.when(matched).then(k).otherwise(pl.col("__limit")).alias("__limit"),
                (pl.col("__blocked") | (~zero & ~matched)).alias("__blocked"),
            )  # fmt: skip
            parts.insert(0, key)
        wide_lf = wide_lf.drop("__limit", "__skip", "__blocked", "__final")
        if column.measure.name == "iprec_at_recall":
            wide_lf = wide_lf.rename({parts[0]: column.label})
        else:
            total: pl.Expr = pl.lit(0.0)
            for key in reversed(parts):
                added = pl.when(pl.col(key).is_null()).then(0.0).otherwise(pl.col(key))
                total = total + added
            # trec_eval adds only the levels reached; a level above R_all adds nothing.
            wide_lf = wide_lf.with_columns(
                (total / (pl.col("__one") * float(len(parts)))).alias(column.label)
            ).drop(parts)
    return wide_lf.drop("__rstart").collect()


def _gain_measures(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    qrels: pl.DataFrame,
    wide: pl.DataFrame,
    columns: list[_Column],
) -> pl.DataFrame:
    """G, dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg, rbp, rbp_resid and ndcg_cut.

    ``rows`` holds every rank with a non-zero gain (see :func:`_compute`), ``full`` every
    rank (read by rbp_resid and, when its sums are not exact integers, by G).
    """
    judged = qrels.filter(pl.col("rel") >= 0)  # (``qrels`` holds evaluated queries only)

    cuts = [c for c in columns if c.measure.name == "ndcg_cut"]
    cache: dict[str | None, tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]] = {}
    if cuts:
        # ndcg_cut's gains are the relevance levels: the frames of a measure without a
        # gain map (``None``), shared with dcg / ndcg when they have none either
        cache[None] = _gain_frames(rows, judged, wide, [])
        wide = _ndcg_cut(*cache[None][:2], wide, cuts)
    rbp_bases: dict[str, pl.DataFrame] = {}
    for column in columns:
        name = column.measure.name
        if name == "ndcg_cut":
            continue
        pairs = _pairs(column.measure, column.raw)
        if name in ("rbp", "rbp_resid"):
            wide = _rbp(rows, full, wide, column, pairs, rbp_bases)
            continue
        if column.raw in cache:
            res, ideal, base = cache[column.raw]
        else:
            res, ideal, base = _gain_frames(rows, judged, wide, pairs)
            cache[column.raw] = (res, ideal, base)
        if name == "dcg":
            value = base.select("qid", pl.col("dcg").alias(column.label))
        elif name == "ideal_dcg":
            value = base.select("qid", pl.col("idcg").alias(column.label))
        elif name == "ndcg":
            value = base.select(
                "qid",
                pl.when(pl.col("idcg") > 0)
                .then(pl.col("dcg") / pl.col("idcg"))
                .otherwise(0.0)
                .alias(column.label),
            )
        elif name == "ndcg_rel":
            value = _ndcg_rel(res, ideal, base, column.label)
        elif name == "Rndcg":
            value = _rndcg(res, ideal, base, column.label)
        else:  # G
            value = _g(res, ideal, base, column.label, full, pairs)
        wide = wide.join(value, on="qid", how="left", maintain_order="left")
    return wide


def _gain_frames(
    rows: pl.DataFrame, judged: pl.DataFrame, wide: pl.DataFrame, pairs: list[tuple[str, float]]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The retrieved gains with running DCG, the ideal ranking with running ideal DCG, totals."""
    gain = _gain_expr(pairs)
    res = rows.select("qid", "i", "disc", gain.alias("g"))
    res = res.with_columns(
        pl.when(pl.col("g") != 0).then(pl.col("g") / pl.col("disc")).otherwise(0.0)
        .cum_sum().over("qid").alias("dcg_c")
    )  # fmt: skip
    ideal = (
        judged.with_columns(gain.alias("g"))
        .filter(pl.col("g") > 0)
        .sort(["qid", "g"], descending=[False, True])
        .with_columns(pl.int_range(pl.len(), dtype=pl.Int64).over("qid").alias("p"))
        .with_columns((pl.col("p") + 2).alias("disc_arg"))
    )
    ideal = _with_log2(ideal, "disc_arg", "disc")
    ideal = ideal.with_columns((pl.col("g") / pl.col("disc")).cum_sum().over("qid").alias("idcg_c"))
    full = (
        res.group_by("qid")
        .agg(pl.col("dcg_c").last().alias("dcg"), (pl.col("g") > 0).sum().alias("npos"))
        .join(
            ideal.group_by("qid").agg(pl.col("idcg_c").last().alias("idcg"), pl.len().alias("L")),
            on="qid",
            how="full",
            coalesce=True,
        )
    )
    base = wide.select("qid", "num_ret", "num_rel").join(
        full, on="qid", how="left", maintain_order="left"
    )
    base = base.with_columns(pl.col("dcg", "idcg").fill_null(0.0), pl.col("L", "npos").fill_null(0))
    return res, ideal, base


def _ndcg_rel(
    res: pl.DataFrame, ideal: pl.DataFrame, base: pl.DataFrame, label: str
) -> pl.DataFrame:
    # ideal dcg after min(i + 1, L) ideal ranks, for each retrieved rank i with a positive
    # gain: ``ideal`` holds L positions per query in code order, read by gather
    base = base.sort("qid")
    length = base["L"]
    istart = length.cum_sum() - length
    pos = res.filter(pl.col("g") > 0).select("qid", "i", "dcg_c")
    codes = pos["qid"]
    index = pl.DataFrame(
        {"s": istart.gather(codes), "L": length.gather(codes), "i": pos["i"]}
    ).select(
        pl.when(pl.col("L") >= 1)
        .then(pl.col("s") + pl.min_horizontal(pl.col("i") + 1, pl.col("L")) - 1)
        .alias("ix")
    )["ix"]
    pos = pos.with_columns(ideal["idcg_c"].gather(index).fill_null(0.0).alias("idcg_c"))
    sums = pos.group_by("qid").agg((pl.col("dcg_c") / pl.col("idcg_c")).cum_sum().last().alias("s"))
    out = base.join(sums, on="qid", how="left", maintain_order="left").with_columns(
        pl.col("s").fill_null(0.0)
    )
    s = pl.col("s") + (pl.col("L") - pl.col("npos")).cast(pl.Float64) * pl.col("dcg") / pl.col(
        "idcg"
    )
    return out.select(
        "qid",
        pl.when((s > 0) & ~s.is_nan())
        .then(s / pl.col("L").cast(pl.Float64))
        .otherwise(0.0)
        .alias(label),
    )


def _rndcg(res: pl.DataFrame, ideal: pl.DataFrame, base: pl.DataFrame, label: str) -> pl.DataFrame:
    # Boundaries p in 1..L where the ideal gain changes (p = L: the ideal runs out).
    bounds = (
        ideal.select("qid", "p", "g", "idcg_c")
        .with_columns(
            pl.col("g").shift(-1).over("qid").alias("g_next"),
            (pl.col("p") + 1).alias("b"),
        )
        .filter(pl.col("g_next").is_null() | (pl.col("g_next") != pl.col("g")))
    )
    # dcg after min(b, num_ret) ranks
    base = base.sort("qid")
    kk = pl.DataFrame({"n": base["num_ret"].gather(bounds["qid"]), "b": bounds["b"]}).select(
        pl.min_horizontal(pl.col("b"), pl.col("n"))
    )["b"]
    after = _value_after(res, _rank_keys(res), "dcg_c", bounds["qid"], kk)
    bounds = bounds.with_columns(after.fill_null(0.0).alias("dcg_c"))
    sums = (
        bounds.sort("qid", "b")
        .group_by("qid")
        .agg((pl.col("dcg_c") / pl.col("idcg_c")).cum_sum().last().alias("s"), pl.len().alias("nb"))
    )
    out = base.join(sums, on="qid", how="left", maintain_order="left").with_columns(
        pl.col("s").fill_null(0.0), pl.col("nb").fill_null(0)
    )
    final = (pl.col("L") >= 1) & (pl.col("L") + 1 < pl.col("num_ret"))
    s = pl.when(final).then(pl.col("s") + pl.col("dcg") / pl.col("idcg")).otherwise(pl.col("s"))
    nb = pl.col("nb") + final.cast(pl.Int64)
    value = pl.when(pl.col("num_rel") == 0).then(0.0).otherwise(s / nb.cast(pl.Float64))
    return out.select("qid", value.alias(label))


def _g(
    res: pl.DataFrame,
    ideal: pl.DataFrame,
    base: pl.DataFrame,
    label: str,
    full: pl.DataFrame,
    pairs: list[tuple[str, float]],
) -> pl.DataFrame:
    # trec_eval's G: at each retrieved rank, cost += max(ideal gain there, 1) (1 past the
    # ideal list's end), got += gain; the sum of gain / log2(2 + cost - got) over ranks
    # with a gain. ``res`` holds the ranks with a non-zero gain (and others).
    base = base.sort("qid")
    length = base["L"]
    istart = length.cum_sum() - length
    step = pl.when(pl.col("g") >= 1.0).then(pl.col("g")).otherwise(1.0)
    ideal_cost = ideal.select(step.cum_sum().over("qid").alias("C"))["C"]
    gains = ideal["g"]
    exact = bool(
        ideal_cost.len() == 0
        or (
            ((gains < 1.0) | (gains == gains.floor())).all()
            and float(ideal_cost.max()) + float(full["i"].max() or 0) < 2.0**52  # type: ignore[arg-type]
        )
    )
    if exact:
        # the running cost is a sum of integers (exact in doubles): after rank i it is
        # C[min(i, L - 1)] + max(0, i - L + 1), with C the ideal list's running cost
        rows = res.filter(pl.col("g") != 0).select("qid", "i", "g")
        codes = rows["qid"]
        n = length.gather(codes)
        frame = pl.DataFrame({"s": istart.gather(codes), "L": n, "i": rows["i"]})
        index = frame.select(
            pl.when(pl.col("L") >= 1)
            .then(pl.col("s") + pl.min_horizontal(pl.col("i"), pl.col("L") - 1))
            .alias("ix")
        )["ix"]
        at_end = ideal_cost.gather(index)
        cost = pl.DataFrame({"c": at_end, "L": n, "i": rows["i"]}).select(
            pl.when(pl.col("L") == 0)
            .then((pl.col("i") + 1).cast(pl.Float64))
            .when(pl.col("i") < pl.col("L"))
            .then(pl.col("c"))
            .otherwise(pl.col("c") + (pl.col("i") - pl.col("L") + 1).cast(pl.Float64))
            .alias("c")
        )["c"]
        rows = rows.with_columns(
            cost.alias("cost_c"), pl.col("g").cum_sum().over("qid").alias("got_c")
        )
    else:
        # non-integer ideal gains: C's left-to-right sum over every rank
        rows = full.select("qid", "i", _gain_expr(pairs).alias("g"))
        codes = rows["qid"]
        index = pl.DataFrame(
            {"s": istart.gather(codes), "L": length.gather(codes), "i": rows["i"]}
        ).select(pl.when(pl.col("i") < pl.col("L")).then(pl.col("s") + pl.col("i")).alias("ix"))[
            "ix"
        ]
        rows = rows.with_columns(ideal["g"].gather(index).alias("ig")).with_columns(
            pl.when(pl.col("ig") >= 1.0).then(pl.col("ig")).otherwise(1.0).alias("cost")
        )
        rows = rows.with_columns(
            pl.col("cost").cum_sum().over("qid").alias("cost_c"),
            pl.col("g").cum_sum().over("qid").alias("got_c"),
        )
    rows = rows.with_columns(((2 + pl.col("cost_c")) - pl.col("got_c")).alias("g_arg"))
    rows = _with_log2(rows, "g_arg", "g_log")
    sums = rows.group_by("qid").agg(
        pl.when(pl.col("g") != 0).then(pl.col("g") / pl.col("g_log")).otherwise(0.0)
        .cum_sum().last().alias("rg")
    )  # fmt: skip
    ideal_sum = ideal.group_by("qid").agg(pl.col("g").cum_sum().last().alias("si"))
    out = base.join(sums, on="qid", how="left", maintain_order="left").join(
        ideal_sum, on="qid", how="left", maintain_order="left"
    )
    value = pl.when(pl.col("si") > 0).then(pl.col("rg") / pl.col("si")).otherwise(0.0)
    return out.select("qid", value.fill_null(0.0).alias(label))


def _rbp(
    rows: pl.DataFrame,
    full: pl.DataFrame,
    wide: pl.DataFrame,
    column: _Column,
    pairs: list[tuple[str, float]],
    bases: dict[str, pl.DataFrame],
) -> pl.DataFrame:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    rel = pl.col("rel")
    if repr(p) not in bases:  # rbp and rbp_resid with the same p share the products
        # p^i at rank i is the same running product (1, p, p*p, ... left to right, as
        # C's loop multiplies) for every query: one table up to the longest ranking,
        # read by rank.
        n_max = int(wide["num_ret"].max() or 0) + 1  # type: ignore[arg-type]
        products = pl.select(
            pl.when(pl.int_range(n_max + 1) == 0).then(1.0).otherwise(pl.lit(p, pl.Float64))
            .cum_prod().alias("t")
        )["t"]  # fmt: skip
        bases[repr(p)] = rows.select("qid", "i", "rel", products.gather(rows["i"]).alias("cur_p"))
        bases[repr(p) + "t"] = products.to_frame()
    base = bases[repr(p)]
    if column.measure.name == "rbp_resid":
        # a sum over the unjudged ranks (rel < 0: not in ``rows``), read from ``full``
        powers = bases[repr(p) + "t"]["t"]
        unjudged = full.select("qid", "i").filter(full["rel"] < 0)
        unjudged = unjudged.with_columns(powers.gather(unjudged["i"]).alias("cur_p"))
        agg = unjudged.group_by("qid").agg(pl.col("cur_p").cum_sum().last().alias("s"))
        # the product after the last rank: p^num_ret, one more step of the running product
        out = (
            wide.select("qid", "num_ret", "num_nonpool", "num_unjudged")
            .join(agg, on="qid", how="left", maintain_order="left")
            .with_columns(
                powers.gather(wide["num_ret"]).alias("pN"),
                (pl.col("num_nonpool") + pl.col("num_unjudged")).alias("nu"),
            )
        )
        resid = pl.when(pl.col("nu") > 0).then(pl.col("pN") + (1 - p) * pl.col("s")).otherwise(0.0)
        return wide.join(
            out.select("qid", resid.fill_null(0.0).alias(column.label)), on="qid", how="left"
        )
    # gains with trec_eval's rescaling into [0, 1] (min and max over the gain list)
    gains = {atol(n): v for n, v in reversed(pairs) if _valid_int(n)}
    levels = wide.select("qid", "num_rel_levels")
    table = []
    for nrl in sorted(set(levels["num_rel_levels"].to_list())):
        values = list(gains.values()) + [float(lv) for lv in range(nrl) if lv not in gains]
        lo, hi = (min(values), max(values)) if values else (0.0, 0.0)
        table.append((nrl, lo, hi))
    scale = pl.DataFrame(
        table, schema={"num_rel_levels": pl.Int64, "lo": pl.Float64, "hi": pl.Float64}, orient="row"
    )
    raw = _gain_expr(pairs)
    listed = rel.is_in(list(gains)) | ((rel >= 0) & (rel < pl.col("num_rel_levels")))
    g = (
        pl.when(~listed)
        .then(0.0)
        .when((pl.col("lo") < 0) | (pl.col("hi") > 1))
        .then((raw - pl.col("lo")) / (pl.col("hi") - pl.col("lo")))
        .otherwise(raw)
    )
    # per query (a query's code is its row once sorted), then onto the rows by gather
    per_query = (
        levels.sort("qid")
        .join(scale, on="num_rel_levels", how="left", maintain_order="left")
        .select("num_rel_levels", "lo", "hi")
    )
    codes = base["qid"]
    base = base.with_columns([per_query[c].gather(codes) for c in per_query.columns])
    agg = base.with_columns(g.alias("gg")).group_by("qid").agg(
        pl.when(pl.col("gg") != 0).then(pl.col("gg") * pl.col("cur_p")).otherwise(0.0)
        .cum_sum().last().alias("s")
    )  # fmt: skip
    out = wide.select("qid").join(agg, on="qid", how="left", maintain_order="left")
    return wide.join(
        out.select("qid", ((1.0 - p) * pl.col("s").fill_null(0.0)).alias(column.label)),
        on="qid",
        how="left",
    )


def _ndcg_cut(
    res: pl.DataFrame, ideal: pl.DataFrame, wide: pl.DataFrame, columns: list[_Column]
) -> pl.DataFrame:
    """ndcg_cut at every requested cutoff: gains are the relevance levels, no gain map.

    ``res`` and ``ideal`` are :func:`_gain_frames` without a gain map: the running dcg
    over the ranks with a gain and the running ideal dcg by ideal position ``p``.
    """
    qid = wide["qid"]
    res_keys = _rank_keys(res)
    ideal_keys = ideal["qid"].cast(pl.UInt64) * 2**32 + ideal["p"].cast(pl.UInt64)
    ks = [pl.Series([int(column.param)] * qid.len(), dtype=pl.Int64) for column in columns]
    dcgs = _values_after(res, res_keys, "dcg_c", qid, ks)
    ideals = _values_after(ideal, ideal_keys, "idcg_c", qid, ks)
    values = pl.DataFrame(
        {f"d{j}": d.fill_null(0.0) for j, d in enumerate(dcgs)}
        | {f"i{j}": v.fill_null(0.0) for j, v in enumerate(ideals)}
    ).select(
        pl.when(pl.col(f"i{j}") > 0)
        .then(pl.col(f"d{j}") / pl.col(f"i{j}"))
        .otherwise(pl.col(f"d{j}"))
        .alias(column.label)
        for j, column in enumerate(columns)
    )
    return wide.with_columns(values)


# --------------------------------------------------------------------------- formatting


def _rounded(f: pl.Expr, d: pl.Expr) -> pl.Expr:
    """``|v| * 10000`` rounded half to even (Int64; null beyond it).

    ``f`` is its floor, ``d`` the exact ``|v| * 10000 - f - 0.5``.
    """
    half = pl.when((f % 2) == 0).then(f).otherwise(f + 1)
    return (
        pl.when(d > 0).then(f + 1).when(d < 0).then(f).otherwise(half).cast(pl.Int64, strict=False)
    )


def _four_places_text(v: pl.Expr, n: pl.Expr) -> pl.Expr:
    """``%6.4f`` of ``v`` put together from ``n`` (:func:`_rounded`) and its sign."""
    negative = (v < 0) | ((v == 0) & ((1.0 / v) < 0))
    digits = pl.concat_str(
        [
            pl.when(negative).then(pl.lit("-")).otherwise(pl.lit("")),
            (n // 10000).cast(pl.String),
            pl.lit("."),
            (n % 10000).cast(pl.String).str.zfill(4),
        ]
    )
    text = (
        pl.when(v.is_nan())
        .then(pl.lit("-nan"))
        .when(v == float("inf"))
        .then(pl.lit("inf"))
        .when(v == float("-inf"))
        .then(pl.lit("-inf"))
        .otherwise(digits)
    )
    return text.str.pad_start(6)


@functools.cache
def _four_places() -> pl.Series:
    """``"0.0000"`` ... ``"1.0000"``: ``%6.4f`` of ``i / 10000`` at index ``i``."""
    return pl.Series([f"{i // 10000}.{i % 10000:04d}" for i in range(10001)], dtype=pl.String)


def format_doubles(values: pl.Series) -> pl.Series:
    """C's ``printf("%6.4f")`` of each value (correctly rounded, width 6; null stays null).

    Most values trec_eval prints lie in [0, 1]: their text is read from a table of the
    10,001 possible ones by the correctly rounded ``value * 10000``; only the others
    (negative, above 1, not finite) are put together from their digits, and values
    beyond 64-bit integers by Python's formatting (the same rounding as C's).
    """
    frame = pl.DataFrame({"v": values.cast(pl.Float64)})
    frame = frame.with_columns(a=pl.col("v").abs())
    # Dekker's exact product: a * 10000 == p + err exactly (10000 needs no split).
    frame = frame.with_columns(p=pl.col("a") * 10000.0, c=pl.col("a") * 134217729.0)
    frame = frame.with_columns(
        a_hi=pl.col("c") - (pl.col("c") - pl.col("a")), f=pl.col("p").floor()
    )
    frame = frame.with_columns(
        err=(pl.col("a_hi") * 10000.0 - pl.col("p")) + (pl.col("a") - pl.col("a_hi")) * 10000.0
    )
    frame = frame.with_columns(d=((pl.col("p") - pl.col("f")) - 0.5) + pl.col("err"))
    v = pl.col("v")
    negative = (v < 0) | ((v == 0) & ((1.0 / v) < 0))
    frame = frame.select("v", n=_rounded(pl.col("f"), pl.col("d")), other=negative | ~v.is_finite())
    n = pl.col("n")
    frame = frame.with_columns(pl.col("other") | (n > 10000) | n.is_null())
    text = _four_places().gather(
        frame.select(pl.when(pl.col("other")).then(0).otherwise(n)).to_series()
    )
    other = frame.filter(pl.col("other"))
    if other.height:
        other_text = other.select(_four_places_text(v, n)).to_series()
        huge = other.select(v.is_finite() & n.is_null()).to_series()
        if huge.any():  # beyond 64-bit integers: Python's %-formatting is C's
            rows = zip(other["v"], huge, other_text, strict=True)
            texts = [f"{x:6.4f}" if h else t for x, h, t in rows]
            other_text = pl.Series(texts, dtype=pl.String)
        where = frame.select(pl.arg_where(pl.col("other"))).to_series()
        text = text.scatter(where, other_text)
    return text.alias(values.name)


def _fmt_long(values: pl.Expr) -> pl.Expr:
    return values.cast(pl.Int64, strict=False).fill_null(-(2**63)).cast(pl.String)


# --------------------------------------------------------------------------- public API


def trec_eval(
    qrels: Any,
    run: Any,
    measures: Sequence[str] = ("official",),
    *,
    per_query: bool = False,
    complete: bool = False,
    max_docs: int | None = None,
    rel_level: int = 1,
    judged_only: bool = False,
    num_docs: int = 0,
    summary: bool = True,
    query: str | None = None,
    zscores: Any = None,
    runid: str | None = None,
    rel_format: RelFormat = "qrels",
) -> pl.DataFrame:
    """Evaluate a TREC run against qrels exactly as trec_eval 10.0-rc3 does.

    Parameters
    ----------
    qrels, run
        Paths of TREC files (read as trec_eval reads them), the files' bytes, or frames:
        qrels with ``qid, docno, rel`` (or ``user, item, relevance``), a run with
        ``qid, docno, sim`` (or ``user, item, score``; ``tag``/``run_id`` optional).
    measures
        ``-m`` arguments: ``"official"`` (default), ``"all_trec"``, ``"set"``, or
        measures with parameters (``"P.5,10"``, ``"ndcg.1=0,2=3"``, ``"set_F.0.5"``).
    per_query
        ``-q``: one value per query too.
    complete
        ``-c``: evaluate every qrels query; one without results gets trec_eval's
        placeholder ranking (one unjudged document) and the mean covers all of them.
    max_docs
        ``-M``: only the first ``max_docs`` documents of each ranking (0: none).
    rel_level
        ``-l``: the lowest relevance that counts as relevant (0 allowed).
    judged_only
        ``-J``: drop unjudged retrieved documents (after ``-M``).
    num_docs
        ``-N``: the number of documents in the collection (only ``utility`` reads it).
    summary
        ``False`` is ``-n``: no summary lines.
    query
        ``-D 0.<qid>``: evaluate only this query.
    zscores
        ``-Z``: a file of ``qid measure mean stddev`` lines; values become z scores.
    runid
        The run id to print; by default the tag of the run's last line (trec_eval's).
    rel_format
        ``-R``: ``"qrels"`` (default), or ``"qrels_jg"``, ``"prefs"``, ``"qrels_prefs"``
        for the preference (``prefs_*``) and ``*_avgjg`` measures
        (:mod:`polars_rankeval.trec_eval.prefs`); with those only ``runid``, ``num_q`` and
        these measures can be computed, as in trec_eval.

    Returns
    -------
    polars.DataFrame
        ``measure`` (label), ``query`` (``"all"`` for the summary), ``value`` (Float64,
        null for runid and relstring), ``text`` (the value as trec_eval prints it) and
        ``zscore`` (Boolean: printed with trec_eval's ``Z`` prefix), in print order.

    Raises
    ------
    ValueError
        A malformed file, an illegal measure or parameter, duplicate documents, or no
        query with both results and judgments (:class:`TrecEvalError`, with trec_eval's
        exit status in ``status``).
    """
    requests = parse_measures(measures)
    if rel_format not in REL_FORMATS:
        msg = f"illegal rel_format {rel_format!r}; expected one of {', '.join(REL_FORMATS)}"
        raise TrecEvalError(msg, 2)
    if rel_format != "qrels" or any(_BY_NAME[r.measure].kind == "prefs" for r in requests):
        return _relation_eval(
            qrels, run, requests, rel_format=rel_format, per_query=per_query,
            complete=complete, max_docs=max_docs, rel_level=rel_level,
            judged_only=judged_only, summary=summary, query=query, runid=runid,
            zscores=zscores,
        )  # fmt: skip
    columns = _columns(requests)
    checks = _checks(requests)
    # The two files are read at the same time (Polars' reader releases the GIL): the
    # run, then its docno codes, in a second thread; the qrels, then their query codes
    # and duplicate check, here. A qrels error is still the one reported when both
    # files are bad.
    pool = ThreadPoolExecutor(max_workers=1)
    reading: Future[tuple[pl.DataFrame, str]] = Future()
    qrels_read: Future[pl.DataFrame] = Future()
    try:
        coding = pool.submit(_read_run_coded, run, reading, qrels_read)
        qrels_df = _as_qrels(qrels)
        qrels_read.set_result(qrels_df)
        prepared = _prepare_qrels(qrels_df, checks=checks)
        run_df, tag = reading.result()
        frames = [run_df]
        del run_df  # held by ``frames`` alone: freed once ranked
        return _evaluate_frames(
            qrels_df, prepared, frames, tag, coding, columns, requests, per_query=per_query,
            complete=complete, max_docs=max_docs, rel_level=rel_level,
            judged_only=judged_only, num_docs=num_docs, summary=summary, query=query,
            zscores=zscores, runid=runid,
        )  # fmt: skip
    finally:
        qrels_read.cancel()  # (when the qrels failed) the thread stops waiting for them
        pool.shutdown(wait=True, cancel_futures=True)


def _checks(requests: list[Request]) -> bool:
    """Whether the files are checked for duplicates (any measure beyond runid and num_q)."""
    return any(r.measure not in ("runid", "num_q") for r in requests)


def _read_run_coded(
    run: Any, reading: Future[tuple[pl.DataFrame, str]], qrels_read: Future[pl.DataFrame]
) -> tuple[pl.DataFrame, pl.Series, pl.Series]:
    """:func:`_as_run` into ``reading``, then the docno codes of the run and the qrels.

    Returns :func:`_docno_codes` of the run's docnos and each qrels row's docno code
    (null: not in the run).
    """
    try:
        run_df, tag = _as_run(run)
    except BaseException as error:
        reading.set_exception(error)
        raise
    reading.set_result((run_df, tag))
    docnos, doc_codes = _docno_codes(run_df["docno"])
    qrels_codes = _string_codes(qrels_read.result()["docno"], docnos["docno"])
    return docnos, doc_codes, qrels_codes


@dataclass(frozen=True)
class _PreparedQrels:
    """What the qrels alone decide, worked out while the run is still being read.

    ``qids``: the distinct queries in byte order; ``codes``: each qrels row's position
    in ``qids`` (UInt32); ``distinct_pairs``: a hash proves no (query, docno) repeats
    (``False``: some may; the exact check runs on the evaluated queries).
    """

    qids: pl.DataFrame
    codes: pl.Series
    distinct_pairs: bool


def _prepare_qrels(qrels: pl.DataFrame, *, checks: bool) -> _PreparedQrels:
    qids = qrels.select(pl.col("qid").unique().sort())
    codes = _string_codes(qrels["qid"], qids["qid"])
    distinct = not checks or (
        pl.DataFrame({"qid": codes, "docno": qrels["docno"]}).select(_PAIR_HASH.n_unique()).item()
        == qrels.height
    )
    return _PreparedQrels(qids, codes, distinct)


# a (query code, docno) pair as one 64-bit hash: distinct hashes prove distinct pairs
_PAIR_HASH = pl.col("docno").hash(seed=0) ^ (pl.col("qid").cast(pl.UInt64) * 0x9E3779B97F4A7C15)


def _evaluate_frames(
    qrels_df: pl.DataFrame,
    prepared: _PreparedQrels,
    frames: list[pl.DataFrame],
    tag: str,
    coding: Future[tuple[pl.DataFrame, pl.Series, pl.Series]],
    columns: list[_Column],
    requests: list[Request],
    *,
    per_query: bool,
    complete: bool,
    max_docs: int | None,
    rel_level: int,
    judged_only: bool,
    num_docs: int,
    summary: bool,
    query: str | None,
    zscores: Any,
    runid: str | None,
) -> pl.DataFrame:
    """:func:`trec_eval` once both files are read (``coding``: the run's docno codes)."""
    run_df = frames.pop()
    if runid is None:
        runid = tag
    checks = _checks(requests)
    opts = _Options(rel_level, max_docs, judged_only, num_docs, complete, checks)
    qids = prepared.qids
    n_qrels_queries = qids.height
    # whether the evaluated queries are all the qrels queries (then ``prepared.codes``
    # are their codes)
    all_queries = True
    if query is not None:
        qids = qids.filter(pl.col("qid") == query)
        all_queries = False
    # each run row's query as its position in ``qids`` (null: not evaluated); the
    # queries present are read off these small integers, not the strings
    run_codes = _string_codes(run_df["qid"], qids["qid"])
    in_run = (
        pl.zeros(qids.height, dtype=pl.Boolean, eager=True)
        .scatter(run_codes.drop_nulls(), True)
        .alias("in_run")
    )
    missing = qids.filter(~in_run)
    coded: tuple[pl.DataFrame, pl.Series] | None = None
    if complete and missing.height:
        bogus = missing.select("qid", pl.lit(BOGUS_DOCNO).alias("docno"), pl.lit(1.0).alias("sim"))
        run_df = pl.concat([run_df, bogus])
        missing_codes = pl.int_range(qids.height, dtype=pl.UInt32, eager=True).filter(~in_run)
        run_codes = pl.concat([run_codes, missing_codes])
        # the placeholder docno is coded with the others in _ranked
    elif missing.height:
        print(
            f"trec_eval: note: {missing.height} qrels query(ies) without results not "
            "evaluated (use -c to count them)",
            file=sys.stderr,
        )
        qids = qids.filter(in_run)
        all_queries = False
        # renumber: a kept query's new code is the number of kept queries before it
        renumber = pl.select(pl.when(in_run).then(in_run.cum_sum() - 1).cast(pl.UInt32)).to_series()
        run_codes = renumber.gather(run_codes)
    if qids.height == 0:
        msg = "no queries with both results and relevance info"
        raise TrecEvalError(msg, 7)
    # From here on a query is its position in trec_eval's order (an integer code):
    # sorting and grouping by integers is much cheaper than by strings.
    codes = qids.with_row_index("__code")

    def encode(frame: pl.DataFrame) -> pl.DataFrame:
        # a lookup in file order (cheaper than a join on the strings)
        code = _string_codes(frame["qid"], codes["qid"])
        return frame.with_columns(code.alias("qid")).filter(pl.col("qid").is_not_null())

    keep = run_codes.is_not_null()
    every = keep.all()
    if not (complete and missing.height):
        run_df = run_df.drop("docno")  # coded in ``coding``
    run_df = run_df.with_columns(run_codes.alias("qid"))
    if not every:
        run_df = run_df.filter(keep)
    if all_queries:
        qrels_eval = qrels_df.with_columns(prepared.codes.alias("qid"))
    else:
        qrels_eval = encode(qrels_df)
    # duplicates: distinct (query, docno hash) keys prove there are none; only when some
    # keys repeat (a duplicate, or a hash collision) are the strings compared
    if (
        opts.checks
        and not prepared.distinct_pairs
        and qrels_eval.select(_PAIR_HASH.n_unique()).item() != qrels_eval.height
        and qrels_eval.select(pl.struct("qid", "docno").n_unique()).item() != qrels_eval.height
    ):
        dup = qrels_eval.filter(pl.struct("qid", "docno").is_duplicated())
        code, docno = dup.row(0)[:2]
        msg = f"duplicate docno {docno!r} in the qrels of query {codes['qid'][code]!r}"
        raise TrecEvalError(msg, 4)
    # the run's order (score ranks when it needs a sort) while the docnos are coded
    order = _order(run_df)
    qrels_coded = qrels_eval
    if not (complete and missing.height):
        docnos, doc_codes, qrels_codes = coding.result()
        coded = (docnos, doc_codes if every else doc_codes.filter(keep))
        if all_queries:  # the rows of ``qrels_eval`` are those of ``qrels_df``
            qrels_coded = qrels_eval.with_columns(qrels_codes.alias("__dc"))
    ranked = _ranked(run_df, qrels_coded, opts, codes["qid"], coded, order)
    del qrels_coded
    del run_df  # its strings are no longer needed: free them before the measures
    queries = codes.select(pl.col("__code").alias("qid"))
    subset = _judged_subset(ranked, columns, opts.level)
    stats = _query_stats(ranked, qrels_eval, queries, opts, subset)
    wide = _compute(ranked, subset, qrels_eval, stats, columns, opts)
    valued = [c for c in columns if c.measure.kind not in ("runid",)]
    if complete and missing.height:
        bogus_rows = pl.col("qid").is_in(encode(missing.select("qid"))["qid"].implode())
        # trec_eval's clean-up of the placeholder ranking matches these exact labels
        # (``unj`` by prefix): ``utility_1,-1,0,0`` or ``relstring_20`` keep their values.
        zeroed = [
            c.label for c in valued
            if c.label in ("num_ret", "utility", "rbp_resid") or c.label.startswith("unj")
        ]  # fmt: skip
        wide = wide.with_columns(
            *[pl.when(bogus_rows).then(0.0).otherwise(pl.col(lb)).alias(lb) for lb in zeroed],
            *[
                pl.when(bogus_rows).then(pl.lit("")).otherwise(pl.col(c.label)).alias(c.label)
                for c in valued if c.label == "relstring"
            ],
        )  # fmt: skip
    wide = wide.sort("qid")
    wide = wide.with_columns(codes["qid"].gather(wide["qid"]).alias("qid"))
    z = zscores is not None
    if z:
        wide = _apply_zscores(wide, valued, zscores)
    return _assemble(
        wide, columns, qrels_df, runid, per_query, summary, complete, n_qrels_queries, z
    )


def _relation_eval(
    qrels: Any,
    run: Any,
    requests: list[Request],
    *,
    rel_format: str,
    per_query: bool,
    complete: bool,
    max_docs: int | None,
    rel_level: int,
    judged_only: bool,
    summary: bool,
    query: str | None,
    runid: str | None,
    zscores: Any,
) -> pl.DataFrame:
    """``-R qrels_jg / prefs / qrels_prefs`` and the preference measures (trec_prefs)."""
    import polars_rankeval.trec_eval.prefs as trec_prefs

    prefs = [r for r in requests if _BY_NAME[r.measure].kind == "prefs"]
    common = [r for r in requests if _BY_NAME[r.measure].kind != "prefs"]
    pairs = [(r.measure, tuple(r.params.split(",")) if r.params else ()) for r in prefs]
    schema = {
        "measure": pl.String,
        "query": pl.String,
        "value": pl.Float64,
        "text": pl.String,
        "zscore": pl.Boolean,
    }
    try:
        if rel_format == "qrels":
            trec_prefs.relation_measures(None, None, pl.DataFrame(), pairs, relation_format="qrels")
        for r in common:
            if r.measure not in ("runid", "num_q"):
                raise trec_prefs.incompatible_format_error(r.measure)
        if zscores is not None:
            msg = "-Z with -R qrels_jg, prefs or qrels_prefs is not supported"
            raise TrecEvalError(msg, 2)
        relations = trec_prefs.read_relations(
            qrels if isinstance(qrels, pl.DataFrame) else Path(qrels),  # type: ignore[arg-type]
            rel_format,  # type: ignore[arg-type]
        )
        if query is not None:
            n_all = relations.select(pl.col("user").n_unique()).item()
            relations = relations.filter(pl.col("user") == query)
        else:
            n_all = relations.select(pl.col("user").n_unique()).item()
        run_df, tag = _as_run(run)
        values = trec_prefs.relation_measures(
            relations,
            None,
            run_df.select(
                pl.col("qid").alias("user"),
                pl.col("docno").alias("item"),
                pl.col("sim").alias("score"),
            ),
            pairs,
            relation_format=rel_format,
            rel_level=rel_level,
            max_docs_per_query=max_docs,
            judged_docs_only=judged_only,
            complete=complete,
        )
    except trec_prefs.TrecEvalError as exc:
        raise TrecEvalError(exc.message.removeprefix("trec_eval: "), exc.exit_code) from None
    queries = run_df.select(pl.col("qid").unique()).join(
        relations.select(pl.col("user").alias("qid").unique()), on="qid", how="semi"
    )
    n_eval = values["query"].n_unique() if values.height else queries.height
    if complete:
        n_eval = relations.select(pl.col("user").n_unique()).item()
    if n_eval == 0:
        raise TrecEvalError("no queries with both results and relevance info", 7)
    integer = pl.col("measure").is_in(list(trec_prefs.INTEGER_MEASURES))
    parts: list[pl.DataFrame] = []
    if per_query and values.height:
        parts.append(
            values.select(
                "measure",
                "query",
                "value",
                pl.when(integer)
                .then(_fmt_long(pl.col("value")))
                .otherwise(pl.lit(format_doubles(values["value"])))
                .alias("text"),
                pl.lit(False).alias("zscore"),
            )
        )
    if summary:
        denominator = n_all if complete else n_eval
        rows: list[tuple[str, str, float | None, str, bool]] = []
        names = [r.measure for r in common]
        if "runid" in names:
            rows.append(("runid", "all", None, runid if runid is not None else tag, False))
        if "num_q" in names:
            rows.append(("num_q", "all", float(denominator), str(denominator), False))
        head = pl.DataFrame(rows, schema=schema, orient="row")
        labels = values.select("measure", "summary").unique(maintain_order=True)
        totals = []
        for label, rule in labels.iter_rows():
            total = float(
                values.filter(pl.col("measure") == label)
                .select(pl.col("value").cum_sum().last())
                .item()
            )
            totals.append(total if rule == "sum" else total / denominator)
        tail = pl.DataFrame(
            {"measure": labels["measure"], "value": totals},
            schema={"measure": pl.String, "value": pl.Float64},
        )
        tail = tail.select(
            "measure",
            pl.lit("all").alias("query"),
            "value",
            pl.when(integer)
            .then(_fmt_long(pl.col("value")))
            .otherwise(pl.lit(format_doubles(tail["value"])))
            .alias("text"),
            pl.lit(False).alias("zscore"),
        )
        parts += [head, tail]
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.select(list(schema)).cast(schema) for p in parts])  # type: ignore[arg-type]


def _as_qrels(qrels: Any) -> pl.DataFrame:
    if isinstance(qrels, str | Path | bytes):
        return read_trec_eval_qrels(qrels)
    frame = qrels.collect() if isinstance(qrels, pl.LazyFrame) else pl.DataFrame(qrels)
    names = {"user": "qid", "item": "docno", "relevance": "rel"}
    frame = frame.rename({k: v for k, v in names.items() if k in frame.columns})
    return frame.select(
        pl.col("qid").cast(pl.String), pl.col("docno").cast(pl.String), pl.col("rel").cast(pl.Int64)
    )


def _as_run(run: Any) -> tuple[pl.DataFrame, str]:
    if isinstance(run, str | Path | bytes):
        return read_trec_eval_run(run)
    frame = run.collect() if isinstance(run, pl.LazyFrame) else pl.DataFrame(run)
    names = {"user": "qid", "item": "docno", "score": "sim", "tag": "run_id"}
    frame = frame.rename({k: v for k, v in names.items() if k in frame.columns})
    tag = str(frame["run_id"][-1]) if "run_id" in frame.columns and frame.height else "unknown"
    out = frame.select(
        pl.col("qid").cast(pl.String),
        pl.col("docno").cast(pl.String),
        pl.col("sim").cast(pl.Float64),
    )
    return out, tag


def read_zscores(source: str | Path | bytes) -> pl.DataFrame:
    """Read a ``-Z`` file: ``qid measure mean stddev`` lines (``atof`` numbers)."""
    from polars_rankeval.io.trec import _FIELD, _lines, _malformed, _read_bytes, c_atof

    lines = _lines(_read_bytes(source, "zscores"))
    fields = lines.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    _malformed(
        fields.filter(pl.col("f").list.len() != 4).select("lineno", "line"),
        source,
        "zscores",
        "4 white-space separated fields (qid measure mean stddev)",
    )
    f = pl.col("f")
    return fields.select(
        f.list.get(0).alias("qid"),
        f.list.get(1).alias("measure"),
        c_atof(f.list.get(2)).alias("mean"),
        c_atof(f.list.get(3)).alias("sd"),
    ).unique(["qid", "measure"], keep="first", maintain_order=True)


def _apply_zscores(wide: pl.DataFrame, columns: list[_Column], zscores: Any) -> pl.DataFrame:
    table = zscores if isinstance(zscores, pl.DataFrame) else read_zscores(zscores)
    numeric = [c.label for c in columns if c.measure.kind != "relstring"]
    known = table.select(pl.col("qid").unique())
    long = wide.select("qid", *numeric).unpivot(
        index="qid", variable_name="measure", value_name="v"
    )
    long = long.join(table, on=["qid", "measure"], how="left", maintain_order="left")
    z = (
        pl.when(~pl.col("qid").is_in(known["qid"].implode()) | pl.col("mean").is_null())
        .then(MISSING_ZSCORE)
        .when(pl.col("sd") != 0)
        .then((pl.col("v") - pl.col("mean")) / pl.col("sd"))
        .when(pl.col("v") == pl.col("mean"))
        .then(0.0)
        .otherwise(MISSING_ZSCORE)
    )
    back = long.with_columns(z.alias("v")).pivot("measure", index="qid", values="v")
    return wide.drop(numeric).join(back, on="qid", how="left", maintain_order="left")


def _assemble(
    wide: pl.DataFrame,
    columns: list[_Column],
    qrels: pl.DataFrame,
    runid: str,
    per_query: bool,
    summary: bool,
    complete: bool,
    n_qrels_queries: int,
    z: bool,
) -> pl.DataFrame:
    schema = {
        "measure": pl.String,
        "query": pl.String,
        "value": pl.Float64,
        "text": pl.String,
        "zscore": pl.Boolean,
    }
    parts: list[pl.DataFrame] = []
    wide = wide.sort("qid")
    n_eval = wide.height
    if per_query:
        printed = [c for c in columns if c.measure.kind not in ("runid", "num_q", "gm")]
        if printed:
            # The columns one after another (measure-major), then gathered into
            # query-major order: cell (query q, measure m) is at m * n_q + q.
            n_q, n_m = wide.height, len(printed)
            cell = pl.int_range(n_m * n_q, dtype=pl.Int64, eager=True)
            m_index, q_index = cell % n_m, cell // n_m
            order = m_index * n_q + q_index
            # Values and texts measure by measure, each as trec_eval prints it (the
            # doubles formatted in one call), then gathered into query-major order.
            kinds = [
                "str" if c.measure.kind == "relstring" else
                "long" if c.measure.integer and not z else "double"
                for c in printed
            ]  # fmt: skip
            none_f = pl.Series([None] * n_q, dtype=pl.Float64)
            columns_mm = [
                none_f if kind == "str" else wide[c.label].cast(pl.Float64)
                for c, kind in zip(printed, kinds, strict=True)
            ]
            doubles = [v for v, kind in zip(columns_mm, kinds, strict=True) if kind == "double"]
            formatted = (
                format_doubles(pl.concat(doubles, rechunk=True))
                if doubles
                else pl.Series(dtype=pl.String)
            )
            texts: list[pl.Series] = []
            offset = 0  # of the next double measure's texts in ``formatted``
            for c, value, kind in zip(printed, columns_mm, kinds, strict=True):
                if kind == "str":
                    quoted = pl.concat_str([pl.lit("'"), pl.col("v"), pl.lit("'")])
                    frame = pl.DataFrame({"v": wide[c.label].cast(pl.String)})
                    texts.append(frame.select(quoted).to_series())
                elif kind == "long":
                    texts.append(pl.select(_fmt_long(pl.lit(value))).to_series())
                else:
                    texts.append(formatted.slice(offset, n_q))
                    offset += n_q
            pq = pl.DataFrame(
                {
                    "measure": pl.Series([c.label for c in printed], dtype=pl.String).gather(
                        m_index
                    ),
                    "query": wide["qid"].gather(q_index),
                    "value": pl.concat(columns_mm, rechunk=True).gather(order),
                    "text": pl.concat(texts, rechunk=True).gather(order),
                    # z-scored: every value but a relstring's (printed as it is)
                    "zscore": pl.concat(
                        [
                            wide[c.label].is_null() & z
                            if kind == "str"
                            else pl.repeat(z, n_q, eager=True)
                            for c, kind in zip(printed, kinds, strict=True)
                        ]
                    ).gather(order),
                }
            )
            parts.append(pq)
    if summary:
        denominator = n_qrels_queries if complete else n_eval
        labels: list[str] = []
        values: list[float | None] = []
        texts_long: list[bool] = []
        for column in columns:
            kind = column.measure.kind
            label = column.label
            if kind in ("runid", "relstring"):
                labels.append(label)
                values.append(None)
                texts_long.append(kind == "runid")
                continue
            # trec_eval's accumulation: a left-to-right sum over queries in qrels order,
            # then one division (done on Python floats: IEEE doubles, as in C).
            total = float(
                wide.select(pl.col(label).cast(pl.Float64).cum_sum().last()).item() or 0.0
            )
            if kind == "num_q":
                value = float(denominator)
            elif column.measure.name == "num_rel" and complete:
                value = float(qrels.filter(pl.col("rel") > 0).height)
            elif column.measure.summary == "sum":
                value = total
            elif column.measure.summary == "gm":
                value = math.exp(
                    (total + (denominator - n_eval) * math.log(MIN_GEO_MEAN)) / denominator
                )
            else:
                value = total / denominator
            labels.append(label)
            values.append(value)
            texts_long.append(column.measure.integer and not z)
        frame = pl.DataFrame(
            {"measure": labels, "value": values, "long": texts_long},
            schema={"measure": pl.String, "value": pl.Float64, "long": pl.Boolean},
        )
        kinds = [c.measure.kind for c in columns]
        frame = frame.with_columns(pl.Series("kind", kinds))
        frame = frame.filter(pl.col("kind") != "relstring")
        frame = frame.select(
            "measure",
            pl.lit("all").alias("query"),
            "value",
            pl.when(pl.col("kind") == "runid")
            .then(pl.lit(runid))
            .when(pl.col("long"))
            .then(_fmt_long(pl.col("value")))
            .otherwise(pl.lit(format_doubles(frame["value"])))
            .alias("text"),
            (pl.lit(z) & (pl.col("kind") != "runid")).alias("zscore"),
        )
        parts.append(frame)
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.cast(schema) for p in parts])  # type: ignore[arg-type]


def format_trec(result: pl.DataFrame) -> str:
    r"""The lines trec_eval prints: ``%-22s\t%s\t%s`` (a ``Z`` before z-scored names)."""
    if result.height == 0:
        return ""
    return str(_trec_lines(result).select(pl.col("line").str.join("\n")).item()) + "\n"


def _trec_lines(result: pl.DataFrame) -> pl.DataFrame:
    """:func:`format_trec`'s lines, a row each (column ``line``, no null)."""
    z = "zscore" in result.columns and bool(result["zscore"].any())
    prefix = pl.when(pl.col("zscore")).then(pl.lit("Z")).otherwise(pl.lit("")) if z else pl.lit("")
    line = pl.concat_str(
        [
            prefix,
            pl.col("measure").str.pad_end(22),
            pl.lit("\t"),
            pl.col("query"),
            pl.lit("\t"),
            pl.col("text"),
        ]
    )
    return result.select(line.alias("line")).drop_nulls()


def _print_trec(result: pl.DataFrame) -> None:
    """Print :func:`format_trec`'s text; to a byte stream written by Polars (no str copy)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (a test's capture, ...)
        sys.stdout.write(format_trec(result))
        return
    sys.stdout.flush()
    _trec_lines(result).write_csv(out, include_header=False, quote_style="never")
    out.flush()


# --------------------------------------------------------------------------- command line

_SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
_LONG = {
    "help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m",
    "complete_rel_info_wanted": "c", "level_for_rel": "l", "nosummary": "n",
    "Debug_level": "D", "Judged_docs_only": "J", "Number_docs_in_coll": "N",
    "Max_retrieved_per_topic": "M", "Rel_info_format": "R", "Results_format": "T",
    "Output_old_results_format": "o", "Zscore": "Z",
}  # fmt: skip
_TAKES_ARG = {c for i, c in enumerate(_SHORT) if i + 1 < len(_SHORT) and _SHORT[i + 1] == ":"}
_TAKES_ARG |= {"o"}  # the obsolete --Output_old_results_format takes an argument
USAGE = (
    "Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_qrels' prints all qrels measures, '-m official' is default)\n"
)


class _UsageError(Exception):
    pass


def _getopt(argv: Sequence[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """GNU ``getopt_long`` with trec_eval's options: permutes, bundles, abbreviates."""
    options: list[tuple[str, str]] = []
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional += argv[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            matches = [n for n in _LONG if n == name] or [n for n in _LONG if n.startswith(name)]
            if len(matches) != 1:
                raise _UsageError(f"unrecognized or ambiguous option {arg!r}")
            short = _LONG[matches[0]]
            if short in _TAKES_ARG:
                if not eq:
                    if i >= len(argv):
                        raise _UsageError(f"option {arg!r} requires an argument")
                    value = argv[i]
                    i += 1
            elif eq:
                raise _UsageError(f"option {arg!r} doesn't allow an argument")
            options.append((short, value))
            continue
        if arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                c = arg[j]
                if c not in _SHORT.replace(":", ""):
                    raise _UsageError(f"invalid option -- {c!r}")
                if c in _TAKES_ARG and c != "o":
                    value = arg[j + 1 :]
                    if not value:
                        if i >= len(argv):
                            raise _UsageError(f"option requires an argument -- {c!r}")
                        value = argv[i]
                        i += 1
                    options.append((c, value))
                    break
                options.append((c, ""))
                j += 1
            continue
        positional.append(arg)
    return options, positional


def command_line(argv: Sequence[str]) -> int:
    """``polars-rankeval trec-eval``: trec_eval's command line, options and output.

    Options are trec_eval's (``-q -m -c -l -n -D -J -N -M -R -T -Z -v -h`` and their
    long names, ``-`` reads the run from standard input); the output is byte for byte
    trec_eval's. Returns trec_eval's exit status (0, or 1 for a usage error or an
    illegal measure, 2 for unreadable input, 4 for duplicate documents, 7 when no query
    has both results and judgments).
    """
    try:
        options, positional = _getopt(argv)
    except _UsageError as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        sys.stderr.write(USAGE)
        return 1
    measures: list[str] = []
    kwargs: dict[str, Any] = {}
    help_wanted = False
    zfile: str | None = None
    rel_format, results_format = "qrels", "trec_results"
    for opt, value in options:
        if opt == "h":
            help_wanted = True
        elif opt == "v":
            print(f"trec_eval version {VERSION}", file=sys.stderr)
            return 0
        elif opt == "q":
            kwargs["per_query"] = True
        elif opt == "m":
            try:
                parse_measures([value])
            except TrecEvalError:
                print(f"trec_eval: illegal measure '{value}'", file=sys.stderr)
                return 1
            measures.append(value)
        elif opt == "c":
            kwargs["complete"] = True
        elif opt == "l":
            kwargs["rel_level"] = atol(value)
        elif opt == "n":
            kwargs["summary"] = False
        elif opt == "D":
            level, dot, qid = value.partition(".")
            if dot:
                kwargs["query"] = qid
            if atol(level) > 0:
                print("trec_eval: note: debug output (-D > 0) is not reproduced", file=sys.stderr)
        elif opt == "J":
            kwargs["judged_only"] = True
        elif opt == "N":
            kwargs["num_docs"] = atol(value)
        elif opt == "M":
            kwargs["max_docs"] = max(atol(value), 0)
        elif opt == "R":
            rel_format = value
        elif opt == "T":
            results_format = value
        elif opt == "Z":
            zfile = value
    if help_wanted:
        sys.stdout.write(USAGE)
        return 0
    if len(positional) != 2:
        sys.stderr.write(USAGE)
        return 1
    if rel_format not in REL_FORMATS:
        print(f"trec_eval: Illegal rel_format '{rel_format}'", file=sys.stderr)
        return 2
    kwargs["rel_format"] = rel_format
    if results_format != "trec_results":
        print(f"trec_eval: Illegal retrieval results format '{results_format}'", file=sys.stderr)
        return 2
    qrels_path, run_path = positional
    try:
        run_source: Any = sys.stdin.buffer.read() if run_path == "-" else Path(run_path)
        if run_path != "-" and not Path(run_path).is_file():
            raise TrecEvalError(f"cannot read results file {run_path!r}", 2)
        if not Path(qrels_path).is_file():
            raise TrecEvalError(f"cannot read qrels file {qrels_path!r}", 2)
        zscores = read_zscores(zfile) if zfile is not None else None
        result = trec_eval(
            Path(qrels_path), run_source, measures or ["official"], zscores=zscores, **kwargs
        )
    except TrecEvalError as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        return exc.status
    except (ValueError, OSError, pl.exceptions.PolarsError) as exc:
        print(f"trec_eval: {exc}", file=sys.stderr)
        return 2
    _print_trec(result)
    return 0

"""Intent-aware (diversity) IR measures on a qrels with subtopics, as TREC's ndeval.

A query (user) may have several intents (subtopics); a document (item) is judged
against each. The long frame stays one row per (user, item): the subtopic judgments of
an item ride along in a list column, by default ``subtopics``, named by the metrics'
``subtopics=`` option. It holds a ``List(Struct{subtopic, relevance})`` (the item's
judgment for each subtopic; :func:`polars_rankeval.join` with ``subtopic=`` and
:func:`polars_rankeval.trec.read_diversity_qrels` build it) or a plain ``List`` of
subtopic ids (each relevant). A pair (item, subtopic) is relevant when its relevance
is at least ``rel`` (default 1: ndeval reads judgments as binary, ``> 0``). The user's
subtopics are those with at least one relevant judged item, recommended or not
(ndeval's ``actualSubtopics``, N below); intent probabilities are uniform, 1 / N.

With ``c(s, r)`` the number of items relevant to subtopic s ranked above rank r and
``J(r, s)`` 1 when the item at rank r is relevant to s, the novelty-discounted gain of
rank r is ``g(r) = sum_s J(r, s) (1 - alpha)^c(s, r)``:

* ``alpha_ndcg@k`` (Clarke et al., SIGIR 2008): ``sum_{r<=k} g(r) / log2(r + 1)``
  over the same sum of the ideal ranking (``normalize="ideal"``: ndeval's
  alpha-nDCG@k), over ``sum_{r<=k} N (1 - alpha)^(r-1) / log2(r + 1)`` (the
  "ideal ideal" list whose every item is relevant to every subtopic,
  ``normalize="ideal_ideal"``: ndeval's alpha-DCG@k) or raw (``normalize="raw"``).
* ``err_ia@k`` (Chapelle et al., 2011, intent-aware ERR with uniform intents and the
  stop probability ``alpha`` of a relevant item): ``sum_{r<=k} g(r) / r``, normalised
  like alpha_ndcg (``ideal_ideal``, the default, is ndeval's ERR-IA@k; ``ideal`` its
  nERR-IA@k); ``normalize="raw"`` gives ``alpha / N * sum_{r<=k} g(r) / r``, the
  intent-aware ERR itself.
* ``nrbp`` (Clarke et al., ICTIR 2009): ``(1 - (1 - alpha) beta) / N * sum_r
  beta^(r-1) g(r)`` over the whole list (ndeval's NRBP; ``normalize="ideal"`` divides
  by the same sum of the ideal ranking: nNRBP); ``@k`` cuts the list.
* ``s_recall@k`` (Zhai, Cohen & Lafferty, 2003; ndeval's strec@k): subtopics covered
  by the top k / N.
* ``precision_ia@k`` (Agrawal et al., WSDM 2009; ndeval's P-IA@k): relevant (item,
  subtopic) pairs in the top k / (k N).
* ``map_ia`` (ndeval's MAP-IA): the mean over the N subtopics of the average precision
  of each subtopic, AP_s = sum over the ranks r of the items relevant to s of
  (c(s, r) + 1) / r, divided by the number of judged items relevant to s.

**The ideal ranking** (``normalize="ideal"``) is NP-hard to find; like ndeval it is
the standard greedy approximation: rank by rank, take the judged item of highest gain
``sum_s J(d, s) (1 - alpha)^c(s)`` given the items already placed, ties going to the
larger item id (ndeval compares docnos with ``strcmp``; gains within 1e-12 of each
other count as tied). It is built for every user at once, one vectorised step per
rank: users of similar size (items and subtopics rounded up to powers of two) share a
dense (users x items x subtopics) 0/1 array (numpy, in blocks of
:data:`GREEDY_BLOCK` elements), and a step is its product with the users' current
subtopic gains. It goes as deep as the deepest cutoff the call requests (without a
cutoff as deep as the user's relevant items; for ``nrbp`` until ``beta^(r-1)`` falls
below 1e-17).

**Undefined** (null) when the user has no relevant subtopic (N = 0), whatever was
recommended; ndeval reports 0 for such a query and averages it in
(``empty="zero"`` does the same).

**Ties.** Deterministic tie policies only: the novelty discount of an item depends on
the items above it, so the expectation over a tie group's orderings has no closed
form. ndeval ranks by the run's rank field, or with ``-traditional`` by score and then
docno descending (``ties="item_desc"``); pyndeval (ir_measures) by score and then doc
id ascending (``ties="item_asc"``).

**Differences from ndeval.** Any cutoff (ndeval stops at 20); at k = 1 ndeval leaves
ERR-IA@1 and alpha-DCG@1 unnormalised (its loop starts at rank 2), here they are
normalised like every other cutoff.

Examples
--------
Clarke et al.'s worked example has one query and subtopics a, b, c; items 1 (a), 2
(b), 3 (a, b), 4 (c); the ranking 1, 3, 4, 2 has gains 1, 1/2 + 1, 1, 1/2:

>>> import polars as pl
>>> import polars_rankeval as prk
>>> recs = pl.DataFrame({"user": [1] * 4, "item": [1, 3, 4, 2], "score": [4.0, 3, 2, 1]})
>>> qrels = pl.DataFrame({"user": [1] * 5, "item": [1, 2, 3, 3, 4],
...                       "subtopic": ["a", "b", "a", "b", "c"], "relevance": [1] * 5})
>>> long = prk.join(recs, qrels, subtopic="subtopic")
>>> out = prk.evaluate(long, ["alpha_ndcg(normalize=raw)@4", "s_recall@2"],
...                    ties="item_desc")
>>> import math
>>> out["alpha_ndcg(normalize=raw)@4"].item() == 1 + 1.5 / math.log2(3) + 1 / 2 + 0.5 / math.log2(5)
True
>>> out["s_recall@2"].item()  # a and b of three subtopics
0.6666666666666666
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
import polars as pl

from polars_rankeval._utils.ties import id_order
from polars_rankeval.metrics._checks import examples, fail_if
from polars_rankeval.metrics._common import Rel, f64
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.params import ColumnOption, Interval
from polars_rankeval.metrics.registry import register
from polars_rankeval.metrics.spec import FramePlan

T = TypeVar("T")
_S, _POS, _C, _G = "__prk_ia_s", "__prk_ia_pos", "__prk_ia_c", "__prk_ia_g"
_ID, _REL = "subtopic", "relevance"
TIE_TOLERANCE = 1e-12
"""Relative difference under which two greedy gains count as tied."""
NRBP_PRECISION = 1e-17
"""The ideal ranking of ``nrbp`` stops where ``beta^(r-1)`` falls below this."""
GREEDY_BLOCK = 2**22
"""Array elements (users x items x subtopics) of one step of the greedy ideal (32 MB)."""
MAX_IDEAL_DEPTH = 10_000_000
"""The longest ideal-ideal list summed (alpha_ndcg without a cutoff, alpha near 0)."""

Subtopics = Annotated[
    str,
    ColumnOption(),
    "column of the item's subtopic judgments: a List of Struct{subtopic, relevance} "
    "(or a List of relevant subtopic ids)",
]
Alpha = Annotated[
    float, Interval(0, 1), "redundancy penalty: a subtopic's gain decays by (1 - alpha)"
]
Beta = Annotated[float, Interval(0, 1, closed="left"), "patience: the rank discount beta^(r-1)"]
Normalize = Annotated[
    Literal["ideal", "ideal_ideal", "raw"],
    "divide by the greedy ideal ranking (ndeval's alpha-nDCG, nERR-IA, nNRBP), by a "
    "list relevant to every subtopic at every rank (ndeval's alpha-DCG, ERR-IA, NRBP) "
    "or not at all",
]


# --------------------------------------------------------------------------- plumbing
def _relevant_pairs(
    rows: pl.LazyFrame,
    f: Features,
    subtopics: str,
    rel: float,
    position: pl.Expr,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The relevant (user, item, subtopic) pairs and the per-user count of bad judgments.

    Pairs: keys, item, ``_POS`` (the item's position in the list, null when not
    recommended), ``_S``. Bad judgments (a null subtopic or relevance, a subtopic named
    twice for one item) are counted per user (``__bad``, with an example ``__bad_item``)
    so that :func:`_finish` raises an error naming the column and the item.
    """
    keys, item = f.keys, f.cols.item
    source = f.column_name(subtopics)
    dtype = rows.collect_schema()[source]
    if not isinstance(dtype, pl.List):
        msg = (
            f"column {subtopics!r} must hold each item's subtopic judgments as a List of "
            f"Struct{{subtopic, relevance}} (or a List of subtopic ids), got {dtype}; build "
            "it with polars_rankeval.join(..., subtopic=...)"
        )
        raise TypeError(msg)
    inner = dtype.inner
    base = rows.select(*keys, item, position.alias(_POS), pl.col(source).alias(_S))
    flat = base.filter(pl.col(_S).list.len() > 0).explode(_S)
    if isinstance(inner, pl.Struct):
        fields = {fld.name: fld.dtype for fld in inner.fields}
        if _ID not in fields or _REL not in fields:
            msg = (
                f"column {subtopics!r} must hold structs with fields 'subtopic' and "
                f"'relevance', got {inner}"
            )
            raise TypeError(msg)
        if not (fields[_REL].is_numeric() or fields[_REL] == pl.Boolean):
            msg = f"field 'relevance' of column {subtopics!r} must be numeric, got {fields[_REL]}"
            raise TypeError(msg)
        sid = pl.col(_S).struct.field(_ID)
        grade = f64(pl.col(_S).struct.field(_REL))
    else:
        sid, grade = pl.col(_S), pl.lit(1.0)
    flat = flat.select(*keys, item, _POS, sid.alias("__sid"), grade.alias("__grade"))
    wrong = pl.col("__sid").is_null() | pl.col("__grade").is_null() | ~pl.col("__grade").is_finite()
    twice = pl.len().over([*keys, item, "__sid"]) > 1
    bad = (
        flat.filter(wrong | twice)
        .group_by(keys)
        .agg(pl.len().cast(pl.Float64).alias("__bad"), pl.col(item).min().alias("__bad_item"))
    )
    pairs = flat.filter(~wrong & (pl.col("__grade") >= rel)).select(
        *keys, item, _POS, pl.col("__sid").alias(_S)
    )
    return pairs.unique([*keys, item, _S]), bad


def _finish(
    out: pl.LazyFrame, bad: pl.LazyFrame, keys: list[str], subtopics: str, label: str
) -> pl.LazyFrame:
    """The per-user values, or the error for bad judgments (checked per batch)."""
    checked = out.join(bad, on=keys, how="full", coalesce=True, nulls_equal=True).with_columns(
        pl.col("__bad").fill_null(0.0)
    )

    def message(rows: pl.DataFrame) -> str:
        return (
            f"column {subtopics!r} has a null (or non-finite) subtopic or relevance, or names "
            f"one subtopic twice for one item: {label} {examples(rows['__bad_item'])!r}"
        )

    return (
        fail_if(checked, "__bad", message)
        .filter(pl.col("value").is_not_null())
        .select(*keys, "value")
    )


def _pairs_of(
    f: Features, rows: pl.LazyFrame, subtopics: str, rel: float, position: pl.Expr
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """:func:`_relevant_pairs`, planned once per call and cached (see :func:`_shared`)."""

    def make() -> tuple[pl.LazyFrame, pl.LazyFrame]:
        pairs, bad = _relevant_pairs(rows, f, subtopics, rel, position)
        return pairs.cache(), bad.cache()

    return _shared(f, rows, ("pairs", subtopics, rel), make)


def _with_novelty(pairs: pl.LazyFrame, keys: list[str], alpha: float) -> pl.LazyFrame:
    """Add ``_C``: items relevant to the same subtopic ranked above; ``_G`` its gain."""
    c = pl.col(_POS).rank("ordinal").over([*keys, _S]).cast(pl.Int64) - 1
    return pairs.with_columns(c.alias(_C)).with_columns(
        ((1.0 - alpha) ** f64(pl.col(_C))).alias(_G)
        if alpha < 1.0
        else f64(pl.col(_C) == 0).alias(_G)
    )


def _greedy_ideal(
    pairs: pl.DataFrame, keys: list[str], item: str, alpha: float, depth: int | None
) -> pl.DataFrame:
    """The greedy ideal ranking: keys, item, ``_S``, ``_POS`` (1-based), all users at once.

    ``pairs`` holds the relevant (keys, item, ``_S``) pairs. Each step scores every
    item not yet placed by ``sum_s (1 - alpha)^c(s)`` and places the best one of every
    user (ties: the larger item id, ndeval's docno rule); a user stops when nothing of
    positive gain is left, and every user after ``depth`` steps.

    Vectorised over users: users of similar size (items and subtopics rounded up to a
    power of two) share a dense ``(users, items, subtopics)`` 0/1 array, so one step is
    one product of that array with the users' current subtopic gains, over all of them.
    """
    # Per user: items numbered by id descending (the first maximum is the larger id),
    # subtopics numbered densely.
    user = pl.struct(keys).rank("dense").cast(pl.Int64) - 1
    frame = pairs.select(*keys, item, _S).with_columns(user.alias("__u"))
    frame = frame.with_columns(
        (id_order(item).rank("dense", descending=True).over("__u").cast(pl.Int64) - 1).alias("__m"),
        (pl.col(_S).rank("dense").over("__u").cast(pl.Int64) - 1).alias("__s"),
    )
    sizes = frame.group_by("__u").agg(
        (pl.col("__m").max() + 1).alias("__nm"), (pl.col("__s").max() + 1).alias("__ns")
    )

    def pow2(c: str) -> pl.Expr:  # the size rounded up to a power of two
        return (2.0 ** f64(pl.col(c)).log(2).ceil()).round().cast(pl.Int64)

    sizes = sizes.with_columns(pow2("__nm").alias("__cm"), pow2("__ns").alias("__cs"))
    frame = frame.join(sizes.select("__u", "__cm", "__cs"), on="__u")
    placed: list[pl.DataFrame] = []
    for (cm, cs), group in frame.group_by(["__cm", "__cs"]):
        placed.append(_greedy_block(group, int(cm), int(cs), alpha, depth))  # type: ignore[call-overload]
    order = (
        pl.concat(placed)
        if placed
        else pl.DataFrame(schema={"__u": pl.Int64, "__m": pl.Int64, _POS: pl.Int64})
    )
    return frame.join(order, on=["__u", "__m"]).select(*keys, item, _S, _POS)


def _greedy_block(
    group: pl.DataFrame, cm: int, cs: int, alpha: float, depth: int | None
) -> pl.DataFrame:
    """The greedy of the users of one size class: ``__u, __m, _POS`` of placed items."""
    users = group.get_column("__u").unique().sort()
    local = {"__u": users, "__l": np.arange(users.len(), dtype=np.int64)}
    rows = group.join(pl.DataFrame(local), on="__u")
    lu, m, s = (rows.get_column(c).to_numpy() for c in ("__l", "__m", "__s"))
    steps = cm if depth is None else min(depth, cm)
    chunk = max(1, GREEDY_BLOCK // (cm * cs))
    ids = users.to_numpy()
    out_u: list[np.ndarray] = []
    out_m: list[np.ndarray] = []
    out_p: list[np.ndarray] = []
    order = np.argsort(lu, kind="stable")
    lu, m, s = lu[order], m[order], s[order]
    bounds = np.searchsorted(lu, np.arange(0, users.len() + chunk, chunk))
    for c, start in enumerate(range(0, users.len(), chunk)):
        n = min(chunk, users.len() - start)
        lo, hi = bounds[c], bounds[c + 1]
        judged = np.zeros((n, cm, cs), dtype=np.float64)
        judged[lu[lo:hi] - start, m[lo:hi], s[lo:hi]] = 1.0
        open_: np.ndarray = np.asarray(judged.any(axis=2))
        gain = np.ones((n, cs), dtype=np.float64)
        alive = np.ones(n, dtype=bool)
        rows_n = np.arange(n)
        for step in range(1, steps + 1):
            score = np.einsum("nms,ns->nm", judged, gain)
            score[~open_] = -1.0
            top = score.max(axis=1)
            alive &= top > 0
            if not alive.any():
                break
            near = (score >= (top * (1.0 - TIE_TOLERANCE))[:, None]) & open_
            best = np.argmax(near, axis=1)
            who = rows_n[alive]
            out_u.append(ids[start + who])
            out_m.append(best[who])
            out_p.append(np.full(who.size, step, dtype=np.int64))
            open_[who, best[who]] = False
            hit = judged[who, best[who]] > 0
            gain[who] = np.where(hit, gain[who] * (1.0 - alpha), gain[who])
    if not out_u:
        return pl.DataFrame(schema={"__u": pl.Int64, "__m": pl.Int64, _POS: pl.Int64})
    return pl.DataFrame(
        {
            "__u": np.concatenate(out_u).astype(np.int64),
            "__m": np.concatenate(out_m).astype(np.int64),
            _POS: np.concatenate(out_p),
        }
    )


def _ideal(
    pairs: pl.LazyFrame, keys: list[str], item: str, alpha: float, depth: list[int | None]
) -> pl.LazyFrame:
    """The greedy ideal ranking of every user (a batch function: whole users).

    ``depth`` is a one-element box read when the plan runs: the metrics of one call
    sharing this ideal raise it to the deepest cutoff any of them needs (the greedy
    ranking to depth d starts with the one to any smaller depth).
    """
    schema = pairs.collect_schema()
    fields: dict[str, pl.DataType] = {n: schema[n] for n in [*keys, item, _S]}
    fields[_POS] = pl.Int64()
    out_schema = pl.Schema(fields)

    def run(df: pl.DataFrame) -> pl.DataFrame:
        return _greedy_ideal(df, keys, item, alpha, depth[0]).select(out_schema.names())

    out = pairs.select(*keys, item, _S).map_batches(run, schema=out_schema, streamable=False)
    return out.cache()


def _shared(f: Features, rows: pl.LazyFrame, key: tuple[object, ...], make: Callable[[], T]) -> T:
    """One value per (rows, key) for all the intent metrics of one ``evaluate`` call.

    The metrics of a call get the same :class:`Features` and build on the same rows
    (per bucket): the subtopic pairs and each greedy ideal are planned once and
    cached, however many measures and cutoffs read them.
    """
    store: dict[tuple[object, ...], tuple[weakref.ref[pl.LazyFrame], Any]]
    store = f.__dict__.setdefault("_prk_intent_shared", {})
    for dead in [k for k, (ref, _) in store.items() if ref() is None]:
        del store[dead]
    entry = store.get((id(rows), key))
    if entry is not None and entry[0]() is rows:
        return entry[1]  # type: ignore[no-any-return]
    value = make()
    store[(id(rows), key)] = (weakref.ref(rows), value)
    return value


def _deeper(box: list[int | None], depth: int | None) -> None:
    """Raise the depth of a shared ideal to ``depth`` (``None``: unbounded)."""
    box[0] = None if box[0] is None or depth is None else max(box[0], depth)


def _per_user(ranked: pl.LazyFrame, keys: list[str], k: int | None, term: pl.Expr) -> pl.LazyFrame:
    """Per user: the sum of ``term`` over the ranked relevant pairs at positions <= k."""
    if k is not None:
        ranked = ranked.filter(pl.col(_POS) <= k)
    return ranked.group_by(keys).agg(term.sum().alias("__sum"))


def _novelty_of(
    f: Features, rows: pl.LazyFrame, key: tuple[object, ...], pairs: pl.LazyFrame, alpha: float
) -> pl.LazyFrame:
    """The ranked pairs with their novelty discount, planned once per call (cached)."""
    keys = f.keys

    def make() -> pl.LazyFrame:
        ranked = pairs.filter(pl.col(_POS).is_not_null())
        return _with_novelty(ranked, keys, alpha).cache()

    return _shared(f, rows, ("novelty", *key, alpha), make)


def _n_subtopics(pairs: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """N per user: subtopics with at least one relevant judged item."""
    return pairs.group_by(keys).agg(pl.col(_S).n_unique().cast(pl.Float64).alias("__n"))


def _combine(
    n: pl.LazyFrame, parts: dict[str, pl.LazyFrame], keys: list[str], value: pl.Expr
) -> pl.LazyFrame:
    out = n
    for name, frame in parts.items():
        out = out.join(
            frame.rename({"__sum": name}), on=keys, how="left", nulls_equal=True
        ).with_columns(pl.col(name).fill_null(0.0))
    return out.select(*keys, value.alias("value"))


def _discount(kind: Literal["log", "reciprocal", "geometric"], beta: float = 0.5) -> pl.Expr:
    pos = f64(pl.col(_POS))
    if kind == "log":
        return 1.0 / (pos + 1.0).log(2.0)
    if kind == "reciprocal":
        return 1.0 / pos
    return pl.lit(beta) ** (pos - 1.0) if beta > 0 else f64(pl.col(_POS) == 1)


def _ideal_ideal(
    kind: Literal["log", "reciprocal", "geometric"], alpha: float, k: int | None, beta: float
) -> float:
    """``sum_{r<=k} (1 - alpha)^(r-1) * discount(r)``: the ideal-ideal list over N.

    Without a cutoff the list is endless: the limit of the series (``-ln(alpha) /
    (1 - alpha)`` for the reciprocal discount; the log discount summed until
    ``(1 - alpha)^(r-1)`` falls below 1e-17), which needs ``alpha > 0``.
    """
    x = 1.0 - alpha
    if k is None:
        if alpha <= 0.0:
            msg = (
                "normalize='ideal_ideal' without a cutoff @k needs alpha > 0 (the endless "
                "ideal-ideal list of alpha = 0 has an infinite sum)"
            )
            raise ValueError(msg)
        if kind == "reciprocal":
            return 1.0 if x == 0.0 else -math.log(alpha) / x
        k = 1 if x == 0.0 else max(1, math.ceil(1 + math.log(NRBP_PRECISION) / math.log(x)))
        if k > MAX_IDEAL_DEPTH:
            msg = (
                f"normalize='ideal_ideal' without a cutoff @k needs alpha >= "
                f"{-math.log(NRBP_PRECISION) / MAX_IDEAL_DEPTH:.1e}, got {alpha!r}; give a cutoff"
            )
            raise ValueError(msg)
    r = np.arange(1, k + 1, dtype=np.float64)
    disc = (
        1.0 / np.log2(r + 1.0)
        if kind == "log"
        else (1.0 / r if kind == "reciprocal" else beta ** (r - 1.0))
    )
    return math.fsum((x ** (r - 1.0) * disc).tolist())


def _gain_measure(
    f: Features,
    k: int | None,
    *,
    subtopics: str,
    rel: float,
    alpha: float,
    normalize: str,
    kind: Literal["log", "reciprocal", "geometric"],
    beta: float = 0.5,
    raw: pl.Expr | None = None,
) -> FramePlan:
    """alpha-nDCG, ERR-IA and NRBP: a discounted sum of novelty-discounted gains.

    ``raw`` is the value for ``normalize="raw"`` over ``__run`` (the sum) and ``__n``.
    """
    keys, item = f.keys, f.cols.item
    f.column(subtopics)
    position = pl.when(f.ret).then(f.o)
    term = pl.col(_G) * _discount(kind, beta)
    depth: int | None = k
    if normalize == "ideal" and k is None and kind == "geometric":
        depth = 1 if beta == 0 else max(1, math.ceil(math.log(NRBP_PRECISION) / math.log(beta)))
    label = f.label(item)
    whole = 1.0
    if normalize == "ideal_ideal" and kind != "geometric":
        whole = _ideal_ideal(kind, alpha, k, beta)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        pairs, bad = _pairs_of(f, rows, subtopics, rel, position)
        n = _n_subtopics(pairs, keys)
        run = _per_user(_novelty_of(f, rows, ("run", subtopics, rel), pairs, alpha), keys, k, term)
        parts = {"__run": run}
        if normalize == "ideal":
            box: list[int | None]
            ideal_rows, box = _shared(
                f,
                rows,
                ("ideal", subtopics, rel, alpha),
                lambda: (lambda b: (_ideal(pairs, keys, item, alpha, b), b))([depth]),
            )
            _deeper(box, depth)
            ranked = _novelty_of(f, rows, ("ideal", subtopics, rel), ideal_rows, alpha)
            ideal = _per_user(ranked, keys, k, term)
            parts["__ideal"] = ideal
            value = (
                pl.when(pl.col("__ideal") > 0)
                .then(pl.col("__run") / pl.col("__ideal"))
                .otherwise(0.0)
            )
        elif normalize == "ideal_ideal":
            if kind == "geometric":
                value = pl.col("__run") * (1.0 - (1.0 - alpha) * beta) / pl.col("__n")
            else:
                value = pl.col("__run") / (pl.col("__n") * whole)
        else:
            value = pl.col("__run") if raw is None else raw
        return _finish(_combine(n, parts, keys, value), bad, keys, subtopics, label)

    return FramePlan(build)


def _set_measure(
    f: Features,
    k: int | None,
    *,
    subtopics: str,
    rel: float,
    value_of: str,
) -> FramePlan:
    """S-recall, P-IA and MAP-IA: counts of relevant pairs, no greedy ideal."""
    keys, item = f.keys, f.cols.item
    f.column(subtopics)
    position = pl.when(f.ret).then(f.o)
    n_ret = f64(f.ret).sum()
    label = f.label(item)

    def build(rows: pl.LazyFrame) -> pl.LazyFrame:
        pairs, bad = _pairs_of(f, rows, subtopics, rel, position)
        n = _n_subtopics(pairs, keys)
        ranked = pairs.filter(pl.col(_POS).is_not_null())
        if k is not None:
            ranked = ranked.filter(pl.col(_POS) <= k)
        if value_of == "s_recall":
            run = ranked.group_by(keys).agg(f64(pl.col(_S).n_unique()).alias("__sum"))
            return _finish(
                _combine(n, {"__run": run}, keys, pl.col("__run") / pl.col("__n")),
                bad,
                keys,
                subtopics,
                label,
            )
        if value_of == "precision_ia":
            run = ranked.group_by(keys).agg(f64(pl.len()).alias("__sum"))
            if k is not None:
                size: pl.LazyFrame | None = None
                den = pl.col("__n") * float(k)
            else:
                size = rows.group_by(keys).agg(n_ret.alias("__sum"))
                den = pl.col("__n") * pl.col("__size")
            parts = {"__run": run} if size is None else {"__run": run, "__size": size}
            value = pl.when(den > 0).then(pl.col("__run") / den).otherwise(0.0)
            return _finish(_combine(n, parts, keys, value), bad, keys, subtopics, label)
        # map_ia: per subtopic, sum of precision at the ranks of its relevant items.
        per_s = pairs.group_by([*keys, _S]).agg(f64(pl.len()).alias("__nrel"))
        c = pl.col(_POS).rank("ordinal").over([*keys, _S])
        prec = ranked.with_columns((f64(c) / f64(pl.col(_POS))).alias("__p"))
        ap = (
            per_s.join(
                prec.group_by([*keys, _S]).agg(pl.col("__p").sum()),
                on=[*keys, _S],
                how="left",
                nulls_equal=True,
            )
            .group_by(keys)
            .agg((pl.col("__p").fill_null(0.0) / pl.col("__nrel")).sum().alias("__sum"))
        )
        value = pl.col("__run") / pl.col("__n")
        return _finish(_combine(n, {"__run": ap}, keys, value), bad, keys, subtopics, label)

    return FramePlan(build)


_COMMON = (
    " The subtopics column (List of Struct{subtopic, relevance}, default 'subtopics') "
    "holds each item's judgments; a pair counts when its relevance >= rel; N = the "
    "user's subtopics with a relevant judged item (ndeval's intent probabilities 1/N). "
    "Null when N = 0. Deterministic tie policies only."
)


@register(
    "alpha_ndcg",
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Novelty-discounted DCG over subtopics (Clarke et al. 2008), normalised.",
    definition=(
        "sum_{r<=k} g(r) / log2(r + 1), g(r) = sum_s J(r, s) (1 - alpha)^c(s, r), c the "
        "items relevant to s above rank r; divided by the same sum of the greedy ideal "
        "ranking (normalize=ideal: ndeval alpha-nDCG@k; ties in the greedy go to the "
        "larger item id), by sum_{r<=k} N (1 - alpha)^(r-1) / log2(r + 1) "
        "(normalize=ideal_ideal: ndeval alpha-DCG@k) or raw (normalize=raw)." + _COMMON
    ),
)
def _alpha_ndcg(
    f: Features,
    k: int | None,
    *,
    alpha: Alpha = 0.5,
    normalize: Normalize = "ideal",
    rel: Rel = 1.0,
    subtopics: Subtopics = "subtopics",
) -> FramePlan:
    return _gain_measure(
        f, k, subtopics=subtopics, rel=rel, alpha=alpha, normalize=normalize, kind="log"
    )


@register(
    "err_ia",
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Intent-aware expected reciprocal rank (Chapelle et al. 2011), as ndeval.",
    definition=(
        "sum_{r<=k} g(r) / r with g as in alpha_ndcg (alpha: the stop probability of a "
        "relevant item), divided by sum_{r<=k} N (1 - alpha)^(r-1) / r (normalize="
        "ideal_ideal: ndeval ERR-IA@k), by the same sum of the greedy ideal ranking "
        "(normalize=ideal: ndeval nERR-IA@k), or alpha / N times it (normalize=raw: "
        "the mean over the N intents of ERR with stop probability alpha)." + _COMMON
    ),
)
def _err_ia(
    f: Features,
    k: int | None,
    *,
    alpha: Alpha = 0.5,
    normalize: Normalize = "ideal_ideal",
    rel: Rel = 1.0,
    subtopics: Subtopics = "subtopics",
) -> FramePlan:
    raw = pl.col("__run") * alpha / pl.col("__n")
    return _gain_measure(
        f,
        k,
        subtopics=subtopics,
        rel=rel,
        alpha=alpha,
        normalize=normalize,
        kind="reciprocal",
        raw=raw,
    )


@register(
    "nrbp",
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Novelty- and rank-biased precision (Clarke et al. 2009), as ndeval.",
    definition=(
        "(1 - (1 - alpha) beta) / N * sum_r beta^(r-1) g(r) with g as in alpha_ndcg, "
        "over the whole list or its top k (normalize=ideal_ideal: ndeval NRBP); divided "
        "by the same sum of the greedy ideal ranking (normalize=ideal: ndeval nNRBP; the "
        "ideal is built until beta^(r-1) < 1e-17), or the sum itself (normalize=raw)." + _COMMON
    ),
)
def _nrbp(
    f: Features,
    k: int | None,
    *,
    alpha: Alpha = 0.5,
    beta: Beta = 0.5,
    normalize: Normalize = "ideal_ideal",
    rel: Rel = 1.0,
    subtopics: Subtopics = "subtopics",
) -> FramePlan:
    return _gain_measure(
        f,
        k,
        subtopics=subtopics,
        rel=rel,
        alpha=alpha,
        normalize=normalize,
        kind="geometric",
        beta=beta,
    )


@register(
    "s_recall",
    aliases=("strec", "subtopic_recall"),
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Subtopic recall: share of the subtopics covered by the top k (Zhai et al. 2003).",
    definition=("#subtopics with a relevant item in the top k / N (ndeval strec@k)." + _COMMON),
)
def _s_recall(
    f: Features, k: int | None, *, rel: Rel = 1.0, subtopics: Subtopics = "subtopics"
) -> FramePlan:
    return _set_measure(f, k, subtopics=subtopics, rel=rel, value_of="s_recall")


@register(
    "precision_ia",
    aliases=("p_ia",),
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Intent-aware precision (Agrawal et al. 2009), as ndeval's P-IA@k.",
    definition=(
        "#relevant (item, subtopic) pairs in the top k / (k N), a list shorter than k "
        "padded with non-relevant items (ndeval P-IA@k); without @k / (#recommended N)." + _COMMON
    ),
)
def _precision_ia(
    f: Features, k: int | None, *, rel: Rel = 1.0, subtopics: Subtopics = "subtopics"
) -> FramePlan:
    return _set_measure(f, k, subtopics=subtopics, rel=rel, value_of="precision_ia")


@register(
    "map_ia",
    defined="truth",
    family="intent",
    ties_require=("deterministic",),
    summary="Intent-aware mean average precision, as ndeval's MAP-IA.",
    definition=(
        "mean over the N subtopics of AP_s = sum over the ranks r <= k of the items "
        "relevant to s of (#items relevant to s in ranks 1..r) / r, divided by the "
        "#judged items relevant to s (ndeval MAP-IA, without @k)." + _COMMON
    ),
)
def _map_ia(
    f: Features, k: int | None, *, rel: Rel = 1.0, subtopics: Subtopics = "subtopics"
) -> FramePlan:
    return _set_measure(f, k, subtopics=subtopics, rel=rel, value_of="map_ia")

"""Reproducibility and replicability (Breuer et al., SIGIR 2020), as repro_eval computes them.

An experiment is *reproduced* when it is run again on the same test collection (the
same topics and qrels) and *replicated* when it is run on another one. Breuer, Ferro,
Fuhr, Maistro, Sakai, Schaer and Soboroff ("How to Measure the Reproducibility of
System-oriented IR Experiments", SIGIR 2020) measure how close a reproduction comes at
three levels, and the ``repro_eval`` package implements them; the definitions here are
that package's (its ``RpdEvaluator`` and ``RplEvaluator``), checked against it to 1e-9:

* the order of the documents (reproducibility only): Kendall's tau Union (KTU) and
  rank-biased overlap (RBO) between the original and the reproduced ranking of each
  topic (:func:`reproducibility`);
* the effectiveness per topic: the root mean square error (RMSE) between the original
  and reproduced per-topic scores of a metric and its normalised form (nRMSE), and the
  paired t-test between them; for a replication (other topics) only the unpaired
  t-test (:func:`replicability`);
* the overall effect of an advanced run over a baseline: the effect ratio (ER, the
  reproduced mean improvement over the original one) and the delta relative
  improvement (DeltaRI, the original relative improvement minus the reproduced one).

Where repro_eval's code and its paper or docstrings part ways, the code is followed
(the numbers are compared with it); the guide page lists each place.

This module holds the two functions, their result types and the reading of the runs;
each level is a module of its own: :mod:`~polars_rankeval.analysis.reproducibility_ordering`,
:mod:`~polars_rankeval.analysis.reproducibility_effectiveness` and
:mod:`~polars_rankeval.analysis.reproducibility_effects`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

import polars as pl

from polars_rankeval._utils.constraints import (
    COLUMN,
    Integer,
    Number,
    Spec,
    Unchecked,
    validate_params,
)
from polars_rankeval._utils.types import integer, type_label
from polars_rankeval.analysis.rank_similarity import _check, _ranked
from polars_rankeval.analysis.reproducibility_effectiveness import (
    _effectiveness_rpd,
    _effectiveness_rpl,
    _scores,
)
from polars_rankeval.analysis.reproducibility_effects import _effects
from polars_rankeval.analysis.reproducibility_ordering import ORDERING_COLUMNS, _ordering
from polars_rankeval.metrics.defaults import REPRODUCIBILITY
from polars_rankeval.metrics.grammar import METRICS, MetricsArg
from polars_rankeval.metrics.params import Interval

__all__ = [
    "Replicability",
    "Reproducibility",
    "replicability",
    "reproducibility",
]

RunArg = pl.DataFrame | pl.LazyFrame
"""A run: a frame of (user, item, score) rows (``prk.trec.scan_run`` reads a TREC file)."""

DEFAULT_METRICS: tuple[str, ...] = REPRODUCIBILITY
_RUNS = ("advanced", "baseline")


class Reproducibility(NamedTuple):
    """The frames of :func:`reproducibility`.

    Attributes
    ----------
    ordering
        One row per run pair (``run``: ``"advanced"``, then ``"baseline"`` when the
        baseline pair is given): the mean KTU and RBO over the topics both runs rank
        (``n_topics``; ``n_topics(ktu)`` of them with a defined KTU) and the topics
        found in one run only.
    ordering_per_topic
        One row per (run, topic) ranked by both runs: the list lengths compared
        (``n_original``, ``n_reproduced``, after ``depth``), ``ktu`` and ``rbo``.
    effectiveness
        One row per (run, metric): the means of the original and reproduced per-topic
        scores, ``rmse``, ``nrmse``, the paired t-test's ``p_value``, ``n_topics``
        (with a value for both runs) and of them those each run does not rank
        (``n_unranked_original``, ``n_unranked_reproduced``: scored as empty rankings).
    effects
        One row per metric: the mean improvements of the advanced run over the
        baseline, ``er``, the relative improvements and ``delta_ri``; ``None`` without
        the baseline pair.
    """

    ordering: pl.DataFrame
    ordering_per_topic: pl.DataFrame
    effectiveness: pl.DataFrame
    effects: pl.DataFrame | None


class Replicability(NamedTuple):
    """The frames of :func:`replicability`.

    Attributes
    ----------
    effectiveness
        One row per (run, metric): the mean scores over the original and the
        replicated topics, the unpaired t-test's ``p_value``, both topic counts and
        the topics each run does not rank (``n_unranked_*``).
    effects
        As :attr:`Reproducibility.effects` (``*_replicated`` for ``*_reproduced``);
        ``None`` without the baseline pair.
    """

    effectiveness: pl.DataFrame
    effects: pl.DataFrame | None


_RUN = Unchecked("a polars DataFrame or LazyFrame (a path gets a pointer to prk.trec)")

_RUN_OPTIONS: dict[str, Spec] = {
    "metrics": METRICS,
    "depth": [Integer(Interval(1, None)), None],
    "user": COLUMN,
    "item": COLUMN,
    "score": COLUMN,
    "relevance": COLUMN,
}


def _frame(value: Any, name: str, columns: dict[str, str]) -> pl.LazyFrame:
    """The frame's ``columns`` (caller's name -> ours), lazily."""
    if isinstance(value, str | os.PathLike):
        reader = "scan_qrels" if "relevance" in columns.values() else "scan_run"
        msg = (
            f"{name} must be a polars DataFrame or LazyFrame, got a path ({str(value)!r}); "
            f"read a TREC file lazily with prk.trec.{reader}(path)"
        )
        raise TypeError(msg)
    if not isinstance(value, pl.DataFrame | pl.LazyFrame):
        msg = f"{name} must be a polars DataFrame or LazyFrame, got {type_label(value)}"
        raise TypeError(msg)
    lf = value.lazy()
    names = lf.collect_schema().names()
    for column in columns:
        if column not in names:
            msg = f"{name} has no column {column!r}; its columns: {', '.join(names)}"
            raise ValueError(msg)
    return lf.select(pl.col(theirs).alias(ours) for theirs, ours in columns.items())


def _pairs(
    pairs: Mapping[str, tuple[Any, Any]], names: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[Any, Any]]:
    """The run pairs given: the advanced pair always, the baseline pair only whole."""
    out = {"advanced": pairs["advanced"]}
    first, second = pairs["baseline"]
    if (first is None) != (second is None):
        given, missing = names["baseline"] if second is None else names["baseline"][::-1]
        msg = f"{given} is given but {missing} is not; pass both (for ER and DeltaRI) or neither"
        raise ValueError(msg)
    if first is not None:
        out["baseline"] = pairs["baseline"]
    return out


def _name(run: str, side: str) -> str:
    """The argument that holds a run: ``original``, ``baseline_reproduced`` ..."""
    return side if run == "advanced" else f"baseline_{side}"


def _check_options(depth: int | None, rbo_p: float | None, rbo_depth: int | None) -> None:
    if depth is not None and integer("depth", depth) < 1:
        msg = f"depth must be an integer >= 1 or None, got {depth!r}"
        raise ValueError(msg)
    if rbo_depth is not None and integer("rbo_depth", rbo_depth) < 1:
        msg = f"rbo_depth must be an integer >= 1, got {rbo_depth!r}"
        raise ValueError(msg)
    if rbo_p is not None:
        if isinstance(rbo_p, bool) or not isinstance(rbo_p, int | float):
            msg = f"rbo_p must be a float in (0, 1), got {type(rbo_p).__name__} {rbo_p!r}"
            raise TypeError(msg)
        if not 0.0 < rbo_p < 1.0:
            msg = f"rbo_p must be in (0, 1), got {rbo_p!r}"
            raise ValueError(msg)


def _rank(
    runs: dict[tuple[str, str], pl.LazyFrame], depth: int | None
) -> tuple[dict[tuple[str, str], pl.LazyFrame], dict[tuple[str, str], pl.Series]]:
    """Each run's ranking ``__prk_user, item, pos`` (score desc, then item id desc), cut at depth.

    The positions are :func:`polars_rankeval.analysis.rank_similarity`'s (trec_eval's
    order); duplicated (topic, document) rows are an error. The inputs are read once:
    the rankings and the checks of all runs are collected together, and every measure
    reads the rankings (as large as the runs cut at ``depth``) from memory. Also
    returns the topics each run ranks.
    """
    ranked, checks, names = [], [], []
    for key, lf in runs.items():
        name = f"{key[1]} run ({key[0]})"
        out, check = _ranked(
            lf,
            name,
            user="user",
            item="item",
            score="score",
            rank=None,
            ties="item_desc",
            absolute=False,
        )
        if depth is not None:
            out = out.filter(pl.col("pos") <= depth)
        ranked.append(out.select("__prk_user", "item", pl.col("pos").cast(pl.Int32)))
        checks.append(check)
        names.append(name)
    frames = pl.collect_all([*checks, *ranked])
    for seen, name in zip(frames[: len(checks)], names, strict=True):
        _check(seen.row(0, named=True), name, "score")
    collected = dict(zip(runs, frames[len(checks) :], strict=True))
    topics = {key: frame.get_column("__prk_user").unique() for key, frame in collected.items()}
    return {key: frame.lazy() for key, frame in collected.items()}, topics


@validate_params(
    {
        "original": _RUN,
        "reproduced": _RUN,
        "qrels": _RUN,
        "baseline_original": _RUN,
        "baseline_reproduced": _RUN,
        "rbo_p": Number(Interval(0, 1, closed="neither")),
        "rbo_depth": Integer(Interval(1, None)),
        **_RUN_OPTIONS,
    }
)
def reproducibility(
    original: RunArg,
    reproduced: RunArg,
    *,
    qrels: Any,
    baseline_original: RunArg | None = None,
    baseline_reproduced: RunArg | None = None,
    metrics: MetricsArg = DEFAULT_METRICS,
    depth: int | None = 1000,
    rbo_p: float = 0.95,
    rbo_depth: int = 1000,
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
    **evaluate_options: Any,
) -> Reproducibility:
    """How closely a reproduction (same topics, same qrels) matches the original runs.

    The measures of Breuer et al. (SIGIR 2020) as the ``repro_eval`` package computes
    them (its ``RpdEvaluator`` after ``trim()`` and ``evaluate()``):

    * ordering of the documents, per topic ranked by both runs: Kendall's tau Union
      (``ktu``: repro_eval's position-wise Kendall's tau, see below) and rank-biased
      overlap (``rbo``, to ``rbo_depth`` with persistence ``rbo_p``, normalised by the
      weights to that depth: no extrapolation), and their means over the topics;
    * effectiveness, per metric over the topics (below): the RMSE of the per-topic
      scores, the nRMSE (the RMSE over its largest value given the
      original scores, ``sqrt(mean(max(x, 1 - x)^2))``: scores in [0, 1]) and the
      two-sided paired t-test (:func:`scipy.stats.ttest_rel`);
    * with the baseline pair, the effect of the advanced run (``original``) over the
      baseline: ER (reproduced mean improvement / original mean improvement) and
      DeltaRI (original relative improvement - reproduced one).

    Each run is ranked by score descending, then document id descending (trec_eval's
    order, and repro_eval's for a run file listed by descending score), and cut to its
    top ``depth`` (repro_eval's ``trim``) before anything is measured. The metrics are
    :func:`polars_rankeval.evaluate`'s per topic, with trec_eval's rules by default
    (``ties="item_desc"``, ``users="both"``, ``empty="zero"``): ``map``, ``ndcg@10``,
    ``precision@10`` ... give trec_eval's ``map``, ``ndcg_cut_10``, ``P_10``;
    ``conventions="trec_eval"`` takes trec_eval's names (``P_10``) instead. All runs
    are scored on the same topics, as ``compare`` scores systems: the judged topics
    that any of the runs ranks; a run that does not rank one of them scores it as an
    empty ranking (0 for trec_eval's measures, as ``trec_eval -c``; repro_eval fails
    there), counted in ``n_unranked_*``. The document ordering compares the topics
    both runs of a pair rank.

    KTU: repro_eval pairs the lists by position and replaces each document by its
    index in the sorted union of the two lists; Kendall's tau of the two index
    sequences is then Kendall's tau between the document ids found at each rank, so it
    changes when documents are renamed. Lists of different lengths are compared over
    the shorter length (repro_eval raises there); a topic with fewer than 2 documents
    has no KTU (null, left out of the mean).

    Parameters
    ----------
    original, reproduced
        The original and the reproduced (advanced) run: frames of ``user, item,
        score`` (DataFrame or LazyFrame; ``prk.trec.scan_run(path)`` reads a TREC
        run lazily).
    qrels
        The relevance judgments: a frame of ``user, item, relevance``
        (``prk.trec.scan_qrels(path)``).
    baseline_original, baseline_reproduced
        The baseline pair, both or neither: adds its ordering and effectiveness rows
        (``run="baseline"``) and the ``effects`` frame.
    metrics
        Per-topic metrics (``evaluate``'s names).
    depth
        The top documents kept of each run per topic (``None``: all).
    rbo_p, rbo_depth
        RBO's persistence and the depth it sums to.
    user, item, score, relevance
        Column names of the frames (``prk.trec``'s readers give these).
    **evaluate_options
        Passed to :func:`polars_rankeval.evaluate` (``ties``, ``users``, ``empty``,
        ``conventions`` ...).

    Returns
    -------
    Reproducibility
        ``ordering``, ``ordering_per_topic``, ``effectiveness`` and ``effects`` (see
        :class:`Reproducibility`); the topic column is named ``user``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> qrels = pl.DataFrame({"user": ["q1"] * 3, "item": ["a", "b", "c"], "relevance": [1, 0, 1]})
    >>> orig = pl.DataFrame({"user": ["q1"] * 4, "item": list("abcd"), "score": [4.0, 3, 2, 1]})
    >>> rep = pl.DataFrame({"user": ["q1"] * 4, "item": list("bacd"), "score": [4.0, 3, 2, 1]})
    >>> out = prk.reproducibility(orig, rep, qrels=qrels, metrics=["precision@2"])
    >>> out.ordering_per_topic["ktu"].item()  # one discordant pair of six: 1 - 4 * 1 / 12
    0.6666666666666667
    """
    _check_options(depth, rbo_p, rbo_depth)
    pairs = _pairs(
        {"advanced": (original, reproduced), "baseline": (baseline_original, baseline_reproduced)},
        {"baseline": ("baseline_original", "baseline_reproduced")},
    )
    run_columns = {user: "user", item: "item", score: "score"}
    runs = {
        (run, side): _frame(value, _name(run, side), run_columns)
        for run, pair in pairs.items()
        for side, value in zip(("original", "reproduced"), pair, strict=True)
    }
    judged = _frame(qrels, "qrels", {user: "user", item: "item", relevance: "relevance"})
    ranked, topics = _rank(runs, depth)
    scores, names = _scores(
        [[(f"{run}/{side}", lf, judged) for (run, side), lf in ranked.items()]],
        metrics,
        evaluate_options,
    )
    ordering_rows, per_topic = [], []
    for run in pairs:
        per, counts = _ordering(
            ranked[(run, "original")], ranked[(run, "reproduced")], rbo_p, rbo_depth
        )
        per_topic.append(per.select(pl.lit(run).alias("run"), pl.all()))
        ordering_rows.append(
            {
                "run": run,
                "ktu": per["ktu"].mean(),
                "rbo": per["rbo"].mean(),
                "n_topics": per.height,
                "n_topics(ktu)": per["ktu"].count(),
                "n_topics_only_original": counts["only_original"],
                "n_topics_only_reproduced": counts["only_reproduced"],
            }
        )
    schema = dict.fromkeys(ORDERING_COLUMNS, pl.Int64) | {
        "run": pl.String,
        "ktu": pl.Float64,
        "rbo": pl.Float64,
    }
    ordering = pl.DataFrame(ordering_rows, schema=schema)
    ordering_per_topic = pl.concat(per_topic).rename({"__prk_user": user})
    effectiveness = _effectiveness_rpd(scores, names, list(pairs), topics)
    effects = _effects(scores, names, "reproduced") if "baseline" in pairs else None
    return Reproducibility(ordering, ordering_per_topic, effectiveness, effects)


@validate_params(
    {
        "original": _RUN,
        "replicated": _RUN,
        "qrels_original": _RUN,
        "qrels_replicated": _RUN,
        "baseline_original": _RUN,
        "baseline_replicated": _RUN,
        **_RUN_OPTIONS,
    }
)
def replicability(
    original: RunArg,
    replicated: RunArg,
    *,
    qrels_original: Any,
    qrels_replicated: Any,
    baseline_original: RunArg | None = None,
    baseline_replicated: RunArg | None = None,
    metrics: MetricsArg = DEFAULT_METRICS,
    depth: int | None = 1000,
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str = "relevance",
    **evaluate_options: Any,
) -> Replicability:
    """How closely a replication (other topics and qrels) matches the original runs.

    The replicability measures of Breuer et al. (SIGIR 2020) as the ``repro_eval``
    package computes them (its ``RplEvaluator``): the topics differ, so the documents'
    order and the per-topic errors are not compared; per metric, the two-sided
    unpaired t-test between the original and the replicated per-topic scores
    (:func:`scipy.stats.ttest_ind`, equal variances: Student's test) and, with the
    baseline pair, ER and DeltaRI (as in :func:`reproducibility`). The runs are ranked,
    cut to ``depth`` and evaluated as there: the original runs against
    ``qrels_original`` and the replicated ones against ``qrels_replicated``, one plan
    per collection (the two may use the same topic ids), each on the judged topics
    that either of its runs ranks.

    Parameters
    ----------
    original, replicated
        The original and the replicated (advanced) run: frames of ``user, item,
        score``.
    qrels_original, qrels_replicated
        The judgments of each collection: frames of ``user, item, relevance``.
    baseline_original, baseline_replicated
        The baseline pair, both or neither (adds ``run="baseline"`` rows and the
        ``effects`` frame).
    metrics, depth, user, item, score, relevance, **evaluate_options
        As for :func:`reproducibility`.

    Returns
    -------
    Replicability
        ``effectiveness`` and ``effects`` (see :class:`Replicability`).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankeval as prk
    >>> q1 = pl.DataFrame({"user": ["q1", "q2"], "item": ["a", "a"], "relevance": [1, 1]})
    >>> q2 = pl.DataFrame({"user": ["r1", "r2"], "item": ["x", "x"], "relevance": [1, 1]})
    >>> run1 = pl.DataFrame({"user": ["q1", "q2"], "item": ["a", "b"], "score": [1.0, 1.0]})
    >>> run2 = pl.DataFrame({"user": ["r1", "r2"], "item": ["x", "x"], "score": [1.0, 1.0]})
    >>> out = prk.replicability(run1, run2, qrels_original=q1, qrels_replicated=q2,
    ...                         metrics=["precision@1"])
    >>> out.effectiveness.select("mean_original", "mean_replicated").row(0)
    (0.5, 1.0)
    """
    _check_options(depth, None, None)
    pairs = _pairs(
        {"advanced": (original, replicated), "baseline": (baseline_original, baseline_replicated)},
        {"baseline": ("baseline_original", "baseline_replicated")},
    )
    run_columns = {user: "user", item: "item", score: "score"}
    runs = {
        (run, side): _frame(value, _name(run, side), run_columns)
        for run, pair in pairs.items()
        for side, value in zip(("original", "replicated"), pair, strict=True)
    }
    qrels_columns = {user: "user", item: "item", relevance: "relevance"}
    judged = {
        "original": _frame(qrels_original, "qrels_original", qrels_columns),
        "replicated": _frame(qrels_replicated, "qrels_replicated", qrels_columns),
    }
    ranked, topics = _rank(runs, depth)
    # One plan per collection: the topic ids of the two need not be distinct.
    scores, names = _scores(
        [
            [(f"{run}/{side}", lf, judged[side]) for (run, s), lf in ranked.items() if s == side]
            for side in ("original", "replicated")
        ],
        metrics,
        evaluate_options,
    )
    effectiveness = _effectiveness_rpl(scores, names, list(pairs), topics)
    effects = _effects(scores, names, "replicated") if "baseline" in pairs else None
    return Replicability(effectiveness, effects)

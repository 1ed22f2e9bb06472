"""The one metric-name grammar: ``name[(key=value,...)][@k]``.

For example ``ndcg@10``, ``precision(rel=2)@5`` or
``ndcg(discount=log_clipped,gain=exp)@10``. The canonical form sorts the parameters,
leaves defaults out, and names the output column; it round-trips through
:func:`parse_metric`.

Every per-user metric also takes ``aggregate=`` (``num_ret(aggregate=sum)``), the
aggregation over users, declared once for all of them in
:mod:`polars_rankeval.metrics.aggregate`; it is a field of
:class:`~polars_rankeval.metrics.spec.Metric`, not an option of the kernel.

The cutoff may also be a list or a range of cutoffs, ``ndcg@[1,5,10]``, ``ndcg@1..100``
or both (``ndcg@[1..10,20,50]``): :func:`expand_metric` turns it into one metric per
cutoff (canonical names ``ndcg@1``, ``ndcg@5``, ...), which ``evaluate`` computes in one
pass when the metric has a curve kernel (see
:class:`~polars_rankeval.metrics.spec.CurvePlan`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable
from typing import Any

import polars_rankeval.metrics.aggregate as _aggregate
from polars_rankeval._utils.constraints import Instance, Integer, ListOf, Text, validate_params
from polars_rankeval._utils.types import integer
from polars_rankeval.metrics.params import Interval, int_range
from polars_rankeval.metrics.registry import get_spec, known_names, unknown_message
from polars_rankeval.metrics.spec import Metric, MetricSpec

_PEERS = {
    "hr": "hit_rate",
    "hit": "hit_rate",
    "hits": "hit_rate",
    "hitrate": "hit_rate",
    "prec": "precision",
    "rec": "recall",
    "rr": "mrr",
    "reciprocal_rank": "mrr",
    "mean_reciprocal_rank": "mrr",
    "mean_average_precision": "map",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
}
"""Other tools' metric names (lowercase) for the suggestion of :func:`_suggest`."""

_SPELLED_CUTOFF = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*?)(?:_at_|_cut_|_cut\.|\.|_)(?P<k>\d+)$"
)
"""``ndcg_at_10``, ``ndcg_cut_10``, ``ndcg_cut.10``, ``P.5``, ``P_10``: a cutoff spelled
as other tools do."""


def _suggest(text: str) -> str | None:
    """The canonical name of an unknown metric ``text`` in another spelling, if any.

    Tries ``text`` in lowercase, its cutoff written as ``_at_k``, ``_cut_k``,
    ``_cut.k``, ``.k`` or ``_k`` (trec_eval, ranx, TorchMetrics-like names) moved to
    ``@k``, and peers' names (``HR`` for ``hit_rate``); then the closest registered
    name. The grammar itself stays strict: this only words the error.
    """
    stripped = text.strip()
    match = _GRAMMAR.match(stripped)
    if match is not None:
        name, params, k = match["name"], match["params"], match["k"]
    else:
        spelled = _SPELLED_CUTOFF.match(stripped)
        if spelled is None:
            return None
        name, params, k = spelled["name"], None, spelled["k"]
    spelled = _SPELLED_CUTOFF.match(name) if k is None else None
    if spelled is not None:
        name, k = spelled["name"], spelled["k"]
    candidates = [name, name.lower(), _PEERS.get(name.lower(), name)]
    candidates += difflib.get_close_matches(name, known_names(), n=1)
    tail = (f"({params})" if params is not None else "") + (f"@{k}" if k is not None else "")
    for candidate in candidates:
        try:
            metrics = _expand(candidate + tail)
        except (TypeError, ValueError):
            continue
        if len(metrics) == 1:
            return metrics[0].name
    return None


@validate_params(
    {"name": Text("a metric name (str)"), "k": [Integer(Interval(1, None)), None]}
)  # options: checked against the metric's own parameters
def bind(name: str, k: int | None = None, **options: Any) -> Metric:
    """Bind a metric name to a cutoff and options, checking them against its signature.

    The cutoff and integer options are Python or NumPy integers (not ``"10"``, nor
    ``10.0``: a ``TypeError``); :func:`parse_metric` reads them from text.
    """
    return _bind(name, k, options, text=False)


def _bind(name: str, k: int | None, options: dict[str, Any], *, text: bool) -> Metric:
    """:func:`bind`; ``text``: the options are the text of a metric name."""
    spec = get_spec(name)
    if k is not None:
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got k={k!r}"
            raise ValueError(msg)
        k = int_range(
            f"cutoff k of metric {spec.name!r}",
            integer(f"cutoff k of metric {spec.name!r}", k, what="a positive integer"),
        )
        if k <= 0:
            msg = f"cutoff k of metric {spec.name!r} must be a positive integer, got {k}"
            raise ValueError(msg)
    options = dict(options)
    aggregate = _aggregate.DEFAULT
    if _aggregate.OPTION in options and _aggregate.OPTION not in spec.params:
        aggregate = _aggregate.check(
            spec.name, spec.scope, spec.takes_k, options.pop(_aggregate.OPTION), k
        )
    for key in options:
        if key not in spec.params:
            extra = [_aggregate.OPTION] if spec.scope == "user" else []
            valid = ", ".join(sorted([*spec.params, *extra])) or "none"
            msg = f"unknown parameter {key!r} for metric {spec.name!r}; valid parameters: {valid}"
            raise ValueError(msg)
    values = {
        key: param.coerce(spec.name, options[key], text=text) if key in options else param.default
        for key, param in spec.params.items()
    }
    if spec.check is not None:
        spec.check(spec.name, values)
    return Metric(spec, k, tuple(sorted(values.items())), aggregate=aggregate)


_GRAMMAR = re.compile(
    r"""^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*
        (?:\((?P<params>[^()]*)\))?\s*
        (?:@\s*(?P<k>[^@]*?))?\s*$""",
    re.VERBOSE,
)
MAX_CUTOFFS = 10_000
"""The most cutoffs one list or range may name (``ndcg@1..10000``)."""


def parse_cutoffs(text: str, raw: str) -> tuple[int, ...] | int:
    """The cutoff part of a metric name: an int, or a tuple for a list or range.

    ``10`` gives 10; ``1..5`` gives (1, 2, 3, 4, 5) (both ends included);
    ``[1, 5, 10]`` gives (1, 5, 10), and list items may be ranges
    (``[1..3, 10]``). Every cutoff must be a positive integer, named once.
    """
    raw = raw.strip()
    is_list = raw.startswith("[") or raw.endswith("]")
    if is_list:
        if not (raw.startswith("[") and raw.endswith("]")):
            msg = f"cutoff list in {text!r} must look like [1,5,10], got {raw!r}"
            raise ValueError(msg)
        parts = [p.strip() for p in raw[1:-1].split(",")]
        if parts == [""]:
            msg = f"cutoff list in {text!r} is empty; name at least one cutoff, e.g. [1,5,10]"
            raise ValueError(msg)
    else:
        parts = [raw]
    out: list[int] = []
    for part in parts:
        low, dots, high = part.partition("..")
        ends = [low.strip(), high.strip()] if dots else [part]
        for end in ends:
            if not re.fullmatch(r"[+-]?\d+", end):
                what = "cutoff range" if dots else "cutoff"
                msg = f"{what} in {text!r} must be a positive integer, got {part!r}"
                if dots and not end:
                    msg = f"{what} in {text!r} must look like 1..100, got {part!r}"
                raise ValueError(msg)
        values = [int(e) for e in ends]
        if not is_list and not dots:
            return values[0]  # a single cutoff: bind checks it
        if any(v <= 0 for v in values):
            msg = f"cutoffs in {text!r} must be positive integers, got {part!r}"
            raise ValueError(msg)
        if dots:
            if values[1] < values[0]:
                msg = f"cutoff range {part!r} in {text!r} is empty (its end is below its start)"
                raise ValueError(msg)
            if values[1] - values[0] + 1 > MAX_CUTOFFS:
                msg = f"cutoff range {part!r} in {text!r} names more than {MAX_CUTOFFS} cutoffs"
                raise ValueError(msg)
            out.extend(range(values[0], values[1] + 1))
        else:
            out.append(values[0])
    seen: set[int] = set()
    twice = sorted({k for k in out if k in seen or seen.add(k)})  # type: ignore[func-returns-value]
    if twice:
        msg = f"cutoffs in {text!r} name {twice} more than once"
        raise ValueError(msg)
    if len(out) > MAX_CUTOFFS:
        msg = f"{text!r} names {len(out)} cutoffs, more than {MAX_CUTOFFS}"
        raise ValueError(msg)
    return tuple(out)


def _parse(text: str) -> tuple[MetricSpec, int | tuple[int, ...] | None, dict[str, str]]:
    if re.search(r"(?<=[\w)])\[[A-Za-z_]\w*\]\s*$", text):
        msg = (
            f"cannot parse metric {text!r}: a [library] suffix names a convention; pass "
            "the library's metric names with conventions='<library>' to evaluate or compare "
            "(see polars_rankeval.conventions)"
        )
        raise ValueError(msg)
    match = _GRAMMAR.match(text)
    if match is None:
        msg = (
            f"cannot parse metric {text!r}; expected name[(key=value,...)][@k], e.g. 'ndcg@10' "
            "(or a list or range of cutoffs: 'ndcg@[1,5,10]', 'ndcg@1..100')"
        )
        raise ValueError(msg)
    spec = get_spec(match["name"])
    k: int | tuple[int, ...] | None = None
    if match["k"] is not None:
        k = parse_cutoffs(text, match["k"])
    options: dict[str, str] = {}
    if match["params"] is not None and match["params"].strip():
        for part in match["params"].split(","):
            key, eq, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not eq or not key or not value:
                msg = f"parameter {part.strip()!r} in {text!r} must look like key=value"
                raise ValueError(msg)
            if key in options:
                msg = f"parameter {key!r} given twice in {text!r}"
                raise ValueError(msg)
            options[key] = value
    return spec, k, options


_TEXT = [Text("a metric name such as 'ndcg@10' (str)"), Instance(Metric, what="a Metric")]
"""``text=`` of :func:`parse_metric` and :func:`expand_metric`."""


@validate_params({"text": _TEXT})
def parse_metric(text: str | Metric) -> Metric:
    """Parse ``name[(key=value,...)][@k]`` into a bound :class:`Metric`.

    A list or range of cutoffs names several metrics: see :func:`expand_metric`
    (a one-element list such as ``ndcg@[10]`` is accepted here).

    Examples
    --------
    >>> from polars_rankeval import parse_metric
    >>> parse_metric("ndcg(gain=exp) @10").name
    'ndcg(gain=exp)@10'
    >>> parse_metric("precision(rel=2.0)@5").name
    'precision(rel=2)@5'
    >>> parse_metric("ndcg(base=2)@10").name
    'ndcg@10'
    """
    if isinstance(text, Metric):
        return text
    metrics = expand_metric(text)
    if len(metrics) != 1:
        msg = (
            f"{text!r} names {len(metrics)} metrics (one per cutoff); use expand_metric, "
            "or pass it to evaluate, which accepts lists and ranges of cutoffs"
        )
        raise ValueError(msg)
    return metrics[0]


@validate_params({"text": _TEXT})
def expand_metric(text: str | Metric) -> list[Metric]:
    """Parse a metric name whose cutoff may be a list or range: one metric per cutoff.

    ``ndcg@[1,5,10]`` and ``ndcg@1..100`` (both ends included; list items may be
    ranges, ``ndcg@[1..10,20]``) give ``ndcg@1``, ``ndcg@5``, ... in the order named.
    :func:`polars_rankeval.evaluate` computes the cutoffs of one such request in one
    pass when the metric has a curve kernel (precision, recall, f1, hit_rate, mrr, map,
    dcg, ndcg), and as separate metrics otherwise. A single cutoff gives one metric.

    Examples
    --------
    >>> from polars_rankeval.metrics.grammar import expand_metric
    >>> [m.name for m in expand_metric("ndcg(gain=exp)@[1,5,10]")]
    ['ndcg(gain=exp)@1', 'ndcg(gain=exp)@5', 'ndcg(gain=exp)@10']
    >>> [m.name for m in expand_metric("P@1..3")]
    ['precision@1', 'precision@2', 'precision@3']
    """
    if isinstance(text, Metric):
        return [text]
    try:
        return _expand(text)
    except ValueError as error:
        if not str(error).startswith(("unknown metric", "cannot parse metric")):
            raise
        better = _suggest(text)
        if better is None:
            raise
        raise ValueError(unknown_message(text, better)) from None


def _expand(text: str) -> list[Metric]:
    """:func:`expand_metric` of a string, without the suggestion of its error."""
    spec, k, options = _parse(text)
    if isinstance(k, tuple):
        if not spec.takes_k:
            msg = f"metric {spec.name!r} takes no cutoff @k, got cutoffs in {text!r}"
            raise ValueError(msg)
        first = _bind(spec.name, k[0], options, text=True)
        _bind(spec.name, max(k), options, text=True)  # the same checks for the largest cutoff
        return [dataclasses.replace(first, k=cut, cutoffs=k) for cut in k]
    return [_bind(spec.name, k, options, text=True)]


MetricsArg = str | Metric | Iterable[str | Metric]
"""One metric (a name or a bound Metric) or several."""

METRICS = [
    Text("a metric name (str)"),
    Instance(Metric, what="a Metric"),
    ListOf(Instance(str, Metric, what="a metric name or a Metric"), what="a list of metric names"),
]
"""``metrics=``: one name or a list (what each name says is checked by ``parse_metric``)."""


def parse_metrics(metrics: MetricsArg) -> list[Metric]:
    """Parse one metric or a list of metrics; reject empty lists and duplicates.

    A list or range of cutoffs (``ndcg@1..100``) gives one metric per cutoff.
    """
    items = [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    if not items:
        msg = "metrics must name at least one metric, e.g. ['ndcg@10', 'recall@20']"
        raise ValueError(msg)
    parsed = [metric for m in items for metric in expand_metric(m)]
    seen: set[str] = set()
    for metric in parsed:
        if metric.name in seen:
            msg = f"metric {metric.name!r} is requested twice"
            raise ValueError(msg)
        seen.add(metric.name)
    return parsed

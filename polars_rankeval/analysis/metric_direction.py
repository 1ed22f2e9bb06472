"""Which way is better for a metric column: the registry's declaration, by the column's name.

Separate from the tests because the report, the differences chart and the
metric-agreement analysis read a column's direction without running any test.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["metric_direction"]

_PRESET_NAME = re.compile(r"(?P<name>.+?)(?:@(?P<k>\d+))?\[(?P<preset>[^\[\]]+)\]")


def metric_direction(column: str) -> bool | None:
    """The declared direction of the metric a column is named after.

    ``True`` when a higher value is better, ``False`` when lower is better, ``None``
    when neither (counts such as ``num_ret``) or when ``column`` names no registered
    metric. Both the canonical names (``fallout@3``, ``ndcg(gain=exp)@10``) and the
    names of a library's preset (``RetrievalFallOut@3[torchmetrics]``, as
    ``conventions=`` names its columns) resolve to the registry's declaration.

    Examples
    --------
    >>> from polars_rankeval.analysis.metric_direction import metric_direction
    >>> metric_direction("ndcg@10"), metric_direction("RetrievalFallOut@3[torchmetrics]")
    (True, False)
    >>> metric_direction("num_ret@10") is None, metric_direction("latency") is None
    (True, True)
    """
    from polars_rankeval.metrics.grammar import parse_metric

    try:
        return parse_metric(column).spec.higher_is_better
    except (ValueError, TypeError):
        pass
    match = _PRESET_NAME.fullmatch(column)
    if match is None:
        return None
    from polars_rankeval.conventions.resolve import get_convention

    try:
        mapped = get_convention(match["preset"]).lookup(match["name"])
        if mapped.metric is None:
            return None
        k = f"@{match['k']}" if match["k"] is not None else ""
        return parse_metric(mapped.metric + k).spec.higher_is_better
    except (ValueError, TypeError):
        return None


def _directions(
    names: list[str], given: Mapping[str, bool | None] | None
) -> dict[str, bool | None]:
    """The direction of every metric column: ``given``, else :func:`metric_direction`."""
    given = {} if given is None else given
    if not isinstance(given, Mapping):
        msg = f"higher_is_better must be a dict of column -> bool or None, got {given!r}"
        raise TypeError(msg)
    unknown = sorted(str(c) for c in given if c not in names)
    if unknown:
        msg = (
            f"higher_is_better names column(s) {', '.join(map(repr, unknown))} that are "
            f"not compared; metric columns: {', '.join(sorted(names))}"
        )
        raise ValueError(msg)
    for column, value in given.items():
        if value is not None and not isinstance(value, bool):
            msg = f"higher_is_better[{column!r}] must be True, False or None, got {value!r}"
            raise TypeError(msg)
    return {name: given[name] if name in given else metric_direction(name) for name in names}

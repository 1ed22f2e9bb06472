"""Named presets that reproduce another library's numbers: ``conventions="rectools"``.

The same metric name means different numbers in different libraries (MAP@k's
denominator, nDCG's ideal list, what a user without relevant items scores, the tie
rule). A :class:`Convention` holds, for one library, which of its metric names maps to
which polars_rankeval metric with which options, and the tie rule, the empty-user rule
and the user set that library applies. Under a preset, metrics are named as the library
names them (``"map@10"``, ``"ndcg_burges@10"``, ``"AP@10"``), and the output columns say
which convention was used: ``map@10[rectools]``.

A library metric that polars_rankeval cannot reproduce faithfully is refused with the
reason (never a silently different number). Where a library's documentation and its
code disagree, the preset follows the code; every such case is listed in the preset's
``notes`` (README "Conventions of other libraries").

The mappings follow the code of the library versions named in :attr:`Convention.version`
and are tested against the values hard-coded in those libraries' own test suites
(``tests/conventions/test_conventions.py``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_rankeval._utils.constraints import Options, validate_params
from polars_rankeval.conventions.convention import HISTORY_USERS, Convention, Mapped
from polars_rankeval.conventions.presets import PRESETS
from polars_rankeval.metrics.grammar import expand_metric


def get_convention(name: str) -> Convention:
    """The preset called ``name``, or a ``ValueError`` listing them."""
    if not isinstance(name, str):
        msg = f"conventions must be a preset name (str), got {type(name).__name__}"
        raise TypeError(msg)
    if name not in PRESETS:
        msg = f"conventions must be one of {sorted(PRESETS)}, got {name!r}"
        raise ValueError(msg)
    return PRESETS[name]


@validate_params({"name": [Options(*PRESETS), None]})
def conventions(name: str | None = None) -> pl.DataFrame:
    """The metric mapping of a preset (or of every preset) as a table.

    One row per metric of the library: its name there, the polars_rankeval metric
    that reproduces it (null: not expressible, ``note`` says why), whether it takes
    a cutoff, the tie policy, empty-user rule and user set the library averages that
    metric over (``"history"``: the users of the training history, whose ids the call
    passes as ``users=``; RePlay's Novelty), and how
    it reads ``rank=`` values (``rank_positions``: ``"absolute"`` for RecTools), and
    the function that computes it (``entry``: ``evaluate``, or ``rank_similarity`` for
    a comparison of two recommendation tables such as RecTools' ``Intersection``).

    Examples
    --------
    >>> import polars_rankeval as prk
    >>> table = prk.conventions("rectools")
    >>> table.filter(table["library_metric"] == "MAP(divide_by_k=true)").row(0, named=True)[
    ...     "metric"
    ... ]
    'map(denominator=k)'
    >>> sorted(prk.conventions()["preset"].unique())[:3]
    ['cornac', 'elliot', 'hivemall']
    """
    chosen = [get_convention(name)] if name is not None else list(PRESETS.values())
    rows = [
        {
            "preset": c.name,
            "library_metric": m.name,
            "metric": m.metric,
            "cutoff": m.cutoff,
            "ties": m.ties or c.ties,
            "empty": c.empty,
            "users": m.users or c.users,
            "rank_positions": c.rank_positions,
            "entry": m.entry,
            "note": m.note,
        }
        for c in chosen
        for m in c.metrics
    ]
    return pl.DataFrame(rows)


_SUFFIX = re.compile(r"^(?P<body>.*?)\s*\[(?P<preset>[A-Za-z_][A-Za-z0-9_]*)\]\s*$")
_NAME = re.compile(r"^\s*(?P<name>[^@]+?)\s*(?:@\s*(?P<k>.+?))?\s*$")


def _library_name(text: object, preset: str, *, kind: str, example: str) -> re.Match[str]:
    """Parse a library metric name (``Name@k``, optionally suffixed ``[preset]``).

    ``kind`` ("metric" or "measure") and ``example`` word the errors.
    """
    if not isinstance(text, str):
        msg = f"a {kind} must be a string such as {example!r}, got {type(text).__name__}"
        raise TypeError(msg)
    body = text
    suffix = _SUFFIX.match(text)
    if suffix is not None:
        if suffix["preset"].strip() != preset:
            msg = (
                f"{kind} {text!r} names convention {suffix['preset'].strip()!r} "
                f"but conventions={preset!r}"
            )
            raise ValueError(msg)
        body = suffix["body"]
    match = _NAME.match(body)
    if match is None:  # pragma: no cover - the pattern accepts any non-empty text
        msg = f"cannot parse {kind} {text!r}"
        raise ValueError(msg)
    return match


@dataclass(frozen=True)
class Resolved:
    """Library metric names resolved under a preset: what to pass to ``evaluate``."""

    metrics: list[str]
    ties: str
    empty: str
    users: Any
    names: dict[str, str]
    """polars_rankeval canonical name -> displayed name (``map@10[rectools]``)."""


def resolve(
    preset: str,
    metrics: str | Sequence[str],
    *,
    ties: str | None = None,
    empty: str | None = None,
    users: Any = None,
) -> Resolved:
    """Translate library metric names under ``preset`` into polars_rankeval metrics.

    ``ties``, ``empty`` and ``users`` are the values the caller passed explicitly
    (``None``: take the preset's). A metric whose library rule needs another tie policy
    or user set than the call's is refused with the value to pass; left out, the user
    set is the one the requested metrics average over (refused when they differ).
    """
    convention = get_convention(preset)
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    if ties is not None and ties != convention.ties:
        needed = {t for m in convention.metrics for t in (m.ties, m.ties_at_k) if t}
        if ties not in needed:
            msg = (
                f"conventions={preset!r} sets ties={convention.ties!r} ({convention.ties_note}); "
                f"got ties={ties!r}"
            )
            raise ValueError(msg)
    if empty is not None and empty != convention.empty:
        msg = f"conventions={preset!r} sets empty={convention.empty!r}; got empty={empty!r}"
        raise ValueError(msg)
    call_ties = ties if ties is not None else convention.ties
    out: list[str] = []
    names: dict[str, str] = {}
    universes: dict[str, list[str]] = {}  # the user set of each requested metric
    for text in texts:
        match = _library_name(text, preset, kind="metric", example="map@10")
        for mapped, cut, options, label in _spelled(convention, match["name"], match["k"]):
            shown_text = text if label is None else label
            need_users = _check(convention, mapped, cut, shown_text, call_ties, users)
            universes.setdefault(need_users, []).append(shown_text)
            ours = _with_options(mapped.metric or "", options) + (f"@{cut}" if cut else "")
            for metric in expand_metric(ours):
                shown = label or mapped.name + (f"@{metric.k}" if metric.k is not None else "")
                if metric.name in names:
                    msg = (
                        f"conventions={preset!r}: {text!r} and another requested metric are "
                        f"both {metric.name!r} here; request it once"
                    )
                    raise ValueError(msg)
                names[metric.name] = f"{shown}[{preset}]"
            out.append(ours)
    chosen = users if users is not None else _universe(convention, universes)
    return Resolved(out, call_ties, convention.empty, chosen, names)


def _spelled(
    convention: Convention, name: str, cut: str | None
) -> list[tuple[Mapped, str | None, str, str | None]]:
    """The metrics ``name@cut`` stands for: (mapped, cutoff, options, printed label).

    A name without ``@`` may be the library's own spelling (trec_eval's ``P.5,10``):
    each of its metrics is then labelled as the library prints it.
    """
    spelled = convention.spelling(name) if convention.spelling and cut is None else None
    if spelled is None:
        return [(convention.lookup(name), cut, "", None)]
    return [
        (
            convention.lookup(s.name, text=name),
            None if s.cutoff is None else str(s.cutoff),
            s.options,
            s.label,
        )
        for s in spelled
    ]


def _with_options(metric: str, options: str) -> str:
    """``metric`` with ``options`` added to its own (``map(aggregate=gmean)``)."""
    if not options:
        return metric
    if metric.endswith(")"):
        return f"{metric[:-1]},{options})"
    return f"{metric}({options})"


def _check(
    convention: Convention,
    mapped: Mapped,
    cut: str | None,
    text: str,
    call_ties: str,
    users: Any,
) -> str:
    """Refuse ``mapped`` at ``cut`` in this call with the reason; return its user set."""
    preset, library = convention.name, convention.library
    if mapped.entry != "evaluate":
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} compares two "
            f"recommendation tables: prk.{mapped.entry}(reco, reference, [{text!r}], "
            f"conventions={preset!r})"
        )
        raise ValueError(msg)
    if mapped.metric is None:
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} cannot be reproduced: {mapped.note}"
        )
        raise ValueError(msg)
    if cut is None and mapped.cutoff == "required":
        msg = f"{library}'s {mapped.name} needs a cutoff, e.g. {mapped.name}@10"
        raise ValueError(msg)
    if cut is not None and mapped.cutoff == "none":
        msg = f"{library}'s {mapped.name} takes no cutoff, got {text!r}"
        raise ValueError(msg)
    need_ties = mapped.ties_at_k if cut is not None and mapped.ties_at_k else mapped.ties
    if need_ties is not None and need_ties != call_ties:
        msg = (
            f"conventions={preset!r}: {library}'s {text} needs "
            f"ties={need_ties!r} ({mapped.note or convention.ties_note}); "
            "evaluate it in a call of its own with that ties="
        )
        raise ValueError(msg)
    if need_ties is None and call_ties != convention.ties:
        msg = (
            f"conventions={preset!r}: {library}'s {text} uses "
            f"ties={convention.ties!r}, the call has ties={call_ties!r}; "
            "evaluate it in a separate call"
        )
        raise ValueError(msg)
    need_users = mapped.users or convention.users
    if need_users == HISTORY_USERS and (users is None or isinstance(users, str)):
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} averages over the users of "
            "train: pass users= their ids (users=train['user'].unique())"
            + ("" if users is None else f", got users={users!r}")
        )
        raise ValueError(msg)
    if need_users == HISTORY_USERS:
        return need_users
    if users is not None and not _same(users, need_users):
        msg = (
            f"conventions={preset!r}: {library}'s {mapped.name} averages over "
            f"users={need_users!r}, the call has users={users!r}; leave users= out or "
            f"pass users={need_users!r}"
        )
        raise ValueError(msg)
    return need_users


def _universe(convention: Convention, universes: dict[str, list[str]]) -> str:
    """The one user set of a call: the one every requested metric averages over.

    The library computes each metric over its own users (RecTools: MAP over the test
    users, MeanInvUserFreq over the users of the recommendations); one ``evaluate`` call
    has one user set, so metrics over different sets are refused together.
    """
    if len(universes) == 1:
        return next(iter(universes))
    if not universes:
        return convention.users
    parts = "; ".join(
        f"{', '.join(texts)} over users={universe!r}" for universe, texts in universes.items()
    )
    msg = (
        f"conventions={convention.name!r}: {convention.library} averages {parts}; one call "
        "evaluates one user set: evaluate each set in a call of its own"
    )
    raise ValueError(msg)


@dataclass(frozen=True)
class ResolvedPairs:
    """Library metric names resolved for ``rank_similarity`` under a preset."""

    metrics: list[str]
    ties: str
    users: str
    rank_positions: str
    names: dict[str, str]


_OPTIONS = re.compile(r"^\s*(?P<base>[^(]+?)\s*\((?P<options>[^)]*)\)\s*$")


def resolve_pairs(
    preset: str,
    metrics: str | Sequence[str],
    *,
    ties: str | None = None,
    users: str | None = None,
    rank: bool = False,
) -> ResolvedPairs:
    """Translate library metric names for ``rank_similarity`` under ``preset``.

    Only the library's metrics that compare two recommendation tables (``entry=
    "rank_similarity"``) are accepted; ``ties`` and ``users`` given explicitly must be
    the preset's. With explicit ranks (``rank``), they are read as the library reads
    them (``Convention.rank_positions``).
    """
    convention = get_convention(preset)
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    if ties is not None and ties != convention.ties:
        msg = f"conventions={preset!r} sets ties={convention.ties!r}; got ties={ties!r}"
        raise ValueError(msg)
    out: list[str] = []
    names: dict[str, str] = {}
    need_users: set[str] = set()
    for text in texts:
        match = _library_name(text, preset, kind="measure", example="Intersection@10")
        name, given = match["name"], ""
        try:
            mapped = convention.lookup(name)
        except ValueError:
            split = _OPTIONS.match(name)
            if split is None:
                raise
            mapped = convention.lookup(split["base"])
            given = split["options"].strip()
            allowed = {o.lower() for o in mapped.options}
            for pair in filter(None, (x.strip() for x in given.split(","))):
                option = pair.split("=", 1)[0].strip().lower()
                if option not in allowed:
                    msg = (
                        f"conventions={preset!r}: {convention.library}'s {mapped.name} takes "
                        f"{', '.join(mapped.options) or 'no option'} here, got {pair!r}"
                    )
                    raise ValueError(msg) from None
        if mapped.entry != "rank_similarity" or mapped.metric is None:
            msg = (
                f"conventions={preset!r}: {convention.library}'s {mapped.name} is not a "
                "comparison of two recommendation tables; evaluate it with "
                f"prk.evaluate(..., conventions={preset!r})"
            )
            raise ValueError(msg)
        cut = match["k"]
        if cut is None and mapped.cutoff == "required":
            msg = f"{convention.library}'s {mapped.name} needs a cutoff, e.g. {mapped.name}@10"
            raise ValueError(msg)
        ours = mapped.metric + (f"({given})" if given else "") + (f"@{cut}" if cut else "")
        for metric in expand_metric(ours):
            base = mapped.name + (f"({given})" if given else "")
            shown = base + (f"@{metric.k}" if metric.k is not None else "") + f"[{preset}]"
            if metric.name in names:
                msg = (
                    f"conventions={preset!r}: {text!r} and another requested measure are "
                    f"both {metric.name!r} here; request it once"
                )
                raise ValueError(msg)
            names[metric.name] = shown
        need_users.add(mapped.users or convention.users)
        out.append(ours)
    chosen = users if users is not None else (need_users.pop() if len(need_users) == 1 else None)
    if chosen is None or any(u != chosen for u in need_users):
        msg = (
            f"conventions={preset!r}: the measures compare users={sorted(need_users)}, "
            f"the call has users={users!r}; one call compares one user set"
        )
        raise ValueError(msg)
    positions = convention.rank_positions if rank else "relative"
    return ResolvedPairs(out, convention.ties, chosen, positions, names)


def rename(frame: Any, names: dict[str, str], *, long: bool) -> Any:
    """Rename the metric columns (and ``n_users(<metric>)`` etc.) to their shown names."""
    spark = not hasattr(frame, "collect_schema")  # a Spark DataFrame (engine="spark")
    columns = list(frame.columns) if spark else frame.collect_schema().names()
    mapping: dict[str, str] = {}
    for column in columns:
        new = column
        for ours, shown in names.items():
            if column == ours:
                new = shown
            elif column.endswith(f"({ours})"):
                new = column[: -len(ours) - 1] + shown + ")"
        if new != column:
            mapping[column] = new
    if spark:
        from pyspark.sql import functions as F  # noqa: N812

        out = frame.withColumnsRenamed(mapping)
        if long and "metric" in columns:
            table = F.create_map(*(F.lit(x) for pair in names.items() for x in pair))
            out = out.withColumn("metric", F.coalesce(table[F.col("metric")], F.col("metric")))
        return out
    out = frame.rename(mapping)
    if long and "metric" in columns:
        out = out.with_columns(pl.col("metric").replace(names))
    return out


RULES = ("ties", "empty", "users")
"""The arguments of ``evaluate`` that a preset sets when a call leaves them at their defaults."""


def _defaults(evaluate: Callable[..., Any]) -> dict[str, Any]:
    """The defaults of :data:`RULES`, read from ``evaluate``'s signature (declared there once)."""
    parameters = inspect.signature(evaluate).parameters
    return {key: parameters[key].default for key in RULES}


def under(
    preset: str,
    metrics: Any,
    rules: dict[str, Any],
    rank: str | None,
    evaluate: Callable[..., Any],
) -> tuple[list[str], dict[str, Any], bool, dict[str, str]]:
    """``evaluate``'s arguments under ``preset``, resolved once at the top of the call.

    ``rules``: the call's ``ties``, ``empty`` and ``users``; those left at
    ``evaluate``'s defaults take the preset's values. Returns the polars_rankeval
    metric names, the rules, whether ``rank=`` values are absolute positions (RecTools:
    gaps kept) and the canonical -> shown name mapping for :func:`rename`.
    """
    resolved = resolve(preset, metrics, **explicit_rules(rules, evaluate))
    rules = {"ties": resolved.ties, "empty": resolved.empty, "users": resolved.users}
    absolute = rank is not None and get_convention(preset).rank_positions == "absolute"
    return list(resolved.metrics), rules, absolute, resolved.names


def resolve_options(
    preset: str,
    metrics: str | Sequence[str],
    options: dict[str, Any],
    evaluate: Callable[..., Any],
) -> tuple[list[str], dict[str, str]]:
    """For ``compare``: resolve ``metrics`` and set ties/empty/users in ``options``.

    ``options`` are the arguments ``compare`` passes to ``evaluate``; those it leaves out
    are at ``evaluate``'s defaults. Returns the polars_rankeval metrics and the
    canonical -> shown name mapping.
    """
    given = {**_defaults(evaluate), **{k: v for k, v in options.items() if k in RULES}}
    resolved = resolve(preset, metrics, **explicit_rules(given, evaluate))
    options.update(ties=resolved.ties, empty=resolved.empty, users=resolved.users)
    if options.get("rank") is not None and get_convention(preset).rank_positions == "absolute":
        options["rank_positions"] = "absolute"
    return resolved.metrics, resolved.names


def explicit_rules(values: Mapping[str, Any], evaluate: Callable[..., Any]) -> dict[str, Any]:
    """The ``ties``, ``empty`` and ``users`` of ``values`` not at ``evaluate``'s defaults.

    A value left at its default is not given: the preset's rule applies. ``evaluate`` is
    passed in (this layer is below it) and its defaults are read from its signature.
    """
    return {
        key: values[key]
        for key, default in _defaults(evaluate).items()
        if not _same(values[key], default)
    }


def _same(value: Any, default: Any) -> bool:
    return isinstance(value, str) and value == default


def shown_names(preset: str, metrics: str | Sequence[str], **explicit: Any) -> list[str]:
    """The output names of ``metrics`` under ``preset``, in order (``map@10[rectools]``)."""
    resolved = resolve(preset, metrics, **explicit)
    return [resolved.names[m.name] for text in resolved.metrics for m in expand_metric(text)]

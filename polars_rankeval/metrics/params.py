"""A metric's options, read from its kernel's signature: :class:`Param` and :class:`Interval`.

A kernel's keyword-only arguments are the metric's options; their annotations give the
kind, the choices (``Literal``), the range (an :class:`Interval` in ``Annotated``) and
a one-line description (:func:`param_from`), and for an option naming a column of the
rows, how the kernel reads it (a :class:`ColumnOption`). :func:`format_value` writes an
option's value as the canonical metric name shows it.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from polars_rankeval._utils.types import integer

ParamKind = Literal["int", "float", "str", "bool"]
MAX_INT_OPTION = 2**32
"""Largest cutoff ``@k`` (and integer option): longer than any list Polars indexes."""
MAX_FLOAT_OPTION = 1e100
"""Largest magnitude of a float option: beyond it products and squares overflow."""


@dataclass(frozen=True)
class Interval:
    """The range of a numeric option, declared next to it in the kernel's signature.

    ``rel: Annotated[float, Interval(0, None, closed="neither"), "threshold"] = 1.0``;
    ``None`` is an open end. It renders its own text (``> 0``, ``in [0, 1]``) for the
    error, the docs and the listing, and :meth:`outside` gives values it rejects (the
    registry-driven tests try each of them on every metric).
    """

    low: float | None
    high: float | None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def __contains__(self, value: float) -> bool:
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        return not (
            self.high is not None and (value > self.high or (value == self.high and not right))
        )

    @property
    def text(self) -> str:
        """``> 0``, ``>= 0``, ``in [0, 1]``, ``in (0, 1)``, ..."""
        low, high = _num(self.low), _num(self.high)
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.high is None:
            return f"{'>=' if left else '>'} {low}"
        if self.low is None:
            return f"{'<=' if right else '<'} {high}"
        return f"in {'[' if left else '('}{low}, {high}{']' if right else ')'}"

    def outside(self) -> list[float]:
        """Values out of the range: at an open end and beyond each end."""
        out: list[float] = []
        if self.low is not None:
            out += [self.low - 1.0] + ([] if self.closed in ("both", "left") else [self.low])
        if self.high is not None:
            out += [self.high + 1.0] + ([] if self.closed in ("both", "right") else [self.high])
        return [float(v) for v in out]


Condition = tuple[tuple[str, tuple[Any, ...]], ...]
"""Option values: ``(("mode", ("base",)),)`` holds when option ``mode`` is ``"base"``."""


def holds(condition: Condition, options: dict[str, Any]) -> bool:
    """Whether every option of ``condition`` has one of its listed values."""
    return all(options.get(name) in values for name, values in condition)


@dataclass(frozen=True)
class ColumnOption:
    """The option names a column of the rows that the kernel reads (``Features.column``).

    Declared next to the option (``Annotated[str, ColumnOption(...), "doc"]``), so that
    ``evaluate`` knows the columns a request reads from the options alone: it keeps
    them in the plan and reports a missing one before the plan is built. ``None`` (an
    optional option) reads no column. ``when``: the column is read only under these
    option values (e.g. ``mode=base``). ``fallback``: under these option values a
    column missing from the data and ``items=`` is replaced by ``history=`` when it is
    given (the kernel then counts in the history and reads no column); ``hint`` ends
    the missing-column error in that case. ``table="items"``: the column comes from
    ``items=``, which the kernel checks itself (its own errors name the table).
    """

    when: Condition = ()
    fallback: Condition | None = None
    hint: str = ""
    table: Literal["rows", "items"] = "rows"


def _num(value: float | None) -> str:
    return "" if value is None else (str(int(value)) if float(value).is_integer() else str(value))


@dataclass(frozen=True)
class Param:
    """One keyword option of a metric, read from the kernel's signature.

    ``kind`` and ``choices`` come from the annotation (``Literal`` gives choices;
    ``X | None`` makes it ``optional``); an ``Annotated`` annotation may add an
    :class:`Interval`, a one-line description (a plain string) and, for an option
    naming a column the kernel reads, its :class:`ColumnOption`.
    """

    name: str
    default: Any
    kind: ParamKind
    choices: tuple[str, ...] | None = None
    optional: bool = False
    interval: Interval | None = None
    doc: str = ""
    column: ColumnOption | None = None

    @property
    def values(self) -> str:
        """The accepted values in words, for docs and listings."""
        if self.choices:
            text = " | ".join(self.choices)
        else:
            text = {"int": "an integer", "float": "a number", "bool": "true | false"}.get(
                self.kind, "a column name"
            )
            if self.interval is not None:
                text += f" {self.interval.text}"
        return text + (" (or none)" if self.optional and not self.choices else "")

    def coerce(self, metric: str, value: Any, *, text: bool = False) -> Any:
        """Check and convert a value for this option: a Python value, or grammar text.

        ``text``: ``value`` is the text of a metric name (``"3"`` in ``inst(depth=3)``);
        otherwise an integer option takes a Python or NumPy integer only
        (:func:`polars_rankeval._utils.types.integer`), never ``"3"`` nor ``3.0``.
        """
        where = f"parameter {self.name!r} of metric {metric!r}"
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            msg = f"{where} cannot be None"
            raise ValueError(msg)
        if self.choices is not None:
            if value not in self.choices:
                msg = f"{where} must be one of {sorted(self.choices)}, got {value!r}"
                raise ValueError(msg)
            return value
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            msg = f"{where} must be true or false, got {value!r}"
            raise TypeError(msg)
        if self.kind == "int":
            number = _text_int(where, value) if text else integer(where, value)
            return self._within(where, int_range(where, number))
        if self.kind == "float":
            try:
                out = float(value)
            except (TypeError, ValueError):
                msg = f"{where} must be a number, got {value!r}"
                raise TypeError(msg) from None
            if isinstance(value, bool) or not math.isfinite(out):
                msg = f"{where} must be a finite number, got {value!r}"
                raise ValueError(msg)
            if abs(out) > MAX_FLOAT_OPTION:
                msg = f"{where} must lie within +-{MAX_FLOAT_OPTION:g}, got {value!r}"
                raise ValueError(msg)
            return self._within(where, out)
        return str(value)

    def _within(self, where: str, value: float) -> Any:
        if self.interval is not None and value not in self.interval:
            msg = f"{where} must be {self.interval.text}, got {value!r}"
            raise ValueError(msg)
        return value


def _text_int(where: str, value: Any) -> int:
    """An integer option written in a metric name (``"3"``, ``"-2"``)."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value)
    msg = f"{where} must be an integer, got {value!r}"
    raise TypeError(msg)


def int_range(where: str, value: int) -> int:
    """``value``, or the error for an integer beyond +-2^32."""
    if abs(value) > MAX_INT_OPTION:
        msg = f"{where} must lie within +-2^32 = {MAX_INT_OPTION}, got {value!r}"
        raise ValueError(msg)
    return value


def format_value(value: Any) -> str:
    """An option's value as a metric name shows it (``rel=2``, ``gain=exp``, ``none``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        # Integers as such (rel=2), but 1e+100 rather than a 101-digit number.
        return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    return str(value)


def param_from(name: str, parameter: inspect.Parameter, hint: Any) -> Param:
    """The :class:`Param` of keyword argument ``parameter`` annotated ``hint``."""
    interval: Interval | None = None
    column: ColumnOption | None = None
    doc = ""
    if get_origin(hint) is Annotated:
        hint, *extras = get_args(hint)
        for extra in extras:  # nested Annotated aliases: the last declaration wins
            if isinstance(extra, Interval):
                interval = extra
            elif isinstance(extra, ColumnOption):
                column = extra
            elif isinstance(extra, str):
                doc = extra
    optional = False
    args = get_args(hint)
    if get_origin(hint) in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        optional = len(non_none) < len(args)
        hint = non_none[0] if len(non_none) == 1 else hint
        if get_origin(hint) is Annotated:  # Annotated[float, ...] | None
            return dataclasses.replace(param_from(name, parameter, hint), optional=optional)
    if get_origin(hint) is Literal:
        choices = tuple(get_args(hint))
        return Param(name, parameter.default, "str", choices, optional, None, doc, column)
    kind: ParamKind = {bool: "bool", int: "int", float: "float"}.get(hint, "str")  # type: ignore[assignment]
    return Param(name, parameter.default, kind, None, optional, interval, doc, column)

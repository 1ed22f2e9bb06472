"""The public functions' parameters, declared once: one constraint next to each.

``@validate_params({...})`` on a public function maps each of its parameters to what it
accepts, the way scikit-learn's ``validate_params`` does::

    @validate_params({
        "data": FRAME,
        "ties": Options.of(TiePolicy),
        "confidence": Number(Interval(0, 1, closed="neither")),
        "by": [COLUMNS, None],
    })
    def evaluate(data, *, ties="expected", confidence=0.95, by=None): ...

A list is a choice among alternatives (``None`` in it: ``None`` is accepted). Each
argument passed is checked at the call, before the body runs, and :func:`check` is the one
place that raises: a ``TypeError`` when no alternative accepts the *kind* of value (a
``str`` where a number is expected), else a ``ValueError`` (a number out of its range, a
name that is not one of the choices), whose message names the argument and the function
and lists the choices sorted::

    argument 'ties' of evaluate must be one of ['expected', 'item_asc', 'item_desc',
    'optimistic', 'pessimistic'], got 'x'

The declarations are read back (:func:`declared`) by the test that tries an invalid value
of every declared parameter of every public function and checks that the declarations
cover each signature. Ranges are the metrics' own
:class:`~polars_rankeval.metrics.params.Interval` (anything with ``in``, ``text`` and
``outside()``); this module sits below the metrics
so that cheap modules (the TREC readers) use it without importing them. Checks that
need the data (a column exists, ids have one dtype) stay in the functions.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, ClassVar, Literal, Protocol, TypeVar, Union, get_args, get_origin

import polars as pl

from polars_rankeval._utils.types import type_label

F = TypeVar("F", bound=Callable[..., Any])

Rejection = tuple[type[Exception], str]
"""Why a value is refused: the exception class and the text after ``got``."""


class Range(Protocol):
    """A numeric range (:class:`polars_rankeval.metrics.params.Interval`)."""

    def __contains__(self, value: float) -> bool: ...

    @property
    def text(self) -> str: ...

    def outside(self) -> list[float]: ...


def got(value: Any) -> str:
    """The value for a ``TypeError``: its type, then its ``repr`` (short) for builtins."""
    if value is None:
        return "None"
    label = type_label(value)
    if type(value).__module__ != "builtins":
        return label
    text = repr(value)
    return f"{label} {text if len(text) <= 60 else text[:57] + '...'}"


class Constraint:
    """What one parameter accepts; subclasses say how to check it and what it refuses."""

    text = "a value"
    """The accepted values in words, after ``must be``."""

    def describe(self) -> str:
        """The accepted values in words, for the error."""
        return self.text

    def reject(self, value: Any) -> Rejection | None:
        """``None`` when ``value`` is accepted, else why it is not."""
        raise NotImplementedError

    def invalid(self) -> list[Any]:
        """Values this constraint refuses (for the generated test)."""
        return []


class Options(Constraint):
    """One name among ``choices``; a ``str`` otherwise refused is a ``ValueError``.

    ``live``: a mapping whose keys are the choices at the time of the call (the tie
    policies, to which a new policy object may be added).
    """

    def __init__(self, *choices: str, live: Mapping[str, Any] | None = None) -> None:
        self._choices = tuple(sorted(choices))
        self._live = live

    @property
    def choices(self) -> tuple[str, ...]:
        """The accepted names, sorted."""
        return tuple(sorted(self._live)) if self._live is not None else self._choices

    def describe(self) -> str:
        """``one of [...]``, sorted (read at the call: the choices may be live)."""
        return f"one of {list(self.choices)}"

    @classmethod
    def of(cls, alias: Any) -> Options:
        """The choices of a ``Literal`` alias (``TiePolicy``), nested unions included."""
        return cls(*_literal_values(alias))

    def reject(self, value: Any) -> Rejection | None:
        if not isinstance(value, str):
            return TypeError, got(value)
        return None if value in self.choices else (ValueError, repr(value))

    def invalid(self) -> list[Any]:
        return ["not_a_choice", 42]


def _literal_values(alias: Any) -> list[str]:
    if get_origin(alias) is Literal:
        return [str(v) for v in get_args(alias)]
    if alias is type(None):
        return []
    if get_origin(alias) is Union or type(alias).__name__ == "UnionType":
        return [v for arg in get_args(alias) for v in _literal_values(arg)]
    msg = f"Options.of needs a Literal alias, got {alias!r}"
    raise TypeError(msg)


class Integer(Constraint):
    """A Python or NumPy integer (never a bool, a float or ``"5"``), in ``interval``."""

    def __init__(self, interval: Range | None = None) -> None:
        self.interval = interval
        self.text = "an integer" + (f" {interval.text}" if interval is not None else "")

    def reject(self, value: Any) -> Rejection | None:
        if isinstance(value, bool) or not isinstance(value, Integral):
            return TypeError, got(value)
        if self.interval is not None and int(value) not in self.interval:
            return ValueError, repr(value)
        return None

    def invalid(self) -> list[Any]:
        out: list[Any] = ["1", 1.5, True]
        if self.interval is not None:
            out += [int(v) for v in self.interval.outside() if float(v).is_integer()]
        return out


class Number(Constraint):
    """A finite real number (not a bool), in ``interval``."""

    def __init__(self, interval: Range | None = None) -> None:
        self.interval = interval
        self.text = "a number" + (f" {interval.text}" if interval is not None else "")

    def reject(self, value: Any) -> Rejection | None:
        if isinstance(value, bool) or not isinstance(value, Real):
            return TypeError, got(value)
        if not math.isfinite(float(value)) or (
            self.interval is not None and float(value) not in self.interval
        ):
            return ValueError, repr(value)
        return None

    def invalid(self) -> list[Any]:
        out: list[Any] = ["1", math.nan]
        return out + (self.interval.outside() if self.interval is not None else [])


class Flag(Constraint):
    """``True`` or ``False``."""

    text = "True or False"

    def reject(self, value: Any) -> Rejection | None:
        return None if isinstance(value, bool) else (TypeError, got(value))

    def invalid(self) -> list[Any]:
        return ["yes", 1]


class Text(Constraint):
    """Any ``str`` (a title, a tag); ``what`` names it."""

    def __init__(self, what: str = "a str") -> None:
        self.text = what

    def reject(self, value: Any) -> Rejection | None:
        return None if isinstance(value, str) else (TypeError, got(value))

    def invalid(self) -> list[Any]:
        return [42]


class Column(Constraint):
    """A column name: a non-empty ``str``."""

    text = "a column name (str)"

    def reject(self, value: Any) -> Rejection | None:
        if not isinstance(value, str):
            return TypeError, got(value)
        return None if value else (ValueError, "an empty string")

    def invalid(self) -> list[Any]:
        return [42, ""]


class Instance(Constraint):
    """An instance of one of ``types``, described as ``what``."""

    def __init__(self, *types: type, what: str) -> None:
        self.types = types
        self.text = what

    def reject(self, value: Any) -> Rejection | None:
        ok = isinstance(value, self.types) and not (
            isinstance(value, bool) and bool not in self.types
        )
        return None if ok else (TypeError, got(value))

    def invalid(self) -> list[Any]:
        return [object()]


class Frame(Constraint):
    """A table of one of ``libraries``.

    ``"polars"`` (DataFrame or LazyFrame), ``"pyarrow"`` (Table), ``"pandas"``
    (DataFrame), ``"pyspark"`` (Spark DataFrame). The libraries are told apart by the
    type's module, so none is imported to check.
    """

    _WORDS: ClassVar[dict[str, str]] = {
        "polars": "a polars DataFrame or LazyFrame",
        "pyarrow": "a pyarrow Table",
        "pandas": "a pandas DataFrame",
        "pyspark": "a Spark DataFrame",
    }

    def __init__(self, *libraries: str) -> None:
        self.libraries = libraries or ("polars", "pyarrow", "pandas")
        words = [self._WORDS[library] for library in self.libraries]
        self.text = ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]

    def reject(self, value: Any) -> Rejection | None:
        if isinstance(value, pl.DataFrame | pl.LazyFrame):
            return None if "polars" in self.libraries else (TypeError, type_label(value))
        module = type(value).__module__.split(".")[0]
        if module != "polars" and module in self.libraries:
            return None
        return TypeError, type_label(value)

    def invalid(self) -> list[Any]:
        return [[(1, 2)], 42]


class PathLike(Constraint):
    """A path: a ``str`` or an ``os.PathLike``."""

    text = "a path (str or os.PathLike)"

    def reject(self, value: Any) -> Rejection | None:
        return None if isinstance(value, str | os.PathLike) else (TypeError, got(value))

    def invalid(self) -> list[Any]:
        return [42]


class ListOf(Constraint):
    """A list or tuple (or another iterable that is not a ``str`` nor a mapping).

    ``of`` checks each entry (a ``ValueError`` or ``TypeError`` naming the first bad
    one); ``length`` fixes the number of entries; ``what`` names the whole.
    """

    def __init__(
        self, of: Constraint | None = None, *, what: str, length: int | None = None
    ) -> None:
        self.of = of
        self.length = length
        self.text = what

    def reject(self, value: Any) -> Rejection | None:
        if isinstance(value, str | bytes | Mapping | pl.LazyFrame) or not isinstance(
            value, Iterable
        ):
            return TypeError, got(value)
        if self.length is None and self.of is None:
            return None
        entries = list(value)
        if self.length is not None and len(entries) != self.length:
            return ValueError, f"{len(entries)} value(s): {value!r}"
        for entry in entries if self.of is not None else ():
            why = self.of.reject(entry)  # type: ignore[union-attr]
            if why is not None:
                return why[0], f"an entry {why[1]}"
        return None

    def invalid(self) -> list[Any]:
        out: list[Any] = [42]
        if self.length is not None:
            out.append([0] * (self.length + 1))
        if self.of is not None:
            out += [[bad] for bad in self.of.invalid() if bad is not None]
        return out


class Unchecked(Constraint):
    """Declared, but checked by the body (``why``): e.g. the run options of ``evaluate``."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.text = why

    def reject(self, value: Any) -> Rejection | None:
        return None


COLUMN = Column()
FLAG = Flag()
COLUMNS = [COLUMN, ListOf(COLUMN, what="a list of column names")]
"""``by=``: one column name, or a list of them."""
PATH = PathLike()


Declared = dict[str, tuple[Constraint | None, ...]]


Spec = Union[Constraint, "Sequence[Constraint | None]", None]
"""One constraint, or a list of alternatives (``None``: ``None`` is accepted)."""


def _normalize(spec: Spec) -> tuple[Constraint | None, ...]:
    alternatives: list[Any] = list(spec) if isinstance(spec, list | tuple) else [spec]
    for alternative in alternatives:
        if alternative is not None and not isinstance(alternative, Constraint):
            msg = f"a constraint must be a Constraint or None, got {alternative!r}"
            raise TypeError(msg)
    return tuple(alternatives)


def check(
    function: str, name: str, value: Any, alternatives: tuple[Constraint | None, ...]
) -> None:
    """Raise unless one of ``alternatives`` accepts ``value``: the one place that raises."""
    rejections: list[Rejection] = []
    for alternative in alternatives:
        if alternative is None:
            if value is None:
                return
            continue
        why = alternative.reject(value)
        if why is None:
            return
        rejections.append(why)
    texts = [a.describe() for a in alternatives if a is not None]
    if None in alternatives:
        texts.append("None")
    if texts == [FLAG.text, "None"]:
        texts = ["True", "False", "None"]
    expected = ", ".join(texts[:-1]) + f" or {texts[-1]}" if len(texts) > 1 else texts[0]
    kind, seen = next(((k, s) for k, s in rejections if k is ValueError), (TypeError, got(value)))
    if kind is TypeError and rejections and all(k is TypeError for k, _ in rejections):
        seen = next((s for _, s in rejections if s.startswith("an entry")), seen)
    msg = f"argument {name!r} of {function} must be {expected}, got {seen}"
    if isinstance(value, pl.LazyFrame) and any(
        isinstance(a, Instance) and pl.DataFrame in a.types for a in alternatives
    ):
        msg += "; collect it first (.collect())"
    raise kind(msg)


def validate_params(
    constraints: Mapping[str, Spec],
) -> Callable[[F], F]:
    """Declare what each parameter of a public function accepts; check it at each call.

    Only the arguments passed are checked (the defaults are checked once, by the test
    of the declarations). ``**options`` forwarded to another declared function are
    checked by that function.
    """

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        table = {name: _normalize(spec) for name, spec in constraints.items()}
        unknown = sorted(set(table) - set(signature.parameters))
        if unknown:
            msg = f"{function.__qualname__} has no parameter(s) {unknown}"
            raise TypeError(msg)
        where = function.__name__

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return function(*args, **kwargs)  # Python's own message for a bad call
            read_once = False
            for name, value in bound.arguments.items():
                alternatives = table.get(name)
                if alternatives is None:
                    continue
                if isinstance(value, Iterator) and any(isinstance(a, ListOf) for a in alternatives):
                    # A one-shot iterator (a generator) is read once here, checked and
                    # passed on as a list, not consumed by the check before the body.
                    value = bound.arguments[name] = list(value)
                    read_once = True
                check(where, name, value, alternatives)
            if read_once:
                return function(*bound.args, **bound.kwargs)
            return function(*args, **kwargs)

        wrapper.__rankeval_constraints__ = table  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def declared(function: Callable[..., Any]) -> Declared | None:
    """The constraints declared on ``function`` by :func:`validate_params`, if any."""
    return getattr(function, "__rankeval_constraints__", None)

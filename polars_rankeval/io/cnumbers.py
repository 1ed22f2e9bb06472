r"""C's ``atof`` and ``atol``, the one number reader of trec_eval's files and options.

trec_eval reads scores, relevance levels, preference levels, ``-Z`` means and deviations
with C's ``atof`` and ``atol``, and so do the readers of
:mod:`polars_rankeval.io.trec.bytewise` and the ``trec-eval`` clone
(:mod:`polars_rankeval.trec_eval`): the number the longest prefix
spells, 0 when there is none (``"3abc"`` is 3, ``"abc"`` is 0). The patterns are ASCII
only, as C's are in the C locale: leading white space is C's ``isspace`` (space, ``\t``,
``\n``, ``\v``, ``\f``, ``\r``; not Python's ``\s``, which also takes Unicode spaces)
and digits are ``0-9`` (not ``\d``, which takes every Unicode digit). The expressions read
String columns whose fields are already split on white space; the functions read one
option value or measure parameter.

Examples
--------
>>> atof(" 1e-3x"), atof("inf"), atof("abc"), atol("+7.9"), atol("\u0663")
(0.001, inf, 0.0, 7, 0)
"""

from __future__ import annotations

import re

import polars as pl

# The longest prefix C's strtod reads (decimal and inf/nan; hexadecimal floats are not read).
_ATOF = (
    r"^([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|(?i:inf(?:inity)?)|(?i:nan)))"
)
_ATOL = r"^([+-]?[0-9]+)"
C_SPACE = " \t\n\x0b\x0c\r"
"""C's ``isspace`` in the C locale: the only white space trec_eval reads."""


_HEX = r"^([+-]?)0[xX]([0-9a-fA-F]+)(?:[^0-9a-fA-F.pP]|$)"


def c_atof(expr: pl.Expr) -> pl.Expr:
    """C's ``atof`` on a String expression: the number its prefix spells, else 0.0.

    Decimal numbers, ``inf``/``infinity``/``nan`` (any case) and hexadecimal integers
    (``0x1F``) are read; hexadecimal fractions and binary exponents (``0x1.8p3``) are not.
    """
    hexa = expr.str.extract(_HEX, 2).str.to_integer(base=16, strict=False).cast(pl.Float64)
    sign = pl.when(expr.str.extract(_HEX, 1) == "-").then(-1.0).otherwise(1.0)
    decimal = expr.str.extract(_ATOF, 1).cast(pl.Float64, strict=False).fill_null(0.0)
    return pl.when(hexa.is_null()).then(decimal).otherwise(sign * hexa)  # named as ``expr``


def c_atol(expr: pl.Expr) -> pl.Expr:
    """C's ``atol`` on a String expression: the integer its prefix spells, else 0."""
    return expr.str.extract(_ATOL, 1).cast(pl.Int64, strict=False).fill_null(0)


def atol(text: str) -> int:
    """C's ``atol`` on one string (option values such as ``-l 2.5`` or ``-M +3``)."""
    match = re.match(_ATOL, text.lstrip(C_SPACE))
    return int(match.group(1)) if match else 0


def atof(text: str) -> float:
    """C's ``atof`` on one string (measure parameters such as ``set_F.0.5``): :func:`c_atof`."""
    return float(pl.select(c_atof(pl.lit(text.lstrip(C_SPACE), dtype=pl.String))).item())

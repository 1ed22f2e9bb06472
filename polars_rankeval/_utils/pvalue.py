"""The one text of a p-value, for plots, reports and the command line.

A test statistic far in the tail gives a p-value that underflows to 0.0 (or to a
subnormal double without trustworthy digits); the true p-value is positive, so it is
written as a bound, ``< 1e-300``, never as ``0``. Other values keep three significant
digits (``0.0123``, ``2.5e-12``).
"""

from __future__ import annotations

import math

P_FLOOR = 1e-300
"""The smallest p-value written as a number; below it, ``< 1e-300``."""


def format_p(p: float | None) -> str:
    """A p-value as text: ``"0.0123"``, ``"2.5e-12"``, ``"< 1e-300"`` or ``"n/a"``.

    Parameters
    ----------
    p
        A p-value in [0, 1]; ``None`` or NaN (no test: e.g. no paired user) is ``"n/a"``.

    Returns
    -------
    str
        Three significant digits; below :data:`P_FLOOR` (0 included: an underflow)
        the bound ``"< 1e-300"``.

    Examples
    --------
    >>> format_p(0.0), format_p(3.14159e-9), format_p(0.04999), format_p(None)
    ('< 1e-300', '3.14e-09', '0.05', 'n/a')
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    if not 0.0 <= p <= 1.0:
        msg = f"p-value must be in [0, 1], got {p!r}"
        raise ValueError(msg)
    if p < P_FLOOR:
        return f"< {P_FLOOR:g}"
    return format(p, ".3g")


def p_clause(p: float | None, label: str = "p") -> str:
    """``label`` and the p-value as a sentence reads: ``"p = 0.0123"``, ``"p < 1e-300"``.

    Examples
    --------
    >>> p_clause(0.0), p_clause(0.012, "holm-adjusted p")
    ('p < 1e-300', 'holm-adjusted p = 0.012')
    """
    text = format_p(p)
    return f"{label} {text}" if text.startswith("<") else f"{label} = {text}"

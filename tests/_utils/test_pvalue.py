"""One text for a p-value in plots, reports and the command line.

Tests the private unit polars_rankeval._utils.pvalue on purpose.
"""

from __future__ import annotations

import math

import pytest

from polars_rankeval._utils.pvalue import P_FLOOR, format_p, p_clause


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.0, "< 1e-300"),  # underflowed: the true p is positive and below every double
        (1e-320, "< 1e-300"),  # subnormal: no digits to trust
        (P_FLOOR, "1e-300"),
        (2.5e-12, "2.5e-12"),
        (0.000123456, "0.000123"),
        (0.0123456, "0.0123"),
        (0.05, "0.05"),
        (1.0, "1"),
        (None, "n/a"),
        (math.nan, "n/a"),
    ],
)
def test_format_p(p: float | None, text: str) -> None:
    assert format_p(p) == text


def test_p_clause_reads_as_a_sentence() -> None:
    assert p_clause(0.0) == "p < 1e-300"
    assert p_clause(0.0123456) == "p = 0.0123"
    assert p_clause(None, "adjusted p") == "adjusted p = n/a"


@pytest.mark.parametrize("p", [-0.1, 1.5, math.inf])
def test_format_p_refuses_what_is_not_a_probability(p: float) -> None:
    with pytest.raises(ValueError, match=rf"p-value must be in \[0, 1\], got {p!r}"):
        format_p(p)

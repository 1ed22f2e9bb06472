"""The overall effect of an advanced run over a baseline: effect ratio (ER) and DeltaRI.

The third level of :func:`~polars_rankeval.reproducibility` and
:func:`~polars_rankeval.replicability`, when the baseline pair is given: how much of
the original improvement the new runs show (ER) and how the relative improvements
differ (DeltaRI), read from the per-topic scores of the four runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from polars_rankeval.analysis.reproducibility_effectiveness import _paired

__all__ = ["EFFECT_COLUMNS"]

#: The columns of the ``effects`` frames, in order.
EFFECT_COLUMNS: tuple[str, ...] = (
    "metric",
    "improvement_original",
    "improvement_reproduced",
    "er",
    "ri_original",
    "ri_reproduced",
    "delta_ri",
    "n_topics_original",
    "n_topics_reproduced",
)


ZERO = 1e-12
"""An improvement or mean within this of 0 is 0 up to rounding: a ratio over it is null."""


def _ratio(num: float, den: float) -> float | None:
    return num / den if abs(den) > ZERO else None


def _effects(scores: pl.DataFrame, names: list[str], second: str) -> pl.DataFrame:
    """ER and DeltaRI per metric; ``second`` is ``"reproduced"`` or ``"replicated"``.

    Per side, the advanced and baseline scores are paired by topic: the mean
    improvement is the mean of the per-topic differences and the relative improvement
    ``(mean_a - mean_b) / mean_b`` over those topics. ER = reproduced improvement /
    original improvement, DeltaRI = original RI - reproduced RI; null where the
    denominator is 0 (within :data:`ZERO`: an improvement summed from differences
    that cancel is 0 up to rounding, and a ratio over that rounding is noise).
    """
    rows = []
    sides = {}
    for side in ("original", second):
        sides[side] = _paired(scores, names, f"advanced/{side}", f"baseline/{side}")
    for name in names:
        row: dict[str, Any] = {"metric": name}
        stats = {}
        for side in ("original", second):
            adv, base, _ = sides[side][name]
            row[f"n_topics_{side}"] = len(adv)
            if len(adv):
                stats[side] = (float(np.mean(adv - base)), float(adv.mean()), float(base.mean()))
        if len(stats) == 2:
            mi_o, a_o, b_o = stats["original"]
            mi_r, a_r, b_r = stats[second]
            ri_o, ri_r = _ratio(a_o - b_o, b_o), _ratio(a_r - b_r, b_r)
            row |= {
                "improvement_original": mi_o,
                f"improvement_{second}": mi_r,
                "er": _ratio(mi_r, mi_o),
                "ri_original": ri_o,
                f"ri_{second}": ri_r,
                "delta_ri": None if ri_o is None or ri_r is None else ri_o - ri_r,
            }
        rows.append(row)
    columns = [c.replace("reproduced", second) for c in EFFECT_COLUMNS]
    schema = {
        c: (pl.String if c == "metric" else pl.Int64 if c.startswith("n_") else pl.Float64)
        for c in columns
    }
    return pl.DataFrame(rows, schema=schema)

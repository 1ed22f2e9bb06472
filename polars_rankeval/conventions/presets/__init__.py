"""Every library's preset, one module per library, collected into :data:`PRESETS`.

A module declares its library's :class:`~polars_rankeval.conventions.convention.Convention`
as ``CONVENTION`` and nothing else; a new library is a new module listed in ``_LIBRARIES``.
Importing this package imports no metric: the command line reads the preset names here.
"""

from __future__ import annotations

from polars_rankeval.conventions.convention import Convention
from polars_rankeval.conventions.presets import (
    cornac,
    elliot,
    hivemall,
    ir_measures,
    jurity,
    lenskit,
    ranx,
    recbole,
    recommenders,
    rectools,
    replay,
    sklearn,
    torchmetrics,
    trec_eval,
)

_LIBRARIES = (
    trec_eval,
    ranx,
    ir_measures,
    rectools,
    replay,
    recommenders,
    lenskit,
    torchmetrics,
    recbole,
    jurity,
    hivemall,
    sklearn,
    cornac,
    elliot,
)

PRESETS: dict[str, Convention] = {m.CONVENTION.name: m.CONVENTION for m in _LIBRARIES}
"""Every preset by name, in the order of the README's matrix."""

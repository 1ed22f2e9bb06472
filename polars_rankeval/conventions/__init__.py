"""Named presets that reproduce another library's numbers: ``conventions="rectools"``.

- :mod:`~polars_rankeval.conventions.convention`: one library's conventions as data;
- :mod:`~polars_rankeval.conventions.presets`: one module per library, collected in
  :data:`PRESETS` (importing them imports no metric: the command line reads the names);
- :mod:`~polars_rankeval.conventions.resolve`: a call under a preset (library metric
  names to polars_rankeval metrics and options) and the ``conventions()`` table.

May import: ``trec_eval`` and the layers below it.
"""

from polars_rankeval.conventions.convention import Convention, Mapped
from polars_rankeval.conventions.presets import PRESETS

__all__ = ["PRESETS", "Convention", "Mapped"]

"""The package's public face: ``dir()`` and ``__all__`` list the public names only.

``prk.map`` (mean average precision) stays an attribute, but ``__all__`` leaves it
(and any other name shadowing a builtin) out, so that ``from polars_rankeval import *``
does not replace the builtin ``map``.
"""

from __future__ import annotations

import builtins

import polars as pl

import polars_rankeval as prk


def test_dir_lists_the_public_names_only() -> None:
    names = set(dir(prk))
    for private in ("sys", "importlib", "types", "Any", "TYPE_CHECKING", "annotations"):
        assert private not in names
    assert not {n for n in names if n.startswith("_") and not n.startswith("__")}
    public = {n for n in names if not n.startswith("__")}
    assert public == {*prk.__all__, "map"}
    assert "__version__" in names


def test_star_import_does_not_shadow_builtins() -> None:
    assert not set(prk.__all__) & set(dir(builtins))
    namespace: dict[str, object] = {}
    exec("from polars_rankeval import *", namespace)  # the star import itself
    assert "map" not in namespace
    assert namespace["ndcg"] is prk.ndcg
    assert set(namespace) - {"__builtins__"} == set(prk.__all__)


def test_map_stays_usable_as_an_attribute() -> None:
    df = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [2.0, 1.0], "relevance": [0, 1]})
    assert df.select(prk.map()).item() == 1 / 2
    assert prk.map is prk.metrics.functions.map

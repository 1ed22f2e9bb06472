"""The ``engine=`` of ``evaluate`` for tests parametrized by a path name."""

from __future__ import annotations

from typing import Any

import polars_rankeval as prk


def engine_of(name: str, **options: Any) -> Any:
    """``prk.Memory()``, ``prk.Buckets(**options)``, ``prk.Partition(**options)`` by name."""
    if name == "memory":
        return prk.Memory()
    return {"auto": prk.Auto, "buckets": prk.Buckets, "partition": prk.Partition}[name](**options)

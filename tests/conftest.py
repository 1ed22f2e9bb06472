"""Shared pytest configuration.

tests/ mirrors the package: tests/<layer>/test_*.py tests polars_rankeval/<layer>/;
tests of the whole package (properties, the README, the layers) are at the top. Every
folder is a package (``tests.<layer>.test_x``), so file names need not be unique;
helpers (``tests._reference`` ...) and ``tests/data`` are shared. The small frames
that several files read (the Hivemall and lecture examples, RecTools' serendipity
example, tiny one- and two-user cases) are constants of ``tests.frames``.
"""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def paired() -> dict[str, np.ndarray]:
    """Per-user values of systems a, b and c over 60 users (c rounded: ties), seed 7."""
    rng = np.random.default_rng(7)
    base = rng.random(60)
    return {
        "a": base,
        "b": np.clip(base + rng.normal(0.05, 0.2, 60), 0, 1),
        "c": np.round(np.clip(base + rng.normal(-0.02, 0.2, 60), 0, 1), 1),  # ties
    }

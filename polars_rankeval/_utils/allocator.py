"""The allocator settings of the ``trec-eval`` command, applied before Polars is loaded.

Polars allocates through jemalloc, which keeps freed pages resident for a while (its
dirty and muzzy decay; Polars sets them to 500 and 1000 ms) so that later allocations
reuse them. A ``trec-eval`` process lives a few seconds and frees most of what each step
built (the file's text, the ranking, one part of the measures) before the next step: the
pages kept add up to the process's peak memory. With both decays at 0 a freed page goes
back to the system at once (an ``madvise`` call each time: more system time). That
matters on a small run, whose peak is mostly pages kept (1M lines: 160 MB instead of
300 MB); on a run file over :data:`LARGE_RUN_BYTES` the data itself dominates the
peak (10M lines: 1.4-1.7x trec_eval's without it) and the extra system time (+3 s of
CPU at 10M lines) would cost speed, so Polars' decays are left as they are.
jemalloc reads ``_RJEM_MALLOC_CONF`` once, at Polars' first allocation; Polars' import
puts its defaults before the variable's value (the later setting wins), so the variable
is extended while ``polars_rankeval`` is first imported, before Polars is. A decay the
user set is kept; Polars' own defaults, inherited from a parent process that imported
Polars, are not the user's. This module imports nothing, Polars included.
"""

from __future__ import annotations

import os
import sys

TREC_EVAL_MALLOC_CONF = "dirty_decay_ms:0,muzzy_decay_ms:0"
# a run file larger than this (about 3.5M lines) keeps Polars' decays
LARGE_RUN_BYTES = 100 * 2**20
# what ``import polars`` writes into the variable (a parent process passes it on)
_POLARS_DEFAULTS = "dirty_decay_ms:500,muzzy_decay_ms:1000"


def configure_for_trec_eval() -> bool:
    """Extend ``_RJEM_MALLOC_CONF`` when this process is the ``trec-eval`` command.

    That is ``polars-rankeval trec-eval ...`` or ``python -m polars_rankeval trec-eval ...``
    (``sys.argv[0]`` is the script, or ``-m`` while the package is imported), and only
    when Polars is not loaded yet and the run (the last argument) is not a file over
    :data:`LARGE_RUN_BYTES`. Each decay of :data:`TREC_EVAL_MALLOC_CONF` is added
    unless the user's part of the variable sets it. Returns whether the variable changed.
    """
    program = os.path.basename(sys.argv[0]) if sys.argv else ""
    if program not in ("polars-rankeval", "-m") or sys.argv[1:2] != ["trec-eval"]:
        return False
    if "polars" in sys.modules:
        return False
    try:
        if os.path.getsize(sys.argv[-1]) > LARGE_RUN_BYTES:
            return False
    except (OSError, ValueError):  # not a file (an option, standard input): the usual size
        pass
    current = os.environ.get("_RJEM_MALLOC_CONF", "")
    users = current.removeprefix(_POLARS_DEFAULTS).split(",")
    named = {item.split(":", 1)[0].strip() for item in users}
    added = [item for item in TREC_EVAL_MALLOC_CONF.split(",") if item.split(":")[0] not in named]
    if not added:
        return False
    os.environ["_RJEM_MALLOC_CONF"] = ",".join([current, *added] if current else added)
    return True

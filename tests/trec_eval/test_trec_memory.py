"""The memory-saving paths of the trec_eval clone give what the plain paths give.

The measures are computed a part of the queries at a time on large runs (``CHUNK_ROWS``
ranked rows): forced down to a few rows here, every option's output must stay the one
computed in one part. The reader keeps only the run's used fields and reads the run id
off the file's last line: the tag must be the last line's, from a path or from bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_rankeval.io.trec.bytewise import read_trec_eval_run
from polars_rankeval.trec_eval import compute
from polars_rankeval.trec_eval.output import format_trec
from polars_rankeval.trec_eval.program import trec_eval


def _files(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    """A run of 40 queries (one only in the qrels, one only in the run) and graded qrels."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines = [], []
    for q in range(40):
        n = int(rng.integers(1, 60))
        docs = rng.choice(200, size=n, replace=False)
        scores = np.round(rng.random(n), 1)  # many ties
        if q != 39:
            run_lines += [
                f"q{q} Q0 D{d} {r} {s} tag{q}"
                for r, (d, s) in enumerate(zip(docs, scores, strict=True))
            ]
        if q != 38:
            judged = rng.choice(200, size=int(rng.integers(1, 40)), replace=False)
            rels = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=judged.size)
            qrels_lines += [f"q{q} 0 D{d} {r}" for d, r in zip(judged, rels, strict=True)]
    order = rng.permutation(len(run_lines))
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("\n".join(run_lines[i] for i in order) + "\n")
    qrels_path.write_text("\n".join(qrels_lines) + "\n")
    return qrels_path, run_path


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"complete": True},
        {"judged_only": True, "rel_level": 2},
        {"max_docs": 7, "rel_level": 0},
        {"query": "q5"},
    ],
)
@pytest.mark.parametrize("chunk_rows", [1, 40, 333])
def test_measures_by_parts_equal_one_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: dict[str, object], chunk_rows: int
) -> None:
    qrels, run = _files(tmp_path, seed=chunk_rows)
    whole = format_trec(trec_eval(qrels, run, ["all_trec"], per_query=True, **options))  # type: ignore[arg-type]
    monkeypatch.setattr(compute, "CHUNK_ROWS", chunk_rows)
    parts = format_trec(trec_eval(qrels, run, ["all_trec"], per_query=True, **options))  # type: ignore[arg-type]
    assert parts == whole


def test_parts_cover_every_query_once() -> None:
    ranked = pl.DataFrame(
        {
            "qid": pl.Series([0, 0, 0, 1, 3, 3, 4], dtype=pl.UInt32).set_sorted(),
            "i": [0, 1, 2, 0, 0, 1, 0],
            "rel": [1, -1, 0, 1, -1, 2, 0],
        }
    )
    qrels = pl.DataFrame(
        {"qid": pl.Series([0, 1, 2, 3, 4], dtype=pl.UInt32), "docno": list("abcde"), "rel": [1] * 5}
    )
    from polars_rankeval.trec_eval.measures import columns_of, parse_measures
    from polars_rankeval.trec_eval.ranking import Options

    columns = columns_of(parse_measures(["P.1,2", "map", "num_ret", "num_rel"]))
    opts = Options(1, None, False, 0, False, True)
    whole = compute.evaluate_queries(ranked, qrels, 5, columns, opts)
    for rows in (1, 2, 3):
        assert compute.evaluate_queries(ranked, qrels, 5, columns, opts, rows).equals(whole)
    assert whole["qid"].to_list() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("as_bytes", [False, True])
@pytest.mark.parametrize("end", ["\n", ""])
def test_run_id_is_the_last_lines_tag(tmp_path: Path, as_bytes: bool, end: str) -> None:
    text = "q1 Q0 d1 1 0.5 tagA\nq2 Q0 d2 1 0.25 tagB\nq1 Q0 d3 2 0.1 tagC" + end
    path = tmp_path / "run.txt"
    path.write_text(text)
    frame, runid = read_trec_eval_run(text.encode() if as_bytes else path)
    assert runid == "tagC"
    assert frame.rows() == [("q1", "d1", 0.5), ("q2", "d2", 0.25), ("q1", "d3", 0.1)]


def test_run_id_after_a_long_last_line(tmp_path: Path) -> None:
    # the tail read grows until it holds the whole last line
    tag = "t" * 70_000
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d1 1 0.5 first\nq1 Q0 d2 2 0.4 {tag}\n")
    assert read_trec_eval_run(path)[1] == tag


# ---------------------------------------------------------------------------- the process
# The command's process: jemalloc returns freed pages at once (its decays at 0, set
# before Polars loads) and only the clone is imported, not the other subcommands.
@pytest.mark.parametrize(
    ("argv", "preset", "polars_loaded", "expected"),
    [
        (["/venv/bin/polars-rankeval", "trec-eval", "q", "r"], None, False, True),
        (["-m", "trec-eval", "q", "r"], None, False, True),  # python -m polars_rankeval
        (["/venv/bin/polars-rankeval", "evaluate"], None, False, False),
        (["-m", "evaluate"], None, False, False),
        (["script.py", "trec-eval"], None, False, False),  # a program importing the library
        (["/venv/bin/polars-rankeval", "trec-eval"], "narenas:1", False, True),  # kept, extended
        (["/venv/bin/polars-rankeval", "trec-eval"], "muzzy_decay_ms:5", False, True),
        (["-m", "trec-eval"], "dirty_decay_ms:9,muzzy_decay_ms:5", False, False),
        # Polars' defaults, inherited from a parent process that imported Polars
        (["-m", "trec-eval"], "dirty_decay_ms:500,muzzy_decay_ms:1000", False, True),
        (["/venv/bin/polars-rankeval", "trec-eval"], None, True, False),  # too late
        ([], None, False, False),
    ],
)
def test_allocator_settings_only_for_the_trec_eval_command(
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    preset: str | None,
    polars_loaded: bool,
    expected: bool,
) -> None:
    import sys

    from polars_rankeval._utils import allocator

    monkeypatch.setattr(sys, "argv", argv)
    if preset is None:
        monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    else:
        monkeypatch.setenv("_RJEM_MALLOC_CONF", preset)
    if not polars_loaded:
        monkeypatch.delitem(sys.modules, "polars")
    assert allocator.configure_for_trec_eval() is expected
    import os

    want = {
        None: "dirty_decay_ms:0,muzzy_decay_ms:0",
        "narenas:1": "narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0",
        "muzzy_decay_ms:5": "muzzy_decay_ms:5,dirty_decay_ms:0",
        "dirty_decay_ms:500,muzzy_decay_ms:1000": (
            "dirty_decay_ms:500,muzzy_decay_ms:1000,dirty_decay_ms:0,muzzy_decay_ms:0"
        ),
    }
    assert os.environ.get("_RJEM_MALLOC_CONF") == (want[preset] if expected else preset)


def test_allocator_settings_leave_a_large_run_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    from polars_rankeval._utils import allocator

    run = tmp_path / "run"
    run.write_bytes(b"q 0 d 1 1 t\n" * 8)  # 96 bytes
    monkeypatch.setattr(sys, "argv", ["polars-rankeval", "trec-eval", "qrels", str(run)])
    monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    monkeypatch.delitem(sys.modules, "polars")
    monkeypatch.setattr(allocator, "LARGE_RUN_BYTES", 96)  # not over: set
    assert allocator.configure_for_trec_eval()
    monkeypatch.delenv("_RJEM_MALLOC_CONF")
    monkeypatch.setattr(allocator, "LARGE_RUN_BYTES", 95)  # over: Polars' decays stay
    assert not allocator.configure_for_trec_eval()
    assert "_RJEM_MALLOC_CONF" not in os.environ


def test_the_command_process_sets_the_allocator_and_imports_only_the_clone(
    tmp_path: Path,
) -> None:
    import os
    import subprocess
    import sys

    qrels, run = _files(tmp_path, 3)
    probe = (
        "import os, sys\n"
        "sys.argv = ['-m', 'trec-eval', '-q', sys.argv[1], sys.argv[2]]\n"
        "from polars_rankeval.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "print(os.environ.get('_RJEM_MALLOC_CONF'), 'polars_rankeval.cli.app' in sys.modules,"
        " 'polars_rankeval.conventions' in sys.modules, status, file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    env["PYTHONPATH"] = str(Path(__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-c", probe, str(qrels), str(run)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    # Polars' import puts its defaults first; the later setting wins
    conf, app, conventions, status = done.stderr.split()[-4:]
    assert conf.endswith(",dirty_decay_ms:0,muzzy_decay_ms:0")
    assert (app, conventions, status) == ("False", "False", "0")
    expected = format_trec(trec_eval(qrels, run, ["official"], per_query=True))
    assert done.stdout == expected

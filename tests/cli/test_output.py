"""Standard output that cannot be written: a reader that went away, a full device.

Every subcommand ends the same way (the class, not one command): a closed pipe
(``... | head -1``) stops quietly with status 0; a write error (``> /dev/full``) is one
line on standard error and status 2; never a traceback nor Python's "Exception ignored"
at exit. Checked in real processes, with Python's buffered and unbuffered stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parents[1] / "data"
ROOT = Path(__file__).parents[2]
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")
COMMANDS = {
    "trec-eval all_trec -q": ["trec-eval", "-q", "-m", "all_trec", QRELS, RUN],
    "trec-eval P.5": ["trec-eval", "-m", "P.5", QRELS, RUN],
    "trec-eval -h": ["trec-eval", "-h"],
    "metrics ndcg": ["metrics", "ndcg"],
    "evaluate per-user": ["evaluate", "--per-user"],
    "--help": ["--help"],
}


def _env(unbuffered: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "polars_rankeval", *args]


def _no_python_noise(err: str) -> None:
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_pipe_ends_quietly(name: str, unbuffered: bool) -> None:
    if unbuffered and not name.startswith("trec-eval"):
        pytest.skip("one buffering mode is enough for the argparse subcommands")
    proc = subprocess.Popen(
        _command(COMMANDS[name]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(unbuffered),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the first line: every write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    _no_python_noise(err)
    assert "error" not in err, err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_full_device_is_a_one_line_error(name: str, unbuffered: bool) -> None:
    if unbuffered and not name.startswith("trec-eval"):
        pytest.skip("one buffering mode is enough for the argparse subcommands")
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            _command(COMMANDS[name]),
            stdout=full,
            stderr=subprocess.PIPE,
            env=_env(unbuffered),
            cwd=ROOT,
            timeout=120,
            check=False,
        )
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    _no_python_noise(err)
    last = err.strip().splitlines()[-1]
    prefix = (
        "trec_eval: "
        if name.startswith("trec-eval") and name != "trec-eval -h"
        else ("polars-rankeval: error: ")
    )
    assert last.startswith(prefix), err
    assert "No space left on device" in last, err
    assert sum("No space left" in line for line in err.splitlines()) == 1, err

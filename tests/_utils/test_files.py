"""Files are written whole or not at all: a failed write keeps the old file, no partial one.

Tests the private unit polars_rankeval._utils.files on purpose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval._utils.files import write_atomically
from polars_rankeval.cli.app import main


def _full_disk(self: Any, path: Any, *args: Any, **kwargs: Any) -> None:
    Path(path).write_text("half of it")  # the writer got this far
    raise OSError(28, "No space left on device")


def _long() -> pl.DataFrame:
    return pl.DataFrame(
        {"user": [1, 1], "item": ["a", "b"], "score": [2.0, 1.0], "relevance": [1, 0]}
    )


@pytest.mark.parametrize("existing", [True, False])
def test_write_atomically_keeps_the_old_file(existing: bool, tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    if existing:
        path.write_text("old")

    def fails(p: Path) -> None:
        p.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, fails)
    assert [p.name for p in tmp_path.iterdir()] == (["out.txt"] if existing else [])
    if existing:
        assert path.read_text() == "old"
    write_atomically(path, lambda p: p.write_text("new"))
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.parametrize("writer", ["write_run", "write_qrels"])
def test_trec_writers_keep_the_old_file(
    writer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.trec"
    path.write_text("old\n")
    monkeypatch.setattr(pl.DataFrame, "write_csv", _full_disk)
    with pytest.raises(OSError, match="No space left"):
        getattr(prk.trec, writer)(_long(), path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.trec"]
    monkeypatch.undo()
    getattr(prk.trec, writer)(_long(), path)
    assert path.read_text().splitlines()[0].startswith("1 ")


def test_per_user_file_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "per_user.parquet"
    path.write_bytes(b"old")
    monkeypatch.setattr(pl.DataFrame, "write_parquet", _full_disk)
    assert main(["-m", "ndcg@10", "--per-user", str(path)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["per_user.parquet"]

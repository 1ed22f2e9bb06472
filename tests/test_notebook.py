"""Every notebook in notebooks/ runs top to bottom, so the notebooks cannot rot.

The code cells are executed with ``exec`` in one shared namespace, in order, from the
notebook's folder (as Jupyter would), with no Jupyter dependency. IPython magics
(``%``, ``!``) are therefore not allowed in the notebooks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.notebook  # deselect with: pytest -m "not notebook"

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def test_notebooks_exist() -> None:
    assert [p.name for p in NOTEBOOKS], f"no notebook in {NOTEBOOK_DIR}"
    assert "quickstart.ipynb" in [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_nbformat_4(path: Path) -> None:
    nb = load(path)
    assert nb["nbformat"] == 4
    assert isinstance(nb["metadata"], dict)
    assert nb["cells"]
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("code", "markdown", "raw")
        assert isinstance(cell["metadata"], dict)
        if cell["cell_type"] == "code":
            assert "outputs" in cell
            assert "execution_count" in cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(path.parent)
    namespace: dict = {"__name__": "__main__"}
    cells = [c for c in load(path)["cells"] if c["cell_type"] == "code"]
    assert cells, f"{path.name} has no code cell"
    for number, cell in enumerate(cells, start=1):
        code = compile(source(cell), f"{path.name}, code cell {number}", "exec")
        exec(code, namespace)

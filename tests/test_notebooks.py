"""Execute the notebooks in notebooks/ at small sizes (nbclient, kernel python3)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib")

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _kernel_available() -> bool:
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        return "python3" in KernelSpecManager().find_kernel_specs()
    except Exception:  # pragma: no cover - depends on the install
        return False


def test_the_three_notebooks_exist():
    names = {p.name for p in NOTEBOOKS}
    assert {"01-team-selection.ipynb", "02-custom-decision-class.ipynb", "03-paper-reproductions.ipynb"} <= names


@pytest.mark.skipif(not _kernel_available(),
                    reason="no 'python3' Jupyter kernel: run `python -m ipykernel install --sys-prefix --name python3`")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert time.perf_counter() - t0 < 60

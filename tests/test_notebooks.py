"""Execute the notebooks in notebooks/ at small sizes (nbclient, kernel python3)."""

from __future__ import annotations

import re
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_committed_with_their_outputs_and_figures(path):
    """A reader sees the analysis without running it: every code cell was executed, in
    order, without error, and the notebook shows at least one figure."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.get("execution_count") for c in code]
    assert all(counts) and counts == sorted(counts), f"cells not all executed in order: {counts}"
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no figure in the committed outputs"


def _outputs(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_team_selection_compares_top_two_with_the_seed_solvers_on_the_same_noise():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    text = _outputs(nb)
    rows = dict(re.findall(r"^(ICB|SA-FOA|top-two)\s+identified:\s+([\d,]+) team evaluations", text, flags=re.M))
    assert set(rows) == {"ICB", "SA-FOA", "top-two"}, text[:2000]
    icb, top_two = (int(rows[k].replace(",", "")) for k in ("ICB", "top-two"))
    assert icb / top_two > 10
    m = re.search(r"top-two needs (\d+)x fewer team evaluations than ICB", text)
    assert m and int(m.group(1)) == round(icb / top_two)


def test_team_selection_plans_the_sessions_of_a_real_lab():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    headings = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown"]
    assert "## How many sessions would a real lab need" in headings
    code = "".join(c.source for c in nb.cells if c.cell_type == "code")
    assert 'make_instance("lab-teams")' in code
    assert "from combex.studies import plan" in code
    text = _outputs(nb)
    # the committed output is that of the plan's current report (its summary, the certified column)
    assert "In short (delta 0.05, epsilon 5):" in text and "  certified\n" in text
    rows = re.findall(r"^top-two\s+([\d.]+)\s+([\d.]+)\s+([\d,]+)\s+([\d,]+)\s+0/\d+", text, flags=re.M)
    assert len(rows) == 6, rows  # two epsilons x three deltas, no wrong answer
    median = {(float(e), float(d)): int(m.replace(",", "")) for e, d, m, _ in rows}
    for d in {d for _, d in median}:
        assert median[(2.0, d)] > median[(5.0, d)] > 0  # a larger slack needs fewer sessions
    assert all(int(q.replace(",", "")) >= int(m.replace(",", "")) for _, _, m, q in rows)  # 90% >= median


def test_notebook_figures_are_dots_and_lines_never_bars():
    """Bars from an arbitrary baseline mislead on a log axis: the notebooks draw none."""
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = "".join(c.source for c in nb.cells if c.cell_type == "code")
        assert not re.search(r"\.(bar|barh)\(", code), path.name


def test_team_selection_uses_a_non_trivial_epsilon():
    """Notebook 01 asks a real question: few teams are epsilon-optimal at its epsilon."""
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    m = re.search(r"teams are ([\d.]+)-optimal: ([\d.e+-]+) of all teams", text)
    assert m and float(m.group(2)) < 0.01, text[:2000]


@pytest.mark.skipif(not _kernel_available(),
                    reason="no 'python3' Jupyter kernel: run `python -m ipykernel install --sys-prefix --name python3`")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("COMBEX_NOTEBOOK_RUNS", "1")  # one run per setting in the repeated-run cells
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    assert time.perf_counter() - t0 < 180  # each takes ~30-50 s on a loaded 2-core machine

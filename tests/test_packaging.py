"""Installation-level checks: the solver libraries coexist in one process, the wheel
carries the data and the licence, the metadata has one version and no deprecation."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import combex

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter; its stdout (fails with its stderr)."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize(
    "first,second",
    [("highspy", "ortools.sat.python.cp_model"), ("ortools.sat.python.cp_model", "highspy"),
     ("cvxpy", "ortools.sat.python.cp_model"), ("ortools.linear_solver.pywraplp", "cvxpy")],
)
def test_highs_and_ortools_load_in_either_order(first, second):
    """OR-Tools ships libhighs.so.1; highspy 1.15.x ships another under the same soname and
    then the second import fails with an undefined symbol in either order (pyproject.toml
    excludes it). Every other highspy release links HiGHS statically."""
    pytest.importorskip("ortools")
    code = (
        f"import importlib; importlib.import_module({first!r}); importlib.import_module({second!r});"
        "from ortools.sat.python import cp_model; m = cp_model.CpModel(); x = m.NewBoolVar('x');"
        "m.Maximize(x); s = cp_model.CpSolver(); assert s.Solve(m) == cp_model.OPTIMAL;"
        "import highspy; highspy.Highs()"
    )
    _python(code)


def test_cvxpy_highs_and_cpsat_in_one_process():
    pytest.importorskip("ortools")
    code = (
        "import cvxpy as cp, numpy as np\n"
        "from combex.oracles import ConstraintFamily\n"
        "x = cp.Variable(2); p = cp.Problem(cp.Minimize(cp.sum(x)), [x >= 1]); p.solve(solver='HIGHS')\n"
        "assert abs(p.value - 2) < 1e-6\n"
        "dc = ConstraintFamily(3, [[1, 1, 1]], [2])\n"
        "assert dc.argmax(np.array([1.0, 2.0, 3.0])).tolist() == [False, True, True]\n"
    )
    _python(code)


def test_installed_highspy_is_not_the_clashing_release():
    v = importlib.metadata.version("highspy")
    assert not v.startswith("1.15."), v


def test_the_core_never_imports_the_optional_dependencies():
    code = (
        "import sys, combex, combex.solvers, combex.oracles, combex.environments, combex.experiments, "
        "combex.datasets, combex.allocations, combex.estimation\n"
        "from combex.solvers.full_bandit import ICB\n"
        "from combex.environments import CrowdQuiz\n"
        "ICB(delta=0.1, epsilon=0.5).run(CrowdQuiz('IT', k=3, rng=0), rng=1)\n"
        "bad = sorted(m for m in ('ortools', 'pooch', 'hnswlib', 'matplotlib', 'pandas', 'dask', 'pyarrow', 'sklearn') if m in sys.modules)\n"
        "print(bad)\n"
    )
    assert _python(code).strip().splitlines()[-1] == "[]"


def test_one_version_source():
    assert importlib.metadata.version("combex") == combex.__version__
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and "\nversion =" not in text.split("[tool.")[0]
    assert f"## [{combex.__version__}]" in (ROOT / "CHANGELOG.md").read_text()


def test_metadata_licence_authors():
    meta = importlib.metadata.metadata("combex")
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert "combex developers" in (meta["Author"] or "")
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
def test_wheel_carries_the_data_and_licence_without_deprecation_warnings(tmp_path):
    pytest.importorskip("setuptools", minversion="77")
    src = tmp_path / "src"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    for f in files:
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "SetuptoolsDeprecationWarning" not in log and "License classifiers are deprecated" not in log
    assert "absent from the `packages` configuration" not in log  # data folders declared
    (wheel,) = (tmp_path / "dist").glob("combex-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for domain in ("ITMANAGE", "MEDICINE", "CHINESE", "POKEMON", "ENGLISH", "SCIENCE"):
        for f in ("answer.csv", "truth.csv", "quiz.csv"):
            assert f"combex/datasets/data/li2017_quiz/{domain}/{f}" in names
    for f in ("wine_quality/winequality-red.csv", "wine_quality/winequality-white.csv",
              "diabetes/diabetes_data_raw.csv.gz", "diabetes/diabetes_target.csv.gz",
              "li2017_quiz/PROVENANCE.md", "wine_quality/PROVENANCE.md", "diabetes/PROVENANCE.md"):
        assert f"combex/datasets/data/{f}" in names
    for f in ("templates/base.html", "templates/study.html", "templates/assistant.html", "static/study.js",
              "static/combex.css", "static/uPlot.iife.min.js", "static/uPlot.min.css", "static/uPlot.LICENSE"):
        assert f"combex/web/{f}" in names  # the web app's pages and assets (no CDN)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any("__init__" in n for n in names if "/data/" in n)

"""Installation-level checks: the solver libraries coexist in one process."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "first,second",
    [("highspy", "ortools.sat.python.cp_model"), ("ortools.sat.python.cp_model", "highspy"),
     ("cvxpy", "ortools.sat.python.cp_model")],
)
def test_highs_and_ortools_load_in_either_order(first, second):
    """OR-Tools and highspy each ship libhighs.so.1; mismatched versions make the second
    import fail with an undefined symbol (see the pin in pyproject.toml)."""
    code = (
        f"import importlib; importlib.import_module({first!r}); importlib.import_module({second!r});"
        "from ortools.sat.python import cp_model; m = cp_model.CpModel(); x = m.NewBoolVar('x');"
        "m.Maximize(x); s = cp_model.CpSolver(); assert s.Solve(m) == cp_model.OPTIMAL;"
        "import highspy; highspy.Highs()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_cvxpy_highs_and_cpsat_in_one_process():
    code = (
        "import cvxpy as cp, numpy as np\n"
        "from combex.oracles import ConstraintFamily\n"
        "x = cp.Variable(2); p = cp.Problem(cp.Minimize(cp.sum(x)), [x >= 1]); p.solve(solver='HIGHS')\n"
        "assert abs(p.value - 2) < 1e-6\n"
        "dc = ConstraintFamily(3, [[1, 1, 1]], [2])\n"
        "assert dc.argmax(np.array([1.0, 2.0, 3.0])).tolist() == [False, True, True]\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]

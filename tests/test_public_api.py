"""The public API: ``import combex`` is light and reaches every subpackage; each
``__all__`` resolves; the tests use public names wherever one exists; docstrings are real."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import combex

TESTS = Path(__file__).resolve().parent


def test_import_combex_is_light_and_reaches_the_subpackages():
    code = ("import sys, combex; light = [m for m in ('numpy', 'scipy', 'cvxpy', 'networkx') if m in sys.modules];"
            "print(light); print(combex.datasets.load_quiz('IT').n_workers, combex.solvers.ICB.name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "36 icb"
    assert set(combex.SUBPACKAGES) <= set(dir(combex))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        combex.nope  # noqa: B018


def test_dir_of_combex_lists_only_public_names():
    names = dir(combex)
    assert not {"Any", "annotations", "importlib"} & set(names)
    assert all(not n.startswith("_") or n == "__version__" for n in names)
    assert "identification" in names and "identification" in combex.SUBPACKAGES
    assert combex.identification.characteristic_time is not None
    for sub in combex.SUBPACKAGES:  # nor the subpackages: no helper of an __init__ among their names
        assert not {"Any", "annotations", "importlib"} & set(dir(getattr(combex, sub))), sub


def test_the_identification_layer_holds_the_theory():
    """Queries, divergences, thresholds and T* in one place: the GLR helpers of estimation
    are the same objects, and the lower bounds the solvers report come from here."""
    from combex.estimation import _glr, _glr_unknown_variance
    from combex.identification import GLRThreshold, kl_gaussian_unknown_variance, pair_glr, pair_glr_unknown_variance

    assert GLRThreshold is _glr.GLRThreshold and pair_glr is _glr.pair_glr
    assert kl_gaussian_unknown_variance is _glr_unknown_variance.kl_gaussian_unknown_variance
    assert pair_glr_unknown_variance is _glr_unknown_variance.pair_glr_unknown_variance
    assert combex.identification.bandit_characteristic_time([1.0, 0.0]).T_star == pytest.approx(8.0)


@pytest.mark.parametrize("name", ["combex", *(f"combex.{s}" for s in combex.SUBPACKAGES)])
def test_every_public_name_resolves(name):
    mod = importlib.import_module(name)
    assert len(set(mod.__all__)) == len(mod.__all__), "duplicates in __all__"
    for attr in mod.__all__:
        assert getattr(mod, attr) is not None, f"{name}.{attr}"


def _private_imports():
    """(test file, module, name) for every ``from combex.x._private import name``."""
    for path in sorted(TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("combex."):
                parts = node.module.split(".")
                if any(p.startswith("_") for p in parts[1:]):
                    for alias in node.names:
                        yield path.name, node.module, alias.name


def test_tests_import_public_names_where_one_exists():
    offenders = []
    for fname, module, name in _private_imports():
        parts = module.split(".")
        public = ".".join(parts[: next(i for i, p in enumerate(parts) if p.startswith("_"))])
        pub = importlib.import_module(public)
        if name in getattr(pub, "__all__", ()) and getattr(pub, name) is getattr(importlib.import_module(module), name):
            offenders.append(f"{fname}: from {module} import {name} (use {public})")
    assert not offenders, "\n".join(offenders)


def test_every_public_class_and_function_has_a_docstring():
    missing = []
    for sub in combex.SUBPACKAGES:
        mod = importlib.import_module(f"combex.{sub}")
        for attr in mod.__all__:
            obj = getattr(mod, attr)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not (obj.__doc__ or "").strip():
                missing.append(f"combex.{sub}.{attr}")
    assert not missing, missing


@pytest.mark.parametrize("name", ["xy-static", "xy-adaptive", "xy-oracle"])
def test_xy_solvers_keep_their_docstrings(name):
    cls = combex.solvers.get_solver(name)
    doc = inspect.getdoc(cls)
    assert doc.startswith("XY-") and "Parameters" in doc and "Proposition 1" in doc

"""Every docstring example in the package runs (doctest), module by module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import combex

MODULES = ["combex", *sorted(
    m.name for m in pkgutil.walk_packages(combex.__path__, "combex.")
    if not m.name.startswith("combex.datasets.data")
)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # a module of an optional extra that is not installed
        pytest.skip(f"{name}: {exc}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    if not tests:
        return  # nothing to run in this module
    with np.printoptions(legacy=False):
        for t in tests:
            runner.run(t, clear_globs=True)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"

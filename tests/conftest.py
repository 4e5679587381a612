"""Test configuration.

The suite runs many small linear-algebra operations; multi-threaded BLAS spins on tiny
matrices (a 6x6 triangular solve took 1.3 ms with 2 OpenBLAS threads on a loaded 2-core
machine, 29 us with one), so tests run BLAS single-threaded. OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE are left as the machine sets them.
"""

from __future__ import annotations

import os

import pytest

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - threadpoolctl is a core dependency
    threadpool_limits = None


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    if threadpool_limits is None:
        yield
        return
    with threadpool_limits(limits=1):
        yield


def pytest_report_header(config):
    return f"combex: COMBEX_DATA={os.environ.get('COMBEX_DATA', '(unset: packaged data only)')}"

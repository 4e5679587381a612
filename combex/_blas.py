"""One BLAS thread for the small-matrix work of a run.

A bandit run does thousands of operations on d x d matrices (d ~ 10-100). A threaded
BLAS (OpenBLAS uses every core by default) is slower on them and burns every core while
doing it: ``combex demo`` on a plain install used ~3x the CPU time of a one-thread run
(see ``benchmarks/blas_threads.py``).

So every ``run`` of a solver or regret policy executes under a one-thread BLAS limit
(:class:`SingleThreadedRuns` wraps the ``run`` of each subclass), applied with a cached
:class:`threadpoolctl.ThreadpoolController`: about 40 microseconds per run, nothing per
ask / tell, and the process's own setting is restored when the run returns, so a user's
large matrix products elsewhere keep their threads.

``COMBEX_BLAS_THREADS`` changes the limit (an integer >= 1), or turns it off
(``COMBEX_BLAS_THREADS=off``).
"""

from __future__ import annotations

import functools
import os
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS first)
from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads", "SingleThreadedRuns", "ENV_VAR"]

#: Environment variable overriding the BLAS thread limit of runs ("off" disables it).
ENV_VAR = "COMBEX_BLAS_THREADS"

_lock = threading.Lock()
_controller: Any = None
_depth = threading.local()
F = TypeVar("F", bound=Callable[..., Any])


def _get_controller() -> Any:
    """A ThreadpoolController made once, after numpy's and scipy's BLAS are loaded."""
    global _controller
    if _controller is None:
        with _lock:
            if _controller is None:
                _controller = ThreadpoolController()
    return _controller


def _limit() -> int | None:
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in ("", "1"):
        return 1
    if raw in ("off", "none", "0"):
        return None
    try:
        n = int(raw)
    except ValueError:
        return 1
    return n if n >= 1 else 1


@contextmanager
def blas_threads() -> Iterator[None]:
    """Limit BLAS to one thread (or ``$COMBEX_BLAS_THREADS``) inside the block.

    Re-entrant: only the outermost block sets and restores the limit.
    """
    depth = getattr(_depth, "n", 0)
    n = _limit() if depth == 0 else None
    if n is None:
        _depth.n = depth + 1
        try:
            yield
        finally:
            _depth.n = depth
        return
    with _get_controller().limit(limits=n, user_api="blas"):
        _depth.n = depth + 1
        try:
            yield
        finally:
            _depth.n = depth


def _wrap(run: F) -> F:
    if getattr(run, "_combex_blas", False):
        return run

    @functools.wraps(run)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with blas_threads():
            return run(*args, **kwargs)

    wrapped._combex_blas = True  # type: ignore[attr-defined]
    return wrapped  # type: ignore[return-value]


class SingleThreadedRuns:
    """Mixin: the ``run`` method of every subclass executes under :func:`blas_threads`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        run = getattr(cls, "run", None)
        if callable(run) and not getattr(run, "_combex_blas", False):
            cls.run = _wrap(run)  # type: ignore[attr-defined]

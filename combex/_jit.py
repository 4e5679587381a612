"""Compile a kernel with numba when it is installed (the ``mips`` extra), once a process.

A kernel is a plain Python function written in numba's subset (loops over float64 / intp
arrays); :func:`compiled` returns its compiled form, kept for the process and in numba's
on-disk cache, or ``None`` without numba, so the caller keeps its numpy path. Compiled
with ``cache=True`` and ``nogil=True``; the caller adds its options (``boundscheck``,
``error_model``, ``fastmath``; fastmath off unless asked: no reassociation, no fused
multiply-add, so a loop written in numpy's order gives numpy's bits).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

__all__ = ["compiled"]

_COMPILED: dict[tuple[Any, ...], Any] = {}
_HELPERS: set[Any] = set()


def compiled(fn: Callable[..., Any], *, helpers: Iterable[Callable[..., Any]] = (), **options: Any) -> Any:
    """The numba-compiled ``fn`` (with ``options``), or ``None`` when numba is not installed.

    ``helpers`` are the plain functions ``fn`` calls: made callable from compiled code
    (numba's ``register_jitable``, compiled inline into ``fn``), unchanged for Python.
    """
    key = (fn, tuple(sorted(options.items())))
    if key not in _COMPILED:
        try:
            import numba  # optional (the mips extra)
        except ImportError:
            _COMPILED[key] = None
        else:
            from numba.extending import register_jitable

            for helper in helpers:
                if helper not in _HELPERS:
                    register_jitable(helper)
                    _HELPERS.add(helper)
            _COMPILED[key] = numba.njit(cache=True, nogil=True, **options)(fn)
    return _COMPILED[key]

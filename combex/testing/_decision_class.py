"""Conformance suite for decision classes (built-in or plug-in)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_rng
from ..exceptions import InvalidParameterError
from ..oracles import DecisionClass

__all__ = ["check_decision_class"]

# brute-force comparisons only for classes with at most this many members
_MAX_MEMBERS = 2000
# the generic enumerate() (2^n membership tests) is used only up to this n
_GENERIC_ENUM_N = 12
_REL_TOL = 1e-9


def _fail(dc: Any, what: str) -> AssertionError:
    return AssertionError(f"{type(dc).__name__}: {what}")


def _members(dc: Any) -> NDArray[np.bool_] | None:
    """All members as a (m, n) bool array, or None when the class is too large or does
    not enumerate."""
    size = dc.size
    if size is not None and size > _MAX_MEMBERS:
        return None
    generic = type(dc).enumerate is DecisionClass.enumerate
    if generic and dc.n > _GENERIC_ENUM_N:
        return None
    try:
        rows = list(itertools.islice(dc.enumerate(), _MAX_MEMBERS + 1))
    except (InvalidParameterError, NotImplementedError):
        return None
    if len(rows) > _MAX_MEMBERS:
        return None
    if not rows:
        raise _fail(dc, "enumerate() yielded no member (an empty class must not be built).")
    return np.array(rows, dtype=bool).reshape(len(rows), dc.n)


def _check_mask(dc: Any, m: Any, where: str) -> NDArray[np.bool_]:
    if not isinstance(m, np.ndarray):
        raise _fail(dc, f"{where} returned {type(m).__name__}, expected a numpy array.")
    if m.dtype != np.bool_ or m.shape != (dc.n,):
        raise _fail(dc, f"{where} returned an array of dtype {m.dtype} and shape {m.shape}; expected bool of shape ({dc.n},).")
    if not dc.contains(m):
        raise _fail(dc, f"{where} returned {np.flatnonzero(m).tolist()}, which contains() rejects.")
    return m


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= _REL_TOL * max(1.0, scale)


def check_decision_class(dc: Any, *, rng: Any = None, n_trials: int = 20) -> None:
    """Check that ``dc`` honours the :class:`~combex.oracles.DecisionClass` contract.

    Runs ``n_trials`` random weight vectors (Gaussian, and small integers to create ties)
    through every capability and raises :class:`AssertionError` with a clear message on
    the first violation. When the class is small (at most 2000 members, listed by
    ``enumerate()``) every answer is compared with brute force, by objective value (ties
    may be broken differently).

    Checked:

    - ``argmax`` returns a fresh bool array of shape (n,) that ``contains`` accepts; it
      is deterministic, unchanged when the weights are multiplied by a power of two
      (exact in floating point) and optimal for a positive non-power-of-two multiple;
      it is optimal (brute force); weights of the wrong length, non-finite or 2-d raise
      InvalidParameterError;
    - ``argmax_excluding`` returns a member different from the excluded one whose value
      is the best among the other members (or None only when there is no other member),
      both for the top member and for another member;
    - ``argmax_constrained`` honours ``include``/``exclude`` and is optimal among the
      members that satisfy them, returning None exactly when none does;
    - ``enumerate`` yields distinct members that ``contains`` accepts; ``size`` equals
      their number; ``contains`` agrees with the list on nearby non-members and rejects
      masks of the wrong shape; ``width`` is None or a positive int; ``params`` is a dict.

    Parameters
    ----------
    dc : DecisionClass
        The instance to check.
    rng : None, int, SeedSequence or Generator
        Source of the random weights.
    n_trials : int, default=20
        Number of random weight vectors.

    Raises
    ------
    AssertionError
        On the first violation, naming the class and the check.

    Examples
    --------
    >>> from combex.oracles import TopK
    >>> from combex.testing import check_decision_class
    >>> check_decision_class(TopK(6, 2), rng=0)
    """
    if not isinstance(dc, DecisionClass):
        raise AssertionError(f"{dc!r} is not a combex.oracles.DecisionClass instance.")
    n_trials = check_int(n_trials, "n_trials", owner="check_decision_class", low=1)
    gen = check_rng(rng)
    n = dc.n
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise _fail(dc, f"n must be a positive int; got {n!r}.")
    if not isinstance(dc.params(), dict):
        raise _fail(dc, "params() must return a dict.")
    repr(dc)
    width = dc.width
    if width is not None and (not isinstance(width, (int, np.integer)) or width < 1):
        raise _fail(dc, f"width must be None or a positive int; got {width!r}.")

    # ---------------------------------------------------------------- bad weights
    for bad, label in (
        (np.zeros(n + 1), "of length n+1"),
        (np.zeros((n, 1)), "of shape (n, 1)"),
        (np.full(n, np.nan), "with NaN"),
        (np.full(n, np.inf), "with inf"),
    ):
        try:
            dc.argmax(bad)
        except InvalidParameterError:
            pass
        except Exception as exc:  # noqa: BLE001 - reported
            raise _fail(dc, f"argmax(weights {label}) raised {exc!r}; expected InvalidParameterError.") from exc
        else:
            raise _fail(dc, f"argmax(weights {label}) did not raise InvalidParameterError.")
    for bad_mask in (np.zeros(n + 1, dtype=bool), np.zeros((n, 2), dtype=bool)):
        try:
            dc.contains(bad_mask)
        except InvalidParameterError:
            pass
        except Exception as exc:  # noqa: BLE001
            raise _fail(dc, f"contains(mask of shape {bad_mask.shape}) raised {exc!r}; expected InvalidParameterError.") from exc
        else:
            raise _fail(dc, f"contains(mask of shape {bad_mask.shape}) did not raise InvalidParameterError.")

    # ---------------------------------------------------------------- enumeration
    M = _members(dc)
    if M is not None:
        keys = {np.packbits(r).tobytes() for r in M}
        if len(keys) != M.shape[0]:
            raise _fail(dc, "enumerate() yielded the same member twice.")
        for r in M:
            if not dc.contains(r):
                raise _fail(dc, f"enumerate() yielded {np.flatnonzero(r).tolist()}, which contains() rejects.")
        if dc.size is not None and dc.size != M.shape[0]:
            raise _fail(dc, f"size is {dc.size} but enumerate() yielded {M.shape[0]} members.")
        # nearby non-members: flip one bit of some members
        for r in M[: min(20, M.shape[0])]:
            for i in gen.choice(n, size=min(n, 3), replace=False):
                f = r.copy()
                f[i] = ~f[i]
                if dc.contains(f) != (np.packbits(f).tobytes() in keys):
                    raise _fail(dc, f"contains({np.flatnonzero(f).tolist()}) disagrees with enumerate().")
        Mf = M.astype(np.float64)

    # ---------------------------------------------------------------- trials
    for t in range(n_trials):
        w = gen.normal(size=n) if t % 2 == 0 else gen.integers(-2, 3, size=n).astype(np.float64)
        scale = float(np.abs(w).sum())
        m = _check_mask(dc, dc.argmax(w), "argmax")
        val = float(w[m].sum())
        again = dc.argmax(w.copy())
        if not np.array_equal(m, again):
            raise _fail(dc, f"argmax is not deterministic for weights {w.tolist()}.")
        # the caller owns the answer: later calls must not change it, and mutating it
        # must not corrupt the class
        m_saved = m.copy()
        dc.argmax(-w)
        if not np.array_equal(m, m_saved):
            raise _fail(dc, "argmax returned a view of internal state (a later call changed an earlier answer).")
        m[...] = ~m
        if not np.array_equal(dc.argmax(w), m_saved):
            raise _fail(dc, "argmax returned a view of internal state (mutating it changed later answers).")
        m = m_saved
        for c in (4.0, 0.25):
            if not np.array_equal(dc.argmax(w * c), m):
                raise _fail(dc, f"argmax changed when the weights were multiplied by {c} (weights {w.tolist()}).")
        m3 = _check_mask(dc, dc.argmax(w * 3.0), "argmax")
        if not _close(float(w[m3].sum()), val, scale):
            raise _fail(dc, f"argmax(3 w) has value {float(w[m3].sum())} under w, argmax(w) has {val}.")
        if M is not None:
            vals = Mf @ w
            best = float(vals.max())
            if not _close(val, best, scale):
                raise _fail(dc, f"argmax value {val} differs from the brute-force optimum {best} (weights {w.tolist()}).")

        # argmax_excluding: the top member, then another member
        targets = [m]
        if M is not None and M.shape[0] > 1:
            targets.append(M[int(gen.integers(M.shape[0]))])
        for ex in targets:
            r = dc.argmax_excluding(w, ex.copy())
            if M is not None:
                others = ~np.all(M == ex, axis=1)
                if not np.any(others):
                    if r is not None:
                        raise _fail(dc, "argmax_excluding returned a member although the class has only the excluded one.")
                    continue
                if r is None:
                    raise _fail(dc, f"argmax_excluding returned None but other members exist (excluded {np.flatnonzero(ex).tolist()}).")
                best_other = float((Mf[others] @ w).max())
                if not _close(float(w[r].sum()), best_other, scale):
                    raise _fail(
                        dc,
                        f"argmax_excluding value {float(w[r].sum())} differs from the brute-force "
                        f"best other member {best_other} (excluded {np.flatnonzero(ex).tolist()}, weights {w.tolist()}).",
                    )
            if r is not None:
                _check_mask(dc, r, "argmax_excluding")
                if np.array_equal(r, ex):
                    raise _fail(dc, "argmax_excluding returned the excluded member.")
                if not (float(w[r].sum()) <= val + _REL_TOL * max(1.0, scale)):
                    raise _fail(dc, "argmax_excluding returned a member better than argmax.")

        # argmax_constrained
        inc_pool = np.flatnonzero(m)
        exc_pool = np.flatnonzero(~m)
        inc = gen.choice(inc_pool, size=min(inc_pool.size, int(gen.integers(0, 3))), replace=False) if inc_pool.size else np.zeros(0, dtype=int)
        exc = gen.choice(n, size=min(n, int(gen.integers(0, 3))), replace=False)
        exc = np.setdiff1d(exc, inc)
        if t % 3 == 2 and exc_pool.size:  # force in an element the argmax did not use
            inc = np.union1d(inc, gen.choice(exc_pool, size=1))
            exc = np.setdiff1d(exc, inc)
        r = dc.argmax_constrained(w, include=inc.tolist(), exclude=exc.tolist())
        if r is not None:
            _check_mask(dc, r, "argmax_constrained")
            if not (np.all(r[inc]) and not np.any(r[exc])):
                raise _fail(dc, f"argmax_constrained ignored include={inc.tolist()} / exclude={exc.tolist()}.")
        if M is not None:
            ok = np.all(M[:, inc], axis=1) & ~np.any(M[:, exc], axis=1)
            if np.any(ok) and r is None:
                raise _fail(dc, f"argmax_constrained returned None but a member honours include={inc.tolist()}, exclude={exc.tolist()}.")
            if not np.any(ok) and r is not None:
                raise _fail(dc, "argmax_constrained returned a member although none honours the constraints.")
            if r is not None:
                best_c = float((Mf[ok] @ w).max())
                if not _close(float(w[r].sum()), best_c, scale):
                    raise _fail(dc, f"argmax_constrained value {float(w[r].sum())} differs from the brute-force {best_c}.")
        # an impossible request: the same element both in and out
        e = int(gen.integers(n))
        if dc.argmax_constrained(w, include=[e], exclude=[e]) is not None:
            raise _fail(dc, "argmax_constrained with an element both included and excluded must return None.")

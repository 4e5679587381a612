"""Shared argument checks producing messages of one shape.

The message shape follows scikit-learn::

    The 'k' parameter of TopK must be an int in the range [1, 10]. Got 12 instead.

Every check returns the validated (and converted) value, so call sites read
``self.k = check_int(k, "k", owner="TopK", low=1, high=n)``.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from .exceptions import InvalidParameterError

__all__ = [
    "check_int",
    "check_float",
    "check_probability",
    "check_choice",
    "check_bool",
    "check_weights",
    "check_mask",
    "check_matrix",
    "check_rng",
    "param_error",
]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, np.ndarray):
        return f"array of shape {v.shape}"
    return repr(v)


def param_error(name: str, owner: str | None, requirement: str, value: Any) -> InvalidParameterError:
    """Build the standard error: "The 'name' parameter of Owner must be ... Got v instead."."""
    where = f" of {owner}" if owner else ""
    return InvalidParameterError(
        f"The {name!r} parameter{where} must be {requirement}. Got {_fmt(value)} instead."
    )


def _range_text(low: Any, high: Any, closed: str) -> str:
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    left = "[" if closed in ("both", "left") and low is not None else "("
    right = "]" if closed in ("both", "right") and high is not None else ")"
    return f"{left}{lo}, {hi}{right}"


def check_int(
    value: Any,
    name: str,
    *,
    owner: str | None = None,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """Check that ``value`` is an integer (not a bool) in the closed range [low, high]."""
    ok = isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
    if ok:
        v = int(value)
        ok = (low is None or v >= low) and (high is None or v <= high)
    if not ok:
        raise param_error(name, owner, f"an int in the range {_range_text(low, high, 'both')}", value)
    return int(value)


def check_float(
    value: Any,
    name: str,
    *,
    owner: str | None = None,
    low: float | None = None,
    high: float | None = None,
    closed: str = "both",
) -> float:
    """Check that ``value`` is a finite real number in the interval given by ``closed``
    (one of "both", "left", "right", "neither")."""
    ok = isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_))
    if ok:
        v = float(value)
        ok = np.isfinite(v)
        if ok and low is not None:
            ok = v >= low if closed in ("both", "left") else v > low
        if ok and high is not None:
            ok = v <= high if closed in ("both", "right") else v < high
    if not ok:
        raise param_error(name, owner, f"a float in the range {_range_text(low, high, closed)}", value)
    return float(value)


def check_probability(value: Any, name: str = "delta", *, owner: str | None = None) -> float:
    """Check a confidence level or error probability in the open interval (0, 1)."""
    return check_float(value, name, owner=owner, low=0.0, high=1.0, closed="neither")


def check_choice(value: Any, name: str, options: Sequence[Any], *, owner: str | None = None) -> Any:
    """Check that ``value`` is one of ``options``."""
    if value not in options:
        raise param_error(name, owner, f"one of {list(options)!r}", value)
    return value


def check_bool(value: Any, name: str, *, owner: str | None = None) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise param_error(name, owner, "a bool", value)
    return bool(value)


def _reject_complex(value: Any, name: str, owner: str | None) -> None:
    """Refuse complex input: casting it to float would silently drop the imaginary part."""
    if isinstance(value, np.ndarray):
        bad = np.iscomplexobj(value)
    elif isinstance(value, (complex, np.complexfloating)):
        bad = True
    elif isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):  # ragged: the float conversion reports it
            return
        bad = np.iscomplexobj(arr) or (arr.dtype == object and any(
            isinstance(v, (complex, np.complexfloating)) for v in arr.ravel()))
    else:
        bad = np.iscomplexobj(value)
    if bad:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be real. Got a complex "
            "value instead (its imaginary part would be dropped)."
        )


def check_weights(
    weights: Any, n: int, name: str = "weights", *, owner: str | None = None, dtype: Any = np.float64
) -> NDArray[Any]:
    """Check a real vector of length ``n`` with finite entries; return it as ``dtype``
    (float64 by default)."""
    _reject_complex(weights, name, owner)
    try:
        w = np.asarray(weights, dtype=dtype)
    except (TypeError, ValueError):
        raise param_error(name, owner, f"a real array of shape ({n},)", weights) from None
    if w.shape != (n,):
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be a real array of "
            f"shape ({n},). Got an array of shape {w.shape} instead."
        )
    if not np.all(np.isfinite(w)):
        bad = int(np.flatnonzero(~np.isfinite(w))[0])
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must have finite entries. "
            f"Got {w[bad]!r} at index {bad} instead."
        )
    return w


def check_mask(mask: Any, n: int, name: str = "mask", *, owner: str | None = None) -> NDArray[np.bool_]:
    """Check an indicator vector of length ``n`` (bool, or 0/1 numbers); return a bool array."""
    m = np.asarray(mask)
    if m.shape != (n,):
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be a 0/1 array of "
            f"shape ({n},). Got an array of shape {m.shape} instead."
        )
    if m.dtype != np.bool_:
        if not np.all((m == 0) | (m == 1)):
            raise InvalidParameterError(
                f"The {name!r} parameter{' of ' + owner if owner else ''} must contain only 0 and 1."
                f" Got values {np.unique(m)[:5].tolist()} instead."
            )
        m = m.astype(bool)
    return m


def check_matrix(
    value: Any,
    name: str,
    *,
    owner: str | None = None,
    shape: tuple[int | None, int | None] | None = None,
    symmetric: bool = False,
) -> NDArray[np.float64]:
    """Check a finite real 2-d array (optionally of a given shape, optionally symmetric)."""
    _reject_complex(value, name, owner)
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, owner, "a real 2-d array", value) from None
    if a.ndim != 2:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be a 2-d array. "
            f"Got an array of shape {a.shape} instead."
        )
    if shape is not None:
        for axis, want in enumerate(shape):
            if want is not None and a.shape[axis] != want:
                want_txt = tuple("*" if s is None else s for s in shape)
                raise InvalidParameterError(
                    f"The {name!r} parameter{' of ' + owner if owner else ''} must have shape "
                    f"{want_txt}. Got an array of shape {a.shape} instead."
                )
    if not np.all(np.isfinite(a)):
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must have finite entries."
        )
    if symmetric and a.shape[0] != a.shape[1]:
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be a square matrix. "
            f"Got an array of shape {a.shape} instead."
        )
    if symmetric and not np.allclose(a, a.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(a).max(initial=0)))):
        raise InvalidParameterError(
            f"The {name!r} parameter{' of ' + owner if owner else ''} must be a symmetric matrix."
        )
    return a


def check_rng(rng: Any) -> np.random.Generator:
    """Normalize ``rng`` (None, int, SeedSequence, BitGenerator or Generator) per SPEC 7."""
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise param_error("rng", None, "None, an int, a SeedSequence or a Generator", rng) from None

"""Solvers with a cut stopping threshold: the proof that :func:`check_solver` catches one.

A conformance suite is only as good as the broken solvers it fails. :func:`broken_solver`
takes a built-in PAC solver and returns a copy whose stopping rule is made too eager: its
threshold (or the confidence radius it compares) multiplied by ``factor`` (0.1: cut 10x).
Everything else -- sampling rule, recommendation, settings, save / resume -- is the
solver's own, so the copy looks like a correct solver until its error rate is measured.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_float
from ..exceptions import InvalidParameterError
from ._solver import _as_solver

__all__ = ["broken_solver", "BROKEN_HOOKS"]


class _ScaledRadius:
    """A LIL radius ``U`` (:class:`~combex.estimation._lil.LILRadius`) times ``factor``."""

    def __init__(self, U: Any, factor: float) -> None:
        self.U, self.factor = U, factor

    def __call__(self, t: ArrayLike) -> NDArray[np.float64]:
        return self.factor * self.U(t)

    def scalar(self, t: float) -> float:
        return self.factor * self.U.scalar(t)


class _ScaledThreshold:
    """A GLR threshold object times ``factor``: its scalar form ``beta(t, counts)``, its
    per-pair forms (``pairs``, ``pairs_from_terms``), its per-member form (``sets``) and its
    ``constant``; every other attribute is the threshold's own."""

    def __init__(self, beta: Any, factor: float) -> None:
        self._beta, self._factor = beta, factor

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._factor * self._beta(*args, **kwargs)

    def pairs(self, *args: Any, **kwargs: Any) -> Any:
        return self._factor * self._beta.pairs(*args, **kwargs)

    def pairs_from_terms(self, *args: Any, **kwargs: Any) -> Any:
        return self._factor * self._beta.pairs_from_terms(*args, **kwargs)

    def sets(self, *args: Any, **kwargs: Any) -> Any:
        return self._factor * self._beta.sets(*args, **kwargs)

    @property
    def constant(self) -> float:
        return self._factor * self._beta.constant

    def __getattr__(self, name: str) -> Any:
        return getattr(self._beta, name)


def _lil_radii(base: type, f: float) -> dict[str, Any]:
    # lil'RandLUCB, lil'CLUCB, lil'LUCB, LUCB++: U(T, omega) of Lemma 2.1 in every bound
    def _make_radii(self: Any) -> None:
        base._make_radii(self)
        same = self._U_low is self._U_high
        self._U_high = _ScaledRadius(self._U_high, f)
        self._U_low = self._U_high if same else _ScaledRadius(self._U_low, f)

    return {"_make_radii": _make_radii}


def _lucb_radius(base: type, f: float) -> dict[str, Any]:
    # LUCB1: beta(u, t) = sqrt(2 sigma^2 log(k1 N t^4 / delta) / u) is linear in sigma
    def _bounds(self: Any) -> Any:
        sigma = self.sigma
        self.sigma = f * sigma
        try:
            return base._bounds(self)
        finally:
            self.sigma = sigma

    return {"_bounds": _bounds}


def _glr_threshold(base: type, f: float) -> dict[str, Any]:
    # Track-and-Stop, Top-Two, FW sampling, CombGame: the threshold object of the stopping rule
    # (its scalar form, the per-pair thresholds c + h(N_i) + h(N_j), the per-member ones)
    def _configure(self: Any, s: Any) -> None:
        base._configure(self, s)
        self.stopping_threshold = _ScaledThreshold(self.stopping_threshold, f)

    return {"_configure": _configure}


def _static_radius(base: type, f: float) -> dict[str, Any]:
    # SAQM, SA-FOA, ICB, Exhaustive: the radius C_t of the stopping condition
    def _radius(self: Any) -> float:
        return f * base._radius(self)

    return {"_radius": _radius}


def _lingape_radius(base: type, f: float) -> dict[str, Any]:
    # LinGapE: C_t of eq. (3) / (4), in its vectorized and scalar forms
    def _radius(self: Any, dlogdet: Any, t: Any) -> Any:
        return f * base._radius(self, dlogdet, t)

    def _radius_one(self: Any, kq: float, t: float) -> float:
        return f * base._radius_one(self, kq, t)

    return {"_radius": _radius, "_radius_one": _radius_one}


def _lingape_start(cls: type, exp_cls: type) -> dict[str, Any]:
    # LinGapE.start names its exploration class: the copy starts the broken one
    def start(self: Any, problem: Any, *, rng: Any = None) -> Any:
        return exp_cls(self, problem, rng)

    return {"start": start}


def _linear_glr_threshold(base: type, f: float) -> dict[str, Any]:
    # LinGame and the other linear GLR solvers: stop once Z_x(t) > f beta_x(t) for every
    # alternative x, i.e. the margin min_x Z_x / beta_x of the check exceeds f
    def _update(self: Any, batch: Any, reward_sums: Any) -> None:
        base._update(self, batch, reward_sums)
        g = getattr(self, "glr", None)
        if not self.done and self.phase == "run" and g is not None and math.isfinite(g.margin) and g.margin > f:
            self.certificate = {"margin": g.margin, "broken_factor": f}
            self.stop("identified", f"GLR: Z_x(t) > {f} beta_x(t) for every alternative")

    return {"_update": _update}


#: Exploration base classes and the override that cuts their stopping rule, in lookup
#: order ("module:Class" of the exploration -> hook).
BROKEN_HOOKS: dict[str, Any] = {
    "combex.solvers.semi_bandit:_LUCBExploration": _lucb_radius,
    "combex.solvers.semi_bandit:_BestKExploration": _lil_radii,
    "combex.solvers.glr:GLRExploration": _glr_threshold,
    "combex.solvers.full_bandit:_StaticExploration": _static_radius,
    "combex.solvers.linear:LinGapEExploration": _lingape_radius,
    "combex.solvers.optimal_linear:LinearGLRExploration": _linear_glr_threshold,
}


def _hook_for(exp_cls: type) -> tuple[type, Any] | None:
    for key, hook in BROKEN_HOOKS.items():
        mod, name = key.split(":")
        base = getattr(importlib.import_module(mod), name)
        if issubclass(exp_cls, base):
            return base, hook
    return None


def broken_solver(solver: Any, factor: float = 0.1) -> Any:
    """A copy of a built-in PAC solver whose stopping threshold is multiplied by ``factor``.

    The threshold hook depends on the family: the confidence radius of the LUCB family
    (LUCB1's ``beta(u, t)``; the LIL radius ``U(T, omega)`` of lil'RandLUCB, lil'CLUCB,
    lil'LUCB, LUCB++), the GLR threshold of Track-and-Stop, Top-Two, FW sampling and
    CombGame (``stopping_threshold`` and the per-pair thresholds), the radius ``C_t`` of SAQM,
    SA-FOA, ICB, Exhaustive and LinGapE, and the mixture threshold ``beta_x(t)`` of the
    linear GLR solvers (LinGame, linear Top-Two...). Everything else is the solver's own.

    Parameters
    ----------
    solver : Solver or str
        A built-in PAC solver instance (its settings are kept) or a registered name.
    factor : float in (0, 1], default 0.1
        The multiplier of the threshold (0.1: cut 10x; 1: the solver unchanged but for its
        class).

    Returns
    -------
    Solver
        An instance of a subclass of the solver's class (same ``name`` and settings;
        ``broken_factor`` holds ``factor``).

    Raises
    ------
    InvalidParameterError
        For a solver without a known threshold hook (lil'UCB, whose stopping rule counts
        samples; RAGE, XY designs, BoundedME; plug-ins).

    Examples
    --------
    >>> from combex.testing import broken_solver
    >>> bad = broken_solver("lucb", 0.1)
    >>> bad.name, bad.broken_factor
    ('lucb', 0.1)
    """
    f = check_float(factor, "factor", owner="broken_solver", low=0.0, high=1.0, closed="right")
    solver = _as_solver(solver)
    cls = type(solver)
    exp_cls = solver._exploration_class() if hasattr(solver, "_exploration_class") else None
    found = None if exp_cls is None else _hook_for(exp_cls)
    if found is None:
        raise InvalidParameterError(
            f"The 'solver' parameter of broken_solver must be a built-in solver with a known stopping threshold "
            f"hook ({', '.join(k.split(':')[1] for k in BROKEN_HOOKS)} explorations). Got {solver!r} instead."
        )
    # the hook calls the methods of the solver's own exploration class (its MRO)
    broken_exp = type(f"Broken{exp_cls.__name__}", (exp_cls,), found[1](exp_cls, f))
    extra = _lingape_start(cls, broken_exp) if found[1] is _lingape_radius else {}
    broken_cls = type(f"Broken{cls.__name__}", (cls,), {
        **extra,
        "exploration_class": broken_exp,
        "broken_factor": f,
        "__module__": __name__,
        "__doc__": f"{cls.__name__} with its stopping threshold multiplied by {f} (see broken_solver).",
    })
    return broken_cls(**solver.get_params())

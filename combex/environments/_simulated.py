"""Simulated environments: Gaussian and Bernoulli arms, and the full-bandit simulator.

Every environment draws the sum of ``count`` i.i.d. rewards in one call, exactly in
distribution, for any ``count`` (int64 counts included): a sum of Gaussians is Gaussian,
a sum of Bernoullis is binomial, a sum of Rademacher signs is an affine binomial.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import _reject_complex, check_bool, check_choice, check_float, check_int, param_error
from ..exceptions import InvalidParameterError
from ..oracles import TopK
from ._base import ArmType, Environment, NoiseModel

__all__ = ["GaussianArms", "BernoulliArms", "FullBandit"]

_INT64_MAX = np.iinfo(np.int64).max


def _check_vector(values: Any, name: str, owner: str) -> NDArray[np.float64]:
    """A non-empty finite real 1-d array (complex refused, not cast)."""
    _reject_complex(values, name, owner)
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, owner, "a non-empty 1-d array of finite reals", values) from None
    if v.ndim != 1 or v.size == 0:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a non-empty 1-d array of finite reals. "
            f"Got an array of shape {v.shape} instead."
        )
    if not np.all(np.isfinite(v)):
        bad = int(np.flatnonzero(~np.isfinite(v))[0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have finite entries. "
            f"Got {v[bad]!r} at index {bad} instead."
        )
    return v.copy()


def _check_unit_interval(p: NDArray[np.float64], name: str, owner: str) -> NDArray[np.float64]:
    bad = (p < 0.0) | (p > 1.0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have entries in the range [0, 1]. "
            f"Got {float(p[i])!r} at index {i} instead."
        )
    return p


def _as_list(v: NDArray[Any]) -> list[Any]:
    return [x.item() for x in v]


class GaussianArms(Environment):
    """Independent Gaussian arms indexed ``0..n-1``.

    A reward of arm ``i`` is ``N(means[i], sigma[i]^2)``; the sum of ``c`` rewards is
    drawn in one step as ``N(c * means[i], c * sigma[i]^2)``.

    Parameters
    ----------
    means : array of shape (n_arms,)
        Expected rewards.
    sigma : float or array of shape (n_arms,), default 1.0
        Standard deviation of one reward (a scalar for all arms, or one per arm), > 0.
    rng : None, int, SeedSequence or Generator
        Generator of the noise.

    Notes
    -----
    ``noise`` is ``NoiseModel("gaussian", sigma=max(sigma), bound=None)``.

    Examples
    --------
    >>> env = GaussianArms([0.0, 1.0], sigma=0.5, rng=0)
    >>> s, c = env.pull(1, count=1000)
    >>> c, abs(s / c - 1.0) < 0.1
    (1000, True)
    """

    arm_type: ArmType = "index"

    def __init__(self, means: Any, *, sigma: Any = 1.0, rng: Any = None) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        self._means = _check_vector(means, "means", owner)
        self.n_arms = int(self._means.size)
        if np.ndim(sigma) == 0:
            s = check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
            self._sigma_scalar: float | None = s
            self._sigma = np.full(self.n_arms, s)
        else:
            sv = _check_vector(sigma, "sigma", owner)
            if sv.shape != (self.n_arms,):
                raise InvalidParameterError(
                    f"The 'sigma' parameter of {owner} must be a float or an array of shape "
                    f"({self.n_arms},). Got an array of shape {sv.shape} instead."
                )
            if np.any(sv <= 0):
                i = int(np.flatnonzero(sv <= 0)[0])
                raise InvalidParameterError(
                    f"The 'sigma' parameter of {owner} must have entries in the range (0, inf). "
                    f"Got {float(sv[i])!r} at index {i} instead."
                )
            self._sigma_scalar = None
            self._sigma = sv
        self.noise = NoiseModel(kind="gaussian", sigma=float(self._sigma.max()), bound=None)

    @property
    def sigma(self) -> NDArray[np.float64]:
        """Per-arm noise standard deviations (a copy)."""
        return self._sigma.copy()

    def means(self) -> NDArray[np.float64]:
        return self._means.copy()

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        if arms.shape[0] == 1:  # one arm (adaptive solvers): the same draw and arithmetic in scalars
            a, c1 = int(arms[0]), float(counts[0])
            z1 = self.rng.standard_normal()
            return np.array([c1 * float(self._means[a]) + math.sqrt(c1) * float(self._sigma[a]) * z1])
        if arms.shape[0] == 2:  # a pair (LUCB family): the same two draws and arithmetic in scalars
            (a, b), (ca, cb) = arms.tolist(), counts.tolist()
            za = self.rng.standard_normal()
            zb = self.rng.standard_normal()
            ca, cb = float(ca), float(cb)
            return np.array([ca * float(self._means[a]) + math.sqrt(ca) * float(self._sigma[a]) * za,
                             cb * float(self._means[b]) + math.sqrt(cb) * float(self._sigma[b]) * zb])
        c = counts.astype(np.float64)
        z = self.rng.standard_normal(len(arms))
        return c * self._means[arms] + np.sqrt(c) * self._sigma[arms] * z

    def params(self) -> dict[str, Any]:
        sigma: Any = self._sigma_scalar if self._sigma_scalar is not None else _as_list(self._sigma)
        return {"means": _as_list(self._means), "sigma": sigma}


class BernoulliArms(Environment):
    """Independent Bernoulli arms indexed ``0..n-1``.

    A reward of arm ``i`` is 1 with probability ``means[i]`` and 0 otherwise; the sum of
    ``c`` rewards is drawn in one step as ``Binomial(c, means[i])``.

    Parameters
    ----------
    means : array of shape (n_arms,)
        Success probabilities, each in [0, 1].
    rng : None, int, SeedSequence or Generator
        Generator of the noise.

    Notes
    -----
    ``noise`` is ``NoiseModel("bernoulli", sigma=0.5, bound=1.0)``. A Bernoulli variable
    is 1/2-sub-Gaussian (Hoeffding's lemma: its range has length 1). Its noise
    ``X - p`` lies in ``[-p, 1 - p]``; the reported bound is the a-priori bound
    ``[-1, 1]``, valid for every p, so that it reveals nothing about the means (the tight
    value ``max(p, 1 - p)`` would).
    """

    arm_type: ArmType = "index"

    def __init__(self, means: Any, *, rng: Any = None) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        self._means = _check_unit_interval(_check_vector(means, "means", owner), "means", owner)
        self.n_arms = int(self._means.size)
        self.noise = NoiseModel(kind="bernoulli", sigma=0.5, bound=1.0)

    def means(self) -> NDArray[np.float64]:
        return self._means.copy()

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        return self.rng.binomial(counts, self._means[arms]).astype(np.float64)

    def params(self) -> dict[str, Any]:
        return {"means": _as_list(self._means)}


_FULL_NOISES = ("gaussian", "rademacher", "bernoulli")


class FullBandit(Environment):
    """Combinatorial pure exploration with full-bandit feedback (the simulator of the
    full-bandit paper, Section 2).

    Pulling a super-arm ``M`` (a bool mask over the ``n`` base arms) returns
    ``r_M = theta(M) + sum_{e in M} eps(e)``: the sum of the members' rewards with
    independent per-arm noise; the members' individual rewards are not observed. The sum of
    ``c`` pulls is drawn in one step:

    * ``"gaussian"``: ``eps(e) ~ N(0, sigma^2)``; the sum is ``N(c theta(M), c |M| sigma^2)``.
    * ``"rademacher"``: ``eps(e) = +-R`` with probability 1/2 each (``R = sigma``; bounded
      noise as in the paper's model, ``eps in [-R, R]``); the sum is
      ``c theta(M) + R (2 B - c |M|)`` with ``B ~ Binomial(c |M|, 1/2)``.
    * ``"bernoulli"``: ``X(e) ~ Bernoulli(theta(e))`` (means in [0, 1]); the sum is
      ``sum_{e in M} Binomial(c, theta(e))`` (one binomial per member).

    Any mask may be pulled (the environment does not require membership in the decision
    class; solvers choose what they pull).

    Parameters
    ----------
    means : array of shape (n,)
        theta, the expected rewards of the base arms.
    k : int, optional
        Build the decision class ``combex.oracles.TopK(n, k)`` (size-k subsets). Give
        either ``k`` or ``decision_class``, not both.
    decision_class : DecisionClass, optional
        The family of super-arms used by :meth:`best`; its ground set must have size n.
        None (and no ``k``) leaves the environment without a decision class.
    noise : {"gaussian", "rademacher", "bernoulli"}, default "gaussian"
    sigma : float, optional
        Gaussian standard deviation, or the Rademacher amplitude R (default 1.0 for both);
        must not be given with ``noise="bernoulli"`` (its scale is fixed).
    noise_level : {"arm", "observation"}, default "arm"
        ``"arm"``: each member adds its own noise (the paper's model); ``"observation"``:
        one noise term of scale ``sigma`` per team observation (a session's score noise,
        shared by the members): the sum of ``c`` pulls is ``N(c theta(M), c sigma^2)``
        (Rademacher: ``c theta(M) + R (2 B - c)``, ``B ~ Binomial(c, 1/2)``). Not with
        Bernoulli rewards.
    noise_known : bool, default True
        Whether the problem a solver sees declares ``sigma``; False simulates a study whose
        noise level nobody knows in advance (``problem.noise.sigma`` is None; the pulls
        still use ``sigma``).
    rng : None, int, SeedSequence or Generator
        Generator of the noise.

    Notes
    -----
    ``noise`` (the :class:`NoiseModel`) is ``("gaussian", sigma, None)``,
    ``("rademacher", R, R)`` or ``("bernoulli", 0.5, 1.0)`` (see :class:`BernoulliArms` for
    the reported bound). Counts are exact for any int64 count; the Rademacher draw needs
    ``c |M|`` to fit in int64 and raises otherwise.
    """

    arm_type: ArmType = "mask"

    def __init__(
        self,
        means: Any,
        *,
        k: Any = None,
        decision_class: Any = None,
        noise: str = "gaussian",
        sigma: Any = None,
        noise_level: str = "arm",
        noise_known: bool = True,
        rng: Any = None,
    ) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        self._means = _check_vector(means, "means", owner)
        self.noise_known = check_bool(noise_known, "noise_known", owner=owner)
        self.n_arms = n = int(self._means.size)
        self.noise_kind = check_choice(noise, "noise", _FULL_NOISES, owner=owner)
        self.noise_level = check_choice(noise_level, "noise_level", ("arm", "observation"), owner=owner)
        if self.noise_kind == "bernoulli" and self.noise_level != "arm":
            raise InvalidParameterError(
                f"The 'noise_level' parameter of {owner} must be 'arm' with noise='bernoulli' (each member's "
                f"reward is its own coin). Got {noise_level!r} instead."
            )
        if self.noise_kind == "bernoulli":
            if sigma is not None:
                raise InvalidParameterError(
                    f"The 'sigma' parameter of {owner} must be None with noise='bernoulli' "
                    f"(the Bernoulli scale is fixed). Got {sigma!r} instead."
                )
            _check_unit_interval(self._means, "means", owner)
            self.sigma: float | None = None
            self.noise = NoiseModel(kind="bernoulli", sigma=0.5, bound=1.0)
        else:
            s = 1.0 if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
            self.sigma = s
            bound = None if self.noise_kind == "gaussian" else s
            if not self.noise_known and self.noise_kind != "gaussian":
                raise InvalidParameterError(
                    f"The 'noise_known' parameter of {owner} must be True with noise={noise!r} (its scale is "
                    "fixed by its range). Got False instead."
                )
            self.noise = NoiseModel(kind=self.noise_kind, sigma=s if self.noise_known else None, bound=bound,
                                    level=self.noise_level)
        self.k: int | None = None
        if k is not None and decision_class is not None:
            raise InvalidParameterError(
                f"{owner} takes either 'k' or 'decision_class', not both. Got k={k!r} and "
                f"decision_class={decision_class!r}."
            )
        if k is not None:
            self.k = check_int(k, "k", owner=owner, low=1, high=n)
            decision_class = TopK(n, self.k)
        elif decision_class is not None:
            if not callable(getattr(decision_class, "argmax", None)) or getattr(decision_class, "n", None) != n:
                raise param_error(
                    "decision_class", owner, f"a DecisionClass over a ground set of size {n}", decision_class
                )
        self.decision_class = decision_class

    def means(self) -> NDArray[np.float64]:
        return self._means.copy()

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        m = len(arms)
        if m == 0:
            return np.zeros(0)
        c = counts.astype(np.float64)
        if self.noise_kind == "bernoulli":
            rows, cols = np.nonzero(arms)
            draws = self.rng.binomial(counts[rows], self._means[cols])
            return np.bincount(rows, weights=draws.astype(np.float64), minlength=m)
        theta_m = arms.astype(np.float64) @ self._means
        size = arms.sum(axis=1, dtype=np.int64)
        if self.noise_level == "observation":  # one noise term per observation
            size = (size > 0).astype(np.int64)
        scale = float(self.sigma)
        if self.noise_kind == "gaussian":
            z = self.rng.standard_normal(m)
            return c * theta_m + scale * np.sqrt(c * size) * z
        # rademacher: c|M| signs; sum = R (2 B - c|M|), B ~ Binomial(c|M|, 1/2)
        nz = size > 0
        if np.any(counts[nz] > _INT64_MAX // np.maximum(size[nz], 1)):
            raise InvalidParameterError(
                f"The 'counts' parameter of {type(self).__name__}.pull_many is too large for "
                f"Rademacher noise: count * |M| must fit in int64."
            )
        trials = counts * size
        b = self.rng.binomial(trials, 0.5)
        signs = b - (trials - b)  # (#plus) - (#minus), exact in int64
        return c * theta_m + scale * signs.astype(np.float64)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"means": _as_list(self._means), "noise": self.noise_kind}
        if self.sigma is not None:
            out["sigma"] = self.sigma
        if self.noise_level != "arm":
            out["noise_level"] = self.noise_level
        if not self.noise_known:
            out["noise_known"] = False
        if self.k is not None:
            out["k"] = self.k
        elif self.decision_class is not None:
            dc = self.decision_class
            params = dc.params() if callable(getattr(dc, "params", None)) else {}
            out["decision_class"] = {"name": getattr(dc, "name", "") or type(dc).__name__, "params": params}
        return out

"""What a run identifies, and the yardstick of its sample count.

A :class:`Query` names the identification task a solver performs on a problem -- the
``K`` best of independent arms or the best member of a decision class (``"arms"``), the
best arm or team of a linear model (``"linear"``), the best team of a full-bandit problem
under the seed papers' algorithms (``"teams"``) -- with the confidence and accuracy it was
asked for. :meth:`Query.lower_bound_info` turns an environment's truth (never seen by the
exploration) and a run's sample count into ``lower_bound_ratio = samples / (T* log(1/delta))``
and the entries that qualify it. :meth:`combex.solvers.Solver.run` calls it once, after
every simulated run, for the query the solver reports through
:meth:`~combex.solvers.Solver.query`: no solver computes its own yardstick.

The bound is ``T* kl(delta, 1 - delta)`` (Garivier & Kaufmann 2016, Theorem 1), which is
below ``T* log(1/delta)`` at large delta, so a correct run can show a ratio slightly below 1
there (see :mod:`combex.identification`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..exceptions import InvalidParameterError
from ._bandit import bandit_lower_bound_info
from ._linear import _lower_bound_info, lower_bound_model_note
from ._teams import _team_arms, _team_bound_ratio, team_lower_bound_info, true_noise_scale
from ._unknown_variance import uv_lower_bound_info

__all__ = ["Query", "QUERY_KINDS"]

#: The kinds of :class:`Query`.
QUERY_KINDS = ("arms", "linear", "teams")

_UV = "unknown-variance"


@dataclass(frozen=True)
class Query:
    """The identification task of a run, as its yardstick needs it.

    Parameters
    ----------
    kind : {"arms", "linear", "teams"}
        ``"arms"``: independent arms observed one by one (semi-bandit feedback): the ``K``
        best, or the best member of ``decision_class``; T* of
        :func:`~combex.identification.bandit_characteristic_time` (or
        :func:`~combex.identification.uv_characteristic_time` when the run ended under the
        unknown-variance model). ``"linear"``: the best arm of a linear model, or the best
        team seen as a linear model of its members (full-bandit feedback); T* of
        :func:`~combex.identification.characteristic_time` at the true noise scale, the
        certified single-swap bound where the answer class is too large to enumerate.
        ``"teams"``: the best team of a full-bandit problem
        (:func:`~combex.identification.team_lower_bound_info`).
    delta : float
        The guaranteed error probability of the run.
    epsilon : float
        The accuracy: an answer within ``epsilon`` of the best is correct.
    K : int
        ``"arms"``: how many best arms (1 with a decision class).
    decision_class : DecisionClass, optional
        ``"arms"``: the answers are the members of this class.
    divergence : str, optional
        ``"arms"``: the reward model the solver assumed (``"gaussian"``, ``"bernoulli"``,
        ``"unknown-variance"``); a run's own ``info["divergence"]`` wins (a run can move to
        the unknown-variance model when the declared scale is rejected).
    max_enumerate : int
        ``"linear"`` on teams: at most this many teams are enumerated as arms.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.environments import GaussianArms
    >>> from combex.identification import Query
    >>> env = GaussianArms([0.5, 0.4, 0.1], sigma=1.0)
    >>> info = Query("arms", delta=0.05).lower_bound_info(env, samples=3000)
    >>> round(info["T_star"], 1), round(info["lower_bound_ratio"], 2)
    (812.9, 1.23)
    """

    kind: str
    delta: float
    epsilon: float = 0.0
    K: int = 1
    decision_class: Any = None
    divergence: str | None = None
    max_enumerate: int = 100_000

    def __post_init__(self) -> None:
        if self.kind not in QUERY_KINDS:
            raise InvalidParameterError(
                f"The 'kind' parameter of Query must be one of {', '.join(repr(k) for k in QUERY_KINDS)}. "
                f"Got {self.kind!r} instead."
            )

    def lower_bound_info(self, env: Any, samples: int, info: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``{"T_star", "lower_bound_samples", "lower_bound_ratio", ...}`` for a run of
        ``samples`` samples on the simulated environment ``env`` (its truth: means, theta,
        noise scale), given the run's ``info``; ``{}`` when the environment's truth is
        unknown or the bound does not apply. ``lower_bound_ratio_kind`` says when the ratio
        is an upper bound of the exact one (a certified lower bound of T*)."""
        info = {} if info is None else info
        if self.kind == "arms":
            div = info.get("divergence", self.divergence)
            if div == _UV:
                return uv_lower_bound_info(env, self.delta, samples, int(self.K), self.decision_class, self.epsilon)
            return bandit_lower_bound_info(env, self.delta, samples, K=int(self.K),
                                           decision_class=self.decision_class, epsilon=self.epsilon,
                                           divergence=div)
        if self.kind == "teams":
            return team_lower_bound_info(env, self.delta, samples, self.epsilon)
        return self._linear_info(env, samples, info)

    def _linear_info(self, env: Any, samples: int, info: Mapping[str, Any]) -> dict[str, Any]:
        eps = float(self.epsilon)
        if info.get("oracle_path") and info.get("stop_bound") == "swap":
            # matroid bases too many to enumerate: the certified single-swap bound, at the
            # scale the run's GLR used
            try:
                return _team_bound_ratio(env, self.delta, samples, eps, info.get("sigma"))
            except (AttributeError, InvalidParameterError):
                return {}
        teams = getattr(env, "arm_type", "index") == "mask"
        try:
            if teams:
                X, _, _ = _team_arms(env.problem, self.max_enumerate, "Query")
                theta = np.asarray(env.means(), dtype=np.float64)
                sigma = true_noise_scale(env, int(X.sum(axis=1).max()))
            else:
                X, theta, sigma = getattr(env, "features", None), getattr(env, "theta", None), true_noise_scale(env, 1)
                if theta is None or X is None:
                    return {}
        except (AttributeError, InvalidParameterError):
            return {}
        if sigma is None:
            return {}
        out = _lower_bound_info(X, theta, sigma, self.delta, samples, eps)
        if not math.isfinite(out["T_star"]) and eps > 0 and teams:
            # several epsilon-good teams (more than the enumeration holds): the certified
            # single-swap bound with the exchange argument
            try:
                out = _team_bound_ratio(env, self.delta, samples, eps, sigma)
            except (AttributeError, InvalidParameterError):
                pass
        out.update(lower_bound_model_note(env, sigma))
        return out

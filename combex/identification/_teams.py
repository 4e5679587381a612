"""The theory of team problems under full-bandit feedback: a team's pull returns the sum of
its members' rewards, so the problem is linear with the teams' indicator vectors as arms.

* :func:`glr_team_sigma` -- the sub-Gaussian scale of one team score (independent members:
  ``sqrt(k) sigma``; dependent members: ``k sigma`` by Hoelder's inequality).
* :func:`team_lower_bound_info` -- ``lower_bound_ratio`` of a result on a simulated team
  problem: the exact ``T*_eps`` over the enumerated teams up to
  :data:`EXACT_TEAM_YARDSTICK` teams, the certified swap bound beyond.
* :func:`team_T_star_lower_bound` -- a certified lower bound of T* on classes of matroid
  bases too large to enumerate (single swaps; an LP or the moment relaxation).
"""

from __future__ import annotations

import math
from dataclasses import replace as _replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float
from ..exceptions import InvalidParameterError
from ..oracles import TopK
from ._linear import _lower_bound_info, check_features, lower_bound_model_note
from ._moments import swap_T_star_moment_bound
from ._swaps import exchange_pairs, is_matroid_base_class, swap_T_star_lower_bound

__all__ = ["glr_team_sigma", "true_noise_scale", "team_lower_bound_info", "team_T_star_lower_bound",
           "EXACT_TEAM_YARDSTICK"]


class _TooLarge(InvalidParameterError):
    """The decision class is too large to enumerate."""


def _team_arms(problem: Any, max_enumerate: int, owner: str) -> tuple[NDArray[np.float64], NDArray[np.bool_] | None, float]:
    """``(X, masks, sigma)``: the feature rows, and for a full-bandit problem the enumerated
    super-arms (indicator rows) with the noise scale of one team observation. Raises
    :class:`_TooLarge` (an InvalidParameterError) past ``max_enumerate`` members."""
    if getattr(problem, "arm_type", "index") == "mask":
        dc = problem.decision_class
        if dc is None:
            raise InvalidParameterError(f"{owner} needs a decision class for a full-bandit (mask) problem.")
        size = dc.size() if callable(getattr(dc, "size", None)) else None
        if size is not None and size > max_enumerate:
            raise _TooLarge(
                f"The decision class of the problem has {size} members, more than "
                f"max_enumerate={max_enumerate} of {owner}; raise max_enumerate (the arms are enumerated)."
            )
        masks = []
        for m in dc.enumerate():
            masks.append(np.asarray(m, dtype=bool))
            if len(masks) > max_enumerate:
                raise _TooLarge(
                    f"The decision class of the problem has more than max_enumerate={max_enumerate} "
                    f"members ({owner} enumerates them); raise max_enumerate."
                )
        M = np.array(masks, dtype=bool)
        sigma = _declared_scale(problem.noise, int(M.sum(axis=1).max()), owner)
        X = M.astype(np.float64)
        if np.linalg.matrix_rank(X) < X.shape[1]:
            raise InvalidParameterError(
                f"{owner}: the indicator vectors of the decision class do not span R^{X.shape[1]} "
                "(the base-arm rewards are not identifiable from team sums)."
            )
        return X, M, sigma
    X = check_features(problem.features, owner=owner)
    return X, None, _declared_scale(problem.noise, 1, owner)


def _declared_scale(noise: Any, k: int, owner: str) -> float | None:
    """The declared sub-Gaussian scale of one observation (:func:`glr_team_sigma`), or None
    when the problem's noise model declares none (unknown variance)."""
    if noise is not None and getattr(noise, "sigma", 0.0) is None:
        return None
    return glr_team_sigma(noise, k, owner=owner)


def glr_team_sigma(noise: Any, k: int, *, owner: str = "solver") -> float:
    """Sub-Gaussian scale of one team observation (the sum of ``k`` member rewards) used by
    the GLR solvers: the smallest valid one the noise model allows.

    ``noise.sigma`` is the sub-Gaussian scale of one member's noise
    (:class:`combex.environments.NoiseModel`). For independent members the sum is
    ``sqrt(k) sigma``-sub-Gaussian (the MGFs multiply). For dependent members (the crowd
    data, ``independent=False``) Hoelder's inequality with k factors of exponent k gives
    ``E exp(l sum_i eta_i) <= prod_i (E exp(k l eta_i))^{1/k} <= exp(l^2 (k sigma)^2 / 2)``,
    so the sum is ``k sigma``-sub-Gaussian whatever the correlation. For CrowdQuiz (scores
    in {0, 1}, ``sigma = 1/2`` by Hoeffding's lemma) this is ``k / 2`` = 5 at k = 10, the
    scale Hoeffding's lemma also gives for a team score in [0, k]; ICB and SAQM keep their
    paper's ``k R`` = 10 (:func:`combex.solvers.full_bandit.team_sigma`), which needs 4x
    more samples for the same confidence width.
    """
    if noise is None:
        raise InvalidParameterError(f"{owner} needs a noise model for a full-bandit (mask) problem.")
    return noise.scale(k, owner=owner)


def true_noise_scale(env: Any, k: int = 1, *, largest: bool = False) -> float | None:
    """The sub-Gaussian scale of one observation of a simulated environment (of a super-arm
    of ``k`` members), from its truth: the problem's declared scale, or, where the problem
    declares none (a study whose noise nobody knows), the simulator's own (``env.sigma``);
    None when neither is known. The yardstick of a result is computed at the true scale,
    whatever the solver was told. A simulator with one scale per arm gives None, or with
    ``largest=True`` the largest (a scale of every observation)."""

    noise = getattr(env, "noise", None)
    if noise is None:
        return None
    if noise.sigma is None:
        s = getattr(env, "sigma", None)
        if s is None or (np.ndim(s) != 0 and not largest):
            return None
        noise = _replace(noise, sigma=float(np.max(np.asarray(s, dtype=np.float64))))
    return float(noise.scale(k))


def _team_bound_ratio(env: Any, delta: float, samples: int, epsilon: float,
                      sigma: float | None = None) -> dict[str, Any]:
    """``T_star_lower``, ``lower_bound_ratio`` and its kind against the ``"lp"`` bound of
    :func:`team_T_star_lower_bound`, with the noise-model note (``sigma`` by default
    :func:`glr_team_sigma`'s)."""
    if sigma is None:
        k = int(np.asarray(env.problem.decision_class.argmax(np.asarray(env.means(), dtype=np.float64))).sum())
        sigma = true_noise_scale(env, k)
        if sigma is None:
            raise InvalidParameterError("The environment does not say its noise scale.")
    t_low, kind = team_T_star_lower_bound(env, epsilon=epsilon, sigma=sigma, method="lp")
    denom = t_low * math.log(1.0 / delta)
    return {"T_star_lower": t_low, "lower_bound_ratio_kind": kind,
            "lower_bound_ratio": samples / denom if math.isfinite(denom) and denom > 0 else float("nan"),
            **lower_bound_model_note(env, sigma)}


#: Team classes up to this many members get the exact T* in :func:`team_lower_bound_info`
#: (one conic solve: 0.03-0.6 s at 20-56 teams); beyond, the swap LP (milliseconds).
EXACT_TEAM_YARDSTICK = 64


def team_lower_bound_info(env: Any, delta: float, samples: int, epsilon: float = 0.0) -> dict[str, Any]:
    """``lower_bound_ratio`` (with ``T_star`` or ``T_star_lower`` and the kind) of a result on
    a simulated full-bandit team problem, whatever solver produced it: the seed-paper
    solvers (ICB, SAQM, SA-FOA, Exhaustive) report it through this, so their rows carry the
    same yardstick as the GLR solvers'. The exact ``T*_eps`` (:func:`characteristic_time`
    over the enumerated teams, noise scale :func:`glr_team_sigma`) up to
    :data:`EXACT_TEAM_YARDSTICK` teams; beyond, on classes of matroid bases, the certified
    ``"lp"`` bound of :func:`team_T_star_lower_bound` (the ratio is then an upper bound, and
    ``lower_bound_ratio_kind`` says so); ``{}`` when neither applies or the truth is unknown."""

    try:
        dc = env.problem.decision_class
        theta = np.asarray(env.means(), dtype=np.float64)
        size = getattr(dc, "size", None)
        size = size() if callable(size) else size  # a method or a property, by class
        if isinstance(size, (int, np.integer)) and size <= EXACT_TEAM_YARDSTICK:
            X, _, sigma = _team_arms(env.problem, EXACT_TEAM_YARDSTICK, "team_lower_bound_info")
            return {**_lower_bound_info(X, theta, sigma, delta, samples, float(epsilon)),
                    **lower_bound_model_note(env, sigma)}
        if is_matroid_base_class(dc):
            return _team_bound_ratio(env, delta, samples, float(epsilon))
    except (AttributeError, InvalidParameterError):
        pass
    return {}


def team_T_star_lower_bound(env: Any, *, epsilon: float = 0.0, sigma: float | None = None,
                            method: str = "lp") -> tuple[float, str]:
    """A certified lower bound of the characteristic time of a simulated team problem (full-bandit
    feedback, a class of matroid bases too large to enumerate), and a sentence saying which.

    The yardstick of ``lower_bound_ratio`` on the oracle path: ``samples / (T_lower
    log(1/delta))`` is then a certified *upper* bound of the ratio to ``T* log(1/delta)``
    (``T*_eps`` for epsilon > 0, Degenne & Koolen 2019). Both methods keep only the single
    swaps ``x* - i + j`` of the best base ``x*`` (fewer alternatives, a smaller T):

    * ``"lp"`` (what every result reports; milliseconds): an LP over the inclusion
      probabilities after Cauchy-Schwarz,
      :func:`~combex.identification.swap_T_star_lower_bound`.
    * ``"moment"`` (15-20 s at 36 members, 1-2 min at 45-55, about 8 at 63; memoized): the
      relaxation over the teams' moment matrix, certified by an LP dual,
      :func:`~combex.identification.swap_T_star_moment_bound`. Never below ``"lp"``;
      1.56-1.84x above it on the crowd instances (kuroki-synthetic 135 against 80, ITMANAGE
      1,246 against 800).

    With epsilon > 0 several teams may be epsilon-good, and ``T*_eps`` is the minimum of their
    ``T_eps``. For top-k an *exchange argument* makes the best team's bound valid for all of
    them: map an epsilon-good team S onto x* by a permutation pi that fixes ``S & x*``, sends
    ``S - x*`` onto ``x* - S`` and back. Every swap (i, j) of S becomes the swap (pi i, pi j)
    of x* with ``theta_(pi i) - theta_(pi j) >= theta_i - theta_j`` (x* holds the k largest),
    and the permuted design ``A_pi`` has ``||e_(pi i) - e_(pi j)||_(A_pi^-1) = ||e_i -
    e_j||_(A^-1)``; both relaxations are invariant under permutations, so x*'s value is at
    most S's. Then the larger of that, the LP over the swaps that are alternatives of every
    epsilon-good team (:func:`_common_swaps_T_lower`) and the one-alternative bound is used.
    For other matroids with several epsilon-good bases the result is ``(nan, reason)``.

    Parameters
    ----------
    env : simulated environment
        With ``means()`` and ``problem`` (its ``decision_class`` a class of matroid bases,
        its ``noise`` the model of :func:`glr_team_sigma`), e.g.
        :class:`~combex.environments.CrowdQuiz`, :class:`~combex.environments.FullBandit`.
    epsilon : float, default 0
        The accuracy of the runs the bound is the yardstick of.
    sigma : float, optional
        Sub-Gaussian scale of one team score; default :func:`glr_team_sigma` (the scale the
        GLR solvers use, so the ratio compares like with like).
    method : {"lp", "moment"}, default "lp"

    Returns
    -------
    (T_lower, kind) : (float, str)

    Examples
    --------
    >>> from combex.environments import FullBandit
    >>> from combex.identification import team_T_star_lower_bound
    >>> env = FullBandit([1.0, 0.9, 0.8, 0.2, 0.1, 0.0, -0.1], k=3, rng=0)
    >>> lp, _ = team_T_star_lower_bound(env)
    >>> mom, kind = team_T_star_lower_bound(env, method="moment")
    >>> bool(mom >= lp), kind.split(" (")[0]
    (True, 'certified upper bound of the ratio')
    """

    eps = check_float(epsilon, "epsilon", owner="team_T_star_lower_bound", low=0.0)
    method = check_choice(method, "method", ("lp", "moment"), owner="team_T_star_lower_bound")
    theta = np.asarray(env.means(), dtype=np.float64)
    dc = env.problem.decision_class
    x_star = np.asarray(dc.argmax(theta), dtype=bool)
    k = int(x_star.sum())
    if sigma is None:
        sigma = glr_team_sigma(env.problem.noise, k, owner="team_T_star_lower_bound")
    sigma = check_float(sigma, "sigma", owner="team_T_star_lower_bound", low=0.0, closed="neither")
    pairs = exchange_pairs(dc, x_star)
    if method == "moment":
        t_x, how = swap_T_star_moment_bound(theta, x_star, pairs, k, sigma=sigma, epsilon=eps)
        what = ("the moment matrix of the design, certified by an LP dual" if how["method"] == "moment"
                else f"an LP over inclusion probabilities; the moment bound fell back: {how.get('fallback')}")
    else:
        t_x = swap_T_star_lower_bound(theta, x_star, pairs, k, sigma=sigma, epsilon=eps)
        what = "an LP over inclusion probabilities"
    kind = f"certified upper bound of the ratio (T* relaxed to single swaps and {what}: T_lower <= T*"
    if eps <= 0:
        return t_x, kind + ")"
    # Is x* the only epsilon-good base with a finite T_eps? Any other base has gap >= that of
    # the second best; if it is >= eps - tol, every other eps-good base i has T_eps(i) >= 2
    # sigma^2 ||x_i - x*||^2 / (lambda_max(A) tol^2) >= 4 sigma^2 / (k tol^2)
    # (lambda_max(A(w)) <= max ||x||^2 = k), far above t_x.
    second = np.asarray(dc.argmax_excluding(theta, x_star), dtype=bool)
    gap2 = float(theta[x_star].sum() - theta[second].sum())
    tol = 1e-9 * max(1.0, float(np.abs(theta).sum()))
    if gap2 >= eps - tol and 4.0 * sigma**2 / (k * tol * tol) >= t_x:
        return t_x, kind + ", at epsilon: T*_eps of the best base, the only epsilon-good base with a finite T_eps)"
    t_common, common_kind = _common_swaps_T_lower(dc, theta, x_star, k, sigma, eps)
    if not isinstance(dc, TopK):
        return t_common, common_kind
    if t_x >= t_common:
        return t_x, (f"certified upper bound of the ratio (several epsilon-good teams: T*_eps >= the best team's "
                     f"bound by the exchange argument; single swaps and {what})")
    return t_common, common_kind


def _common_swaps_T_lower(dc: Any, theta: NDArray[np.float64], x_star: NDArray[np.bool_], k: int, sigma: float,
                          eps: float) -> tuple[float, str]:
    """A certified lower bound of ``T*_eps = min_i T_eps(i)`` when several teams are
    epsilon-good (top-k only): the members ``a`` in *every* epsilon-good team (the best team
    without ``a`` is more than eps below) and the workers ``b`` in *none* (the best team with
    ``b`` is more than eps below) give swaps ``i - a + b`` that are alternatives of every
    epsilon-good team ``i``, each with the same ``Delta + eps = theta_a - theta_b + eps``.
    Keeping only those alternatives lowers every ``T_eps(i)`` to at most the LP of
    :func:`~combex.identification.swap_T_star_lower_bound` over those pairs, so the LP
    is below their minimum; also ``8 sigma^2 / (theta_(k) - theta_(k+1) + eps)^2`` (one
    alternative per team, below); the larger is returned. ``(nan, reason)`` when the class is
    not top-k."""

    if not isinstance(dc, TopK):
        return math.nan, "not computed: several epsilon-good bases (T*_eps is a minimum over them)"
    order = np.sort(theta)[::-1]
    kth, next_out = float(order[k - 1]), float(order[k])
    inside = np.flatnonzero(x_star)
    outside = np.flatnonzero(~x_star)
    # best team without a (a in x*): swap a for the best outsider; best team with b: swap the weakest member
    always = [int(a) for a in inside if theta[a] - next_out > eps]  # gap of x* - a + (best outsider)
    never = [int(b) for b in outside if kth - theta[b] > eps]  # gap of x* - (weakest member) + b
    # One alternative per answer: for every k-set i, its weakest member a_i and strongest
    # outsider b_i have theta_a - theta_b <= kth - next_out, and ||e_a - e_b||^2_{A^{-1}} >= 4 /
    # ((e_a - e_b)^T A (e_a - e_b)) >= 4 (Cauchy-Schwarz; a team holds both or one), so
    # T_eps(i) >= 8 sigma^2 / (kth - next_out + eps)^2 for every epsilon-good i.
    t_one = 8.0 * sigma**2 / (kth - next_out + eps) ** 2
    I, J, E = exchange_pairs(dc, x_star)
    keep = E & np.isin(I, always)[:, None] & np.isin(J, never)[None, :]
    t_lp = swap_T_star_lower_bound(theta, x_star, (I, J, keep), k, sigma=sigma, epsilon=eps) if keep.any() else 0.0
    if t_lp >= t_one:
        return t_lp, ("certified upper bound of the ratio (several epsilon-good teams: T*_eps >= an LP over the "
                      f"{int(keep.sum())} swaps that are alternatives of every epsilon-good team, single swaps and "
                      "inclusion probabilities)")
    return t_one, ("certified upper bound of the ratio, loose (several epsilon-good teams: T*_eps >= 8 sigma^2 / "
                   "(theta_(k) - theta_(k+1) + eps)^2, one alternative per team)")

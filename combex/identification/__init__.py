"""The theory of an identification problem: the answer, the GLR against the closest
alternative, the divergences and thresholds that stop a run, and the characteristic time
T* with its optimal proportions w*.

An identification problem is an unknown mean vector (arm means ``mu``, or a parameter
``theta`` seen through features), a set of possible answers (the best arm, the top K, a
member of a decision class, the best arm of a linear model, the best team) and the
*answer* of the instance, the member of largest mean. Everything here is a property of the
instance or of the data, never of an algorithm; the solvers of :mod:`combex.solvers` use
it to stop and to sample, and report their sample counts against it.

* **The GLR and the closest alternative.** The alternatives of an answer S are the
  instances where another member beats it (by ``epsilon`` in the epsilon-good version);
  the generalized likelihood ratio of the data against them is the divergence to the
  closest one: :func:`pair_glr` (one pair of arms), :func:`class_glr_lower_bound` (a
  decision class, certified lower bound), :func:`linear_glr` (linear models, eq. (2) of
  Degenne, Menard, Shang & Valko 2020), :func:`swap_glr_lower_bound` (matroid bases, by
  swap decomposition), :func:`oracle_glr_lower_bound` (classes reached only through their
  oracles), :func:`pair_glr_unknown_variance` (Gaussian arms of unknown variances).
* **Divergences.** :func:`kl_gaussian`, :func:`kl_bernoulli`,
  :func:`kl_gaussian_unknown_variance`; as objects for every query (the divergence of one
  arm, the GLR of one pair and its gradients): :func:`make_divergence` gives a
  :class:`GaussianDivergence`, :class:`BernoulliDivergence` or
  :class:`UnknownVarianceDivergence`.
* **Thresholds.** A run stops when the GLR exceeds a threshold valid at every time:
  :class:`GLRThreshold` (Kaufmann & Koolen 2021), :class:`UnknownVarianceThreshold` and
  :class:`ClassUnknownVarianceThreshold`, :func:`mixture_beta0` (the Gaussian mixture of
  Abbasi-Yadkori et al. 2011, linear models) and :func:`heuristic_threshold` (the papers',
  not valid; for comparisons with published tables).
* **T* and w*.** Every delta-correct algorithm needs ``E[tau] >= T* kl(delta, 1 - delta)``
  samples (Garivier & Kaufmann 2016, Theorem 1), with ``1 / T* = max_w min_{lambda in
  Alt} sum_a w_a d(mu_a, lambda_a)``; the maximizing ``w*`` is the allocation an optimal
  algorithm tracks.
* **Certified yardsticks.** Where T* cannot be computed exactly (classes too large to
  enumerate), a certified *lower* bound of T* is computed instead, so the reported ratio
  ``samples / (T_lower log(1/delta))`` is a certified *upper* bound of the true ratio;
  ``lower_bound_ratio_kind`` says so in a result's ``info``.

* **Queries of independent arms.** :func:`arm_query` gives the task of a run on arms
  observed one by one: :class:`BestArmQuery`, :class:`BestKQuery`, :class:`SwapQuery`
  (matroid bases, one half-space per single exchange) or :class:`ClassQuery` (any decision
  class), each with the ``answer`` of a mean vector and, for the first three, the
  ``pairs`` ``(i, j)`` whose half-spaces make up the alternative set. The GLR solvers of
  :mod:`combex.solvers` (Track-and-Stop, Top-Two, Frank-Wolfe sampling, CombGame) hold one.

Which function for which structure:

* best arm: :func:`bandit_characteristic_time` (``K = 1``) and :func:`bai_optimal_weights`
  (Theorem 5 of Garivier & Kaufmann 2016; Gaussian and Bernoulli);
* Best-K: :func:`bandit_characteristic_time` with ``K``, exact through
  :func:`pair_maxmin_weights` (the bipartite max-min over the swaps);
* decision classes: :func:`bandit_characteristic_time` with ``decision_class`` (exact when
  the class can be enumerated: :func:`class_members`, a lower bound from the oracle's one-change members
  otherwise); unknown variances and Bernoulli arms: :func:`uv_characteristic_time`,
  :func:`kl_characteristic_time` (T* bracketed between two certified ends);
* matroid bases, by swaps: :func:`is_matroid_base_class`, :func:`exchange_pairs`,
  :func:`swap_T_star_lower_bound` (an LP over inclusion probabilities) and
  :func:`swap_T_star_moment_bound` (the moment relaxation, tighter and slower);
* linear models: :func:`characteristic_time` (:class:`LowerBound`), :func:`linear_lower_bound`,
  :func:`check_features`;
* teams under full-bandit feedback: :func:`team_T_star_lower_bound`,
  :func:`team_lower_bound_info`, :func:`glr_team_sigma` (the scale of one team score).

The ``*_lower_bound_info`` functions give the ``info`` entries a result carries:
``T_star``, ``lower_bound_samples`` and ``lower_bound_ratio = samples / (T* log(1/delta))``.
A :class:`Query` names the task of a run (``"arms"``, ``"linear"``, ``"teams"``) and picks
the right one: every solver reports its query (``Solver.query``) and ``Solver.run`` attaches
the query's yardstick once, after the run.

The lower bound is ``T* kl(delta, 1 - delta)``, and ``kl(delta, 1 - delta) < log(1/delta)``
(``0.83`` against ``1.61`` at delta = 0.2), so a correct run can show a
``lower_bound_ratio`` below 1 at large delta: 0.456 was observed at delta = 0.2. The bound
is on the *expected* number of samples, so single runs also fall below it.

Examples
--------
>>> from combex.identification import bandit_characteristic_time, characteristic_time
>>> round(bandit_characteristic_time([1.0, 0.0]).T_star, 6)
8.0
>>> round(characteristic_time([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0]).T_star, 4)
8.0
"""

from ..estimation._glr import GLRThreshold, class_glr_lower_bound, kl_bernoulli, kl_gaussian, pair_glr
from ..estimation._glr_unknown_variance import (
    ClassUnknownVarianceThreshold,
    UnknownVarianceThreshold,
    kl_gaussian_unknown_variance,
    pair_glr_unknown_variance,
)
from ._arm_queries import (
    ARM_STRUCTURES,
    CLASS_MEMBERS_LIMIT,
    ArmQuery,
    BestArmQuery,
    BestKQuery,
    ClassQuery,
    SwapQuery,
    arm_query,
)
from ._divergences import (
    DIVERGENCE_NAMES,
    BernoulliDivergence,
    Divergence,
    GaussianDivergence,
    UnknownVarianceDivergence,
    make_divergence,
)
from ._bandit import (
    BanditLowerBound,
    bai_optimal_weights,
    bandit_characteristic_time,
    bandit_lower_bound_info,
    class_members,
    pair_maxmin_weights,
)
from ._linear import LowerBound, characteristic_time, check_features, linear_lower_bound, lower_bound_model_note
from ._linear_thresholds import (
    THRESHOLDS,
    LinearGLR,
    heuristic_threshold,
    linear_glr,
    mixture_beta0,
    oracle_glr_lower_bound,
)
from ._moments import swap_T_star_moment_bound
from ._query import QUERY_KINDS, Query
from ._swaps import (
    SwapBound,
    bases_at_distance,
    exchange_pairs,
    is_matroid_base_class,
    swap_glr_lower_bound,
    swap_glr_lower_bound_of_size,
    swap_T_star_lower_bound,
    topk_min_glr_of_size,
)
from ._teams import glr_team_sigma, team_lower_bound_info, team_T_star_lower_bound, true_noise_scale
from ._unknown_variance import (
    UVBound,
    kl_characteristic_time,
    kl_lower_bound_info,
    uv_characteristic_time,
    uv_lower_bound_info,
)

__all__ = [
    # the task of a run and its yardstick
    "Query",
    "QUERY_KINDS",
    # the answers of independent arms and their alternatives
    "arm_query",
    "ArmQuery",
    "BestArmQuery",
    "BestKQuery",
    "SwapQuery",
    "ClassQuery",
    "ARM_STRUCTURES",
    "CLASS_MEMBERS_LIMIT",
    # the reward models of independent arms
    "make_divergence",
    "Divergence",
    "GaussianDivergence",
    "BernoulliDivergence",
    "UnknownVarianceDivergence",
    "DIVERGENCE_NAMES",
    # divergences, GLRs and thresholds
    "kl_gaussian",
    "kl_bernoulli",
    "kl_gaussian_unknown_variance",
    "pair_glr",
    "pair_glr_unknown_variance",
    "class_glr_lower_bound",
    "GLRThreshold",
    "UnknownVarianceThreshold",
    "ClassUnknownVarianceThreshold",
    # linear models
    "LowerBound",
    "characteristic_time",
    "linear_lower_bound",
    "check_features",
    "lower_bound_model_note",
    "THRESHOLDS",
    "LinearGLR",
    "linear_glr",
    "mixture_beta0",
    "heuristic_threshold",
    "oracle_glr_lower_bound",
    # best arm, Best-K, decision classes
    "BanditLowerBound",
    "bandit_characteristic_time",
    "bai_optimal_weights",
    "pair_maxmin_weights",
    "bandit_lower_bound_info",
    "class_members",
    "UVBound",
    "uv_characteristic_time",
    "uv_lower_bound_info",
    "kl_characteristic_time",
    "kl_lower_bound_info",
    # matroid bases, by swaps
    "is_matroid_base_class",
    "exchange_pairs",
    "SwapBound",
    "swap_glr_lower_bound",
    "swap_glr_lower_bound_of_size",
    "bases_at_distance",
    "topk_min_glr_of_size",
    "swap_T_star_lower_bound",
    "swap_T_star_moment_bound",
    # teams under full-bandit feedback
    "glr_team_sigma",
    "true_noise_scale",
    "team_lower_bound_info",
    "team_T_star_lower_bound",
]

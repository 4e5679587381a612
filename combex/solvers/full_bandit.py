"""Combinatorial pure exploration with full-bandit feedback (Kuroki et al.).

Only the *sum* of the rewards of the pulled super-arm (a team) is observed. Four solvers
share one static-allocation skeleton (Algorithms 2-5 of the paper): pull super-arms of a
fixed support by the tracking rule ``M_t = argmin_{M in supp(p)} T_M(t) / p_M``, keep the
least-squares estimate ``theta_hat_t = A_t^{-1} b_t`` by count-weighted rank-one updates, and
check a stopping rule.

==============  ======================================  =====================================
name            stopping statistic                      maximization at each check
==============  ======================================  =====================================
``saqm``        condition (4) with Z_t and alpha_t      quadratic maximization (Algorithm 1)
``sa-foa``      eps/2 >= Z'_t - theta_hat(M_hat)        first-order approx., l*n QP calls
``icb``         Z*_t - theta_hat(M_hat) < eps (2)       linear oracle (argmax_excluding)
``exhaustive``  Z*_t < eps (Algorithm 5)                enumeration of the decision class
==============  ======================================  =====================================

Batched checks: static allocations do not depend on the observations, so the pulls between
two checks can be asked for as one batch. ``batch_size=1`` checks after every sample (the
paper); otherwise checks follow a geometric schedule, each at ``max(t + 1, floor((1 + growth)
t))`` samples. What this guarantees: consecutive checks satisfy ``t_{j+1} <= max(t_j + 1,
(1 + growth) t_j)``, so if the stopping rule holds at every sample count from t on (on the
run's own sample path) the run stops by ``(1 + growth) t + 1``; ``info["max_check_ratio"]``
is the largest ``t_{j+1} / t_j`` of the run (above ``1 + growth`` while ``t_j < 1 / growth``,
where the ``t + 1`` term rules). This is not a bound on the batched over the per-round
stopping time: the rule is not monotone in t (a crossing can be undone by the next
samples) and a batch draws its noise as one sum, so the sample paths differ: the batched
stop is not within a factor 1 + growth of the per-round one in that sense (measured mean
sample ratios: 1.027 at growth 0.01 and 1.064-1.069 at 0.05). With ``growth=0`` the two
modes are the same algorithm and give identical results on a fixed seed.

Noise scale (``sigma`` of Proposition 1): the proposition is stated for noise bounded in
[-sigma, sigma]. With per-arm noise bounded by R the paper takes ``sigma = k R``; this is
what we do when the problem's noise model has a bound. For independent Gaussian per-arm
noise of standard deviation s (the paper's own experiments use N(0, 1) noise) the team
noise is N(0, k s^2), which is ``sqrt(k) s``-sub-Gaussian; Proposition 1's proof (Soare et
al.) only uses sub-Gaussianity, so we take ``sigma = sqrt(k) s``. A noise model with neither
a bound nor a Gaussian law is refused unless ``sigma`` is given.
"""

from __future__ import annotations

import difflib
import math
from abc import abstractmethod
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_probability,
    param_error,
)
from ..allocations import Tracker, balanced_topk_support, g_optimal_design, support_from_decision_class
from ..estimation import LeastSquares, independent_radius, static_radius
from ..exceptions import InvalidParameterError
from ..identification import Query
from ..oracles._dks import GreedyPeeling
from ..oracles.quadratic import DKS_ORACLES, QuadraticMaximization, upper_bound_qp
from ._base import Batch, Exploration, Solver
from ._registry import register_solver


def _check_dks(dks: Any, owner: str) -> str:
    """A densest-k-subgraph oracle name of :data:`combex.oracles.quadratic.DKS_ORACLES`,
    checked at construction (a sweep must not find it out in its first run)."""

    if not isinstance(dks, str) or dks not in DKS_ORACLES:

        close = difflib.get_close_matches(str(dks), list(DKS_ORACLES), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"The 'dks' parameter of {owner} must be one of {sorted(DKS_ORACLES)!r}. Got {dks!r} instead.{hint}"
        )
    return dks

__all__ = ["SAQM", "SAFOA", "ICB", "Exhaustive", "team_sigma"]


# ----------------------------------------------------------------------------- helpers
def team_sigma(noise: Any, k: int, *, owner: str = "solver") -> float:
    """The noise scale sigma of one super-arm observation (see the module docstring).

    ``k R`` for per-arm noise bounded by R (Proposition 1 as used by the paper),
    ``sqrt(k) s`` for independent Gaussian per-arm noise of standard deviation s.
    """
    if noise is None:
        raise InvalidParameterError(f"{owner} needs a noise model or an explicit 'sigma'.")
    observation = getattr(noise, "level", "arm") == "observation"  # one noise term per team score
    if noise.bound is not None:
        return float(noise.bound if observation else k * noise.bound)
    if noise.kind == "gaussian" and (noise.independent or observation):
        return noise.scale(k, owner=owner)
    raise InvalidParameterError(
        f"{owner}: the noise model {noise.kind!r} has no bound, which the confidence radius of "
        "Proposition 1 needs; pass sigma=... (the sub-Gaussian scale of a team's noise) explicitly."
    )


def _member_sizes(dc: Any) -> tuple[int, int]:
    n = dc.n
    big = dc.argmax(np.ones(n))
    small = dc.argmax(-np.ones(n))
    return int(small.sum()), int(big.sum())


def _log_class_size(dc: Any) -> float:
    """log |M| for the union bound of C_t: exact when the class knows its size, else the
    bound |M| <= 2^n (conservative)."""
    size = getattr(dc, "size", None)
    if size is not None:
        return float(math.log(size)) if size > 0 else 0.0
    return float(dc.n * math.log(2.0))


# ----------------------------------------------------------------------------- solver
class _StaticFullBandit(Solver):
    """Shared settings of the static-allocation full-bandit solvers."""

    renamed_params: ClassVar[Mapping[str, str]] = {"check_every": "batch_size"}

    arm_type: ClassVar[str] = "mask"
    families: ClassVar[tuple[str, ...]] = ("full-bandit",)
    needs_fixed_size: ClassVar[bool] = False

    def __init__(
        self,
        *,
        delta: float = 0.05,
        epsilon: float = 0.0,
        allocation: str = "g",
        decision_class: Any = None,
        sigma: float | None = None,
        batch_size: int | None = None,
        growth: float = 0.01,
        support: Any = None,
        max_enumerate: int = 3432,
    ) -> None:
        owner = type(self).__name__
        self.delta = check_probability(delta, "delta", owner=owner)
        self.epsilon = check_float(epsilon, "epsilon", owner=owner, low=0.0)
        self.allocation = check_choice(allocation, "allocation", ("g", "uniform"), owner=owner)
        self.decision_class = decision_class
        self.sigma = None if sigma is None else check_float(sigma, "sigma", owner=owner, low=0.0, closed="neither")
        self.batch_size = None if batch_size is None else check_int(batch_size, "batch_size", owner=owner, low=1)
        self.growth = check_float(growth, "growth", owner=owner, low=0.0)
        self.support = support
        self.max_enumerate = check_int(max_enumerate, "max_enumerate", owner=owner, low=0)

    @property
    def tolerance(self) -> float:
        return self.epsilon

    def start(self, problem: Any, *, rng: Any = None) -> "_StaticExploration":
        return self.exploration_class(self, problem, rng)

    def query(self, problem: Any) -> Query:
        """The best team of a full-bandit problem: the same yardstick as the GLR solvers'
        (:func:`combex.identification.team_lower_bound_info`)."""
        return Query("teams", self.delta, float(self.epsilon))


class _StaticExploration(Exploration):
    """State of a static-allocation run: support, design, tracking counts, least squares."""

    solver: _StaticFullBandit

    def __init__(self, solver: _StaticFullBandit, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)

        owner = type(solver).__name__
        pb = self.problem
        dc = solver.decision_class if solver.decision_class is not None else getattr(pb, "decision_class", None)
        if dc is None:
            raise InvalidParameterError(
                f"{owner} needs a decision class: pass decision_class=... or a problem that has one."
            )
        if dc.n != pb.n_arms:
            raise InvalidParameterError(
                f"The decision class of {owner} has n={dc.n}, the problem has {pb.n_arms} arms."
            )
        self.dc = dc
        self.n = int(dc.n)
        kmin, kmax = _member_sizes(dc)
        if solver.needs_fixed_size and kmin != kmax:
            raise InvalidParameterError(
                f"{owner} maximizes over super-arms of one size k (quadratic maximization over "
                f"|S| = k); this decision class has members of sizes {kmin} to {kmax}. Use ICB or "
                "Exhaustive for it."
            )
        if kmax < 1:
            raise InvalidParameterError(f"{owner}: the decision class has only the empty member.")
        self.k = kmax
        self.sigma = solver.sigma if solver.sigma is not None else team_sigma(pb.noise, self.k, owner=owner)
        self.log_K = _log_class_size(dc)

        self.Q: NDArray[np.float64] | None = None
        self.support, self.p, self.design_info = self._make_design()
        self._Z = self._coords(self.support)
        self.tracker = Tracker(self.p)
        self.ls = LeastSquares(self._Z.shape[1])
        self.T = np.zeros(len(self.support), dtype=np.int64)
        self.initial_done = False
        self._chi_hat: NDArray[np.bool_] | None = None

    # ------------------------------------------------------------------ subspace
    def _class_rank(self) -> int:
        """Rank of the span of the decision class (members found by the oracle on unit,
        structured and random weights)."""

        X = support_from_decision_class(self.dc, rng=0, require_full_rank=False)
        return int(np.linalg.matrix_rank(X.astype(float)))

    def _set_subspace(self, X: NDArray[np.bool_]) -> None:
        """Work in the span of the support when it is a proper subspace of R^n.

        Some classes live in a proper subspace (bases of a partition matroid with one
        element per group satisfy x_a + x_b = 1 in every group): no allocation makes A_t
        invertible, and only theta's projection on the span is identifiable ("we shall
        exclude a redundant feature", Section 2). With Q an orthonormal basis of the span,
        the least squares run on z = Q^T chi; theta_hat = Q theta_hat_z and
        A^+ = Q A_z^{-1} Q^T give the same theta_hat(M) and ||chi_M - chi_M'||_{A^+} for
        members, so every stopping rule applies unchanged.
        """
        Xf = X.astype(float)
        u, sv, vt = np.linalg.svd(Xf, full_matrices=False)
        r = int((sv > sv[0] * max(Xf.shape) * np.finfo(float).eps * 10).sum()) if sv.size else 0
        self.Q = None if r == self.n else vt[:r].T.copy()

    def _coords(self, X: NDArray[Any]) -> NDArray[np.float64]:
        Xf = np.asarray(X, dtype=float)
        return Xf if self.Q is None else Xf @ self.Q

    def _theta(self) -> NDArray[np.float64]:
        th = self.ls.theta
        return th if self.Q is None else self.Q @ th

    def _A_inv(self) -> NDArray[np.float64]:
        Ai = self.ls.A_inv
        return Ai if self.Q is None else self.Q @ Ai @ self.Q.T

    # ------------------------------------------------------------------ design
    def _make_design(self) -> tuple[NDArray[np.bool_], NDArray[np.float64], dict[str, Any]]:

        s = self.solver
        if s.support is not None:
            X = np.asarray(s.support)
            if X.ndim != 2 or X.shape[1] != self.n:
                raise param_error("support", type(s).__name__, f"a 0/1 array of shape (m, {self.n})", s.support)
            X = X.astype(bool)
            for row in X:
                if not self.dc.contains(row):
                    raise InvalidParameterError(
                        f"The 'support' parameter of {type(s).__name__} has a row that is not a member "
                        f"of the decision class: {np.flatnonzero(row).tolist()}."
                    )
            if np.linalg.matrix_rank(X.astype(float)) < self._class_rank():
                raise InvalidParameterError(
                    f"The 'support' parameter of {type(s).__name__} must span the span of the "
                    f"decision class (rank {self._class_rank()}); otherwise some differences "
                    "theta(M) - theta(M') are not identifiable."
                )
        elif (self.dc.size or math.inf) <= s.max_enumerate:
            # Small class: the design lives on all members (the exact G-allocation).
            X = np.array(list(self.dc.enumerate()), dtype=bool)
        elif type(self.dc).__name__ == "TopK":
            X = balanced_topk_support(self.n, self.k, rng=0)
        else:
            X = support_from_decision_class(self.dc, rng=self.rng, require_full_rank=False)
        X = np.asarray(X, dtype=bool)
        self._set_subspace(X)
        Z = self._coords(X)
        if s.allocation == "uniform":
            p = np.full(len(X), 1.0 / len(X))
            info = {"allocation": "uniform", "support_size": len(X)}
        else:
            design = g_optimal_design(Z)
            p = np.asarray(design.weights, dtype=float)
            keep = p > 0
            X, p = X[keep], p[keep] / p[keep].sum()
            info = {"allocation": "g", "support_size": int(len(X)), "g_value": float(design.value)}
        # rho(p) of Theorem 3 over the whole class: max_M ||chi_M||^2_{Lambda_p^-1}; exact on
        # an enumerated support, else an upper bound over all k-subsets (quadratic oracle).
        Zs = self._coords(X)
        lam_inv = np.linalg.inv(Zs.T @ (Zs * p[:, None]))
        info["rank"] = int(Zs.shape[1])
        if (self.dc.size or math.inf) <= s.max_enumerate:
            info["rho_p"] = float(np.einsum("ij,ij->i", Zs @ lam_inv, Zs).max())
        elif self.Q is None:

            info["rho_p_upper_bound"] = float(upper_bound_qp(lam_inv, self.k))
        return X, p, info

    # ------------------------------------------------------------------ ask / tell
    def _next_batch(self) -> Batch:
        t = self.samples
        if not self.initial_done:
            # Algorithm 2, lines 1-3: the first s pulls visit every support member once
            # (the tracking rule from zero counts does exactly that), so A_t is invertible.
            target = len(self.support)
        elif self.solver.batch_size is not None:
            target = t + self.solver.batch_size
        else:
            target = max(t + 1, int(math.floor((1.0 + self.solver.growth) * t)))
        # The tracking rule argmin_M T_M / p_M, batched up to the next check (Tracker.advance
        # gives exactly the counts of target - t single steps).
        add = self.tracker.advance(target)
        nz = np.flatnonzero(add)
        return Batch(self.support[nz], add[nz].astype(np.int64))

    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        counts = batch.counts
        if not self.initial_done:
            self.initial_done = True
            self.T += counts
        else:
            # Map rows back to support positions (batches are support subsets in order).
            idx = self._support_index(batch.arms)
            np.add.at(self.T, idx, counts)
        self.ls.update_many(self._coords(batch.arms), reward_sums, counts)
        self.rounds += 1
        prev = getattr(self, "_prev_check", 0)
        if 0 < prev < self.samples:
            self.max_check_ratio = max(getattr(self, "max_check_ratio", 1.0), self.samples / prev)
        self._prev_check = self.samples
        self._check()

    def _support_index(self, arms: NDArray[np.bool_]) -> NDArray[np.intp]:
        key = getattr(self, "_support_key", None)
        if key is None:
            key = self._support_key = {row.tobytes(): i for i, row in enumerate(self.support)}
        try:
            return np.array([key[np.asarray(a, dtype=bool).tobytes()] for a in arms], dtype=np.intp)
        except KeyError:
            raise InvalidParameterError(
                "tell() received a super-arm outside the allocation's support; a static "
                "allocation only learns from the super-arms it asked for."
            ) from None

    # ------------------------------------------------------------------ stopping
    def _radius(self) -> float:

        return float(static_radius(self.samples, self.solver.delta, sigma=self.sigma, log_n_hypotheses=self.log_K))

    @abstractmethod
    def _check(self) -> None:
        """Subclass hook."""

    @property
    def recommendation(self) -> NDArray[np.bool_]:
        if self._chi_hat is not None:
            return self._chi_hat.copy()
        if self.ls.is_invertible:
            return self.dc.argmax(self._theta())
        return self.dc.argmax(np.zeros(self.n))

    @property
    def pulls(self) -> NDArray[np.int64]:
        """Per base arm: the number of pulled super-arms containing it."""
        return (self.T[:, None] * self.support).sum(axis=0).astype(np.int64)

    def _info(self) -> dict[str, Any]:
        info = dict(self.design_info)
        info.update(
            sigma=self.sigma,
            k=self.k,
            batch_size=self.solver.batch_size,
            growth=None if self.solver.batch_size is not None else self.solver.growth,
            max_check_ratio=float(getattr(self, "max_check_ratio", 1.0)),
            support_pulls=self.T.copy(),
        )
        if self.done and self.status != "identified" and self.initial_done:
            info["indistinguishable"], info["indistinguishable_scope"] = self._indistinguishable()
        return info

    def _width(self, diff: NDArray[np.float64], A_inv: NDArray[np.float64], C: float) -> float:
        """Confidence width of ``diff^T theta`` used by this solver's stopping rule:
        ``C_t ||diff||_{A^-1}`` (Proposition 1); ICB overrides it with Lemma 1's."""
        return C * math.sqrt(max(float(diff @ A_inv @ diff), 0.0))

    def _indistinguishable(self, limit: int = 100) -> tuple[list[list[int]], str]:
        """Members M != M_hat that the data cannot yet rule out: the upper confidence bound
        of ``theta(M) - theta(M_hat)`` (the stopping rule's radius) is >= epsilon. All
        members when the class has at most ``max_enumerate`` members, else the one-swap
        neighbours of M_hat (where ties between members live for top-k and matroids).
        At most ``limit``, the least separated first; base-arm indices per member."""
        theta = self._theta()
        A_inv = self._A_inv()
        C = self._radius()
        lead = np.asarray(self.answer, dtype=bool)
        x0 = lead.astype(np.float64)
        if (self.dc.size or math.inf) <= self.solver.max_enumerate:
            cands = (np.asarray(m, dtype=bool) for m in self.dc.enumerate())
            scope = "all members"
        else:
            scope = "one-swap neighbours of the leader"
            ins, outs = np.flatnonzero(lead), np.flatnonzero(~lead)

            def swaps() -> Any:
                for i in ins:
                    for j in outs:
                        m = lead.copy()
                        m[i], m[j] = False, True
                        if self.dc.contains(m):
                            yield m

            cands = swaps()
        out = []
        for m in cands:
            if np.array_equal(m, lead):
                continue
            diff = m.astype(np.float64) - x0
            ucb = float(diff @ theta) + self._width(diff, A_inv, C)
            if ucb >= self.solver.epsilon:
                out.append((-ucb, np.flatnonzero(m).tolist()))
        out.sort(key=lambda t: t[0])
        return [m for _, m in out[:limit]], scope

    # ------------------------------------------------------------------ save / resume
    def _extra_state(self) -> dict[str, Any]:
        return {
            "support": self.support,
            "p": self.p,
            "design_info": self.design_info,
            "tracker": self.tracker.state_dict(),
            "ls": self.ls.state_dict(),
            "T": self.T,
            "initial_done": self.initial_done,
            "chi_hat": None if self._chi_hat is None else self._chi_hat,
            "sigma": self.sigma,
            "log_K": self.log_K,
            "k": self.k,
            "Q": self.Q,
            "prev_check": int(getattr(self, "_prev_check", 0)),
            "max_check_ratio": float(getattr(self, "max_check_ratio", 1.0)),
        }

    def _load_extra_state(self, st: dict[str, Any]) -> None:

        s = self.solver
        self.dc = s.decision_class if s.decision_class is not None else self.problem.decision_class
        self.n = int(self.dc.n)
        self.support = np.asarray(st["support"], dtype=bool)
        self.p = np.asarray(st["p"], dtype=float)
        self.design_info = dict(st["design_info"])
        self.tracker = Tracker.from_state(st["tracker"])
        self.ls = LeastSquares.from_state(st["ls"])
        self.T = np.asarray(st["T"], dtype=np.int64)
        self.initial_done = bool(st["initial_done"])
        self._chi_hat = None if st["chi_hat"] is None else np.asarray(st["chi_hat"], dtype=bool)
        self.sigma = float(st["sigma"])
        self.log_K = float(st["log_K"])
        self.k = int(st["k"])
        self.Q = None if st["Q"] is None else np.asarray(st["Q"], dtype=float)
        self._Z = self._coords(self.support)
        self._prev_check = int(st.get("prev_check", 0))
        self.max_check_ratio = float(st.get("max_check_ratio", 1.0))


# ============================================================================== SAQM
class _SAQMExploration(_StaticExploration):
    def stopping_statistic(self) -> tuple[float, float]:
        """``rhs - lhs`` of condition (4) (``lhs >= rhs`` stops) against 0."""
        c = self.certificate
        return (float(c["rhs"]) - float(c["lhs"]), 0.0) if "lhs" in c else (math.nan, math.nan)

    def __init__(self, solver: Any, problem: Any, rng: Any) -> None:
        super().__init__(solver, problem, rng)
        if solver.alpha == "theorem1" and self.Q is not None:
            # Theorem 1's ratio lambda_min(W)/lambda_max(W) * alpha_DkS/(k-1) is for a W
            # positive definite on R^n; on a class confined to a subspace W = A^+ is
            # singular (lambda_min = 0, ratio 0, alpha_t 0: the run could never stop), and in
            # the subspace's coordinates members are not 0/1 vectors, so the DkS reduction
            # behind Theorem 1 does not apply there either.
            raise InvalidParameterError(
                "The 'alpha' parameter of SAQM cannot be 'theorem1' on this decision class: its "
                f"members span a proper subspace of R^{self.n} (rank {self.Q.shape[1]}; e.g. bases "
                "of a partition matroid), where A_t is singular and Theorem 1's ratio "
                "lambda_min/lambda_max * alpha_DkS/(k-1) is 0, so the run would never stop. "
                "Use alpha='certified' (the per-call certified ratio, valid here). Got "
                "alpha='theorem1' instead."
            )

    def _skip_is_valid(self) -> bool:
        """Whether Z_t / alpha_t >= C_t sqrt(OPT) is guaranteed, which the skip in
        :meth:`_check` needs: Theorem 1's ratio must not exceed lambda_min / lambda_max
        (every k-set achieves that), i.e. the oracle's alpha_DkS <= k - 1 (true of the
        built-in oracles; a user oracle claiming more gets the full check every time)."""
        ok = getattr(self, "_skip_ok", None)
        if ok is None:
            n = int(self._A_inv().shape[0])
            ok = self.k <= 1 or float(self.solver._qm(certify=False).dks.alpha(n, self.k)) <= self.k - 1
            self._skip_ok = ok
        return bool(ok)

    def _check(self) -> None:
        s: SAQM = self.solver  # type: ignore[assignment]
        theta = self._theta()
        A_inv = self._A_inv()
        chi = self.dc.argmax(theta)
        self._chi_hat = chi
        C = self._radius()
        val_hat = float(theta[chi].sum())
        other = self.dc.argmax_excluding(theta, chi)
        if other is None:  # a one-member class: nothing to distinguish
            self.stop("identified", "the decision class has one member")
            return
        val_other = float(theta[other].sum())
        norm_hat = math.sqrt(max(float(chi @ A_inv @ chi), 0.0))
        lhs = val_hat - C * norm_hat
        if isinstance(s.alpha, str) and not s.full_certificate and self._skip_is_valid():
            # Z_t / alpha_t >= C_t sqrt(OPT) >= C_t ||chi_hat||_{A^-1} for both string modes
            # (certified: Z/alpha = C sqrt(min(value / theorem1_ratio, upper_bound)), each
            # >= OPT; chi_hat is a k-set, so OPT >= ||chi_hat||^2). When (4) already fails
            # with this lower bound in place of Z_t / alpha_t, the quadratic maximization
            # and its certificate cannot change the decision: skip them.
            rhs_low = val_other + C * norm_hat * (1.0 - 1e-9) - s.epsilon
            if lhs < rhs_low:
                self.certificate = {
                    "C_t": C, "Z_t": math.nan, "alpha_t": math.nan, "lhs": lhs, "rhs": rhs_low,
                    "rhs_is_lower_bound": True, "theorem1_ratio": math.nan, "certified_ratio": math.nan,
                }
                self.record(t=self.samples, lhs=lhs, rhs=rhs_low, Z=math.nan, alpha=math.nan)
                return
        if s.alpha == "certified":
            _, cert = s._qm()._maximize_valid(A_inv, self.k)
            th1, cr = cert.worst_case_ratio, cert.certified_ratio
        else:
            # Theorem 1 only needs the spectrum: lambda(A^-1) = 1 / lambda(A).
            _, cert = s._qm(certify=False)._maximize_valid(A_inv, self.k)
            lam = np.linalg.eigvalsh(self.ls.A)
            th1 = float(lam[0] / lam[-1] * cert.alpha_dks / (self.k - 1)) if self.k > 1 else 1.0
            cr = math.nan
        Z = C * math.sqrt(max(cert.value, 0.0))
        alpha = s._alpha(th1, cr)
        rhs = val_other + Z / alpha - s.epsilon
        self.certificate = {
            "C_t": C, "Z_t": Z, "alpha_t": alpha, "lhs": lhs, "rhs": rhs,
            "rhs_is_lower_bound": False, "theorem1_ratio": th1, "certified_ratio": cr,
        }
        self.record(t=self.samples, lhs=lhs, rhs=rhs, Z=Z, alpha=alpha)
        if lhs >= rhs:
            self.stop("identified", "stopping condition (4) holds")


@register_solver
class SAQM(_StaticFullBandit):
    """SAQM (Kuroki et al., Algorithm 2): static allocation + approximate quadratic maximization.

    Stops when condition (4) holds:

        theta_hat(M_hat) - C_t ||chi_M_hat||_{A^-1} >= max_{M != M_hat} theta_hat(M) + Z_t / alpha_t - eps

    with ``Z_t = C_t ||chi_{M'_t}||_{A^-1}`` for the super-arm M'_t returned by quadratic
    maximization (Algorithm 1) on ``W = A_t^{-1}``, and alpha_t an approximation ratio for
    CEM (1) (``Z_t >= alpha_t max_M C_t ||chi_M||_{A^-1}``). Note: (4) as printed reads
    ``(1/alpha_t) C_t Z_t``, which would count C_t twice; the proof of Lemma 8 uses
    ``Z_t / alpha_t``, which is what we implement.

    ``alpha`` chooses alpha_t: ``"certified"`` (default) the better of two valid ratios,
    the square root of Theorem 1's QP ratio ``lambda_min/lambda_max * alpha_DkS/(k-1)`` and
    the square root of the per-call certified QP ratio ``value / upper bound`` (an alpha-
    approximation of the QP is a sqrt(alpha)-approximation of CEM); ``"theorem1"`` only the
    first (the paper's guarantee; refused at ``start`` on a class whose members span a
    proper subspace, e.g. partition-matroid bases, where that ratio is 0); a float in (0, 1] fixes alpha_t (the paper's Figure 3
    uses alpha = 0.9; then the (eps, delta)-PAC guarantee no longer holds).
    ``dks`` names the densest-k-subgraph oracle (peeling, as in the paper's experiments).

    ``full_certificate`` (default False): with a string ``alpha`` a check first compares
    ``lhs`` with the cheaper ``theta_hat(M'') + C_t ||chi_M_hat||_{A^-1} - eps``, a lower
    bound on the right-hand side of (4) (``Z_t / alpha_t >= C_t max_M ||chi_M||_{A^-1}``,
    and M_hat is a k-set). When (4) fails already against it, the quadratic maximization
    is skipped: the decision is the same, so the sample count is too, and the check's
    ``certificate`` carries that lower bound as ``rhs`` (``rhs_is_lower_bound: True``) with
    ``Z_t`` and ``alpha_t`` NaN. ``full_certificate=True`` computes ``Z_t`` and ``alpha_t``
    at every check (for studies of the approximation, e.g. Figure 1). A stopping check
    always carries the full certificate.
    """

    name: ClassVar[str] = "saqm"
    needs_fixed_size: ClassVar[bool] = True

    def __init__(
        self,
        *,
        delta: float = 0.05,
        epsilon: float = 0.0,
        allocation: str = "g",
        decision_class: Any = None,
        sigma: float | None = None,
        batch_size: int | None = None,
        growth: float = 0.01,
        support: Any = None,
        max_enumerate: int = 3432,
        dks: str = "peeling",
        alpha: Any = "certified",
        full_certificate: bool = False,
    ) -> None:
        super().__init__(delta=delta, epsilon=epsilon, allocation=allocation, decision_class=decision_class,
                         sigma=sigma, batch_size=batch_size, growth=growth, support=support,
                         max_enumerate=max_enumerate)
        self.dks = _check_dks(dks, "SAQM")
        if isinstance(alpha, str):
            check_choice(alpha, "alpha", ("certified", "theorem1"), owner="SAQM")
        else:
            alpha = check_float(alpha, "alpha", owner="SAQM", low=0.0, high=1.0, closed="right")
        self.alpha = alpha
        self.full_certificate = check_bool(full_certificate, "full_certificate", owner="SAQM")

    def _qm(self, certify: bool = True) -> Any:
        # Built per call (cheap: it resolves the DkS oracle), not cached on the settings
        # object: a run must leave the solver unchanged (check_solver's settings_unchanged).

        return QuadraticMaximization(dks=self.dks, certify=certify)

    def _alpha(self, theorem1_ratio: float, certified_ratio: float) -> float:
        """alpha_t for CEM: the square root of a QP ratio (see the class docstring)."""
        if not isinstance(self.alpha, str):
            return float(self.alpha)
        th = math.sqrt(max(theorem1_ratio or 0.0, 0.0))
        if self.alpha == "theorem1":
            return max(th, 1e-300)
        cr = certified_ratio if certified_ratio == certified_ratio else 0.0  # NaN -> 0
        return max(th, math.sqrt(max(cr, 0.0)), 1e-300)

    exploration_class = _SAQMExploration


# ============================================================================== SA-FOA
class _SAFOAExploration(_StaticExploration):
    def stopping_statistic(self) -> tuple[float, float]:
        """``Z'_t - theta_hat(M_hat)`` (its certified upper bound with ``certified=True``)
        against ``epsilon / 2``."""
        c = self.certificate
        key = "certified_statistic" if self.solver.certified else "statistic"
        return (float(c[key]), self.solver.epsilon / 2.0) if key in c else (math.nan, math.nan)

    def _check(self) -> None:
        s: SAFOA = self.solver  # type: ignore[assignment]
        theta = self._theta()
        A_inv = self._A_inv()
        chi = self.dc.argmax(theta)
        self._chi_hat = chi
        C = self._radius()
        val_hat = float(theta[chi].sum())
        other = self.dc.argmax_excluding(theta, chi)
        if other is None:
            self.stop("identified", "the decision class has one member")
            return
        chi_f = chi.astype(float)
        v = A_inv @ chi_f
        quad_hat = float(chi_f @ v)

        def objective(masks: NDArray[np.bool_]) -> NDArray[np.float64]:
            D = masks.astype(float) - chi_f
            q = np.einsum("ij,ij->i", D @ A_inv, D)
            return masks.astype(float) @ theta + C * np.sqrt(np.maximum(q, 0.0))

        # Candidates F: l*n quadratic maximizations of B_t for M_i drawn from supp(p).
        m = s.ell * self.n
        draws = self.rng.integers(0, len(self.support), size=m)
        D = self.support[draws].astype(float) - chi_f
        nrm = np.sqrt(np.maximum(np.einsum("ij,ij->i", D @ A_inv, D), 0.0))
        ok = nrm > 0.0  # M_i = M_hat: gamma undefined; this draw adds nothing
        # B_t = gamma A^-1 - Diag(2 gamma A^-1 chi_hat) + Diag(theta_hat) depends on the draw
        # only through gamma = C_t / (2 ||chi_{M_i} - chi_hat||): one QP per distinct gamma.
        gammas = np.unique(C / (2.0 * nrm[ok]))
        cands = [other]
        if gammas.size:
            G = A_inv - 2.0 * np.diag(v)
            masks = s._maximize_family(G, theta, gammas, self.k)
            for mask in masks:
                if not np.array_equal(mask, chi) and self.dc.contains(mask):
                    cands.append(mask)
        F = np.unique(np.asarray(cands, dtype=bool), axis=0)
        vals = objective(F)
        Zp = float(vals.max())
        stat = Zp - val_hat
        cert: dict[str, Any] = {"C_t": C, "Z_prime_t": Zp, "statistic": stat, "candidates": int(len(F))}
        stop = s.epsilon / 2.0 >= stat
        if s.certified or s.report_bound:

            W = A_inv - 2.0 * np.diag(v)
            ub_norm_sq = upper_bound_qp(W, self.k) + quad_hat
            ub = float(theta[other].sum()) + C * math.sqrt(max(ub_norm_sq, 0.0))
            cert["upper_bound_5"] = ub
            cert["certified_statistic"] = ub - val_hat
            if s.certified:
                stop = s.epsilon / 2.0 >= ub - val_hat
        self.certificate = cert
        self.record(t=self.samples, statistic=stat, Z_prime=Zp,
                    certified_statistic=cert.get("certified_statistic", np.nan))
        if stop:
            self.stop("identified", "eps/2 >= Z'_t - theta_hat(M_hat)" + (" (certified bound)" if s.certified else ""))


@register_solver
class SAFOA(_StaticFullBandit):
    """SA-FOA (Kuroki et al., Algorithm 3): static allocation + first-order approximation.

    At each check, for ``m = ell * n`` super-arms M_i drawn uniformly from supp(p),
    ``gamma = C_t / (2 ||chi_{M_i} - chi_{M_hat}||_{A^-1})`` and quadratic maximization of
    ``B_t = gamma A^-1 - Diag(2 gamma A^-1 chi_{M_hat}) + Diag(theta_hat)`` gives a candidate;
    ``Z'_t`` is the best value of (5), ``theta_hat(M) + C_t ||chi_M - chi_{M_hat}||_{A^-1}``,
    over the candidates F, and the run stops when ``eps/2 >= Z'_t - theta_hat(M_hat)``.

    Choices where the paper is silent: M_hat itself is removed from F (it is excluded in
    (5), and its value would make the statistic 0); the best super-arm other than M_hat by
    theta_hat (the linear oracle's ``argmax_excluding``) is always a candidate; a draw with
    M_i = M_hat (gamma undefined) is skipped.

    PAC status: Z'_t is *attained* by super-arms found, so it lower-bounds the maximum of
    (5); the paper's remark that "we compute the upper bound of the objective function in
    (5)" does not hold for this Z'_t, and the default mode carries no (eps, delta)-PAC
    guarantee. ``certified=True`` stops only when a valid *upper bound* on (5) is within
    eps/2: ``max_{M != M_hat} theta_hat(M) + C_t sqrt(U)``, with U an upper bound on
    ``max_{|S|=k} ||chi_S - chi_{M_hat}||^2_{A^-1}`` from the quadratic oracle's bound on the
    QP ``x^T (A^-1 - 2 Diag(A^-1 chi_{M_hat})) x + chi_{M_hat}^T A^-1 chi_{M_hat}``; that
    mode is (eps, delta)-PAC by the argument of Lemma 8. ``report_bound=True`` computes the
    certified statistic in the certificate without using it to stop.
    """

    name: ClassVar[str] = "sa-foa"
    needs_fixed_size: ClassVar[bool] = True

    def __init__(
        self,
        *,
        delta: float = 0.05,
        epsilon: float = 0.0,
        allocation: str = "g",
        decision_class: Any = None,
        sigma: float | None = None,
        batch_size: int | None = None,
        growth: float = 0.01,
        support: Any = None,
        max_enumerate: int = 3432,
        ell: int = 1,
        dks: str = "peeling",
        certified: bool = False,
        report_bound: bool = False,
    ) -> None:
        super().__init__(delta=delta, epsilon=epsilon, allocation=allocation, decision_class=decision_class,
                         sigma=sigma, batch_size=batch_size, growth=growth, support=support,
                         max_enumerate=max_enumerate)
        self.ell = check_int(ell, "ell", owner="SAFOA", low=1)
        self.dks = _check_dks(dks, "SAFOA")
        # bool(...) would turn the string "false" into True: only real booleans.
        self.certified = check_bool(certified, "certified", owner="SAFOA")
        self.report_bound = check_bool(report_bound, "report_bound", owner="SAFOA")

    exploration_class = _SAFOAExploration

    def _maximize_family(self, G: NDArray[np.float64], theta: NDArray[np.float64],
                         gammas: NDArray[np.float64], k: int) -> NDArray[np.bool_]:
        """Algorithm 1 on B(gamma) = gamma G + Diag(theta) for each gamma (rows of masks).

        With greedy peeling the graphs w~(gamma) = B_ij + B_ii + B_jj are peeled together
        (GreedyPeeling.solve_many, identical to one call each); other DkS oracles are
        called once per gamma."""
        if self.dks == "peeling":

            g = np.diag(G)
            off = G - np.diag(g)
            bd = gammas[:, None] * g[None, :] + theta[None, :]  # diag of each B
            Wt = np.multiply.outer(gammas, off)
            Wt += bd[:, :, None]
            Wt += bd[:, None, :]
            return GreedyPeeling().solve_many(Wt, k, copy=False)
        qm = self._qm()
        return np.array([qm.maximize(gm * G + np.diag(theta), k, require_pd=False)[0] for gm in gammas])

    def _qm(self) -> Any:  # the l*n inner calls need no certificate (skips an eigendecomposition each)

        return QuadraticMaximization(dks=self.dks, certify=False)


# ============================================================================== ICB
class _ICBExploration(_StaticExploration):
    stops_when = "statistic < threshold"

    def stopping_statistic(self) -> tuple[float, float]:
        """``Z*_t - theta_hat(M_hat)`` against ``epsilon`` (stopping condition (2))."""
        c = self.certificate
        return (float(c["statistic"]), self.solver.epsilon) if "statistic" in c else (math.nan, math.nan)

    def _width(self, diff: NDArray[np.float64], A_inv: NDArray[np.float64], C: float) -> float:
        return C * float(np.abs(diff) @ np.sqrt(np.maximum(np.diag(A_inv), 0.0)))

    def _radius(self) -> float:

        return float(independent_radius(self.samples, self.solver.delta, sigma=self.sigma, n_arms=self.n))

    def _check(self) -> None:
        s = self.solver
        theta = self._theta()
        r = np.sqrt(np.maximum(np.diag(self._A_inv()), 0.0))
        chi = self.dc.argmax(theta)
        self._chi_hat = chi
        C = self._radius()
        val_hat = float(theta[chi].sum())
        # P1 is linear in chi_M: |chi_M(i) - chi_hat(i)| = chi_M(i) off M_hat, 1 - chi_M(i) on it.
        w = theta + C * r * np.where(chi, -1.0, 1.0)
        const = C * float(r[chi].sum())
        best = self.dc.argmax_excluding(w, chi)
        if best is None:
            self.stop("identified", "the decision class has one member")
            return
        Z = float(w[best].sum()) + const
        stat = Z - val_hat
        self.certificate = {"C_t": C, "Z_star_t": Z, "statistic": stat}
        self.record(t=self.samples, statistic=stat)
        if stat < s.epsilon:
            self.stop("identified", "stopping condition (2): Z*_t - theta_hat(M_hat) < eps")


@register_solver
class ICB(_StaticFullBandit):
    """ICB (Kuroki et al., Algorithm 4): static allocation with independent confidence bounds.

    ``Z*_t = max_{M != M_hat} theta_hat(M) + C_t sum_i |chi_M(i) - chi_{M_hat}(i)| sqrt(A^-1(i, i))``
    (problem P1) is a linear maximization over the decision class (the weights are
    ``theta_hat(i) + C_t r_i`` off M_hat and ``theta_hat(i) - C_t r_i`` on it, plus a constant),
    solved by the class's ``argmax_excluding``; so ICB runs on top-k, every matroid, paths,
    matchings and CP-SAT classes. C_t is Lemma 1's ``sigma sqrt(2 log(c' t^2 n / delta))``
    with the corrected ``c' = pi^2/3``: the printed ``c' = 6/pi^2`` makes the union bound over
    the n arms and all t >= 1 equal to ``(2 delta / c') pi^2/6 = 2 pi^4 delta / 36 ~ 5.41
    delta`` (see :func:`combex.estimation.independent_radius`).
    Stops when ``Z*_t - theta_hat(M_hat) < eps`` (condition (2)).
    """

    name: ClassVar[str] = "icb"
    exploration_class = _ICBExploration


# ============================================================================== Exhaustive
class _ExhaustiveExploration(_StaticExploration):
    _members: NDArray[np.bool_] | None = None
    stops_when = "statistic < threshold"

    def stopping_statistic(self) -> tuple[float, float]:
        """``Z*_t`` against ``epsilon`` (Algorithm 5)."""
        c = self.certificate
        return (float(c["Z_star_t"]), self.solver.epsilon) if "Z_star_t" in c else (math.nan, math.nan)

    def _all(self) -> NDArray[np.bool_]:
        if self._members is None:
            size = getattr(self.dc, "size", None)
            if size is not None and size > self.solver.max_members:
                raise InvalidParameterError(
                    f"Exhaustive would enumerate {size} super-arms, more than max_members="
                    f"{self.solver.max_members}; raise max_members or use a polynomial solver."
                )
            self._members = np.array(list(self.dc.enumerate()), dtype=bool)
            self.log_K = float(math.log(len(self._members)))
        return self._members

    def _check(self) -> None:
        s = self.solver
        X = self._all()
        theta = self._theta()
        A_inv = self._A_inv()
        C = self._radius()
        vals = X @ theta
        j = int(np.argmax(vals))
        chi = X[j]
        self._chi_hat = chi.copy()
        best = -np.inf
        chunk = max(1, 2_000_000 // max(self.n, 1))
        chi_f = chi.astype(float)
        for lo in range(0, len(X), chunk):
            D = X[lo:lo + chunk].astype(float) - chi_f
            q = np.einsum("ij,ij->i", D @ A_inv, D)
            cand = vals[lo:lo + chunk] + C * np.sqrt(np.maximum(q, 0.0))
            if lo <= j < lo + chunk:
                cand[j - lo] = -np.inf
            best = max(best, float(cand.max()) if cand.size else -np.inf)
        Z = best - float(vals[j])
        self.certificate = {"C_t": C, "Z_star_t": Z}
        self.record(t=self.samples, statistic=Z)
        if len(X) == 1 or Z < s.epsilon:
            self.stop("identified", "Z*_t < eps (Algorithm 5)")


@register_solver
class Exhaustive(_StaticFullBandit):
    """Exhaustive (Kuroki et al., Algorithm 5, Appendix E): the exact exponential-time baseline.

    Enumerates the decision class and stops when
    ``Z*_t = max_{M != M_hat} (theta_hat(M) + C_t ||chi_M - chi_{M_hat}||_{A^-1}) - theta_hat(M_hat) < eps``,
    with C_t of Proposition 1 for ``K = |M|`` (the number of members enumerated). Refuses
    classes with more than ``max_members`` members.
    """

    name: ClassVar[str] = "exhaustive"

    def __init__(
        self,
        *,
        delta: float = 0.05,
        epsilon: float = 0.0,
        allocation: str = "g",
        decision_class: Any = None,
        sigma: float | None = None,
        batch_size: int | None = None,
        growth: float = 0.01,
        support: Any = None,
        max_enumerate: int = 3432,
        max_members: int = 5_000_000,
    ) -> None:
        super().__init__(delta=delta, epsilon=epsilon, allocation=allocation, decision_class=decision_class,
                         sigma=sigma, batch_size=batch_size, growth=growth, support=support,
                         max_enumerate=max_enumerate)
        self.max_members = check_int(max_members, "max_members", owner="Exhaustive", low=1)

    exploration_class = _ExhaustiveExploration

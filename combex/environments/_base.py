"""The environment contract: who answers a pull.

``pull(arm, count) -> (reward_sum, count)`` returns the sum of ``count`` i.i.d. rewards
of one arm *exactly in distribution* in one call (a Gaussian sum is Gaussian, a Bernoulli
sum is binomial...). ``pull_many(arms, counts)`` does the same for many arms at once and is
what solvers with static allocations use. This is what makes 10^8-sample studies take
seconds.

An *arm* is

* ``arm_type == "index"``: an int in ``[0, n_arms)`` (multi-armed / semi-bandit arms,
  or the row of a feature matrix for linear bandits);
* ``arm_type == "mask"``: a bool indicator vector of shape ``(n_arms,)`` (a super-arm of
  a full-bandit problem; the reward is the sum over its members).

The *problem* (:class:`Problem`) is what a solver may know about an environment before
pulling: sizes, the noise model, the features, the decision class. A real study (human
evaluations) passes a :class:`Problem` to ``solver.start`` and answers ``ask()`` itself.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

import numpy as np
from numpy.typing import NDArray

from .._state import restore_generator
from .._validation import check_float, check_int, check_mask, check_rng, param_error
from ..exceptions import InvalidParameterError

__all__ = ["NoiseModel", "Problem", "Environment"]

ArmType = Literal["index", "mask"]


@dataclass(frozen=True)
class NoiseModel:
    """What a solver may assume about the noise of one observation.

    Attributes
    ----------
    kind : str
        ``"gaussian"``, ``"bernoulli"``, ``"rademacher"``, ``"bounded"``, ``"data"``...
    sigma : float or None
        Sub-Gaussian scale of the noise of one observation of *one base arm* (for a
        Gaussian arm its standard deviation; for noise bounded in [-R, R], R; for a
        Bernoulli arm 1/2); with ``level="observation"``, of one whole observation (a
        team's score). None: **unknown** -- nobody knows the noise level before the study;
        the GLR solvers then estimate it (their ``divergence="unknown-variance"`` rule is
        the default), and a solver that needs a known scale refuses the problem.
    bound : float or None
        R such that the noise of one base-arm observation lies in [-R, R], or None when
        unbounded (Gaussian). Radii that need a bounded noise (Proposition 1 of the
        full-bandit paper) refuse a noise model without it unless told otherwise.
    independent : bool
        Whether the noises of the members of a super-arm are independent (False for the
        data-backed crowd environment, whose team scores are correlated).
    level : {"arm", "observation"}
        ``"arm"`` (default): each base arm carries its own noise and a team's score adds the
        members' noises; ``"observation"``: one noise term per observation whatever the team
        (a session's score: the same assessor, the same day), so ``sigma`` is the scale of a
        team score's noise.
    """

    kind: str
    sigma: float | None
    bound: float | None = None
    independent: bool = True
    level: str = "arm"

    def __post_init__(self) -> None:
        if self.sigma is not None:
            check_float(self.sigma, "sigma", owner="NoiseModel", low=0.0, closed="neither")
        elif self.kind in ("bernoulli", "rademacher"):
            raise InvalidParameterError(
                f"The 'sigma' parameter of NoiseModel must be a float for kind={self.kind!r} (its scale is "
                "fixed by the kind). Got None instead."
            )
        if self.bound is not None:
            check_float(self.bound, "bound", owner="NoiseModel", low=0.0, closed="neither")
        if self.level not in ("arm", "observation"):
            raise param_error("level", "NoiseModel", "'arm' or 'observation'", self.level)

    @property
    def known(self) -> bool:
        """Whether the noise scale is declared (``sigma`` is not None)."""
        return self.sigma is not None

    def scale(self, k: int = 1, *, owner: str = "solver") -> float:
        """Sub-Gaussian scale of one observation of a super-arm of ``k`` members.

        ``level="observation"``: ``sigma``. Otherwise ``sqrt(k) sigma`` for independent
        members (the MGFs multiply) and ``k sigma`` for dependent ones (Hoelder's inequality
        with k factors of exponent k: ``E exp(l sum eta_i) <= prod (E exp(k l eta_i))^(1/k)
        <= exp(l^2 (k sigma)^2 / 2)``, whatever the correlation).

        Raises
        ------
        InvalidParameterError
            When the scale is unknown (``sigma`` None): ``owner`` needs a known scale.
        """
        if self.sigma is None:
            raise InvalidParameterError(
                f"{owner} needs a known noise scale, but the problem's noise model declares none (sigma=None: "
                "unknown variance). Give the scale (e.g. sigma=... of the solver or the noise model), or use a GLR "
                "solver ('top-two', 'fw-sampling', 'track-and-stop', 'lingame'), which estimates it."
            )
        if self.level == "observation" or k <= 1:
            return float(self.sigma)
        return float(math.sqrt(k) * self.sigma) if self.independent else float(k * self.sigma)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "sigma": self.sigma, "bound": self.bound, "independent": self.independent,
                "level": self.level}


@dataclass(frozen=True)
class Problem:
    """What a solver knows before sampling.

    Attributes
    ----------
    n_arms : int
        Number of base arms (ground-set size for combinatorial problems, number of
        feature rows for linear problems).
    noise : NoiseModel
    arm_type : {"index", "mask"}
    decision_class : DecisionClass or None
        The family of super-arms (combinatorial problems).
    features : array of shape (n_arms, d) or None
        Arm features (linear problems).
    """

    n_arms: int
    noise: NoiseModel
    arm_type: ArmType = "index"
    decision_class: Any = None
    features: NDArray[np.float64] | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Environment(ABC):
    """A simulator (or data replay) answering pulls; knows the truth for scoring.

    Subclasses set ``n_arms``, ``arm_type`` and ``noise`` and implement
    :meth:`_pull_many` and :meth:`means` (the expected reward of every base arm, or of
    every feature row for linear environments). ``rng`` is the generator of the noise;
    :meth:`reset` restores the initial state with a new generator.
    """

    n_arms: int
    arm_type: ArmType = "index"
    noise: NoiseModel

    def __init__(self, *, rng: Any = None) -> None:
        self.rng = check_rng(rng)

    # ----------------------------------------------------------------- contract
    @abstractmethod
    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        """Reward sums for validated ``arms`` (shape (m,) ints or (m, n) bools) and
        ``counts`` (shape (m,), each >= 0)."""

    @abstractmethod
    def means(self) -> NDArray[np.float64]:
        """Expected reward of each base arm (shape (n_arms,))."""

    # ----------------------------------------------------------------- public API
    @property
    def problem(self) -> Problem:
        """The :class:`Problem` a solver may see (no truth)."""
        return Problem(
            n_arms=self.n_arms,
            noise=self.noise,
            arm_type=self.arm_type,
            decision_class=getattr(self, "decision_class", None),
            features=getattr(self, "features", None),
            info=dict(getattr(self, "problem_info", None) or {}),
        )

    def pull(self, arm: Any, count: int = 1) -> tuple[float, int]:
        """Pull ``arm`` ``count`` times; return ``(sum of the rewards, count)``."""
        count = check_int(count, "count", owner=type(self).__name__, low=0)
        arms = self._check_arms([arm] if self.arm_type == "index" else np.asarray(arm)[None, ...])
        s = self._pull_many(arms, np.array([count], dtype=np.int64))
        return float(s[0]), count

    def pull_many(self, arms: Any, counts: Any) -> NDArray[np.float64]:
        """Pull each ``arms[i]`` ``counts[i]`` times; return the reward sums (shape (m,)).

        Equal in distribution to calling :meth:`pull` for each arm in turn. The arguments
        are checked once per call (a few scalar tests for a one-arm batch, so the loop of
        an ask / tell run pays about a microsecond here).
        """
        a = self._check_arms(arms)
        c = counts if isinstance(counts, np.ndarray) else np.asarray(counts)
        m = a.shape[0]
        if c.shape != (m,) or c.dtype.kind not in "iu" or (
            m and (min(c.tolist()) < 0 if m <= 4 else bool((c < 0).any()))
        ):
            raise InvalidParameterError(
                f"The 'counts' parameter of {type(self).__name__}.pull_many must be an array of "
                f"{m} non-negative ints. Got {counts!r} instead."
            )
        return self._pull_many(a, c if c.dtype == np.int64 else c.astype(np.int64))

    # ----------------------------------------------------------------- state
    #: Whether ``pull_many`` of ``m`` single pulls of one arm returns exactly the rewards
    #: of ``m`` successive calls (the generator is consumed entry by entry). A solver may
    #: then draw a block of single pulls ahead and, when it uses only part of it, go back
    #: with :meth:`load_state_dict` and draw again the part it uses (LinGapE's fast path).
    sequential_draws: bool = False

    def state_dict(self) -> dict[str, Any]:
        """The mutable state of the environment as JSON values and arrays: its noise
        generator (``rng_type``, ``rng``: the bit generator's state) and, in subclasses
        with more state (reward-list read positions), the rest. The truth is not included
        (it does not change): :meth:`load_state_dict` puts the same environment back into
        this state. This is the public way to save a study's environment or to rewind a
        simulation; solvers never touch ``rng`` directly."""
        bg = self.rng.bit_generator
        return {"type": type(self).__name__, "n_arms": int(self.n_arms),
                "rng_type": type(bg).__name__, "rng": bg.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> "Environment":
        """Put the environment back into ``state`` (from :meth:`state_dict`); returns self.

        Raises
        ------
        InvalidParameterError
            If ``state`` belongs to another kind of environment or another number of arms.
        """
        if not isinstance(state, Mapping) or state.get("type") != type(self).__name__ or int(
            state.get("n_arms", -1)
        ) != int(self.n_arms):
            got = (state.get("type"), state.get("n_arms")) if isinstance(state, Mapping) else state
            raise InvalidParameterError(
                f"The 'state' parameter of {type(self).__name__}.load_state_dict must come from the "
                f"state_dict() of a {type(self).__name__} with {self.n_arms} arms. Got {got!r} instead."
            )
        # validated through the allow-list of bit generators (a saved file never chooses
        # which function of numpy.random is called)
        new = restore_generator(state.get("rng_type"), state.get("rng"), source=f"The state given to "
                                f"{type(self).__name__}.load_state_dict", field="rng")
        bg = self.rng.bit_generator
        if type(bg) is type(new.bit_generator):
            bg.state = new.bit_generator.state  # in place: same generator object, same stream
        else:
            self.rng = new
        return self

    def value(self, arm: Any) -> float:
        """Expected reward of ``arm`` (an index, or the sum over a mask's members)."""
        mu = self.means()
        if self.arm_type == "mask":
            return float(mu[check_mask(arm, self.n_arms, "arm")].sum())
        return float(mu[self._check_index(arm)])

    def best(self) -> Any:
        """The optimal arm (index) or super-arm (mask over the decision class)."""
        mu = self.means()
        if self.arm_type == "mask":
            dc = getattr(self, "decision_class", None)
            if dc is None:
                raise InvalidParameterError(f"{type(self).__name__} has no decision class to score against.")
            return dc.argmax(mu)
        return int(np.argmax(mu))

    def gap(self, arm: Any) -> float:
        """value(best) - value(arm) >= 0."""
        return self.value(self.best()) - self.value(arm)

    def is_correct(self, answer: Any, epsilon: float = 0.0) -> bool:
        """Whether ``answer`` is epsilon-optimal (epsilon=0: optimal up to 1e-12)."""
        return self.gap(answer) <= epsilon + 1e-12

    def reset(self, rng: Any = None) -> "Environment":
        """Restore the initial state (e.g. unshuffled reward lists) with a new noise
        generator; returns self."""
        self.rng = check_rng(rng)
        return self

    def spawn(self, rng: Any = None) -> "Environment":
        """A copy sharing the truth with a fresh state and its own generator."""
        other = copy.copy(self)
        return other.reset(rng)

    # ----------------------------------------------------------------- helpers
    def _check_index(self, arm: Any) -> int:
        return check_int(arm, "arm", owner=type(self).__name__, low=0, high=self.n_arms - 1)

    def _check_arms(self, arms: Any) -> NDArray[Any]:
        a = arms if isinstance(arms, np.ndarray) else np.asarray(arms)
        if self.arm_type == "index":
            if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
                raise param_error("arms", type(self).__name__, "a 1-d array of arm indices", arms)
            if a.shape[0] <= 4:  # the ask / tell loop of adaptive solvers: scalar checks
                for v in a.tolist():
                    if v < 0 or v >= self.n_arms:
                        raise param_error("arm", type(self).__name__, f"an int in the range [0, {self.n_arms - 1}]", v)
            elif a.size and (a.min() < 0 or a.max() >= self.n_arms):
                bad = a[(a < 0) | (a >= self.n_arms)][0]
                raise param_error("arm", type(self).__name__, f"an int in the range [0, {self.n_arms - 1}]", int(bad))
            return a if a.dtype == np.intp else a.astype(np.intp)
        if a.ndim != 2 or a.shape[1] != self.n_arms:
            raise InvalidParameterError(
                f"The 'arms' parameter of {type(self).__name__} must be a bool array of shape "
                f"(m, {self.n_arms}). Got an array of shape {a.shape} instead."
            )
        if a.dtype != np.bool_:
            if not np.all((a == 0) | (a == 1)):
                raise param_error("arms", type(self).__name__, "a 0/1 array", arms)
            a = a.astype(bool)
        return a

    def params(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

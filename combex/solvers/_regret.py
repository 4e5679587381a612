"""The regret contract: policies that play a fixed horizon against a changing arm set.

Pure exploration (:class:`~combex.solvers.Solver`, the ``"pac"`` contract) identifies a
best arm and stops with a certificate. A *regret policy* (the ``"regret"`` contract) never
stops early and has nothing to certify: it plays ``T`` steps against an environment whose
arm set changes (arrivals and departures announced by ``env.changes(t)``), and is judged by
its cumulative regret and its running time. The two contracts share the registry
(:func:`~combex.solvers.get_solver` returns the class for both; ``cls.contract`` tells
them apart) and sklearn-style settings (:class:`~combex.solvers.Algorithm`).

A policy names the state of one run, ``_run_class``: a :class:`RegretRun` whose
constructor does the preprocessing and whose methods are the algorithm's named steps
(``leave``, ``arrive``, ``choose``, ``observe``); :meth:`RegretPolicy.run` is the one loop
over them, and the one place where time is split into preprocessing, online and index maintenance.
"""

from __future__ import annotations

import time
import warnings
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_rng
from ..exceptions import InvalidParameterError
from ._base import Algorithm

__all__ = ["RegretPolicy", "RegretResult", "RegretRun"]


@dataclass(frozen=True)
class RegretResult:
    """The outcome of one run of a regret policy.

    Attributes
    ----------
    regret : float
        Cumulative regret ``sum_t max_{a present} x_a^T theta* - x_{a_t}^T theta*``.
    curve : array of shape (T,)
        Cumulative regret after each step.
    arms : int array of shape (T,)
        Arms played.
    wall_seconds : float
        Total wall time: preprocessing plus online.
    preprocess_seconds : float
        Time to build the data structures over the initial arms (before step 1).
    index_maintenance_seconds : float
        Online time spent inserting / deleting / rebuilding search indexes (arrivals,
        departures, Sub-Elim's stage moves); part of :attr:`online_seconds`.
    info : dict
        Policy-specific counters (null queries, eliminations, stage statistics...).
    """

    regret: float
    curve: NDArray[np.float64]
    arms: NDArray[np.int64]
    wall_seconds: float
    preprocess_seconds: float
    index_maintenance_seconds: float = 0.0
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def online_seconds(self) -> float:
        """Wall time of the ``T`` steps (excluding preprocessing)."""
        return self.wall_seconds - self.preprocess_seconds

    @property
    def seconds(self) -> float:
        """Deprecated alias of :attr:`wall_seconds` (the name used before the regret
        contract; every result family says ``wall_seconds``)."""
        warnings.warn("RegretResult.seconds is deprecated; use RegretResult.wall_seconds.", DeprecationWarning,
                      stacklevel=2)
        return self.wall_seconds

    @property
    def steps(self) -> int:
        return int(self.curve.size)

    def to_dict(self) -> dict[str, Any]:
        """The scalar fields, JSON-able (the runner's record of a regret run)."""
        return {
            "regret": float(self.regret),
            "steps": self.steps,
            "wall_seconds": float(self.wall_seconds),
            "preprocess_seconds": float(self.preprocess_seconds),
            "online_seconds": float(self.online_seconds),
            "index_maintenance_seconds": float(self.index_maintenance_seconds),
            "last_arm": int(self.arms[-1]) if self.steps else None,
        }


class RegretRun:
    """The state of one run of a regret policy, with its named steps.

    :meth:`RegretPolicy.run` calls, at every step ``t``: :meth:`leave` (when arms leave),
    :meth:`arrive` (when arms arrive), :meth:`choose` (the arm to play), then
    :meth:`observe` with its reward.
    """

    owner: str = "RegretPolicy"

    def leave(self, removed: NDArray[np.int64]) -> None:
        """Arms that left the arm set (default: refuse, as elimination algorithms must)."""
        raise InvalidParameterError(
            f"{self.owner} cannot handle deletions (Section 5: the remaining arms after "
            "elimination might be deleted); use SubTS or LinTS."
        )

    @abstractmethod
    def arrive(self, added: NDArray[np.int64]) -> None:
        """Arms that joined the arm set."""

    @abstractmethod
    def choose(self, t: int) -> int:
        """The arm to play at step ``t``."""

    @abstractmethod
    def observe(self, arm: int, reward: float) -> None:
        """The reward of the arm played."""

    @property
    def maintenance_seconds(self) -> float:
        """Time spent maintaining search indexes so far (0 for linear scans)."""
        return 0.0

    def info(self) -> dict[str, Any]:
        """Counters reported in :attr:`RegretResult.info`."""
        return {}


class RegretPolicy(Algorithm):
    """Settings of a regret minimizer over a changing arm set (the ``"regret"`` contract).

    ``policy.run(env, T=None, *, rng=None) -> RegretResult`` plays ``T`` steps (default
    ``env.horizon``) on a :class:`~combex.environments.DynamicLinearArms`-like environment,
    reset to its initial arm set first (its noise generator continues).
    """

    contract: ClassVar[str] = "regret"
    #: The state of one run: ``_run_class(policy, env, T, gen)`` does the preprocessing.
    _run_class: ClassVar[type[RegretRun]]

    def _start(self, env: Any, T: int, gen: np.random.Generator) -> RegretRun:
        """Preprocessing over ``env``'s initial arms; the state of the run."""
        return self._run_class(self, env, T, gen)

    def run(self, env: Any, T: int | None = None, *, rng: Any = None) -> RegretResult:
        """Play ``T`` steps (default ``env.horizon``) on ``env`` (reset to its initial arm
        set first; its noise generator continues)."""
        owner = type(self).__name__
        T = _check_env(env, T, owner)
        gen = check_rng(rng)
        t_start = time.perf_counter()
        env.restart()  # the initial arm set; the noise stream goes on
        run = self._start(env, T, gen)
        t_pre = time.perf_counter() - t_start
        pre_maint = run.maintenance_seconds
        curve = np.empty(T, dtype=np.float64)
        played = np.empty(T, dtype=np.int64)
        total = 0.0
        for t in range(1, T + 1):
            added, removed = env.changes(t)
            if removed.size:
                run.leave(np.asarray(removed, dtype=np.int64))
            if added.size:
                run.arrive(np.asarray(added, dtype=np.int64))
            a_t = run.choose(t)
            r = env.pull(a_t)
            total += env.regret(a_t)
            curve[t - 1] = total
            played[t - 1] = a_t
            run.observe(a_t, r)
        wall = time.perf_counter() - t_start
        return RegretResult(total, curve, played, wall, t_pre, run.maintenance_seconds - pre_maint, run.info())


def _check_env(env: Any, T: Any, owner: str) -> int:
    for attr in ("features", "changes", "pull", "regret", "restart", "initial", "horizon"):
        if not hasattr(env, attr):
            raise InvalidParameterError(
                f"The 'env' parameter of {owner}.run must be a DynamicLinearArms-like environment "
                f"(missing {attr!r}). Got {type(env).__name__} instead."
            )
    return check_int(env.horizon if T is None else T, "T", owner=owner, low=1)

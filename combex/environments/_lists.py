"""Finite reward lists sampled WITHOUT replacement (the MAB-BP setting).

In the multi-armed bandit with bounded pulls of Liu, Wu and Mozafari (AAAI 2019), arm
``i`` owns a list ``R_i`` of ``N`` rewards; each pull returns one entry of the list that
has not been returned before. After ``N`` pulls the sum of the returned rewards is the
list total and the empirical mean is the true mean ``p_i = sum(R_i) / N`` exactly.

:class:`RewardLists` holds explicit lists (an ``(n, N)`` array). :class:`BinaryRewardLists`
holds 0/1 lists compactly by their number of ones; it is what the adversarial data set
of the paper (ones returned before zeros) needs at ``10^4 x 10^5`` size.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import _reject_complex, check_bool, check_choice, check_int, param_error
from ..exceptions import InvalidParameterError
from ._base import Environment, NoiseModel, Problem

__all__ = ["RewardLists", "BinaryRewardLists"]


def _list_noise(lower: float, upper: float) -> NoiseModel:
    half = (upper - lower) / 2.0
    # A constant list has no noise; NoiseModel needs sigma > 0, so a degenerate range is
    # represented by the smallest positive scale (the bound field still says 'bounded').
    half = half if half > 0 else np.finfo(np.float64).tiny
    return NoiseModel(kind="bounded", sigma=float(half), bound=float(half))


class _ListsBase(Environment):
    """Shared bookkeeping: per-arm read positions, list size, reward bounds."""

    arm_type = "index"
    list_size: int
    lower: float
    upper: float

    def _init_positions(self) -> None:
        self._pos = np.zeros(self.n_arms, dtype=np.int64)

    @property
    def positions(self) -> NDArray[np.int64]:
        """How many entries of each list have been drawn so far (a copy)."""
        return self._pos.copy()

    @property
    def read_order(self) -> str:
        """How pulls walk each list: ``"random"`` (a uniformly random order, the MAB-BP
        sampling model), ``"given"`` (the stored order) or ``"ones-first"``."""
        return "random"

    @property
    def problem(self) -> Problem:
        """The problem a solver may see: sizes, bounds ``[lower, upper]``, ``N`` and the
        reading order (``info["list_size"]``, ``info["lower"]``, ``info["upper"]``,
        ``info["order"]``), no list contents."""
        return Problem(
            n_arms=self.n_arms,
            noise=self.noise,
            arm_type="index",
            info={"list_size": self.list_size, "lower": self.lower, "upper": self.upper, "order": self.read_order},
        )

    def _advance(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Validate that no list is read past its end; return (start, stop) positions,
        accounting for repeated arms in one call (processed in order)."""
        # Repeated arms within one call draw consecutive segments.
        order = np.argsort(arms, kind="stable")
        a_sorted = arms[order]
        c_sorted = counts[order]
        cum = np.cumsum(c_sorted)
        first = np.r_[True, a_sorted[1:] != a_sorted[:-1]]
        grp_start = np.maximum.accumulate(np.where(first, np.arange(len(a_sorted)), 0))
        before = cum - c_sorted - (cum[grp_start] - c_sorted[grp_start])
        start_sorted = self._pos[a_sorted] + before
        stop_sorted = start_sorted + c_sorted
        if np.any(stop_sorted > self.list_size):
            j = int(np.flatnonzero(stop_sorted > self.list_size)[0])
            arm = int(a_sorted[j])
            raise InvalidParameterError(
                f"Arm {arm} of {type(self).__name__} has a list of {self.list_size} rewards "
                f"and {int(start_sorted[j])} were already drawn: it cannot be pulled "
                f"{int(c_sorted[j])} more times (sampling is without replacement)."
            )
        start = np.empty_like(start_sorted)
        stop = np.empty_like(stop_sorted)
        start[order] = start_sorted
        stop[order] = stop_sorted
        np.maximum.at(self._pos, a_sorted, stop_sorted)
        return start, stop

    def state_dict(self) -> dict[str, Any]:
        """The generator's state and the read positions (:attr:`positions`)."""
        state = super().state_dict()
        state["positions"] = self._pos.copy()
        return state

    def load_state_dict(self, state: Any) -> "_ListsBase":
        super().load_state_dict(state)
        if "positions" in state:
            pos = np.asarray(state["positions"], dtype=np.int64)
            if pos.shape != (self.n_arms,) or np.any(pos < 0) or np.any(pos > self.list_size):
                raise InvalidParameterError(
                    f"The 'positions' of the state given to {type(self).__name__}.load_state_dict must be "
                    f"{self.n_arms} ints in [0, {self.list_size}]. Got {state['positions']!r} instead."
                )
            self._pos = pos.copy()
        return self

    def reset(self, rng: Any = None) -> "_ListsBase":
        super().reset(rng)
        self._init_positions()
        self._shuffle()
        return self

    def _shuffle(self) -> None:  # pragma: no cover - overridden
        pass


class RewardLists(_ListsBase):
    """Arms with explicit finite reward lists, drawn without replacement.

    Arm ``i`` owns the row ``lists[i]`` (``N`` rewards). At construction and at every
    :meth:`reset`, each row is put in a random order (a per-arm permutation drawn from the
    environment's generator); ``pull(i, c)`` returns the sum of the next ``c`` entries of
    that order. Pulling an arm more than ``N`` times in total raises
    :class:`~combex.exceptions.InvalidParameterError`.

    Parameters
    ----------
    lists : array of shape (n_arms, N)
        Finite real rewards.
    shuffle : bool, default True
        Draw a random order per arm. ``False`` returns each list in the given order (the
        adversarial ordering of the BoundedME paper's Figure 1 experiment).
    rng : None, int, SeedSequence or Generator
        Generator of the orders.

    Notes
    -----
    ``means()`` are the list means ``p_i``; ``problem.info`` carries ``list_size`` and the
    reward bounds ``lower = lists.min()``, ``upper = lists.max()``.

    Examples
    --------
    >>> env = RewardLists([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], rng=0)
    >>> env.pull(0, 3)
    (2.0, 3)
    >>> env.positions.tolist()
    [3, 0]
    """

    def __init__(self, lists: Any, *, shuffle: bool = True, rng: Any = None) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        _reject_complex(lists, "lists", owner)
        try:
            arr = np.asarray(lists, dtype=np.float64)
        except (TypeError, ValueError):
            raise param_error("lists", owner, "a real 2-d array of shape (n_arms, N)", lists) from None
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise InvalidParameterError(
                f"The 'lists' parameter of {owner} must be a real 2-d array of shape (n_arms, N) "
                f"with n_arms >= 1 and N >= 1. Got an array of shape {arr.shape} instead."
            )
        if not np.all(np.isfinite(arr)):
            i, j = np.argwhere(~np.isfinite(arr))[0]
            raise InvalidParameterError(
                f"The 'lists' parameter of {owner} must have finite entries. Got {arr[i, j]!r} "
                f"at [{i}, {j}] instead."
            )
        self.shuffle = check_bool(shuffle, "shuffle", owner=owner)
        self._lists = arr
        self.n_arms, self.list_size = (int(s) for s in arr.shape)
        self.lower, self.upper = float(arr.min()), float(arr.max())
        self.noise = _list_noise(self.lower, self.upper)
        self._means = arr.mean(axis=1)
        self._init_positions()
        self._shuffle()

    def _shuffle(self) -> None:
        self._order = self.rng.permuted(self._lists, axis=1) if self.shuffle else self._lists

    @property
    def read_order(self) -> str:
        return "random" if self.shuffle else "given"

    def means(self) -> NDArray[np.float64]:
        return self._means.copy()

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        start, stop = self._advance(arms, counts)
        total = int(counts.sum())
        out = np.zeros(len(arms), dtype=np.float64)
        if total == 0:
            return out
        nz = counts > 0
        # Flat gather of every drawn entry, then one segmented sum.
        c = counts[nz]
        seg = np.repeat(np.arange(c.size), c)
        offs = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
        rows = np.repeat(arms[nz], c)
        cols = np.repeat(start[nz], c) + offs
        vals = self._order[rows, cols]
        out[nz] = np.bincount(seg, weights=vals, minlength=c.size)
        return out

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "list_size": self.list_size, "shuffle": self.shuffle}


class BinaryRewardLists(_ListsBase):
    """0/1 reward lists held by their number of ones (compact MAB-BP lists).

    Arm ``i`` owns a list of ``N`` rewards of which ``ones[i]`` are 1.

    Parameters
    ----------
    ones : array of ints of shape (n_arms,)
        Number of ones in each list, in ``[0, N]``.
    list_size : int
        ``N``.
    order : {"ones-first", "random"}
        ``"ones-first"``: the ones are returned before the zeros (the adversarial data set
        of Section "Characteristics of the BoundedME Algorithm": "the rewards with value 1
        are returned before those with value 0"). ``"random"``: a uniformly random order,
        drawn exactly as a hypergeometric count per pull.
    rng : None, int, SeedSequence or Generator

    Examples
    --------
    >>> env = BinaryRewardLists([3, 1], 4)
    >>> env.pull(0, 2), env.pull(0, 2)
    ((2.0, 2), (1.0, 2))
    """

    def __init__(self, ones: Any, list_size: int, *, order: str = "ones-first", rng: Any = None) -> None:
        super().__init__(rng=rng)
        owner = type(self).__name__
        self.list_size = check_int(list_size, "list_size", owner=owner, low=1)
        o = np.asarray(ones)
        if o.ndim != 1 or o.size < 1 or not np.issubdtype(o.dtype, np.integer):
            raise param_error("ones", owner, "a 1-d array of ints", ones)
        if np.any(o < 0) or np.any(o > self.list_size):
            raise param_error("ones", owner, f"an array of ints in the range [0, {self.list_size}]", ones)
        self.order = check_choice(order, "order", ["ones-first", "random"], owner=owner)
        self._ones = o.astype(np.int64)
        self.n_arms = int(o.size)
        self.lower, self.upper = 0.0, 1.0
        self.noise = _list_noise(0.0, 1.0)
        self._init_positions()
        self._shuffle()

    def _shuffle(self) -> None:
        self._ones_left = self._ones.copy()

    @property
    def read_order(self) -> str:
        return str(self.order)

    @property
    def ones(self) -> NDArray[np.int64]:
        return self._ones.copy()

    def means(self) -> NDArray[np.float64]:
        return self._ones / float(self.list_size)

    def _pull_many(self, arms: NDArray[Any], counts: NDArray[np.int64]) -> NDArray[np.float64]:
        start, stop = self._advance(arms, counts)
        if self.order == "ones-first":
            ones = self._ones[arms]
            return (np.minimum(ones, stop) - np.minimum(ones, start)).astype(np.float64)
        out = np.zeros(len(arms), dtype=np.float64)
        # Repeated arms: draw sequentially so that the remaining counts stay exact.
        for idx in _sequential_groups(arms):
            a = arms[idx]
            good = self._ones_left[a]
            bad = (self.list_size - start[idx]) - good
            k = self.rng.hypergeometric(good, bad, counts[idx]) if idx.size else np.zeros(0, np.int64)
            self._ones_left[a] -= k
            out[idx] = k
        return out

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "list_size": self.list_size, "order": self.order}


def _sequential_groups(arms: NDArray[Any]) -> list[NDArray[np.intp]]:
    """Split positions into groups with distinct arms, keeping the order of repeats."""
    if arms.size == 0:
        return []
    order = np.argsort(arms, kind="stable")
    a = arms[order]
    first = np.r_[True, a[1:] != a[:-1]]
    grp = np.maximum.accumulate(np.where(first, np.arange(a.size), 0))
    rank = np.arange(a.size) - grp
    groups = []
    for r in range(int(rank.max()) + 1):
        groups.append(np.sort(order[rank == r]))
    return groups

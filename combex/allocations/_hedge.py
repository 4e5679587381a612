"""AdaHedge: the scale-free online learner the game-based samplers play (CombGame, LinGame)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._jit import compiled

__all__ = ["AdaHedge", "hedge_weights", "hedge_update"]


def hedge_weights(L: Any, Delta: float) -> Any:
    """AdaHedge's play from the cumulative losses ``L`` and mixability gap ``Delta``:
    ``w_k propto exp(-eta (L_k - min L))`` with ``eta = ln K / Delta``, uniform over the
    leaders while ``Delta = 0``. Written in numba's subset (see :class:`AdaHedge`)."""
    if Delta <= 0.0:
        w = (L <= L.min() + 1e-300).astype(np.float64)
        return w / np.sum(w)
    k = L.shape[0]
    eta = math.log(k) / Delta if k > 1 else 1.0
    z = np.exp(-eta * (L - L.min()))
    return z / np.sum(z)


def hedge_update(L: Any, Delta: float, losses: Any, w: Any) -> tuple[Any, float]:
    """AdaHedge's update by one loss vector, ``w`` its play (:func:`hedge_weights` of ``L``
    and ``Delta``): ``(L + losses, Delta + delta_t)`` with the
    mixability gap ``delta_t = h_t - m_t >= 0``, ``h_t = sum_k w_k losses_k`` the learner's loss and
    ``m_t = -1/eta log sum_k w_k exp(-eta losses_k)`` the mix loss (its log-sum-exp taken
    stably: the plain sum underflows to 0 when the weight sits on actions whose exponent is
    very negative; with ``Delta = 0``, the smallest loss of the leaders). Written in numba's
    subset (see :class:`AdaHedge`)."""
    h = np.sum(w * losses)
    if Delta <= 0.0:
        m = losses[L <= L.min() + 1e-300].min()
    else:
        k = L.shape[0]
        eta = math.log(k) / Delta if k > 1 else 1.0
        lw = np.log(w) + (-eta * (losses - losses.min()))
        top = lw.max()
        m = losses.min() - (top + math.log(np.sum(np.exp(lw - top)))) / eta
    return L + losses, Delta + max(h - m, 0.0)


def _hedge_kernels() -> tuple[Any, Any]:
    """The compiled :func:`hedge_weights` and :func:`hedge_update` (numba), else the
    functions themselves (numpy)."""
    w = compiled(hedge_weights)
    if w is None:
        return hedge_weights, hedge_update
    return w, compiled(hedge_update)


class AdaHedge:
    """AdaHedge (de Rooij, van Erven, Grunwald & Koolen 2014, Algorithm 1) on K actions.

    ``weights()`` is ``w_k propto exp(-eta L_k)`` with ``eta = ln K / Delta`` (``Delta`` the
    cumulative mixability gap; uniform over the leaders while ``Delta = 0``);
    ``update(losses)`` adds one loss vector. Scale-free: no bound on the losses is needed,
    which matters here (LinGame's gains scale as ``1 / gap^2``).

    The arithmetic is :func:`hedge_weights` and :func:`hedge_update`, compiled when numba is
    installed (the ``mips`` extra): CombGame's compiled loop plays the same functions inline,
    so its samples are those of this class, bit for bit; numpy's forms (sums pairwise, its
    own ``exp``) agree to rounding.
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.L = np.zeros(k)
        self.Delta = 0.0

    def weights(self) -> NDArray[np.float64]:
        fn = _hedge_kernels()[0]
        return fn(np.ascontiguousarray(self.L, dtype=np.float64), float(self.Delta))

    def update(self, losses: NDArray[np.float64]) -> None:
        fn = _hedge_kernels()[1]
        with np.errstate(divide="ignore"):  # log of a zero weight: -inf, a term of exp(-inf) = 0
            L, Delta = fn(np.ascontiguousarray(self.L, dtype=np.float64), float(self.Delta),
                          np.ascontiguousarray(losses, dtype=np.float64), self.weights())
        self.L = L
        self.Delta = float(Delta)

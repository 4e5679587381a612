"""AdaHedge: the scale-free online learner the game-based samplers play (CombGame, LinGame)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["AdaHedge"]


class AdaHedge:
    """AdaHedge (de Rooij, van Erven, Grunwald & Koolen 2014, Algorithm 1) on K actions.

    ``weights()`` is ``w_k propto exp(-eta L_k)`` with ``eta = ln K / Delta`` (``Delta`` the
    cumulative mixability gap; uniform over the leaders while ``Delta = 0``);
    ``update(losses)`` adds one loss vector. Scale-free: no bound on the losses is needed,
    which matters here (LinGame's gains scale as ``1 / gap^2``).
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.L = np.zeros(k)
        self.Delta = 0.0

    def weights(self) -> NDArray[np.float64]:
        if self.Delta <= 0.0:
            w = (self.L <= self.L.min() + 1e-300).astype(np.float64)
            return w / w.sum()
        eta = math.log(self.k) / self.Delta if self.k > 1 else 1.0
        z = np.exp(-eta * (self.L - self.L.min()))
        return z / z.sum()

    def update(self, losses: NDArray[np.float64]) -> None:
        w = self.weights()
        h = float(w @ losses)
        if self.Delta <= 0.0:
            lead = self.L <= self.L.min() + 1e-300
            m = float(losses[lead].min())
        else:
            eta = math.log(self.k) / self.Delta if self.k > 1 else 1.0
            s = -eta * (losses - losses.min())
            # log sum_k w_k exp(s_k), stably (the plain sum underflows to 0 when the weight
            # sits on actions whose s_k is very negative)
            with np.errstate(divide="ignore"):
                lw = np.log(w) + s
            top = float(lw.max())
            m = float(losses.min()) - (top + math.log(float(np.exp(lw - top).sum()))) / eta
        self.Delta += max(h - m, 0.0)
        self.L = self.L + losses

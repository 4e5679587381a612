"""Plug-in decision classes the tests of the GLR solvers share."""

from __future__ import annotations

import numpy as np

from combex.oracles import DecisionClass


class OnePerPair(DecisionClass):
    """One arm of each consecutive pair: a plug-in class with only an oracle."""

    def __init__(self, n_pairs):
        self.n = 2 * n_pairs

    def argmax(self, weights):
        w = np.asarray(weights, dtype=float).reshape(-1, 2)
        mask = np.zeros(w.shape, dtype=bool)
        mask[np.arange(len(w)), w.argmax(axis=1)] = True
        return mask.ravel()


class OracleOnly(OnePerPair):
    """The same class, unwilling to list its members (as a class too large to list)."""

    def enumerate(self):
        raise NotImplementedError

"""balanced_topk_support: a cyclic support whose uniform design is close to G-optimal over
all k-subsets (the uniform design over all k-subsets has G-value n, the optimum)."""

from __future__ import annotations

import numpy as np
import pytest

from combex.allocations import balanced_topk_support, max_g_value_topk, topk_support, uniform_topk_g_value
from combex.exceptions import InvalidParameterError


@pytest.mark.parametrize("n,k", [(10, 5), (12, 4), (16, 8), (20, 3)])
def test_balanced_support_is_close_to_g_optimal_over_all_k_subsets(n, k):
    S = balanced_topk_support(n, k)
    assert S.shape[1] == n and np.all(S.sum(axis=1) == k)
    assert np.linalg.matrix_rank(S.astype(float)) == n
    X = S.astype(float)
    g_bal = max_g_value_topk(X.T @ X / len(S), k)
    W = topk_support(n, k).astype(float)
    g_win = max_g_value_topk(W.T @ W / len(W), k)
    assert uniform_topk_g_value(n, k) == pytest.approx(n)
    assert n - 1e-9 <= g_bal <= 1.35 * n  # Kiefer-Wolfowitz: no design beats n
    assert g_bal < g_win


def test_deterministic_and_errors():
    assert np.array_equal(balanced_topk_support(11, 3, rng=5), balanced_topk_support(11, 3, rng=5))
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        balanced_topk_support(5, 5)
    with pytest.raises(InvalidParameterError, match="'n_blocks' parameter"):
        balanced_topk_support(6, 2, n_blocks=0)

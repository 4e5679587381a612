"""The answers of independent arms and their alternatives: best arm, Best-K, matroid bases,
any decision class.

An *arm query* is the identification task of arms observed one by one: which answers there
are, the answer of a mean vector, and the alternatives the GLR stopping rule must rule out.
The GLR solvers of :mod:`combex.solvers` (Track-and-Stop, Top-Two, Frank-Wolfe sampling,
CombGame) hold one and ask it for the answer of their empirical means and for the pairs
``(i, j)`` whose half-spaces ``{lambda_j > lambda_i}`` make up the alternative set
(Garivier & Kaufmann 2016, section 2; Kaufmann & Koolen 2021, section 4):

* :class:`BestArmQuery`: the answer is ``argmax mu``; ``Alt(i) = union_j {lambda_j >
  lambda_i}``, the pairs ``(i, j)`` for the ``N - 1`` arms ``j != i``;
* :class:`BestKQuery`: the ``K`` largest means; ``Alt(S)`` is the union over ``i in S``,
  ``j not in S`` of ``{lambda_j > lambda_i}``, ``K (N - K)`` pairs;
* :class:`SwapQuery`: the bases of a matroid. A base is optimal iff no single exchange
  improves it (the exchange property), so ``Alt(S)`` is the union of the exchange
  half-spaces, one per pair ``(i in S, j not in S)`` with ``S - i + j`` a base
  (:func:`~combex.identification.exchange_pairs`);
* :class:`ClassQuery`: the best member of any decision class (``argmax`` of the class's
  oracle); its alternatives are other members, found by the class GLR
  (:func:`~combex.identification.class_glr_lower_bound`) or listed
  (:func:`~combex.identification.class_members`). It is also the query of Best-K with
  ``epsilon > 0`` (an epsilon-good answer is not a pair condition).

:func:`arm_query` picks the query for a number of arms, a ``K`` or a decision class, and an
``epsilon`` (the pair queries are exact at ``epsilon = 0`` only).

Examples
--------
>>> import numpy as np
>>> from combex.identification import arm_query
>>> q = arm_query(4, K=2)
>>> q.structure, q.n_alternatives
('topk', 4)
>>> S = q.answer(np.array([0.1, 0.9, 0.5, 0.3]))
>>> S.tolist(), [p.tolist() for p in q.pairs(S)]
([False, True, True, False], [[1, 1, 2, 2], [0, 3, 0, 3]])
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, param_error
from ..exceptions import InvalidParameterError, OracleError
from ..oracles import TopK
from ._bandit import class_members
from ._swaps import exchange_pairs, is_matroid_base_class

__all__ = ["ArmQuery", "BestArmQuery", "BestKQuery", "SwapQuery", "ClassQuery", "arm_query", "ARM_STRUCTURES",
           "CLASS_MEMBERS_LIMIT"]

#: A decision class with at most this many members is listed once (:attr:`ClassQuery.members`):
#: its GLR is then an exact minimum over the members.
CLASS_MEMBERS_LIMIT = 4096
#: The structures of the arm queries, as :attr:`ArmQuery.structure` names them.
ARM_STRUCTURES = ("bai", "topk", "swaps", "class")


class ArmQuery(ABC):
    """The identification task on ``n_arms`` independent arms (base class).

    Attributes
    ----------
    structure : str
        ``"bai"``, ``"topk"``, ``"swaps"`` or ``"class"``.
    n_arms : int
        The number of arms ``N``.
    K : int or None
        The size of an answer (None for a decision class whose members differ in size).
    decision_class : DecisionClass or None
        The class whose members are the answers (``"swaps"`` and ``"class"``).
    """

    structure: str = ""
    K: int | None = None
    decision_class: Any = None

    def __init__(self, n_arms: int) -> None:
        self.n_arms = int(n_arms)

    @abstractmethod
    def answer(self, mu: NDArray[np.float64]) -> Any:
        """The answer of the means ``mu``: an arm index (best arm) or a bool mask of length
        ``n_arms`` (a set of arms)."""

    def pairs(self, answer: Any) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """``(I, J)``: the pairs ``(I[r], J[r])``, ``I[r]`` in the answer and ``J[r]`` out,
        whose half-spaces ``{lambda_J > lambda_I}`` make up the alternative set of
        ``answer`` (the pair queries; a decision class has no pair form)."""
        raise InvalidParameterError(
            f"The alternatives of a {type(self).__name__} are members of its class, not pairs of arms: "
            f"use combex.identification.class_glr_lower_bound or class_members."
        )

    @property
    def n_alternatives(self) -> int:
        """The number of half-spaces of an answer's alternative set, the ``m`` of a union
        bound over them (at least 1; for a class, 1: its threshold is not a union over
        pairs)."""
        return 1

    def alternative_answer(self, answer: Any, closest: Any) -> Any:
        """The answer that wins in the alternative ``closest`` of ``answer``: for a pair
        ``(i, j)``, ``j`` (best arm) or the set with ``i`` exchanged for ``j``; for a class, the
        member itself (a bool mask)."""
        if isinstance(closest, tuple):
            i, j = closest
            m = np.asarray(answer, dtype=bool).copy()
            m[int(i)], m[int(j)] = False, True
            return m
        return np.asarray(closest, dtype=bool)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_arms={self.n_arms}, K={self.K})"


class BestArmQuery(ArmQuery):
    """The best arm: the answer is ``argmax mu`` (the first on ties), the alternatives the
    ``N - 1`` half-spaces ``{lambda_j > lambda_i}``."""

    structure = "bai"
    K = 1

    def answer(self, mu: NDArray[np.float64]) -> int:
        return int(np.argmax(mu))

    def pairs(self, answer: Any) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        J = np.flatnonzero(np.arange(self.n_arms) != answer)
        return np.full(J.shape, answer, dtype=np.intp), J

    def alternative_answer(self, answer: Any, closest: Any) -> int:
        return int(closest[1])

    @property
    def n_alternatives(self) -> int:
        return self.n_arms - 1


class _SetQuery(ArmQuery):
    """An answer that is a set of arms, its alternatives pairs (i in, j out)."""

    def pairs(self, answer: Any) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        ins, outs = np.flatnonzero(answer), np.flatnonzero(~answer)
        return np.repeat(ins, outs.size), np.tile(outs, ins.size)

    @property
    def n_alternatives(self) -> int:
        return max(int(self.K) * (self.n_arms - int(self.K)), 1)


class BestKQuery(_SetQuery):
    """The ``K`` arms of largest means (stable order on ties), ``K (N - K)`` pairs."""

    structure = "topk"

    def __init__(self, n_arms: int, K: int) -> None:
        super().__init__(n_arms)
        self.K = int(K)

    def answer(self, mu: NDArray[np.float64]) -> NDArray[np.bool_]:
        m = np.zeros(self.n_arms, dtype=bool)
        m[np.argsort(-mu, kind="stable")[: self.K]] = True
        return m


def _class_answer(dc: Any, mu: NDArray[np.float64], n: int) -> NDArray[np.bool_]:
    m = np.asarray(dc.argmax(mu))
    if m.shape != (n,):
        raise OracleError(f"{type(dc).__name__}.argmax returned shape {m.shape}; expected ({n},).")
    return m.astype(bool)


class SwapQuery(_SetQuery):
    """The best base of a matroid: the pairs are the single exchanges that give a base
    (:func:`~combex.identification.exchange_pairs`); ``n_alternatives`` counts every
    ``(i in S, j not in S)``, an upper bound of the exchanges of any base."""

    structure = "swaps"

    def __init__(self, decision_class: Any) -> None:
        super().__init__(int(decision_class.n))
        self.decision_class = decision_class
        self.K = int(np.count_nonzero(decision_class.argmax(np.zeros(self.n_arms))))

    def answer(self, mu: NDArray[np.float64]) -> NDArray[np.bool_]:
        return _class_answer(self.decision_class, mu, self.n_arms)

    def pairs(self, answer: Any) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        ins, outs, E = exchange_pairs(self.decision_class, answer)
        keep = E.ravel()
        I, J = np.repeat(ins, outs.size)[keep], np.tile(outs, ins.size)[keep]
        if I.size == 0:  # the answer is the only base: compare it with itself (GLR inf)
            return ins[:1], ins[:1]
        return I, J


class ClassQuery(ArmQuery):
    """The best member of a decision class (``decision_class.argmax``); its alternatives are
    the other members.

    A class of at most ``max_members`` members is listed once (:attr:`members`, through
    :func:`~combex.identification.class_members`) and the GLR against the closest
    alternative is the exact minimum of :meth:`costs` over :meth:`other_members`; a larger
    class has ``members`` None, and its alternatives come from the oracle (the certified
    lower bound of :func:`~combex.identification.class_glr_lower_bound`).

    The cost of an alternative ``S'`` of the answer ``S`` at weights ``w`` (counts or
    proportions) is the Gaussian GLR of the half-space ``{lambda(S') >= lambda(S) +
    epsilon}``: with ``D = S xor S'`` and ``g = mu(S) - mu(S') + epsilon``,
    ``f(S') = g^2 / (2 sum_{a in D} v_a / w_a)`` for ``g > 0`` (0 otherwise), ``v_a`` the
    arms' variances (``sigma^2`` for all arms, or one per arm).

    >>> import numpy as np
    >>> from combex.oracles import TopK
    >>> q = ClassQuery(TopK(4, 2))
    >>> S = q.answer(np.array([0.1, 0.9, 0.5, 0.3]))
    >>> len(q.members), len(q.other_members(S))
    (6, 5)
    >>> F, D, V = q.costs(np.array([0.1, 0.9, 0.5, 0.3]), np.full(4, 10.0), S, q.other_members(S))
    >>> round(float(F.min()), 3)  # the closest member swaps arm 2 (0.5) for arm 3 (0.3)
    0.1
    """

    structure = "class"

    def __init__(self, decision_class: Any, max_members: int = CLASS_MEMBERS_LIMIT) -> None:
        super().__init__(int(decision_class.n))
        self.decision_class = decision_class
        self.K = int(decision_class.k) if isinstance(decision_class, TopK) else None
        self.max_members = check_int(max_members, "max_members", owner="ClassQuery", low=0)
        self._members: Any = _UNLISTED
        self._others: Any = None

    def answer(self, mu: NDArray[np.float64]) -> NDArray[np.bool_]:
        return _class_answer(self.decision_class, mu, self.n_arms)

    @property
    def members(self) -> NDArray[np.bool_] | None:
        """Every member as an ``(m, n_arms)`` bool array, or None when the class has more
        than ``max_members`` (or declines to be listed); listed on first use."""
        if self._members is _UNLISTED:
            self._members = class_members(self.decision_class, self.max_members) if self.max_members else None
        return self._members

    def other_members(self, answer: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """The listed members other than ``answer`` (cached for the last answer)."""
        members = self.members
        if members is None:
            raise InvalidParameterError(
                f"The class of this ClassQuery has more than max_members={self.max_members} members: it is not "
                f"listed; its alternatives come from combex.identification.class_glr_lower_bound."
            )
        key = np.asarray(answer, dtype=bool).tobytes()
        if self._others is None or self._others[0] != key:
            self._others = (key, members[np.any(members != np.asarray(answer, dtype=bool)[None, :], axis=1)])
        return self._others[1]

    @staticmethod
    def costs(mu: NDArray[np.float64], w: NDArray[np.float64], answer: NDArray[np.bool_], alternatives: Any,
              epsilon: float = 0.0, *, sigma: float = 1.0, variances: Any = None) -> tuple[Any, Any, Any]:
        """``(F, D, V)``: the Gaussian GLR ``F`` of each alternative (a list of masks or an
        ``(m, n)`` bool array) at weights ``w``, the arms ``D = S xor S'`` each involves, and
        ``V = sum_D v_a / w_a``. The variances: ``sigma^2`` for every arm, or the per-arm
        ``variances`` (then ``sigma`` is not used)."""
        if isinstance(alternatives, np.ndarray):
            D = alternatives ^ answer[None, :]
            g = float(mu[answer].sum()) - alternatives @ mu + epsilon
        else:
            D = np.array([answer ^ m for m in alternatives], dtype=bool)
            g = float(mu[answer].sum()) - np.array([float(mu[m].sum()) for m in alternatives]) + epsilon
        if variances is not None:
            V = D @ (variances / w)
            return np.where(g > 0, g * g / (2.0 * V), 0.0), D, V
        V = D @ (1.0 / w)
        return np.where(g > 0, g * g / (2.0 * sigma ** 2 * V), 0.0), D, V

    @staticmethod
    def cost_gradient(w: NDArray[np.float64], F: Any, D: Any, V: Any, r: int | None = None, *,
                      variances: Any = None) -> NDArray[np.float64]:
        """``d F[r] / d w`` (the weights of the arms of ``D[r]``: ``F v_a / (w_a^2 V)``), from
        the output of :meth:`costs` with the same ``variances``; ``r`` None: every row (an
        array of shape ``(len(F), n)``)."""
        scale = (1.0 / w ** 2) if variances is None else (variances / w ** 2)
        if r is None:
            return F[:, None] * D * scale[None, :] / V[:, None]
        return F[r] * D[r] * scale / V[r]

    def __repr__(self) -> str:
        return f"ClassQuery({type(self.decision_class).__name__}, n_arms={self.n_arms})"


_UNLISTED = object()


def arm_query(n_arms: int, *, K: int = 1, decision_class: Any = None, epsilon: float = 0.0,
              owner: str = "arm_query") -> ArmQuery:
    """The query of ``n_arms`` independent arms: the ``K`` best (``decision_class`` None) or
    the best member of ``decision_class``, at accuracy ``epsilon``.

    The pair queries are used where they are exact: :class:`BestArmQuery` /
    :class:`BestKQuery` for a :class:`~combex.oracles.TopK` class or ``K`` at ``epsilon =
    0``, :class:`SwapQuery` for matroid bases
    (:func:`~combex.identification.is_matroid_base_class`) at ``epsilon = 0``; otherwise
    :class:`ClassQuery` (Best-K with ``epsilon > 0`` through ``TopK(n_arms, K)``).
    ``owner`` names the caller in error messages."""
    N = check_int(n_arms, "n_arms", owner=owner, low=2)
    eps = float(epsilon)
    dc = decision_class
    if dc is None:
        k = check_int(K, "K", owner=owner, low=1, high=N - 1)
        if k == 1:
            return BestArmQuery(N)
        return BestKQuery(N, k) if eps == 0.0 else ClassQuery(TopK(N, k))
    if not callable(getattr(dc, "argmax_excluding", None)):
        raise param_error("decision_class", owner, "a decision class with argmax_excluding", dc)
    if getattr(dc, "n", None) != N:
        raise InvalidParameterError(
            f"The 'decision_class' parameter of {owner} must have a ground set of the problem's {N} "
            f"arms. Got a class over {getattr(dc, 'n', None)} elements instead."
        )
    k = getattr(dc, "k", None)
    if isinstance(dc, TopK) and eps == 0.0 and k is not None and 1 <= int(k) < N:
        return BestArmQuery(N) if int(k) == 1 else BestKQuery(N, int(k))
    if eps == 0.0 and is_matroid_base_class(dc) and callable(getattr(dc, "contains", None)):
        return SwapQuery(dc)
    return ClassQuery(dc)

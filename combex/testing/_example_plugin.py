"""An example plug-in decision class, exposed through the ``combex.oracles`` entry point.

It shows how a third-party package adds a decision class to combex: subclass
:class:`~combex.oracles.DecisionClass` (here through :class:`~combex.oracles.ConstraintFamily`,
which supplies a CP-SAT oracle) and declare, in the package's ``pyproject.toml``::

    [project.entry-points."combex.oracles"]
    conflict-free-teams = "combex.testing._example_plugin:ConflictFreeTeams"

``combex.oracles.get_decision_class("conflict-free-teams")`` then finds it, and so does
the ``combex`` command. The module deliberately does not register itself with
``register_decision_class``: discovery goes through the entry point only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, param_error
from ..oracles import ConstraintFamily

__all__ = ["ConflictFreeTeams"]


class ConflictFreeTeams(ConstraintFamily):
    """Teams of exactly ``k`` of ``n`` workers in which no conflicting pair is together.

    Parameters
    ----------
    n : int
        Number of workers.
    k : int
        Team size, ``1 <= k <= n``.
    conflicts : sequence of pairs of int, default=()
        Pairs ``(i, j)`` of distinct workers who may not both be chosen.
    time_limit : float, default=10.0
        CP-SAT time limit per oracle call (see :class:`ConstraintFamily`).

    Notes
    -----
    The constraints are ``x_i + x_j <= 1`` per conflict and ``sum(x) == k``. Building the
    class does not check that a team exists; :meth:`argmax` raises
    :class:`~combex.exceptions.InfeasibleError` if none does.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.testing._example_plugin import ConflictFreeTeams
    >>> teams = ConflictFreeTeams(4, 2, conflicts=[(0, 1)])
    >>> teams.argmax(np.array([0.9, 0.8, 0.1, 0.5])).nonzero()[0]
    array([0, 3])
    """

    name = "conflict-free-teams"

    def __init__(self, n: int, k: int, conflicts: Any = (), *, time_limit: float = 10.0) -> None:
        owner = "ConflictFreeTeams"
        n = check_int(n, "n", owner=owner, low=1)
        self.k = check_int(k, "k", owner=owner, low=1, high=n)
        pairs = np.asarray(list(conflicts) if not isinstance(conflicts, np.ndarray) else conflicts)
        if pairs.size == 0:
            pairs = np.zeros((0, 2), dtype=np.int64)
        if (
            pairs.ndim != 2
            or pairs.shape[1] != 2
            or not np.issubdtype(pairs.dtype, np.integer)
            or pairs.min(initial=0) < 0
            or pairs.max(initial=0) >= n
            or np.any(pairs[:, 0] == pairs[:, 1])
        ):
            raise param_error(
                "conflicts", owner, f"a sequence of pairs of distinct ints in the range [0, {n - 1}]", conflicts
            )
        self.conflicts = [(int(i), int(j)) for i, j in pairs]
        A = np.zeros((len(self.conflicts), n), dtype=np.int64)
        rows = np.arange(len(self.conflicts))
        A[rows, pairs[:, 0]] = 1
        A[rows, pairs[:, 1]] = 1
        super().__init__(
            n, A, np.ones(len(self.conflicts), dtype=np.int64),
            A_eq=np.ones((1, n), dtype=np.int64), b_eq=[self.k], time_limit=time_limit,
        )

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "k": self.k, "conflicts": self.conflicts, "time_limit": self.time_limit}

    def __repr__(self) -> str:
        return f"ConflictFreeTeams(n={self.n}, k={self.k}, {len(self.conflicts)} conflicts)"

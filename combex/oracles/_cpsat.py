"""0-1 vectors satisfying linear constraints, maximized with OR-Tools CP-SAT."""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_float, check_int, check_mask, check_weights, param_error
from ..exceptions import InfeasibleError, InvalidParameterError, OracleError
from ._base import DecisionClass
from ._registry import register_decision_class


def import_cp_model() -> Any:
    """``ortools.sat.python.cp_model``, or an ImportError that says which extra installs it."""
    try:
        from ortools.sat.python import cp_model  # OR-Tools is optional (the cpsat extra)
    except ImportError as exc:
        raise ImportError(
            "This needs OR-Tools CP-SAT, an optional dependency of combex: pip install 'combex[cpsat]'."
        ) from exc
    return cp_model

__all__ = ["ConstraintFamily", "WEIGHT_RESOLUTION_BITS"]

#: Weights are rounded to integers ``round(w * 2**R / max|w|)`` with R this many bits
#: (fewer when n is large, so that every objective value stays below 2**53 and is exact in
#: double precision, which the answer check relies on).
WEIGHT_RESOLUTION_BITS = 40

# exact integer arithmetic: coefficients must be integers of magnitude below 2**53
_MAX_COEF = 2**53


def _int_array(value: Any, name: str, owner: str, ndim: int, shape: tuple[int | None, ...]) -> NDArray[np.int64]:
    """Check an array with integer entries (ints, or floats with integral values)."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, owner, f"a {ndim}-d array of integers", value) from None
    if a.ndim != ndim or any(s is not None and a.shape[i] != s for i, s in enumerate(shape)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be an array of shape {want}. "
            f"Got an array of shape {a.shape} instead."
        )
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)) or np.any(np.abs(a) >= _MAX_COEF):
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must have integer entries (CP-SAT solves integer "
            "programs exactly; multiply a constraint by a common denominator to make it "
            "integral). Got a non-integer or non-finite entry instead."
        )
    return a.astype(np.int64)


@register_decision_class("constraints")
class ConstraintFamily(DecisionClass):
    """All 0-1 vectors ``x`` of length n with ``A x <sense> b`` (and ``A_eq x == b_eq``).

    Parameters
    ----------
    n : int
        Number of variables (the ground set).
    A : array-like of shape (m, n) or None
        Constraint matrix with integer entries (m may be 0; None: no such rows).
    b : array-like of shape (m,) or None
        Right-hand sides, integers (None together with ``A``).
    sense : {"<=", ">=", "=="}, default="<="
        Sense of the rows of ``A``.
    A_eq, b_eq : array-like, optional
        Additional equality constraints, integer entries.
    time_limit : float, default=10.0
        Seconds CP-SAT may spend per oracle call.

    Raises
    ------
    InvalidParameterError
        On shapes, on non-integer constraint data (refused rather than rounded: the
        feasible set must be exact; scale a rational row by its denominator), or a
        non-positive time limit.

    Notes
    -----
    *Integer constraints.* CP-SAT is an exact integer solver; feasibility is re-checked
    in int64 arithmetic on every answer (an :class:`OracleError` if it fails).

    *Real weights.* CP-SAT needs integer objective coefficients: the weights are scaled
    to ``W = round(w * S)`` with ``S = 2**R / max|w|`` and ``R = WEIGHT_RESOLUTION_BITS``
    (40; reduced so that ``n * 2**R <= 2**53``). Each rounding error is at most
    ``1/(2S)``, so the returned member is optimal for ``w`` up to an additive
    ``n * max|w| * 2**-R`` (about ``1e-12 * n * max|w|``): members whose values differ by
    less may be ranked as ties. The solver's reported objective is checked against ``W``
    on the answer. Scaling ``w`` by a power of two gives the same integer problem, hence
    the same answer.

    *Determinism.* One search worker and a fixed seed, so equal inputs give equal
    answers (unless the time limit interrupts the search).

    *Failures.* :meth:`argmax` raises :class:`InfeasibleError` when CP-SAT proves the
    constraints have no 0-1 solution, and :class:`OracleError` when the time limit is hit
    before optimality is proved (raise ``time_limit``).

    Constrained maximization fixes variables (no big-M); :meth:`argmax_excluding` adds
    the no-good cut ``sum_{i in M} (1 - x_i) + sum_{i not in M} x_i >= 1``: one solve.

    Examples
    --------
    >>> import numpy as np
    >>> from combex.oracles import ConstraintFamily
    >>> # teams of 2 out of 4 in which workers 0 and 1 are not both chosen
    >>> cf = ConstraintFamily(4, [[1, 1, 0, 0]], [1], A_eq=[[1, 1, 1, 1]], b_eq=[2])
    >>> cf.argmax(np.array([0.9, 0.8, 0.1, 0.5])).nonzero()[0]
    array([0, 3])
    """

    def __init__(
        self,
        n: int,
        A: Any,
        b: Any,
        *,
        sense: str = "<=",
        A_eq: Any = None,
        b_eq: Any = None,
        time_limit: float = 10.0,
    ) -> None:
        owner = type(self).__name__
        self.n = check_int(n, "n", owner=owner, low=1)
        if (A is None) != (b is None):
            raise param_error("b" if b is None else "A", owner,
                              "given together with " + ("A" if b is None else "b"), None)
        if A is None:
            self.A = np.zeros((0, self.n), dtype=np.int64)
            self.b = np.zeros(0, dtype=np.int64)
        else:
            self.A = _int_array(A, "A", owner, 2, (None, self.n))
            self.b = _int_array(b, "b", owner, 1, (self.A.shape[0],))
        self.sense = check_choice(sense, "sense", ("<=", ">=", "=="), owner=owner)
        if (A_eq is None) != (b_eq is None):
            raise param_error("b_eq" if b_eq is None else "A_eq", owner, "given together with "
                              + ("A_eq" if b_eq is None else "b_eq"), None)
        if A_eq is None:
            self.A_eq = np.zeros((0, self.n), dtype=np.int64)
            self.b_eq = np.zeros(0, dtype=np.int64)
        else:
            self.A_eq = _int_array(A_eq, "A_eq", owner, 2, (None, self.n))
            self.b_eq = _int_array(b_eq, "b_eq", owner, 1, (self.A_eq.shape[0],))
        self.time_limit = check_float(time_limit, "time_limit", owner=owner, low=0.0, closed="right")
        self._bits = min(WEIGHT_RESOLUTION_BITS, 53 - math.ceil(math.log2(self.n + 1)))
        self._model, self._x = self._build()

    # the CP-SAT model is not picklable: rebuild it after unpickling (parallel runners)
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_model", None)
        state.pop("_x", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._model, self._x = self._build()

    # ------------------------------------------------------------ model
    def _build(self) -> tuple[Any, list[Any]]:
        cp_model = import_cp_model()

        model = cp_model.CpModel()
        x = [model.new_bool_var(f"x{i}") for i in range(self.n)]
        rows = [(self.A, self.b, self.sense), (self.A_eq, self.b_eq, "==")]
        for A, b, sense in rows:
            for row, rhs in zip(A, b):
                nz = np.flatnonzero(row)
                expr = cp_model.LinearExpr.weighted_sum([x[j] for j in nz], [int(row[j]) for j in nz])
                rhs = int(rhs)
                if sense == "<=":
                    model.add(expr <= rhs)
                elif sense == ">=":
                    model.add(expr >= rhs)
                else:
                    model.add(expr == rhs)
        return model, x

    def _scaled(self, w: NDArray[np.float64]) -> list[int]:
        top = float(np.abs(w).max(initial=0.0))
        if top == 0.0:
            return [0] * self.n
        # divide first: 2**R / top overflows to inf when top is subnormal
        return [int(v) for v in np.rint((w / top) * 2.0**self._bits)]

    def _solve(
        self,
        w: NDArray[np.float64],
        *,
        ones: NDArray[np.intp] | None = None,
        zeros: NDArray[np.intp] | None = None,
        nogood: NDArray[np.bool_] | None = None,
    ) -> NDArray[np.bool_] | None:
        """Maximize; None if infeasible; OracleError on a timeout or a broken answer."""
        cp_model = import_cp_model()

        model = self._model.clone()
        x = [model.get_bool_var_from_proto_index(v.index) for v in self._x]
        for j in (ones if ones is not None else ()):
            model.add(x[int(j)] == 1)
        for j in (zeros if zeros is not None else ()):
            model.add(x[int(j)] == 0)
        if nogood is not None:
            lits = [x[j].Not() if nogood[j] else x[j] for j in range(self.n)]
            model.add_bool_or(lits)
        W = self._scaled(w)
        model.maximize(cp_model.LinearExpr.weighted_sum(x, W))
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        solver.parameters.max_time_in_seconds = self.time_limit
        status = solver.solve(model)
        if status == cp_model.INFEASIBLE:
            return None
        if status == cp_model.MODEL_INVALID:
            raise OracleError(f"CP-SAT rejected the model of {self!r}: {model.validate()}")
        if status != cp_model.OPTIMAL:
            raise OracleError(
                f"CP-SAT stopped at the time limit of {self.time_limit} s without proving "
                f"optimality (status {solver.status_name(status)}). Raise it with "
                f"{type(self).__name__}(..., time_limit=...)."
            )
        sol = np.array([solver.boolean_value(v) for v in x], dtype=bool)
        # second check: exact feasibility and the solver's objective on the answer
        if not self._feasible(sol):
            raise OracleError(f"CP-SAT returned a vector violating the constraints of {self!r}.")
        if int(round(solver.objective_value)) != sum(W[j] for j in np.flatnonzero(sol)):
            raise OracleError(
                f"CP-SAT reported objective {solver.objective_value} that does not match its answer."
            )
        return sol

    def _feasible(self, x: NDArray[np.bool_]) -> bool:
        xi = x.astype(np.int64)
        lhs = self.A @ xi
        if self.sense == "<=":
            ok = bool(np.all(lhs <= self.b))
        elif self.sense == ">=":
            ok = bool(np.all(lhs >= self.b))
        else:
            ok = bool(np.all(lhs == self.b))
        return ok and bool(np.all(self.A_eq @ xi == self.b_eq))

    # ------------------------------------------------------------ contract
    def argmax(self, weights: NDArray[np.float64]) -> NDArray[np.bool_]:
        w = check_weights(weights, self.n, owner=type(self).__name__)
        sol = self._solve(w)
        if sol is None:
            raise InfeasibleError(
                f"The constraints of {self!r} have no 0-1 solution (CP-SAT proved infeasibility)."
            )
        return sol

    def argmax_constrained(
        self,
        weights: NDArray[np.float64],
        *,
        include: Any = (),
        exclude: Any = (),
    ) -> NDArray[np.bool_] | None:
        w, inc, exc, conflict = self._constrained_args(weights, include, exclude)
        if conflict:
            return None
        return self._solve(w, ones=inc, zeros=exc)

    def argmax_excluding(
        self, weights: NDArray[np.float64], excluded: NDArray[np.bool_]
    ) -> NDArray[np.bool_] | None:
        owner = type(self).__name__
        w = check_weights(weights, self.n, owner=owner)
        m = check_mask(excluded, self.n, "excluded", owner=owner)
        return self._solve(w, nogood=m)

    def contains(self, mask: Any) -> bool:
        return self._feasible(check_mask(mask, self.n, owner=type(self).__name__))

    def enumerate(self) -> Iterator[NDArray[np.bool_]]:
        """All solutions in increasing binary order (bit i = element i); n <= 20."""
        if self.n > 20:
            raise InvalidParameterError(
                f"{type(self).__name__}.enumerate() scans all 2^n vectors and is only "
                f"available for n <= 20. Got n={self.n} instead."
            )
        chunk = 1 << 14
        bits = np.arange(self.n, dtype=np.int64)
        for start in range(0, 1 << self.n, chunk):
            codes = np.arange(start, min(start + chunk, 1 << self.n), dtype=np.int64)
            X = ((codes[:, None] >> bits[None, :]) & 1).astype(np.int64)
            lhs = X @ self.A.T
            if self.sense == "<=":
                ok = np.all(lhs <= self.b, axis=1)
            elif self.sense == ">=":
                ok = np.all(lhs >= self.b, axis=1)
            else:
                ok = np.all(lhs == self.b, axis=1)
            ok &= np.all(X @ self.A_eq.T == self.b_eq, axis=1)
            for row in X[ok]:
                yield row.astype(bool)

    @property
    def width(self) -> int:
        """n: two members differ in at most n elements (a valid upper bound)."""
        return self.n

    def params(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "A": self.A.tolist(),
            "b": self.b.tolist(),
            "sense": self.sense,
            "A_eq": self.A_eq.tolist(),
            "b_eq": self.b_eq.tolist(),
            "time_limit": self.time_limit,
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n={self.n}, {self.A.shape[0]} rows {self.sense}, "
            f"{self.A_eq.shape[0]} equality rows)"
        )

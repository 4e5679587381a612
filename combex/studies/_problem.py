"""Problem and solver specs: JSON descriptions, never pickles.

A problem spec is a dict::

    {"n_arms": 36, "arm_type": "index" | "mask",
     "noise": {"kind": "bernoulli", "sigma": 0.5, "bound": 0.5, "independent": true},
     "reward_range": [0.0, 1.0],        # one observation of one base arm
     "decision_class": {"name": "topk", "params": {"n": 36, "k": 5}} | null,
     "labels": ["worker1", ...] | null}

The decision class is stored by its registered name and parameters (as the CLI names it),
so a user's own class works once registered (``register_decision_class`` or the
``combex.oracles`` entry point) in every process that opens the study.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .._validation import check_choice, check_float, check_int, param_error
from ..exceptions import InvalidParameterError

__all__ = ["problem_spec", "build_problem", "solver_spec", "build_solver"]

_DEFAULT_RANGE = {"bernoulli": (0.0, 1.0), "rademacher": (-1.0, 1.0)}


def _jsonable(x: Any, what: str) -> Any:
    try:
        return json.loads(json.dumps(x, allow_nan=False))
    except (TypeError, ValueError):
        raise param_error(what, "create_study", "JSON data (numbers, strings, lists, dicts)", x) from None


def problem_spec(
    n_arms: Any = None,
    *,
    noise: Any = "bernoulli",
    arm_type: str = "index",
    decision_class: Any = None,
    reward_range: Any = None,
    labels: Any = None,
) -> dict[str, Any]:
    """Build (and validate) the JSON problem spec of a study.

    Parameters
    ----------
    n_arms : int or Problem
        Number of base arms (workers); or a :class:`~combex.environments.Problem` (or an
        environment) whose size, arm type, noise model and decision class are taken.
    noise : str, dict or NoiseModel, default "bernoulli"
        ``"bernoulli"`` (rewards in {0, 1}, sigma 1/2), ``"gaussian"`` (give a dict with
        ``sigma``), or a :class:`~combex.environments.NoiseModel` / its ``to_dict()``.
    arm_type : {"index", "mask"}
        ``"index"``: a ticket evaluates one worker; ``"mask"``: a whole team (full bandit).
    decision_class : DecisionClass or dict, optional
        Stored by its registered ``name`` and ``params()``; a class without a registered
        name is refused (never pickled).
    reward_range : (low, high), optional
        Range of one observation of one base arm; a tell outside ``count * |team| *
        [low, high]`` is refused. Default: [0, 1] for Bernoulli, [-1, 1] for Rademacher,
        unbounded otherwise (finite values only).
    labels : list of str, optional
        Names of the base arms (shown by the dashboard and the example).

    Returns
    -------
    dict
    """
    if n_arms is not None and not isinstance(n_arms, (int, np.integer)):
        p = getattr(n_arms, "problem", n_arms)
        if not hasattr(p, "n_arms"):
            raise param_error("problem", "create_study", "a problem spec dict, a Problem or an int", n_arms)
        return problem_spec(int(p.n_arms), noise=p.noise, arm_type=p.arm_type,
                            decision_class=p.decision_class if decision_class is None else decision_class,
                            reward_range=reward_range, labels=labels)
    n = check_int(n_arms, "n_arms", owner="problem_spec", low=1)
    arm_type = check_choice(arm_type, "arm_type", ("index", "mask"), owner="problem_spec")
    if isinstance(noise, str):
        kind = noise
        nd: dict[str, Any] = {"kind": kind, "sigma": {"bernoulli": 0.5, "rademacher": 1.0}.get(kind, 1.0),
                              "bound": {"bernoulli": 0.5, "rademacher": 1.0}.get(kind), "independent": True}
    elif isinstance(noise, dict):
        nd = {"kind": "gaussian", "bound": None, "independent": True, **noise}
    elif hasattr(noise, "to_dict"):
        nd = dict(noise.to_dict())
    else:
        raise param_error("noise", "problem_spec", "a noise name, a dict or a NoiseModel", noise)
    from ..environments import NoiseModel

    try:
        nd = NoiseModel(**nd).to_dict()
    except TypeError as exc:
        raise param_error("noise", "problem_spec", f"a valid noise model ({exc})", noise) from None
    if reward_range is None:
        lo, hi = _DEFAULT_RANGE.get(nd["kind"], (-math.inf, math.inf))
    else:
        try:
            lo, hi = (float(v) for v in reward_range)
        except (TypeError, ValueError):
            raise param_error("reward_range", "problem_spec", "a pair (low, high)", reward_range) from None
        if not lo < hi:
            raise param_error("reward_range", "problem_spec", "a pair with low < high", reward_range)
    dc = None
    if decision_class is not None:
        if isinstance(decision_class, dict):
            dc = {"name": str(decision_class["name"]), "params": _jsonable(decision_class.get("params", {}),
                                                                           "decision_class")}
        else:
            name = getattr(type(decision_class), "name", None)
            if not name or not callable(getattr(decision_class, "params", None)):
                raise param_error("decision_class", "problem_spec",
                                  "a registered decision class (with a name and params()); classes are never "
                                  "pickled", decision_class)
            dc = {"name": name, "params": _jsonable(decision_class.params(), "decision_class")}
    if labels is not None:
        labels = [str(x) for x in labels]
        if len(labels) != n:
            raise param_error("labels", "problem_spec", f"a list of {n} names", labels)
    spec = {"n_arms": n, "arm_type": arm_type, "noise": nd,
            "reward_range": [None if math.isinf(lo) else lo, None if math.isinf(hi) else hi],
            "decision_class": dc, "labels": labels}
    build_problem(spec)  # validates the decision class
    return spec


def build_problem(spec: dict[str, Any]) -> Any:
    """The :class:`~combex.environments.Problem` of a spec (decision class rebuilt by name)."""
    from ..environments import NoiseModel, Problem
    from ..oracles import make_decision_class

    dc = None
    if spec.get("decision_class"):
        d = spec["decision_class"]
        dc = make_decision_class(d["name"], **d.get("params", {}))
        if int(getattr(dc, "n", spec["n_arms"])) != int(spec["n_arms"]):
            raise InvalidParameterError(
                f"The decision class {d['name']!r} has ground set size {dc.n}, but the problem has "
                f"n_arms={spec['n_arms']}."
            )
    return Problem(n_arms=int(spec["n_arms"]), noise=NoiseModel(**spec["noise"]), arm_type=spec["arm_type"],
                   decision_class=dc, info={"labels": spec.get("labels")})


def solver_spec(solver: Any, params: dict | None = None) -> tuple[str, dict[str, Any]]:
    """``(name, JSON settings)`` of a solver given by name (+ params) or as an instance."""
    from ..solvers import Solver, get_solver

    if isinstance(solver, str):
        cls = get_solver(solver)
        if getattr(cls, "contract", None) != "pac":
            raise param_error("solver", "create_study", "a pure-exploration ('pac') solver", solver)
        params = _jsonable(dict(params or {}), "solver_params")
        build_solver(solver, params)
        return solver, params
    if isinstance(solver, Solver):
        if params:
            raise param_error("solver_params", "create_study", "None when 'solver' is an instance", params)
        raw = solver.get_params()
        out = {}
        for k, v in raw.items():
            if v is None or isinstance(v, (bool, int, float, str)):
                out[k] = v
            elif isinstance(v, np.generic):
                out[k] = v.item()
            else:
                raise param_error(f"solver.{k}", "create_study",
                                  "a JSON value (objects such as decision classes go in the problem spec)", v)
        return solver.name, out
    raise param_error("solver", "create_study", "a solver name or a Solver instance", solver)


def build_solver(name: str, params: dict[str, Any]) -> Any:
    from ..solvers import get_solver

    cls = get_solver(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise InvalidParameterError(f"Could not build solver {name!r} from settings {params!r}: {exc}") from None


def reward_bounds(spec: dict[str, Any], arm: Any, count: int) -> tuple[float, float]:
    """Range of the reward sum of ``count`` observations of ``arm``."""
    lo, hi = spec["reward_range"]
    m = len(arm) if isinstance(arm, list) else 1
    lo = -math.inf if lo is None else lo * m * count
    hi = math.inf if hi is None else hi * m * count
    return lo, hi


def check_seed(seed: Any) -> int:
    return check_int(seed, "seed", owner="create_study", low=0)


def check_lease(lease: Any) -> float:
    return check_float(lease, "lease_seconds", owner="create_study", low=0.0, closed="neither")

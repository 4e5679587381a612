"""Problem and solver specs: JSON descriptions, never pickles.

A problem spec is a dict::

    {"n_arms": 12, "arm_type": "index" | "mask",
     "noise": {"kind": "gaussian", "sigma": null, "bound": null, "independent": true,
               "level": "observation"},
     "reward_range": [0.0, 25.0],       # one observation of one base arm (derived for teams)
     "score_range": [0.0, 100.0] | null, # one observation (one session's score); optional
     "decision_class": {"name": "topk", "params": {"n": 12, "k": 4}} | null,
     "labels": ["Ana", ...] | null}

The decision class is stored by its registered name and parameters (as the CLI names it),
so a user's own class works once registered (``register_decision_class`` or the
``combex.oracles`` entry point) in every process that opens the study.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

import numpy as np

from .._validation import check_choice, check_float, check_int, param_error
from ..environments import NoiseModel, Problem
from ..exceptions import InvalidParameterError, TicketError
from ..oracles import make_decision_class
from ..solvers import Solver, get_solver

__all__ = ["problem_spec", "build_problem", "solver_spec", "build_solver", "NOISE_KINDS", "MAX_NAME_LENGTH"]

_DEFAULT_RANGE = {"bernoulli": (0.0, 1.0), "rademacher": (-1.0, 1.0), "data": (0.0, 1.0)}

#: Noise kinds a study knows (a kind outside this list is refused, never guessed):
#: ``"gaussian"`` (scale ``sigma``, or None: unknown), ``"bernoulli"`` (rewards in {0, 1}),
#: ``"rademacher"`` (rewards in {-1, 1}), ``"bounded"`` (noise in [-bound, bound]),
#: ``"data"`` (data-backed {0, 1} answers), ``"pm1"`` (data-backed +-1 rewards).
NOISE_KINDS = ("gaussian", "bernoulli", "rademacher", "bounded", "data", "pm1")
#: Kinds whose rewards are integers (sums of {0, 1} or {-1, 1} observations).
_INTEGER_KINDS = ("bernoulli", "data", "rademacher", "pm1")

#: Longest study, worker or assistant name (characters): what every backend stores.
MAX_NAME_LENGTH = 255


def _jsonable(x: Any, what: str) -> Any:
    try:
        return json.loads(json.dumps(x, allow_nan=False))
    except (TypeError, ValueError):
        raise param_error(what, "create_study", "JSON data (numbers, strings, lists, dicts)", x) from None


def check_name(value: Any, what: str, owner: str) -> str:
    """A name people type: a non-empty str of at most :data:`MAX_NAME_LENGTH` characters,
    without leading or trailing blanks or control characters."""
    ok = (isinstance(value, str) and 0 < len(value) <= MAX_NAME_LENGTH and value == value.strip()
          and value.isprintable())
    if not ok:
        raise param_error(what, owner, f"a non-empty str of at most {MAX_NAME_LENGTH} printable characters "
                                       "without leading or trailing blanks", value)
    return value


def _check_names(values: Any, what: str, n: int | None = None) -> list[str]:
    """The arms' names (``what``: ``workers`` or ``labels``): a list of ``n`` (any number
    when None) distinct :func:`check_name` names."""
    size = "" if n is None else f"{n} "
    if isinstance(values, str) or not hasattr(values, "__len__"):
        raise param_error(what, "problem_spec", f"a list of {size}names", values)
    names = list(values)
    for x in names:
        try:
            check_name(x, what, "problem_spec")
        except InvalidParameterError:
            raise param_error(what, "problem_spec", f"a list of {size}names, each a non-empty str of at most "
                              f"{MAX_NAME_LENGTH} printable characters without leading or trailing blanks ({x!r} "
                              "is not)", values) from None
    if n is not None and len(names) != n:
        raise param_error(what, "problem_spec", f"a list of {n} names", values)
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise param_error(what, "problem_spec", f"a list of distinct names ({dup!r} repeated)", values)
    return names


def _range(value: Any, what: str) -> tuple[float, float]:
    """A (low, high) pair; None (or an infinite value) for an open end."""
    try:
        pair = list(value)
    except TypeError:
        pair = None
    if pair is None or len(pair) != 2:
        raise param_error(what, "problem_spec", "a pair (low, high) of numbers (None for an open end)", value)
    out = []
    for v, inf in zip(pair, (-math.inf, math.inf)):
        if v is None:
            out.append(inf)
            continue
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)) \
                or math.isnan(float(v)) or float(v) == -inf:
            raise param_error(what, "problem_spec", "a pair (low, high) of numbers (None for an open end)", value)
        out.append(float(v))
    lo, hi = out
    if not lo < hi:
        raise param_error(what, "problem_spec", "a pair with low < high", value)
    return lo, hi


def _noise_dict(noise: Any, noise_scale: Any, team: bool) -> dict[str, Any]:
    kinds = f"one of the noise kinds {list(NOISE_KINDS)} (a name, a dict with 'kind', or a NoiseModel)"
    if noise_scale is not None:
        check_float(noise_scale, "noise_scale", owner="problem_spec", low=0.0, closed="neither")
    if isinstance(noise, str):
        if noise not in NOISE_KINDS:
            raise param_error("noise", "problem_spec", kinds, noise)
        if noise_scale is not None and noise != "gaussian":
            raise param_error("noise_scale", "problem_spec", f"None with noise={noise!r} (its scale is fixed by the "
                              "kind)", noise_scale)
        if noise == "bounded":
            raise param_error("noise", "problem_spec", "a dict {'kind': 'bounded', 'sigma': ..., 'bound': ...} for "
                              "bounded noise (its bound must be given)", noise)
        nd: dict[str, Any] = {"kind": noise, "independent": True}
        if noise == "gaussian":
            nd.update(sigma=None if noise_scale is None else float(noise_scale), bound=None)
            if team:
                nd["level"] = "observation"
        elif noise in ("bernoulli", "data"):
            nd.update(sigma=0.5, bound=0.5)
        else:  # rademacher, pm1
            nd.update(sigma=1.0, bound=1.0)
    elif isinstance(noise, dict):
        nd = dict(noise)
        if nd.get("kind", "gaussian") not in NOISE_KINDS:
            raise param_error("noise", "problem_spec", kinds, nd.get("kind"))
        nd.setdefault("kind", "gaussian")
        nd.setdefault("bound", None)
        nd.setdefault("independent", True)
        if noise_scale is not None:
            if nd.get("sigma") is not None:
                raise param_error("noise_scale", "problem_spec", "None when the noise dict gives 'sigma'",
                                  noise_scale)
            nd["sigma"] = float(noise_scale)
        nd.setdefault("sigma", None)
    elif hasattr(noise, "to_dict"):
        nd = dict(noise.to_dict())
        if nd["kind"] not in NOISE_KINDS:
            raise param_error("noise", "problem_spec", kinds, nd["kind"])
    else:
        raise param_error("noise", "problem_spec", kinds, noise)
    try:
        return NoiseModel(**nd).to_dict()
    except TypeError as exc:
        raise param_error("noise", "problem_spec", f"a valid noise model ({exc})", noise) from None


def problem_spec(
    n_arms: Any = None,
    *,
    workers: Any = None,
    team_size: Any = None,
    score_range: Any = None,
    noise_scale: Any = None,
    noise: Any = None,
    arm_type: Any = None,
    decision_class: Any = None,
    reward_range: Any = None,
    labels: Any = None,
) -> dict[str, Any]:
    """Build (and validate) the JSON problem spec of a study.

    Two forms. **A team study** (the lab's vocabulary)::

        problem_spec(workers=["Ana", "Ben", ...], team_size=4, score_range=(0, 100))

    is a full-bandit problem: a ticket names a team (``arm_type="mask"``, decision class
    ``topk`` over the workers, labels = the names); its score is one observation whose
    noise is one term per session (``NoiseModel(level="observation")``), Gaussian of an
    **unknown** scale unless ``noise_scale`` declares the session's standard deviation.
    **Any problem**: ``problem_spec(n_arms, noise=..., arm_type=..., decision_class=...)``.

    Parameters
    ----------
    n_arms : int or Problem
        Number of base arms (workers); or a :class:`~combex.environments.Problem` (or an
        environment) whose size, arm type, noise model, decision class, labels and score
        range are taken.
    workers : list of str, optional
        The workers' names (a team study; ``n_arms`` is then their number).
    team_size : int, optional
        Members of a team (a team study; required with ``workers``).
    score_range : (low, high), optional
        Range of **one observation**: one session's score of a team (mask arms), or one
        evaluation of one worker (index arms). A tell of ``count`` c must lie in
        ``c * [low, high]``. For a team study of size k, the per-member range
        ``reward_range = score_range / k`` is derived (stored for tools that think per
        member, e.g. [0, 25] for scores in [0, 100] and teams of 4): it is the range of a
        member's *share* of a score, not a bound on what one member contributes.
    noise_scale : float, optional
        A known standard deviation of one observation (a session's score). None (default):
        unknown, estimated by the solver (a solver that needs a known scale refuses the
        problem at ``create_study``).
    noise : str, dict or NoiseModel, default "bernoulli" (team studies: "gaussian")
        One of :data:`NOISE_KINDS` by name (``"gaussian"``: scale ``noise_scale``, unknown
        by default; ``"bernoulli"``: rewards in {0, 1}; ``"rademacher"``: {-1, 1}), a dict
        of :class:`~combex.environments.NoiseModel` fields (``"bounded"`` needs its
        ``bound``), or a NoiseModel. A kind outside :data:`NOISE_KINDS` is refused.
    arm_type : {"index", "mask"}, default "index" (team studies: "mask")
        ``"index"``: a ticket evaluates one worker; ``"mask"``: a whole team (full bandit).
    decision_class : DecisionClass or dict, optional
        Stored by its registered ``name`` and ``params()``; a class without a registered
        name is refused (never pickled).
    reward_range : (low, high), optional
        Range of one observation of one base arm; without ``score_range`` a tell must lie
        in ``count * |team| * [low, high]``. Default: [0, 1] for Bernoulli, [-1, 1] for
        Rademacher, unbounded otherwise (None for an open end; finite values only in tells).
    labels : list of str, optional
        Names of the base arms (unique; tickets, ``best()`` and exports speak them).

    Returns
    -------
    dict

    Examples
    --------
    >>> spec = problem_spec(workers=["Ana", "Ben", "Cleo", "Dev", "Eli"], team_size=2, score_range=(0, 100))
    >>> spec["arm_type"], spec["decision_class"], spec["reward_range"], spec["noise"]["sigma"]
    ('mask', {'name': 'topk', 'params': {'n': 5, 'k': 2}}, [0.0, 50.0], None)
    """
    if workers is not None:
        if n_arms is not None or labels is not None or decision_class is not None:
            raise param_error("workers", "problem_spec", "given without n_arms, labels or decision_class (the "
                              "workers are the arms and their names)", workers)
        if isinstance(workers, str) or not hasattr(workers, "__len__"):
            raise param_error("workers", "problem_spec", "a list of worker names", workers)
        if team_size is None:
            raise param_error("team_size", "problem_spec", "an int (the members of a team) with workers", None)
        names = list(workers)
        if len(names) < 2:
            raise param_error("workers", "problem_spec", "a list of at least 2 names", workers)
        names = _check_names(names, "workers")
        k = check_int(team_size, "team_size", owner="problem_spec", low=1, high=max(len(names) - 1, 1))
        if arm_type not in (None, "mask"):
            raise param_error("arm_type", "problem_spec", "'mask' (or None) with workers", arm_type)
        return problem_spec(len(names), noise="gaussian" if noise is None else noise, noise_scale=noise_scale,
                            arm_type="mask", decision_class={"name": "topk", "params": {"n": len(names), "k": k}},
                            score_range=score_range, reward_range=reward_range, labels=names)
    if team_size is not None:
        raise param_error("team_size", "problem_spec", "None unless workers are given", team_size)
    if n_arms is not None and not isinstance(n_arms, (int, np.integer)):
        p = getattr(n_arms, "problem", n_arms)
        if not hasattr(p, "n_arms") or isinstance(n_arms, (bool, np.bool_)):
            raise param_error("problem", "create_study", "a problem spec dict, a Problem or an int", n_arms)
        info = getattr(p, "info", None) or {}
        return problem_spec(int(p.n_arms), noise=p.noise if noise is None else noise, noise_scale=noise_scale,
                            arm_type=p.arm_type if arm_type is None else arm_type,
                            decision_class=p.decision_class if decision_class is None else decision_class,
                            score_range=score_range, reward_range=reward_range,
                            labels=info.get("labels") if labels is None else labels)
    n = check_int(n_arms, "n_arms", owner="problem_spec", low=1)
    arm_type = check_choice("index" if arm_type is None else arm_type, "arm_type", ("index", "mask"),
                            owner="problem_spec")
    nd = _noise_dict("bernoulli" if noise is None else noise, noise_scale, arm_type == "mask")
    dc = None
    if decision_class is not None:
        if isinstance(decision_class, dict):
            if not isinstance(decision_class.get("name"), str) or set(decision_class) - {"name", "params"}:
                raise param_error("decision_class", "problem_spec", "a dict {'name': str, 'params': dict}",
                                  decision_class)
            params = decision_class.get("params", {})
            if not isinstance(params, dict):
                raise param_error("decision_class", "problem_spec", "a dict {'name': str, 'params': dict}",
                                  decision_class)
            dc = {"name": decision_class["name"], "params": _jsonable(params, "decision_class")}
        else:
            name = getattr(type(decision_class), "name", None)
            if not name or not callable(getattr(decision_class, "params", None)):
                raise param_error("decision_class", "problem_spec",
                                  "a registered decision class (with a name and params()); classes are never "
                                  "pickled", decision_class)
            dc = {"name": name, "params": _jsonable(decision_class.params(), "decision_class")}
    team_k = None
    if arm_type == "mask" and dc is not None and dc["name"] == "topk":
        team_k = dc["params"].get("k")
    sr = None if score_range is None else _range(score_range, "score_range")
    if reward_range is not None:
        lo, hi = _range(reward_range, "reward_range")
    elif sr is not None and (arm_type == "index" or team_k):
        m = 1 if arm_type == "index" else int(team_k)
        lo, hi = sr[0] / m, sr[1] / m
    else:
        lo, hi = _DEFAULT_RANGE.get(nd["kind"], (-math.inf, math.inf))
    if labels is not None:
        labels = _check_names(labels, "labels", n)
    spec = {"n_arms": n, "arm_type": arm_type, "noise": nd,
            "reward_range": [None if math.isinf(lo) else lo, None if math.isinf(hi) else hi],
            "decision_class": dc, "labels": labels}
    if sr is not None:
        spec["score_range"] = [None if math.isinf(sr[0]) else sr[0], None if math.isinf(sr[1]) else sr[1]]
    build_problem(spec)  # validates the decision class
    return spec


def build_problem(spec: dict[str, Any]) -> Any:
    """The :class:`~combex.environments.Problem` of a spec (decision class rebuilt by name)."""
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
                   decision_class=dc, info={"labels": spec.get("labels"), "score_range": spec.get("score_range")})


def solver_spec(solver: Any, params: dict | None = None) -> tuple[str, dict[str, Any]]:
    """``(name, JSON settings)`` of a solver given by name (+ params) or as an instance."""
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
    cls = get_solver(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise InvalidParameterError(f"Could not build solver {name!r} from settings {params!r}: {exc}") from None


def reward_bounds(spec: dict[str, Any], arm: Any, count: int) -> tuple[float, float]:
    """Range of the reward sum of ``count`` observations of ``arm``: ``count *
    score_range`` when the spec has a score range, else ``count * |team| * reward_range``."""
    if spec.get("score_range") is not None:
        lo, hi = spec["score_range"]
        m = 1
    else:
        lo, hi = spec["reward_range"]
        m = len(arm) if isinstance(arm, list) else 1
    lo = -math.inf if lo is None else lo * m * count
    hi = math.inf if hi is None else hi * m * count
    return lo, hi


def check_reward(spec: dict[str, Any], arm: Any, count: int, value: Any, owner: str) -> float:
    """The reward sum of a ticket as a float, or a clear error naming ``what``: a real
    number (not a bool or a str), finite, within :func:`reward_bounds`, and an integer of
    the right parity for sums of {0, 1} or {-1, 1} observations. The error is a
    :class:`TicketError` naming ``owner`` (e.g. "ticket 3")."""
    what = "reward_sum"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TicketError(str(param_error(what, owner, "a real number (not a bool or a str)", value)))
    x = float(value)
    lo, hi = reward_bounds(spec, arm, count)
    if not (math.isfinite(x) and lo <= x <= hi):
        sr = spec.get("score_range")
        where = (("the score range" if count == 1 else f"{count} sessions' scores in the score range")
                 + f" [{sr[0]:g}, {sr[1]:g}]" if sr is not None and None not in sr else
                 f"{count} x the score range {sr}" if sr is not None else
                 f"{count} observation(s) of {arm!r} in the per-arm range {spec['reward_range']}")
        raise TicketError(str(param_error(what, owner, f"a finite number in [{lo:g}, {hi:g}] ({where})", value)))
    kind = spec["noise"]["kind"]
    if kind in _INTEGER_KINDS:
        m = len(arm) if isinstance(arm, list) else 1
        if x != round(x) or (kind in ("rademacher", "pm1") and (round(x) - m * count) % 2):
            what_obs = "{0, 1}" if kind in ("bernoulli", "data") else "{-1, 1}"
            raise TicketError(str(param_error(
                what, owner, f"a sum of {m * count} observation(s) in {what_obs} (an integer"
                + ("" if kind in ("bernoulli", "data") else " of the parity of the count") + ")", value)))
    return x


def check_seed(seed: Any) -> int:
    return check_int(seed, "seed", owner="create_study", low=0, high=2**63 - 1)


def check_lease(lease: Any) -> float:
    return check_float(lease, "lease_seconds", owner="create_study", low=0.0, closed="neither")

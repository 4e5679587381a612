"""The checks a solver makes before it runs: the problem's kind against the solver's
families (:func:`check_family`), a problem object's shape (:func:`_check_problem`), and the
warning for epsilon = 0 on a truth with tied optimal answers (:func:`warn_if_tied`)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._validation import param_error
from ..exceptions import InvalidParameterError, TieWarning

__all__ = ["tied_optimum", "warn_if_tied", "problem_kind", "check_family"]


# ---------------------------------------------------------------------- ties
def tied_optimum(solver: Any, env: Any) -> bool:
    """Whether the environment's truth has two optimal answers for ``solver`` (exact ties,
    up to 1e-12): the best member and the best other member of a decision class, the two
    best feature rows of a linear problem, or the K-th and (K+1)-th means of a Best-K one.
    False when the environment does not expose its truth."""
    try:
        means = np.asarray(env.means(), dtype=float)
    except Exception:  # noqa: BLE001 - no truth (real data, a user's environment)
        return False
    kind = problem_kind(getattr(env, "problem", env))
    if kind == "mask":
        dc = getattr(env, "decision_class", None)
        if dc is None:
            return False
        best = np.asarray(dc.argmax(means), dtype=bool)
        other = dc.argmax_excluding(means, best)
        return other is not None and abs(float(means[best].sum() - means[np.asarray(other, bool)].sum())) <= 1e-12
    if kind == "features":  # distinct rows only: copies of a feature row are one answer
        feats = np.asarray(getattr(getattr(env, "problem", env), "features"), dtype=float)
        _, first = np.unique(feats, axis=0, return_index=True)
        vals = np.sort(means[first])[::-1]
        return vals.size > 1 and vals[0] - vals[1] <= 1e-12
    k = getattr(solver, "K", None) or getattr(solver, "k", None) or 1
    vals = np.sort(means)[::-1]
    return isinstance(k, int) and 0 < k < vals.size and vals[k - 1] - vals[k] <= 1e-12


def warn_if_tied(solver: Any, env: Any) -> None:
    """Warn (:class:`~combex.exceptions.TieWarning`) when epsilon = 0 on a tied truth (PAC
    solvers only: a fixed-budget run ends at its budget whatever the truth)."""
    if getattr(solver, "contract", "pac") != "pac":
        return
    if float(getattr(solver, "tolerance", 0.0) or 0.0) > 0 or float(getattr(solver, "epsilon", 0.0) or 0.0) > 0:
        return
    if tied_optimum(solver, env):
        warnings.warn(
            f"{type(solver).__name__} runs with epsilon = 0 on an instance whose optimum is tied "
            "(two answers have the same expected reward): exact identification cannot stop. "
            "Give epsilon > 0 or a budget (the result then lists the candidates still "
            "indistinguishable from the leader in info['indistinguishable']).",
            TieWarning,
            stacklevel=4,
        )


# ---------------------------------------------------------------------- families
#: What a problem of each instance family looks like to a solver: super-arm masks over a
#: decision class, index arms with features, index arms without features, or finite reward
#: lists read without replacement (``info["list_size"]``). A solver built for i.i.d. pulls
#: must refuse the lists at ``start``: it would only fail when a list runs out.
_FAMILY_KIND = {"full-bandit": "mask", "linear": "features", "semi-bandit": "index", "mips": "lists"}
_KIND_TEXT = {
    "mask": "a full-bandit problem (super-arm masks over a decision class)",
    "features": "a linear problem (index arms with a feature matrix)",
    "index": "a semi-bandit / MAB problem (index arms without features)",
    "lists": "finite reward lists sampled without replacement (the mips family)",
}


def problem_kind(problem: Any) -> str:
    """``"mask"``, ``"features"``, ``"lists"`` or ``"index"``: how a problem's arms look
    (see :data:`_FAMILY_KIND`)."""
    if getattr(problem, "arm_type", "index") == "mask":
        return "mask"
    if getattr(problem, "features", None) is not None:
        return "features"
    return "lists" if "list_size" in (getattr(problem, "info", None) or {}) else "index"


def check_family(solver: Any, problem: Any) -> None:
    """Refuse, before any work, a problem outside the solver's instance families (e.g.
    ``lil-randlucb`` on ``soare``, ``saqm`` on a semi-bandit instance), which would
    otherwise run forever or fail late with a confusing message."""
    families = tuple(getattr(type(solver), "families", ()) or ())
    if not families:
        return
    kind = problem_kind(problem)
    if any(_FAMILY_KIND.get(f) == kind for f in families):
        if kind == "mask" and getattr(problem, "decision_class", None) is None:
            raise InvalidParameterError(
                f"The 'problem' parameter of {type(solver).__name__}.start must carry a decision "
                "class (full-bandit problems are over super-arms of one); this one has none."
            )
        return
    raise InvalidParameterError(
        f"The 'problem' parameter of {type(solver).__name__}.start must be "
        f"{' or '.join(sorted({_KIND_TEXT[_FAMILY_KIND[f]] for f in families if f in _FAMILY_KIND}))} "
        f"({getattr(solver, 'name', '')!r} takes the instance families {', '.join(families)}; "
        f"`combex list` shows each instance's family). Got {_KIND_TEXT[kind]} instead."
    )


# ---------------------------------------------------------------------- Exploration
def _check_problem(problem: Any, owner: str) -> Any:
    """``problem`` (or an environment's ``problem``) if it looks like a
    :class:`~combex.environments.Problem` (``n_arms`` and ``noise``); a clear error otherwise."""
    pb = getattr(problem, "problem", problem)
    n = getattr(pb, "n_arms", None)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1 or not hasattr(pb, "noise"):
        raise param_error(
            "problem", owner, "a combex.environments.Problem or an environment (with n_arms and noise)", problem
        )
    return pb

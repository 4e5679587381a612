"""Save and resume a simulated study: the exploration state *and* the environment's.

A simulated run is reproducible only if, after a crash, the environment continues its
noise stream exactly where it stopped. :func:`save_study` writes the exploration's
:meth:`~combex.solvers.Exploration.state_dict` (JSON + ``.npz``; never pickled) with one
extra top-level entry, ``"environment"``: the bit generator state of the environment's
noise and, for reward-list environments, the read positions. The file is an ordinary
exploration state, so ``solver.load(path, problem)`` also reads it;
:func:`load_study` additionally restores the environment.

:func:`run_study` is :meth:`Solver.run` (the same ask / tell loop, hence the same result
for the same generators) that saves every ``save_every`` batches and, when the file
already exists, resumes from it instead of starting over.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._state import load_state, save_state
from .._validation import check_int
from ..exceptions import InvalidParameterError, StateError

__all__ = ["environment_state", "restore_environment_state", "save_study", "load_study", "run_study"]


def environment_state(env: Any) -> dict[str, Any]:
    """The mutable state of a simulated environment (:meth:`Environment.state_dict`: its
    noise generator's bit-generator state, plus the read positions of reward-list
    environments)."""
    return env.state_dict()


def restore_environment_state(env: Any, state: dict[str, Any]) -> Any:
    """Put ``env`` back into ``state`` (from :func:`environment_state`); returns ``env``."""
    if not isinstance(state, dict):
        raise StateError(f"The saved environment state must be a table. Got {type(state).__name__} instead.")
    if state.get("type") != type(env).__name__ or state.get("n_arms") != int(env.n_arms):
        raise StateError(
            f"The saved environment state is of a {state.get('type')} with {state.get('n_arms')} arms; "
            f"the environment given is a {type(env).__name__} with {env.n_arms} arms."
        )
    if "positions" in state:
        pos = np.asarray(state["positions"])
        want = np.shape(getattr(env, "_pos", ()))
        if pos.dtype.kind not in "iu" or pos.shape != want or np.any(pos < 0):
            raise StateError("The field 'environment.positions' of the saved state must hold nonnegative "
                             f"integer read positions of shape {want}. Got {pos.tolist()!r} instead.")
    try:
        return env.load_state_dict(state)
    except InvalidParameterError as exc:  # malformed positions etc.: a damaged file, not bad code
        raise StateError(f"The saved environment state is malformed: {exc}") from None


def save_study(path: str | os.PathLike[str], exploration: Any, env: Any) -> Path:
    """Save ``exploration`` and ``env``'s state to ``path`` (JSON) and ``path.<hash>.npz``
    with one commit point (see ``combex._state.save_state``)."""
    state = exploration.state_dict()
    token = secrets.token_hex(8)
    # The token is stored both in the JSON and in the .npz: a JSON and arrays of different
    # saves (copied by hand, or the old two-rename format) are detected at load time.
    state["environment"] = {**environment_state(env), "token": token, "token_array": np.array([token])}
    return save_state(state, path)


def load_study(path: str | os.PathLike[str], solver: Any, env: Any) -> Any:
    """Resume the exploration saved at ``path`` and restore ``env`` (in place) to the
    moment of the save; returns the exploration."""
    state = load_state(path)
    env_state = state.get("environment")
    if not isinstance(env_state, dict):
        raise StateError(f"The file {str(path)!r} holds an exploration without environment state "
                         "(saved by Exploration.save, not save_study).")
    token = np.asarray(env_state.get("token_array"))
    if token.ndim != 1 or token.size != 1 or str(token[0]) != env_state.get("token"):
        raise StateError(f"The saved study {str(path)!r} is inconsistent (field 'environment.token': its "
                         "JSON and arrays come from different saves, e.g. after a crash during a save).")
    try:
        exp = solver.resume(state, env.problem)  # checked first: env is changed only on success
        restore_environment_state(env, env_state)
    except StateError as exc:
        raise StateError(f"{str(path)!r}: {exc}") from None
    return exp


def run_study(
    solver: Any,
    env: Any,
    path: str | os.PathLike[str],
    *,
    rng: Any = None,
    budget: int | None = None,
    save_every: int = 1,
    on_save: Callable[[Any], None] | None = None,
) -> Any:
    """Simulate ``solver`` on ``env`` like :meth:`Solver.run`, saving the study to ``path``
    every ``save_every`` batches; if ``path`` exists, resume from it (``rng`` is then
    ignored: the saved generators continue).

    Returns the :class:`~combex.solvers.Result` (its wall time counts this call only).
    """
    save_every = check_int(save_every, "save_every", owner="run_study", low=1)
    if budget is not None:
        budget = check_int(budget, "budget", owner="run_study", low=1)
    t0 = time.perf_counter()
    p = Path(path)
    exp = load_study(p, solver, env) if p.exists() else solver.start(env, rng=rng)
    batches = 0
    while not exp.done:
        batch = exp.ask()
        if budget is not None:
            batch = batch.truncated(budget - exp.samples)
        sums = env.pull_many(batch.arms, batch.counts)
        exp.tell_batch(batch, sums)
        if budget is not None and exp.samples >= budget and not exp.done:
            exp.stop("budget_exhausted", f"budget of {budget} samples exhausted")
        batches += 1
        if batches % save_every == 0 or exp.done:
            save_study(p, exp, env)
            if on_save is not None:
                on_save(exp)
    return exp.result(wall_seconds=time.perf_counter() - t0)

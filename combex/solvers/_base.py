"""Solvers and explorations: settings apart from state, ask / tell for real studies.

A :class:`Solver` holds only its settings (delta, epsilon, oracle, allocation...), so one
object serves many seeds. ``solver.start(problem, rng=...)`` returns an
:class:`Exploration`, the state of one run, with

* ``ask() -> Batch``: the arms to pull next and how many times each (static allocations
  ask for whole batches up to the next stopping check; adaptive ones for one or two arms);
  calling ``ask`` again before ``tell`` returns the same batch;
* ``tell_batch(batch, reward_sums)`` (or ``tell(arm, reward_sum, count)`` for one arm);
* ``done``, ``answer`` (the current best guess, as ``Result.answer``), ``result()``;
* ``state_dict()`` / ``Solver.resume(state)`` (and ``save``/``load`` on disk): a study can
  be saved and resumed exactly, random state included.

``solver.run(env, rng=..., budget=...)`` is only the loop over ask / tell against a
simulated environment.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from .._blas import SingleThreadedRuns
from .._state import load_state, restore_generator, save_state
from .._validation import check_int, check_rng, param_error
from ..estimation._variance import MIN_TESTED_DOF, DeclaredScaleWatch
from ..exceptions import InvalidParameterError, NoiseScaleWarning, StateError, TieWarning
from ..identification import Query
from ._checks import _check_problem, check_family, problem_kind, warn_if_tied

__all__ = ["Batch", "Result", "Algorithm", "Solver", "Exploration"]


# ---------------------------------------------------------------------- Batch
@dataclass(frozen=True)
class Batch:
    """Arms to pull and how many times each.

    ``arms`` is an int array of shape (m,) (index arms) or a bool array of shape (m, n)
    (super-arms); ``counts`` an int64 array of shape (m,). Iterating yields
    ``(arm, count)`` pairs, so a human study can read it as a list.
    """

    arms: NDArray[Any]
    counts: NDArray[np.int64]

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        for a, c in zip(self.arms, self.counts):
            yield (int(a) if self.arms.ndim == 1 else a.copy()), int(c)

    def __len__(self) -> int:
        return int(self.counts.shape[0])

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def truncated(self, budget_left: int) -> "Batch":
        """The batch cut (in order) so that its total is at most ``budget_left``."""
        if self.total <= budget_left:
            return self
        cum = np.cumsum(self.counts)
        new = np.minimum(self.counts, np.maximum(budget_left - (cum - self.counts), 0))
        return Batch(self.arms, new.astype(np.int64))


# ---------------------------------------------------------------------- Result
@dataclass(frozen=True)
class Result:
    """The outcome of one exploration.

    Attributes
    ----------
    answer : int or bool array of shape (n,)
        The recommended arm (index) or super-arm (mask).
    status : {"identified", "budget_exhausted"}
    samples : int
        Number of observations (a super-arm pull counts once).
    rounds : int
        Number of stopping checks performed.
    wall_seconds : float
    pulls : int array
        Per-arm pull counts (base arms; for full-bandit solvers, the number of pulls of
        super-arms containing each base arm; see ``info["support_pulls"]``).
    certificate : dict
        The stopping rule at the stop: every solver's ``statistic`` and ``threshold_value``
        (``nan`` where the rule has none) with ``stops_when`` (how the two compare when the
        rule holds, e.g. ``"statistic >= threshold"``), beside its own details (confidence
        width, approximation ratio, the threshold's name...).
    trace : dict of arrays or None
        The stopping statistic over the checks, when asked for.
    message : str
    info : dict
    """

    answer: Any
    status: str
    samples: int
    rounds: int
    wall_seconds: float
    pulls: NDArray[np.int64]
    certificate: Mapping[str, Any] = field(default_factory=dict)
    trace: Mapping[str, NDArray[Any]] | None = None
    message: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def identified(self) -> bool:
        return self.status == "identified"

    def answer_list(self) -> Any:
        """The answer as JSON-able data: an int, or the sorted member indices."""
        a = np.asarray(self.answer)
        if a.ndim == 0:
            return int(a)
        if a.dtype == np.bool_:
            return np.flatnonzero(a).tolist()
        return a.tolist()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary (the ``runs`` entries of ``combex run --json``)."""

        def js(v: Any) -> Any:
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, np.generic):
                return v.item()
            if isinstance(v, dict):
                return {k: js(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [js(x) for x in v]
            return v

        return {
            "answer": self.answer_list(),
            "status": self.status,
            "samples": int(self.samples),
            "rounds": int(self.rounds),
            "wall_seconds": float(self.wall_seconds),
            "pulls": np.asarray(self.pulls).tolist(),
            "certificate": js(dict(self.certificate)),
            "message": self.message,
        }


# ---------------------------------------------------------------------- Algorithm
class Algorithm(SingleThreadedRuns, ABC):
    """What every registered algorithm shares: a registry ``name``, the ``contract`` it
    follows (one of :data:`CONTRACTS`) and sklearn-style settings, validated in
    ``__init__`` and stored under the argument's name."""

    name: ClassVar[str] = ""
    contract: ClassVar[str] = ""
    #: Settings renamed so that one thing has one name across the solvers (``sigma`` the
    #: noise scale, ``K`` the size of the answer): old name -> name. The old keyword still
    #: works, with a :class:`DeprecationWarning`, and states saved under it still resume.
    renamed_params: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        renamed = getattr(cls, "renamed_params", {})
        init = cls.__dict__.get("__init__")
        if renamed and init is not None:
            cls.__init__ = _accept_renamed(init, dict(renamed))  # type: ignore[method-assign]

    def get_params(self) -> dict[str, Any]:
        """Constructor settings (sklearn-style, read from the ``__init__`` signature)."""
        sig = inspect.signature(type(self).__init__)
        return {
            p: getattr(self, p)
            for p in sig.parameters
            if p != "self" and sig.parameters[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        }

    def json_params(self) -> dict[str, Any]:
        """Settings as JSON-able values (objects by their repr)."""
        out: dict[str, Any] = {}
        for k, v in self.get_params().items():
            if v is None or isinstance(v, (bool, int, float, str)):
                out[k] = v
            elif isinstance(v, np.generic):
                out[k] = v.item()
            else:
                out[k] = repr(v)
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def _accept_renamed(init: Any, renamed: dict[str, str]) -> Any:
    """``init`` that also takes the old names of its renamed settings (a
    :class:`DeprecationWarning` each; an error when both names are given)."""

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        owner = type(self).__name__
        for old, new in renamed.items():
            if old in kwargs:
                value = kwargs.pop(old)
                if new in kwargs:
                    raise InvalidParameterError(
                        f"{owner} got both '{new}' and its deprecated alias '{old}'; give '{new}' only.")
                warnings.warn(f"The '{old}' parameter of {owner} is deprecated; use '{new}' (the same setting).",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = value
        init(self, *args, **kwargs)

    return wrapper


def _current_params(cls: type, params: Mapping[str, Any]) -> dict[str, Any]:
    """Saved settings with the renamed ones under their current names."""
    renamed = getattr(cls, "renamed_params", {})
    return {renamed.get(k, k): v for k, v in params.items()}


# ---------------------------------------------------------------------- Solver
class Solver(Algorithm):
    """Settings of a pure-exploration algorithm (the ``"pac"`` contract); :meth:`start`
    makes the state of one run.

    Subclasses define ``name`` (CLI name), ``arm_type`` ("index" or "mask"), validate their
    settings in ``__init__`` (storing each under the argument's name), and implement
    :meth:`start`.
    """

    contract: ClassVar[str] = "pac"
    arm_type: ClassVar[str] = "index"
    #: Whether the explorations fold any told ``(arm, count, reward_sum)`` at once (their
    #: stopping rule stays valid for any sampling adapted to the told history), so a live
    #: study can fold each evaluation as it arrives and hand out :meth:`Exploration.propose`'s
    #: arms to concurrent assistants (the eager policy of :mod:`combex.studies`).
    eager_tells: ClassVar[bool] = False
    #: Instance families the solver takes (``"full-bandit"``, ``"semi-bandit"``,
    #: ``"linear"``, ``"mips"``); checked against the problem before any work at
    #: :meth:`start` (see :func:`check_family`). Empty: no check (plug-ins may leave it).
    families: ClassVar[tuple[str, ...]] = ()

    @property
    def tolerance(self) -> float:
        """The PAC tolerance epsilon a run's answer is guaranteed to meet (0 for exact
        identification). Scoring uses it (``env.is_correct(answer, tolerance)``); solvers
        whose ``epsilon`` setting means something else (the LIL solvers' Lemma 2.1
        epsilon) keep the default 0."""
        return 0.0

    def with_truth(self, env: Any) -> "Solver":
        """This solver, ready to run on the simulated environment ``env``. The oracle
        baselines, whose settings are the truth itself (``xy-oracle``'s ``theta``,
        ``oracle-tracking``'s ``weights``, ``oracle-sampler``'s ``allocation``), return a
        copy given the environment's truth when that setting is None; every other solver
        returns itself (it never reads the truth). :meth:`run` calls it first."""
        return self

    def query(self, problem: Any) -> Query | None:
        """What a run of this solver identifies on ``problem`` (a
        :class:`~combex.identification.Query`), or None when it has no lower-bound
        yardstick. :meth:`run` hands it the environment's truth after a simulated run and
        adds its ``lower_bound_ratio`` to the result's ``info``."""
        return None

    @abstractmethod
    def start(self, problem: Any, *, rng: Any = None) -> "Exploration":
        """Begin a run on ``problem`` (a :class:`~combex.environments.Problem` or an
        environment, whose ``problem`` is used; the truth is never read)."""

    def run(
        self,
        env: Any,
        *,
        rng: Any = None,
        budget: int | None = None,
        trace: bool = False,
        callback: Any = None,
    ) -> Result:
        """Simulate one run against ``env``: the loop over ask / tell.

        Parameters
        ----------
        env : Environment
        rng : None, int, SeedSequence or Generator
            Randomness of the algorithm (the environment has its own).
        budget : int, optional
            Maximum number of samples; the run stops with status ``"budget_exhausted"``.
        trace : bool
            Record the stopping statistic at every check (``Result.trace``).
        callback : callable, optional
            Called as ``callback(exploration)`` after every ``tell`` (every stopping check),
            e.g. to display progress (``exploration.samples``, ``exploration.progress()``:
            statistic, threshold, leader) or to end a long run: calling
            ``exploration.stop("budget_exhausted", reason)`` inside it ends the run.

        Warns
        -----
        TieWarning
            When ``epsilon = 0`` and the environment's truth has tied optimal answers
            (e.g. the 10th and 11th workers of most quiz domains): no exact (epsilon = 0)
            identification can stop then; give ``epsilon > 0`` or a ``budget``.

        Notes
        -----
        When :meth:`query` names the task, ``info`` also carries its yardstick from the
        environment's truth (never seen by the exploration): ``T_star`` and
        ``lower_bound_ratio = samples / (T* log(1/delta))``
        (:meth:`combex.identification.Query.lower_bound_info`).
        """
        if budget is not None:
            budget = check_int(budget, "budget", owner=type(self).__name__, low=1)
        if callback is not None and not callable(callback):
            raise param_error("callback", type(self).__name__, "a callable f(exploration) or None", callback)
        solver = self.with_truth(env)
        result = solver._simulate(env, rng=rng, budget=budget, trace=trace, callback=callback)
        q = solver.query(env)
        if q is None:
            return result
        extra = q.lower_bound_info(env, result.samples, result.info)
        return replace(result, info={**result.info, **extra}) if extra else result

    def _simulate(self, env: Any, *, rng: Any, budget: int | None, trace: bool, callback: Any = None) -> Result:
        """One simulated run (the work of :meth:`run` before the yardstick): the loop over
        ask / tell. Solvers with a faster loop over the same draws override it."""
        warn_if_tied(self, env)
        t0 = time.perf_counter()
        exp = self.start(env, rng=rng)
        exp.record_trace = trace
        while not exp.done:
            batch = exp.ask()
            if budget is not None:
                batch = batch.truncated(budget - exp.samples)
            sums = env.pull_many(batch.arms, batch.counts)
            exp.tell_batch(batch, sums)
            if budget is not None and exp.samples >= budget and not exp.done:
                exp.stop("budget_exhausted", f"budget of {budget} samples exhausted")
            if callback is not None and not exp.done:
                callback(exp)
        return exp.result(wall_seconds=time.perf_counter() - t0)

    # ------------------------------------------------------------- save / resume
    def resume(self, state: Mapping[str, Any], problem: Any) -> "Exploration":
        """Rebuild an exploration from :meth:`Exploration.state_dict` output.

        ``problem`` is the problem (or environment) the exploration was started on: the
        state holds only data, the structure (decision class, features) is given again.

        Raises
        ------
        StateError
            If the state belongs to another solver, settings or problem, or is corrupt (a
            missing or malformed field, an unknown bit generator, negative counts, non-finite
            statistics): the message names the field.
        """
        if not isinstance(state, Mapping):
            raise StateError(f"A saved state must be a table (dict). Got {type(state).__name__} instead.")
        if state.get("solver") != self.name:
            raise StateError(
                f"The saved state belongs to solver {state.get('solver')!r}, not {self.name!r}."
            )
        saved = state.get("params")
        if isinstance(saved, Mapping):
            saved = _current_params(type(self), saved)
        if saved != self.json_params():
            raise StateError(
                f"The saved state was made with settings {state.get('params')!r}; this solver "
                f"has {self.json_params()!r}."
            )
        problem = getattr(problem, "problem", problem)
        n_arms = state.get("n_arms")
        if isinstance(n_arms, bool) or not isinstance(n_arms, int) or n_arms != int(problem.n_arms):
            raise StateError(
                f"The saved state has {state.get('n_arms')} arms; the problem given has "
                f"{problem.n_arms} arms."
            )
        cls = self._exploration_class()
        exp = cls.__new__(cls)
        exp.problem = problem
        try:
            exp._load_state(self, dict(state))
        except StateError:
            raise
        except KeyError as exc:
            raise StateError(f"The saved state lacks the field {exc.args[0]!r}.") from None
        except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
            raise StateError(f"The saved state is malformed ({type(exc).__name__}: {exc}).") from None
        _check_loaded(exp)
        return exp

    def load(self, path: Any, problem: Any) -> "Exploration":
        """Resume an exploration saved with :meth:`Exploration.save` (a corrupt or foreign
        file raises :class:`~combex.exceptions.StateError` naming the file and the field)."""
        state = load_state(path)
        try:
            return self.resume(state, problem)
        except StateError as exc:
            raise StateError(f"{str(path)!r}: {exc}") from None

    def _exploration_class(self) -> type["Exploration"]:
        cls = getattr(self, "exploration_class", None)
        if cls is None:
            raise StateError(f"{type(self).__name__} does not support resuming.")
        return cls


def _recommendation_alias(self: "Exploration") -> Any:

    warnings.warn(
        "Exploration.recommendation is deprecated; use Exploration.answer (the name of Result.answer).",
        DeprecationWarning,
        stacklevel=2,
    )
    return self.answer


_deprecated_recommendation = property(_recommendation_alias, doc="Deprecated alias of :attr:`Exploration.answer`.")


class Exploration(ABC):
    """The state of one run (ask / tell).

    Subclasses implement :meth:`_next_batch` (the arms to pull next), :meth:`_update`
    (fold in reward sums, then check the stopping rule, calling :meth:`stop` when it holds),
    :attr:`recommendation`, and for save / resume :meth:`_extra_state` /
    :meth:`_load_extra_state` (everything but the common counters, which the base saves).
    """

    record_trace: bool = False
    _told_pending: bool = False
    #: How the stopping rule compares :meth:`stopping_statistic`'s statistic with its
    #: threshold when it holds: ``"statistic <= threshold"`` for the confidence-width rules
    #: of the seed papers, ``"statistic >= threshold"`` for the GLR rules, or a sentence
    #: where the rule has no statistic (a fixed budget, an elimination schedule).
    stops_when: ClassVar[str] = "statistic <= threshold"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Subclasses implement the current answer as the property ``recommendation`` (the
        # name of the first contract); users read :attr:`answer`, the word of
        # :class:`Result`. The implementation is moved to ``_current_answer`` and
        # ``recommendation`` becomes a deprecated alias.
        super().__init_subclass__(**kwargs)
        impl = cls.__dict__.get("recommendation")
        if impl is not None and impl is not _deprecated_recommendation:
            cls._current_answer = impl  # type: ignore[attr-defined]
            cls.recommendation = _deprecated_recommendation  # type: ignore[assignment,misc]

    def __init__(self, solver: Solver, problem: Any, rng: Any) -> None:
        self.solver = solver
        self.problem = _check_problem(problem, type(solver).__name__)
        check_family(solver, self.problem)
        self.rng = check_rng(rng)
        self.samples = 0
        self.rounds = 0
        self.status = "running"
        self.message = ""
        self._pending: Batch | None = None
        self._trace: dict[str, list[Any]] = {}
        self.certificate: dict[str, Any] = {}

    # ------------------------------------------------------------------ contract
    @abstractmethod
    def _next_batch(self) -> Batch:
        ...

    @abstractmethod
    def _update(self, batch: Batch, reward_sums: NDArray[np.float64]) -> None:
        ...

    @property
    @abstractmethod
    def recommendation(self) -> Any:
        """The current best guess (index or mask): what subclasses implement. Deprecated
        for users (a :class:`DeprecationWarning`): read :attr:`answer`."""

    @property
    def answer(self) -> Any:
        """The current best guess (index or mask); the final one is ``result().answer``."""
        return self._current_answer  # type: ignore[attr-defined]

    @property
    @abstractmethod
    def pulls(self) -> NDArray[np.int64]:
        """Per-arm pull counts."""

    def _extra_state(self) -> dict[str, Any]:
        raise StateError(f"{type(self).__name__} does not support saving.")

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        raise StateError(f"{type(self).__name__} does not support resuming.")

    def _info(self) -> dict[str, Any]:
        return {}

    # ------------------------------------------------------------------ public API
    @property
    def done(self) -> bool:
        return self.status != "running"

    def ask(self) -> Batch:
        """The next arms to pull with their counts (the same batch until told)."""
        if self.done:
            raise StateError(f"ask() after the exploration ended ({self.status}).")
        if self._pending is None:
            self._pending = self._next_batch()
        return self._pending

    def tell_batch(self, batch: Batch, reward_sums: Any) -> None:
        """Report the reward sums of a batch (possibly with reduced counts)."""
        if self.done:
            raise StateError(f"tell after the exploration ended ({self.status}).")
        # Checked once here, for the whole batch; the solvers' updates trust these arrays.
        try:
            sums = np.asarray(reward_sums, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise param_error("reward_sums", type(self.solver).__name__, "an array of finite floats", reward_sums) from None
        if batch is not self._pending:  # a batch the exploration did not make: validate it
            self._check_batch(batch)
        m = batch.counts.shape[0]
        if sums.shape[0] != m:
            raise InvalidParameterError(
                f"The 'reward_sums' parameter must have shape ({m},). "
                f"Got an array of shape {sums.shape} instead."
            )
        if not (all(map(math.isfinite, sums.tolist())) if m <= 4 else np.isfinite(sums).all()):
            raise InvalidParameterError("The 'reward_sums' parameter must have finite entries.")
        # the batch ask() returned, untouched: solvers may skip re-checking its arms
        self._told_pending = batch is self._pending
        self._pending = None
        self.samples += sum(batch.counts.tolist()) if m <= 4 else batch.total
        w = self.noise_watch
        if w is not None:
            w.add(batch.arms, batch.counts, sums)
        self._update(batch, sums)

    def tell(self, arm: Any, reward_sum: float, count: int = 1) -> None:
        """Report ``count`` observations of one arm with sum ``reward_sum``."""
        count = check_int(count, "count", low=1)
        arms = np.asarray([arm]) if np.ndim(arm) == 0 else np.asarray(arm)[None, ...]
        try:
            value = float(reward_sum)
        except (TypeError, ValueError):
            raise param_error("reward_sum", type(self.solver).__name__, "a finite float", reward_sum) from None
        self.tell_batch(Batch(arms, np.array([count], dtype=np.int64)), [value])

    def _told_arm_type(self) -> str:
        """``"index"`` or ``"mask"``: the arms :meth:`tell_batch` takes (the solver's
        ``arm_type``; an exploration serving both arm types overrides it)."""
        return getattr(self.solver, "arm_type", "index")

    def _check_batch(self, batch: Batch) -> None:
        """Validate the arms and counts of a batch given to :meth:`tell_batch` (an index in
        ``[0, n_arms)`` or a 0/1 mask of length ``n_arms`` per arm; counts >= 0)."""
        owner = type(self.solver).__name__
        n = int(self.problem.n_arms)
        arms = np.asarray(batch.arms)
        counts = np.asarray(batch.counts)
        if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 0):
            raise param_error("count", owner, "non-negative ints", batch.counts)
        if self._told_arm_type() == "mask":
            if (arms.ndim != 2 or arms.shape != (counts.shape[0], n)
                    or not (arms.dtype == np.bool_ or (np.issubdtype(arms.dtype, np.number)
                                                       and np.all((arms == 0) | (arms == 1))))):
                raise param_error("arm", owner, f"a bool mask of shape ({n},)", arms[0] if arms.ndim > 1 else arms)
        else:
            if (arms.shape != counts.shape or (arms.size and not np.issubdtype(arms.dtype, np.integer))
                    or (arms.size and (arms.min() < 0 or arms.max() >= n))):
                bad = arms.reshape(-1)[0] if arms.size == 1 else arms
                raise param_error("arm", owner, f"an int in the range [0, {n - 1}]", bad)

    def stop(self, status: str, message: str = "") -> None:
        if status == "identified" and self._untested_declared_scale():
            return  # the rule holds, but the declared scale is not checked yet: the next checks stop
        self.status = status
        self.message = message

    def _untested_declared_scale(self) -> bool:
        """Whether a declared noise scale (Gaussian-type noise, not a range's own scale) has
        fewer than :data:`~combex.estimation._variance.MIN_TESTED_DOF` residual degrees of
        freedom behind it: a stop is then deferred, so a misdeclared scale is caught before it
        can end a run (a few more samples, on the easiest instances only)."""
        if self._own_noise_check:
            return False
        noise = getattr(self.problem, "noise", None)
        if noise is None or noise.kind in ("bernoulli", "rademacher", "pm1"):
            return False
        w = self.noise_watch
        if w is None or self._declared_scale() is None:
            return False

        return w.dof() < MIN_TESTED_DOF

    def record(self, **values: Any) -> None:
        """Append stopping statistics to the trace (when tracing)."""
        if self.record_trace:
            for k, v in values.items():
                self._trace.setdefault(k, []).append(v)

    def progress(self) -> dict[str, Any]:
        """Where a run stands, for progress displays (the CLI's bar, ``run(callback=...)``,
        a live study's ``best()`` and dashboard).

        Keys (every solver): ``samples``; ``statistic`` and ``threshold`` with
        ``stops_when`` (``"statistic <= threshold"`` for the confidence-width rules of the
        seed papers, ``"statistic >= threshold"`` for the GLR rules; ``nan`` before the
        first check); ``leader`` (the current recommendation; a list of base arms for
        super-arms); ``challenger`` (the closest alternative answer, or None where the rule
        has none); ``delta_achieved`` (the smallest delta at which the solver's valid,
        time-uniform stopping rule would hold on the data so far: an anytime-valid p-value
        for "the leader is epsilon-good"; None where the solver cannot compute it);
        ``evaluations_left`` (an *estimate* of the evaluations still needed, or None);
        ``noise_check`` (the test of a declared noise scale, or None)."""
        stat, threshold = self.stopping_statistic()
        try:
            lead = np.asarray(self.answer)
        except Exception:  # noqa: BLE001 - before the first pull some solvers have none
            lead = None
        if lead is not None and lead.dtype == bool:
            leader: Any = np.flatnonzero(lead).tolist()
        elif lead is not None:
            leader = lead.tolist()
        else:
            leader = None
        return {"samples": int(self.samples), "statistic": stat, "threshold": threshold,
                "stops_when": self.stops_when, "leader": leader, "challenger": None,
                "delta_achieved": None, "evaluations_left": None, "noise_check": self.noise_check()}

    def stopping_statistic(self) -> tuple[float, float]:
        """``(statistic, threshold)`` of the last stopping check, compared as
        :attr:`stops_when` says; ``nan`` before the first check and where the rule has no
        statistic. Every :class:`Result`'s ``certificate`` carries them (``statistic``,
        ``threshold_value``, ``stops_when``) beside the solver's own details."""
        return math.nan, math.nan

    def would_stop(self, delta: float) -> bool | None:
        """Whether the solver's stopping rule at error probability ``delta`` would hold on the
        data so far (its statistic against the threshold at that level); None where the solver
        cannot say (the GLR solvers can: their rules at every delta share one sampling rule)."""
        return None

    def delta_achieved(self) -> float | None:
        """The smallest delta at which :meth:`would_stop` holds: an anytime-valid p-value for
        "the leader is epsilon-good" (see :meth:`progress`); None where not available."""
        return None

    # ------------------------------------------------------------------ the declared noise scale
    #: Whether the exploration tests its declared noise scale itself (the GLR solvers do, and
    #: switch rules on rejection); otherwise :attr:`noise_watch` does it for every solver.
    _own_noise_check: ClassVar[bool] = False

    @property
    def noise_watch(self) -> Any:
        """The residual statistics of the told observations for the test of the declared noise
        scale (:class:`~combex.estimation._variance.DeclaredScaleWatch`), or None where there
        is no declared scale to test (reward lists, an unknown scale, a solver with its own
        test). Every told batch is folded into it; :meth:`result` reports the test."""
        w = self.__dict__.get("_noise_watch", False)
        if w is False:
            w = self._make_noise_watch()
            self.__dict__["_noise_watch"] = w
        return w

    def _make_noise_watch(self) -> Any:
        if self._own_noise_check or problem_kind(self.problem) == "lists":
            return None

        kind = problem_kind(self.problem)
        feats = np.asarray(self.problem.features, dtype=np.float64) if kind == "features" else None
        return DeclaredScaleWatch(int(self.problem.n_arms), feats, masks=kind == "mask")

    def _declared_scale(self) -> float | None:
        """The noise scale of one observation the solver relies on: its ``sigma`` or ``R``
        (the explorations keep the one they use), else the problem's noise model (a team's
        scale for super-arms); None when unknown."""
        for key in ("sigma", "R"):
            v = getattr(self, key, None)
            if isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
                return float(v)
        noise = getattr(self.problem, "noise", None)
        if noise is None or noise.sigma is None:
            return None
        k = 1
        if problem_kind(self.problem) == "mask":
            dc = getattr(self.problem, "decision_class", None)
            k = int(getattr(dc, "k", 0) or 0) or int(np.asarray(dc.argmax(np.zeros(self.problem.n_arms))).sum())
        return noise.scale(k)

    def noise_check(self) -> dict[str, Any] | None:
        """The test of the declared noise scale on the data so far (valid at any time: see
        :mod:`combex.estimation._variance`), or None where there is none."""
        if self._own_noise_check:  # kept by the exploration itself as ``_noise_record``
            own = getattr(self, "_noise_record", None)
            return None if own is None else dict(own)
        w = self.noise_watch
        sigma0 = self._declared_scale() if w is not None else None
        if w is None or sigma0 is None or w.dof() < 1:
            return None
        chk = w.check(sigma0)
        chk["at_sample"] = int(self.samples)
        return chk

    def propose(self, n: int, pending: Any = (), rng: Any = None, avoid: Any = ()) -> list[Any]:
        """Arms for ``n`` new evaluations handed out while the evaluations of ``pending``
        (arms handed out and not told yet) are outstanding: what a live study gives
        concurrent assistants (:mod:`combex.studies`). The exploration's state does not
        change; ``rng`` (a Generator, not the exploration's own) draws any randomness, so a
        replay of the told log never depends on what was proposed. ``avoid``: arms that
        cannot be used now (a team already in session), proposed last, or never where the
        rule has other choices (a hint: a rule that cannot honour it may ignore it).

        Default: the entries of the next batch (:meth:`ask`), each time the one with the
        fewest pending evaluations (ties: the fewest told samples of an index arm, then
        batch order). Solvers whose sampling rule can account for outstanding evaluations
        override it (the rule applied to the told counts plus the pending ones).

        Returns
        -------
        list of int (index arms) or bool arrays of shape (n_arms,) (super-arms)
        """
        n = check_int(n, "n", owner=f"{type(self).__name__}.propose", low=0)
        batch = self.ask()
        entries = [a for a, _ in batch]

        def key(a: Any) -> Any:
            return int(a) if np.ndim(a) == 0 else np.asarray(a, dtype=bool).tobytes()

        pend: dict[Any, int] = {}
        for a in pending:
            pend[key(a)] = pend.get(key(a), 0) + 1
        banned = {key(a) for a in avoid}
        pulls = np.asarray(self.pulls)
        out: list[Any] = []
        for _ in range(n):
            def rank(j: int) -> tuple[bool, int, int, int]:
                a = entries[j]
                told = int(pulls[int(a)]) if np.ndim(a) == 0 and pulls.shape[0] > int(a) else 0
                return (key(a) in banned, pend.get(key(a), 0), told, j)

            j = min(range(len(entries)), key=rank)
            a = entries[j]
            out.append(int(a) if np.ndim(a) == 0 else np.asarray(a, dtype=bool).copy())
            pend[key(a)] = pend.get(key(a), 0) + 1
        return out

    def result(self, wall_seconds: float = 0.0) -> Result:
        trace = {k: np.asarray(v) for k, v in self._trace.items()} if self.record_trace else None
        info = self._info()
        stat, threshold = self.stopping_statistic()
        cert = {"statistic": float(stat), "threshold_value": float(threshold), "stops_when": self.stops_when,
                **self.certificate}
        if not self._own_noise_check:
            chk = self.noise_check()
            if chk is not None:
                info["noise_check"] = chk
                cert["noise_check"] = chk
                if chk["rejected"]:
                    cert["guarantee"] = (
                        f"void: the observations contradict the declared noise scale {chk['declared']:.4g} (at least "
                        f"{chk['observed_at_least']:.4g} with confidence {1 - chk['alpha']:.2f}); the answer is not "
                        "(epsilon, delta)-correct")
                    if not self.__dict__.get("_noise_warned"):

                        self.__dict__["_noise_warned"] = True
                        warnings.warn(
                            f"{type(self.solver).__name__}: the observations contradict the declared noise scale "
                            f"{chk['declared']:.4g} (the noise scale is at least {chk['observed_at_least']:.4g} with "
                            f"confidence {1 - chk['alpha']:.2f}; estimate {chk['estimate']:.4g}). The answer is not "
                            "(epsilon, delta)-correct; declare the scale correctly.", NoiseScaleWarning, stacklevel=3)
        return Result(
            answer=self.answer,
            status=self.status if self.done else "running",
            samples=self.samples,
            rounds=self.rounds,
            wall_seconds=wall_seconds,
            pulls=np.asarray(self.pulls).copy(),
            certificate=cert,
            trace=trace,
            message=self.message,
            info=info,
        )

    # ------------------------------------------------------------------ save / resume
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly (JSON values and numpy arrays)."""
        return {
            "solver": self.solver.name,
            "params": self.solver.json_params(),
            "n_arms": int(self.problem.n_arms),
            "rng": self.rng.bit_generator.state,
            "rng_type": type(self.rng.bit_generator).__name__,
            "samples": self.samples,
            "rounds": self.rounds,
            "status": self.status,
            "message": self.message,
            "pending": None
            if self._pending is None
            else {"arms": self._pending.arms, "counts": self._pending.counts},
            "certificate": self.certificate,
            "extra": self._extra_state(),
            "noise_watch": None if self.noise_watch is None else self.noise_watch.state(),
        }

    def save(self, path: Any) -> Any:
        """Write :meth:`state_dict` to ``path`` (JSON + ``.npz``; see combex._state)."""
        return save_state(self.state_dict(), path)

    def _load_state(self, solver: Solver, state: dict[str, Any]) -> None:
        self.solver = solver
        self.rng = restore_generator(state["rng_type"], state["rng"], source="The saved state")
        for key in ("samples", "rounds"):
            v = state[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise StateError(f"The field {key!r} of the saved state must be a nonnegative integer. "
                                 f"Got {v!r} instead.")
        self.samples = int(state["samples"])
        self.rounds = int(state["rounds"])
        for key in ("status", "message"):
            if not isinstance(state[key], str):
                raise StateError(f"The field {key!r} of the saved state must be a string. Got {state[key]!r} instead.")
        self.status = state["status"]
        self.message = state["message"]
        p = state["pending"]
        self._pending = None if p is None else Batch(np.asarray(p["arms"]), np.asarray(p["counts"], dtype=np.int64))
        self.certificate = dict(state["certificate"])
        self._trace = {}
        self.record_trace = False
        self._load_extra_state(state["extra"])
        nw = state.get("noise_watch")
        if nw is not None and self.noise_watch is not None:
            self.noise_watch.load(nw)


def _check_loaded(exp: Exploration) -> None:
    """Refuse a resumed exploration whose pull counts are negative (a corrupt state)."""
    try:
        pulls = np.asarray(exp.pulls)
    except Exception as exc:  # a state too broken to compute its counts
        raise StateError(f"The saved state is malformed ({type(exc).__name__}: {exc}).") from None
    if pulls.dtype.kind in "iuf" and np.any(pulls < 0):
        raise StateError(f"The saved state has negative pull counts (field 'extra'): {pulls.tolist()[:10]}.")
    if exp._pending is not None and np.any(exp._pending.counts < 0):
        raise StateError("The field 'pending.counts' of the saved state has negative counts.")

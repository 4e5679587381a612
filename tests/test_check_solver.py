"""combex.testing.check_solver over every registered PAC solver, and proof that each check
can fail (a deliberately broken solver per check)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from combex.exceptions import InvalidParameterError
from combex.solvers import SOLVERS, Batch, Exploration, Solver, get_solver
from combex.testing import CHECKS, check_solver, clopper_pearson, solver_family, yield_solver_checks

get_solver("lucb")  # load the built-in families
PAC = sorted(n for n, c in SOLVERS.items() if c.contract == "pac" and not n.startswith("test-"))

# Known failures. The issue-12 defects the checks caught (LinGapE's default S = 1 answering
# theta = (50, 50.8) wrongly in 10 of 10 runs; no family check at start) are fixed on main
# (issue 12a; lingame / rage since issue 16); these remain.
_NOSTOP = ("lingape-oracle (S = 120, valid on every case) does not stop within the 200-sample budget the default "
           "suite affords it (5-30 ms a round)")
XFAIL = {
    ("lingape-oracle", "easy"): _NOSTOP,
    ("lingape-oracle", "seeds_differ"): "within the 200-sample budget the default suite affords lingape-oracle its "
                                        "pulls are the same for every seed (the pulls are chosen to shrink "
                                        "S-dominated radii; S = 120 here)",
    ("rage", "seeds_differ"): "RAGE's first round is fixed by the XY design (Fiez et al. 2019, Algorithm 1: "
                              "no data before it) and the easy and small-gap linear instances end in that "
                              "round: the same path for every seed by construction",
}
# Seconds per run on a loaded 2-core machine: lingape-oracle 5-30 ms a round (and it does not
# stop, see XFAIL: small budget); SAQM, SA-FOA, XY-adaptive several seconds a run. In the
# default suite these run only the cheap checks; everything runs under the slow marker.
BUDGET = {"lingape-oracle": 200}
# Settings given to a solver in these tests: lingape-oracle needs S on Gaussian full-bandit
# problems (issue 12a); 120 bounds ||theta||_2 on every full-bandit case (110 for the offset).
SETTINGS: dict = {"lingape-oracle": {"S": 120.0}}
HEAVY = {"lingape-oracle", "saqm", "sa-foa", "xy-adaptive"}
HEAVY_FAST = {"easy", "settings_unchanged", "bad_input", "wrong_family"}
STAT = [c for c in CHECKS if c == "easy" or c.startswith("adversarial_")] + ["adversarial_order"]
OTHER = [c for c in CHECKS if c not in STAT]
# One run per case of these in the default suite (the other cases: slow suite).
FAST_STAT = {"easy", "adversarial_offset", "adversarial_noise_scale", "adversarial_exact_tie", "adversarial_order"}
# Runs per case in the slow suite, by family (larger counts: benchmarks/check_solver_counts.py,
# table in docs/guide/plugins.md).
SLOW_RUNS = {"lingape-oracle": 1, "saqm": 3, "sa-foa": 3, "lil-ucb": 5, "xy-adaptive": 3,
             "track-and-stop": 3, "top-two": 3, "fw-sampling": 3, "comb-game": 3}
SLOW_FAMILY_RUNS = {"semi-bandit": 10, "mips": 30, "linear": 5, "full-bandit": 3}
SKIP = {("track-and-stop", "adversarial_reward_range"): "about 5 minutes a run (Bernoulli divergence); "
        "measured by benchmarks/check_solver_counts.py"}


def _params(checks, *, slow):
    """(solver, check) pairs; ``slow=None``: the default-suite subset, marked as it needs."""
    out = []
    for name in PAC:
        for check in checks:
            if check == "adversarial_order" and solver_family(get_solver(name)) != "mips":
                continue
            marks = []
            if (name, check) in XFAIL:
                marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[name, check]))
            if (name, check) in SKIP:
                marks.append(pytest.mark.skip(reason=SKIP[name, check]))
            if slow or (name in HEAVY and check not in HEAVY_FAST):
                marks.append(pytest.mark.slow)
            out.append(pytest.param(name, check, marks=marks, id=f"{name}-{check}"))
    return out


def _run(name, check, n_runs, budget=30_000):
    budget = min(budget, BUDGET.get(name, budget))
    solver = get_solver(name)(**SETTINGS.get(name, {}))
    checks = dict(yield_solver_checks(solver, n_runs=n_runs, budget=budget, rng=12))
    if check not in checks:
        pytest.skip(f"{check} does not apply to the {solver_family(get_solver(name))} family")
    return checks[check]()


@pytest.mark.parametrize("name, check", _params(OTHER, slow=False))
def test_contract_checks(name, check):
    _run(name, check, n_runs=1)


@pytest.mark.parametrize("name, check", _params([c for c in STAT if c in FAST_STAT], slow=False))
def test_statistical_checks_fast(name, check):
    """One seeded run per case (the default suite): no wrong answer."""
    rep = _run(name, check, n_runs=1)
    assert rep.errors == 0


@pytest.mark.parametrize("name, check", _params(STAT, slow=True))
def test_statistical_checks_many_runs(name, check):
    """Several seeded runs per case: the Clopper-Pearson rule of check_solver (see its docstring)."""
    family = solver_family(get_solver(name))
    _run(name, check, n_runs=SLOW_RUNS.get(name, SLOW_FAMILY_RUNS[family]))


def test_every_pac_solver_has_a_family():
    assert set(PAC) >= {"lucb", "saqm", "lingape", "bounded-me"}
    for name in PAC:
        assert solver_family(get_solver(name)) in ("semi-bandit", "full-bandit", "linear", "mips")


def test_clopper_pearson_known_values():
    lo, up = clopper_pearson(0, 59)
    assert lo == 0.0 and up == pytest.approx(1 - 0.05 ** (1 / 59))
    assert up < 0.05 < clopper_pearson(0, 58)[1]
    lo, up = clopper_pearson(3, 10)
    assert 0.0 < lo < 0.3 < up < 1.0
    assert clopper_pearson(5, 5) == (pytest.approx(0.05 ** (1 / 5)), 1.0)
    with pytest.raises(InvalidParameterError, match="errors"):
        clopper_pearson(6, 5)


def test_check_solver_runs_selected_checks_and_rejects_unknown_ones():
    reports = check_solver("lucb", checks=["easy", "resume"], rng=3)
    assert set(reports) == {"easy", "resume"}
    assert reports["easy"].errors == 0 and reports["easy"].runs == 2
    with pytest.raises(InvalidParameterError, match="checks"):
        check_solver("lucb", checks=["no-such-check"])
    with pytest.raises(InvalidParameterError, match="regret"):
        check_solver("sub-elim")
    with pytest.raises(InvalidParameterError, match="solver"):
        check_solver(42)


# ====================================================================== a plug-in and broken variants
class _RRExploration(Exploration):
    """Round robin in a random order per round; anytime sub-Gaussian radii with a union
    bound over arms and times (delta_t = 6 delta / (pi^2 n t^2))."""

    def __init__(self, solver, problem, rng):
        super().__init__(solver, problem, rng)
        self.n = int(self.problem.n_arms)
        self.sigma = self._sigma()
        self.T = np.zeros(self.n, dtype=np.int64)
        self.S = np.zeros(self.n)

    def _sigma(self):
        return float(self.problem.noise.sigma)

    def _rng(self):
        return self.rng

    def _next_batch(self):
        return Batch(self._rng().permutation(self.n).astype(np.int64), np.ones(self.n, dtype=np.int64))

    def _radius(self):
        t = np.maximum(self.T, 1).astype(float)
        dt = 6.0 * self.solver.delta / (math.pi**2 * self.n * t**2)
        return self.sigma * np.sqrt(2.0 * np.log(2.0 / dt) / t)

    def _update(self, batch, sums):
        np.add.at(self.T, batch.arms, batch.counts)
        np.add.at(self.S, batch.arms, sums)
        self.rounds += 1
        mu = self.S / np.maximum(self.T, 1)
        r = self._radius()
        top = self.answer
        if (mu - r)[top].min() >= (mu + r)[~top].max() - self.solver.epsilon:
            self.stop("identified")

    @property
    def recommendation(self):
        mu = self.S / np.maximum(self.T, 1)
        m = np.zeros(self.n, dtype=bool)
        m[np.argsort(-mu, kind="stable")[: self.solver.K]] = True
        return m

    @property
    def pulls(self):
        return self.T

    def _extra_state(self):
        return {"T": self.T, "S": self.S}

    def _load_extra_state(self, state):
        self.n = int(self.problem.n_arms)
        self.sigma = self._sigma()
        self.T = np.asarray(state["T"], dtype=np.int64).copy()
        self.S = np.asarray(state["S"], dtype=float).copy()


class RoundRobin(Solver):
    """A correct plug-in (not registered): passes every check."""

    name = "test-round-robin"
    families = ("semi-bandit",)
    exploration_class = _RRExploration

    def __init__(self, K=1, *, delta=0.05, epsilon=0.0):
        from combex._validation import check_float, check_int, check_probability

        self.K = check_int(K, "K", low=1)
        self.delta = check_probability(delta, "delta")
        self.epsilon = check_float(epsilon, "epsilon", low=0.0)

    @property
    def tolerance(self):
        return self.epsilon

    def start(self, problem, *, rng=None):
        pb = getattr(problem, "problem", problem)
        if getattr(pb, "features", None) is not None or getattr(pb, "arm_type", "index") != "index":
            raise InvalidParameterError("RoundRobin takes semi-bandit problems (index arms without features).")
        return self.exploration_class(self, problem, rng)


def _broken(exploration_base, **solver_attrs):
    exp_cls = type("Broken" + exploration_base.__name__, (exploration_base,), {})
    return type("Broken", (RoundRobin,), {"exploration_class": exp_cls, **solver_attrs})


class _EarlyExp(_RRExploration):
    def _update(self, batch, sums):
        super()._update(batch, sums)
        self.stop("identified")  # answers after one look at each arm

    @property
    def recommendation(self):
        m = np.zeros(self.n, dtype=bool)
        m[: self.solver.K] = True  # and not even the best-looking arms
        return m


class _IgnoresRngExp(_RRExploration):
    def _rng(self):
        return np.random.default_rng()  # fresh OS entropy: not reproducible


class _NoValidationExp(_RRExploration):
    def _check_batch(self, batch):
        pass


class _LosesSumsExp(_RRExploration):
    def _extra_state(self):
        return {"T": self.T, "S": np.zeros_like(self.S)}  # forgets the rewards


class _FixedPathExp(_RRExploration):
    def _next_batch(self):
        return Batch(np.arange(self.n, dtype=np.int64), np.full(self.n, 50, dtype=np.int64))

    def _update(self, batch, sums):
        super()._update(batch, sums)
        if not self.done:
            self.stop("identified")  # always 50 pulls per arm, whatever the data


class _RelativeRadiusExp(_RRExploration):
    def _radius(self):  # "relative" precision: radii shrink with |mean|, unsound far from 0
        mu = self.S / np.maximum(self.T, 1)
        return super()._radius() / np.maximum(1.0, np.abs(mu))


class _CachingSolver(RoundRobin):
    def start(self, problem, *, rng=None):
        self.n_arms_seen = getattr(problem, "n_arms", None)  # state on the settings object
        return super().start(problem, rng=rng)


class _NoFamilyCheckSolver(RoundRobin):
    families = ()  # declares no families to the base class (which would check them) ...
    family = "semi-bandit"  # ... only to check_solver

    def start(self, problem, *, rng=None):  # runs on any problem
        return self.exploration_class(self, problem, rng)


def test_a_plugin_without_families_gets_a_clear_error():
    class NoFamily(RoundRobin):
        families = ()
        name = "test-no-family"

    with pytest.raises(InvalidParameterError, match="families"):
        check_solver(NoFamily())
    with pytest.raises(InvalidParameterError, match="instance"):
        check_solver(RoundRobin)


def test_reference_plugin_passes_every_check():
    reports = check_solver(RoundRobin(), rng=1, n_runs=2)
    assert set(reports) == set(CHECKS)
    assert all(r.errors == 0 for r in reports.values() if r is not None)


@pytest.mark.parametrize(
    "broken, check, match",
    [
        (_broken(_EarlyExp)(), "easy", "wrong answer"),
        (_broken(_RelativeRadiusExp)(), "adversarial_offset", "Clopper-Pearson"),
        (_broken(_LosesSumsExp)(), "resume", "resumed"),
        (_broken(_IgnoresRngExp)(), "reproducible", "same seeds"),
        (_broken(_FixedPathExp)(), "seeds_differ", "same sample path"),
        (_CachingSolver(), "settings_unchanged", "n_arms_seen"),
        (_broken(_NoValidationExp)(), "bad_input", "arm"),
        (_NoFamilyCheckSolver(), "wrong_family", "raised nothing"),
    ],
    ids=["easy", "adversarial", "resume", "reproducible", "seeds_differ", "settings_unchanged", "bad_input",
         "wrong_family"],
)
def test_each_check_can_fail(broken, check, match):
    with pytest.raises(AssertionError, match=match):
        check_solver(broken, checks=[check], rng=1, n_runs=5)

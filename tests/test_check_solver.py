"""combex.testing.check_solver over every registered PAC solver, and proof that each check
can fail (a deliberately broken solver per check, and built-in solvers with their stopping
threshold cut 10x)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from combex.exceptions import InvalidParameterError, NoiseScaleWarning
from combex.solvers import SOLVERS, Batch, Exploration, Solver, get_solver
from combex.testing import (
    CHECKS,
    FAST_RULE,
    SLOW_RULE,
    SequentialRule,
    broken_solver,
    check_solver,
    clopper_pearson,
    solver_family,
    yield_solver_checks,
)

get_solver("lucb")  # load the built-in families
PAC = sorted(n for n, c in SOLVERS.items() if c.contract == "pac" and not n.startswith("test-"))

# Known failures.
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
# problems (it refuses them without one); 120 bounds ||theta||_2 on every full-bandit case
# (110 for the offset).
SETTINGS: dict = {"lingape-oracle": {"S": 120.0}}
HEAVY = {"lingape-oracle", "saqm", "sa-foa", "xy-adaptive"}
HEAVY_FAST = {"easy", "settings_unchanged", "bad_input", "wrong_family"}
STAT = [c for c in CHECKS if c == "easy" or c.startswith("adversarial_")] + ["adversarial_order"]
OTHER = [c for c in CHECKS if c not in STAT and c != "understated_noise"]
# One run per case of these in the default suite (the other cases: slow suite).
FAST_STAT = {"easy", "adversarial_offset", "adversarial_noise_scale", "adversarial_exact_tie", "adversarial_order"}
# The slow suite runs check_solver's default sequential rule (at least 14 runs a case) on
# every case of the solvers whose 14 runs of all cases take about a minute or less; the
# others run fixed runs per case (their sequential-rule counts, 14 runs a case and more:
# benchmarks/check_solver_counts.py, table in docs/guide/plugins.md; each also has its
# many-run error-rate test in the file of its family).
SLOW_RUNS = {"lingape-oracle": 1, "saqm": 3, "sa-foa": 3, "xy-adaptive": 3, "track-and-stop": 3,
             "comb-game": 3, "exhaustive": 3, "fw-sampling": 3, "icb": 3, "lil-clucb": 3, "lil-ucb": 3,
             "lingame": 3, "top-two": 3, "xy-oracle": 3, "xy-static": 3, "oracle-tracking": 3, "oracle-sampler": 3}
SKIP = {("track-and-stop", "adversarial_reward_range"): "about 5 minutes a run (Bernoulli divergence); "
        "measured by benchmarks/check_solver_counts.py"}
# The solvers whose stopping threshold is cut in the broken-solver tests: one or more per
# family (semi-bandit / MAB, full-bandit, linear); those that run in a few seconds at the
# default settings run in the default suite.
BROKEN = {"top-two": "fast", "lucb": "fast", "lil-lucb": "fast", "icb": "fast", "lingape": "fast", "lingame": "fast"}
# The real solvers on the near tie at the default settings (the case that fails most
# broken copies): seconds on a loaded machine, so only the cheapest in the default suite.
REAL_NEAR_TIE_FAST = {"top-two", "lucb"}


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
def test_statistical_checks_at_the_default_settings(name, check):
    """check_solver's default sequential rule on every case (a few fixed runs for the
    solvers whose runs take seconds): see its docstring."""
    rep = _run(name, check, n_runs=SLOW_RUNS.get(name))
    assert rep.verdict in ("pass", "pass (max runs)", "not applicable", "")


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
    # the default sequential rule: 14 error-free runs pass delta = 0.05
    assert reports["easy"].errors == 0 and reports["easy"].runs == 14 and reports["easy"].verdict == "pass"
    assert reports["easy"].rule == "sequential"
    fixed = check_solver("lucb", checks=["easy"], rng=3, n_runs=2)["easy"]
    assert (fixed.runs, fixed.rule) == (2, "fixed")
    with pytest.raises(InvalidParameterError, match="checks"):
        check_solver("lucb", checks=["no-such-check"])
    with pytest.raises(InvalidParameterError, match="regret"):
        check_solver("sub-elim")
    with pytest.raises(InvalidParameterError, match="solver"):
        check_solver(42)
    with pytest.raises(InvalidParameterError, match="'n_runs' parameter of check_solver"):
        check_solver("lucb", n_runs=0)
    with pytest.raises(InvalidParameterError, match="'slow' parameter of check_solver"):
        check_solver("lucb", slow="yes")


# ====================================================================== the sequential rule
@pytest.mark.parametrize("rule", [FAST_RULE, SLOW_RULE], ids=["fast", "slow"])
@pytest.mark.parametrize("delta", [0.01, 0.05, 0.1])
def test_sequential_rule_error_probabilities_are_exact_and_within_walds_bounds(rule, delta):
    """Exact operating characteristic (dynamic programming over the error counts): a solver
    that errs with probability delta fails with probability at most alpha / (1 - beta) +
    alpha (Wald's bound plus the truncation's CP rule); one that errs with probability p1
    passes with probability at most beta / (1 - alpha) plus 0.02 lost to the truncation."""
    fail_at_delta, _ = rule.operating_characteristic(delta, delta)
    assert fail_at_delta <= rule.alpha / (1 - rule.beta) + rule.alpha
    fail_at_p1, _ = rule.operating_characteristic(delta, rule.p1(delta))
    assert 1 - fail_at_p1 <= rule.beta / (1 - rule.alpha) + 0.02
    # a solver that is never wrong passes after runs_to_pass runs, and no earlier
    assert rule.operating_characteristic(delta, 0.0) == (0.0, float(rule.runs_to_pass(delta)))
    n = rule.runs_to_pass(delta)
    assert rule.decide(0, n, delta) == "pass" and rule.decide(0, n - 1, delta) is None
    # the failure probability grows with the error rate
    fails = [rule.operating_characteristic(delta, p)[0] for p in (0.0, delta / 2, delta, 2 * delta, rule.p1(delta))]
    assert fails == sorted(fails)


def test_sequential_rule_by_hand():
    rule = SequentialRule(p1_floor=0.2, p1_factor=4.0, alpha=1e-3, beta=0.1, max_runs=100)
    assert rule == FAST_RULE
    assert rule.p1(0.01) == 0.2 and rule.p1(0.1) == pytest.approx(0.4) and rule.p1(0.5) == 0.75
    # L = e log(0.2 / 0.05) + (n - e) log(0.8 / 0.95); boundaries log(0.9 / 0.001) = 6.802, log(0.1 / 0.999) = -2.302
    assert rule.llr(5, 5, 0.05) == pytest.approx(5 * math.log(4))
    assert rule.decide(5, 5, 0.05) == "fail"  # 6.93 >= 6.80
    assert rule.decide(5, 6, 0.05) is None  # 6.93 - 0.172 = 6.76
    assert rule.runs_to_pass(0.05) == 14  # 2.302 / 0.1719 = 13.4
    # at 100 runs: the 99.9% Clopper-Pearson lower bound is 0.0479 with 13 errors, 0.0541 with 14
    assert rule.truncated_fails(14, 100, 0.05) and not rule.truncated_fails(13, 100, 0.05)


# ====================================================================== broken thresholds
def _broken_params():
    return [pytest.param(n, marks=[] if speed == "fast" else [pytest.mark.slow], id=n) for n, speed in BROKEN.items()]


@pytest.mark.parametrize("name", _broken_params())
def test_check_solver_at_its_defaults_fails_a_solver_whose_threshold_is_cut_10x(name):
    """A built-in solver with its stopping threshold (or confidence radius) multiplied by
    0.1 fails check_solver at the default settings, on a statistical case (the table:
    benchmarks/check_solver_counts.py --broken)."""
    bad = broken_solver(name, 0.1)
    assert bad.name == name and bad.broken_factor == 0.1
    with pytest.raises(AssertionError, match=r"^\[(easy|adversarial_\w+)\] .*wrong answer") as info:
        check_solver(bad)
    rep = info.value.__cause__.report
    assert rep.verdict == "fail" and rep.errors >= 3 and rep.runs <= FAST_RULE.max_runs


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in REAL_NEAR_TIE_FAST else [pytest.mark.slow], id=n)
                                  for n in BROKEN])
def test_the_real_solver_passes_the_near_tie_its_broken_copy_fails(name):
    rep = check_solver(name, checks=["adversarial_near_tie"])["adversarial_near_tie"]
    assert rep.verdict == "pass" and rep.errors == 0 and rep.epsilon == 0.0


def test_broken_solver_factor_one_keeps_the_runs_and_bad_input_is_refused():
    from combex.environments import GaussianArms

    env = GaussianArms([1.0, 0.9, 0.0], sigma=0.5, rng=1)
    for name in ("top-two", "lucb", "lil-randlucb"):
        a = get_solver(name)().run(env.spawn(2), rng=3)
        b = broken_solver(name, 1.0).run(env.spawn(2), rng=3)
        assert (a.samples, np.asarray(a.answer).tolist()) == (b.samples, np.asarray(b.answer).tolist())
        c = broken_solver(name, 0.1).run(env.spawn(2), rng=3)
        assert c.samples < a.samples / 10
    with pytest.raises(InvalidParameterError, match="'factor' parameter of broken_solver"):
        broken_solver("lucb", 0.0)
    with pytest.raises(InvalidParameterError, match="'solver' parameter of broken_solver"):
        broken_solver("lil-ucb")  # its stopping rule counts samples: no threshold to cut
    with pytest.raises(InvalidParameterError, match="'solver' parameter of broken_solver"):
        broken_solver("rage")


@pytest.mark.slow
def test_the_slow_rule_fails_a_milder_cut():
    """LUCB with its radius multiplied by 0.2 errs on the near tie with probability about
    0.14 at delta = 0.05 (16 wrong in 111 decided runs of the many-run rule, measured; a
    stop waits for 5 residual degrees of freedom of the declared scale, which removes the
    earliest wrong stops, so a milder cut errs too rarely to tell): the default rule (little
    power there) passes it on these seeds, the many-run rule fails it; both pass the real
    LUCB. (LUCB's radius or Top-Two's threshold merely halved still keep delta = 0.05 there.)"""
    rep_real = check_solver("lucb", checks=["adversarial_near_tie"], slow=True)["adversarial_near_tie"]
    assert rep_real.verdict == "pass" and rep_real.runs == SLOW_RULE.runs_to_pass(0.05)
    bad = broken_solver("lucb", 0.2)
    assert check_solver(bad, checks=["adversarial_near_tie"])["adversarial_near_tie"].verdict.startswith("pass")
    with pytest.raises(AssertionError, match="near_tie"):
        check_solver(bad, checks=["adversarial_near_tie"], slow=True)


# ====================================================================== the declared noise scale
@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if n in HEAVY else [], id=n) for n in PAC])
def test_understated_noise_is_flagged_or_refused(name):
    rep = _run(name, "understated_noise", n_runs=None, budget=200_000)
    if not rep.applicable:
        pytest.skip(rep.note)
    assert rep.verdict == "pass"


def test_understated_noise_does_not_apply_without_a_declared_scale():
    rep = check_solver("bounded-me", checks=["understated_noise"])["understated_noise"]
    assert not rep.applicable and "reward lists" in rep.note and rep.runs == 0
    uv = get_solver("top-two")(divergence="unknown-variance")
    rep = check_solver(uv, checks=["understated_noise"])["understated_noise"]
    assert not rep.applicable and "estimates the noise scale" in rep.note


# ====================================================================== a plug-in and broken variants
class _RRExploration(Exploration):
    """Round robin in a random order per round; anytime sub-Gaussian radii with a union
    bound over arms and times (delta_t = 6 delta / (pi^2 n t^2)). It tests the declared noise
    scale too: under Gaussian rewards of that scale the within-arm sum of squares over
    sigma^2 is chi-square with sum(T_i - 1) degrees of freedom; the test at round r has
    level 6 * 0.01 / (pi^2 r^2) (a union over the rounds), and it stops only once every arm
    has two rewards (something to test)."""

    def __init__(self, solver, problem, rng):
        super().__init__(solver, problem, rng)
        self.n = int(self.problem.n_arms)
        self.sigma = self._sigma()
        self.T = np.zeros(self.n, dtype=np.int64)
        self.S = np.zeros(self.n)
        self.Q = np.zeros(self.n)  # sums of squared rewards (of squared batch sums / counts)
        self.noise_rejected = False

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

    def _noise_test(self):
        from scipy.stats import chi2

        df = int(np.maximum(self.T - 1, 0).sum())
        if self.noise_rejected or df < 1:
            return
        within = float((self.Q - self.S**2 / np.maximum(self.T, 1)).sum())
        level = 6.0 * 0.01 / (math.pi**2 * self.rounds**2)
        if within / self.sigma**2 > chi2.isf(level, df):
            self.noise_rejected = True
            warnings.warn("the rewards contradict the declared noise scale", NoiseScaleWarning, stacklevel=2)

    def _update(self, batch, sums):
        sums = np.asarray(sums, dtype=float)
        np.add.at(self.T, batch.arms, batch.counts)
        np.add.at(self.S, batch.arms, sums)
        np.add.at(self.Q, batch.arms, sums**2 / batch.counts)
        self.rounds += 1
        self._noise_test()
        mu = self.S / np.maximum(self.T, 1)
        r = self._radius()
        top = self.answer
        if self.T.min() >= 2 and (mu - r)[top].min() >= (mu + r)[~top].max() - self.solver.epsilon:
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

    def _info(self):
        return {"noise_check": {"rejected": self.noise_rejected}}

    def _extra_state(self):
        return {"T": self.T, "S": self.S, "Q": self.Q, "noise_rejected": self.noise_rejected}

    def _load_extra_state(self, state):
        self.n = int(self.problem.n_arms)
        self.sigma = self._sigma()
        self.T = np.asarray(state["T"], dtype=np.int64).copy()
        self.S = np.asarray(state["S"], dtype=float).copy()
        self.Q = np.asarray(state.get("Q", np.zeros(self.n)), dtype=float).copy()
        self.noise_rejected = bool(state.get("noise_rejected", False))


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


class _TrustsNoiseExp(_RRExploration):
    # claims a test of its own (so the base exploration's test is off) and never runs it
    _own_noise_check = True

    def _noise_test(self):
        pass  # takes the declared noise scale on trust


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


@pytest.mark.parametrize("n_runs", [pytest.param(2, id="2-runs"), pytest.param(None, marks=pytest.mark.slow, id="default")])
def test_reference_plugin_passes_every_check(n_runs):
    reports = check_solver(RoundRobin(), rng=1, n_runs=n_runs)  # default: the sequential rule (about 80 s)
    assert set(reports) == set(CHECKS)
    stat = {k: r for k, r in reports.items() if r is not None and k != "understated_noise"}
    assert all(r.errors == 0 for r in stat.values())
    if n_runs is None:
        assert all(r.verdict == "pass" for r in stat.values())
    noise = reports["understated_noise"]  # every run flagged the tenfold noise
    assert noise.verdict == "pass" and noise.runs == 3 and noise.refused == 0


def test_the_sequential_rule_fails_an_unsound_plugin():
    with pytest.raises(AssertionError, match=r"\[adversarial_offset\] .*sequential test of H0 p = 0.05 against H1 "
                                             r"p = 0.2: log-likelihood ratio") as info:
        check_solver(_broken(_RelativeRadiusExp)(), checks=["adversarial_offset"], rng=1)
    rep = info.value.__cause__.report
    assert rep.verdict == "fail" and rep.errors >= 5 and rep.runs <= 20


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
        (_broken(_TrustsNoiseExp)(), "understated_noise", "neither refused nor flagged"),
    ],
    ids=["easy", "adversarial", "resume", "reproducible", "seeds_differ", "settings_unchanged", "bad_input",
         "wrong_family", "understated_noise"],
)
def test_each_check_can_fail(broken, check, match):
    with pytest.raises(AssertionError, match=match):
        check_solver(broken, checks=[check], rng=1)


def test_the_fixed_run_rule_fails_an_unsound_plugin():
    with pytest.raises(AssertionError, match=r"\[adversarial_offset\] .*95% Clopper-Pearson bounds of the error rate"):
        check_solver(_broken(_RelativeRadiusExp)(), checks=["adversarial_offset"], rng=1, n_runs=20)


# ====================================================================== families at start
@pytest.mark.parametrize("solver,instance", [
    ("lil-randlucb", "soare"),
    ("saqm", "jiang-1sparse"),
    ("lingape", "jiang-1sparse"),
    ("icb", "soare"),
    ("lingape-oracle", "jiang-1sparse"),
])
def test_wrong_family_is_refused_at_start(solver, instance):
    # Regression test: start() refuses a problem of a family the solver does not take
    # (naming the families), instead of running on it.
    from combex.exceptions import CombexError
    from combex.experiments import make_instance

    env = make_instance(instance, rng=0)
    with pytest.raises(CombexError, match="'problem' parameter.*instance families"):
        get_solver(solver)().start(env.problem, rng=0)

"""An answer with its confidence at any moment: ``delta_achieved`` (an anytime-valid
p-value for "the leader is epsilon-good"), the statistic against its threshold, the leader
and its challenger, an estimate of the evaluations left, runs stopped at a budget, and the
arms proposed to concurrent assistants (``Exploration.propose``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist

from combex.environments import BestKGaussianArms, FullBandit, GaussianArms, canonical, kuroki_synthetic
from combex.solvers import get_solver
from combex.solvers._bisect import LOG_LEVEL_FLOOR, stopping_level


def _cp_upper(k: int, n: int, level: float = 0.99) -> float:
    return 1.0 if k >= n else float(beta_dist.ppf(level, k + 1, n - k))


def test_delta_achieved_at_the_stop_is_at_most_delta():
    for name in ("top-two", "track-and-stop", "fw-sampling", "comb-game"):
        r = get_solver(name)(delta=0.05).run(GaussianArms([1.0, 0.6, 0.2], rng=0), rng=1)
        assert r.status == "identified"
        assert 0 < r.certificate["delta_achieved"] <= 0.05, name


@pytest.mark.parametrize("name, env_kw, kw", [
    ("top-two", {"kind": "bernoulli"}, {}),
    ("top-two", {"kind": "gaussian"}, {"divergence": "unknown-variance"}),
    ("fw-sampling", {"kind": "gaussian"}, {"K": 2, "epsilon": 0.1}),  # a class listing its members
    ("track-and-stop", {"kind": "gaussian"}, {"threshold": "valid-kk"}),
    ("comb-game", {"kind": "gaussian"}, {"K": 2, "divergence": "unknown-variance"}),
    ("top-two", {"kind": "teams"}, {"epsilon": 0.5}),  # the linear loop (its noise level unknown)
])
def test_reading_delta_achieved_during_a_run_never_changes_it(name, env_kw, kw):
    """``delta_achieved`` (and ``would_stop`` at other levels, as the plan reads them) probes
    the rule at other error probabilities on the exploration itself; reading it after every
    sample must leave the run exactly as without reading (a study reads it after every
    score). The same seeds give the same samples, answer and statistic."""
    from combex.environments import BernoulliArms

    means = [0.8, 0.6, 0.5, 0.3, 0.2]

    def loop(read: bool):
        if env_kw["kind"] == "teams":
            env = FullBandit([1.0, 0.8, 0.6, 0.3, 0.2, 0.1], k=2, noise="gaussian", sigma=0.5,
                             noise_level="observation", noise_known=False, rng=3)
        else:
            env = (BernoulliArms(means, rng=3) if env_kw["kind"] == "bernoulli"
                   else GaussianArms(means, sigma=0.5, rng=3))
        exp = get_solver(name)(delta=0.05, **kw).start(env.problem, rng=1)
        levels = []
        while not exp.done and exp.samples < 20_000:
            b = exp.ask()
            exp.tell_batch(b, env.pull_many(b.arms, b.counts))
            if read and not exp.done and exp.rounds % 3 == 0:
                levels.append(exp.delta_achieved())
                exp.would_stop(0.5)
        return exp.samples, np.asarray(exp.answer).tolist(), exp.status, exp.stopping_statistic(), levels

    plain, read = loop(False), loop(True)
    assert read[:4] == plain[:4] and plain[2] == "identified"
    assert any(x is not None and x < 1 for x in read[4])  # the reading did probe levels below 1


def test_with_unknown_noise_delta_achieved_reaches_delta_only_when_the_rule_holds():
    """The lab case with the noise level unknown: at every told session near the stop,
    ``delta_achieved <= delta`` exactly when the rule the run applies holds (the variance
    bound the rule reuses between recomputations is the one ``delta_achieved`` reads; a
    fresh bound there once read 0.098 at delta 0.1 while the study kept running)."""
    from combex.environments._instances_full import lab_teams

    delta, checked = 0.1, 0
    for seed in range(8):
        env = lab_teams(rng=seed)
        exp = get_solver("top-two")(delta=delta, epsilon=5.0).start(env.problem, rng=seed)
        while not exp.done and exp.samples < 4000:
            batch = exp.ask()
            exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
            stat, thr = exp.stopping_statistic()
            if math.isfinite(stat) and stat > 0.8 * thr:
                da = exp.delta_achieved()
                assert (da <= delta) == exp.done, (exp.samples, da, stat, thr, exp.status)
                checked += 1
        assert exp.status == "identified"
    assert checked > 50



@settings(max_examples=300, deadline=None)
@given(boundary=st.floats(-720.0, 5.0), guess=st.one_of(st.none(), st.floats(-800.0, 50.0)))
def test_stopping_level_is_the_smallest_level_up_to_its_tolerance(boundary, guess):
    """Whatever the guess (none, right, wrong, out of range), the level returned holds, and
    the rule fails a factor exp(atol) below it (or it is 1 / the floor)."""
    calls = []

    def would_stop(x):
        calls.append(x)
        return math.log(x) >= boundary

    atol = 5e-3
    got = stopping_level(would_stop, atol=atol, max_iter=40, guess=guess)
    floor = math.exp(LOG_LEVEL_FLOOR)
    if boundary > 0:
        assert got == 1.0
    elif boundary <= LOG_LEVEL_FLOOR:
        assert got == floor
    else:
        assert would_stop(got) and (got == floor or not would_stop(got * math.exp(-atol)))
    if guess is not None and boundary < 0 and abs(guess - boundary) < 0.5 * atol and guess > LOG_LEVEL_FLOOR + atol:
        assert len(calls) <= 3 + 2  # 1.0, the two sides of the guess (+ the asserts' two calls)


def test_delta_achieved_from_its_guess_equals_the_bisection():
    """The GLR solvers' delta_achieved starts from log(delta) - margin; a pure bisection of
    the same rule agrees within its tolerance, mid-run and at the stop."""
    for name in ("top-two", "fw-sampling"):
        for budget in (300, None):
            exp = get_solver(name)(delta=0.05).start(GaussianArms([1.0, 0.6, 0.2]).problem, rng=1)
            env = GaussianArms([1.0, 0.6, 0.2], rng=0)
            while not exp.done and (budget is None or exp.samples < budget):
                b = exp.ask()
                exp.tell_batch(b, env.pull_many(b.arms, b.counts))
            fast = exp.delta_achieved()
            slow = stopping_level(exp.would_stop, atol=5e-3, max_iter=30)
            assert exp.would_stop(fast) and abs(math.log(fast) - math.log(slow)) <= 5e-3 + 1e-12, (name, budget)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(20, 1500),
       case=st.sampled_from([({}, 5), ({"K": 2}, 6), ({"decision_class": "matroid"}, 6)]))
def test_delta_achieved_in_closed_form_is_the_smallest_level_where_the_rule_holds(seed, budget, case):
    """Pairs with a known Gaussian scale: delta_achieved = max_ij m exp(h_i + h_j - Z_ij / r_ij),
    no bisection; the rule holds there and fails 0.1% below (unless capped at 1)."""
    from combex.oracles import PartitionMatroid

    kw, n = case
    if kw.get("decision_class") == "matroid":
        kw = {"decision_class": PartitionMatroid([0, 0, 0, 1, 1, 1], [1, 1], base=True)}
    env = GaussianArms(np.linspace(1.0, 0.0, n), sigma=0.5, rng=seed)  # about 40% of the cases below 1
    exp = get_solver("top-two")(delta=0.05, **kw).start(env.problem, rng=seed)
    while not exp.done and exp.samples < budget:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    assert exp.stopping_threshold.name == "valid:pairs-mixture"
    d = exp.delta_achieved()
    assert 0 < d <= 1
    if d < 1:  # 1: the rule does not hold even at level 1
        assert exp.would_stop(d) and not exp.would_stop(d * 0.999)
    slow = stopping_level(exp.would_stop, atol=5e-3, max_iter=40)
    assert abs(math.log(d) - math.log(slow)) <= 5e-3 + 1e-9


PEEKS = {int(1.15 ** k) for k in range(20, 60)}


@pytest.mark.parametrize("make,runs", [
    (lambda s: (GaussianArms([0.6, 0.4, 0.0], rng=s), get_solver("top-two")(delta=0.01), 0.0), 40),
    pytest.param(lambda s: (GaussianArms([0.6, 0.4, 0.0], rng=s), get_solver("top-two")(delta=0.01), 0.0), 120,
                 marks=pytest.mark.slow),
    pytest.param(lambda s: (GaussianArms([0.6, 0.4, 0.0], sigma=1.0, rng=s),
                            get_solver("top-two")(delta=0.01, divergence="unknown-variance"), 0.0), 50,
                 marks=pytest.mark.slow),
    pytest.param(lambda s: (FullBandit([3.0, 2.6, 2.0, 1.0], k=2, sigma=2.0, noise_level="observation", rng=s),
                            get_solver("top-two")(delta=0.01), 0.0), 60, marks=pytest.mark.slow),
], ids=["known", "known-many", "unknown-variance", "team"])
def test_delta_achieved_is_an_anytime_valid_p_value(make, runs):
    """Peeking is allowed: stop the first time delta_achieved <= x (x = 0.3, far above the
    solver's delta, so its own rule does not end the run first), looking at a geometric grid of
    times, and return the leader: the answer is wrong with probability <= x (Clopper-Pearson
    99%). A p-value valid only at a fixed time would not survive this optional
    stopping."""
    x = 0.3
    wrong = n = 0
    for seed in range(runs):
        env, solver, eps = make(seed)

        def peek(exp):
            if exp.samples not in PEEKS:
                return
            d = exp.delta_achieved()
            if d is not None and d <= x:
                exp.stop("budget_exhausted", "peeked")

        r = solver.run(env, rng=10_000 + seed, budget=20_000, callback=peek)
        if r.status == "budget_exhausted" and r.message != "peeked":
            continue  # never reached x: no answer returned under the peeking rule
        n += 1
        wrong += not env.is_correct(r.answer, eps)
    assert n >= 0.6 * runs
    assert wrong / n <= x and float(beta_dist.ppf(0.01, max(wrong, 1), n - wrong + 1)) <= x, (wrong, n)


def test_budget_run_reports_its_confidence():
    """A run that hits its budget returns the leader with status budget_exhausted and the
    delta it achieved (above the solver's delta, else it would have stopped)."""
    env = GaussianArms([0.2, 0.1, 0.0], rng=0)
    r = get_solver("top-two")(delta=0.01).run(env, rng=1, budget=300)
    assert r.status == "budget_exhausted" and r.samples == 300
    d = r.certificate["delta_achieved"]
    assert 0.01 < d <= 1.0
    exp = get_solver("top-two")(delta=0.01).start(env.problem, rng=1)
    while exp.samples < 300:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    exp.stop("budget_exhausted", "budget")
    assert exp.progress()["evaluations_left"] > 0  # not "0 left": a certified answer still needs more
    team = FullBandit([3.0, 2.5, 2.0, 1.0, 0.0], k=2, sigma=2.0, noise_level="observation", noise_known=False,
                      rng=0)
    r = get_solver("top-two")(delta=0.01, epsilon=0.1).run(team, rng=1, budget=140)
    assert r.status == "budget_exhausted" and r.samples == 140
    assert r.certificate["divergence"] == "unknown-variance" and 0.01 < r.certificate["delta_achieved"] <= 1.0


def test_progress_is_never_nan_after_the_first_check():
    env = FullBandit([3.0, 2.5, 2.0, 1.0, 0.0], k=2, sigma=1.0, noise_level="observation", rng=0)
    seen = []

    def look(exp):
        seen.append(exp.progress())

    r = get_solver("top-two")(delta=0.05, epsilon=0.1).run(env, rng=1, callback=look)
    assert r.status == "identified" and seen
    after = [p for p in seen if p["samples"] >= 40]
    for p in after:
        assert math.isfinite(p["statistic"]) and math.isfinite(p["threshold"])
        assert p["stops_when"] == "statistic > threshold"
        assert isinstance(p["leader"], list) and len(p["leader"]) == 2
        assert p["challenger"] is not None and p["challenger"] != p["leader"]
        assert p["delta_achieved"] is not None and 0 < p["delta_achieved"] <= 1
    left = [p["evaluations_left"] for p in after if p["evaluations_left"] is not None]
    assert left and left[-1] < left[0]
    env = GaussianArms([1.0, 0.6, 0.2], rng=0)
    seen.clear()
    get_solver("top-two")(delta=0.05).run(env, rng=1, callback=look)
    p = seen[-1]
    assert p["stops_when"] == "statistic >= threshold" and p["leader"] == 0 and p["challenger"] in (1, 2)
    assert math.isfinite(p["statistic"]) and p["evaluations_left"] is not None


_CORE_CASES = {
    "top-two": lambda: GaussianArms([1.0, 0.5, 0.2], rng=0),
    "track-and-stop": lambda: GaussianArms([1.0, 0.5, 0.2], rng=0),
    "lucb": lambda: BestKGaussianArms([1.0, 0.5, 0.2], K=1, rng=0),
    "lucb++": lambda: BestKGaussianArms([1.0, 0.5, 0.2], K=1, rng=0),
    "lil-ucb": lambda: BestKGaussianArms([1.0, 0.5, 0.2], K=1, rng=0),
    "lil-lucb": lambda: BestKGaussianArms([1.0, 0.5, 0.2], K=1, rng=0),
    "lingame": lambda: canonical(3, 1.0, rng=0),
    "lingape": lambda: canonical(3, 1.0, rng=0),
    "xy-static": lambda: canonical(3, 1.0, rng=0),
    "xy-adaptive": lambda: canonical(3, 1.0, rng=0),
    "rage": lambda: canonical(3, 1.0, rng=0),
    "saqm": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=0),
    "sa-foa": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=0),
    "icb": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=0),
    "exhaustive": lambda: kuroki_synthetic(n=5, k=2, gap=0.8, sigma=0.3, rng=0),
    "sequential-halving": lambda: GaussianArms([1.0, 0.5, 0.2], rng=0),
}


@pytest.mark.parametrize("name", sorted(_CORE_CASES))
def test_every_certificate_says_its_statistic_threshold_and_direction(name):
    """The certificate core of every result: ``statistic`` and ``threshold_value`` (nan only
    where the rule has none) with ``stops_when``; a run that identified meets its own rule
    there, and ``progress()`` reports the same pair."""
    import operator

    env = _CORE_CASES[name]()
    solver = get_solver(name)(**({"budget": 300} if name == "sequential-halving" else {}))
    seen = []
    res = solver.run(env, rng=1, budget=None if name == "sequential-halving" else 200_000,
                     callback=lambda exp: seen.append(exp.progress()))
    c = res.certificate
    assert {"statistic", "threshold_value", "stops_when"} <= set(c)
    rule = c["stops_when"]
    ops = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
    parts = rule.split()
    if len(parts) == 3 and parts[0] == "statistic" and parts[2] == "threshold":
        assert res.status == "identified"
        if math.isfinite(c["statistic"]):  # a rule can also end on a structural event (one arm left)
            assert ops[parts[1]](c["statistic"], c["threshold_value"]), (name, c)
        finite = [p for p in seen if math.isfinite(p["statistic"])]
        assert finite and all(p["stops_when"] == rule and math.isfinite(p["threshold"]) for p in finite)
    else:
        assert math.isnan(c["statistic"]) and math.isnan(c["threshold_value"])


@pytest.mark.parametrize("make", [
    lambda: (get_solver("top-two")(delta=0.05), GaussianArms([1.0, 0.8, 0.6, 0.4], rng=0)),
    lambda: (get_solver("top-two")(delta=0.05, epsilon=0.1),
             FullBandit([3.0, 2.5, 2.0, 1.0, 0.0], k=2, sigma=1.0, noise_level="observation", rng=0)),
], ids=["best-arm", "team"])
def test_propose_follows_the_rule_and_changes_nothing(make):
    """Arms for concurrent assistants: n arms from the sampling rule applied to the told plus
    pending counts; the exploration is unchanged; the same rng gives the same arms."""
    solver, env = make()
    exp = solver.start(env.problem, rng=0)
    for _ in range(60):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    before = exp.state_dict()
    a1 = exp.propose(5, pending=[], rng=np.random.default_rng(3))
    a2 = exp.propose(5, pending=[], rng=np.random.default_rng(3))
    assert len(a1) == 5 and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a1, a2))
    after = exp.state_dict()
    assert before["samples"] == after["samples"] and before["rng"] == after["rng"]
    np.testing.assert_array_equal(before["extra"]["T"], after["extra"]["T"])
    # pending evaluations change what is proposed: the rule sees them as pulled
    keys = {np.asarray(a).tobytes() for a in a1}
    pend = exp.propose(8, pending=a1, rng=np.random.default_rng(3))
    assert len(pend) == 8
    assert len({np.asarray(a).tobytes() for a in a1 + pend}) >= 2 or len(keys) >= 2


# ---------------------------------------------------------------------- planning a study
def test_plan_reports_sessions_bound_and_budget_errors():
    """combex.studies.plan: one run per seed serves every delta of the grid (larger deltas
    stop no later), the lower bound is below the sessions, budgets report an error rate and
    the share of runs certified by then at the study's delta."""
    import combex.studies as cs

    p = cs.plan(workers=["a", "b", "c", "d", "e", "f"], team_size=2, gap=10.0, noise_sd=5.0, delta=0.1,
                epsilon=5.0, epsilons=(5.0,), budgets=(20, 400), runs=3, rng=0)
    rows = p.summary()
    assert [r["delta"] for r in rows] == [0.2, 0.1, 0.05]
    for r in p.runs:
        stops = [s for s in r["stop"] if s is not None]
        assert stops == sorted(stops)  # larger delta, earlier stop
    assert all(0 < r["T_star_log"] < r["median"] for r in rows)
    berr = p.budget_errors()
    assert [b["budget"] for b in berr] == [20, 400] and berr[1]["error"] == 0.0
    stops = [r["stop"][1] for r in p.runs]  # at the study's delta, 0.1
    assert [b["certified"] for b in berr] == [sum(s is not None and s <= b for s in stops) / 3 for b in (20, 400)]
    assert berr[0]["certified"] == 0.0 and berr[1]["certified"] > 0
    text = p.table()
    assert "Sessions needed to stop" in text and "T* log(1/d)" in text and "In short (delta 0.1, epsilon 5):" in text
    assert "At a fixed budget: error" in text and "certified (the study's rule at delta 0.1 held by then" in text
    fig = p.figure()
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_ylabel() == "sessions to the stop"


def test_the_plan_of_random_design_lists_its_checks():
    """random-design checks at set points (10 n, then 20% more each): the plan's summary
    lists them up to past the budgets and its 90% sessions, for choosing a budget on one;
    a plan without random-design does not."""
    import combex.studies as cs

    kw = dict(workers=["a", "b", "c", "d", "e", "f"], team_size=2, gap=10.0, noise_sd=5.0, delta=0.1, epsilon=5.0,
              deltas=(0.1,), epsilons=(5.0,), budgets=(100,), runs=2, rng=0)
    text = cs.plan(solvers=["random-design"], **kw).table()
    line = next(x for x in text.splitlines() if x.startswith("  random-design checks its rule after "))
    assert line.startswith("  random-design checks its rule after 60, 72, 87, 104, 125, ")
    assert line.endswith("... sessions: give it a budget on one of these (the sessions after the last check before "
                         "a budget cannot certify).")
    assert "checks its rule" not in cs.plan(solvers=["top-two"], **kw).table()


def test_plan_bad_input_is_a_clear_error():
    import combex.studies as cs
    from combex.exceptions import InvalidParameterError

    for kwargs, name in [({"team_size": 12}, "team_size"), ({"qualities": [1, 2]}, "qualities"),
                         ({"noise_sd": 0.0}, "noise_sd"), ({"solvers": ("icb",)}, "solvers"),
                         ({"score_range": (5, 1)}, "score_range"), ({"delta": 1.5}, "delta")]:
        with pytest.raises(InvalidParameterError, match=f"'{name}'"):
            cs.plan(**kwargs, runs=1)


def test_combex_plan_command(tmp_path, capsys):
    import json

    from combex.cli import main

    out = tmp_path / "plan.png"
    assert main(["plan", "--workers", "6", "--team-size", "2", "--gap", "10", "--noise-sd", "5", "--epsilons", "5",
                 "--budget", "30", "--runs", "2", "--figure", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["setting"]["team_size"] == 2 and len(doc["summary"]) == 3 and doc["budgets"][0]["budget"] == 30
    assert out.exists() and out.stat().st_size > 1000
    assert main(["plan", "--budget", "1.5", "--runs", "1"]) == 2


def test_the_plan_figure_draws_every_series_with_one_delta_too():
    """One delta (the guide's plan): each series is a point with its 10-90% bar (side by side)
    and the bound a bar-shaped marker, once per epsilon (a dashed line through one point
    draws nothing), each budget dotted and labelled."""
    import matplotlib

    import combex.studies as cs

    matplotlib.use("Agg")
    p = cs.plan(workers=6, team_size=2, gap=10, noise_sd=5, delta=0.1, epsilon=5, deltas=(0.1,),
                epsilons=(5, 10), budgets=(30,), runs=2, rng=0)
    ax = p.figure().axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["T* log(1/delta), epsilon 5", "T* log(1/delta), epsilon 10", "budgets",
                      "top-two, epsilon 5 (10-90%)", "top-two, epsilon 10 (10-90%)"]
    assert len(ax.containers) == 2  # the error bars, side by side
    xs = [c.lines[0].get_xdata()[0] for c in ax.containers]
    assert xs[0] < 0.1 < xs[1]
    bounds = [ln for ln in ax.lines if ln.get_marker() == "_" and ln.get_label().startswith("T*")]
    assert len(bounds) == 2 and all(len(ln.get_xdata()) == 1 for ln in bounds)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.1"]
    assert [t.get_text() for t in ax.texts] == ["budget 30"]  # each budget line says which
    # two solvers: one bound per epsilon (the bound does not depend on the solver)
    p = cs.plan(workers=6, team_size=2, gap=10, noise_sd=5, delta=0.1, epsilon=5, deltas=(0.1,),
                epsilons=(5,), budgets=(30,), runs=1, rng=0, solvers=("top-two", "random-design"))
    labels = [t.get_text() for t in p.figure().axes[0].get_legend().get_texts()]
    assert labels.count("T* log(1/delta), epsilon 5") == 1 and len(labels) == 4


def test_evaluations_left_follows_the_ratio_over_the_last_half_of_the_run():
    """samples_left with the ratio statistic / threshold at about t / 2: (1 - z / beta) /
    rate; the trace keeps a point when the samples grew by 5% and finds the one at or
    before t / 2; a ratio that did not grow falls back to the rate since the start."""
    from combex.solvers._bisect import ProgressTrace, samples_left

    tr = ProgressTrace()
    for t in range(1, 2001):
        tr.record(t, 0.001 * t, 10.0)  # the ratio grows by 1e-4 a sample
    assert all(b >= 1.05 * a for a, b in zip(tr.t, tr.t[1:])) and len(tr.t) < 200
    th, r = tr.at_half(2000.0)
    assert th <= 1000 and th >= 1000 / 1.05 and r == pytest.approx(th * 1e-4)
    left = samples_left(2.0, 10.0, 2000.0, since=(th, r))
    assert left == pytest.approx((1 - 0.2) / 1e-4)  # 8,000 more at the same rate
    assert samples_left(2.0, 10.0, 2000.0, since=(th, 0.5)) == samples_left(2.0, 10.0, 2000.0)  # no growth
    assert samples_left(0.4, 10.0, 2000.0, since=(th, r)) is None  # under 5% of the threshold
    assert ProgressTrace().at_half(100.0) is None
    tr2 = ProgressTrace()
    tr2.load(tr.state())
    assert tr2.t == tr.t and tr2.r == tr.r
    tr2.load(None)
    assert tr2.t == []


@pytest.mark.parametrize("loop", ["index", "team"])
def test_evaluations_left_is_the_same_after_save_and_resume(loop):
    """The ratio's trace is part of the saved state: a resumed exploration (a study rebuilt
    from its snapshot) gives the estimate the running one gives."""
    if loop == "index":
        env = GaussianArms([1.0, 0.8, 0.6, 0.4], sigma=1.0, rng=0)
        solver = get_solver("top-two")(delta=0.01)
    else:
        from combex.environments._instances_full import lab_teams

        env = lab_teams(rng=0)
        solver = get_solver("top-two")(delta=0.1, epsilon=5.0)
    exp = solver.start(env.problem, rng=1)
    while exp.samples < 300 and not exp.done:
        batch = exp.ask()
        exp.tell_batch(batch, env.pull_many(batch.arms, batch.counts))
    left = exp.evaluations_left()
    assert left is not None and left > 0
    again = solver.resume(exp.state_dict(), env.problem)
    assert again.evaluations_left() == left

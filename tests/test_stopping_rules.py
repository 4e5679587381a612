"""The stopping rules of the GLR loop (``combex.solvers.stopping``): one object per way of
finding the binding alternative, chosen once for the structure, the reward model and the
threshold setting; ``check`` and the side-effect-free ``margin`` agree; the rule at another
level is another object on the same data."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from combex.environments import BernoulliArms, GaussianArms
from combex.solvers import (CertificateStop, GLRStoppingRule, MemberStop, PairStop, PairStopUnknownVariance,
                            TopTwo, glr_stopping_rule)

from _decision_classes import OracleOnly  # noqa: E402 (tests/)


MU = [1.0, 0.55, 0.5, 0.9, 0.3, 0.85]

CASES = {  # name: (solver settings, environment, the rule's class, the threshold's name)
    "pairs": ({}, lambda: GaussianArms(MU, sigma=0.5, rng=3), PairStop, "valid:pairs-mixture"),
    "pairs, Best-K": ({"K": 2}, lambda: GaussianArms(MU, sigma=0.5, rng=3), PairStop, "valid:pairs-mixture"),
    "pairs, valid-kk": ({"threshold": "valid-kk"}, lambda: GaussianArms(MU, sigma=0.5, rng=3), PairStop,
                        "valid:pairs"),
    "pairs, heuristic": ({"threshold": "heuristic"}, lambda: GaussianArms(MU, sigma=0.5, rng=3), PairStop,
                         "heuristic"),
    "pairs, Bernoulli": ({}, lambda: BernoulliArms([0.8, 0.6, 0.5, 0.3], rng=3), PairStop, "valid:pairs-kl"),
    "pairs, unknown variance": ({"divergence": "unknown-variance"}, lambda: GaussianArms(MU, sigma=0.5, rng=3),
                                PairStopUnknownVariance, "valid:pairs-unknown-variance"),
    "members": ({"K": 2, "epsilon": 0.05}, lambda: GaussianArms(MU, sigma=0.5, rng=3), MemberStop,
                "valid:sets-mixture"),
    "members, unknown variance": ({"K": 2, "epsilon": 0.05, "divergence": "unknown-variance"},
                                  lambda: GaussianArms(MU, sigma=0.5, rng=3), MemberStop,
                                  "valid:all-arms-mixture-unknown-variance"),
    "certificate": ({"decision_class": OracleOnly(3)}, lambda: GaussianArms(MU, sigma=0.5, rng=3),
                    CertificateStop, "valid:sets-product-mixture"),
}


def _explored(kw, make_env, samples):
    env = make_env()
    exp = TopTwo(delta=0.05, **kw).start(env.problem, rng=1)
    while not exp.done and exp.samples < samples:
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    return exp


def _arrays(exp):
    return {k: v.copy() for k, v in vars(exp).items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("case", list(CASES))
def test_the_rule_is_chosen_once_for_the_structure_model_and_threshold(case):
    kw, make_env, cls, name = CASES[case]
    exp = _explored(kw, make_env, 0)
    assert type(exp.stopping_rule) is cls and isinstance(exp.stopping_rule, GLRStoppingRule)
    assert exp.stopping_threshold is exp.stopping_rule.threshold and exp.stopping_threshold.name == name
    again = glr_stopping_rule(exp, 0.05)
    assert type(again) is cls and again.threshold.name == name and again is not exp.stopping_rule


@pytest.mark.parametrize("case", list(CASES))
def test_margin_agrees_with_the_check_and_changes_nothing(case):
    """At many points of a run: ``margin >= 0`` exactly when the check stops, the margin is
    the binding alternative's statistic less its threshold on the routes that record both,
    and neither ``margin`` nor the rule at other levels changes the exploration."""
    kw, make_env, _, _ = CASES[case]
    seen = set()
    for samples in (40, 90, 160, 300, 600, 1200):
        exp = _explored(kw, make_env, samples)
        if not exp._ready:
            continue
        rule, t = exp.stopping_rule, int(exp.T.sum())
        ans = exp._compute_answer()
        before = _arrays(exp)
        margins = [rule.margin(exp, ans, t)] + [glr_stopping_rule(exp, x).margin(exp, ans, t)
                                               for x in (1e-6, 0.2, 0.9)]
        assert {k: v.tolist() for k, v in _arrays(exp).items()} == {k: v.tolist() for k, v in before.items()}
        # a larger level is an easier rule
        assert margins[1] <= margins[0] + 1e-9 and margins[0] <= margins[2] + 1e-9 <= margins[3] + 2e-9
        probe = copy.deepcopy(exp)
        out = probe.stopping_rule.check(probe, ans, t)
        if out is None:  # the certificate's necessary condition failed: the rule does not hold
            assert margins[0] < 0
            seen.add(False)
            continue
        beta, stop = out
        seen.add(bool(stop))
        assert stop == (margins[0] >= 0), (samples, margins[0])
        if not isinstance(rule, CertificateStop) and np.isfinite(probe._stat):
            assert probe._stat - beta == pytest.approx(margins[0], rel=1e-9, abs=1e-9)
        assert exp.would_stop(0.05) == (margins[0] >= 0) and exp.would_stop(0.9) == (margins[3] >= 0)
    assert seen  # the run reached its checks


def test_a_scaled_threshold_reaches_every_route():
    """The conformance suite's planted solver scales the rule's threshold object: the pair,
    member and certificate routes all hold it to the scaled values."""
    from combex.testing._broken import _ScaledThreshold

    for case in ("pairs", "members", "certificate"):
        kw, make_env, _, _ = CASES[case]
        exp = _explored(kw, make_env, 300)
        ans, t = exp._compute_answer(), int(exp.T.sum())
        plain = copy.deepcopy(exp).stopping_rule.check(copy.deepcopy(exp), ans, t)
        scaled = copy.deepcopy(exp)
        scaled.stopping_threshold = _ScaledThreshold(scaled.stopping_threshold, 0.1)
        out = scaled.stopping_rule.check(scaled, ans, t)
        assert out is not None and out[0] < plain[0], case

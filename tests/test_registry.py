"""The decision-class registry and entry-point plug-ins."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

import combex.oracles._registry as registry
from combex.exceptions import CombexWarning, InvalidParameterError
from combex.oracles import (
    DECISION_CLASSES,
    DecisionClass,
    TopK,
    get_decision_class,
    list_decision_classes,
    make_decision_class,
    register_decision_class,
)
from combex.testing import check_decision_class
from combex.testing._example_plugin import ConflictFreeTeams

BUILTINS = {
    "topk", "matroid", "uniform-matroid", "partition-matroid", "graphic-matroid",
    "linear-matroid", "spanning-trees", "st-paths", "matchings", "explicit", "constraints",
}
PLUGIN_VALUE = "combex.testing._example_plugin:ConflictFreeTeams"


@pytest.fixture
def clean_registry(monkeypatch):
    """Restore the registry and the plug-in flag after the test."""
    saved = dict(DECISION_CLASSES)
    DECISION_CLASSES.pop("conflict-free-teams", None)  # in case the real entry point loaded it
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    yield
    DECISION_CLASSES.clear()
    DECISION_CLASSES.update(saved)


def fake_entry_points(monkeypatch, *eps):
    points = [importlib.metadata.EntryPoint(name=n, value=v, group="combex.oracles") for n, v in eps]

    def entry_points(**kw):
        assert kw == {"group": "combex.oracles"}
        return points

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_builtins_registered():
    names = set(list_decision_classes())
    assert BUILTINS <= names
    assert get_decision_class("topk") is TopK
    for name in BUILTINS:
        cls = get_decision_class(name)
        assert issubclass(cls, DecisionClass) and cls.name == name


def test_make_decision_class():
    dc = make_decision_class("topk", n=5, k=2)
    assert isinstance(dc, TopK) and dc.k == 2
    with pytest.raises(InvalidParameterError, match="Could not build the decision class 'topk'"):
        make_decision_class("topk", n=5, kk=2)
    with pytest.raises(InvalidParameterError, match="'k' parameter of TopK"):
        make_decision_class("topk", n=5, k=9)


def test_unknown_name_suggests_closest(clean_registry, monkeypatch):
    fake_entry_points(monkeypatch)
    with pytest.raises(InvalidParameterError, match="Unknown decision class 'top-k'. Did you mean 'topk'"):
        get_decision_class("top-k")
    with pytest.raises(InvalidParameterError, match="Did you mean 'spanning-trees'"):
        get_decision_class("spaning-trees")
    with pytest.raises(InvalidParameterError, match="Known decision classes: .*topk"):
        get_decision_class("zzzzzz")
    with pytest.raises(InvalidParameterError, match="'name' parameter of get_decision_class"):
        get_decision_class(3)


def test_register_user_class(clean_registry):
    @register_decision_class("pairs")
    class Pairs(TopK):
        def __init__(self, n):
            super().__init__(n, 2)

    assert Pairs.name == "pairs"
    assert get_decision_class("pairs") is Pairs
    assert "pairs" in list_decision_classes()
    check_decision_class(make_decision_class("pairs", n=5), rng=0)
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_decision_class("pairs")(TopK)
    register_decision_class("pairs", replace=True)(TopK)
    assert get_decision_class("pairs") is TopK
    with pytest.raises(InvalidParameterError, match="subclass of DecisionClass"):
        register_decision_class("thing")(int)
    with pytest.raises(InvalidParameterError, match="'name' parameter of register_decision_class"):
        register_decision_class("")


def test_plugin_discovered_through_entry_point(clean_registry, monkeypatch):
    fake_entry_points(monkeypatch, ("conflict-free-teams", PLUGIN_VALUE))
    assert "conflict-free-teams" not in DECISION_CLASSES  # not registered at import
    cls = get_decision_class("conflict-free-teams")
    assert cls is ConflictFreeTeams
    dc = make_decision_class("conflict-free-teams", n=6, k=3, conflicts=[(0, 1), (2, 3)])
    check_decision_class(dc, rng=0, n_trials=5)
    assert "conflict-free-teams" in list_decision_classes()


def test_plugins_loaded_lazily_and_once(clean_registry, monkeypatch):
    calls = []

    def entry_points(**kw):
        calls.append(kw)
        return []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    get_decision_class("topk")  # a built-in: no plug-in lookup
    assert calls == []
    list_decision_classes()
    list_decision_classes()
    assert len(calls) == 1


@pytest.mark.parametrize(
    "ep, match",
    [
        (("broken", "combex_no_such_module_xyz:Thing"), "'broken' .* failed to load"),
        (("not-a-class", "combex.oracles:DECISION_CLASSES"), "not a subclass of combex.oracles.DecisionClass"),
        (("topk", PLUGIN_VALUE), "clashes with the registered class"),
    ],
)
def test_failing_plugin_warns_not_crashes(clean_registry, monkeypatch, ep, match):
    fake_entry_points(monkeypatch, ep, ("conflict-free-teams", PLUGIN_VALUE))
    with pytest.warns(CombexWarning, match=match):
        names = list_decision_classes()
    assert "conflict-free-teams" in names  # the good plug-in still loads
    assert get_decision_class("topk") is TopK


def test_unreadable_entry_points_warn(clean_registry, monkeypatch):
    def entry_points(**kw):
        raise RuntimeError("broken metadata")

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    with pytest.warns(CombexWarning, match="Could not read"):
        assert BUILTINS <= set(list_decision_classes())


def test_entry_point_of_an_installed_distribution(clean_registry, monkeypatch, tmp_path):
    """End to end through importlib.metadata: a (fake) installed distribution declaring
    the plug-in in its entry_points.txt, found on sys.path."""
    dist = tmp_path / "combex_fake_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: combex-fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[combex.oracles]\nfake-teams = {PLUGIN_VALUE}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert get_decision_class("fake-teams") is ConflictFreeTeams


def _installed_plugin_names():
    return {ep.name for ep in importlib.metadata.entry_points(group="combex.oracles")}


@pytest.mark.skipif(
    "conflict-free-teams" not in _installed_plugin_names(),
    reason="the example plug-in entry point is not installed (pyproject.toml line missing)",
)
def test_installed_entry_point(clean_registry):
    (ep,) = [ep for ep in importlib.metadata.entry_points(group="combex.oracles") if ep.name == "conflict-free-teams"]
    assert ep.value == PLUGIN_VALUE
    cls = get_decision_class("conflict-free-teams")
    assert cls is ConflictFreeTeams
    dc = cls(5, 2, conflicts=[(0, 1)])
    assert np.flatnonzero(dc.argmax(np.array([1.0, 0.9, 0.0, 0.0, 0.5]))).tolist() == [0, 4]


# ---------------------------------------------------------------- one name per setting
@pytest.mark.parametrize("name, old, new, value", [("lingape", "R", "sigma", 2.0),
                                                   ("lingape-oracle", "R", "sigma", 2.0),
                                                   ("bounded-me", "k", "K", 3),
                                                   ("icb", "check_every", "batch_size", 1),
                                                   ("saqm", "check_every", "batch_size", 1)])
def test_a_renamed_setting_keeps_its_old_name_as_a_deprecated_alias(name, old, new, value, tmp_path):
    """One name for one thing across the solvers (``sigma`` the noise scale, ``K`` the size
    of the answer, ``batch_size`` the samples between two checks): the old keyword still works with a DeprecationWarning, giving both is an
    error naming them, and a state saved under the old name still resumes."""
    import json

    from combex.environments import canonical
    from combex.exceptions import InvalidParameterError
    from combex.solvers import get_solver

    cls = get_solver(name)
    with pytest.warns(DeprecationWarning, match=f"'{old}' parameter of {cls.__name__} is deprecated; use '{new}'"):
        solver = cls(**{old: value})
    assert getattr(solver, new) == value and old not in solver.get_params()
    assert solver.get_params() == cls(**{new: value}).get_params()
    with pytest.raises(InvalidParameterError, match=f"both '{new}' and its deprecated alias '{old}'"):
        cls(**{old: value, new: value})
    from combex.experiments import build_solver

    with pytest.warns(DeprecationWarning):  # the CLI's and sweeps' path: `--param R=2`
        assert getattr(build_solver(name, {old: value}), new) == value
    if name == "lingape":
        env = canonical(3, 1.0, rng=0)
        exp = solver.start(env.problem, rng=0)
        for _ in range(5):
            b = exp.ask()
            exp.tell_batch(b, env.pull_many(b.arms, b.counts))
        state = exp.state_dict()
        old_state = json.loads(json.dumps(state, default=lambda v: v.tolist()))
        old_state["params"] = {(old if k == new else k): v for k, v in state["params"].items()}
        resumed = cls(**{new: value}).resume(old_state, env.problem)
        assert resumed.samples == exp.samples

"""Silent coercions refused at construction: complex numbers, strings for
booleans, unknown densest-k-subgraph oracle names, a too-small v_max."""

from __future__ import annotations

import numpy as np
import pytest

from combex.environments import BernoulliArms, DynamicLinearArms, GaussianArms, LinearBandit, RewardLists
from combex.exceptions import InvalidParameterError
from combex.mips import BoundedMEIndex
from combex.solvers import SAFOA, SAQM


@pytest.mark.parametrize("make", [
    lambda: GaussianArms(np.array([1 + 2j, 0.5])),
    lambda: GaussianArms([1.0, 0.5 + 0j]),
    lambda: BernoulliArms(np.array([0.5 + 0.1j, 0.5])),
    lambda: LinearBandit(np.eye(2) + 0j, np.array([1.0, 0.5])),
    lambda: LinearBandit(np.eye(2), [1.0 + 1j, 0.5]),
    lambda: RewardLists(np.ones((2, 3)) * (1 + 1j)),
    lambda: DynamicLinearArms(np.ones((3, 2)) * 1j, np.ones(2), [0], {}, 5),
    lambda: BoundedMEIndex(np.ones((3, 2)) + 1j),
])
def test_complex_values_are_refused(make):
    with pytest.raises(InvalidParameterError, match="must be real"):
        make()


@pytest.mark.parametrize("kw", [{"certified": "false"}, {"certified": "False"}, {"report_bound": 1},
                                {"report_bound": "no"}])
def test_strings_and_ints_for_bools_are_refused(kw):
    with pytest.raises(InvalidParameterError, match="must be a bool"):
        SAFOA(**kw)
    assert SAFOA(certified=np.bool_(True)).certified is True


@pytest.mark.parametrize("cls", [SAQM, SAFOA])
def test_unknown_dks_is_refused_at_construction(cls):
    with pytest.raises(InvalidParameterError, match=r"'dks'.*Did you mean 'peeling'"):
        cls(dks="peel")


def test_invalid_dks_is_caught_before_a_sweep_creates_its_file(tmp_path, capsys):
    from combex.cli import main

    out = tmp_path / "r.csv"
    code = main(["sweep", "--solver", "saqm", "--param", "dks=peel", "--instance", "kuroki-synthetic",
                 "--set", "n=6", "--set", "k=3", "--out", str(out), "--no-progress"])
    assert code == 2 and "dks" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_too_small_v_max_is_refused():
    V = np.full((4, 3), 5.0)
    with pytest.raises(InvalidParameterError, match="v_max"):
        BoundedMEIndex(V, v_max=1.0)
    assert BoundedMEIndex(V, v_max=5.0).v_max == 5.0

"""The MIPS (BoundedME) and sublinear (regret) families through the runner and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from combex.cli import main
from combex.environments import mips_adversarial, mips_adversarial_env, mips_gaussian, mips_gaussian_env, mips_uniform_env, sublinear_synthetic
from combex.environments._mips_instances import MIPSBinaryRewardLists, MIPSRewardLists, mips_reward_lists
from combex.exceptions import InvalidParameterError
from combex.experiments import run_many, run_once, summarize
from combex.experiments._runner import build_solver, run_generators
from combex.mips import mips_top_k
from combex.solvers import RegretPolicy, Solver, get_solver
from combex.solvers.sublinear import SUBLINEAR_SOLVERS, LinElim


def run_cli(capsys, argv):
    code = main(argv)
    return code, capsys.readouterr().out


# ---------------------------------------------------------------------- scaling
def test_reward_lists_hand_values_and_zero_width():
    V = np.array([[1.0, -2.0], [0.0, 2.0]])
    q = np.array([0.5, 1.0])
    # half-width v_max max|q| = 2: (V q + 2) / 4
    np.testing.assert_allclose(mips_reward_lists(V, q, 2.0), [[0.625, 0.0], [0.5, 1.0]])
    np.testing.assert_array_equal(mips_reward_lists(V, np.zeros(2), 2.0), np.full((2, 2), 0.5))


def test_too_small_v_max_is_refused_not_clipped():
    # A bound below max |V_ij| voids the reward width; refused at construction.
    from combex.environments import MIPSData

    V = np.array([[1.0, -2.0], [0.0, 2.0]])
    with pytest.raises(InvalidParameterError, match="'v_max'"):
        mips_reward_lists(V, np.array([0.5, 1.0]), 1.0)  # products reach 2 > 1 * 1
    with pytest.raises(InvalidParameterError, match=r"'v_max'.*max \|V_ij\| = 2.0"):
        MIPSData(V, V[:1], 1.5, "hand")
    with pytest.raises(InvalidParameterError, match="finite"):
        MIPSData(np.array([[np.nan]]), np.ones((1, 1)), 1.0, "hand")
    assert MIPSData(V, V[:1], 2.0, "hand").v_max == 2.0


def test_env_means_are_scaled_inner_products_with_mips_top_k_width():
    data = mips_gaussian(30, 50, rng=3)
    env = mips_gaussian_env(30, 50, rng=3)  # same draws for the same seed
    q = data.queries[0].astype(np.float64)
    half = data.v_max * np.abs(q).max()
    expected = (data.V.astype(np.float64) @ q / 50 + half) / (2 * half)
    np.testing.assert_allclose(env.means(), expected, rtol=1e-10, atol=1e-12)
    # The width is the one mips_top_k reports (same scaling, same epsilon units).
    width = mips_top_k(data.V, data.queries[0], 1, epsilon=0.5, rng=0, v_max=data.v_max,
                       method="bandit").info["reward_width"]
    assert width == pytest.approx(2 * half, rel=1e-6)
    # Known bounds [0, 1] (not realized extremes): BoundedME uses value_range 1.
    assert env.problem.info["lower"] == 0.0 and env.problem.info["upper"] == 1.0
    assert np.argmax(env.means()) == np.argmax(data.V.astype(np.float64) @ q)


def test_uniform_and_adversarial_envs():
    env = mips_uniform_env(8, 20, rng=0)
    assert isinstance(env, MIPSRewardLists) and env.means().shape == (8,)
    adv = mips_adversarial_env(12, 100, rng=5)
    assert isinstance(adv, MIPSBinaryRewardLists)
    np.testing.assert_array_equal(adv.ones, mips_adversarial(12, 100, rng=5).ones)


@pytest.mark.parametrize("builder", [mips_gaussian_env, mips_uniform_env, mips_adversarial_env])
def test_builders_reject_bad_sizes(builder):
    with pytest.raises(InvalidParameterError, match=r"'n' parameter of mips_\w+_env"):
        builder(0, 10, rng=0)
    with pytest.raises(InvalidParameterError, match="'dim' parameter"):
        builder(3, 1.5, rng=0)


def test_mips_reward_lists_env_rejects_entries_outside_unit_interval():
    with pytest.raises(InvalidParameterError, match="entries in \\[0, 1\\]"):
        MIPSRewardLists([[0.5, 1.5]])


# ---------------------------------------------------------------------- top-k scoring
def _four_arms():
    # means 0.75, 0.5, 0.25, 1.0 (lists of 4 rewards)
    return MIPSRewardLists([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 1]], rng=0)


def test_top_k_is_correct_matches_theorem_1_hand_values():
    env = _four_arms()
    # k = 2: the true 2nd best mean is 0.75; {3, 1} holds 1.0 and 0.5 -> gap 0.25.
    mask = np.array([False, True, False, True])
    assert env.top_k_gap(mask) == pytest.approx(0.25)
    assert env.is_correct(mask, 0.25) and not env.is_correct(mask, 0.24)
    assert env.is_correct(np.array([3, 0]), 0.0)  # exact top 2 as indices
    # k = 3: the exact top 3 {3, 0, 1}; the k-th best of the answer is the true 3rd (0.5)
    assert env.top_k_gap(np.array([True, True, False, True])) == pytest.approx(0.0)
    assert env.top_k_gap(np.array([False, True, True, True])) == pytest.approx(0.25)
    # k = 1 (int answer): max - mean
    assert env.top_k_gap(2) == pytest.approx(0.75)
    assert env.is_correct(3) and not env.is_correct(0, 0.2)


@pytest.mark.parametrize("bad", [np.zeros(4, bool), np.ones(3, bool), np.array([1, 1]), np.array([0, 4]), 7, 1.5])
def test_top_k_scoring_rejects_bad_answers(bad):
    with pytest.raises(InvalidParameterError):
        _four_arms().is_correct(bad)


# ---------------------------------------------------------------------- runner
def test_run_once_bounded_me_top_k_is_scored_top_k():
    solver = build_solver("bounded-me", {"K": 5, "epsilon": 0.3})
    rec = run_once(solver, "mips-gaussian", {"n": 200, "dim": 300}, root_seed=1, index=0, epsilon=0.3)
    assert rec["status"] == "identified" and len(rec["answer"]) == 5
    inst, _, _ = run_generators(1, 0)
    env = mips_gaussian_env(200, 300, rng=inst)
    mask = np.zeros(200, bool)
    mask[rec["answer"]] = True
    assert rec["correct"] is bool(env.is_correct(mask, 0.3))
    assert max(rec["pulls"]) <= 300  # Corollary 2: never past the list


def test_run_once_regret_record_equals_direct_run():
    solver = build_solver("lin-elim")
    params = {"K": 300, "d": 4, "T": 200}
    rec = run_once(solver, "sublinear-synthetic", params, root_seed=2, index=1)
    inst, env_rng, alg = run_generators(2, 1)
    env = sublinear_synthetic(rng=inst, **params)
    env.reset(env_rng)
    out = LinElim().run(env, None, rng=alg)
    assert rec["regret"] == pytest.approx(out.regret)
    assert rec["answer"] == int(out.arms[-1])
    assert (rec["correct"], rec["samples"], rec["rounds"], rec["pulls"]) == (None, 200, 200, [])
    # time with and without preprocessing is reported
    assert 0 <= rec["preprocess_seconds"] and 0 < rec["online_seconds"] <= rec["wall_seconds"]
    assert rec["index_maintenance_seconds"] == 0.0  # a linear scan maintains no index


def test_summary_tolerates_unscored_runs():
    base = {"samples": 10, "wall_seconds": 0.1, "status": "horizon"}
    s = summarize([dict(base, correct=None, regret=3.0), dict(base, correct=None, regret=5.0)])
    assert s["error_rate"] is None and s["mean_regret"] == 4.0 and "mean_online_seconds" not in s
    s = summarize([dict(base, correct=None, regret=3.0, online_seconds=0.5, preprocess_seconds=2.0),
                   dict(base, correct=None, regret=5.0, online_seconds=1.5, preprocess_seconds=4.0)])
    assert (s["mean_online_seconds"], s["mean_preprocess_seconds"]) == (1.0, 3.0)
    assert s["std_regret"] == pytest.approx(np.sqrt(2.0))
    s = summarize([dict(base, correct=True), dict(base, correct=False)])
    assert s["error_rate"] == 0.5 and "mean_regret" not in s


def test_sublinear_solvers_are_registered_regret_policies():
    for name, cls in SUBLINEAR_SOLVERS.items():
        assert get_solver(name) is cls and cls.contract == "regret"
        obj = cls()
        assert isinstance(obj, RegretPolicy) and not isinstance(obj, Solver) and not hasattr(obj, "start")
    assert get_solver("sub-ts")(shortlist=7).json_params()["shortlist"] == 7
    with pytest.raises(InvalidParameterError, match="no setting 'shortlst'.*'shortlist'"):
        build_solver("sub-ts", {"shortlst": 3})


def test_run_many_regret_is_deterministic_and_summarized():
    a = run_many("sub-ts", "sublinear-synthetic", {"K": 300, "d": 4, "T": 150}, runs=2, seed=4)
    b = run_many(get_solver("sub-ts")(), "sublinear-synthetic", {"K": 300, "d": 4, "T": 150}, runs=2, seed=4)
    ra = [r["regret"] for r in a["runs"]]
    assert ra == [r["regret"] for r in b["runs"]]
    assert a["summary"]["mean_regret"] == pytest.approx(np.mean(ra))
    assert a["summary"]["error_rate"] is None


# ---------------------------------------------------------------------- CLI
def test_cli_bounded_me_gaussian_json(capsys):
    code, out = run_cli(capsys, ["run", "bounded-me", "--instance", "mips-gaussian", "--set", "n=500",
                                 "--set", "dim=400", "--param", "K=5", "--param", "epsilon=0.3",
                                 "--runs", "2", "--json"])
    doc = json.loads(out)
    assert code == 0 and len(doc["runs"]) == 2
    assert all(len(r["answer"]) == 5 and r["status"] == "identified" for r in doc["runs"])
    assert doc["summary"]["error_rate"] is not None


def test_cli_bounded_me_adversarial_text(capsys):
    # Ones-first lists void BoundedME's guarantee: refused with a clear message ...
    argv = ["run", "bounded-me", "--instance", "mips-adversarial", "--set", "n=200", "--set", "dim=1000",
            "--param", "K=1", "--runs", "2"]
    code = main(argv)
    captured = capsys.readouterr()
    assert code != 0 and "random order" in captured.err + captured.out
    # ... unless asked for explicitly (the paper's Figure 1 experiment, heuristic).
    code, out = run_cli(capsys, argv + ["--param", "assume_random_order=true"])
    assert code == 0 and "run 1: answer=" in out and "error rate" in out


def test_cli_sub_ts_json(capsys):
    code, out = run_cli(capsys, ["run", "sub-ts", "--instance", "sublinear-synthetic", "--set", "K=500",
                                 "--set", "d=8", "--set", "T=400", "--runs", "2", "--json"])
    doc = json.loads(out)
    assert code == 0 and [r["samples"] for r in doc["runs"]] == [400, 400]
    assert all(r["regret"] > 0 and r["correct"] is None for r in doc["runs"])
    assert doc["summary"]["mean_regret"] > 0 and doc["summary"]["error_rate"] is None


def test_cli_lin_elim_text(capsys):
    code, out = run_cli(capsys, ["run", "lin-elim", "--instance", "sublinear-synthetic", "--set", "K=500",
                                 "--set", "d=8", "--set", "T=400"])
    assert code == 0 and "regret=" in out and "online=" in out and "preprocessing=" in out
    assert "mean online" in out


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_sweep_of_regret_solvers_records_regret_and_times_and_resumes(tmp_path, suffix):
    pytest.importorskip("pandas")
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    from combex.experiments import REGRET_COLUMNS, read_results, results_table, run_sweep, sweep_from_lists

    def sweep(runs):
        return sweep_from_lists(["sub-ts", "lin-ts"], ["sublinear-synthetic"], runs=runs, seed=3,
                                instance_params={"K": 300, "d": 4, "T": 120})

    out = tmp_path / f"r{suffix}"
    first = run_sweep(sweep(2), out)
    assert first.ran == 4 and sweep(2).columns()[-len(REGRET_COLUMNS):] == REGRET_COLUMNS
    more = run_sweep(sweep(3), out)  # resume: 2 new runs, the old rows read back
    assert more.ran == 2 and more.skipped == 4
    _, rows = read_results(out)
    assert len(rows) == 6
    for r in rows:
        assert r["correct"] is None  # nothing to score, not "wrong"
        assert isinstance(r["regret"], float) and r["regret"] > 0
        assert 0 < r["online_seconds"] <= r["wall_seconds"] and r["preprocess_seconds"] >= 0
    assert summarize(rows)["error_rate"] is None
    direct = run_once(build_solver("lin-ts"), "sublinear-synthetic", {"K": 300, "d": 4, "T": 120},
                      root_seed=3, index=2)
    table = results_table(out)
    got = table[(table.solver == "lin-ts") & (table.run == 2)]["regret"].iloc[0]
    assert got == pytest.approx(direct["regret"])
    assert table["regret"].dtype == np.float64
    # sweeps without regret solvers keep the pure-exploration columns
    plain = sweep_from_lists(["lucb"], ["jiang-1sparse"], runs=1, instance_params={"K": 1, "N": 3})
    assert not set(REGRET_COLUMNS) & set(plain.columns())


def test_cli_sweep_of_regret_solvers_prints_regret(capsys, tmp_path):
    pytest.importorskip("pandas")
    out = tmp_path / "r.csv"
    code, text = run_cli(capsys, ["sweep", "--solver", "lin-ts", "--instance", "sublinear-synthetic", "--set", "K=300",
                                  "--set", "d=4", "--grid", "T=100,150", "--runs", "2", "--out", str(out)])
    assert code == 0 and text.count("mean regret=") == 2 and "error rate=n/a" in text
    assert "online_seconds" in out.read_text().splitlines()[0]

"""Runner, sweeps, results files, backends and plots (combex.experiments)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from combex.exceptions import CombexError, InvalidParameterError, StateError
from combex.experiments import (
    ConfigError,
    ResultsFileError,
    Sweep,
    build_solver,
    execute,
    list_instances,
    load_study,
    make_instance,
    read_results,
    results_table,
    run_generators,
    run_many,
    run_once,
    run_study,
    run_sweep,
    save_study,
    simulate,
    summarize_table,
    sweep_from_lists,
)

pd = pytest.importorskip("pandas")

SMALL = dict(solvers=["lil-randlucb", "lucb"], instances=["jiang-1sparse"])


def small_sweep(runs: int = 2, seed: int = 1) -> Sweep:
    return sweep_from_lists(SMALL["solvers"], SMALL["instances"], runs=runs, seed=seed,
                            instance_params={"K": 1}, instance_grid={"N": [3, 4]})


def comparable(df):
    return df.drop(columns=["wall_seconds"]).reset_index(drop=True)


# ---------------------------------------------------------------------- seeding
def test_run_generators_match_seedsequence_spawn():
    for index in (0, 3):
        child = np.random.SeedSequence(42).spawn(5)[index]
        expected = [np.random.default_rng(s).integers(1 << 30) for s in child.spawn(3)]
        got = [g.integers(1 << 30) for g in run_generators(42, index)]
        assert got == expected
    # distinct streams for instance / environment / solver
    a, b, c = (g.random() for g in run_generators(0, 0))
    assert len({a, b, c}) == 3


def test_run_many_is_deterministic_and_uses_common_random_numbers():
    d1 = run_many("lil-randlucb", "jiang-1sparse", {"N": 4, "K": 1}, runs=3, seed=7)
    d2 = run_many("lil-randlucb", "jiang-1sparse", {"N": 4, "K": 1}, runs=3, seed=7)
    strip = lambda d: [{k: v for k, v in r.items() if k != "wall_seconds"} for r in d["runs"]]  # noqa: E731
    assert strip(d1) == strip(d2)
    # run i alone gives the same record as run i of a longer series
    solver = build_solver("lil-randlucb")
    rec = run_once(solver, "jiang-1sparse", {"N": 4, "K": 1}, root_seed=7, index=2)
    assert rec["samples"] == d1["runs"][2]["samples"] and rec["answer"] == d1["runs"][2]["answer"]
    # schema of the DESIGN.md document
    assert {"solver", "instance", "params", "runs", "summary"} <= set(d1)
    assert {"seed", "answer", "correct", "samples", "rounds", "wall_seconds", "pulls"} <= set(d1["runs"][0])
    assert {"mean_samples", "median_samples", "error_rate", "median_wall_seconds"} <= set(d1["summary"])
    assert d1["summary"]["mean_samples"] == pytest.approx(np.mean([r["samples"] for r in d1["runs"]]))


def test_simulate_with_progress_equals_solver_run():
    solver = build_solver("lil-randlucb")
    res = []
    for progress in (False, True):
        i, e, a = run_generators(3, 0)
        env = make_instance("jiang-1sparse", rng=i, N=4, K=1)
        env.reset(e)
        res.append(simulate(solver, env, rng=a, progress=progress))
    assert res[0].samples == res[1].samples and np.array_equal(res[0].pulls, res[1].pulls)


def test_every_design_instance_is_registered():
    names = {s.name for s in list_instances()}
    for n in ("kuroki-synthetic", "topk-gaussian", "jiang-1sparse", "jiang-exponential", "lil-exponential",
              "soare", "canonical", "crowd", "mips-gaussian", "mips-uniform", "mips-adversarial",
              "sublinear-synthetic"):
        assert n in names


# ---------------------------------------------------------------------- bad input
def test_unknown_names_suggest_the_closest():
    with pytest.raises(InvalidParameterError, match="Did you mean 'lil-randlucb'"):
        run_many("lil-randluc", "jiang-1sparse", {"N": 4, "K": 1})
    with pytest.raises(InvalidParameterError, match="Did you mean 'jiang-1sparse'"):
        run_many("lucb", "jiang-1sprse")
    with pytest.raises(InvalidParameterError, match="no parameter 'n'.*Did you mean 'N'"):
        run_many("lucb", "jiang-1sparse", {"n": 4})
    with pytest.raises(InvalidParameterError, match="no setting 'detla'.*Did you mean 'delta'"):
        build_solver("icb", {"detla": 0.1})
    with pytest.raises(InvalidParameterError, match="'runs' parameter"):
        run_many("lucb", "jiang-1sparse", {"N": 4, "K": 1}, runs=0)


def test_execute_rejects_bad_backend_and_orphan_scheduler():
    with pytest.raises(InvalidParameterError, match="Did you mean 'processes'"):
        execute(abs, [1], backend="process")
    with pytest.raises(InvalidParameterError, match="needs backend='dask'"):
        execute(abs, [1], backend="serial", scheduler="tcp://127.0.0.1:1")
    assert execute(abs, [-1, 2, -3], backend="serial") == [1, 2, 3]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


GOOD = """
name = "t"
seed = 3
runs = 2
[[solvers]]
name = "lil-randlucb"
[[solvers]]
name = "lucb"
delta = 0.1
[[instances]]
name = "jiang-1sparse"
K = 1
grid = { N = [3, 4] }
"""


def test_config_parses_and_expands_grid(tmp_path):
    sw = Sweep.from_toml(write(tmp_path, GOOD))
    assert sw.seed == 3 and sw.runs == 2 and len(sw) == 2 * 2 * 2
    assert sw.instances == [("jiang-1sparse", {"K": 1, "N": 3}), ("jiang-1sparse", {"K": 1, "N": 4})]
    assert sw.solvers == [("lil-randlucb", {}), ("lucb", {"delta": 0.1})]
    # runs and name are not part of the identity; the seed is
    assert Sweep.from_toml(write(tmp_path, GOOD.replace("runs = 2", "runs = 5"))).sweep_id == sw.sweep_id
    assert Sweep.from_toml(write(tmp_path, GOOD.replace("seed = 3", "seed = 4"))).sweep_id != sw.sweep_id


@pytest.mark.parametrize("text, message", [
    ("runs = [", "malformed TOML"),
    (GOOD.replace("runs = 2", "rnus = 2"), "unknown key 'rnus'.*Did you mean 'runs'"),
    (GOOD.replace('name = "lucb"', 'name = "lcub"'), "Unknown solver 'lcub'.*Did you mean 'lucb'"),
    (GOOD.replace('name = "jiang-1sparse"', 'name = "jiang-1spars"'), "Did you mean 'jiang-1sparse'"),
    (GOOD.replace("K = 1", "k = 1"), "no parameter 'k'"),
    (GOOD.replace("N = [3, 4]", "N = 3"), "grid key 'N'.*non-empty list"),
    ('runs = 1\n[[instances]]\nname = "soare"', "no 'solvers' list"),
    (GOOD.replace("runs = 2", "runs = 0"), "'runs' parameter"),
    (GOOD.replace("delta = 0.1", "detla = 0.1"), "no setting 'detla'"),
])
def test_malformed_configs_raise_clear_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        Sweep.from_toml(write(tmp_path, text))


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="No sweep configuration"):
        Sweep.from_toml(tmp_path / "absent.toml")


# ---------------------------------------------------------------------- sweeps, files
@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_sweep_resumes_and_extends(tmp_path, suffix):
    out = tmp_path / f"r{suffix}"
    full = run_sweep(small_sweep(runs=3), None)
    first = run_sweep(small_sweep(runs=2), out)
    assert first.ran == 8 and first.skipped == 0
    again = run_sweep(small_sweep(runs=2), out)
    assert again.ran == 0 and again.skipped == 8
    more = run_sweep(small_sweep(runs=3), out)
    assert more.ran == 4 and more.skipped == 8
    meta, rows = read_results(out)
    assert len(rows) == 12 and meta["root_seed"] == 1 and meta["sweep"] == full.sweep.sweep_id
    assert all(r["root_seed"] == 1 for r in rows)
    pd.testing.assert_frame_equal(comparable(results_table(out)), comparable(full.table()))


def test_results_file_of_another_sweep_is_refused_untouched(tmp_path):
    out = tmp_path / "r.csv"
    run_sweep(small_sweep(runs=1, seed=1), out)
    before = out.read_bytes()
    with pytest.raises(ResultsFileError, match="different sweep.*differs in: seed"):
        run_sweep(small_sweep(runs=1, seed=2), out)
    other = sweep_from_lists(["lucb"], ["jiang-1sparse"], runs=1, seed=1, instance_params={"K": 1, "N": 3})
    with pytest.raises(ResultsFileError, match="different sweep"):
        run_sweep(other, out)
    assert out.read_bytes() == before


def test_foreign_file_is_refused_untouched(tmp_path):
    out = tmp_path / "r.csv"
    out.write_text("a,b\n1,2\n")
    with pytest.raises(ResultsFileError, match="not a combex results file"):
        run_sweep(small_sweep(runs=1), out)
    assert out.read_text() == "a,b\n1,2\n"
    js = tmp_path / "r.json"
    js.write_text('{"x": 1}')
    with pytest.raises(ResultsFileError, match="not a combex results file"):
        run_sweep(small_sweep(runs=1), js)
    with pytest.raises(InvalidParameterError, match="must end in"):
        run_sweep(small_sweep(runs=1), tmp_path / "r.txt")
    with pytest.raises(ResultsFileError, match="No results file"):
        read_results(tmp_path / "absent.csv")


def test_parquet_needs_pyarrow(tmp_path):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="Parquet needs pyarrow"):
            run_sweep(small_sweep(runs=1), tmp_path / "r.parquet")
        assert not (tmp_path / "r.parquet").exists()
    else:  # pragma: no cover - depends on the install
        run_sweep(small_sweep(runs=1), tmp_path / "r.parquet")
        assert len(results_table(tmp_path / "r.parquet")) == 4


def test_results_identical_across_backends(tmp_path):
    serial = run_sweep(small_sweep(runs=3), None, backend="serial").table()
    procs = run_sweep(small_sweep(runs=3), tmp_path / "p.csv", jobs=2, backend="processes", chunksize=2).table()
    pd.testing.assert_frame_equal(comparable(serial), comparable(procs))
    pd.testing.assert_frame_equal(comparable(results_table(tmp_path / "p.csv")), comparable(serial))


@pytest.mark.slow
def test_results_identical_on_dask_localcluster():
    distributed = pytest.importorskip("distributed")
    serial = run_sweep(small_sweep(runs=3), None, backend="serial").table()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        dask = run_sweep(small_sweep(runs=3), None, backend="dask", scheduler=client).table()
    pd.testing.assert_frame_equal(comparable(serial), comparable(dask))


def test_summarize_table_hand_computed():
    rows = [{"solver": "a", "n": 1, "samples": s, "correct": c, "wall_seconds": 1.0, "rounds": 2}
            for s, c in ((10, True), (20, False))]
    df = pd.DataFrame(rows)
    s = summarize_table(df, ["solver", "n"])
    assert s["mean"].item() == 15 and s["count"].item() == 2
    assert s["sem"].item() == pytest.approx(np.std([10, 20], ddof=1) / np.sqrt(2))
    assert s["error_rate"].item() == 0.5
    assert summarize_table(df, ["solver"], "time_per_round")["mean"].item() == 0.5


# ---------------------------------------------------------------------- plots
def test_plots(tmp_path):
    pytest.importorskip("matplotlib")
    from combex.experiments import plot_regret, plot_results, plot_time_per_round, plot_traces

    df = run_sweep(small_sweep(runs=2), None).table()
    ax = plot_results(df, "N", "samples")
    assert len(ax.get_lines()) >= 2 and ax.get_xlabel() == "N"
    assert plot_time_per_round(df, x="N").get_ylabel().startswith("time_per_round")
    with pytest.raises(InvalidParameterError, match="Did you mean 'samples'"):
        plot_results(df, "N", "sample")
    with pytest.raises(InvalidParameterError, match="'error' parameter"):
        plot_results(df, "N", error="bars")
    ax = plot_regret({"a": np.cumsum(np.ones((3, 10)), axis=1), "b": np.arange(10.0)})
    assert len(ax.get_lines()) == 2
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), np.arange(1, 11))
    ax = plot_traces({"x": {"t": [1, 2, 3], "ratio": [0.1, 0.2, 0.3]}}, "ratio")
    assert len(ax.get_lines()) == 1
    with pytest.raises(InvalidParameterError, match="no 'gap' entry"):
        plot_traces({"x": {"t": [1], "ratio": [0.1]}}, "gap")


# ---------------------------------------------------------------------- study save / resume
def _env(seed: int = 5):
    i, e, a = run_generators(seed, 0)
    env = make_instance("jiang-1sparse", rng=i, N=5, K=1)
    env.reset(e)
    return env, a


def test_run_study_resume_equals_uninterrupted(tmp_path):
    solver = build_solver("lil-randlucb")
    env, a = _env()
    ref = solver.run(env, rng=a)
    path = tmp_path / "study.json"
    env, a = _env()
    exp = solver.start(env, rng=a)
    for _ in range(5):
        b = exp.ask()
        exp.tell_batch(b, env.pull_many(b.arms, b.counts))
    save_study(path, exp, env)
    env2, _ = _env()
    env2.reset(123)  # a different noise state: load_study must restore the saved one
    res = run_study(solver, env2, path, save_every=3)
    assert res.samples == ref.samples and np.array_equal(res.answer, ref.answer)
    assert np.array_equal(res.pulls, ref.pulls)
    # the plain solver.load also reads a study file
    assert solver.load(path, env2.problem).samples == ref.samples


def test_load_study_errors(tmp_path):
    solver = build_solver("lil-randlucb")
    env, a = _env()
    exp = solver.start(env, rng=a)
    exp.save(tmp_path / "plain.json")
    with pytest.raises(StateError, match="without environment state"):
        load_study(tmp_path / "plain.json", solver, env)
    save_study(tmp_path / "s.json", exp, env)
    other = make_instance("jiang-1sparse", rng=0, N=6, K=1)
    with pytest.raises(StateError, match="6 arms"):
        load_study(tmp_path / "s.json", solver, other)
    with pytest.raises(CombexError):
        load_study(tmp_path / "s.json", build_solver("lucb"), env)
    with pytest.raises(InvalidParameterError, match="save_every"):
        run_study(solver, env, tmp_path / "x.json", save_every=0)


def test_cli_run_is_replayed_exactly_from_python():
    # Regression test: a run of `combex run` (run_many) is replayed exactly from Python
    # with the generators run_generators gives.
    from combex.environments import kuroki_synthetic
    from combex.experiments import run_generators, run_many
    from combex.solvers import get_solver

    doc = run_many("icb", "kuroki-synthetic", {"n": 6, "k": 2, "gap": 0.5}, runs=1, seed=5)
    inst, noise, alg = run_generators(5, 0)
    env = kuroki_synthetic(6, 2, 0.5, rng=inst)
    env.reset(noise)
    res = get_solver("icb")().run(env, rng=alg)
    assert doc["runs"][0]["samples"] == res.samples
    assert doc["runs"][0]["answer"] == np.flatnonzero(res.answer).tolist()

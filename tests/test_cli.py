"""The `combex` command: run, sweep, plot, list, demo (help, JSON schema, errors)."""

from __future__ import annotations

import json

import pytest

from combex.cli import build_parser, main

pytest.importorskip("pandas")

RUN = ["--instance", "jiang-1sparse", "--set", "N=4", "--set", "K=1", "--runs", "2", "--seed", "3"]


def run_cli(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", ["list", "run", "sweep", "plot", "demo"])
def test_help_is_complete_with_an_example(capsys, command):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "Example" in text and f"combex {command}" in text


def test_run_single_solver_json_schema(capsys):
    code, out, _ = run_cli(capsys, ["run", "lil-randlucb", *RUN, "--json"])
    assert code == 0
    doc = json.loads(out)
    assert isinstance(doc, dict)
    assert {"solver", "instance", "params", "runs", "summary"} <= set(doc)
    assert doc["solver"] == "lil-randlucb" and doc["params"] == {"N": 4, "K": 1}
    assert len(doc["runs"]) == 2
    for r in doc["runs"]:
        assert {"seed", "answer", "correct", "samples", "rounds", "wall_seconds", "pulls"} <= set(r)
    assert {"mean_samples", "median_samples", "error_rate", "median_wall_seconds"} <= set(doc["summary"])


def test_run_several_solvers_gives_a_list_on_common_seeds(capsys, tmp_path):
    out_file = tmp_path / "o.json"
    code, out, _ = run_cli(capsys, ["run", "lil-randlucb", "lucb", *RUN, "--json", "--jobs", "2",
                                    "--out", str(out_file)])
    assert code == 0
    docs = json.loads(out)
    assert [d["solver"] for d in docs] == ["lil-randlucb", "lucb"]
    assert json.loads(out_file.read_text()) == docs
    single = json.loads(run_cli(capsys, ["run", "lucb", *RUN, "--json"])[1])
    strip = lambda d: [{k: v for k, v in r.items() if k != "wall_seconds"} for r in d["runs"]]  # noqa: E731
    assert strip(single) == strip(docs[1])
    # an existing --out is never replaced without --force
    code, _, err = run_cli(capsys, ["run", "lucb", *RUN, "--out", str(out_file)])
    assert code == 2 and "exists" in err
    assert json.loads(out_file.read_text()) == docs


@pytest.mark.parametrize("argv, message", [
    (["run", "lil-randluc", *RUN], "Did you mean 'lil-randlucb'"),
    (["run", "lucb", "--instance", "jiang-1sprse"], "Did you mean 'jiang-1sparse'"),
    (["run", "lucb", "--instance", "jiang-1sparse", "--set", "n=4"], "Did you mean 'N'"),
    (["run", "lucb", *RUN, "--set", "novalue"], "key=value"),
    (["sweep", "--solver", "lucb"], "needs a CONFIG.toml"),
    (["plot", "absent.csv", "--x", "N"], "No results file"),
])
def test_bad_input_exits_2_with_a_clear_message(capsys, argv, message):
    code, _, err = run_cli(capsys, argv)
    assert code == 2
    assert message in err


def test_sweep_config_resume_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    cfg = tmp_path / "s.toml"
    cfg.write_text('seed = 2\nruns = 2\nsolvers = ["lil-randlucb", "lucb"]\n'
                   '[[instances]]\nname = "jiang-1sparse"\nK = 1\ngrid = { N = [3, 4] }\n')
    out = tmp_path / "r.csv"
    code, text, _ = run_cli(capsys, ["sweep", str(cfg), "--out", str(out), "--json", "--no-progress"])
    assert code == 0
    first = json.loads(text)
    assert first["ran"] == 8 and first["skipped"] == 0 and first["root_seed"] == 2
    code, text, _ = run_cli(capsys, ["sweep", str(cfg), "--out", str(out), "--runs", "3", "--json"])
    assert json.loads(text)["ran"] == 4
    # the same sweep from options has the same identity, so it resumes the same file
    code, text, _ = run_cli(capsys, ["sweep", "--solver", "lil-randlucb", "--solver", "lucb", "--instance",
                                     "jiang-1sparse", "--set", "K=1", "--grid", "N=3,4", "--seed", "2",
                                     "--runs", "3", "--out", str(out), "--json"])
    assert code == 0 and json.loads(text)["ran"] == 0
    before = out.read_bytes()
    code, _, err = run_cli(capsys, ["sweep", str(cfg), "--out", str(out), "--seed", "5"])
    assert code == 2 and "different sweep" in err and out.read_bytes() == before
    fig = tmp_path / "f.png"
    code, text, _ = run_cli(capsys, ["plot", str(out), "--x", "N", "--y", "samples", "--out", str(fig)])
    assert code == 0 and fig.stat().st_size > 0
    code, _, err = run_cli(capsys, ["plot", str(out), "--x", "N", "--out", str(fig)])
    assert code == 2 and "exists" in err
    code, _, err = run_cli(capsys, ["plot", str(out), "--x", "nn", "--out", str(tmp_path / "g.png")])
    assert code == 2 and "column" in err


def test_sweep_malformed_config(capsys, tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("runs = [\n")
    code, _, err = run_cli(capsys, ["sweep", str(cfg)])
    assert code == 2 and "malformed TOML" in err


def test_list_shows_instances_and_parameters(capsys):
    code, out, _ = run_cli(capsys, ["list", "-v"])
    assert code == 0
    assert "kuroki-synthetic" in out and "parameters: n=10, k=5, gap=0.5" in out and "lil-randlucb" in out


@pytest.mark.slow
def test_demo_quick_finds_epsilon_optimal_teams(tmp_path, capsys):
    """`combex demo --quick` runs the three polynomial solvers on the crowd data (or the
    embedded synthetic crowd) and every team it reports is epsilon-optimal."""
    from combex.cli import main

    assert main(["demo", "--quick", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("ICB ", "SAQM ", "SA-FOA ", "top-two "))]
    assert len(rows) == 4 and all(line.rstrip().endswith("True") for line in rows), out
    ratios = [float(line.split()[3].replace(",", "")) for line in rows]  # "<= R": the lower-bound ratio
    assert all(line.split()[2] == "<=" for line in rows) and all(r > 1 for r in ratios), out


def test_cli_list_shows_solver_families(capsys):
    # Regression test: `combex list` names the instance families of every solver.
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("  ")}
    assert "[semi-bandit, mips]" in line["lil-randlucb"]
    assert "[full-bandit]" in line["saqm"] and "[linear]" in line["lingape"]


def test_cli_list_prints_whole_first_sentences(capsys):
    """Regression test: each summary is the docstring's first sentence, not its first line
    (a line can stop mid-sentence: "... Kaufmann 2022); with", "... the independent"), and
    "et al." or "eq." do not end it."""
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    line = {ln.split()[0]: ln.rstrip() for ln in out.splitlines() if ln.startswith("  ")}
    assert line["top-two"].endswith("EB-TCeps (Jourdan, Degenne & Kaufmann 2023).")
    assert line["graphic-matroid"].endswith("the independent sets its forests.")
    assert line["xy-oracle"].endswith("eq. (18) of Xu et al. (2018).")
    assert "``" not in out


def test_cli_run_has_a_default_budget_and_prints_progress_lines(capsys):
    # Regression test: `combex run` has a default budget (a tied instance cannot run for
    # ever) and prints progress lines.
    from combex.cli import DEFAULT_BUDGET
    from combex.environments import crowd
    from combex.experiments import simulate
    from combex.solvers import get_solver

    args = build_parser().parse_args(["run", "icb", "--instance", "crowd"])
    assert args.budget == DEFAULT_BUDGET
    res = simulate(get_solver("icb")(epsilon=0.5), crowd(k=10, rng=0), rng=0, budget=20_000, progress=True, every=0.0)
    err = capsys.readouterr().err
    assert "[icb] samples=" in err and "statistic=" in err and "leader=" in err
    assert res.samples <= 20_000


def test_cli_time_limit_ends_a_tied_run_with_budget_exhausted(capsys):
    # Regression test: --time-limit ends a run that cannot stop (tied workers, epsilon = 0)
    # with status budget_exhausted and the indistinguishable teams.
    from combex.exceptions import TieWarning

    with pytest.warns(TieWarning):
        assert main(["run", "icb", "--instance", "crowd", "--set", "k=10", "--time-limit", "0.5", "--json",
                     "--no-progress"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["status"] == "budget_exhausted" and run["indistinguishable"]

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

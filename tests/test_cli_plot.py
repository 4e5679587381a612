"""`combex plot` never averages different settings into one line; sweep summaries sort
numbers as numbers; solver names in the wrong case get a did-you-mean."""

from __future__ import annotations

import re

import pytest

from combex.cli import main

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

SWEEP = ["sweep", "--solver", "lucb", "--solver", "lil-lucb", "--instance", "jiang-1sparse",
         "--grid", "N=4,10,8", "--grid", "K=1,2", "--solver-grid", "delta=0.05,0.1", "--runs", "1"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "r.csv"
    assert main([*SWEEP, "--out", str(out)]) == 0
    return out


def test_sweep_summary_sorts_numbers_as_numbers(results, capsys):
    assert main([*SWEEP, "--out", str(results)]) == 0  # resumed: prints the summary only
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  lucb ")]
    ns = [int(re.search(r'"N":(\d+)', ln).group(1)) for ln in lines]
    ks = [int(re.search(r'"K":(\d+)', ln).group(1)) for ln in lines]
    deltas = [float(re.search(r"\"delta\":([\d.]+)", ln).group(1)) for ln in lines]
    assert list(zip(deltas, ks, ns)) == sorted(zip(deltas, ks, ns))
    assert ns[:3] == [4, 8, 10]


def test_plot_separates_every_varying_setting_and_keeps_solver_names(results):
    from combex.experiments import plot_results, results_table

    df = results_table(results)
    ax = plot_results(df, "N")
    lines = {c.get_label(): c.lines[0] for c in ax.containers}  # one errorbar container per line
    # 2 solvers x 2 K x 2 delta: eight lines, none averaging two settings
    assert len(lines) == 8
    assert "lucb, K=1, delta=0.05" in lines and "lil-lucb, K=2, delta=0.1" in lines
    for line in lines.values():
        xs = list(line.get_xdata())
        assert xs == sorted(set(xs))  # one point per x
    one = df[(df.solver == "lucb") & (df.K == 1) & (df.delta == 0.05)]
    assert list(lines["lucb, K=1, delta=0.05"].get_ydata()) == pytest.approx(one.groupby("N")["samples"].mean().tolist())


def test_plot_command_writes_the_figure(results, tmp_path, capsys):
    out = tmp_path / "fig.png"
    assert main(["plot", str(results), "--x", "N", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000


@pytest.mark.parametrize("name,suggestion", [("LinGapE", "'lingape'"), ("ICB", "'icb'"), ("SAQM", "'saqm'"),
                                             ("Lucb++", "'lucb++'")])
def test_uppercase_solver_names_get_did_you_mean(name, suggestion, capsys):
    assert main(["run", name, "--instance", "soare"]) == 2
    err = capsys.readouterr().err
    assert f"Unknown solver {name!r}. Did you mean {suggestion}" in err

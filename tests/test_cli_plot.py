"""What the `combex` commands print and draw: `combex plot` never averages different
settings into one line, labels only the settings a line has and puts ticks where the runs
are; sweep summaries sort numbers as numbers; `combex run` writes counts as a reader does;
`combex list` names every solver's family; solver names in the wrong case get a
did-you-mean."""

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


MIXED = """
name = "mixed"
seed = 0
runs = 1
[[solvers]]
name = "icb"
[[solvers]]
name = "sa-foa"
grid = { growth = [0.05] }
[[instances]]
name = "kuroki-synthetic"
k = 2
gap = 1.0
grid = { n = [4, 6] }
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A sweep of icb (no growth setting) and sa-foa (growth 0.05), as in examples/icb-vs-safoa.toml:
    the table's growth column is NaN on icb's rows."""
    d = tmp_path_factory.mktemp("mixed")
    (d / "mixed.toml").write_text(MIXED)
    assert main(["sweep", str(d / "mixed.toml"), "--out", str(d / "m.csv")]) == 0
    return d / "m.csv"


def test_plot_labels_leave_out_settings_a_line_does_not_have(mixed):
    from combex.experiments import plot_results, results_table

    df = results_table(mixed)
    assert df["growth"].isna().any()  # icb has no growth setting
    ax = plot_results(df, "n")
    labels = sorted(c.get_label() for c in ax.containers)
    assert labels == ["icb", "sa-foa, growth=0.05"], labels


def test_plot_command_labels_and_ticks(mixed, tmp_path):
    out = tmp_path / "fig.png"
    assert main(["plot", str(mixed), "--x", "n", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_plot_ticks_sit_on_the_parameter_values(results, mixed):
    from combex.experiments import plot_results, results_table

    ax = plot_results(results_table(mixed), "n")
    assert list(ax.get_xticks()) == [4.0, 6.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "6"]
    ax = plot_results(results_table(results), "N", logx=True)
    assert list(ax.get_xticks()) == [4.0, 8.0, 10.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "10"]


def test_plot_ticks_are_integers_for_many_integer_values():
    import pandas as pd

    from combex.experiments import plot_results

    rows = [{"solver": "lucb", "solver_params": "{}", "instance": "x", "params": "{}", "run": 0, "n": n,
             "samples": 10 * n, "correct": True} for n in range(3, 40, 2)]
    ax = plot_results(pd.DataFrame(rows), "n")
    ax.figure.canvas.draw()
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_run_prints_mean_samples_with_thousands_separators(capsys):
    assert main(["run", "lucb", "--instance", "jiang-1sparse", "--set", "N=40", "--set", "K=2", "--runs", "2",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"mean samples ([\d,.e+]+),", out)
    assert m, out
    assert re.fullmatch(r"\d{1,3}(,\d{3})+", m.group(1)), m.group(1)  # e.g. 5,432; never 5.432e+03


@pytest.mark.parametrize("value,text", [(6778058.4, "6,778,058"), (1234.0, "1,234"), (12.5, "12.5"), (7.0, "7"),
                                        (float("nan"), "n/a"), (None, "n/a")])
def test_counts_are_written_as_a_reader_writes_them(value, text):
    from combex.cli import _fmt_count

    assert _fmt_count(value) == text


def test_list_names_a_family_for_every_solver(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    block = out.split("solvers:\n", 1)[1].split("decision classes:", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.startswith("  ")]
    assert len(lines) >= 25
    missing = [ln.split()[0] for ln in lines if not re.match(r"  \S+\s+\[[a-z, -]+\] ", ln)]
    assert not missing, missing
    for name in ("lin-elim", "lin-ts", "sub-elim", "sub-ts"):
        assert re.search(rf"^  {re.escape(name)}\s+\[sublinear\] ", block, flags=re.M), name

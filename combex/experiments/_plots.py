"""Plots of results (matplotlib, optional: ``pip install 'combex[plots]'``).

* :func:`plot_results` -- a metric (samples by default) against a parameter, one line per
  solver, mean with error bars (standard error by default);
* :func:`plot_time_per_round` -- wall time per round (stopping check) against ``n``;
* :func:`plot_traces` -- traces of a statistic over samples (approximation ratio of the
  quadratic oracle, stopping statistic...);
* :func:`plot_regret` -- cumulative regret curves (mean and a band over runs).

Each returns the matplotlib ``Axes`` and draws on ``ax`` when given.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import difflib
import json
import sys
import numpy as np

from ..exceptions import InvalidParameterError
from ._sweep import results_table

__all__ = ["summarize_table", "plot_results", "plot_time_per_round", "plot_traces", "plot_regret"]


def _plt() -> Any:
    try:
        # matplotlib is optional (the plots extra); pyplot after the backend is chosen
        import matplotlib

        if matplotlib.get_backend().lower() not in ("agg",) and not _interactive():
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the install
        raise ImportError("Plots need matplotlib: pip install 'combex[plots]'.") from None
    return plt


def _interactive() -> bool:
    return "ipykernel" in sys.modules or hasattr(sys, "ps1")


def _frame(results: Any) -> Any:
    if hasattr(results, "columns"):
        key = ["solver", "solver_params", "instance", "params", "run"]
        if all(c in results.columns for c in key):  # a run counted twice would weigh twice
            try:
                return results.drop_duplicates(subset=key, keep="first")
            except TypeError:  # unhashable cells (dicts): leave the frame as given
                return results
        return results
    return results_table(results)


def _column(df: Any, name: str, what: str) -> str:
    if name in df.columns:
        return name
    for pref in ("instance.", "solver."):
        if pref + name in df.columns:
            return pref + name
    if name == "time_per_round" and {"wall_seconds", "rounds"} <= set(df.columns):
        return name

    close = difflib.get_close_matches(name, list(map(str, df.columns)), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise InvalidParameterError(
        f"The {what!r} parameter must name a column of the results. Got {name!r} instead.{hint} "
        f"Columns: {', '.join(map(str, df.columns))}."
    )


def summarize_table(results: Any, by: Sequence[str], y: str = "samples") -> Any:
    """Mean, standard deviation, standard error, median and count of ``y`` (and the
    error rate) grouped by the columns ``by``."""
    df = _frame(results).copy()
    if y == "time_per_round":
        df[y] = df["wall_seconds"] / np.maximum(df["rounds"], 1)
    if y == "correct" or df[y].dtype == bool:
        df[y] = df[y].astype(float)
    g = df.groupby(list(by), dropna=False, sort=True)
    out = g[y].agg(["mean", "std", "median", "count"])
    out["sem"] = out["std"] / np.sqrt(out["count"])
    out["error_rate"] = 1.0 - g["correct"].mean() if "correct" in df.columns else np.nan
    return out.reset_index()


def _setting_columns(df: Any) -> list[str]:
    """The columns that define a setting: the instance, and every instance and solver
    parameter (the keys of the ``params`` / ``solver_params`` JSON of a results table)."""
    keys: list[str] = []
    for col in ("params", "solver_params"):
        if col in df.columns:
            for text in df[col].dropna().unique():
                try:
                    obj = json.loads(text) if isinstance(text, str) else dict(text)
                except (ValueError, TypeError):
                    continue
                keys += [k for k in obj if k not in keys]
    cols = [c for c in ("instance", *keys) if c in df.columns]
    cols += [c for c in df.columns if str(c).startswith(("instance.", "solver.")) and c not in cols]
    return cols


def _missing(v: Any) -> bool:
    """A setting a line's runs do not have (NaN or None in the table: e.g. ``growth`` on
    a solver without that parameter)."""
    return v is None or (isinstance(v, float) and v != v)


def _label(columns: Sequence[str], key: Sequence[Any]) -> str:
    """``"icb, gap=0.5"``: the solver name as is, other settings as name=value; a setting
    the line's runs do not have is left out (never ``growth=nan``)."""
    return ", ".join(str(v) if c == "solver" else f"{c}={_value_text(v)}"
                     for c, v in zip(columns, key) if not _missing(v))


def _value_text(v: Any) -> str:
    """A setting's value as written: integers without a decimal point (``n=8``, not ``8.0``)."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _set_ticks(ax: Any, values: Any, log: bool) -> None:
    """Ticks where the runs are: at the parameter's values when there are few of them,
    else at integers only when every value is an integer (never ``n = 6.5``)."""
    try:
        xs = np.unique(np.asarray(values, dtype=float))
    except (TypeError, ValueError):  # categorical x: matplotlib places the categories
        return
    xs = xs[np.isfinite(xs)]
    if xs.size == 0:
        return
    integral = bool(np.all(xs == np.round(xs)))
    if xs.size <= 12:
        ax.set_xticks(xs, [_value_text(float(x)) for x in xs])
        if log:
            ax.minorticks_off()
    elif integral and not log:
        from matplotlib.ticker import MaxNLocator  # matplotlib is optional (the plots extra)

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot_results(
    results: Any,
    x: str,
    y: str = "samples",
    *,
    hue: str | Sequence[str] = "solver",
    error: str = "sem",
    ax: Any = None,
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
) -> Any:
    """``y`` (mean over runs) against the parameter ``x``, one line per ``hue`` value.

    Parameters
    ----------
    results : DataFrame, rows or path
        A tidy results table (:func:`results_table`) or a results file.
    x, y : str
        Columns (``y="time_per_round"`` is wall seconds / rounds).
    hue : str or list of str
        Columns whose values make separate lines. Every other setting that varies in the
        results (the instance, any instance or solver parameter except ``x``) makes
        separate lines too, so runs of different settings are never averaged into one
        line; labels keep the solver names and show the other settings as ``name=value``.
    error : {"sem", "std", "none"}
        Error bars: standard error of the mean, standard deviation, or none.
    """
    if error not in ("sem", "std", "none"):
        raise InvalidParameterError(f"The 'error' parameter must be 'sem', 'std' or 'none'. Got {error!r} instead.")
    plt = _plt()
    df = _frame(results)
    x = _column(df, x, "x")
    y = _column(df, y, "y")
    hues = [hue] if isinstance(hue, str) else list(hue)
    hues = [_column(df, h, "hue") for h in hues]
    hues += [c for c in _setting_columns(df)
             if c not in hues and c != x and df[c].astype(str).nunique(dropna=False) > 1]
    s = summarize_table(df, hues + [x], y)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for key, grp in s.groupby(hues, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        label = _label(hues, key)
        grp = grp.sort_values(x)
        yerr = None if error == "none" else grp[error].fillna(0.0).to_numpy()
        ax.errorbar(grp[x].to_numpy(), grp["mean"].to_numpy(), yerr=yerr, marker="o", capsize=3, label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} (mean" + ("" if error == "none" else f" +- {error}") + ")")
    if logx:
        ax.set_xscale("log")
    _set_ticks(ax, s[x].to_numpy(), logx)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.legend()
    return ax


def plot_time_per_round(results: Any, x: str = "n", **kwargs: Any) -> Any:
    """Wall time per round (stopping check) against ``x`` (see :func:`plot_results`)."""
    return plot_results(results, x, "time_per_round", **kwargs)


def plot_traces(
    traces: Mapping[str, Any],
    key: str,
    *,
    t_key: str = "t",
    ax: Any = None,
    logx: bool = True,
    ylabel: str | None = None,
) -> Any:
    """Plot ``trace[key]`` against ``trace[t_key]`` for each labelled trace.

    ``traces`` maps a label to a :class:`~combex.solvers.Result` (its ``trace``) or to a
    dict of arrays, e.g. the approximation-ratio trace of SAQM (``key="ratio"``).
    """
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, tr in traces.items():
        tr = getattr(tr, "trace", tr)
        if tr is None or key not in tr:
            raise InvalidParameterError(
                f"The trace of {label!r} has no {key!r} entry (recorded keys: "
                f"{', '.join(sorted(tr)) if tr else 'none; run with trace=True'})."
            )
        yv = np.asarray(tr[key], dtype=float)
        tv = np.asarray(tr[t_key], dtype=float) if t_key in tr else np.arange(1, len(yv) + 1)
        ax.plot(tv, yv, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(t_key if t_key != "t" else "samples")
    ax.set_ylabel(ylabel or key)
    ax.legend()
    return ax


def plot_regret(curves: Mapping[str, Any], *, ax: Any = None, band: str = "sem") -> Any:
    """Cumulative regret curves: ``curves`` maps a label to an array of shape (T,), a
    list of such arrays (runs; mean and a ``band`` of "sem" or "std" are drawn), or
    objects with a ``curve`` attribute (:class:`~combex.solvers.RegretResult`)."""
    if band not in ("sem", "std", "none"):
        raise InvalidParameterError(f"The 'band' parameter must be 'sem', 'std' or 'none'. Got {band!r} instead.")
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0))
    for label, c in curves.items():
        if hasattr(c, "curve"):
            c = [c]
        runs = [np.asarray(getattr(r, "curve", r), dtype=float) for r in (c if _is_runs(c) else [c])]
        T = min(len(r) for r in runs)
        arr = np.stack([r[:T] for r in runs])
        mean = arr.mean(axis=0)
        t = np.arange(1, T + 1)
        (line,) = ax.plot(t, mean, label=label)
        if band != "none" and arr.shape[0] > 1:
            sd = arr.std(axis=0, ddof=1)
            w = sd / np.sqrt(arr.shape[0]) if band == "sem" else sd
            ax.fill_between(t, mean - w, mean + w, color=line.get_color(), alpha=0.2)
    ax.set_xlabel("t")
    ax.set_ylabel("cumulative regret")
    ax.legend()
    return ax


def _is_runs(c: Any) -> bool:
    if isinstance(c, np.ndarray):
        return c.ndim == 2
    return isinstance(c, (list, tuple)) and len(c) > 0 and (np.ndim(getattr(c[0], "curve", c[0])) == 1)

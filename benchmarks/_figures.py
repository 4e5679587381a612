"""The figures of the benchmark scripts: one ``--figures DIR`` option, one file-naming rule.

A script run with ``--figures DIR`` writes each figure of the sections it ran as
``DIR/<script>-<figure>.png`` (``<script>`` is the script's file name without ``.py``), so
the results pages embed ``docs/figures/<script>-<figure>.png`` and name, in the caption,
the command that wrote it. Figures plot samples and times as dots joined by lines on log
axes (never bars from an arbitrary baseline); a lower bound is a black dashed line and a
peer's published numbers are open markers beside ours.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: Colour and marker per solver name (lower case), the same on every page; other names get
#: the next free pair at first use.
STYLE: dict[str, tuple[str, str]] = {
    "icb": ("C3", "D"), "saqm": ("C0", "o"), "saqm(a=0.9)": ("C9", "o"), "saqm-th1": ("C9", "o"),
    "sa-foa": ("C2", "^"), "sa-foa cert": ("C8", "^"), "exhaustive": ("C7", "v"),
    "top-two": ("C1", "s"), "track-and-stop": ("C4", "P"), "fw-sampling": ("C5", "X"),
    "comb-game": ("C6", "*"), "lingame": ("C6", "*"), "rage": ("C8", "<"),
    "lingape": ("C0", "o"), "xy-static": ("C7", "v"), "xy-adaptive": ("C9", ">"), "xy-oracle": ("C2", "^"),
    "lucb": ("C7", "v"), "lil'lucb": ("C9", ">"), "lucb++": ("C2", "^"), "lil'randlucb": ("C1", "s"),
    "lil'clucb": ("C0", "o"), "lil'ucb": ("C4", "P"), "oracle sampler": ("0.35", "h"),
}
_CYCLE = ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


def add_option(ap: argparse.ArgumentParser) -> None:
    """Add ``--figures DIR`` to a benchmark script's parser."""
    ap.add_argument("--figures", type=Path, default=None, metavar="DIR",
                    help="write the figures of the sections run as PNG files DIR/<script>-<figure>.png "
                         "(the results pages use docs/figures)")


def pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "font.size": 9, "axes.grid": True,
                         "grid.alpha": 0.3, "legend.fontsize": 8, "legend.frameon": False})
    return plt


def style(name: str) -> dict[str, Any]:
    """Colour and marker of a solver, fixed at first use so every panel agrees."""
    key = name.lower()
    if key not in STYLE:
        used = set(STYLE.values())
        pairs = [(c, m) for m in _MARKERS for c in _CYCLE]
        STYLE[key] = next((pair for pair in pairs if pair not in used), pairs[len(STYLE) % len(pairs)])
    color, marker = STYLE[key]
    return {"color": color, "marker": marker}


def save(fig: Any, folder: Path, script: str, name: str) -> Path:
    """Write ``fig`` as ``folder/<script stem>-<name>.png`` and close it."""
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{Path(script).stem}-{name}.png"
    fig.savefig(path, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    print(f"  wrote {path}")
    return path


def bound_samples(res: Any) -> float:
    """The lower bound ``T* log(1/delta)`` a run was measured against: its samples over
    ``info["lower_bound_ratio"]`` (NaN when the run has no yardstick). For classes too
    large to enumerate it is a certified lower bound of ``T*`` (``lower_bound_ratio_kind``)."""
    ratio = res.info.get("lower_bound_ratio")
    return float(res.samples / ratio) if ratio else float("nan")

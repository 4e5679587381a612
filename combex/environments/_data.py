"""Where the data sets live.

Data are never shipped inside the package; data-backed environments and instances find
them through :func:`data_dir`:

1. an explicit ``path`` argument;
2. else the environment variable ``COMBEX_DATA``;
3. else the first existing of ``Path.cwd() / "../shared/data"`` and
   ``<repository root> / "../shared/data"`` (the repository root is the folder holding
   the ``combex`` package).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..exceptions import DataNotFoundError

__all__ = ["data_dir", "dataset_path", "ENV_VAR"]

#: Name of the environment variable pointing to the data root.
ENV_VAR = "COMBEX_DATA"


def _default_candidates() -> list[Path]:
    import combex

    repo_root = Path(combex.__file__).resolve().parents[1]
    return [Path.cwd() / ".." / "shared" / "data", repo_root / ".." / "shared" / "data"]


def _resolve_root(path: Any = None) -> tuple[Path | None, list[Path], str]:
    """Return (root or None, paths tried, how the root was chosen)."""
    if path is not None:
        p = Path(os.fspath(path)).expanduser()
        return (p.resolve() if p.is_dir() else None), [p], "the 'path' argument"
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env).expanduser()
        return (p.resolve() if p.is_dir() else None), [p], f"the {ENV_VAR} environment variable"
    tried = _default_candidates()
    for p in tried:
        if p.is_dir():
            return p.resolve(), tried, "the default locations"
    return None, tried, "the default locations"


def _not_found(what: str, tried: list[Path], how: str) -> DataNotFoundError:
    paths = ", ".join(str(p) for p in tried)
    return DataNotFoundError(
        f"{what} was not found (looked in {paths}, chosen by {how}). Set the {ENV_VAR} "
        f"environment variable (or pass data_dir=...) to the folder holding the combex "
        f"data sets."
    )


def data_dir(path: Any = None) -> Path:
    """The folder holding the combex data sets.

    Parameters
    ----------
    path : str or path-like, optional
        Explicit folder. When omitted, the environment variable ``COMBEX_DATA`` is used,
        else the first existing of ``Path.cwd()/"../shared/data"`` and
        ``<repository root>/../shared/data``.

    Returns
    -------
    pathlib.Path
        The resolved folder (it exists).

    Raises
    ------
    DataNotFoundError
        If the folder does not exist; the message names ``COMBEX_DATA`` and the paths
        tried.
    """
    root, tried, how = _resolve_root(path)
    if root is None:
        raise _not_found("The combex data folder", tried, how)
    return root


def dataset_path(name: str, path: Any = None) -> Path:
    """The folder of the data set ``name`` (e.g. ``"crowd-li2017-quiz"``).

    Parameters
    ----------
    name : str
        Folder name of the data set inside the data root.
    path : str or path-like, optional
        Data root, as for :func:`data_dir`.

    Raises
    ------
    DataNotFoundError
        If the data root or the data set folder is absent; the message names
        ``COMBEX_DATA`` and the paths tried.
    """
    root, tried, how = _resolve_root(path)
    if root is None:
        raise _not_found(f"The data set {name!r}", [p / name for p in tried], how)
    folder = root / name
    if not folder.is_dir():
        raise _not_found(f"The data set {name!r}", [folder], how)
    return folder

"""Where the data sets that are *not* shipped in the package live.

The small data sets (the Li et al. quiz, wine quality, diabetes) are packaged and need
nothing. The larger crowd-labelling sets are read from a data folder:

1. an explicit ``data_home`` (or ``path``) argument;
2. else the environment variable ``COMBEX_DATA``;
3. else, for the sets whose licence allows it, the download cache of
   :func:`combex.datasets.fetch` (``pooch.os_cache("combex")``).

The folder holds one sub-folder per data set, named as in
:data:`combex.datasets.CROWD_LABEL_SETS` (``crowd-zheng2017-truthinfer/duck/answer.csv``...).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..exceptions import DataNotFoundError

__all__ = ["data_dir", "dataset_path", "ENV_VAR"]

#: Name of the environment variable pointing to the data root.
ENV_VAR = "COMBEX_DATA"


def _resolve_root(path: Any = None) -> tuple[Path | None, list[Path], str]:
    """Return (root or None, paths tried, how the root was chosen)."""
    if path is not None:
        p = Path(os.fspath(path)).expanduser()
        return (p.resolve() if p.is_dir() else None), [p], "the 'data_home' argument"
    env = os.environ.get(ENV_VAR)
    if env:
        p = Path(env).expanduser()
        return (p.resolve() if p.is_dir() else None), [p], f"the {ENV_VAR} environment variable"
    return None, [], f"the {ENV_VAR} environment variable, which is not set"


def _not_found(what: str, tried: list[Path], how: str) -> DataNotFoundError:
    where = f"looked in {', '.join(str(p) for p in tried)}, " if tried else ""
    return DataNotFoundError(
        f"{what} was not found ({where}chosen by {how}). Set the {ENV_VAR} environment "
        f"variable (or pass data_home=...) to the folder holding the combex data sets."
    )


def data_dir(path: Any = None) -> Path:
    """The folder holding the larger (not packaged) combex data sets.

    Parameters
    ----------
    path : str or path-like, optional
        Explicit folder. When omitted, the environment variable ``COMBEX_DATA``.

    Returns
    -------
    pathlib.Path
        The resolved folder (it exists).

    Raises
    ------
    DataNotFoundError
        If the folder does not exist or ``COMBEX_DATA`` is unset; the message names
        ``COMBEX_DATA`` and the paths tried.
    """
    root, tried, how = _resolve_root(path)
    if root is None:
        raise _not_found("The combex data folder", tried, how)
    return root


def dataset_path(name: str, path: Any = None) -> Path:
    """The folder of the data set ``name`` (e.g. ``"crowd-snow2008"``) in the data root.

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

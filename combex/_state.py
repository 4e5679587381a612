"""Saving and loading exploration states: JSON for the structure, ``.npz`` for arrays.

No pickle is ever read (``np.load(..., allow_pickle=False)``), so a saved state from an
untrusted source cannot execute code. A state dict may hold JSON scalars, lists, dicts
and numpy arrays at any depth; arrays are moved into the ``.npz`` file and replaced by a
reference ``{"__array__": key}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import StateError

__all__ = ["save_state", "load_state", "split_arrays", "join_arrays"]

FORMAT_VERSION = 1


def split_arrays(obj: Any, arrays: dict[str, np.ndarray], prefix: str = "a") -> Any:
    """Replace numpy arrays in ``obj`` by references, collecting them in ``arrays``."""
    if isinstance(obj, np.ndarray):
        key = f"{prefix}{len(arrays)}"
        arrays[key] = obj
        return {"__array__": key}
    if isinstance(obj, dict):
        return {str(k): split_arrays(v, arrays, prefix) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [split_arrays(v, arrays, prefix) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def join_arrays(obj: Any, arrays: Any) -> Any:
    """Inverse of :func:`split_arrays`."""
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return np.array(arrays[obj["__array__"]])
        return {k: join_arrays(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [join_arrays(v, arrays) for v in obj]
    return obj


def save_state(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``state`` to ``path`` (JSON) and ``path`` + ``.npz`` (arrays), atomically.

    Returns the JSON path. Both files carry the same random nonce, checked on load, so a
    save interrupted between the two replacements is detected (not silently mixed).
    """
    p = Path(path)
    arrays: dict[str, np.ndarray] = {}
    nonce = os.urandom(8).hex()
    doc = {"format": "combex-state", "version": FORMAT_VERSION, "nonce": nonce,
           "state": split_arrays(state, arrays)}
    arrays["__nonce__"] = np.array(nonce)
    tmp_json = p.with_name(p.name + ".tmp")
    tmp_npz = p.with_name(p.name + ".tmp.npz")
    with open(tmp_npz, "wb") as fh:
        np.savez(fh, **arrays)
    tmp_json.write_text(json.dumps(doc))
    os.replace(tmp_npz, p.with_name(p.name + ".npz"))
    os.replace(tmp_json, p)
    return p


def load_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a state written by :func:`save_state` (never unpickles)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise StateError(f"No saved state at {str(p)!r}.") from None
    except json.JSONDecodeError as exc:
        raise StateError(f"The file {str(p)!r} is not a combex state ({exc}).") from None
    if not isinstance(doc, dict) or doc.get("format") != "combex-state":
        raise StateError(f"The file {str(p)!r} is not a combex state.")
    try:
        with np.load(p.with_name(p.name + ".npz"), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise StateError(f"The arrays of the saved state {str(p)!r} ({p.name}.npz) are missing.") from None
    nonce = arrays.pop("__nonce__", None)
    if "nonce" in doc and (nonce is None or str(nonce) != doc["nonce"]):
        raise StateError(
            f"The saved state {str(p)!r} and its arrays {p.name}.npz come from different saves "
            "(interrupted while saving?); the previous complete save was overwritten."
        )
    return join_arrays(doc["state"], arrays)

"""Saving and loading exploration states: JSON for the structure, ``.npz`` for arrays.

No pickle is ever read (``np.load(..., allow_pickle=False)``), so a saved state from an
untrusted source cannot execute code. A state dict may hold JSON scalars, lists, dicts
and numpy arrays at any depth; arrays are moved into the ``.npz`` file and replaced by a
reference ``{"__array__": key}``.

Crash safety: a save has **one commit point**. The arrays are written to a fresh temporary
file (``tempfile``: ``O_CREAT | O_EXCL`` in the target directory, so a planted symlink is
never followed), flushed to disk and renamed to ``<name>.<hash>.npz``, a name given by
the hash of its content (a new name, so the previous save stays intact); the JSON, which
names that file and records its SHA-256, is then written the same way and renamed over
``<name>`` in one atomic ``os.replace``. A process killed at any instant therefore leaves
either the previous save or the new one, both loadable; array files no longer named by
the JSON are deleted after the commit. States written by earlier versions (JSON plus
``<name>.npz`` with a shared nonce) still load.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import StateError

__all__ = ["save_state", "load_state", "split_arrays", "join_arrays", "restore_generator",
           "BIT_GENERATORS"]

FORMAT_VERSION = 2

#: The numpy bit generators a saved state may name; a saved file never chooses another
#: attribute of ``numpy.random`` to call.
BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")


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


def join_arrays(obj: Any, arrays: Any, where: str = "state") -> Any:
    """Inverse of :func:`split_arrays`; a reference to a missing array raises
    :class:`~combex.exceptions.StateError` naming the field (``where``)."""
    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            key = obj["__array__"]
            try:
                return np.array(arrays[key])
            except (KeyError, TypeError):
                raise StateError(f"The field {where!r} refers to an array {key!r} that the saved arrays "
                                 "do not hold.") from None
        return {k: join_arrays(v, arrays, f"{where}.{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        return [join_arrays(v, arrays, f"{where}[{i}]") for i, v in enumerate(obj)]
    return obj


def restore_generator(name: Any, state: Any, *, source: str = "the saved state",
                      field: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` on the bit generator ``name`` (one of
    :data:`BIT_GENERATORS`) put in ``state``; anything else raises
    :class:`~combex.exceptions.StateError` naming ``source`` and ``field``."""
    if not isinstance(name, str) or name not in BIT_GENERATORS:
        raise StateError(
            f"{source}: the field {field + '_type'!r} must name a numpy bit generator "
            f"({', '.join(BIT_GENERATORS)}). Got {name!r} instead."
        )
    bg = getattr(np.random, name)()
    try:
        bg.state = state
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise StateError(f"{source}: the field {field!r} is not a valid {name} state ({exc}).") from None
    return np.random.Generator(bg)


def generator_state(gen: np.random.Generator) -> dict[str, Any]:
    """The state of the bit generator of ``gen`` (what :func:`restore_generator` takes)."""
    return gen.bit_generator.state


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. a platform without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _write_temp(d: Path, name: str, data: bytes) -> str:
    """Write ``data`` to a new temporary file in ``d`` (O_EXCL, never through a symlink),
    fsynced; returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:  # pragma: no cover
            pass
        raise
    return tmp


def _arrays_pattern(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name) + r"\.[0-9a-f]{16}\.npz")


def save_state(state: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``state`` to ``path`` (JSON) and ``<path>.<hash>.npz`` (arrays) with one
    commit point (see the module docstring); returns the JSON path."""
    p = Path(path)
    d = p.parent if str(p.parent) else Path(".")
    arrays: dict[str, np.ndarray] = {}
    tree = split_arrays(state, arrays)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    npz_name = f"{p.name}.{digest[:16]}.npz"
    doc = {"format": "combex-state", "version": FORMAT_VERSION, "arrays": npz_name, "sha256": digest,
           "state": tree}
    tmp_npz = _write_temp(d, p.name, data)
    try:
        tmp_json = _write_temp(d, p.name, json.dumps(doc).encode())
    except BaseException:
        os.unlink(tmp_npz)
        raise
    os.replace(tmp_npz, d / npz_name)  # a new name: the previous save is untouched
    _fsync_dir(d)
    os.replace(tmp_json, p)  # the commit point
    _fsync_dir(d)
    # Clean up what no save names any more: older array files, the arrays of a save in
    # the old format, temporaries left by a killed save.
    pat = _arrays_pattern(p.name)
    for f in d.iterdir():
        fn = f.name
        stale = (fn != npz_name and pat.fullmatch(fn)) or fn == p.name + ".npz" or (
            fn.startswith(f".{p.name}.") and fn.endswith(".tmp") and str(f) not in (tmp_npz, tmp_json))
        if stale:
            try:
                f.unlink()
            except OSError:  # pragma: no cover - removed concurrently
                pass
    return p


def _read_arrays(p: Path, npz: Path) -> dict[str, np.ndarray]:
    try:
        data = npz.read_bytes()
    except FileNotFoundError:
        raise StateError(f"The arrays of the saved state {str(p)!r} ({npz.name}) are missing.") from None
    return _parse_npz(p, npz, data)


def _parse_npz(p: Path, npz: Path, data: bytes) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise StateError(f"The arrays of the saved state {str(p)!r} ({npz.name}) are corrupt "
                         f"({type(exc).__name__}: {exc}).") from None


def load_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a state written by :func:`save_state` (never unpickles).

    Raises :class:`~combex.exceptions.StateError` naming the file (and the field) when it
    is missing, not a combex state, or damaged.
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise StateError(f"No saved state at {str(p)!r}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateError(f"The file {str(p)!r} is not a combex state ({exc}).") from None
    except IsADirectoryError:
        raise StateError(f"The path {str(p)!r} is a directory, not a saved state.") from None
    if not isinstance(doc, dict) or doc.get("format") != "combex-state":
        raise StateError(f"The file {str(p)!r} is not a combex state.")
    if not isinstance(doc.get("state"), dict):
        raise StateError(f"The saved state {str(p)!r} has no 'state' field (a table).")
    if "arrays" in doc:  # version 2: the JSON names its arrays by content hash
        name = doc["arrays"]
        if not isinstance(name, str) or not _arrays_pattern(p.name).fullmatch(name):
            raise StateError(f"The saved state {str(p)!r}: the field 'arrays' must name "
                             f"{p.name}.<hash>.npz next to it. Got {name!r} instead.")
        npz = p.with_name(name)
        try:
            data = npz.read_bytes()
        except FileNotFoundError:
            raise StateError(f"The arrays of the saved state {str(p)!r} ({name}) are missing.") from None
        if hashlib.sha256(data).hexdigest() != doc.get("sha256"):
            raise StateError(f"The arrays of the saved state {str(p)!r} ({name}) do not match the "
                             "hash recorded in the field 'sha256' (damaged or replaced).")
        arrays = _parse_npz(p, npz, data)
    else:  # version 1: <path>.npz with a nonce shared with the JSON
        arrays = _read_arrays(p, p.with_name(p.name + ".npz"))
        nonce = arrays.pop("__nonce__", None)
        if "nonce" in doc and (nonce is None or str(nonce) != doc["nonce"]):
            raise StateError(
                f"The saved state {str(p)!r} and its arrays {p.name}.npz come from different saves "
                "(interrupted while saving?); the previous complete save was overwritten."
            )
    try:
        return join_arrays(doc["state"], arrays)
    except StateError as exc:
        raise StateError(f"The saved state {str(p)!r}: {exc}") from None

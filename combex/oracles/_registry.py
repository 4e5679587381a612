"""Registry of decision classes: built-ins by name, plug-ins through entry points.

A third-party package exposes its own decision class to combex (and to the ``combex``
command) by declaring an entry point in the group ``combex.oracles``::

    [project.entry-points."combex.oracles"]
    my-class = "my_package.module:MyDecisionClass"

Entry points are loaded lazily, the first time a name is not found among the built-ins or
the registered classes are listed. A plug-in that fails to load gives a
:class:`~combex.exceptions.CombexWarning`, never a crash.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import warnings
from typing import Any, Callable, TypeVar

from .._validation import param_error
from ..exceptions import CombexWarning, InvalidParameterError
from ._base import DecisionClass

__all__ = [
    "DECISION_CLASSES",
    "ENTRY_POINT_GROUP",
    "register_decision_class",
    "get_decision_class",
    "make_decision_class",
    "list_decision_classes",
]

ENTRY_POINT_GROUP = "combex.oracles"

#: Registered decision classes, by name (built-ins, user registrations, loaded plug-ins).
DECISION_CLASSES: dict[str, type] = {}

_BUILTIN_MODULES = ("_topk", "_matroids", "_graphs", "_explicit", "_cpsat")
_plugins_loaded = False

T = TypeVar("T", bound=type)


def register_decision_class(name: str, *, replace: bool = False) -> Callable[[T], T]:
    """Class decorator registering a :class:`~combex.oracles.DecisionClass` under ``name``.

    Parameters
    ----------
    name : str
        Registry name (the CLI spells it), e.g. ``"conflict-free-teams"``.
    replace : bool, default=False
        Allow replacing a different class already registered under ``name``.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a non-empty string, the class is not a DecisionClass subclass,
        or the name is taken by another class and ``replace`` is False.

    Examples
    --------
    >>> from combex.oracles import DecisionClass, register_decision_class
    >>> @register_decision_class("my-doc-class")
    ... class Mine(DecisionClass):
    ...     def __init__(self, n=3):
    ...         self.n = n
    ...     def argmax(self, weights):
    ...         import numpy as np
    ...         return np.ones(self.n, dtype=bool)
    >>> Mine.name
    'my-doc-class'
    >>> _ = DECISION_CLASSES.pop("my-doc-class")
    """
    if not isinstance(name, str) or not name.strip():
        raise param_error("name", "register_decision_class", "a non-empty str", name)

    def decorator(cls: T) -> T:
        if not (isinstance(cls, type) and issubclass(cls, DecisionClass)):
            raise param_error("cls", "register_decision_class", "a subclass of DecisionClass", cls)
        old = DECISION_CLASSES.get(name)
        if old is not None and old is not cls and not _same_class(old, cls) and not replace:
            raise InvalidParameterError(
                f"The decision-class name {name!r} is already registered to "
                f"{old.__module__}.{old.__qualname__}; pass replace=True to replace it."
            )
        if "name" not in cls.__dict__ or not cls.__dict__["name"]:
            cls.name = name  # type: ignore[attr-defined]
        DECISION_CLASSES[name] = cls
        return cls

    return decorator


def _same_class(a: type, b: type) -> bool:
    # the same class defined again (a module reloaded): replacing it is harmless
    return (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)


def _load_builtins() -> None:
    for mod in _BUILTIN_MODULES:
        importlib.import_module(f"combex.oracles.{mod}")


def _load_plugins(*, force: bool = False) -> None:
    """Register the classes of the ``combex.oracles`` entry points (once, unless forced).

    Each failing entry point (import error, not a DecisionClass, name clash with a
    different class) gives a CombexWarning and is skipped.
    """
    global _plugins_loaded
    if _plugins_loaded and not force:
        return
    _plugins_loaded = True
    try:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as exc:  # a broken distribution's metadata
        warnings.warn(
            f"Could not read the {ENTRY_POINT_GROUP!r} entry points: {exc!r}", CombexWarning, stacklevel=3
        )
        return
    for ep in eps:
        try:
            obj = ep.load()
        except Exception as exc:
            warnings.warn(
                f"The decision-class plug-in {ep.name!r} ({ep.value}) failed to load: {exc!r}. "
                "It is skipped.",
                CombexWarning,
                stacklevel=3,
            )
            continue
        if not (isinstance(obj, type) and issubclass(obj, DecisionClass)):
            warnings.warn(
                f"The decision-class plug-in {ep.name!r} ({ep.value}) is not a subclass of "
                f"combex.oracles.DecisionClass (got {obj!r}). It is skipped.",
                CombexWarning,
                stacklevel=3,
            )
            continue
        old = DECISION_CLASSES.get(ep.name)
        if old is not None and old is not obj and not _same_class(old, obj):
            warnings.warn(
                f"The decision-class plug-in {ep.name!r} ({ep.value}) clashes with the "
                f"registered class {old.__module__}.{old.__qualname__}. It is skipped.",
                CombexWarning,
                stacklevel=3,
            )
            continue
        if "name" not in obj.__dict__ or not obj.__dict__["name"]:
            obj.name = ep.name  # type: ignore[attr-defined]
        DECISION_CLASSES[ep.name] = obj


def get_decision_class(name: str) -> type:
    """The decision class registered under ``name``.

    Built-ins are looked up first; plug-ins (entry-point group ``combex.oracles``) are
    loaded when the name is not a built-in.

    Raises
    ------
    InvalidParameterError
        If no class has this name; the message suggests the closest names.

    Examples
    --------
    >>> from combex.oracles import get_decision_class
    >>> get_decision_class("topk").__name__
    'TopK'
    """
    if not isinstance(name, str):
        raise param_error("name", "get_decision_class", "a str", name)
    _load_builtins()
    if name not in DECISION_CLASSES:
        _load_plugins()
    try:
        return DECISION_CLASSES[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(DECISION_CLASSES), n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise InvalidParameterError(
            f"Unknown decision class {name!r}.{hint} "
            f"Known decision classes: {', '.join(sorted(DECISION_CLASSES))}."
        ) from None


def make_decision_class(name: str, **params: Any) -> Any:
    """Instantiate the decision class registered under ``name`` with ``params``.

    Examples
    --------
    >>> from combex.oracles import make_decision_class
    >>> make_decision_class("topk", n=5, k=2)
    TopK(n=5, k=2)
    """
    cls = get_decision_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        raise InvalidParameterError(
            f"Could not build the decision class {name!r} ({cls.__name__}) from parameters "
            f"{sorted(params)}: {exc}"
        ) from None


def list_decision_classes() -> list[str]:
    """Sorted names of all registered decision classes, plug-ins included."""
    _load_builtins()
    _load_plugins()
    return sorted(DECISION_CLASSES)

"""Named instances from the papers (the ``--instance`` names of the CLI).

Each instance is a builder ``f(rng=..., **params) -> Environment`` registered under the name
used in DESIGN.md. Builders that live with their solver family are imported lazily, so a
missing optional dependency of one family does not break the others.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from ..exceptions import InvalidParameterError

__all__ = ["InstanceSpec", "INSTANCES", "register_instance", "get_instance", "make_instance", "list_instances",
           "check_instance_params"]


@dataclass(frozen=True)
class InstanceSpec:
    """A named instance: where its builder lives and what it is."""

    name: str
    target: str  # "module:function"
    summary: str
    family: str  # which solver family it is meant for: full-bandit, semi-bandit, linear, mips

    def builder(self) -> Callable[..., Any]:
        mod, fn = self.target.split(":")
        return getattr(importlib.import_module(mod), fn)

    def parameters(self) -> dict[str, Any]:
        """Builder parameters with their defaults (``inspect.Parameter.empty`` if required)."""
        sig = inspect.signature(self.builder())
        return {p.name: p.default for p in sig.parameters.values() if p.name != "rng"}


INSTANCES: dict[str, InstanceSpec] = {}


def register_instance(name: str, target: str, summary: str, family: str) -> None:
    """Register a named instance for ``combex run --instance NAME`` and sweeps.

    ``target`` is ``"module:function"``, the builder called with the instance parameters
    (``--set key=value``) and ``rng``; ``family`` is the solver family it suits
    (``"full-bandit"``, ``"semi-bandit"``, ``"linear"``, ``"mips"``).
    """
    INSTANCES[name] = InstanceSpec(name, target, summary, family)


def get_instance(name: str) -> InstanceSpec:
    """The registered instance ``name``; an unknown name raises InvalidParameterError listing
    the known ones."""
    try:
        return INSTANCES[name]
    except KeyError:
        close = difflib.get_close_matches(name, INSTANCES, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise InvalidParameterError(
            f"Unknown instance {name!r}.{hint} Known instances: {', '.join(sorted(INSTANCES))}."
        ) from None


def check_instance_params(name: str, params: Any) -> None:
    """Check that ``name`` is a registered instance and ``params`` only names parameters
    of its builder (values are checked by the builder); suggests the closest names."""
    spec = get_instance(name)
    sig = inspect.signature(spec.builder())
    known = [p for p in sig.parameters if p != "rng"]
    unknown = [p for p in dict(params) if p not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        close = close or [k for k in known if k.lower() == unknown[0].lower()]
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(
            f"Instance {name!r} has no parameter {unknown[0]!r}.{hint} Its parameters: {', '.join(known)}."
        )


def make_instance(name: str, *, rng: Any = None, **params: Any) -> Any:
    """Build the environment of instance ``name`` with ``params`` (validated by the builder)."""
    check_instance_params(name, params)
    return get_instance(name).builder()(rng=rng, **params)


def list_instances() -> list[InstanceSpec]:
    """Every registered instance, sorted by name."""
    return [INSTANCES[k] for k in sorted(INSTANCES)]


_ENV = "combex.environments"
register_instance("kuroki-synthetic", f"{_ENV}._instances_full:kuroki_synthetic",
                  "top-k with full-bandit feedback, Kuroki et al. Section 5 (n, k, gap)", "full-bandit")
register_instance("topk-gaussian", f"{_ENV}._instances_full:topk_gaussian",
                  "top-k with full-bandit feedback from given means (means, k, sigma)", "full-bandit")
register_instance("lab-teams", f"{_ENV}._instances_full:lab_teams",
                  "the lab study: 12 workers, best team of 4, session noise sd 10, unknown noise (n, k, noise_sd)",
                  "full-bandit")
register_instance("crowd", f"{_ENV}._instances_full:crowd",
                  "team selection on the Li et al. quiz data, full-bandit replay (dataset, k)", "full-bandit")
register_instance("jiang-1sparse", f"{_ENV}._instances_semi:jiang_1sparse",
                  "Best-K: K arms at 1/2, the rest at 0 (Jiang et al. Section 5) (N, K)", "semi-bandit")
register_instance("jiang-exponential", f"{_ENV}._instances_semi:jiang_exponential",
                  "Best-K with exponentially decaying means (N, K, alpha)", "semi-bandit")
register_instance("lil-exponential", f"{_ENV}._instances_semi:lil_exponential",
                  "Best-1 with exponentially decaying means (N, alpha)", "semi-bandit")
register_instance("soare", f"{_ENV}._instances_linear:soare",
                  "linear best arm, Soare et al. hard instance (d)", "linear")
register_instance("canonical", f"{_ENV}._instances_linear:canonical",
                  "linear best arm, canonical instance of Xu et al. (d, gap)", "linear")
register_instance("diabetes-linear", f"{_ENV}._instances_linear:diabetes_linear",
                  "linear best arm on the scikit-learn diabetes features, +-1 rewards (n_arms)", "linear")
register_instance("wine-linear", f"{_ENV}._instances_linear:wine_linear",
                  "linear best arm on the wine-quality features, +-1 rewards (n_arms, color)", "linear")
register_instance("mips-gaussian", f"{_ENV}._mips_instances:mips_gaussian_env",
                  "MIPS of one query over Gaussian vectors as reward lists (n, dim; solver k)", "mips")
register_instance("mips-uniform", f"{_ENV}._mips_instances:mips_uniform_env",
                  "MIPS of one query over uniform vectors as reward lists (n, dim; solver k)", "mips")
register_instance("mips-adversarial", f"{_ENV}._mips_instances:mips_adversarial_env",
                  "adversarial 0/1 reward lists of the BoundedME paper (n, dim; solver k)", "mips")
register_instance("sublinear-synthetic", f"{_ENV}._mips_instances:sublinear_synthetic",
                  "growing arm set linear bandit of the sublinear paper (K, d, T, change)", "sublinear")

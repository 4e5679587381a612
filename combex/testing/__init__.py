"""Public conformance checks, for built-in and plug-in components alike.

- :func:`check_decision_class` — the :class:`~combex.oracles.DecisionClass` contract.
"""

from __future__ import annotations

from ._decision_class import check_decision_class

__all__ = ["check_decision_class"]

"""Public conformance checks, for built-in and plug-in components alike.

- :func:`check_decision_class` — the :class:`~combex.oracles.DecisionClass` contract.
- :func:`check_storage` — the study storage contract (:class:`~combex.studies.BaseStorage`).
"""

from __future__ import annotations

from ..studies.testing import check_storage
from ._decision_class import check_decision_class

__all__ = ["check_decision_class", "check_storage"]

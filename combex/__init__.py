"""combex: pure exploration in structured bandits.

Identify the best team of k workers when only the team's total score is observed, the
best base of a matroid, the best arm of a linear model, or the top inner product in a huge
vector set, with a guaranteed error probability and as few noisy evaluations as possible.

Subpackages: :mod:`combex.oracles` (decision classes and quadratic maximization),
:mod:`combex.allocations`, :mod:`combex.environments`, :mod:`combex.estimation`,
:mod:`combex.solvers`, :mod:`combex.mips`, :mod:`combex.experiments`,
:mod:`combex.testing`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import exceptions
from .exceptions import CombexError, InvalidParameterError

__all__ = ["__version__", "exceptions", "CombexError", "InvalidParameterError"]

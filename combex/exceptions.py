"""The combex error tree.

Every error raised on bad input or on a failed computation is a :class:`CombexError`, so
callers can catch the whole family; errors on arguments are also :class:`ValueError`.

::

    CombexError(Exception)
     ├─ InvalidParameterError(CombexError, ValueError)   # bad argument value
     ├─ InfeasibleError(CombexError)                     # empty decision class, no feasible z
     ├─ OracleError(CombexError)                         # an oracle broke its contract
     ├─ AllocationError(CombexError)                     # a design solve failed
     ├─ DataNotFoundError(CombexError, FileNotFoundError)# a data set is absent
     └─ StateError(CombexError)                          # ask/tell misuse, bad saved state
    CombexWarning(UserWarning)
     ├─ ConvergenceWarning(CombexWarning)
     └─ TieWarning(CombexWarning)                        # epsilon = 0 on a tied optimum
"""

from __future__ import annotations

__all__ = [
    "CombexError",
    "InvalidParameterError",
    "InfeasibleError",
    "OracleError",
    "AllocationError",
    "DataNotFoundError",
    "StateError",
    "CombexWarning",
    "TieWarning",
    "NoiseScaleWarning",
    "ConvergenceWarning",
]


class CombexError(Exception):
    """Base class of every error combex raises on purpose."""


class InvalidParameterError(CombexError, ValueError):
    """An argument has an invalid type or value; the message names both."""


class InfeasibleError(CombexError):
    """A decision class is empty or a constraint system has no feasible member."""


class OracleError(CombexError):
    """A maximization oracle broke its contract (wrong shape, infeasible answer...)."""


class AllocationError(CombexError):
    """An optimal-design computation failed (solver status, singular design...)."""


class DataNotFoundError(CombexError, FileNotFoundError):
    """A data set needed by a data-backed environment or instance is absent."""


class StateError(CombexError):
    """An exploration was misused (tell without ask, ask after done) or a saved state
    does not match the solver it is loaded into."""


class CombexWarning(UserWarning):
    """Base class of combex warnings."""


class ConvergenceWarning(CombexWarning):
    """An iterative method stopped before reaching its tolerance."""


class TieWarning(CombexWarning):
    """epsilon = 0 on an instance with tied optimal answers: exact identification cannot stop."""


class NoiseScaleWarning(CombexWarning):
    """The observations contradict the declared noise scale (a valid test of the declared
    variance rejected it): an answer stopped under that scale is not (epsilon, delta)-correct."""

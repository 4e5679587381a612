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
     ├─ StateError(CombexError)                          # ask/tell misuse, bad saved state
     │   └─ StudyFinishedError                           # a live study has stopped
     ├─ TicketError(InvalidParameterError)               # a tell no study can accept
     ├─ StorageError(CombexError)                        # a study storage cannot be used
     │   ├─ SchemaVersionError, DuplicatedStudyError
     │   └─ StudyNotFoundError(StorageError, KeyError)
     ├─ ConfigError(CombexError, ValueError)             # a malformed sweep configuration
     └─ ResultsFileError(CombexError)                    # a results file of another sweep
    CombexWarning(UserWarning)
     ├─ ConvergenceWarning(CombexWarning)
     ├─ TieWarning(CombexWarning)                        # epsilon = 0 on a tied optimum
     └─ NoiseScaleWarning(CombexWarning)                 # data contradict the declared noise

The errors of live studies are also exported by :mod:`combex.studies`, those of sweeps by
:mod:`combex.experiments`.
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
    "StorageError",
    "SchemaVersionError",
    "StudyNotFoundError",
    "DuplicatedStudyError",
    "TicketError",
    "StudyFinishedError",
    "ConfigError",
    "ResultsFileError",
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


class StorageError(CombexError):
    """A storage cannot be reached, or holds something combex cannot read."""


class SchemaVersionError(StorageError):
    """The storage was written with a schema version this combex does not know."""


class StudyNotFoundError(StorageError, KeyError):
    """No study of that name in the storage."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DuplicatedStudyError(StorageError):
    """A study of that name exists (with other settings, or ``load_if_exists=False``)."""


class TicketError(InvalidParameterError):
    """A tell for an unknown, expired or already told ticket, or with a reward out of range."""


class StudyFinishedError(StateError):
    """A live study has stopped (``identified``): there is nothing more to ask or tell."""


class ConfigError(CombexError, ValueError):
    """A sweep configuration is malformed (the message names the file and the key)."""


class ResultsFileError(CombexError):
    """An output file cannot be used: it is not a combex results file, or it holds the
    results of a different sweep."""


class CombexWarning(UserWarning):
    """Base class of combex warnings."""


class ConvergenceWarning(CombexWarning):
    """An iterative method stopped before reaching its tolerance."""


class TieWarning(CombexWarning):
    """epsilon = 0 on an instance with tied optimal answers: exact identification cannot stop."""


class NoiseScaleWarning(CombexWarning):
    """The observations contradict the declared noise scale (a valid test of the declared
    variance rejected it): an answer stopped under that scale is not (epsilon, delta)-correct."""

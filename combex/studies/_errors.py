"""Errors of live studies (all :class:`~combex.exceptions.CombexError`)."""

from __future__ import annotations

from ..exceptions import CombexError, InvalidParameterError, StateError

__all__ = [
    "StorageError",
    "SchemaVersionError",
    "StudyNotFoundError",
    "DuplicatedStudyError",
    "TicketError",
    "StudyFinishedError",
]


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
    """The study has stopped (``identified``): there is nothing more to ask or tell."""

"""Exceptions raised by pldp.

Every error pldp raises on bad input derives from :class:`PLDPError`, so a caller can catch
one class. Each subclass also derives from the matching built-in (``ValueError``,
``KeyError``) so that generic handlers keep working.
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "DomainError",
    "EstimationError",
    "PLDPError",
    "ParameterError",
    "ReportError",
    "SolverError",
    "SpecError",
    "TallyError",
]


class PLDPError(Exception):
    """Base class of every exception raised by pldp."""


class ParameterError(PLDPError, ValueError):
    """A parameter is outside its allowed range (e.g. epsilon <= 0, NaN, wrong shape)."""


class DomainError(PLDPError, ValueError):
    """Values that are not in the domain, or a domain that is not valid (duplicate labels)."""


class BudgetError(PLDPError, ValueError):
    """A privacy-budget assignment that is not valid for the mechanism or policy."""


class TallyError(PLDPError, ValueError):
    """Reports or counts that cannot be tallied (negative, non-integer, wrong length)."""


class EstimationError(PLDPError, ValueError):
    """An estimator cannot run on the given mechanism and tally."""


class SolverError(PLDPError, RuntimeError):
    """A numerical solver found no acceptable (e.g. feasible) solution; the message holds its diagnostics."""


class SpecError(PLDPError, ValueError):
    """A campaign spec that is malformed, altered (its id does not match), or fails its privacy claim."""


class ReportError(PLDPError, ValueError):
    """Wire reports that cannot be decoded; the message names the first bad report and why.

    Attributes
    ----------
    index : int or None
        Position of the first bad report in its batch.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index

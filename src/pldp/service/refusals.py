"""What the collector's writer jobs refuse, as domain errors: no HTTP status here.

A job of the writer (:mod:`pldp.service.writer`: :mod:`pldp.service.collect`,
:mod:`pldp.service.codes`) that refuses a change raises a :class:`RefusalError` of the kind that says
why (the campaign is unknown, it conflicts with what is stored, ...), with a short ``code`` and a
``reason`` for people. :mod:`pldp.service.errors` maps each kind to its HTTP status, in one table
(:data:`pldp.service.errors.REFUSAL_STATUS`), for the routes and the fast path of report
submission alike.
"""

from __future__ import annotations

__all__ = ["ConflictError", "InvalidError", "NotFoundError", "RefusalError", "UnauthorizedError"]


class RefusalError(Exception):
    """A change the collector refuses: a short ``code`` (``campaign_closed``, say) and a ``reason``."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class InvalidError(RefusalError):
    """The request is malformed (a round schedule that does not exist, a cap that is not a positive count)."""


class UnauthorizedError(RefusalError):
    """The credential that came with it does not allow it (a respondent code unknown, expired or revoked)."""


class NotFoundError(RefusalError):
    """What it names does not exist (a campaign, a token)."""


class ConflictError(RefusalError):
    """It conflicts with the stored state (a closed or full campaign, a round that is not open, a
    setting fixed at creation, a token used before)."""


def unknown_campaign(campaign_id: str, what: str = "") -> NotFoundError:  # not a kind: not in __all__
    """The refusal of a campaign the store does not hold: ``unknown_campaign``, ``no campaign {id}``
    (then ``what``, if given: `` to grant``)."""
    return NotFoundError("unknown_campaign", f"no campaign {campaign_id}{what}")

"""The tallies of a free-text campaign: its number of reports (the collector's running tally), and its
reports themselves (what an aggregation of report files merges and discovers from).

:class:`ReportCount` is the first, :class:`ReportRows` the second.

A frequency oracle's tally is a sufficient statistic of its reports (counts per item, per bit), so
the collector keeps it instead of the reports. A heavy-hitter protocol has none smaller than the
reports themselves: a local-hashing report's seed is one of ``2^31``, and which candidates its value
supports is known only once the candidates are (:mod:`pldp.heavy.tree`). So the collector keeps the
reports (it does for every campaign) and its running tally of a free-text campaign is their number,
which tells the dashboard how many have arrived; the discovery reads the stored reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.errors import TallyError

__all__ = ["ReportCount", "ReportRows"]

#: The ``kind`` member of a :class:`ReportCount`'s JSON.
KIND = "report_count"


@dataclass(frozen=True)
class ReportCount:
    """The number of reports ``n`` of a free-text campaign, fingerprinted by its spec id.

    Examples
    --------
    >>> (ReportCount(3, "ab") + ReportCount(4, "ab")).n
    7
    >>> ReportCount.from_dict(ReportCount(2, "ab").to_dict())
    ReportCount(n=2, fingerprint='ab')
    """

    n: int
    fingerprint: str | None = None

    def merge(self, other: ReportCount) -> ReportCount:
        """The count of both (a :class:`~pldp.errors.TallyError` for another kind of tally or campaign)."""
        if not isinstance(other, ReportCount):
            raise TallyError(f"can only merge a ReportCount with another, got {type(other).__name__}")
        if other.fingerprint != self.fingerprint:
            raise TallyError(
                f"cannot merge the counts of different campaigns ({self.fingerprint} and {other.fingerprint})"
            )
        return ReportCount(self.n + other.n, self.fingerprint)

    def __add__(self, other: ReportCount) -> ReportCount:
        return self.merge(other)

    def to_dict(self) -> dict[str, Any]:
        """As JSON values: ``{"kind": "report_count", "n", "fingerprint"}``."""
        return {"kind": KIND, "n": int(self.n), "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, obj: Any) -> ReportCount:
        """Read :meth:`to_dict`'s form (a :class:`~pldp.errors.TallyError` for anything else)."""
        if not isinstance(obj, dict) or obj.get("kind") != KIND or set(obj) != {"kind", "n", "fingerprint"}:
            raise TallyError(f"not a report count: {str(obj)[:100]}")
        n = obj["n"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TallyError(f"a report count's n must be a non-negative integer, got {n!r}")
        return cls(n, obj["fingerprint"])


@dataclass(frozen=True, eq=False)
class ReportRows:
    """The checked reports of a free-text campaign as its protocol reads them (``(level, group, seed,
    value, ...)`` rows, :meth:`pldp.heavy.HeavyHitter.reports_from_columns`), fingerprinted by its spec id:
    what the parts of an aggregation hand on, merged by concatenation in the order of the parts.

    Examples
    --------
    >>> a = ReportRows(np.zeros((2, 4), dtype=np.int64), "ab")
    >>> (a + a).n, (a + a).rows.shape
    (4, (4, 4))
    """

    rows: np.ndarray
    fingerprint: str | None = None

    @property
    def n(self) -> int:
        """The number of reports."""
        return int(self.rows.shape[0])

    def merge(self, other: ReportRows) -> ReportRows:
        """Both reports' rows (a :class:`~pldp.errors.TallyError` for another kind of tally or campaign)."""
        if not isinstance(other, ReportRows):
            raise TallyError(f"can only merge ReportRows with another, got {type(other).__name__}")
        if other.fingerprint != self.fingerprint or other.rows.shape[1:] != self.rows.shape[1:]:
            raise TallyError(
                f"cannot merge the reports of different campaigns ({self.fingerprint} and {other.fingerprint})"
            )
        return ReportRows(np.concatenate([self.rows, other.rows]), self.fingerprint)

    def __add__(self, other: ReportRows) -> ReportRows:
        return self.merge(other)

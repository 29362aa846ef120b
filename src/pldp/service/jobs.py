"""What a job of the collector's writer sees (:mod:`pldp.service.writer`): the writing connection, the
running tallies, and the index of stored report ids, with what the job and the group's earlier jobs
staged (a job's changes take effect with it, not if it raises)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pldp.deploy import Spec
from pldp.service import store
from pldp.service.seen import SeenIds, Stored

__all__ = ["ColdCampaignError", "Context", "TallyKey"]

#: A running tally's key: (campaign id, round), round 0 for the tally of every report of the campaign.
TallyKey = tuple[str, int]


class ColdCampaignError(Exception):
    """A job needs the stored ids of a campaign the writer has not loaded yet: set aside until they are
    (:mod:`pldp.service.writer`)."""

    def __init__(self, key: int) -> None:
        super().__init__(key)
        self.key = key


@dataclass
class Context:
    """What a job sees: the writing connection, the running tallies and the stored report ids.

    A job stages a tally change with :meth:`add` and the ids of the reports it appends with
    :meth:`stage_ids`; both take effect with the job (not if the job raises afterwards): the ids
    join the writer's index of stored ids at once, where the group's later jobs find them, and
    the tallies are written to the store before the group's ``COMMIT``.
    """

    conn: store.Connection
    tallies: dict[TallyKey, Any]  # (campaign id, round) -> tally, as committed
    seen: dict[int, SeenIds]  # campaign key -> stored report ids, with this group's jobs so far
    pending: dict[TallyKey, Any] = field(default_factory=dict)  # (campaign id, round) -> tally, this group so far
    _job: dict[TallyKey, Any] = field(default_factory=dict)  # (campaign id, round) -> tally, this job so far
    _job_ids: list[tuple[int, bytes, int]] = field(default_factory=list)  # (key, ids, first seq), this job
    known: dict[tuple[int, int], Stored] = field(default_factory=dict)  # (key, id(ids)) -> looked up before the lock

    def _stored(self, key: int) -> SeenIds:
        if key not in self.seen:  # loading could take seconds: not while holding the write lock
            raise ColdCampaignError(key)
        return self.seen[key]

    def find(self, key: int, ids: bytes) -> np.ndarray:
        """Where each report id (``ids``: concatenated 16-byte ids) is stored in the campaign with
        ``key`` (its ``seq``), including reports of jobs earlier in this group; -1 where it is new."""
        where = self._stored(key).find(ids, self.known.get((key, id(ids))))
        for k, staged, first in self._job_ids:  # this job's own appends (store_batch looks up before it appends)
            if k == key:
                at = {staged[16 * i : 16 * i + 16]: first + i for i in range(len(staged) // 16)}
                for i in range(len(where)):
                    where[i] = at.get(ids[16 * i : 16 * i + 16], where[i])
        return where

    def next_seq(self, key: int) -> int:
        """The ``seq`` of the campaign's next report (a group's appends are numbered in turn)."""
        return self._stored(key).last + sum(len(ids) // 16 for k, ids, _ in self._job_ids if k == key) + 1

    def stage_ids(self, key: int, ids: bytes, first: int) -> None:
        """Stage the ids of reports this job appended, numbered from ``first`` (:meth:`next_seq`)."""
        self._job_ids.append((key, ids, first))

    def _release(self) -> None:
        """The job succeeded: its ids join the index, its tallies the group's."""
        for key, ids, first in self._job_ids:
            self.seen[key].append(ids, first)
        self.pending.update(self._job)
        self._job, self._job_ids = {}, []

    def tally(self, campaign_id: str, spec: Spec, turn: int = 0) -> Any:
        """The campaign's current tally (of round ``turn`` of a recurring campaign; 0: of every
        report), including jobs earlier in this group."""
        key = (campaign_id, turn)
        for layer in (self._job, self.pending, self.tallies):
            if key in layer:
                return layer[key]
        try:
            loaded = store.stored_tally(self.conn, spec, turn)
        except KeyError:
            loaded = store.empty_tally(spec)
        self.tallies[key] = loaded
        return loaded

    def add(self, campaign_id: str, spec: Spec, delta: Any, turn: int = 0) -> None:
        """Stage ``delta`` (a tally of the same spec) onto the campaign's tally (of round ``turn``)."""
        self._job[campaign_id, turn] = self.tally(campaign_id, spec, turn).merge(delta)

    def set(self, campaign_id: str, tally: Any) -> None:
        """Stage a campaign's whole tally (a new campaign's empty one)."""
        self._job[campaign_id, 0] = tally

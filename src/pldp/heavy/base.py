"""What every heavy-hitter protocol is: a group drawn apart from the answer, then one randomized part per
node, each a report of local hashing (:class:`HeavyHitter`).

A protocol names its parts (:attr:`HeavyHitter.parts`: PEM's one, TreeHist's prefix and word,
SFP's fragment and word), each with one OLH node per budget level, and says which item each part
randomizes for an answer in a group (:meth:`HeavyHitter.part_items`: a prefix's, a fragment's or the
whole answer's fingerprint), which its sampler node computes (:meth:`HeavyHitter.node`, a
:class:`~pldp.channel.HeavyNode`: what a campaign spec holds and both device clients run). From
those the base class draws the reports, checks them, and checks their privacy exactly; the audit
(:func:`pldp.audit.heavy.audit_heavy`) reads the same two.

A report is ``(level, group, seed, value, ...)``: the user's level in the clear, her group drawn
uniformly from ``0 .. groups - 1`` by the protocol's randomness alone, then a ``(seed, value)`` pair
per part.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from pldp._validation import check_int
from pldp.channel.claims import Verification
from pldp.channel.hashed import HashedNode
from pldp.channel.heavy import HeavyNode
from pldp.errors import ParameterError
from pldp.heavy.discovery import Discovery
from pldp.heavy.pooled import checked_reports, composed_check, randomize, user_levels
from pldp.heavy.strings import answer_rows

__all__ = ["HeavyHitter"]


class HeavyHitter(ABC):
    """The client and the checks every heavy-hitter protocol shares (module docstring)."""

    #: The protocol's name in messages.
    name: ClassVar[str]
    #: The estimation methods it offers (:data:`pldp.methods.ESTIMATION_METHODS`): its discovery.
    methods: ClassVar[tuple[str, ...]] = ("discover",)
    #: The budget levels and the bound on an answer's bytes.
    levels: np.ndarray
    max_bytes: int

    @property
    def groups(self) -> int:
        """The groups a user may fall in: PEM's ``L`` prefix lengths, TreeHist's ``8 L / s`` depths, SFP's
        ``L / b`` positions (the node's, :attr:`pldp.channel.HeavyNode.groups`)."""
        return self.node().groups

    @property
    def group_name(self) -> str:
        """What the groups are called (``"group"``, ``"depth"``, ``"position"``): the node's group column."""
        return self.node().group_name

    @property
    @abstractmethod
    def parts(self) -> dict[str, tuple[HashedNode, ...]]:
        """Each part's name (``""`` for a protocol of one part) and each level's node of it, in the
        order of the report's columns."""

    @property
    @abstractmethod
    def node_options(self) -> dict[str, Any]:
        """The :class:`~pldp.channel.HeavyNode` members of the protocol besides its parts and budget:
        ``protocol`` and ``max_bytes``, and TreeHist's ``step_bits`` or SFP's ``fragment_bytes`` and
        ``hash_bits``."""

    @property
    def _node_arguments(self) -> dict[str, Any]:
        """The constructor's arguments that are the node's members (:attr:`node_options` but ``protocol``,
        which the class names)."""
        return {k: v for k, v in self.node_options.items() if k != "protocol"}

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The protocol's name and constructor arguments, as JSON values (a campaign spec's ``oracle``
        member; :func:`pldp.heavy.heavy_from_params` rebuilds the protocol)."""

    def node(self, level: int = 0) -> HeavyNode:
        """The sampler node of a user at ``level`` (an index into the levels): what a campaign spec holds
        and both device clients run (:class:`~pldp.channel.HeavyNode`)."""
        t = check_int(level, "level", 0)
        if t >= self.levels.size:
            raise ParameterError(f"level must be an index below {self.levels.size}, got {level}")
        parts = tuple(nodes[t] for nodes in self.parts.values())
        return HeavyNode(parts=parts, epsilon=float(self.levels[t]), **self.node_options)

    def part_items(self, rows: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per part, the item each answer row randomizes in its group (``int64``, one per row): the
        node's (:meth:`pldp.channel.HeavyNode.part_items`; the same at every level)."""
        return self.node().part_items(rows, group)

    @abstractmethod
    def discover(self, reports: Any, top: int = 20, width: int | None = None) -> Discovery:
        """The ``top`` answers the reports show most often (each protocol's own search)."""

    def perturb(self, answers: Sequence[Any], rng: np.random.Generator, level: Any = None) -> np.ndarray:
        """One report per answer (text or bytes): ``(level, group, seed, value, ...)``, ``int64``, a
        ``(seed, value)`` pair per part.

        ``level`` gives each user's level (an index into the levels; default 0). The group is drawn
        first, uniformly and apart from the answer; then each part's nodes randomize its items (two
        words of ``rng`` per report and part), part by part.
        """
        rows = answer_rows(answers, self.max_bytes)
        n = rows.shape[0]
        lev = user_levels(level, n, self.levels.size)
        group = np.asarray(rng.integers(0, self.groups, size=n), dtype=np.int64)
        items = self.part_items(rows, group)
        out = np.zeros((n, 2 + 2 * len(self.parts)), dtype=np.int64)
        out[:, 0], out[:, 1] = lev, group
        for k, nodes in enumerate(self.parts.values()):
            randomize(out, 2 + 2 * k, nodes, lev, items[k], rng)
        return out

    def reports_from_columns(self, columns: Mapping[str, Any], level: Any = 0) -> np.ndarray:
        """The reports of a campaign's payload columns (a spec's :meth:`node` at ``level``; its columns by
        name, as a :class:`~pldp.deploy.wire.ReportBatch` or a report file holds them), as the rows
        :meth:`discover` reads: ``(level, group, seed, value, ...)``, checked (:meth:`checked`).
        ``level``: the level index of every report, or one per report."""
        node = self.node(0)
        cols = [np.asarray(columns[c.name], dtype=np.int64).reshape(-1) for c in node.columns()]
        n = cols[0].size
        lev = np.broadcast_to(np.asarray(level, dtype=np.int64), (n,))
        return self.checked(np.column_stack([lev, *cols]) if n else np.zeros((0, 1 + len(cols)), dtype=np.int64))

    def checked(self, reports: Any) -> np.ndarray:
        """``reports`` as ``int64``, every column in range (:func:`~pldp.heavy.pooled.checked_reports`)."""
        return checked_reports(reports, self.name, self.group_name, self.groups, self.parts)

    def privacy(self) -> tuple[Verification, ...]:
        """The exact check of each level's report against the level's budget: every part's claim and the
        whole report's, the product of the parts' largest ratios within :math:`e^{\\varepsilon}`
        (:func:`~pldp.heavy.pooled.composed_check`; a protocol of one part has one part, ``"report"``).
        The group is drawn apart from the answer and the level is in the clear, so neither enters a
        ratio."""
        return tuple(
            composed_check({name or "report": nodes[t] for name, nodes in self.parts.items()}, float(eps))
            for t, eps in enumerate(self.levels)
        )

"""The exact check of a sampler's privacy claims: :func:`check_claims` and its :class:`Verification`.

Every claim a node makes (``docs/wire-format.md`` §3) is a bound on a ratio of integers:
``(weights[y] + keep) / weights[y]`` for a direct node, ``a_i (2^32 - b_j) / (b_i (2^32 - a_j))``
for a pair of items of a unary node, and for a hidden or perturbed budget level the largest
ratio over whole reports between two levels. Each node checks its own
(:meth:`~pldp.channel.node.Node.claims`) against :math:`e^{\\varepsilon}` with
:func:`~pldp.channel.exact.ratio_within` (no rounding error); :func:`check_claims` gathers them
into a :class:`Verification`: one row per claim with the budget claimed and the realised epsilon.

References: Li et al. (IPLDP, Def. 5), Murakami & Kawamoto (ULDP), Gu et al., ICDE 2020 (eq. 5
and Theorem 4: MinID/AvgID-LDP, padding-and-sampling), Feng & Zhang 2024 (MPLDP, Theorem 5), and
ERRATA FEBSF-6 (PLDP-FEBSF's level protection).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pldp.channel.node import Node, Row

__all__ = ["Verification", "check_claims"]


@dataclass(frozen=True)
class Verification:
    """The result of :func:`~pldp.channel.check_claims` (and :func:`pldp.deploy.verify`): every claim, checked exactly.

    Attributes
    ----------
    rows : list of Row
        One per claim (for unary nodes one per pair of item *groups* with equal parameters).
    ldp_epsilon : float
        The whole report's LDP epsilon implied by the claims (sum over attributes, max over
        levels, plus the level report's budget).
    spec_id : str or None
    notes : list of str
        What a reader of the rows should know (the level as a secret of its own).
    """

    rows: list[Row]
    ldp_epsilon: float
    spec_id: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether every claim holds."""
        return all(r.holds for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        """The rows whose claim fails."""
        return [r for r in self.rows if not r.holds]

    def to_dict(self) -> dict[str, Any]:
        """The verification as JSON values."""
        return {
            "spec": self.spec_id,
            "holds": self.holds,
            "ldp_epsilon": self.ldp_epsilon,
            "rows": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def table(self, max_rows: int = 40, words: Callable[[Row], tuple[str, str]] | None = None) -> str:
        """A text table of the checks: failures first, then the tightest.

        Parameters
        ----------
        max_rows : int
            The rows shown at most.
        words : callable, optional
            Row -> (where, what is protected), the first two columns in a reader's words
            (:func:`pldp.deploy.claimwords.claims_table`); by default the row's part and subject.

        Returns
        -------
        str
            A header, the rows, the verdict with the whole report's epsilon, and the notes.
        """
        rows = sorted(self.rows, key=lambda r: (r.holds, -(r.realised - r.claimed) if math.isfinite(r.claimed) else 0))
        name = words or (lambda r: (r.part, r.subject))
        head = ["part", "subject"] if words is None else ["where", "what is protected"]
        cells = [
            [*name(r), f"{r.claimed:.6g}", f"{r.realised:.8g}", "yes" if r.holds else "NO"] for r in rows[:max_rows]
        ]
        cells.insert(0, [*head, "claimed", "realised", "holds"])
        widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
        lines = [
            "  ".join(
                v.rjust(w) if i in (2, 3) else v.ljust(w) for i, (v, w) in enumerate(zip(c, widths, strict=True))
            ).rstrip()
            for c in cells
        ]
        lines.insert(1, "-" * len(lines[0]))
        if len(rows) > max_rows:
            lines.append(f"... and {len(rows) - max_rows} more rows, all of which hold" if self.holds else "...")
        verdict = "every claim holds" if self.holds else f"{len(self.failures)} claim(s) FAIL"
        lines.append(f"{verdict}; the whole report is {self.ldp_epsilon:.6g}-LDP")
        lines.extend(self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def check_claims(root: Node, spec_id: str | None = None) -> Verification:
    """Check every privacy claim of the sampler ``root`` exactly.

    Examples
    --------
    >>> from pldp.channel import DirectNode
    >>> node = DirectNode(2, 2**31, (2**30, 2**30), "LDP", (1.0987, 1.0987))   # keep 1/2, else uniform
    >>> v = check_claims(node)
    >>> v.holds, [round(r.realised, 6) for r in v.rows]   # (1/4 + 1/2) / (1/4) = 3 <= e^1.0987
    (True, [1.098612])
    """
    rows, eps = root.claims()
    notes = []
    if root.hides_level:
        notes.append(
            "The level is a secret of its own: its protection by the whole report is the row "
            "'the level itself' (ERRATA FEBSF-6), not the level report's budget."
        )
    return Verification(rows, eps, spec_id, notes)

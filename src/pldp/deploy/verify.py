"""Verify a spec's privacy claims from the spec alone, with exact arithmetic.

Every claim a sampler node makes (``docs/wire-format.md`` §3) is a bound on a ratio of integers:
``(weights[y] + keep) / weights[y]`` for a direct node, ``a_i (2^32 - b_j) / (b_i (2^32 - a_j))``
for a pair of items of a unary node, and for a hidden or perturbed budget level the largest
ratio over whole reports between two levels. :func:`verify` checks each against
:math:`e^{\\varepsilon}` with :func:`pldp.exact.ratio_within` (no rounding error) and returns a
:class:`Verification`: one row per claim with the budget claimed and the realised epsilon.

References: Li et al. (IPLDP, Def. 5), Murakami & Kawamoto (ULDP), Gu et al., ICDE 2020 (eq. 5
and Theorem 4: MinID/AvgID-LDP, padding-and-sampling), Feng & Zhang 2024 (MPLDP, Theorem 5), and
ERRATA FEBSF-6 (PLDP-FEBSF's level protection).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pldp.deploy.sampler import AttributesNode, DirectNode, LeveledNode, Node, PaddingNode, UnaryNode
from pldp.exact import log_ratio, ratio_within
from pldp.sampling import GRID

__all__ = ["Row", "Verification", "level_ratio", "verify", "verify_node"]


@dataclass(frozen=True)
class Row:
    """One exact check: ``part`` of the sampler, its ``subject`` (an item, a pair, a level pair)."""

    part: str
    subject: str
    claimed: float
    realised: float
    holds: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "part": self.part,
            "subject": self.subject,
            "claimed": "inf" if self.claimed == math.inf else self.claimed,
            "realised": "inf" if self.realised == math.inf else self.realised,
            "holds": self.holds,
        }


@dataclass(frozen=True)
class Verification:
    """The result of :func:`verify`: every claim, checked exactly.

    Attributes
    ----------
    rows : list of Row
        One per claim (for unary nodes one per pair of item *groups* with equal parameters).
    ldp_epsilon : float
        The whole report's LDP epsilon implied by the claims (sum over attributes, max over
        levels, plus the level report's budget).
    spec_id : str or None
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
        return {
            "spec": self.spec_id,
            "holds": self.holds,
            "ldp_epsilon": self.ldp_epsilon,
            "rows": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self, max_rows: int = 40) -> str:
        """A text table of the checks (failures first, then the tightest)."""
        rows = sorted(self.rows, key=lambda r: (r.holds, -(r.realised - r.claimed) if math.isfinite(r.claimed) else 0))
        head = f"{'part':<28} {'subject':<34} {'claimed':>10} {'realised':>12}  holds"
        lines = [head, "-" * len(head)]
        for r in rows[:max_rows]:
            lines.append(
                f"{r.part:<28} {r.subject:<34} {r.claimed:>10.6g} {r.realised:>12.8g}  {'yes' if r.holds else 'NO'}"
            )
        if len(rows) > max_rows:
            lines.append(f"... and {len(rows) - max_rows} more rows, all of which hold" if self.holds else "...")
        verdict = "every claim holds" if self.holds else f"{len(self.failures)} claim(s) FAIL"
        lines.append(f"{verdict}; the whole report is {self.ldp_epsilon:.6g}-LDP")
        lines.extend(self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


# ----------------------------------------------------------------------------- nodes
def _groups(keys: list[Any]) -> dict[Any, list[int]]:
    out: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        out.setdefault(k, []).append(i)
    return out


def _who(items: list[int]) -> str:
    return f"item {items[0]}" + (f" (+{len(items) - 1})" if len(items) > 1 else "")


def _direct_rows(node: DirectNode, part: str) -> list[Row]:
    rows = []
    for (w, e), items in _groups(list(zip(node.weights, node.epsilons, strict=True))).items():
        if e == math.inf:
            continue  # a non-sensitive output may reveal its holder (IPLDP/ULDP condition)
        ok = w > 0 and ratio_within(w + node.keep, w, e)
        rows.append(Row(part, "output " + _who(items)[5:], e, log_ratio(w + node.keep, w), ok))
    return rows


def _pair_claim(notion: str, ei: float, ej: float, eps_min: float) -> float:
    if notion == "MinID-LDP":
        return min(ei, ej)
    if notion == "AvgID-LDP":
        return (ei + ej) / 2
    return eps_min


def _unary_rows(node: UnaryNode, part: str) -> list[Row]:
    groups = _groups(list(zip(node.a, node.b, node.epsilons, strict=True)))
    eps_min = min(node.epsilons)
    rows = []
    for (ai, bi, ei), gi in groups.items():
        for (aj, bj, ej), gj in groups.items():
            if gi is gj and len(gi) < 2:
                continue  # a pair needs two distinct items
            claim = _pair_claim(node.notion, ei, ej, eps_min)
            num, den = ai * (GRID - bj), bi * (GRID - aj)
            subject = f"{_who(gi)} vs {_who(gj)}"
            exact = (Fraction(ei) + Fraction(ej)) / 2 if node.notion == "AvgID-LDP" else claim
            ok = ratio_within(num, den, exact)
            rows.append(Row(part, subject, claim, log_ratio(num, den), ok))
    return rows


def _bit_ratio(p: int, p2: int) -> Fraction:
    """The larger of the ratios of a bit being 1 and being 0 under probabilities p vs p2 (over 2**32)."""
    return max(Fraction(p, p2), Fraction(GRID - p, GRID - p2))


def _item_ratio(node: DirectNode | UnaryNode, other: DirectNode | UnaryNode) -> Fraction | None:
    """Largest ``Pr(o | x, node) / Pr(o | x, other)`` over items ``x`` and outputs ``o`` (None: infinite)."""
    if isinstance(node, DirectNode) and isinstance(other, DirectNode):
        best = Fraction(0)
        for w, k, w2, k2 in {(w, node.keep, w2, other.keep) for w, w2 in zip(node.weights, other.weights, strict=True)}:
            if (w > 0 and w2 == 0) or (w + k > 0 and w2 + k2 == 0):
                return None
            cands = [Fraction(w + k, w2 + k2)] + ([Fraction(w, w2)] if w2 > 0 else [])
            best = max(best, *cands)
        return best
    assert isinstance(node, UnaryNode) and isinstance(other, UnaryNode)
    b_ratios = [_bit_ratio(b, b2) for b, b2 in zip(node.b, other.b, strict=True)]
    total = Fraction(1)
    for r, count in Counter(b_ratios).items():
        total *= r**count
    own = max(_bit_ratio(a, a2) / rb for a, a2, rb in set(zip(node.a, other.a, b_ratios, strict=True)))
    return total * own


def level_ratio(node: LeveledNode) -> tuple[int, int]:
    """The exact largest ratio ``Pr(report | x, t) / Pr(report | x, t')`` over items, outputs and
    levels ``t != t'``, as ``(numerator, denominator)`` (``(1, 0)`` when infinite).

    The report is the item report and, when perturbed, the level report; the two are independent
    given ``(x, t)``, so the ratio is the product of the level report's largest ratio
    ``max_l pi(l|t)/pi(l|t')`` and the item report's (ERRATA FEBSF-6).
    """
    best = Fraction(1)
    for t, node_t in enumerate(node.items):
        for u, node_u in enumerate(node.items):
            if t == u:
                continue
            item = _item_ratio(node_t, node_u)
            if item is None:
                return 1, 0
            lv = Fraction(1)
            if node.level_sampler is not None:
                s = node.level_sampler
                col = [w + (s.keep if y == t else 0) for y, w in enumerate(s.weights)]
                col2 = [w + (s.keep if y == u else 0) for y, w in enumerate(s.weights)]
                if any(c2 == 0 < c for c, c2 in zip(col, col2, strict=True)):
                    return 1, 0
                lv = max(Fraction(c, c2) for c, c2 in zip(col, col2, strict=True) if c2 > 0)
            best = max(best, item * lv)
    return best.numerator, best.denominator


def verify_node(node: Node, part: str = "root") -> tuple[list[Row], float]:
    """Rows of every claim of ``node`` and the LDP epsilon of its whole report."""
    if isinstance(node, DirectNode):
        return _direct_rows(node, part), max(node.epsilons)
    if isinstance(node, UnaryNode):
        return _unary_rows(node, part), max(node.epsilons)
    if isinstance(node, PaddingNode):
        return verify_node(node.inner, f"{part}: sampled item")
    if isinstance(node, LeveledNode):
        rows: list[Row] = []
        for i, (e, item) in enumerate(zip(node.levels, node.items, strict=True)):
            r, _ = verify_node(item, f"{part} level {i} (eps={e:g})")
            rows += r
        total = max(node.levels)
        if node.level_sampler is not None:
            r, e_p = verify_node(node.level_sampler, f"{part} level report")
            rows += r
            total += e_p
        if node.level_report != "clear" and node.t > 1:
            num, den = level_ratio(node)
            claim = node.level_epsilon if node.level_epsilon is not None else 0.0
            rows.append(
                Row(
                    f"{part} the level itself",
                    "any item, levels t vs t'",
                    claim,
                    log_ratio(num, den),
                    ratio_within(num, den, claim),
                )
            )
        return rows, total
    if isinstance(node, AttributesNode):
        all_rows: list[Row] = []
        total_eps = 0.0
        for i, p in enumerate(node.parts):
            r, e = verify_node(p, f"attribute {i}")
            all_rows += r
            total_eps += e
        return all_rows, total_eps
    raise TypeError(f"not a sampler node: {type(node).__name__}")  # pragma: no cover


def verify(spec: Any) -> Verification:
    """Check every privacy claim of a spec exactly, from the spec alone.

    Parameters
    ----------
    spec : Spec, dict or str
        A :class:`~pldp.deploy.Spec`, or its JSON (text or parsed). The format, the id and the
        sampler's structure are checked first (:class:`~pldp.errors.SpecError` if they fail);
        the privacy claims are then checked and reported, not raised.

    Returns
    -------
    Verification
        ``holds`` is True exactly when every claim holds; ``rows`` hold each realised epsilon.

    Examples
    --------
    >>> import pldp
    >>> from pldp.deploy import Spec
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Pick one", labels=["a", "b", "c"])
    >>> v = verify(spec)
    >>> v.holds, [round(r.realised, 9) for r in v.rows]
    (True, [0.999999999])
    """
    from pldp.deploy.spec import Spec, read_spec

    root, spec_id = (spec.root, spec.id) if isinstance(spec, Spec) else read_spec(spec)
    rows, eps = verify_node(root)
    notes = []
    if isinstance(root, LeveledNode) and root.level_report != "clear" and root.t > 1:
        notes.append(
            "The level is a secret of its own: its protection by the whole report is the row "
            "'the level itself' (ERRATA FEBSF-6), not the level report's budget."
        )
    return Verification(rows, eps, spec_id, notes)

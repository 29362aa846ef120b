"""Whether ``oracle.privacy()`` states only what the exact check of ``oracle.sampler()`` proves.

An oracle states its privacy twice: ``privacy()``, a :class:`pldp.PrivacyCheck` computed in
floating point (the *float map*), and the claims of its sampler node, decided on the node's integer
thresholds with exact arithmetic (:func:`pldp.channel.check_claims`). :func:`privacy_map_disagreements`
walks the two together, part by part, and lists where they disagree.

=======================  ===========================================================================
sampler node             its part of the float map
=======================  ===========================================================================
direct                   a :class:`~pldp.privacy.PrivacyReport`: a budget and a realised epsilon
                         per output
unary                    a :class:`~pldp.privacy.PairPrivacyReport`: a budget and a realised epsilon
                         per pair of item groups, and each group's budget
padding                  a :class:`~pldp.privacy.ComposedPrivacy` whose ``"sampled item"`` is the
                         inner node's (its ``"item-sets"`` part, Theorem 4's set budgets, follows
                         from the sampled item's and has no counterpart on the node)
leveled                  one part per level, composed by ``"max"`` (a user runs one level's channel);
                         with a level report (PLDP-FEBSF) the levels' part and the level report's,
                         composed by ``"sum"``, and the level's worst case (:class:`~pldp.privacy.LevelProtection`)
attributes               one part per attribute, composed by ``"sum"`` (a user runs every attribute)
memo                     a :class:`~pldp.privacy.LongitudinalPrivacy`: the permanent node's part, and
                         the one-report part on the chained channel over ``2**64``
any other leaf           any :class:`~pldp.PrivacyCheck`, of which only its notion and its LDP
                         epsilon are compared (below)
=======================  ===========================================================================

At each direct or unary channel, with the node's budgets and notion:

* the float map claims the node's notion (the same kind of guarantee), and no budget of an output
  or item below the node's (nothing stronger than what the sampler states);
* every budget the float map states (per output, or per pair of groups) is proven exactly on the
  integers, by ``output_rows`` and ``pair_rows`` of :mod:`pldp.channel` (the functions the node's
  own claims use);
* every realised epsilon it states, plus :data:`TOLERANCE`, is exactly an upper bound of the
  channel's log-ratio: the float map never understates the leak by more than its own rounding.

At any other leaf (a kind covered by the rules for leaves, :meth:`pldp.channel.NodeVisitor.leaf`),
whose float map has no structure known here, the weakest rule that still catches a map overstating
privacy: the float map claims the node's notion (the ``"notion"`` its JSON form names, plain LDP
when it names none), and its LDP epsilon is no smaller, by more than :data:`TOLERANCE`, than any
exact log-ratio of the node's own claims (each row's ``realised``). Sound: each row's realised
value is a log-ratio of the channel's probabilities of one output under two inputs, hence at most
its plain-LDP epsilon, which a correct float map states within its rounding. It catches a map of
another notion, and a map of a smaller budget than the sampler runs (its largest log-ratio, and so
every budget of a map that holds, then lies below one the sampler realises); it leaves alone what a
map may state more cautiously than the exact claims (a larger epsilon, a claim it says fails).

The exact claims may say *more* than the float map (PBP's and PPDA's hidden level carries a claim
the float map leaves out); that is not a disagreement. PLDP-FEBSF's ``level.claimed`` is the
paper's :math:`\\varepsilon_p`, which the float map reports *failing* (ERRATA FEBSF-6): it is not a
budget the map states as holding, and only the level's worst case is compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.channel import CHAIN_GRID, GRID, Node, NodeVisitor, check_claims
from pldp.channel.direct import output_rows
from pldp.channel.exact import log_ratio, ratio_within
from pldp.channel.node import Row
from pldp.channel.unary import pair_rows, uldp_row
from pldp.privacy import ComposedPrivacy, LongitudinalPrivacy, PairPrivacyReport, PrivacyCheck, PrivacyReport

__all__ = ["TOLERANCE", "privacy_map_disagreements"]

#: How far a realised epsilon of the float map may lie below the exact log-ratio it stands for.
#: A float map computes :math:`\ln(N/D)` of grid integers as at most four logarithms, of
#: probabilities no smaller than ``2**-64`` or of products of two grid integers below ``2**128``:
#: magnitudes below 128, each rounded by at most an ulp (``2**-46``), and at most three additions
#: of partial sums below 512 (half an ulp, ``2**-45``, each), after rounding each input to a double
#: (``2**-53`` relative, as much on its logarithm): in all ``4 * 2**-46 + 3 * 2**-45 + 4 * 2**-53 <
#: 2**-42``. A factor 4 more for a libm ``log`` or ``log1p`` good to a couple of ulps: ``2**-40``.
TOLERANCE = 2.0**-40


def privacy_map_disagreements(report: PrivacyCheck, node: Node) -> list[str]:
    """Where the float map ``report`` (``oracle.privacy()``) states what the exact check of ``node``
    (``oracle.sampler()``) does not prove (module docstring); empty when they agree.

    Parameters
    ----------
    report : PrivacyCheck
    node : Node

    Returns
    -------
    list of str
        One line per disagreement, naming the part of the sampler, both numbers and why.

    Examples
    --------
    >>> import pldp
    >>> privacy_map_disagreements(pldp.KRR(1.0, 5).privacy(), pldp.KRR(1.0, 5).sampler())
    []
    >>> privacy_map_disagreements(pldp.KRR(0.5, 5).privacy(), pldp.KRR(1.0, 5).sampler())[0]
    'root: output 0 states epsilon 0.5 where the sampler claims 1 (stronger than the exact claim)'
    """
    pairing = _Pairing()
    verified = check_claims(node)
    for row in verified.failures:
        pairing.fail(row.part, f"{row.subject}: the sampler's own claim {row.claimed:g} does not hold exactly")
    node.accept(pairing, report, "root")
    return pairing.problems


def _composed(pairing: _Pairing, rep: PrivacyCheck, where: str, rule: str, n: int) -> list[PrivacyCheck]:
    """The ``n`` parts of a composed float map, which must compose them by ``rule``; none if it is not one."""
    if not isinstance(rep, ComposedPrivacy):
        pairing.fail(where, f"privacy() gives a {type(rep).__name__} where the sampler composes {n} part(s)")
        return []
    if rep.rule != rule:
        pairing.fail(where, f"privacy() composes its parts by {rep.rule!r}; the sampler's parts compose by {rule!r}")
    parts = list(rep.parts.values())
    if len(parts) != n:
        pairing.fail(where, f"privacy() has {len(parts)} part(s) where the sampler has {n}")
        return []
    return parts


class _Pairing(NodeVisitor[None]):
    """Walks a sampler node and the float map together (module docstring), gathering :attr:`problems`."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, where: str, text: str) -> None:
        self.problems.append(f"{where}: {text}")

    def _wrong(self, rep: PrivacyCheck, where: str, what: str) -> None:
        self.fail(where, f"privacy() gives a {type(rep).__name__} where the sampler runs {what}")

    def _stated(
        self, where: str, notions: tuple[str, str], floats: np.ndarray, node_eps: Sequence[float], noun: str
    ) -> None:
        """The same notion (the float map's, the node's), and no budget of an output or item below the node's."""
        if notions[0] != notions[1]:
            self.fail(where, f"privacy() claims {notions[0]!r} where the sampler claims {notions[1]!r}")
        if floats.shape != (len(node_eps),):
            self.fail(where, f"privacy() states {floats.size} budgets where the sampler has {len(node_eps)} {noun}s")
            return
        for i in np.flatnonzero(floats < np.asarray(node_eps, dtype=float))[:3]:
            self.fail(
                where,
                f"{noun} {i} states epsilon {floats[i]:.17g} where the sampler claims {node_eps[i]:.17g} "
                "(stronger than the exact claim)",
            )

    # ------------------------------------------------------------------ channels
    def direct(self, node: Any, rep: PrivacyCheck, where: str, chain: Any = None) -> None:
        """A direct channel: ``(keep, weights)`` of the node, or of ``chain``'s one report."""
        stated = node if chain is None else chain
        keep, weights = (node.keep, node.weights) if chain is None else chain.chained()
        if not isinstance(rep, PrivacyReport):
            return self._wrong(rep, where, "a direct channel")
        claimed, realised = np.asarray(rep.claimed, dtype=float), np.asarray(rep.realised, dtype=float)
        if claimed.shape != (len(weights),) or realised.shape != claimed.shape:
            self.fail(where, f"privacy() covers {claimed.size} outputs where the sampler has {len(weights)}")
            return None
        self._stated(where, (rep.notion, stated.notion), claimed, stated.epsilons, "output")
        for row in output_rows(keep, tuple(weights), tuple(claimed), where):
            if not row.holds:
                self.fail(where, f"{row.subject}: epsilon {row.claimed:.17g} is not proven exactly ({_exact(row)})")
        # an infinite budget: a non-sensitive output, reported only by its holders (IPLDP condition 4)
        for y in np.flatnonzero(np.isinf(claimed) & (np.asarray(weights) > 0))[:3]:
            self.fail(where, f"output {y} is stated non-sensitive, yet others report it (weight {weights[y]})")
        first: dict[tuple[int, float], int] = {}  # each distinct (weight, realised) and its first output
        for y, (w, r) in enumerate(zip(weights, realised, strict=True)):
            if math.isfinite(r):
                first.setdefault((int(w), float(r)), y)
        for (w, r), y in first.items():
            row = output_rows(keep, (w,), (r + TOLERANCE,), where)[0]
            if not row.holds:
                self.fail(where, _understated(f"output {y}", r, row))
        return None

    def unary(self, node: Any, rep: PrivacyCheck, where: str, chain: Any = None) -> None:
        """A unary channel: ``(a, b)`` of the node on ``2**32``, or of ``chain``'s one report on ``2**64``."""
        stated = node if chain is None else chain
        a, b, grid = (node.a, node.b, GRID) if chain is None else (*chain.chained(), CHAIN_GRID)
        if not isinstance(rep, PairPrivacyReport):
            return self._wrong(rep, where, "a unary channel")
        items = np.zeros(len(a))
        for g, members in enumerate(rep.group_items):
            items[np.asarray(members, dtype=np.int64)] = rep.group_epsilon[g]
        self._stated(where, (rep.notion, stated.notion), items, stated.epsilons, "item")
        for g, h in zip(*np.nonzero(rep.pair_mask), strict=True):
            i = int(rep.group_items[g][0])
            j = int(rep.group_items[h][1 if g == h else 0])
            # the pair budget as the float map states it (AvgID-LDP's rounded mean: the node decides the
            # exact mean, which is at most half an ulp away)
            claimed, realised = float(rep.claimed[g, h]), float(rep.realised[g, h])

            # Pr(report | i) / Pr(report | j) against a bound: the first row of the two items' (i before j)
            # (under ULDP on the protected reports: uldp_row)
            def bounded(e: float, i: int = i, j: int = j) -> Row:
                if stated.notion == "ULDP":
                    return uldp_row((a[i], b[i], stated.epsilons[i]), (a[j], b[j]), e, where, f"items {i} vs {j}")
                return pair_rows((a[i], a[j]), (b[i], b[j]), (e, e), "LDP", grid, where)[0]

            row = bounded(claimed)
            if not row.holds:
                self.fail(where, f"items {i} vs {j}: epsilon {claimed:.17g} is not proven exactly ({_exact(row)})")
            bound = realised + TOLERANCE
            row = bounded(bound)
            if not row.holds:
                self.fail(where, _understated(f"items {i} vs {j}", realised, row))
        return None

    # ------------------------------------------------------------------ composites
    def padding(self, node: Any, rep: PrivacyCheck, where: str) -> None:
        if not isinstance(rep, ComposedPrivacy):
            return self._wrong(rep, where, "padding-and-sampling")
        if "sampled item" not in rep:
            self.fail(where, f"privacy() has no 'sampled item' part (parts: {list(rep)})")
            return None
        return node.inner.accept(self, rep["sampled item"], f"{where}: sampled item")

    def leveled(self, node: Any, rep: PrivacyCheck, where: str) -> None:
        if node.level_sampler is not None:
            level = getattr(rep, "level", None)
            parts = _composed(self, rep, where, "sum", 2)
            if not parts:
                return
            rep, level_report = parts
            node.level_sampler.accept(self, level_report, f"{where} level report")
            if level is not None:
                num, den = node.level_ratio()
                # ln N - ln D of integers that may reach far beyond 2**128 (a product over every bit of
                # two levels' channels): each logarithm is off by an ulp of its magnitude, not of 128
                slack = TOLERANCE + 4 * math.ulp(math.log(num))
                if not ratio_within(num, den, level.worst_case + slack):
                    exact = log_ratio(num, den)
                    self.fail(
                        where,
                        f"the level's worst case {level.worst_case:.17g} is below the exact log-ratio {exact:.17g} "
                        "by more than rounding",
                    )
        for i, (item, part) in enumerate(zip(node.items, _composed(self, rep, where, "max", node.t), strict=False)):
            item.accept(self, part, f"{where} level {i}")

    def attributes(self, node: Any, rep: PrivacyCheck, where: str) -> None:
        for i, (part_node, part) in enumerate(
            zip(node.parts, _composed(self, rep, where, "sum", len(node.parts)), strict=False)
        ):
            part_node.accept(self, part, f"{where} attribute {i}")

    def leaf(self, node: Node, rep: PrivacyCheck, where: str) -> None:
        """Any other leaf: the node's notion, and no exact log-ratio of its claims above the float
        map's LDP epsilon by more than :data:`TOLERANCE` (module docstring)."""
        notion = node.to_json().get("notion", "LDP")
        if rep.notion != notion:
            self.fail(where, f"privacy() claims {rep.notion!r} where the sampler claims {notion!r}")
        stated = float(rep.ldp_epsilon)
        rows, _ = node.claims(where)
        for row in [r for r in rows if not r.realised <= stated + TOLERANCE][:3]:
            self.fail(
                where,
                f"{row.subject}: LDP epsilon {stated:.17g} is below the exact log-ratio {row.realised:.17g} "
                "by more than rounding (the float map states more privacy than the sampler has)",
            )

    def memo(self, node: Any, rep: PrivacyCheck, where: str) -> None:
        if not isinstance(rep, LongitudinalPrivacy):
            return self._wrong(rep, where, "a memoized chain")
        node.permanent.accept(self, rep.permanent, f"{where} permanent")
        return node.permanent.accept(self, rep.one_report, f"{where} one report", node)


def _exact(row: Any) -> str:
    """The exact log-ratio of a row, for a message."""
    return f"the exact log-ratio is {row.realised:.17g}"


def _understated(subject: str, realised: float, row: Any) -> str:
    """A realised epsilon below the exact log-ratio of ``row`` by more than :data:`TOLERANCE`."""
    exact = row.realised
    return (
        f"{subject}: realised epsilon {realised:.17g} is below the exact log-ratio {exact:.17g} by more than rounding"
    )

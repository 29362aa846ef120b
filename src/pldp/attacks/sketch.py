"""Fake reports of Apple's count-mean sketches (CMS, HCMS): the maximal gain attack supports every target.

A CMS report ``(j, b)`` supports every item ``v`` whose bit ``h_j(v)`` is set; an HCMS report
``(j, l, b)`` every item ``v`` with ``b = H[h_j(v), l]``. Following Cao, Jia, Gong (USENIX
Security 2021, Sec. 4.2), a fake picks a uniform row ``j`` and reports, without any flip, the bits
set at every target's ``h_j(t)`` and clear elsewhere (CMS), or a column ``l`` where every target's
entry is ``+1`` and the bit ``+1`` (HCMS: ``l`` uniform over the solutions of ``popcount(h_j(t) & l)``
even for every target, a subspace holding ``0``; :func:`pldp.attacks.hadamard.common_indices`'s
construction). Either way every target is supported by every fake: its support is ``1``.

Strategies: ``mga`` (and ``sensitive``, ``knows_defence``, ``adaptive``: every budget is equal and
a report is the same shape whatever it supports) and ``input`` (the honest randomizer run on a
target). The expected gain is :func:`pldp.robustness.support_gain` with a fake's support ``1`` at
the targets (``mga``) or its exact support for the family (``input``: :meth:`SketchRule.support`),
and the honest estimate's exact expectation for the mechanism's own hash family
(:meth:`pldp.mechanisms.sketch.CMS.expected_counts`: the family's collisions bias it), so the gain
is exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import Attack, rule_for
from pldp.attacks.hadamard import null_basis
from pldp.attacks.pure import ALL_RULES, PureRule, _choose
from pldp.channel.sketch import sketch_hashes
from pldp.mechanisms.sketch import CMS, HCMS
from pldp.oracle import FrequencyOracle
from pldp.robustness import support_gain

__all__ = ["SketchRule", "cms_fakes", "hcms_fakes"]


def cms_fakes(mech: CMS, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` CMS reports in :meth:`CMS.perturb`'s format: a uniform row, the targets' bits set, no flips."""
    rows = rng.integers(0, mech.k, size=m)
    bits = np.zeros((m, mech.m), dtype=bool)
    bits[np.arange(m)[:, None], sketch_hashes(targets[None, :], rows[:, None], mech.m)] = True
    return np.asarray(mech.reports_from_columns({"row": rows, "bits": np.packbits(bits, axis=1)})[0])


def hcms_fakes(mech: HCMS, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` HCMS reports ``(j, l, 1)``: a uniform row ``j``, ``l`` uniform among the columns where
    every target's entry ``H[h_j(t), l]`` is ``+1``."""
    rows = rng.integers(0, mech.k, size=m)
    out = np.zeros((m, 3), dtype=np.int64)
    out[:, 0], out[:, 2] = rows, 1
    bits = mech.m.bit_length() - 1
    for j in np.unique(rows):
        at = np.flatnonzero(rows == j)
        basis = np.array(null_basis([int(h) for h in sketch_hashes(targets, j, mech.m)], bits), dtype=np.int64)
        if basis.size:
            pick = rng.integers(0, 2, size=(at.size, basis.size)).astype(bool)
            out[at, 1] = np.bitwise_xor.reduce(np.where(pick, basis[None, :], 0), axis=1)
    return out


@rule_for(CMS, HCMS)
class SketchRule(PureRule):
    """CMS and HCMS: a fake supports every target (module docstring)."""

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        mech: Any = oracle
        if ALL_RULES[attack.strategy] == "input":
            return np.asarray(mech.perturb(_choose(attack.targets, m, rng), rng))
        if isinstance(mech, CMS):
            return cms_fakes(mech, attack.targets, m, rng)
        return hcms_fakes(mech, attack.targets, m, rng)

    def support(self, mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
        """``1`` at the targets (``mga``), or for ``input`` (the honest randomizer on a uniform target
        ``t``) the exact support of each target ``t'`` for the family: ``p*`` where the row collides
        ``t`` and ``t'`` (always when ``t = t'``), ``q_0 = (q* - p*/m) / (1 - 1/m)`` elsewhere."""
        p, q = mech.support
        s = q.copy()
        if how == "input":
            q0 = (q[0] - p[0] / mech.m) / (1.0 - 1.0 / mech.m)
            kappa = mech.collided(targets)[:, targets]  # (t, t')
            s[targets] = (kappa * p[0] + (1.0 - kappa) * q0).mean(axis=0)
        else:
            s[targets] = 1.0
        return s

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        counts = np.asarray(data[0], dtype=float)
        n = counts.sum()
        mech: Any = oracle
        s = self.support(mech, attack.targets, ALL_RULES[attack.strategy])
        p, q = mech.support
        honest = float(mech.expected_counts(data[0], attack.targets).sum()) / n
        return support_gain(p, q, s, attack.targets, m / (n + m), honest)

"""Fake reports of Hadamard response (HR): the maximal gain attack picks an index every target's half holds.

A report ``y`` supports every item ``v`` with ``y in C_v``, that is with ``(v + 1) . y = 0`` over
GF(2) (the parity of ``(v + 1) & y``). The indices every target supports are therefore the
solutions of ``r`` linear equations in ``log2(K)`` unknowns: a subspace, never empty (it holds
``0``), of dimension ``log2(K)`` minus the rank of the targets' rows. Following Cao, Jia, Gong
(USENIX Security 2021, Sec. 4.2), a fake reports an index drawn uniformly from that subspace
(:func:`common_indices`): every target is supported; another item ``v`` is supported always when
``v + 1`` is a sum of targets' rows, and with probability ``1/2`` otherwise.

Strategies: ``mga`` (and ``sensitive``, ``knows_defence``, ``adaptive``: a report is one index
whatever it supports, and every budget is equal) and ``input`` (the honest randomizer run on a
target). The expected gain is :func:`pldp.robustness.support_gain` with a fake's support ``1`` at
the targets (``mga``, found for every fake) or ``q + (p - q)/r`` (``input``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import rule_for
from pldp.attacks.support import SupportRule
from pldp.mechanisms.hadamard import HR

__all__ = ["HadamardRule", "common_indices", "null_basis"]


def null_basis(rows: list[int], bits: int) -> list[int]:
    """A basis of ``{y < 2**bits : popcount(row & y) even for every row}`` over GF(2).

    The rows are brought to reduced echelon form (each pivot bit in one row only); each free bit
    ``f`` gives the solution with bit ``f`` set and each pivot bit set where its row has bit ``f``.
    """
    pivots: dict[int, int] = {}  # pivot bit -> its reduced row
    for row in rows:
        for bit, other in pivots.items():
            if row >> bit & 1:
                row ^= other
        if row:
            bit = row.bit_length() - 1
            for b, other in pivots.items():
                if other >> bit & 1:
                    pivots[b] = other ^ row
            pivots[bit] = row
    basis = []
    for f in range(bits):
        if f not in pivots:
            basis.append((1 << f) | sum(1 << b for b, row in pivots.items() if row >> f & 1))
    return basis


def common_indices(targets: np.ndarray, k: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` indices below ``k``, each uniform over those in every target's half ``C_t`` (module docstring)."""
    basis = np.array(null_basis([int(t) + 1 for t in targets], k.bit_length() - 1), dtype=np.int64)
    out = np.zeros(m, dtype=np.int64)
    if basis.size:
        pick = rng.integers(0, 2, size=(m, basis.size)).astype(bool)
        out = np.bitwise_xor.reduce(np.where(pick, basis[None, :], 0), axis=1)
    return out


@rule_for(HR)
class HadamardRule(SupportRule):
    """HR: a report is one index of the Hadamard matrix (module docstring)."""

    def mga_reports(self, mech: Any, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return common_indices(targets, mech.K, m, rng)

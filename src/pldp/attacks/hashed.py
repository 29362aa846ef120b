"""Fake reports of local hashing (OLH, BLH): Cao et al.'s maximal gain attack searches the seeds.

A report ``(s, y)`` supports every item ``v`` with ``H_s(v) = y``. Cao, Jia, Gong (USENIX
Security 2021, Sec. 4.2) let each fake user search for a seed that hashes the targets to one value
and report it: every target is then supported, and each other item with probability ``1/g``.
Here a fake tries :data:`CANDIDATES` seeds drawn uniformly and keeps the first under which all
``r`` targets share a hash value (the value most of them share, when none does: then its report
supports the most targets of any candidate). With one target every seed works; with ``r``
targets a candidate works with probability about ``g^(1 - r)``. A small family (FLH, up to
:data:`WHOLE_FAMILY` seeds) is searched whole, once: each fake reports a seed drawn uniformly among
those under which the most targets share a value, and that value.

Strategies: ``mga`` (and ``sensitive``, ``knows_defence``, ``adaptive``: a report of a seed and a
value is the same shape whatever it supports, and every budget is equal) and ``input`` (the honest
randomizer run on a target). The expected gain is :func:`pldp.robustness.support_gain` with a
fake's support ``1`` at the targets (``mga``) or ``q + (p - q)/r`` (``input``); it is given only
when the search fails for fewer than one fake in ``10^12`` (for a family searched whole: when some
seed hashes every target to one value).

The Toeplitz family needs no search: it is linear, and a seed below ``g`` has ``tau = 0``, so
``H_s(x) = b = s`` for every item. A fake reports ``(s, s)`` with ``s`` uniform below ``g``
(:func:`toeplitz_reports`): it supports every target, however many, and every other item too. That
is the worst a fake can do to the targets, the bound the robust estimators take
(:mod:`pldp.robustness`), and the expected gain is given for any number of targets. (Such a report
is also easy to spot: an honest user draws ``tau = 0`` with probability ``2^(r - 31)``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import Attack, rule_for
from pldp.attacks.pure import ALL_RULES
from pldp.attacks.support import SupportRule
from pldp.channel.hashed import SEEDS, hash_values
from pldp.mechanisms.hashed import OLH
from pldp.oracle import FrequencyOracle

__all__ = ["CANDIDATES", "WHOLE_FAMILY", "HashedRule", "best_seeds", "search_seeds", "toeplitz_reports"]

#: Seeds a fake user of the maximal gain attack tries.
CANDIDATES = 1024
#: The largest family the attack searches whole (:func:`best_seeds`).
WHOLE_FAMILY = 1 << 20
#: Fakes per block of the search (``block * CANDIDATES * r`` hash values at once).
_BLOCK = 256
#: The largest probability that a fake's search fails for which the closed form is given.
_FAIL = 1e-12


def _shares(targets: np.ndarray, seeds: np.ndarray, g: int, family: str = "xxh32") -> tuple[np.ndarray, np.ndarray]:
    """Under each seed (any shape), the most targets sharing one hash value, and that value."""
    h = hash_values(targets, seeds[..., None], g, family)  # (..., r)
    counts = (h[..., :, None] == h[..., None, :]).sum(axis=-1)  # per target, how many share its value
    best_target = counts.argmax(axis=-1)[..., None]
    return np.take_along_axis(counts, best_target, axis=-1)[..., 0], np.take_along_axis(h, best_target, axis=-1)[..., 0]


def best_seeds(targets: np.ndarray, g: int, seeds: int, family: str = "xxh32") -> tuple[np.ndarray, np.ndarray, int]:
    """A whole family searched: the seeds under which the most targets share a hash value, that value
    under each, and how many targets share it."""
    share, value = _shares(targets, np.arange(seeds, dtype=np.int64), g, family)
    top = int(share.max())
    best = np.flatnonzero(share == top)
    return best, value[best].astype(np.int64), top


def search_seeds(
    targets: np.ndarray, g: int, m: int, rng: np.random.Generator, seeds: int = SEEDS, family: str = "xxh32"
) -> np.ndarray:
    """``m`` reports ``(seed, value)``: in a family of more than :data:`WHOLE_FAMILY` seeds, each the first
    of :data:`CANDIDATES` random seeds under which the most targets share a hash value (all of them,
    when one does), and that value; in a smaller one, a seed drawn among :func:`best_seeds`."""
    if seeds <= WHOLE_FAMILY:
        best, value, _ = best_seeds(targets, g, seeds, family)
        pick = rng.integers(0, best.size, size=m)
        return np.stack([best[pick], value[pick]], axis=1)
    out = np.zeros((m, 2), dtype=np.int64)
    for start in range(0, m, _BLOCK):
        k = min(_BLOCK, m - start)
        drawn = rng.integers(0, seeds, size=(k, CANDIDATES))
        share, value = _shares(targets, drawn, g, family)
        pick = share.argmax(axis=1)  # the first candidate of the largest share
        rows = np.arange(k)
        out[start : start + k, 0] = drawn[rows, pick]
        out[start : start + k, 1] = value[rows, pick]
    return out


def toeplitz_reports(g: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` reports ``(s, s)`` with ``s`` uniform below ``g``: under the Toeplitz family a seed below ``g``
    hashes every item to ``s`` (module docstring), so each report supports every item."""
    s = rng.integers(0, g, size=m)
    return np.stack([s, s], axis=1)


@rule_for(OLH)
class HashedRule(SupportRule):
    """OLH and BLH: a report is a seed and a value (module docstring)."""

    def mga_reports(self, mech: Any, targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        if mech.hash == "toeplitz":
            return toeplitz_reports(mech.g, m, rng)
        return search_seeds(targets, mech.g, m, rng, mech.seeds, mech.hash)

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        mech: Any = oracle
        if mech.seeds <= WHOLE_FAMILY:
            fail = float(best_seeds(attack.targets, mech.g, mech.seeds)[2] < attack.targets.size)
        elif mech.hash == "toeplitz":
            fail = 0.0  # a seed below g supports every item
        else:
            fail = (1.0 - float(mech.g) ** (1 - attack.targets.size)) ** CANDIDATES
        if ALL_RULES[attack.strategy] != "input" and fail > _FAIL:
            return None
        return super().expected_gain(oracle, attack, m, data)

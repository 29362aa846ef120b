"""Fake users against PEM: the maximal gain attack promotes a string nobody holds into the discovered answers.

A fake report is a level, a group, a seed and a value, all of the fake's choosing. Cao, Jia, Gong
(USENIX Security 2021) let a fake of local hashing report a seed and the hash value of its target,
so that its report supports the target with probability 1, where an honest holder's supports it with
probability :math:`p^*`. Against PEM the target is a string: a fake in group ``j`` reports the hash
of the fingerprint of the target's first ``j + 1`` bytes (:func:`pem_fake_reports`). The fakes spread
evenly over the groups, so the target's prefix gains at every step, and claim the level whose
report weighs most in the pooled estimate: its weight is :math:`w_t \\propto n_{tj} / V_t`, so a fake
at level ``t`` moves the estimate by :math:`(p_t - q_t) / q_t` over :math:`\\sum_t n_{tj} / V_t`,
largest at the largest budget.

With ``m_j`` fakes among ``n_j`` honest users of group ``j`` at one level, the target's estimate
at the last step has expectation :math:`\\beta_j (1 - q) / (p - q)` with
:math:`\\beta_j = m_j / (n_j + m_j)` (:func:`pem_expected_share`): about twice the share of fakes
at :math:`\\varepsilon = 4`. PEM has no robust estimator: the gain is Cao et al.'s maximal one, and
a campaign that fears fake users must bound their number (respondent codes, rate limits) rather
than rely on the estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.hashed import hash_values
from pldp.errors import ParameterError
from pldp.heavy import PEM
from pldp.heavy.strings import answer_rows, fingerprints

__all__ = ["pem_expected_share", "pem_fake_reports"]


def pem_fake_reports(pem: PEM, target: Any, m: int, rng: np.random.Generator, level: int | None = None) -> np.ndarray:
    """``m`` fake reports ``(level, group, seed, value)`` promoting ``target`` (text or bytes).

    Parameters
    ----------
    pem : PEM
        The protocol attacked.
    target : str or bytes
        The string promoted (cut to ``pem.max_bytes`` bytes, as an honest answer is).
    m : int
        Fake users.
    rng : numpy.random.Generator
        The attacker's randomness (seeds).
    level : int, optional
        The level claimed; default the largest budget's (module docstring).

    Returns
    -------
    ndarray of int64, shape (m, 4)
        Fake ``j`` in group ``j mod L``, a uniform seed, and the target prefix's hash value under it.
    """
    m = check_int(m, "m", 0)
    lev = pem.levels.size - 1 if level is None else check_int(level, "level", 0)
    if lev >= pem.levels.size:
        raise ParameterError(f"level must lie in [0, {pem.levels.size}), got {lev}")
    row = answer_rows([target], pem.max_bytes)[0]
    group = np.arange(m) % pem.max_bytes
    prefix = np.array([fingerprints(row[None, : j + 1])[0] for j in range(pem.max_bytes)])
    node = pem.nodes[lev]
    seed = rng.integers(0, node.seeds, size=m)
    value = hash_values(prefix[group], seed, node.g).astype(np.int64)
    return np.stack([np.full(m, lev), group, seed, value], axis=1)


def pem_expected_share(pem: PEM, honest: int, fakes: int, level: int | None = None) -> float:
    """The target's expected estimate at PEM's last step when ``fakes`` fakes at one ``level`` join
    ``honest`` users at that level, all groups alike: :math:`\\beta (1 - q) / (p - q)` with
    :math:`\\beta = m / (n + m)` (module docstring; one level, groups of equal expected size)."""
    node = pem.nodes[pem.levels.size - 1 if level is None else level]
    p, q = node.support
    beta = fakes / (honest + fakes)
    return float(beta * (1 - q) / (p - q))

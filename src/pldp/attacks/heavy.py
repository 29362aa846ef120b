"""Fake users against PEM and TreeHist: the maximal gain attack promotes a string nobody holds to an answer.

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

Against TreeHist (:func:`treehist_fake_reports`) a fake sends both parts at the target: its prefix
part at its depth, as against PEM, and its word part the hash of the target's fingerprint. The word
parts of all ``n`` users estimate the candidates, so ``m`` fakes move the target's final estimate to
:math:`\beta (1 - q_w) / (p_w - q_w)` with :math:`\beta = m / (n + m)` at the word part's grid
(:func:`treehist_expected_share`): the same gain as against PEM at the word part's budget, and the
target is a candidate whenever its prefixes survive every depth, which the fakes' prefix parts see
to.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.hashed import HashedNode, hash_values
from pldp.errors import ParameterError
from pldp.heavy import PEM, TreeHist
from pldp.heavy.pooled import absent_weights
from pldp.heavy.prefixes import prefix_rows
from pldp.heavy.strings import answer_rows, fingerprints

__all__ = [
    "pem_expected_share",
    "pem_fake_reports",
    "pooled_expected_share",
    "treehist_expected_share",
    "treehist_fake_reports",
]


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
    m, lev = _fakes(m, level, pem.levels.size)
    group = np.arange(m) % pem.max_bytes
    row = answer_rows([target], pem.max_bytes)
    prefix = np.concatenate([fingerprints(row[:, : j + 1]) for j in range(pem.max_bytes)])
    seed, value = _supporting(pem.nodes[lev], prefix[group], rng)
    return np.stack([np.full(m, lev), group, seed, value], axis=1)


def treehist_fake_reports(
    tree: TreeHist, target: Any, m: int, rng: np.random.Generator, level: int | None = None
) -> np.ndarray:
    """``m`` fake reports ``(level, depth, prefix seed, prefix value, word seed, word value)`` promoting
    ``target``: fake ``j`` at depth ``j mod D``, each part a uniform seed and the hash value under it
    of the target's prefix at that depth, and of the target (parameters as :func:`pem_fake_reports`)."""
    m, lev = _fakes(m, level, tree.levels.size)
    depth = np.arange(m) % tree.depths
    row = answer_rows([target], tree.max_bytes)
    prefix = np.concatenate([fingerprints(prefix_rows(row, (j + 1) * tree.step_bits)) for j in range(tree.depths)])
    seed, value = _supporting(tree.prefix_nodes[lev], prefix[depth], rng)
    word_seed, word_value = _supporting(tree.word_nodes[lev], np.repeat(fingerprints(row), m), rng)
    return np.stack([np.full(m, lev), depth, seed, value, word_seed, word_value], axis=1)


def _fakes(m: int, level: int | None, levels: int) -> tuple[int, int]:
    """The fakes' number and level (default the largest budget's), checked."""
    m = check_int(m, "m", 0)
    lev = levels - 1 if level is None else check_int(level, "level", 0)
    if lev >= levels:
        raise ParameterError(f"level must lie in [0, {levels}), got {lev}")
    return m, lev


def _supporting(node: HashedNode, items: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A uniform seed per item and the item's hash value under it: a report that supports the item
    with probability 1."""
    seed = rng.integers(0, node.seeds, size=items.size)
    return seed, hash_values(items, seed, node.g, node.family).astype(np.int64)


def pem_expected_share(pem: PEM, honest: int, fakes: int, level: int | None = None) -> float:
    """The target's expected estimate at PEM's last step when ``fakes`` fakes at one ``level`` join
    ``honest`` users at that level, all groups alike: :math:`\\beta (1 - q) / (p - q)` with
    :math:`\\beta = m / (n + m)` (module docstring; one level, groups of equal expected size)."""
    return _expected(pem.nodes[pem.levels.size - 1 if level is None else level], honest, fakes)


def treehist_expected_share(tree: TreeHist, honest: int, fakes: int, level: int | None = None) -> float:
    """The target's expected final estimate when ``fakes`` fakes at one ``level`` join ``honest``
    users at that level: :math:`\beta (1 - q_w) / (p_w - q_w)` at the word part (module docstring)."""
    return _expected(tree.word_nodes[tree.levels.size - 1 if level is None else level], honest, fakes)


def pooled_expected_share(
    nodes: tuple[HashedNode, ...], honest: Any, fakes: int, level: int | None = None, pooling: str = "variance"
) -> float:
    """The target's expected pooled estimate when ``fakes`` fakes at ``level`` (default the largest
    budget's) join ``honest[t]`` users at each level ``t``, none of whom holds the target: the fakes'
    level estimates it at :math:`\\beta (1 - q) / (p - q)` with :math:`\\beta = m / (n_t + m)`, the other
    levels at 0 in expectation, and the levels are pooled with the weights of their report counts,
    the fakes' included (:func:`~pldp.heavy.pooled.absent_weights`). With ``"variance"`` a fake's
    weight grows with its level's budget; with ``"robust"`` it is the same at every level.

    Examples
    --------
    >>> pem = PEM([1.0, 4.0], max_bytes=4)
    >>> [round(pooled_expected_share(pem.nodes, [20_000, 20_000], 800, pooling=k), 3) for k in ("variance", "robust")]
    [0.077, 0.049]
    """
    n = np.asarray(honest, dtype=np.int64).reshape(-1)
    m, lev = _fakes(fakes, level, len(nodes))
    if n.size != len(nodes) or (n < 0).any():
        raise ParameterError(f"honest must give a non-negative count per level ({len(nodes)}), got {n.tolist()}")
    counts = n.copy()
    counts[lev] += m
    w, _ = absent_weights(nodes, counts, pooling)
    return float(w[lev]) * _expected(nodes[lev], int(n[lev]), m)


def _expected(node: HashedNode, honest: int, fakes: int) -> float:
    """:math:`\beta (1 - q) / (p - q)` of ``node`` with :math:`\beta = m / (n + m)`."""
    p, q = node.support
    beta = fakes / (honest + fakes)
    return float(beta * (1 - q) / (p - q))

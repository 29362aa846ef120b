r"""Budget levels in a heavy-hitter protocol: one OLH node per level, and one estimate pooled over them.

Each user reports at her level's budget through that level's node (its own ``g``), the level in the
clear, like RCF (:class:`~pldp.protocols.RCF`). A group of users estimates a candidate's share at
each level by OLH's unbiased estimate over the level's ``n_t`` reports of the group,

.. math::

    \hat f_t = \frac{C_t / n_t - q_t^*}{p_t^* - q_t^*}, \qquad
    \operatorname{Var} \hat f_t = \frac{f p_t^*(1 - p_t^*) + (1 - f) q_t^*(1 - q_t^*)}{n_t (p_t^* - q_t^*)^2},

and the levels' estimates are combined with weights :math:`w_t \propto n_t / V_t` (:math:`V_t` the
level's OLH factor at an absent item, on its node's grid): the inverse of their variances at an
absent item, where the pooled estimate's variance is :math:`1 / \sum_t (n_t / V_t)`. Elsewhere it
is :math:`\sum_t w_t^2 \operatorname{Var} \hat f_t`, plus the groups' sampling when a group is a
uniform sample of its level's ``N_t`` users drawn without replacement,
:math:`f (1 - f) \sum_t w_t^2 (N_t - n_t) / (n_t (N_t - 1))`, both taken at the pooled estimate of
``f`` clipped to ``[0, 1]`` (a level's own estimate is noisier). The pooled estimate is the
population's share when an answer does not depend on its holder's level; otherwise it is the
levels' shares weighted by ``w``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pldp._validation import check_epsilon, check_index_range, check_int, check_probability
from pldp.channel.claims import Verification
from pldp.channel.columns import refuse_first, refuse_out_of_range
from pldp.channel.hashed import HashedNode
from pldp.channel.heavy import FINGERPRINTS, composed_rows
from pldp.errors import ParameterError, ReportError
from pldp.mechanisms.hashed import item_support, olh_g, olh_grid
from pldp.mechanisms.support import run_program
from pldp.mechanisms.toeplitz import toeplitz_support
from pldp.protocols.leveled import check_levels

__all__ = [
    "POOLINGS",
    "absent_weights",
    "budgets_text",
    "checked_protocol",
    "checked_reports",
    "composed_check",
    "level_nodes",
    "pooled_all",
    "pooled_estimates",
    "randomize",
    "user_levels",
]


#: How the levels' estimates are pooled (:func:`absent_weights`): by inverse variance, or so that every
#: report weighs alike whatever level it claims.
POOLINGS = ("variance", "robust")


def level_nodes(levels: np.ndarray, g: int | None = None) -> tuple[HashedNode, ...]:
    """One OLH node over the fingerprints per budget level: ``g`` hash values at every level, default
    each level's ``round(e^eps) + 1``, on the ``2**32`` grid."""
    gs = [olh_g(float(e)) if g is None else check_int(g, "g", 2) for e in levels]
    return tuple(
        HashedNode(FINGERPRINTS, gl, "xxh32", *olh_grid(float(e), gl), float(e))
        for e, gl in zip(levels, gs, strict=True)
    )


def pooled_estimates(
    nodes: tuple[HashedNode, ...],
    reports: np.ndarray,
    items: np.ndarray,
    population: Any = None,
    pooling: str = "variance",
) -> tuple[np.ndarray, np.ndarray, float]:
    """One group's pooled estimates of the shares of ``items`` (fingerprints), their variances, and the
    standard error at an absent item (module docstring).

    Parameters
    ----------
    nodes : tuple of HashedNode
        Each level's node.
    reports : ndarray of int64, shape (n, 3)
        The group's checked ``(level, seed, value)`` rows.
    items : ndarray of int64
        The candidates' fingerprints.
    population : array_like of int, optional
        ``N_t``: each level's users, of whom the group is a uniform sample; ``None`` when the group
        is every user (no sampling term).
    pooling : {"variance", "robust"}
        The levels' weights (:func:`absent_weights`).
    """
    level_n = np.bincount(reports[:, 0], minlength=len(nodes))
    w, se = absent_weights(nodes, level_n, pooling)
    present = np.flatnonzero(level_n)
    if present.size == 0:
        return np.zeros(items.size), np.full(items.size, np.inf), se
    estimates = {}
    for t in present:
        p, q = nodes[t].support
        counts = item_support(reports[reports[:, 0] == t][:, 1:], items, nodes[t].g)
        estimates[t] = (counts / level_n[t] - q) / (p - q)
    f = np.asarray(sum(w[t] * estimates[t] for t in present), dtype=float)
    c = np.clip(f, 0.0, 1.0)
    var = np.zeros(items.size)
    sample = 0.0  # times f (1 - f): the groups' sampling
    for t in present:
        n_t, (p, q) = int(level_n[t]), nodes[t].support
        var += w[t] ** 2 * (c * p * (1 - p) + (1 - c) * q * (1 - q)) / (n_t * (p - q) ** 2)
        total = n_t if population is None else int(population[t])
        sample += w[t] ** 2 * (total - n_t) / (n_t * max(total - 1, 1))
    return f, var + c * (1 - c) * sample, se


def pooled_all(
    nodes: tuple[HashedNode, ...], reports: np.ndarray, d: int, pooling: str = "variance"
) -> tuple[np.ndarray, float]:
    r"""The pooled estimates of all ``d`` items from one group's checked ``(level, seed, value)`` rows
    through the levels' Toeplitz nodes, and their standard error at an absent item: each level's
    support counts (:func:`~pldp.mechanisms.toeplitz.toeplitz_support`), its unbiased estimates,
    weighted as :func:`pooled_estimates` weighs them (:func:`absent_weights`), one level's counts in
    memory at a time.

    Examples
    --------
    >>> from pldp.mechanisms.hashed import olh_grid
    >>> node = HashedNode(512, 8, "toeplitz", *olh_grid(2.0, 8), 2.0)
    >>> rng = np.random.default_rng(1)
    >>> seeds = rng.integers(0, node.seeds, 4000)
    >>> from pldp.channel.toeplitz import toeplitz_values
    >>> values = toeplitz_values(np.full(4000, 300), seeds, 8)   # every report supports item 300
    >>> f, se = pooled_all((node,), np.column_stack([np.zeros(4000, dtype=np.int64), seeds, values]), 512)
    >>> int(np.argmax(f))
    300
    """
    level_n = np.bincount(reports[:, 0], minlength=len(nodes))
    w, se = absent_weights(nodes, level_n, pooling)
    f = np.zeros(d)
    for t in np.flatnonzero(level_n):
        at = reports[reports[:, 0] == t]
        p, q = nodes[t].support
        part = toeplitz_support(at[:, 1], at[:, 2], d, nodes[t].g) * (w[t] / (level_n[t] * (p - q)))
        part -= w[t] * q / (p - q)
        f += part
        del part
    return f, se


def absent_weights(
    nodes: tuple[HashedNode, ...], level_n: np.ndarray, pooling: str = "variance"
) -> tuple[np.ndarray, float]:
    """The levels' weights (0 for a level without reports) and the pooled standard error at an absent item.

    ``"variance"``: :math:`w_t \\propto n_t / V_t`, the inverse of the levels' variances at an absent item,
    where the pooled standard error is :math:`1 / \\sqrt{\\sum_t n_t / V_t}`. ``"robust"``:
    :math:`w_t \\propto n_t (p_t - q_t) / (1 - q_t)`, so that a report that supports an item moves the
    pooled estimate by the same amount, :math:`1 / \\sum_t n_t (p_t - q_t) / (1 - q_t)`, whatever level
    it claims (the user-level protocols' ``"robust"``, :mod:`pldp.estimation.spread`); its standard
    error is :math:`\\sqrt{\\sum_t w_t^2 V_t / n_t}`. Both are ``inf`` with no reports.
    """
    if pooling not in POOLINGS:
        raise ParameterError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    support = [node.support for node in nodes]
    factors = np.array([q * (1 - q) / (p - q) ** 2 for p, q in support])  # V_t at an absent item, on the grid
    n = np.asarray(level_n, dtype=float)
    raw = n / factors if pooling == "variance" else n * np.array([(p - q) / (1 - q) for p, q in support])
    total = float(raw.sum())
    if total == 0.0:
        return np.zeros(len(nodes)), math.inf
    w = raw / total
    if pooling == "variance":
        return w, 1.0 / math.sqrt(total)
    present = n > 0
    return w, math.sqrt(float(np.sum(w[present] ** 2 * factors[present] / n[present])))


def checked_reports(
    reports: Any, protocol: str, group: str, groups: int, parts: dict[str, tuple[HashedNode, ...]]
) -> np.ndarray:
    """Reports of ``(level, group)`` then a ``(seed, value)`` pair per part, checked: an integer array of
    ``2 + 2 k`` columns with every level, group, seed and value in range for its level's node; a
    :class:`~pldp.errors.ReportError` with the first report out of range and why.

    Parameters
    ----------
    reports : array_like of int
        The rows.
    protocol : str
        The protocol's name, for the messages.
    group : str
        What the second column is (``"group"``, ``"depth"``, ``"position"``) and ``groups`` how many.
    groups : int
        The groups a report may name.
    parts : dict
        Per pair of columns, its name (``""`` for a report of one part: ``seed`` and ``value``; else
        ``{name}_seed`` and ``{name}_value``) and each level's node.
    """
    names = [(f"{name}_" if name else "") + column for name in parts for column in ("seed", "value")]
    width = 2 + len(names)
    rep = np.asarray(reports)
    if rep.ndim != 2 or rep.shape[1] != width or rep.dtype.kind not in "iu":
        raise ReportError(
            f"{protocol} reports are an (n, {width}) integer array of ({', '.join(['level', group, *names])}), "
            f"got shape {rep.shape} and dtype {rep.dtype}"
        )
    if rep.dtype.kind == "u" and rep.size and int(rep.max()) > np.iinfo(np.int64).max:  # would wrap below
        refuse_first(np.asarray((rep > np.iinfo(np.int64).max).any(axis=1)), "a column is past 2**63 - 1")
    rep = rep.astype(np.int64, copy=False)
    refuse_out_of_range(rep[:, 0], len(next(iter(parts.values()))), "level")
    refuse_out_of_range(rep[:, 1], groups, group)
    for k, nodes in enumerate(parts.values()):
        seed, value = rep[:, 2 + 2 * k], rep[:, 3 + 2 * k]
        seeds = np.array([node.seeds for node in nodes])[rep[:, 0]]
        g = np.array([node.g for node in nodes])[rep[:, 0]]

        def seed_why(i: int, seed: np.ndarray = seed, seeds: np.ndarray = seeds, name: str = names[2 * k]) -> str:
            return f"{name} {int(seed[i])} is not in [0, {int(seeds[i])})"

        refuse_first((seed < 0) | (seed >= seeds), seed_why)

        def why(i: int, value: np.ndarray = value, g: np.ndarray = g, name: str = names[2 * k + 1]) -> str:
            return f"{name} {int(value[i])} is not in [0, {int(g[i])})"

        refuse_first((value < 0) | (value >= g), why)
    return rep


def composed_check(parts: dict[str, HashedNode], epsilon: float) -> Verification:
    """The exact check of a report made of independent parts drawn from one answer, one per node: every
    node's claims (each row's ``part`` named by its key), and the whole report's, the product of the
    parts' largest ratios within :math:`e^{\\varepsilon}`, decided exactly (the row ``"whole report"``).

    The parts are independent given the answer, so a report's probability is the product of the
    parts', and its largest ratio between two answers is at most the product of the parts' largest
    ratios. Each node's ratio is attained by a seed that separates the two answers (local hashing,
    :mod:`pldp.channel.hashed`), and two different answers are separated in every part that sees
    the whole answer or a prefix or fragment where they differ: the product is attained, by two
    answers that differ from their first byte.

    Examples
    --------
    >>> word, prefix = level_nodes(np.array([2.0])) * 2
    >>> check = composed_check({"prefix": prefix, "word": word}, 4.0)
    >>> check.holds, check.ldp_epsilon, [row.part for row in check.rows]
    (True, 4.0, ['prefix', 'word', 'whole report'])
    >>> composed_check({"prefix": prefix, "word": word}, 3.9).holds   # each part holds, the whole does not
    False
    """
    rows = composed_rows(parts, epsilon, "whole report")
    note = (
        f"the report's {len(parts)} parts ({', '.join(parts)}) compose: its epsilon is the sum of theirs, attained"
        if len(parts) > 1
        else "the report is one part: its epsilon is the part's"
    )
    return Verification(rows, float(epsilon), notes=[note])


# --------------------------------------------------------------------------- the protocols' shared checks and client
def checked_protocol(epsilon: Any, max_bytes: Any, split: Any = None) -> tuple[np.ndarray, int, float]:
    """A heavy-hitter protocol's budgets (one, or strictly increasing levels), its bound ``max_bytes``
    (1 to 64) and its ``split`` (strictly between 0 and 1; 0.0 when not given), checked."""
    levels = check_levels([check_epsilon(e) for e in np.atleast_1d(np.asarray(epsilon, dtype=float))])
    max_bytes = check_int(max_bytes, "max_bytes", 1)
    if max_bytes > 64:
        raise ParameterError(f"max_bytes must be at most 64, got {max_bytes}")
    if split is None:
        return levels, max_bytes, 0.0
    share = check_probability(split, "split")
    if not 0.0 < share < 1.0:
        raise ParameterError(f"split must lie strictly between 0 and 1, got {split!r}")
    return levels, max_bytes, share


def budgets_text(levels: np.ndarray) -> str:
    """The budgets as a ``repr`` shows them: ``4`` or ``[0.5, 4.0]``."""
    return f"{levels[0]:g}" if levels.size == 1 else str(levels.tolist())


def user_levels(level: Any, n: int, levels: int) -> np.ndarray:
    """Each of ``n`` users' level index (default 0), checked: integers (a budget given for its level's
    index would report at another budget), one per user, in ``[0, levels)``."""
    lev = np.zeros(n, dtype=np.int64) if level is None else np.asarray(level)
    if lev.dtype.kind not in "iu":
        raise ParameterError(f"level holds each user's level index (an integer), got dtype {lev.dtype}")
    if lev.shape != (n,):
        raise ParameterError(f"level needs one index per answer ({n}), got shape {np.shape(level)}")
    check_index_range(lev, levels, "level", ParameterError)
    return lev.astype(np.int64, copy=False)


def randomize(
    out: np.ndarray, column: int, nodes: tuple[HashedNode, ...], lev: np.ndarray, items: np.ndarray, rng: Any
) -> None:
    """Each level's users' ``items`` through the level's node (two words of ``rng`` each): the seeds
    into ``out[:, column]`` and the values into ``out[:, column + 1]``."""
    for t, node in enumerate(nodes):
        mine = np.flatnonzero(lev == t)
        _, cols = run_program(node, items[mine], node.d, rng, 2)
        out[mine, column], out[mine, column + 1] = cols["seed"], cols["value"]

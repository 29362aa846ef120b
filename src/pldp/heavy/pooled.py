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
:math:`f (1 - f) \sum_t w_t^2 (N_t - n_t) / (n_t (N_t - 1))` (both taken at ``f`` clipped to
``[0, 1]``). The pooled estimate is the population's share when an answer does not depend on its
holder's level; otherwise it is the levels' shares weighted by ``w``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.channel.claims import Verification, check_claims
from pldp.channel.columns import refuse_first, refuse_out_of_range
from pldp.channel.hashed import HashedNode
from pldp.errors import ReportError
from pldp.heavy.strings import FINGERPRINTS
from pldp.mechanisms.hashed import item_support, olh_g, olh_grid

__all__ = ["checked_reports", "composed_check", "level_nodes", "pooled_estimates"]


def level_nodes(levels: np.ndarray, g: int | None = None) -> tuple[HashedNode, ...]:
    """One OLH node over the fingerprints per budget level: ``g`` hash values at every level, default
    each level's ``round(e^eps) + 1``, on the ``2**32`` grid."""
    gs = [olh_g(float(e)) if g is None else check_int(g, "g", 2) for e in levels]
    return tuple(
        HashedNode(FINGERPRINTS, gl, "xxh32", *olh_grid(float(e), gl), float(e))
        for e, gl in zip(levels, gs, strict=True)
    )


def pooled_estimates(
    nodes: tuple[HashedNode, ...], reports: np.ndarray, items: np.ndarray, population: Any = None
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
    """
    fs, vs, ws, samples = [], [], [], []
    for t, node in enumerate(nodes):
        at = reports[reports[:, 0] == t][:, 1:]
        n_t = at.shape[0]
        if n_t == 0:
            continue
        p, q = node.support
        factor = q * (1 - q) / (p - q) ** 2  # V at an absent item, on the node's grid
        f_t = (item_support(at, items, node.g) / n_t - q) / (p - q)
        c = np.clip(f_t, 0.0, 1.0)
        fs.append(f_t)
        vs.append((c * p * (1 - p) + (1 - c) * q * (1 - q)) / (n_t * (p - q) ** 2))
        ws.append(n_t / factor)
        total = n_t if population is None else int(population[t])
        samples.append((total - n_t) / (n_t * max(total - 1, 1)))  # times f(1 - f): the group's sample
    if not ws:
        return np.zeros(items.size), np.full(items.size, np.inf), math.inf
    w = np.asarray(ws) / sum(ws)
    f = np.asarray(w @ np.asarray(fs))
    c = np.clip(f, 0.0, 1.0)
    var = np.asarray((w**2) @ np.asarray(vs)) + c * (1 - c) * float((w**2) @ np.asarray(samples))
    return f, var, 1.0 / math.sqrt(sum(ws))


def checked_reports(
    reports: Any, protocol: str, columns: str, groups: int, *node_sets: tuple[HashedNode, ...]
) -> np.ndarray:
    """Reports of ``(level, group)`` then one ``(seed, value)`` pair per node set, checked: an integer
    array of ``2 + 2 k`` columns with every level, group, seed and value in range for its level's node;
    a :class:`~pldp.errors.ReportError` with the first report out of range and why.

    Parameters
    ----------
    reports : array_like of int
        The rows.
    protocol, columns : str
        Names for the messages: ``"PEM"``, ``"(level, group, seed, value)"``.
    groups : int
        The groups (depths, positions) a report may name.
    *node_sets : tuple of HashedNode
        Per pair of columns, each level's node.
    """
    rep = np.asarray(reports)
    width = 2 + 2 * len(node_sets)
    if rep.ndim != 2 or rep.shape[1] != width or rep.dtype.kind not in "iu":
        raise ReportError(f"{protocol} reports are an (n, {width}) integer array of {columns}, got shape {rep.shape}")
    rep = rep.astype(np.int64, copy=False)
    refuse_out_of_range(rep[:, 0], len(node_sets[0]), "level")
    refuse_out_of_range(rep[:, 1], groups, "group")
    for k, nodes in enumerate(node_sets):
        seed, value = rep[:, 2 + 2 * k], rep[:, 3 + 2 * k]
        refuse_out_of_range(seed, nodes[0].seeds, "seed")
        g = np.array([node.g for node in nodes])[rep[:, 0]]

        def why(i: int, value: np.ndarray = value, g: np.ndarray = g) -> str:
            return f"value {int(value[i])} is not in [0, {int(g[i])})"

        refuse_first((value < 0) | (value >= g), why)
    return rep


def composed_check(parts: dict[str, HashedNode]) -> Verification:
    """The exact check of a report made of independent parts, one per node, drawn from one answer:
    every node's claims (each row's ``part`` named by its key), and the whole report's epsilon, the
    sum of the parts'.

    The parts are independent given the answer, so a report's probability is the product of the
    parts', and its largest ratio between two answers is at most the product of the parts' largest
    ratios. Each node's ratio is attained by a seed that separates the two answers (local hashing,
    :mod:`pldp.channel.hashed`), and two different answers are separated in every part that sees
    the whole answer or a prefix where they differ; so the sum is attained by two answers that
    differ from their first byte.

    Examples
    --------
    >>> word, prefix = level_nodes(np.array([2.0])) * 2
    >>> check = composed_check({"prefix": prefix, "word": word})
    >>> check.holds, check.ldp_epsilon, [row.part for row in check.rows]
    (True, 4.0, ['prefix', 'word'])
    """
    checks = {name: check_claims(node) for name, node in parts.items()}
    rows = [replace(row, part=name) for name, check in checks.items() for row in check.rows]
    eps = float(sum(check.ldp_epsilon for check in checks.values()))
    note = f"the report's {len(parts)} parts ({', '.join(parts)}) compose: its epsilon is the sum of theirs, attained"
    return Verification(rows, eps, notes=[note])

r"""The prefix tree's search, shared by PEM and TreeHist: depth by depth, grow the kept prefixes and keep
the largest estimates.

At depth ``j`` (prefixes of ``(j + 1) s`` bits) every kept prefix grows by each value of its next ``s``
bits (:func:`~pldp.heavy.prefixes.extend`), the depth's group estimates the candidates' shares,
pooled over the budget levels with each level's group a sample of its users
(:func:`~pldp.heavy.pooled.pooled_estimates`), and the ``width`` largest are kept (with a
``threshold``, only those estimated at least that share). Among a depth's ``m`` candidates held by
nobody the largest estimate is about :func:`~pldp.heavy.discovery.noise_quantile` ``(m)`` standard
errors at an absent item: an answer whose prefixes are estimated below that at some depth may be
dropped there, the search's *miss* share (the largest over the depths).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.channel.hashed import HashedNode
from pldp.errors import EstimationError, ReportError
from pldp.heavy.discovery import noise_quantile
from pldp.heavy.pooled import pooled_estimates
from pldp.heavy.prefixes import extend
from pldp.heavy.strings import fingerprints

__all__ = ["Search", "search"]


@dataclass(frozen=True)
class Search:
    """What the search kept at its last depth.

    Attributes
    ----------
    rows : ndarray of uint8
        The kept prefixes of the last depth, largest estimate first.
    frequencies, variance : ndarray
        Their estimates and variances from the last depth's group.
    floor : float
        The last depth's noise level: :func:`~pldp.heavy.discovery.noise_quantile` of its candidates
        times its standard error at an absent item.
    miss : float
        The largest noise level over the depths (module docstring).
    candidates : int
        The last depth's candidates.
    """

    rows: np.ndarray
    frequencies: np.ndarray
    variance: np.ndarray
    floor: float
    miss: float
    candidates: int


def search(
    nodes: tuple[HashedNode, ...],
    reports: np.ndarray,
    depths: int,
    step_bits: int,
    width: int,
    last: int,
    threshold: float | None = None,
    group: str = "group",
    pooling: str = "variance",
) -> Search:
    """Search the prefix tree (module docstring).

    Parameters
    ----------
    nodes : tuple of HashedNode
        Each level's node of the prefix reports.
    reports : ndarray of int64, shape (n, 4)
        Checked ``(level, depth, seed, value)`` rows.
    depths : int
        ``D``: the depths, ``0 .. D-1``; each must have reports.
    step_bits : int
        The bits a depth adds.
    width : int
        Prefixes kept at each depth but the last.
    last : int
        Prefixes kept at the last depth.
    threshold : float, optional
        Keep only the prefixes estimated at least this share.
    group : str
        What a depth's users are called in the refusals (``"group"``, ``"depth"``).
    pooling : {"variance", "robust"}
        How each depth's levels are pooled (:func:`~pldp.heavy.pooled.absent_weights`).

    Raises
    ------
    ReportError
        A depth without reports.
    EstimationError
        The threshold keeps no prefix at some depth.
    """
    level_n = np.bincount(reports[:, 0], minlength=len(nodes))
    kept = np.zeros((1, 0), dtype=np.uint8)
    f = var = np.zeros(0)
    floor = miss = 0.0
    by_depth = np.argsort(reports[:, 1], kind="stable")
    bounds = np.searchsorted(reports[by_depth, 1], np.arange(depths + 1))
    for j in range(depths):
        cand = extend(kept, j * step_bits, step_bits)
        mine = reports[by_depth[bounds[j] : bounds[j + 1]]]
        if mine.shape[0] == 0:
            raise ReportError(f"{group} {j} (prefixes of {(j + 1) * step_bits} bits) has no reports")
        f, var, se = pooled_estimates(nodes, mine[:, [0, 2, 3]], fingerprints(cand), level_n, pooling)
        floor = noise_quantile(cand.shape[0]) * se
        miss = max(miss, floor)
        order = np.argsort(-f, kind="stable")[: width if j + 1 < depths else last]
        if threshold is not None:
            order = order[f[order] >= threshold]
            if order.size == 0:
                raise EstimationError(
                    f"threshold {threshold:g} keeps no prefix of {(j + 1) * step_bits} bits "
                    f"(the largest estimate is {float(f.max(initial=-np.inf)):.4g}): nothing to discover"
                )
        kept, f, var = cand[order], f[order], var[order]
    return Search(kept, f, var, floor, miss, int(cand.shape[0]))

"""A one-level bound of :func:`~pldp.estimation.robust.robust_combine` that counts the caps and the
clipping of honest groups: what MPLDP's ``"huber"`` reports as ``info["bound"]``.

:func:`~pldp.estimation.robust.attack_bound` assumes every honest group stays within its clip
:math:`k s_h` of the result and that no honest group sits at the cap. With few groups of unequal
precision neither holds: MPLDP's largest level holds ~74 % of the precision (capped to half) and
its clip is the narrowest, so fakes that all claim the middle level push the result past it, it
is clipped, and the estimate moves further than :math:`X^*` (measured at :math:`n = 10^5`, β = 1 %:
0.041 ± 0.005 against :math:`X^*` = 0.040, ``tests/test_mpldp_robust.py``).

**The bound.** Fakes join group ``g`` in any number (adding precision :math:`\\phi` to it, so the
weights are recomputed with the cap) and report so that their group pulls with its full force
:math:`w_g k s_g` (the estimate is non-decreasing in the group's value, so this is their best).
The honest groups' estimates are drawn from their model, :math:`x_h \\sim N(\\mu, s_h^2)`; the move
of the estimate is the root of Huber's equation with the fakes minus the root without them, on the
same draws. The bound is the largest over ``g`` and a grid of :math:`\\phi` (:data:`PHI`, from no
fakes to a hundred times the group's precision) of the *mean* move over :data:`DRAWS` fixed normal
draws (antithetic pairs, the same for every call: the bound is deterministic given the scales). So it bounds the
*expected* gain of fakes that all claim one level; a single tally's gain may exceed it by the
honest noise.
"""

from __future__ import annotations

import numpy as np

from pldp.estimation.robust import capped_weights, huber_location

__all__ = ["DRAWS", "MEAN_BOUND_MODEL", "PHI", "mean_one_level_bound"]

#: Normal draws of the honest groups' estimates the mean move is taken over.
DRAWS = 128
#: The fakes' precision, in multiples of the group's honest precision.
PHI = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
#: The threat model of the bound, as the estimates report it.
MEAN_BOUND_MODEL = (
    "fakes that all claim one level (any level, any number of fakes): bound[x] is the most they move "
    "item x's estimate on average over the honest reports' noise, the honest levels' clipping and the cap "
    "counted (pldp.estimation.level_bound); fakes spread over several levels are NOT bounded (spread_bound "
    "is None): the worst case is measured by the optimising attacker, pldp.attacks.optimal.worst_case"
)


def mean_one_level_bound(scales: np.ndarray, weights: np.ndarray, cap: float, k: float) -> np.ndarray:
    """Per item, the largest mean move of the combination by fakes on one group (module docstring).

    Parameters
    ----------
    scales, weights : ndarray, shape (G, d)
        The groups' scales and capped weights of a :class:`~pldp.estimation.robust.RobustCombination`
        (groups of weight 0 hold no users and are left out).
    cap, k : float
        Its options.

    Notes
    -----
    The move is proportional to the scales when their ratios are fixed, so it is computed once per
    distinct pattern of used groups and scale ratios (ratios rounded to 1 %) and scaled per item.
    """
    s = np.asarray(scales, dtype=float)
    used = np.asarray(weights, dtype=float) > 0
    ref = np.where(used, s, 0.0).max(axis=0)
    ref = np.where(ref > 0, ref, 1.0)
    ratio = np.where(used, np.round(np.log(np.where(used, s, 1.0) / ref) / 0.01), np.inf)
    keys, inverse = np.unique(ratio.T, axis=0, return_inverse=True)
    rep = np.where(np.isfinite(keys.T), np.exp(np.where(np.isfinite(keys.T), keys.T, 0.0) * 0.01), 1.0)
    unit = _bound(rep, np.isfinite(keys.T), cap, k)
    return unit[np.asarray(inverse).reshape(-1)] * ref


def _bound(scales: np.ndarray, used: np.ndarray, cap: float, k: float) -> np.ndarray:
    """:func:`mean_one_level_bound` of distinct columns of scales (``used``: the groups with users)."""
    s = scales
    G, d = s.shape
    precision = np.where(used, 1.0 / np.where(used, s, 1.0) ** 2, 0.0)
    half = np.random.default_rng(0).standard_normal((G, DRAWS // 2))
    z = np.concatenate([half, -half], axis=1)  # fixed antithetic draws: a deterministic bound
    x = z[:, :, None] * s[:, None, :]  # (G, R, d), centred on the truth
    groups = np.flatnonzero(used.any(axis=1))
    phi = np.asarray(PHI)
    # every (group, phi) case at once: (G, cases, R, d)
    cases = [(g, f) for g in groups for f in phi]
    prec = np.repeat(precision[:, None, None, :], len(cases), axis=1).repeat(DRAWS, axis=2)
    xs = np.repeat(x[:, None], len(cases), axis=1)
    for c, (g, f) in enumerate(cases):
        prec[g, c] *= 1.0 + f
        xs[g, c] = np.where(used[g], 1e6 * s[g], 0.0)[None, :]  # the fakes' full pull
    prec = np.concatenate([precision[:, None, None, :].repeat(DRAWS, axis=2), prec], axis=1)
    xs = np.concatenate([x[:, None], xs], axis=1)
    flat = prec.reshape(G, -1)
    ww = capped_weights(flat, cap)
    sc = np.where(flat > 0, 1.0 / np.sqrt(np.where(flat > 0, flat, 1.0)), 1.0)
    mu = huber_location(xs.reshape(G, -1), sc, ww, k)[0].reshape(len(cases) + 1, DRAWS, d)
    move = np.mean(mu[1:] - mu[:1], axis=1)  # (cases, d)
    return np.maximum(move.max(axis=0), 0.0)

"""``"recover"``: subtract the fake users' contribution, in the manner of LDPRecover (Sun et al. 2024).

The reports of a pure oracle are a mixture: a share :math:`1 - \\eta` of genuine users, whose
support shares are :math:`q^* + \\delta f` with ``f`` on the simplex, and a share :math:`\\eta` of
fakes with support shares ``g``. In the unbiased estimate's units,

.. math::

    \\tilde f = (1 - \\eta) f + \\eta h, \\qquad h_j = \\frac{g_j - q^*_j}{\\delta_j}.

**Assumptions** (those of LDPRecover's adaptive attack): the fakes concentrate on a few target
items and treat every other item alike, at a rate :math:`g_0` fixed by the report format: a
direct-encoding report supports one item, so :math:`g_0 = 0`; a unary fake report carries the
honest mean number of ones :math:`\\bar\\ell` (as MGA pads it, to pass a test of its count), so
:math:`g_0 = (\\bar\\ell - r)/(d - r)` with ``r`` targets, :math:`\\bar\\ell` the observed mean. Off
the targets, :math:`h_0 = (g_0 - q^*)/\\delta < 0`: the fakes *pull every other item down* by
:math:`\\eta |h_0|`, below what any genuine distribution gives (:math:`f_j \\ge 0`).

**The recovery.** The fake share is estimated as the smallest :math:`\\eta` that the negative
estimates require,

.. math::

    \\hat\\eta = \\max\\Big(0, \\max_{j \\notin T} \\frac{-\\tilde f_j - z\\,\\sigma_j}{|h_{0,j}|}\\Big),
    \\qquad z = \\Phi^{-1}(1 - 0.05/d)

(an item's estimate may fall :math:`z` standard errors below 0 by chance, Bonferroni over the
items: without fakes :math:`\\hat\\eta = 0` with probability at least 95 %). The genuine
estimate is :math:`(\\tilde f - \\hat\\eta h_0)/(1 - \\hat\\eta)` off the targets; with the targets
``T`` given, their estimates are what the simplex leaves (split in proportion to their
:math:`\\tilde f`), which removes the fakes' mass from them; without, every item is corrected as
a non-target and the excess is removed evenly by the projection onto the simplex (Norm-Sub), so
the targets keep most of their gain: only the others' deflation is repaired. Variance:
:math:`\\sigma_j^2/(1-\\hat\\eta)^2` (:math:`\\hat\\eta` treated as known).

**What it bounds.** :math:`\\hat\\eta` is a lower bound on the fakes' share under the assumptions
(it sees them only through the items they push below zero), so with known targets the gain left
is that of :math:`\\eta - \\hat\\eta` fakes. An attacker who knows it reports some non-targets too
(``g_0`` above the assumed rate) and hides the deflation: then nothing is recovered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.consistency import norm_sub

__all__ = ["recover"]

#: The largest fake share the recovery will subtract.
ETA_MAX = 0.5


def recover(
    raw: np.ndarray,
    variance: np.ndarray,
    support: tuple[np.ndarray, np.ndarray],
    family: str,
    mean_ones: float,
    targets: Any = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The recovered estimate, its variance and ``info`` (module docstring).

    Parameters
    ----------
    raw, variance : ndarray, shape (d,)
        The unbiased estimate and its variance.
    support : (ndarray, ndarray)
        :math:`(p^*, q^*)` per item.
    family : {"direct", "unary"}
        The report format (it fixes the fakes' rate off the targets).
    mean_ones : float
        Unary: the observed mean number of ones per report.
    targets : array_like of int, optional
        The items suspected to be promoted (LDPRecover*); default unknown.
    """
    p_star, q_star = support
    d = raw.size
    gap = p_star - q_star
    chosen = np.zeros(d, dtype=bool)
    if targets is not None:
        idx = np.unique(np.asarray(targets, dtype=np.int64).reshape(-1))
        if idx.size == 0 or idx.min() < 0 or idx.max() >= d or idx.size >= d:
            raise EstimationError(f"targets must be between 1 and {d - 1} distinct items in [0, {d})")
        chosen[idx] = True
    r = max(int(chosen.sum()), 1)
    rate = 0.0 if family == "direct" else min(max((mean_ones - r) / (d - r), 0.0), 1.0)
    h0 = (rate - q_star) / gap
    from scipy.special import ndtri  # scipy is imported where it is used: `import pldp` and the clients load without it

    z = float(ndtri(1 - 0.05 / d))
    sd = np.sqrt(variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(~chosen & (h0 < 0), (-raw - z * sd) / -h0, 0.0)
    eta = float(min(max(np.max(need), 0.0), ETA_MAX))
    genuine = (raw - eta * h0) / (1 - eta)
    if chosen.any():
        rest = max(1.0 - float(genuine[~chosen].clip(min=0).sum()), 0.0)
        weight = raw[chosen].clip(min=0)
        genuine[chosen] = rest * (weight / weight.sum() if weight.sum() > 0 else np.full(weight.size, 1 / weight.size))
    freq, _ = norm_sub(genuine)
    info = {
        "estimator": "recover (in the manner of LDPRecover)",
        "fake_share": eta,
        "off_target_rate": rate,
        "targets": np.flatnonzero(chosen).tolist(),
        "z": z,
    }
    return freq, variance / (1 - eta) ** 2, info

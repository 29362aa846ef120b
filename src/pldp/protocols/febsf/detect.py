"""PLDP-FEBSF's ``"detect"``: unlikely unary reports dropped, and level reports tested against the level model.

* **Unary reports** (OUE, RAPPOR): a report whose number of ones is unlikely at *every* level
  (below ``alpha``; :mod:`pldp.estimation.detect`) is flagged, and when the joint test of the
  histogram of ones fires (against the levels' mixture fitted to it), the reports at its suspect
  counts too. The pattern tally holds every report's bits, so they are simply left out and AUEM
  runs on the rest with each level's kept channel (:func:`kept_estimate`, then a projection that
  only lowers): an honest report of
  level ``i`` is kept with probability :math:`\\kappa_i`, the same for every item, sets its
  user's bit and is kept with :math:`o_i`, another bit with :math:`c_i`. That is the correction
  for the honest reports dropped; ``rho`` and ``p`` are the whole honest population's. Where
  AUEM's rule would refuse it, the joint EM runs on the kept patterns as truncated data
  (:func:`~pldp.protocols.febsf.em.em` with ``keep``), as ``"detect"`` did everywhere before (3.4 s at
  :math:`n = 10^5`, against 26 ms for the kept AUEM at :math:`10^6`).
* **k-RR reports** are never unlikely (every level and item can be reported): nothing is flagged
  and the estimate is AUEM's where it fits the reports, else the joint EM's.
* **Level reports**: under the level mechanism, the share of reports at level ``l`` is
  :math:`\\lambda_l = \\sum_i \\rho_i \\pi(l|i) \\le \\max_i \\pi(l|i)` whatever the shares. A share
  above that by more than :math:`z = 4` binomial standard errors cannot come from honest users;
  ``info["level_excess"]`` counts the reports beyond it (a lower bound on the fakes claiming that
  level) and ``info["level_excess_share"]`` their share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.detect import (
    ALPHA_BAND,
    DEFAULT_ALPHA,
    KeptChannel,
    UnaryLaws,
    describe,
    flag_region,
    joint_info,
)
from pldp.estimation.result import Estimate
from pldp.estimation.spread import lowering_projection
from pldp.protocols.febsf.auem import GAP_Z, RANGE_Z, auem_trouble
from pldp.protocols.febsf.em import em
from pldp.protocols.febsf.tally import pattern_tally

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["LEVEL_Z", "detect", "kept_channel", "kept_estimate", "level_excess"]

#: Standard errors by which a reported level's share must exceed what any level shares allow.
LEVEL_Z = 4.0


def level_excess(protocol: FEBSF, tally: FEBSFTally) -> dict[str, Any]:
    """The level reports' test against the level model (module docstring)."""
    n = tally.n
    share = tally.level_counts / n
    most = protocol.pi.max(axis=0)  # the largest share each reported level can have
    slack = LEVEL_Z * np.sqrt(most * (1 - most) / n)
    excess = np.maximum(share - most - slack, 0.0)
    return {
        "level_excess": int(np.floor(excess.sum() * n)),
        "level_excess_share": float(excess.sum()),
        "level_excess_levels": np.flatnonzero(excess > 0).tolist(),
    }


#: The laws per FEBSF setting (levels' support probabilities and d): built once per process.
_LAWS: dict[tuple[bytes, bytes, int], UnaryLaws] = {}


def laws(protocol: FEBSF) -> UnaryLaws:
    """Each level's law of a report's number of ones (unary data); cached per setting."""
    d = protocol.d
    key = (np.asarray(protocol.p_star, dtype=float).tobytes(), np.asarray(protocol.q_star, dtype=float).tobytes(), d)
    if key not in _LAWS:
        comps = [
            (1.0 / protocol.t, np.full(d, a), np.full(d, b))
            for a, b in zip(protocol.p_star, protocol.q_star, strict=True)
        ]
        _LAWS[key] = UnaryLaws.of(comps, weights_known=False)  # the level shares are unknown
    return _LAWS[key]


def kept_channel(protocol: FEBSF, region: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per level ``i``: ``(own_i, cross_i, kappa_i)``, the probabilities that a report of level ``i``
    sets its user's bit and is kept, sets another given bit and is kept, and is kept
    (:class:`~pldp.estimation.detect.KeptChannel` of the level alone; cached per region)."""

    def build() -> np.ndarray:
        parts = []
        for a, b in zip(protocol.p_star, protocol.q_star, strict=True):
            one = UnaryLaws.of([(1.0, np.full(protocol.d, a), np.full(protocol.d, b))])
            ch = KeptChannel.of(one, region)
            parts.append((ch.own[0], ch.cross[0, 0], ch.kept[0]))
        return np.array(parts).T

    own, cross, kept = laws(protocol).memo(("febsf-kept", region.tobytes()), build)
    return own, cross, kept


def kept_estimate(
    protocol: FEBSF, tally: FEBSFTally, keep_rows: np.ndarray, region: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """AUEM on the kept reports, corrected for the honest ones dropped (module docstring):
    ``(f, variance, info)``."""
    _, level, count = tally.rows
    weight = count * keep_rows
    by_level = tally.level_bit_sums(weight.astype(float))  # (t, d): kept reports of reported level l setting bit j
    lev = np.bincount(level, weights=weight, minlength=protocol.t)[: protocol.t]
    n_kept = float(lev.sum())
    if not n_kept > 0:
        raise EstimationError("every report was dropped")
    own, cross, kappa = kept_channel(protocol, region)
    pp, qp = protocol.level_support
    lam = lev / n_kept
    scale = (pp - qp) * kappa
    w = (lam - qp) / scale  # rho'_i / kappa_i: the honest level shares up to a constant
    gap = own - cross
    den = float(w @ gap)
    slope = gap / scale
    se = float(np.sqrt(max(float(lam @ slope**2) - float(lam @ slope) ** 2, 0.0) / n_kept))
    if not den > GAP_Z * se:
        raise EstimationError(
            f"the kept level reports give p* - q* = {den:.3g}, within {GAP_Z:g} standard errors ({se:.3g}) of 0"
        )
    c = by_level.sum(axis=0) / n_kept
    f = (c - float(w @ cross)) / den
    sd = np.sqrt(c * (1 - c) / n_kept) / den
    out = np.flatnonzero((f < -RANGE_Z * sd) | (f > 1 + RANGE_Z * sd))
    if out.size:
        raise EstimationError(
            f"the estimate leaves [0, 1] by more than {RANGE_Z:g} standard errors at items {out[:5].tolist()}"
        )
    # delta method over the kept reports' means of (bit j, reported-level indicators)
    g_lam = -(cross[None, :] + f[:, None] * gap[None, :]) / (den * scale[None, :])  # (d, t)
    c_jl = by_level.T / n_kept  # (d, t)
    cov_cl = c_jl - c[:, None] * lam[None, :]
    quad = np.einsum("jl,l,jl->j", g_lam, lam, g_lam) - (g_lam @ lam) ** 2
    var = (c * (1 - c) / den**2 + 2 * np.sum(g_lam * cov_cl, axis=1) / den + quad) / n_kept
    return f, np.maximum(var, 0.0), {"kept_reports": round(n_kept), "rho_kept": (w / w.sum()).tolist()}


def detect(
    protocol: FEBSF, tally: FEBSFTally, *, alpha: float = DEFAULT_ALPHA, tol: float = 1e-10, max_iter: int = 20_000
) -> Estimate:
    r"""The ``"detect"`` estimate (module docstring); ``info`` holds the flagged share, the joint
    test of the histogram of ones and the level test.

    Unary reports: the flagged reports, and when the joint test fires the reports at its suspect
    counts (``info["dropped_ones"]``), are dropped, and AUEM runs on the rest with the kept
    channel: with :math:`\kappa_i`, :math:`o_i`, :math:`c_i` the probabilities that a report of
    level ``i`` is kept, sets its user's bit and is kept, sets another bit and is kept
    (:func:`kept_channel`), the kept reports' level shares give :math:`w_i \propto \rho_i` by
    AUEM's inversion divided by :math:`\kappa_i`, and :math:`\hat p_j = (c'_j - \sum_i w_i
    c_i) / \sum_i w_i (o_i - c_i)` (AUEM itself when nothing is dropped), with its delta-method
    variance, then Norm-Sub with its threshold kept at zero or above
    (:func:`~pldp.estimation.spread.lowering_projection`; the variance stays the kept AUEM's,
    ``info["kept_auem_sum"]`` is the sum before the projection): the unprojected ratio can sum far
    from 1 on a small tally (9 on a 300-report OUE tally), and a projection that only lowers gives
    no lift to fakes that lower every other item (reports with the target bit alone). Where AUEM's
    own rule would refuse it (the kept
    gap within :data:`~pldp.protocols.febsf.auem.GAP_Z` standard errors of 0, or an item outside
    [0, 1] by more than :data:`~pldp.protocols.febsf.auem.RANGE_Z`: few reports, fakes claiming a
    small level), the joint EM runs on the kept patterns as truncated data instead
    (``info["kept_auem_refused"]`` says why). k-RR reports: nothing is flagged, the estimate
    is AUEM's where it fits the reports (:func:`~pldp.protocols.febsf.auem.auem_trouble`), else the
    joint EM's (``tol``, ``max_iter``; ``info["auem_refused"]`` says why).
    """
    tally = protocol._check_tally(tally)
    info: dict[str, Any] = level_excess(protocol, tally)
    if protocol.kind != "unary":  # nothing to drop: AUEM where it fits the reports, else the joint EM
        fit, why = auem_trouble(protocol, tally)
        if fit is None:
            fit = em(protocol, tally, tol=tol, max_iter=max_iter)
            fit.info["auem_refused"] = why
        used = "the joint EM" if why else "AUEM"
        info = {**fit.info, **info, "detection": "k-RR reports are never unlikely: nothing is flagged",
                "estimator": f"detect: {used} (k-RR reports are never unlikely)"}  # fmt: skip
        return Estimate(fit.frequencies, fit.variance, tally.n, "detect", protocol.domain, fit.iterations,
                        fit.converged, info, fit.on_simplex)  # fmt: skip
    the_laws = laws(protocol)
    region = flag_region(the_laws, alpha)
    info.update(describe(tally.ones, region, flag_region(the_laws, ALPHA_BAND), alpha))
    info.update(joint_info(the_laws, tally.ones, alpha))
    dropped = [s for s in info["suspect_ones"] if not region[s]]
    info["dropped_ones"], info["suspect_kept"] = dropped, []
    region[dropped] = True
    kept_rows = ~region[tally.pattern_ones]
    try:
        f, var, more = kept_estimate(protocol, tally, kept_rows, region)
    except EstimationError as refused:  # AUEM's trouble (as auem_trouble): the joint EM on the kept patterns
        patterns, level, count = tally.rows
        screened = pattern_tally(
            protocol.t, protocol.d, patterns[kept_rows], level[kept_rows], count[kept_rows],
            fingerprint=tally.fingerprint,
        )  # fmt: skip
        keep = 1.0 - the_laws.laws() @ region.astype(float)  # per level (one item class)
        fit = em(protocol, screened, tol=tol, max_iter=max_iter, keep=keep)
        info = {**fit.info, **info, "kept_auem_refused": str(refused),
                "estimator": "detect: flagged reports dropped, joint EM on the rest (truncated data)"}  # fmt: skip
        return Estimate(fit.frequencies, fit.variance, tally.n, "detect", protocol.domain, fit.iterations,
                        fit.converged, info, fit.on_simplex)  # fmt: skip
    freq, theta = lowering_projection(f)  # the variance stays the kept AUEM's
    used = "detect: flagged reports dropped, AUEM on the rest with the kept channel, projected (lowering only)"
    info = {**info, **more, "kept_auem_sum": float(f.sum()), "threshold": theta, "estimator": used}
    return Estimate(freq, var, tally.n, "detect", protocol.domain, 0, True, info, on_simplex=theta > 0)

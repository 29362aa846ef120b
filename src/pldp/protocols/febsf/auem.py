"""AUEM: the approximately unbiased estimator of PLDP-FEBSF (eq. 4-5) with a delta-method variance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.result import Estimate

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["auem"]


def auem(protocol: FEBSF, tally: FEBSFTally) -> Estimate:
    """Approximately unbiased estimate (PLDP-FEBSF eq. 4-5) with a delta-method variance.

    .. math::

        \\hat\\rho = \\frac{L/N - q_p}{p_p - q_p},\\qquad
        \\tilde p_j = \\frac{C_j/N - \\hat q^*}{\\hat p^* - \\hat q^*},\\quad
        \\hat p^* = \\sum_i \\hat\\rho_i p_{\\varepsilon_i},\\ \\hat q^* = \\sum_i \\hat\\rho_i q_{\\varepsilon_i},

    with ``L`` the reported-level counts and ``C`` the support counts. ``rho-hat`` may be
    negative (ERRATA FEBSF-3): it is kept as is here (projecting it would bias the ratio); it
    is reported in ``info["rho"]``, and :func:`em` projects it onto the simplex for its start.

    Variance (ERRATA FEBSF-1): ``p~_j`` is a smooth function of the per-user means of the
    support indicator of ``j`` and the reported-level indicators, so to first order
    :math:`\\mathrm{Var}(\\tilde p_j) = \\nabla g^T \\Sigma_j \\nabla g / N` with
    :math:`\\Sigma_j` their per-user covariance under the model (users i.i.d., level choice
    independent of the item), evaluated at the estimates. AUEM is a ratio estimator and has a
    small second-order bias (ERRATA FEBSF-2).
    """
    tally = protocol._check_tally(tally)
    n = tally.n
    pp, qp = protocol.level_support
    lam = tally.level_counts / n  # observed reported-level shares
    rho = (lam - qp) / (pp - qp)
    c = tally.support_counts / n
    gap = protocol.p_star - protocol.q_star
    den = float(rho @ gap)
    if not den > 0:
        raise EstimationError(f"the estimated level shares give p* - q* = {den:.3g} <= 0; use em() instead")
    qs = float(rho @ protocol.q_star)
    f = (c - qs) / den
    # delta method: g(c, lam); dg/dc = 1/den; dg/drho_l = -(q_l + f gap_l)/den; drho_l/dlam_l = 1/(pp_l - qp_l)
    dg_dlam = -(protocol.q_star[None, :] + f[:, None] * gap[None, :]) / den / (pp - qp)[None, :]  # (d, t)
    rho_c = np.clip(rho, 0.0, None)
    rho_c = rho_c / rho_c.sum() if rho_c.sum() > 0 else np.full(rho.size, 1.0 / rho.size)
    f_c = np.clip(f, 0.0, 1.0)
    # per-user moments under the model at the (clipped) estimates
    m_l = protocol.q_star[None, :] + gap[None, :] * f_c[:, None]  # (d, t): Pr[support j | true level l]
    lam_model = rho_c @ protocol.pi  # Pr[reported level l']
    m = m_l @ rho_c  # Pr[support j]
    joint = (m_l * rho_c[None, :]) @ protocol.pi  # (d, t'): Pr[support j, reported l']
    cov_sl = joint - m[:, None] * lam_model[None, :]
    cov_ll = np.diag(lam_model) - np.outer(lam_model, lam_model)
    var = (
        m * (1 - m) / den**2
        + 2 * np.sum(dg_dlam * cov_sl, axis=1) / den
        + np.einsum("jl,lk,jk->j", dg_dlam, cov_ll, dg_dlam)
    ) / n
    info = {"estimator": "AUEM", "rho": rho, "p_star": float(rho @ protocol.p_star), "q_star": qs}
    return Estimate(f, np.maximum(var, 0.0), n, "unbiased", protocol.domain, info=info)

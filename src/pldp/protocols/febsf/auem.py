"""AUEM: the approximately unbiased estimator of PLDP-FEBSF (eq. 4-5) with a delta-method variance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.result import Estimate

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["GAP_Z", "RANGE_Z", "auem", "auem_trouble"]

#: AUEM is refused (the caller falls back) when the estimated p* - q* is within this many of its
#: standard errors of zero: the ratio would divide by noise.
GAP_Z = 3.0
#: ... or when an item's estimate leaves [0, 1] by more than this many standard errors of the item
#: reports given the level shares: the level shares are then inconsistent with the item reports.
RANGE_Z = 4.0


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
        raise EstimationError(
            f"the estimated level shares give p* - q* = {den:.3g} <= 0; use em() or the 'robust' method instead"
        )
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


def gap_standard_error(protocol: FEBSF, tally: FEBSFTally) -> float:
    """Standard error of AUEM's :math:`\\hat p^* - \\hat q^* = \\sum_i \\hat\\rho_i (p_i - q_i)` (multinomial
    level counts): :math:`\\sqrt{(\\sum_l \\lambda_l a_l^2 - (\\sum_l \\lambda_l a_l)^2)/N}`, :math:`a_l =
    (p_l - q_l)/(p_{p,l} - q_{p,l})`."""
    pp, qp = protocol.level_support
    lam = tally.level_counts / tally.n
    a = (protocol.p_star - protocol.q_star) / (pp - qp)
    return float(np.sqrt(max(float(lam @ a**2) - float(lam @ a) ** 2, 0.0) / tally.n))


def auem_trouble(protocol: FEBSF, tally: FEBSFTally) -> tuple[Estimate | None, str | None]:
    """AUEM's estimate, or None and why it must not be used.

    The rule: refuse when :math:`\\hat p^* - \\hat q^* \\le` :data:`GAP_Z` standard errors
    (:func:`gap_standard_error`; this includes :math:`\\le 0`, where :func:`auem` raises), or when
    some item's estimate lies below :math:`-`:data:`RANGE_Z` standard errors or above
    :math:`1 +` :data:`RANGE_Z` standard errors :math:`\\sqrt{c_j(1-c_j)/N}/(\\hat p^* - \\hat q^*)` of
    the item reports given the level shares (with :math:`c_j` the support share of item ``j``:
    under the model :math:`c_j` lies in :math:`[\\hat q^*, \\hat p^*]`). The first catches the
    division by noise that a minority of fake reports claiming a small level causes (issue 26:
    4.5 % claiming level 0.1 of 0.1..1.0 gave :math:`\\hat p^* - \\hat q^* = -0.0084`); the second
    the explosion just before it (3 % gave item estimates of 2.5), where the level shares still
    look valid on their own (89 % at level 0.1) but do not fit the item reports.
    """
    pp, qp = protocol.level_support
    den = float((tally.level_counts / tally.n - qp) / (pp - qp) @ (protocol.p_star - protocol.q_star))
    se = gap_standard_error(protocol, tally)
    if not den > GAP_Z * se:
        return None, (
            f"the level reports give p* - q* = {den:.3g}, within {GAP_Z:g} standard errors ({se:.3g}) of 0: "
            "AUEM would divide by noise"
        )
    est = auem(protocol, tally)
    f, c = est.frequencies, tally.support_counts / tally.n
    sd = np.sqrt(c * (1 - c) / tally.n) / den
    out = np.flatnonzero((f < -RANGE_Z * sd) | (f > 1 + RANGE_Z * sd))
    if out.size:
        return None, (
            f"AUEM's estimate leaves [0, 1] by more than {RANGE_Z:g} standard errors at items {out[:5].tolist()} "
            f"(e.g. {f[out[0]]:.3g} +/- {sd[out[0]]:.2g}): the level shares do not fit the item reports"
        )
    return est, None

"""PLDP-FEBSF's ``"huber"`` (the former ``"robust"``): reported levels as groups, combined with bounded influence.

A fake user sends her level report unperturbed, so fakes choose the reported level they appear
at. Grouping the reports by reported level ``l`` gives ``t`` groups of independent reports
(given their sizes), each a mixture of the true levels: a report of group ``l`` supports each
item as a pure oracle with :math:`(\\bar p_l, \\bar q_l)`, the mixture's support probabilities,
and :math:`\\hat f_l = (C_l/n_l - \\bar q_l)/(\\bar p_l - \\bar q_l)`. The ``t`` group estimates are
combined by :func:`pldp.estimation.robust.robust_combine`. What the mixture is:

* **Unary data (OUE, RAPPOR): calibrated by the group's own ones.** Both oracles have
  :math:`a = \\alpha + \\beta b` at every budget (:data:`~pldp.protocols.leveled.UNARY_AFFINE`),
  so a report's expected number of ones is :math:`\\alpha + (d - 1 + \\beta)\\, b` and the group's
  mean number of ones :math:`\\bar S_l` gives :math:`\\bar q_l = (\\bar S_l - \\alpha)/(d - 1 +
  \\beta)`, :math:`\\bar p_l = \\alpha + \\beta \\bar q_l` (PPDA's pooled calibration, per group):
  no level shares are needed, so fakes in one group cannot rescale the others. Variance: the
  delta method with the group's empirical covariance of each bit and the number of ones
  (the pattern tally holds them).
* **k-RR data: the joint EM's level shares.** A k-RR group's counts fix only
  :math:`\\bar p_l - \\bar q_l` up to the item distribution's scale, so :math:`\\hat\\rho` comes
  from the joint EM (:func:`~pldp.protocols.febsf.em.em`; it uses the item reports and stays on
  the simplex, where AUEM's inversion of the level counts is what one group of fakes breaks):
  :math:`W_{il} = \\hat\\rho_i \\pi(l|i)/\\lambda_l`, :math:`\\bar p_l = \\sum_i W_{il}
  p_{\\varepsilon_i}`, :math:`\\bar q_l` likewise. Variance: the combination's delta-method
  variance given :math:`\\hat\\rho` plus :math:`g^\\top \\mathrm{Cov}(\\hat\\rho)\\, g`, :math:`g =
  \\partial\\mu/\\partial\\rho`, with the joint EM's covariance (their covariance neglected).

**Bound.** Fakes who all claim one reported level move each estimate by at most
:math:`k\\sqrt{c/(1-c)}` standard errors of the other reported levels' combination
(``info["bound"]``). With k-RR data they also enter :math:`\\hat\\rho`, which rescales every group
alike; that part is not bounded by the combination (measured in ``tests/test_robust.py``).
Spread over several reported levels, fakes are not bounded: the attacker who knows this estimate
(:mod:`pldp.attacks.optimal`) gained ×0.90 / ×1.25 MGA at the mean budget with k-RR (β = 1 % /
4.5 %, ten levels, :math:`n = 10^5`) and ×1.60 / ×2.21 with OUE, where its reports set the target
bit alone: they lower the group's mean number of ones, which the unary calibration above reads
as a smaller :math:`\\bar p_l - \\bar q_l` (measured when this was the default ``"robust"``;
docs/attacks.md). The default ``"robust"`` (:mod:`pldp.protocols.febsf.robust`) bounds any split.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.estimation.result import Estimate
from pldp.estimation.robust import DEFAULT_CAP, DEFAULT_K, robust_combine
from pldp.protocols.febsf.detect import level_excess
from pldp.protocols.febsf.robust import SHARES_TOL, direct_groups, rho_variance
from pldp.protocols.leveled import UNARY_AFFINE

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["huber"]


def _unary_groups(protocol: FEBSF, tally: FEBSFTally) -> tuple[np.ndarray, ...]:
    """Per reported level: estimates, delta-method variances, ``p_bar``, ``q_bar`` (self-calibrated)."""
    alpha, beta = UNARY_AFFINE[protocol.oracle]
    d = protocol.d
    count = tally.rows[2].astype(float)
    ones = tally.pattern_ones.astype(float)
    sizes = np.maximum(tally.level_counts.astype(float), 1.0)
    level = tally.rows[1]
    s1 = np.bincount(level, weights=count * ones, minlength=protocol.t) / sizes
    s2 = np.bincount(level, weights=count * ones**2, minlength=protocol.t) / sizes
    c = tally.level_support_counts / sizes[:, None]
    cs = tally.level_ones_support / sizes[:, None]
    length = d - 1 + beta
    q = np.clip((s1 - alpha) / length, 1e-9, 1 - 1e-9)
    gap = alpha + (beta - 1.0) * q
    est = (c - q[:, None]) / gap[:, None]
    kappa = -(1.0 + (beta - 1.0) * est) / (gap[:, None] * length)
    per_user = (
        c * (1 - c) / gap[:, None] ** 2
        + 2 * kappa / gap[:, None] * (cs - c * s1[:, None])
        + kappa**2 * (s2 - s1**2)[:, None]
    )
    return est, np.maximum(per_user, 0.0) / sizes[:, None], alpha + beta * q, q


def huber(
    protocol: FEBSF,
    tally: FEBSFTally,
    *,
    cap: float = DEFAULT_CAP,
    k: float = DEFAULT_K,
    tol: float = SHARES_TOL,
    max_iter: int = 20_000,
) -> Estimate:
    """The reported levels' estimates combined with bounded influence (module docstring).

    ``info`` holds each reported level's ``level_estimates``, its mixture's ``level_support``
    ``(p_bar, q_bar)``, the joint EM's ``rho`` (k-RR data) and the combination's diagnostics
    (``weights``, ``bound``, ``breakdown_groups``, ``cap``, ``k``).
    """
    tally = protocol._check_tally(tally)
    sizes = tally.level_counts
    has = sizes > 0
    info: dict[str, Any] = {"estimator": "robust combination of reported levels"}
    steps = 0
    if protocol.kind == "unary":
        est, var, p_bar, q_bar = _unary_groups(protocol, tally)
        info["calibration"] = "each reported level's mean number of ones"
    else:
        groups = direct_groups(protocol, tally, tol, max_iter)
        steps, rho, p_bar, q_bar = groups.steps, groups.rho, groups.p, groups.q
        m = groups.support / np.maximum(sizes, 1)[:, None]
        est = (m - q_bar[:, None]) / (p_bar - q_bar)[:, None]
        var = m * (1 - m) / (np.maximum(sizes, 1)[:, None] * (p_bar - q_bar)[:, None] ** 2)
        info.update(calibration="the joint EM's level shares", rho=rho, em_steps=steps)
    est = np.where(has[:, None], est, np.nan)
    shape = est.shape
    support = (np.broadcast_to(p_bar[:, None], shape), np.broadcast_to(q_bar[:, None], shape))
    rob = robust_combine(est, np.where(has[:, None], var, np.inf), sizes, support, cap=cap, k=k)
    variance = rob.variance
    if protocol.kind == "direct":
        variance = variance + rho_variance(protocol, groups, est, rob.coefficients)
    info.update(level_estimates=est, level_support=(p_bar, q_bar), **rob.info(), **level_excess(protocol, tally))
    return Estimate(rob.frequencies, variance, tally.n, "huber", protocol.domain, steps, True, info)

"""PLDP-FEBSF's ``"robust"`` estimate: groups whose channel the item cannot move, combined with equal influence.

A fake user sends her level report and item report as she likes. The estimate groups the reports
by what the server sees that, for an honest user, does not depend on her item: the **reported
level** :math:`l` and, for unary reports (OUE, RAPPOR), the **number of ones** :math:`s` as well.
Given the true-level shares :math:`\\rho`, every group :math:`g` is a pure oracle for the items with
a channel :math:`(p_g, q_g)` of its own, and the groups are combined by the equal-influence
combination of the levelled protocols (:func:`pldp.estimation.spread.spread_robust`: weights
:math:`\\propto N_g r_g`, :math:`r = (p - q)/(1 - q)`, then Norm-Sub with its threshold kept at
zero or above), in which a report adds at most one to the numerator whatever group it lands in,
so choosing the group buys a fake nothing.

* **k-RR data:** :math:`g = l`, with :math:`W_{il} = \\rho_i \\pi(l|i)/\\lambda_l`,
  :math:`p_l = \\sum_i W_{il} p^*_i` and :math:`q_l` likewise; :math:`\\hat\\rho` is the joint
  EM's (:func:`~pldp.protocols.febsf.em.em`, which stays on the simplex). Variance: the
  combination's given :math:`\\hat\\rho`, plus :math:`g^\\top \\mathrm{Cov}(\\hat\\rho)\\, g` with
  the joint EM's covariance.
* **Unary data:** :math:`g = (l, s)`. At true level :math:`i` a report sets its item's bit with
  probability :math:`p^*_i` and each other bit with :math:`q^*_i`, so its number of ones has the
  law :math:`P(s|i) = p^*_i B_i(s-1) + (1 - p^*_i) B_i(s)`, :math:`B_i = \\mathrm{Bin}(d - 1,
  q^*_i)`, whatever the item; given :math:`s` and :math:`i` the item's bit is set with
  probability :math:`\\pi_i(s) = p^*_i B_i(s-1)/P(s|i)` and the other :math:`s - \\pi_i(s)` ones
  fall evenly on the other :math:`d - 1` bits. Hence :math:`p_g = \\sum_i P(i|g)\\, \\pi_i(s)`,
  :math:`q_g = (s - p_g)/(d - 1)`, :math:`P(i|g) \\propto \\rho_i \\pi(l|i) P(s|i)`, and
  :math:`\\hat\\rho` is the maximum-likelihood estimate from the ``(l, s)`` table alone
  (:func:`ones_shares`, an EM over :math:`t (d + 1)` cells). A group's estimate sums to one for any
  :math:`\\rho`: the level shares set only its scale around :math:`1/d`, so shifting them can
  rescale the estimate about :math:`1/d` but never lift it as a whole (the previous ``"robust"`` calibrated each
  reported level by its mean number of ones, which reports with the target bit alone lowered: ×1.60
  MGA at β = 1 %). Variance: the combination's given :math:`\\hat\\rho` (the level shares enter
  only through that scale; the 95 % intervals cover at their rate, ``tests/test_robust.py``).
* **Groups left out:** those whose :math:`q_g` reaches :data:`Q_MAX` (reports with many ones). A
  report there lowers every other item by up to :math:`q_g/(1 - q_g)` times what it adds to its
  own, which made the bound vacuous (0.76 at β = 1 % with them, 0.16 without, at alike gains);
  leaving out :math:`q_g \\ge 0.5` would drop informative groups too (×1.10 MGA).

**Bound.** ``info["bound"]`` is the equal-influence bound of a share ``beta`` of fakes in any
split over the groups and any reports (model ``info["bound_model"]``), with the channels the
reports give; the fakes also move :math:`\\hat\\rho`, which only rescales the groups, and the
attacker who knows this estimate (:mod:`pldp.attacks.optimal`, atoms MGA-style or the target bit
alone on each reported level) stays below it (``tests/test_attacks_optimal.py``). Its worst case
measured: ×0.93 / ×0.97 MGA at the mean budget with OUE and ×0.85 / ×0.69 with k-RR (β = 1 % /
4.5 %, ten levels 0.1..1.0, :math:`\\varepsilon_p = 0.3`, :math:`n = 10^5`, docs/attacks.md,
``benchmarks/optimal_attack.py --febsf``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.bitcount import group_bit_counts
from pldp.errors import EstimationError
from pldp.estimation.em import EMResult, run_em
from pldp.estimation.result import Estimate
from pldp.estimation.spread import AFTER, DEFAULT_BETA, bound_model, spread_robust
from pldp.protocols.febsf.detect import level_excess
from pldp.protocols.febsf.em import em

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["SHARES_TOL", "ReportGroups", "direct_groups", "ones_laws", "ones_shares", "rho_variance", "robust"]

#: Groups whose :math:`q_g` reaches this are left out (module docstring).
Q_MAX = 0.7
#: The EM tolerance of the level shares (:func:`ones_shares`; the joint EM for k-RR data, also
#: ``"huber"``'s). The shares set only the groups' channels: at this tolerance the estimate is within
#: a hundredth of a standard error of the fully converged one (measured at most 0.006 at
#: :math:`n = 10^6`, ``tests/test_robust.py``), in about a quarter of the joint EM's steps at
#: ``tol = 1e-10`` (71 against 254 on honest Zipf(2) k-RR reports, ten levels 0.1..1.0).
SHARES_TOL = 1e-8
#: The threat model of ``info["bound"]``: the equal-influence combination's, over the report groups.
BOUND_MODEL = bound_model(
    "in any split over the groups (reported level; and number of ones for unary reports), the groups' "
    "channels resting on the level shares the reports give (fakes move those too, which rescales the groups)",
    AFTER,
)


@dataclass(frozen=True)
class ReportGroups:
    """The report groups of ``"robust"`` (module docstring; k-RR ones also ``"huber"``'s).

    Attributes
    ----------
    sizes : ndarray, shape (groups,)
        Reports per group.
    support : ndarray, shape (groups, d)
        Per group, the reports supporting each item.
    p, q : ndarray, shape (groups,)
        Each group's channel.
    rho : ndarray, shape (t,)
        The level shares the channels rest on.
    steps : int
        EM steps spent on ``rho``.
    rho_covariance : ndarray or None
        k-RR: the joint EM's covariance of ``rho`` (:func:`rho_variance`).
    """

    sizes: np.ndarray
    support: np.ndarray
    p: np.ndarray
    q: np.ndarray
    rho: np.ndarray
    steps: int
    rho_covariance: np.ndarray | None = None


def ones_laws(protocol: FEBSF) -> tuple[np.ndarray, np.ndarray]:
    """Unary: ``P(s|i)`` and ``pi_i(s)``, each of shape ``(t, d + 1)`` (module docstring), from the
    protocol's cached laws of the number of ones (:attr:`FEBSF.ones_laws`)."""
    laws = protocol.ones_laws
    law = laws.laws()  # one class of items: (t, d + 1), level by level
    rest = np.stack([laws.others(i, (0,)) for i in range(protocol.t)])  # Bin(d - 1, q_i): (t, d)
    with_bit = protocol.p_star[:, None] * np.pad(rest, ((0, 0), (1, 0)))
    return law, np.divide(with_bit, law, out=np.zeros_like(law), where=law > 0)


def ones_shares(protocol: FEBSF, table: np.ndarray, *, tol: float = SHARES_TOL, max_iter: int = 20_000) -> EMResult:
    """The maximum-likelihood true-level shares (``theta`` of the result) from the ``(t, d + 1)``
    table of reports by reported level and number of ones: :math:`P(l, s) = \\sum_i \\rho_i
    \\pi(l|i) P(s|i)`, by EM (:func:`~pldp.estimation.em.run_em`, accelerated)."""
    law, _ = ones_laws(protocol)
    cell = (protocol.pi[:, :, None] * law[:, None, :]).reshape(protocol.t, -1)  # (i, (l, s))
    seen = table.reshape(-1) > 0
    cell, counts = cell[:, seen], table.reshape(-1)[seen].astype(float)
    n = float(counts.sum())

    def step(rho: np.ndarray) -> tuple[np.ndarray, float]:
        mix = rho @ cell
        return rho * (cell @ (counts / mix)) / n, float(counts @ np.log(mix))

    return run_em(step, np.full(protocol.t, 1.0 / protocol.t), [protocol.t], tol, max_iter)


def _unary_groups(protocol: FEBSF, tally: FEBSFTally, tol: float, max_iter: int) -> ReportGroups:
    """Unary groups ``(l, s)``: sizes, support counts, channels and ``rho`` (module docstring)."""
    d, t = protocol.d, protocol.t
    patterns, level, count = tally.rows
    group = level.astype(np.intp) * (d + 1) + tally.pattern_ones
    sizes = np.bincount(group, weights=count, minlength=t * (d + 1))
    support = group_bit_counts(patterns, group, t * (d + 1), count.astype(float))[:, :d]
    fit = ones_shares(protocol, sizes.reshape(t, d + 1), tol=tol, max_iter=max_iter)
    rho = fit.theta
    law, with_bit = ones_laws(protocol)
    joint = rho[:, None, None] * protocol.pi[:, :, None] * law[:, None, :]  # (i, l, s)
    total = joint.sum(axis=0)
    p = (np.einsum("ils,is->ls", joint, with_bit) / np.where(total > 0, total, 1.0)).reshape(-1)
    s = np.tile(np.arange(d + 1), t).astype(float)
    return ReportGroups(sizes, support, p, (s - p) / (d - 1), rho, fit.steps)


def direct_groups(protocol: FEBSF, tally: FEBSFTally, tol: float, max_iter: int) -> ReportGroups:
    """k-RR groups ``l`` (also ``"huber"``'s), on the joint EM's level shares and their covariance."""
    fit = em(protocol, tally, tol=tol, max_iter=max_iter)
    rho = fit.info["rho"]
    lam = rho @ protocol.pi
    post = rho[:, None] * protocol.pi / np.where(lam > 0, lam, 1.0)[None, :]  # W[i, l]
    return ReportGroups(
        tally.level_counts.astype(float),
        tally.cells.astype(float),
        post.T @ protocol.p_star,
        post.T @ protocol.q_star,
        rho,
        fit.iterations,
        fit.info["rho_covariance"],
    )


def rho_variance(protocol: FEBSF, groups: ReportGroups, est: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """k-RR: :math:`g^\\top \\mathrm{Cov}(\\hat\\rho)\\, g` per item, ``g`` the slope in ``rho`` of the
    combination of the groups' estimates ``est`` with coefficients ``weights`` (``(l, d)``):
    ``d est_l / d rho_i = -(pi(l|i) / lam_l) [(q_i - q_l) + est_l (gap_i - gap_l)] / gap_l``."""
    if groups.rho_covariance is None:
        raise EstimationError("rho_variance needs the k-RR groups of direct_groups (the joint EM's covariance)")
    p, q, lam = groups.p, groups.q, groups.rho @ protocol.pi
    gap, own = p - q, protocol.p_star - protocol.q_star
    slope = (
        -(protocol.pi.T / np.where(lam > 0, lam, 1.0)[:, None])[:, None, :]
        * (
            (protocol.q_star[None, None, :] - q[:, None, None])
            + np.nan_to_num(est)[:, :, None] * (own[None, None, :] - gap[:, None, None])
        )
        / gap[:, None, None]
    )  # (l, j, i)
    g = np.einsum("lj,lji->ji", weights, slope)
    return np.maximum(np.einsum("ji,ik,jk->j", g, groups.rho_covariance, g), 0.0)


def robust(
    protocol: FEBSF,
    tally: FEBSFTally,
    *,
    beta: float = DEFAULT_BETA,
    tol: float = SHARES_TOL,
    max_iter: int = 20_000,
) -> Estimate:
    """The groups' estimates combined with equal influence (module docstring).

    ``info`` holds the equal-influence combination's entries (``weights``, ``bound``,
    ``linear_bound``, ``vacuous``, ``beta``, ``threshold``; ``bound_model``), ``rho`` (the level
    shares the channels rest on), ``groups`` (what a group is) and, for k-RR data, each reported
    level's ``level_estimates`` and ``level_support`` ``(p_l, q_l)``.
    """
    tally = protocol._check_tally(tally)
    unary = protocol.kind == "unary"
    groups = (_unary_groups if unary else direct_groups)(protocol, tally, tol, max_iter)
    sizes, p, q = groups.sizes, groups.p, groups.q
    gap = p - q
    has = (sizes > 0) & (gap > 1e-12) & (q < Q_MAX)
    c = groups.support / np.maximum(sizes, 1.0)[:, None]
    safe = np.where(has, gap, 1.0)[:, None]
    est = np.where(has[:, None], (c - q[:, None]) / safe, np.nan)
    var = np.where(has[:, None], c * (1 - c) / (np.maximum(sizes, 1.0)[:, None] * safe**2), 0.0)
    shape = est.shape
    support = (np.broadcast_to(p[:, None], shape), np.broadcast_to(q[:, None], shape))
    freq, eq, extra = spread_robust(est, var, np.where(has, sizes, 0.0), support, beta=beta)
    variance = eq.variance
    info: dict[str, Any] = {
        "estimator": "equal-influence combination of report groups, Norm-Sub with its threshold kept at zero or above",
        "groups": "(reported level, number of ones)" if unary else "reported level",
        "rho": groups.rho,
        **extra,
        "bound_model": BOUND_MODEL,
    }
    steps = groups.steps
    info["em_steps"] = steps
    if not unary:
        variance = variance + rho_variance(protocol, groups, est, np.nan_to_num(eq.weights))
        info.update(level_estimates=est, level_support=(p, q))
    info.update(level_excess(protocol, tally))
    on_simplex = bool(np.asarray(extra["threshold"]) > 0)
    return Estimate(freq, variance, tally.n, "robust", protocol.domain, steps, True, info, on_simplex)

"""AUEM: the approximately unbiased estimator of PLDP-FEBSF (eq. 4-5) with a delta-method variance made Fieller-type."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.result import Estimate

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["GAP_Z", "RANGE_Z", "auem", "auem_moments", "auem_trouble", "simulate_statistics", "trouble_codes"]

#: AUEM is refused (the caller falls back) when the estimated p* - q* is within this many of its
#: standard errors of zero: the ratio would divide by noise. (It was 3, at which honest tallies of
#: the reproduction's ten levels at eps_p = 0.1 fell back in 7-27 % of the cases; at 1, 0.43 % at
#: most, Education, where the honest gap is 3.6 standard errors on average.)
GAP_Z = 1.0
#: ... or when an item's estimate leaves [0, 1] by more than this many of AUEM's own standard
#: errors (its variance, level shares' noise included): the level shares are then inconsistent
#: with the item reports.
RANGE_Z = 4.0


def auem(protocol: FEBSF, tally: FEBSFTally) -> Estimate:
    r"""Approximately unbiased estimate (PLDP-FEBSF eq. 4-5) with a delta-method variance.

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
    independent of the item), evaluated at the estimates. The variance reported is Fieller's
    (:func:`fieller_variance`): the ratio's 95 % Fieller interval, which accounts for the noise of
    :math:`D = \hat p^* - \hat q^*` and for :math:`\Sigma_j`'s dependence on the unknown
    :math:`p_j`, turned into a symmetric one; to first order the delta method's. (The delta method
    times :math:`1 + 3 (s_D/D)^2` covered 0.931-0.937 with RAPPOR items at ten levels and
    :math:`\varepsilon_p = 0.1`.) Infinite where :math:`D` is within 1.96 of its standard errors
    of 0. AUEM is a ratio estimator and has a small second-order bias (ERRATA FEBSF-2).
    """
    tally = protocol._check_tally(tally)
    f, var, den_a, _ = auem_moments(protocol, tally.level_counts, tally.support_counts)
    den = float(den_a)
    if not den > 0:
        raise EstimationError(
            f"the estimated level shares give p* - q* = {den:.3g} <= 0; use em() or the 'robust' method instead"
        )
    pp, qp = protocol.level_support
    rho = (tally.level_counts / tally.n - qp) / (pp - qp)
    qs = float(rho @ protocol.q_star)
    info = {"estimator": "AUEM", "rho": rho, "p_star": float(rho @ protocol.p_star), "q_star": qs}
    return Estimate(f, var, tally.n, "unbiased", protocol.domain, info=info)


def auem_moments(
    protocol: FEBSF, level_counts: np.ndarray, support_counts: np.ndarray, at: tuple[float, ...] = ()
) -> tuple[np.ndarray, ...]:
    """AUEM from its statistics, vectorised over leading axes (internal; :func:`auem`, :func:`auem_trouble`).

    ``level_counts`` ``(..., t)`` and ``support_counts`` ``(..., d)`` of tallies of ``N`` users each
    (``N`` is the sum of the level counts). Returns ``(f, var, den, den_se)``: the estimate and its
    variance ``(..., d)``, :math:`D = \\hat p^* - \\hat q^*` and its standard error ``(...)``; then,
    for each ``a`` in ``at``, the variance of the linear statistic :math:`c_j - \\hat q^* - a D`
    ``(..., d)`` (its value is :math:`(f_j - a) D`), under the model at the estimates clipped to
    [0, 1]: it does not grow with ``f`` or with ``1/D``.
    """
    L = np.asarray(level_counts, dtype=float)
    C = np.asarray(support_counts, dtype=float)
    n = L.sum(axis=-1)
    pp, qp = protocol.level_support
    gap = protocol.p_star - protocol.q_star
    lam = L / n[..., None]  # observed reported-level shares
    rho = (lam - qp) / (pp - qp)
    c = C / n[..., None]
    den = rho @ gap
    qs = rho @ protocol.q_star
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (c - qs[..., None]) / den[..., None]
    rho_c = np.clip(rho, 0.0, None)
    tot = rho_c.sum(axis=-1, keepdims=True)
    rho_c = np.where(tot > 0, rho_c / np.where(tot > 0, tot, 1.0), 1.0 / rho.shape[-1])
    f_c = np.clip(np.nan_to_num(f), 0.0, 1.0)
    # per-user moments under the model at the (clipped) estimates
    m_l = protocol.q_star + gap * f_c[..., None]  # (..., d, t): Pr[support j | true level l]
    lam_model = rho_c @ protocol.pi  # (..., t'): Pr[reported level l']
    m = np.einsum("...jl,...l->...j", m_l, rho_c)  # Pr[support j]
    joint = (m_l * rho_c[..., None, :]) @ protocol.pi  # (..., d, t'): Pr[support j, reported l']
    cov_sl = joint - m[..., None] * lam_model[..., None, :]
    cov_ll = lam_model[..., :, None] * np.eye(lam_model.shape[-1]) - lam_model[..., :, None] * lam_model[..., None, :]

    def lin_var(a: np.ndarray) -> np.ndarray:
        # Var of c_j - sum_l rho_l (q_l + a_j gap_l): gradient 1 in c_j, -(q_l + a_j gap_l)/(pp_l - qp_l) in lam_l
        g = -(protocol.q_star + a[..., None] * gap) / (pp - qp)  # (..., d, t)
        return (m * (1 - m) + 2 * np.sum(g * cov_sl, axis=-1) + np.einsum("...jl,...lk,...jk->...j", g, cov_ll, g)) / n[
            ..., None
        ]

    a_den = np.sqrt(np.maximum(lam @ (gap / (pp - qp)) ** 2 - (lam @ (gap / (pp - qp))) ** 2, 0.0) / n)
    a_hat = np.nan_to_num(f)
    # lin_var's V(a) as a quadratic in a: the gradient in lam is g0 + a g1, so V(a) = (m (1 - m) +
    # 2 (cov_sl g0 + a cov_sl g1) + g0' cov_ll g0 + 2 a g0' cov_ll g1 + a^2 g1' cov_ll g1) / n
    g0, g1 = -protocol.q_star / (pp - qp), -gap / (pp - qp)
    ll_g1 = cov_ll @ g1  # (..., t)
    q01, q11 = ll_g1 @ g0, ll_g1 @ g1  # (...): g0' cov_ll g1 and g1' cov_ll g1 (= N Var D)
    q00 = (cov_ll @ g0) @ g0
    lin0, lin1 = cov_sl @ g0, cov_sl @ g1  # (..., d)
    nn = n[..., None]
    v_f = (
        m * (1 - m) + 2 * (lin0 + a_hat * lin1) + q00[..., None] + a_hat * (2 * q01[..., None] + a_hat * q11[..., None])
    ) / nn
    slope = (lin1 + q01[..., None] + a_hat * q11[..., None]) / nn  # V(f + h) = V(f) + 2 h slope + h^2 Var D
    var = fieller_variance(den[..., None], v_f, slope, np.maximum(q11[..., None], 0.0) / nn)
    extra = tuple(np.maximum(lin_var(np.full_like(f, a)), 0.0) for a in at)
    return (f, np.maximum(var, 0.0), den, a_den, *extra)


#: The normal quantile of the 95 % Fieller interval :func:`fieller_variance` turns into a variance.
FIELLER_Z = 1.959963984540054


def fieller_variance(den: np.ndarray, v_f: np.ndarray, b: np.ndarray, s2: np.ndarray) -> np.ndarray:
    r"""AUEM's variance, from the ratio's 95 % Fieller interval.

    AUEM is the ratio :math:`\hat f = X / D` of :math:`X = c_j - \hat q^*` and :math:`D = \hat p^* -
    \hat q^*`; :math:`X - f D` has mean 0 at the true ``f`` and variance :math:`V(f) = V(\hat f) + 2
    (f - \hat f) b + (f - \hat f)^2 s^2` (``v_f``, ``b``, ``s2``: the model variance of this linear
    statistic at :math:`a = \hat f`, half its slope in ``a``, and :math:`s^2 = \mathrm{Var}\,D`; ``den``
    is :math:`D`). Fieller's 95 % set :math:`\{f : (X - f D)^2 \le z^2 V(f)\}` is, with :math:`h = f
    - \hat f` and :math:`\ell = D^2 - z^2 s^2 > 0`, the interval of

    .. math::

        \ell h^2 - 2 z^2 b h - z^2 V(\hat f) \le 0:\qquad
        h = c \pm H,\quad c = \frac{z^2 b}{\ell},\quad H = \frac{z}{\ell}\sqrt{z^2 b^2 + \ell V(\hat f)},

    centred off :math:`\hat f` by ``c``. The variance is :math:`(H^2 + c^2) / z^2 = (z^2 b^2 + \ell
    V(\hat f) + z^2 b^2) / \ell^2`: the half-width and the shift in quadrature, so that the
    symmetric normal interval at :math:`\hat f` covers about as Fieller's does (the larger
    half-width, :math:`|c| + H`, over-covered: 0.96-0.98). To first order it is the delta method's
    :math:`V(\hat f) / D^2`; :math:`\ell` brings the second-order term of :math:`E[1/D^2]` (about
    :math:`1 + z^2 s^2 / D^2`), and ``b`` what the delta method misses where :math:`V(a)` depends
    on ``a``: with RAPPOR items at small :math:`\varepsilon_p` the level shares' noise dominates and
    nearly cancels at :math:`a = 1/2`, so :math:`V(\hat f)` at an estimate pushed up by that noise
    is far below :math:`V(f)`, and the delta method's intervals covered 0.931-0.937 there. Where
    :math:`D \le z s` Fieller's set is unbounded and the variance infinite.
    """
    z2b2 = FIELLER_Z**2 * b**2
    lead = den**2 - FIELLER_Z**2 * s2
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (np.maximum(z2b2 + lead * v_f, 0.0) + z2b2) / lead**2
    return np.asarray(np.where(lead > 0, var, np.inf))


def gap_standard_error(protocol: FEBSF, tally: FEBSFTally) -> float:
    """Standard error of AUEM's :math:`\\hat p^* - \\hat q^* = \\sum_i \\hat\\rho_i (p_i - q_i)` (multinomial
    level counts): :math:`\\sqrt{(\\sum_l \\lambda_l a_l^2 - (\\sum_l \\lambda_l a_l)^2)/N}`, :math:`a_l =
    (p_l - q_l)/(p_{p,l} - q_{p,l})`."""
    return float(auem_moments(protocol, tally.level_counts, tally.support_counts)[3])


def range_z(f: np.ndarray, den: np.ndarray, var0: np.ndarray, var1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The range rule's z-scores: :math:`f_j D` and :math:`(f_j - 1) D` (that is :math:`c_j - \\hat q^*` and
    :math:`c_j - \\hat p^*`) over their standard errors under the model at the boundary."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return f * den[..., None] / np.sqrt(var0), (f - 1) * den[..., None] / np.sqrt(var1)


def trouble_codes(
    protocol: FEBSF, level_counts: np.ndarray, support_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`auem_trouble`'s rule on tallies' statistics, vectorised over leading axes.

    Returns ``(code, f, var, den, den_se)`` with ``code`` 0 (AUEM is used), 1 (the gap rule) or 2
    (the range rule) per tally, and :func:`auem_moments`'s arrays.
    """
    f, var, den, den_se, var0, var1 = auem_moments(protocol, level_counts, support_counts, at=(0.0, 1.0))
    z0, z1 = range_z(f, den, var0, var1)
    with np.errstate(invalid="ignore"):
        gap_bad = ~(den > GAP_Z * den_se)
        out = np.any((z0 < -RANGE_Z) | (z1 > RANGE_Z), axis=-1)
    code = np.where(gap_bad, 1, np.where(out, 2, 0))
    return code, f, var, den, den_se


def auem_trouble(protocol: FEBSF, tally: FEBSFTally) -> tuple[Estimate | None, str | None]:
    """AUEM's estimate, or None and why it must not be used.

    The rule: refuse when :math:`\\hat p^* - \\hat q^* \\le` :data:`GAP_Z` standard errors
    (:func:`gap_standard_error`; this includes :math:`\\le 0`, where :func:`auem` raises), or when
    some item's estimate lies below :math:`-`:data:`RANGE_Z` or above :math:`1 +` :data:`RANGE_Z`
    of AUEM's own standard errors (:func:`auem`'s variance, which includes the noise of the level
    shares). The first catches the division by noise that a minority of fake reports claiming a
    small level causes (4.5 % claiming level 0.1 of 0.1..1.0 gave :math:`\\hat p^* -
    \\hat q^* = -0.0084`); the second the explosion just before it (3 % gave item estimates of
    2.5), where the level shares still look valid on their own but do not fit the item reports.

    Calibration: on honest tallies of every PLDP-FEBSF setting of the docs and of the
    reproduction the rule refuses at most 0.43 % of the time (``tests/test_febsf_auem.py``). The
    range rule once used the standard error of the item reports alone, ignoring the level shares'
    noise, and refused 17-35 % of honest OUE tallies.
    """
    tally = protocol._check_tally(tally)
    code_a, f_a, var_a, den_a, se_a = trouble_codes(protocol, tally.level_counts, tally.support_counts)
    code, den, se = int(code_a), float(den_a), float(se_a)
    del var_a
    if code == 1:
        return None, (
            f"the level reports give p* - q* = {den:.3g}, within {GAP_Z:g} standard errors ({se:.3g}) of 0: "
            "AUEM would divide by noise"
        )
    if code == 2:
        _, _, _, _, var0, var1 = auem_moments(protocol, tally.level_counts, tally.support_counts, at=(0.0, 1.0))
        z0, z1 = range_z(f_a, den_a, var0, var1)
        z = np.where(z0 < 0, z0, np.maximum(z1, 0.0))
        out = np.flatnonzero(np.abs(z) > RANGE_Z)
        return None, (
            f"AUEM's estimate leaves [0, 1] by more than {RANGE_Z:g} standard errors at items {out[:5].tolist()} "
            f"(e.g. {f_a[out[0]]:.3g}, z = {z[out[0]]:.2g}): the level shares do not fit the item reports"
        )
    return auem(protocol, tally), None


def simulate_statistics(
    protocol: FEBSF, cells: np.ndarray, rng: np.random.Generator, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """AUEM's statistics of ``size`` honest tallies at once: level counts ``(size, t)`` and support
    counts ``(size, d)``, drawn from their exact joint law given ``cells[level, item]`` true counts.

    Given a user's true level, her reported level and her item report are independent; per true
    level ``i`` the reported levels are one multinomial, and the support counts are binomial per
    item (unary reports: a user's bits are independent given her item) or, for k-RR, each item's
    kept reports plus its holders' other reports spread uniformly (one multinomial per item). What
    :meth:`FEBSF.simulate` followed by :attr:`FEBSFTally.level_counts` and
    :attr:`FEBSFTally.support_counts` gives, without drawing each user's bits.
    """
    c = protocol._check_cells(cells)
    t, d = c.shape
    level = np.zeros((size, t), dtype=np.int64)
    support = np.zeros((size, d), dtype=np.int64)
    for i in range(t):
        n_i = int(c[i].sum())
        level += rng.multinomial(n_i, protocol.pi[i], size=size)
        p, q = float(protocol.p_star[i]), float(protocol.q_star[i])
        if protocol.kind == "unary":
            support += rng.binomial(c[i], p, size=(size, d)) + rng.binomial(n_i - c[i], q, size=(size, d))
            continue
        kept = rng.binomial(c[i], p, size=(size, d))
        spread = (1.0 - np.eye(d)) / (d - 1)  # row j: a holder of j reporting another item
        step = max(1, 2**22 // (d * d))  # tallies per multinomial draw: at most 4 M counts (32 MiB) at once
        for a in range(0, size, step):
            part = kept[a : a + step]
            support[a : a + step] += part + rng.multinomial(c[i] - part, spread).sum(axis=-2)
    return level, support

"""Maximum likelihood for PLDP-FEBSF by EM: the joint EM (ERRATA FEBSF-4) and the paper's EM.

The observed data of a user are her reported level and her item report; the latent data her
true level and item. :class:`_Model` holds the per-cell likelihood pieces of one tally and one
EM step of each variant; :func:`em` runs them (:func:`pldp.estimation.em.run_em`) and computes
the joint EM's variance from the observed information.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from pldp.errors import EstimationError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.em import run_em
from pldp.estimation.result import Estimate
from pldp.protocols.febsf.auem import auem

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["em"]

_BIT_TABLE = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(float)  # (256, 8)


@cache
def _chebyshev_nodes(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k + 1`` Chebyshev points of the first kind and their Chebyshev-Vandermonde matrix of
    degree ``k``: what ``numpy.polynomial.chebyshev.chebinterpolate`` computes on every call, made
    once per degree (an EM step interpolates a new function at the same points)."""
    x = np.polynomial.chebyshev.chebpts1(k + 1)
    m = np.polynomial.chebyshev.chebvander(x, k)
    x.setflags(write=False)
    m.setflags(write=False)
    return x, m


def _chebinterpolate(h: Callable[[np.ndarray], np.ndarray], k: int) -> np.ndarray:
    """``numpy.polynomial.chebyshev.chebinterpolate(h, k)``, the same numbers, with the points and
    the matrix of :func:`_chebyshev_nodes`."""
    x, m = _chebyshev_nodes(k)
    c = np.dot(m.T, h(x))
    c[0] /= k + 1
    c[1:] /= 0.5 * (k + 1)
    return c


class _Model:
    """Per-cell likelihood pieces of the joint model for one tally (internal)."""

    def __init__(self, protocol: FEBSF, tally: FEBSFTally) -> None:
        self.proto = protocol
        self.tally = tally
        self.kind = tally.kind
        self.n = tally.n
        t, d = protocol.t, protocol.d
        if self.kind == "direct":
            self.cells = tally.cells.astype(float)
        else:
            pat, level, count = tally.rows
            self.count = count.astype(float)
            self.level = level
            self.pat = pat
            bits = np.unpackbits(pat, axis=1, count=d)
            self.ones = bits.sum(axis=1).astype(float)
            self.group = (self.level * (d + 1) + bits.sum(axis=1)).astype(np.intp)  # (reported level, ones)
            a, b = protocol.p_star, protocol.q_star
            self.alpha, self.beta = a / b, (1 - a) / (1 - b)
            # log of b_i^s (1 - b_i)^(d - s) per pattern and level: (U, t)
            self.log_base = self.ones[:, None] * np.log(b)[None, :] + (d - self.ones)[:, None] * np.log1p(-b)[None, :]
        self.t, self.d = t, d

    def _ones_weight(self, p: np.ndarray, pat: np.ndarray | None = None) -> np.ndarray:
        """sum of p over the ones of each pattern (of ``pat``, default the tally's), via one lookup table
        per byte column."""
        pat = self.pat if pat is None else pat
        width = pat.shape[1]
        padded = np.zeros(8 * width)
        padded[: self.d] = p
        lut = _BIT_TABLE @ padded.reshape(width, 8).T  # (256, width)
        return sum(lut[pat[:, c], c] for c in range(width))

    def _weighted_bits(self, w: np.ndarray, pat: np.ndarray | None = None) -> np.ndarray:
        """sum_u w_u z_uj for every item j (patterns ``pat``, default the tally's)."""
        pat = self.pat if pat is None else pat
        width = pat.shape[1]
        out = np.empty(8 * width)
        for c in range(width):
            out[8 * c : 8 * c + 8] = np.bincount(pat[:, c], weights=w, minlength=256) @ _BIT_TABLE
        return out[: self.d]

    def step(self, p: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """One EM step of the joint model; returns new (p, rho) and the log-likelihood at the old point."""
        proto = self.proto
        gap = proto.p_star - proto.q_star
        if self.kind == "direct":
            cells = self.cells
            A = rho[None, :] * proto.pi.T  # (L, t): rho_i pi(l | i)
            M = proto.q_star[:, None] + gap[:, None] * p[None, :]  # (t, d): Pr(y | level i) under p
            Z = A @ M  # (L, d): Pr(l, y)
            W = cells / np.where(Z > 0, Z, 1.0)  # (L, d)
            post_i = (A.T @ W) * M  # (t, d): sum_l cells[l, y] A[l, i] M[i, y] / Z[l, y]
            rho_new = post_i.sum(axis=1) / self.n
            # expected holders of j: p_j [sum_{l,y,i} W A q_i + sum_{l,i} W[l, j] A[l, i] gap_i]
            WA = W.T @ A  # (d, t)
            e = p * (np.sum(WA @ proto.q_star) + WA @ gap)
            ll = float(np.sum(cells[cells > 0] * np.log(Z[cells > 0])))
            return e / self.n, rho_new, ll
        # unary patterns: with C[g, i] = rho_i pi(l | i) b_i^s (1 - b_i)^(d - s) for the group
        # g = (reported level l, number of ones s), a pattern's likelihood is affine in P1, the
        # p-mass of its ones: L_u = sum_i C[g, i] (beta_i + (alpha_i - beta_i) P1_u)
        C, scale = self._group_table(rho)
        cb, cg = C @ self.beta, C @ (self.alpha - self.beta)
        g = self.group
        P1 = self._ones_weight(p)
        L = cb[g] + cg[g] * P1
        ll = float(np.sum(self.count * (np.log(L) + scale[g])))
        inv = self.count / L
        s0 = np.bincount(g, weights=inv, minlength=C.shape[0])
        s1 = np.bincount(g, weights=inv * P1, minlength=C.shape[0])
        rho_new = (self.beta * (s0 @ C) + (self.alpha - self.beta) * (s1 @ C)) / self.n
        e = p * ((inv * cb[g]).sum() + self._weighted_bits(inv * cg[g]))
        return e / self.n, rho_new, ll

    def _group_table(self, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``C[g, i]`` for every group ``g = l * (d + 1) + s``, scaled by ``exp(-scale[g])``."""
        t, d = self.t, self.d
        pi = self.proto.pi
        s = np.arange(d + 1, dtype=float)
        b = self.proto.q_star
        with np.errstate(divide="ignore"):
            log_b = s[:, None] * np.log(b)[None, :] + (d - s)[:, None] * np.log1p(-b)[None, :]  # (d+1, t)
            log_a = np.log(rho)[None, :] + np.log(pi.T)  # (l, t)
        logc = (log_a[:, None, :] + log_b[None, :, :]).reshape(t * (d + 1), t)
        scale = logc.max(axis=1)
        scale = np.where(np.isfinite(scale), scale, 0.0)
        return np.exp(logc - scale[:, None]), scale

    def paper_step(self, p: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """Section 6 as printed (eq. 5 likelihood, eq. 12 E-step, eq. 14-15 M-step)."""
        proto = self.proto
        gap = proto.p_star - proto.q_star
        if self.kind == "direct":
            cnt = self.cells.sum(axis=0)  # reported levels are ignored (eq. 6)
            # Pr(Z | x_j, eps_i) = p_i if y = j else q_i; sum_j p_j Pr = q_i + gap_i p_y
            S = proto.q_star[:, None] + gap[:, None] * p[None, :]  # (t, d) indexed by y
            J = rho[:, None] * S
            post = J / J.sum(axis=0, keepdims=True)  # (t, d): Pr(level i | y)
            Q = float(np.sum(cnt[None, :] * post * np.log(np.where(J > 0, J, 1.0))))
            rho_new = (post * cnt[None, :]).sum(axis=1) / self.n
            # eq. 15: p_j = 1/N sum_u sum_i Pr(Z_u | x_j, eps_i) post_iu  (averages the likelihood)
            base = (post * cnt[None, :] * proto.q_star[:, None]).sum()  # y != j terms at q_i
            own = (post * cnt[None, :] * gap[:, None]).sum(axis=0)  # extra (p_i - q_i) when y = j
            p_new = (base + own) / self.n
            return p_new / p_new.sum(), rho_new, Q
        # eq. 12 ignores the reported levels, so rows of one pattern are merged; Pr(level i | pattern u)
        # is rho_i S_iu / D_u with S_iu = q_i + gap_i P1_u affine in P1_u, and so is D_u = A + B P1_u:
        # every sum over (u, i) but Q's logarithms is a sum over u of a scalar (O(U) per step,
        # not O(U t); the same numbers to rounding, tests/test_febsf.py::test_paper_em_vectorised_...)
        pat, count = self._merged
        P1 = self._ones_weight(p, pat)
        q = proto.q_star
        A, B = float(rho @ q), float(rho @ gap)
        inv = count / (A + B * P1)  # count_u / D_u
        s0, s1 = float(inv.sum()), float(inv @ P1)
        rho_new = rho * (q * s0 + gap * s1) / self.n
        wq = float((rho * q * q).sum()) * s0 + float((rho * q * gap).sum()) * s1
        wg = inv * (float((rho * gap * q).sum()) + float((rho * gap * gap).sum()) * P1)
        p_new = (wq + self._weighted_bits(wg, pat)) / self.n
        # Q = sum_u count_u sum_i post_ui log J_ui with J_ui = rho_i S_iu: the log rho_i part is two scalars
        # again, the rest sum_u inv_u h(P1_u) with h(x) = sum_i rho_i S_i(x) log S_i(x) (_entropy_sum)
        with np.errstate(divide="ignore", invalid="ignore"):
            Q = float(np.sum(rho * np.log(rho) * (q * s0 + gap * s1))) + self._entropy_sum(P1, rho, inv)
        return p_new / p_new.sum(), rho_new, Q

    def _entropy_sum(self, x: np.ndarray, rho: np.ndarray, w: np.ndarray) -> float:
        """:math:`\\sum_u w_u h(x_u)`, :math:`h(x) = \\sum_i \\rho_i S_i(x) \\ln S_i(x)`, :math:`S_i(x) = q_i +
        (p_i - q_i) x`, for ``x`` in [0, 1].

        ``h`` is analytic on [0, 1]: its singularities are the zeros :math:`x_i = -q_i / (p_i - q_i) < 0` of the
        :math:`S_i`. Mapped to [-1, 1] the nearest lies at :math:`y^* = 2 x^* - 1` and the Chebyshev
        interpolant of degree ``K`` errs by at most :math:`4 M r^{-K} / (r - 1)` with :math:`r = |y^*| +
        \\sqrt{y^{*2} - 1}` and ``M`` the bound of ``|h|`` on the Bernstein ellipse (Trefethen, ATAP, Thm 8.2;
        ``|h| <= max |S ln S| + ...`` is of the order of 1 there): ``K`` is chosen for ``1e-17`` of that, so
        ``h`` costs ``K`` passes over the patterns instead of ``t`` logarithms each. When ``K`` would exceed 48
        (a level with :math:`q_i` near 0, e.g. OUE at large budgets), the (U, t) logarithms are taken.
        """
        proto = self.proto
        q, gap = proto.q_star, proto.p_star - proto.q_star
        live = rho > 0
        with np.errstate(divide="ignore"):
            x_star = float(np.max(np.where(live & (gap > 0), -q / np.where(gap > 0, gap, 1.0), -np.inf)))
        if np.isfinite(x_star):
            y = 1.0 - 2.0 * x_star  # |y*| > 1
            r = y + np.sqrt(y * y - 1.0)
            k = int(np.ceil(np.log(4.0 / (r - 1.0) * 1e17) / np.log(r)))
        else:
            k = 2  # h is affine in x (no level's support probability depends on x)
        if k <= 48:

            def h(yy: np.ndarray) -> np.ndarray:
                S = q[None, :] + gap[None, :] * ((yy + 1.0) / 2.0)[:, None]
                with np.errstate(divide="ignore", invalid="ignore"):
                    return np.asarray(np.where(S > 0, S * np.log(S), 0.0) @ np.where(live, rho, 0.0))

            coef = _chebinterpolate(h, k)
            return float(w @ np.polynomial.chebyshev.chebval(2.0 * x - 1.0, coef))
        S, logS = self._buffers
        np.multiply.outer(x, gap, out=S)
        S += q
        np.log(S, out=logS)
        logS *= S
        return float(w @ logS @ rho)

    @cached_property
    def _merged(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct bit patterns over all reported levels and their counts (the paper's EM ignores levels)."""
        pat, idx = np.unique(self.pat, axis=0, return_inverse=True)
        return pat, np.bincount(idx.ravel(), weights=self.count, minlength=pat.shape[0])

    @cached_property
    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        """Two (U, t) work arrays of :meth:`_entropy_sum`'s exact path (allocated once per tally)."""
        shape = (self._merged[0].shape[0], self.t)
        return np.empty(shape), np.empty(shape)


def em(
    protocol: FEBSF,
    tally: FEBSFTally,
    variant: Literal["joint", "paper"] = "joint",
    tol: float = 1e-10,
    max_iter: int = 20_000,
    start: tuple[np.ndarray, np.ndarray] | None = None,
    on_cap: Literal["raise", "return"] | None = None,
    keep: np.ndarray | None = None,
) -> Estimate:
    """Maximum likelihood of ``(p, rho)`` by EM.

    ``variant="joint"`` (the correct EM, ERRATA FEBSF-4): the observed data of a user are
    her reported level ``l'`` and her item report ``Z``; the latent data her true level ``i``
    and item ``j``. The likelihood of a user is
    :math:`\\sum_{i,j} \\rho_i\\,\\pi(l'|i)\\,p_j \\Pr(Z | j, \\varepsilon_i)` with the exact
    per-protocol :math:`\\Pr(Z | j, \\varepsilon_i)` (one k-RR probability, or the product over
    all bits for RAPPOR/OUE). The E-step takes the posterior of ``(i, j)``; the M-step sets
    ``rho`` and ``p`` to the expected shares. Each step increases the likelihood and stays
    on the simplex. It runs on the tally: ``O(t^2 d)`` per step for k-RR, ``O(U t)`` for
    unary with ``U`` distinct patterns.

    ``variant="paper"``: Section 6 / Algorithm 1 as printed, kept only to reproduce the paper:
    the E-step (eq. 12) ignores the reported levels, the likelihood is eq. 5 (one support
    indicator, even for unary reports) and the M-step for ``p`` (eq. 15) averages the
    likelihood where the posterior belongs. Two changes are unavoidable and documented: eq. 12's
    ``rho_j`` (indexed by items) is read as ``p_j``, and ``p`` is renormalised after eq. 15 (its
    Lagrange constraint). It is not tuned.

    Start: the AUEM estimate projected onto the simplex and ``rho-hat`` projected onto the
    simplex, each mixed with 1 % of the uniform distribution (EM cannot revive a zero).
    Stopping rule (ERRATA FEBSF-5): the log-likelihood (``Q`` for the paper's variant) rises
    by less than ``tol * (1 + |loglik|)`` and no parameter moves by more than ``0.01 sqrt(tol)``
    in one cycle, or ``max_iter`` EM steps (see :func:`pldp.estimation.em.run_em`). The joint
    variant is accelerated by SQUAREM with backtracking (its log-likelihood never decreases);
    the paper's runs plain EM steps, as printed.

    At ``max_iter`` without meeting the rule: ``on_cap="raise"`` raises
    :class:`~pldp.errors.EstimationError` saying how far the last cycle was from the rule;
    ``on_cap="return"`` returns the last iterate with ``converged=False``. The default is
    ``"raise"`` for the joint EM (a stall is never silent) and ``"return"`` for the paper's
    variant (Algorithm 1 has no stopping rule: it is run for a chosen number of steps). Either
    way ``info["stopped"]`` holds :meth:`~pldp.estimation.em.EMResult.diagnostic`'s sentence.

    Variance (joint variant): the inverse of the observed information, estimated by the
    outer product of the per-cell score vectors, in the free coordinates of the two simplices.
    The paper's variant has no variance model (``inf``: its intervals are the whole range).

    ``keep`` (joint variant; :func:`pldp.protocols.febsf.detect.detect`): the tally holds only the
    reports a screen kept, and ``keep[i]`` is the probability that an honest report of true level
    ``i`` is kept, the same for every item. The EM for truncated data (Dempster, Laird & Rubin
    1977) then adds, at each step, the expected dropped reports, :math:`N'\\rho_i(1-\\kappa_i)/
    \\sum_k \\rho_k\\kappa_k` at level ``i`` with items from ``p``, and maximizes the kept reports'
    likelihood :math:`\\ell - N' \\ln \\sum_k \\rho_k\\kappa_k`: ``rho`` and ``p`` are the whole
    population's.

    Returns an :class:`~pldp.Estimate` with method ``"mle"`` (joint) or ``"paper"``; ``info``
    holds ``rho``, the log-likelihood and the estimator's name (the joint EM also
    ``rho_covariance``, the block of the inverse information for ``rho``).
    """
    tally = protocol._check_tally(tally)
    if variant not in ("joint", "paper"):
        raise EstimationError(f"variant must be 'joint' or 'paper', got {variant!r}")
    model = _Model(protocol, tally)
    t, d = protocol.t, protocol.d
    if start is None:
        try:
            a = auem(protocol, tally)
            p0, rho0 = norm_sub(a.frequencies)[0], norm_sub(a.info["rho"])[0]
        except EstimationError:
            p0, rho0 = np.full(d, 1.0 / d), np.full(t, 1.0 / t)
    else:
        p0, rho0 = (np.asarray(s, dtype=float) for s in start)
    p = 0.99 * p0 / p0.sum() + 0.01 / d
    rho = 0.99 * rho0 / rho0.sum() + 0.01 / t

    def step(theta: np.ndarray) -> tuple[np.ndarray, float]:
        fit = model.step if variant == "joint" else model.paper_step
        pn, rn, value = fit(theta[:d], theta[d:])
        if keep is not None:  # the truncated-data EM: impute the honest reports the screen dropped
            kept = float(theta[d:] @ keep)
            lost = (1.0 - kept) / kept  # per kept report
            rn = (rn + theta[d:] * (1.0 - keep) / kept) / (1.0 + lost)
            pn = (pn + lost * theta[:d]) / (1.0 + lost)
            value -= model.n * np.log(kept)
        return np.concatenate([pn, rn]), value

    if on_cap not in (None, "raise", "return"):
        raise EstimationError(f"on_cap must be 'raise' or 'return', got {on_cap!r}")
    run = run_em(step, np.concatenate([p, rho]), (d, t), tol, max_iter, variant == "joint")
    if not run.converged and (on_cap or ("raise" if variant == "joint" else "return")) == "raise":
        raise EstimationError(f"FEBSF's joint EM did not converge: {run.diagnostic()}")
    p, rho = run.theta[:d], run.theta[d:]
    name = "joint EM" if variant == "joint" else "EM (paper)"
    info: dict[str, Any] = {
        "estimator": name,
        "rho": rho,
        "log_likelihood": run.loglik,
        "variant": variant,
        "stopped": run.diagnostic(),
    }
    if variant == "joint":
        cov = _em_covariance(model, p, rho)
        var = np.maximum(np.diag(cov)[:d], 0.0)
        info["rho_covariance"] = cov[d:, d:]
    else:
        var = np.full(d, np.inf)
    method = "mle" if variant == "joint" else "paper"
    return Estimate(p, var, tally.n, method, protocol.domain, run.steps, run.converged, info, on_simplex=True)


def _em_covariance(model: _Model, p: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """The inverse observed information (outer product of scores) of ``(p, rho)``, shape ``(d + t, d + t)``."""
    proto = model.proto
    t, d = proto.t, proto.d
    gap = proto.p_star - proto.q_star
    if model.kind == "direct":
        A = rho[None, :] * proto.pi.T  # (L, t)
        M = proto.q_star[:, None] + gap[:, None] * p[None, :]  # (t, d)
        Z = A @ M  # (L, d)
        ok = model.cells > 0
        # score of cell (l, y): d/dp_j = [j = y] sum_i A[l, i] gap_i / Z ; d/drho_i = pi(l|i) M[i, y] / Z
        sp = (A @ gap)[:, None] / np.where(ok, Z, 1.0)  # (L, d), only coordinate j = y
        sr = proto.pi.T[:, :, None] * M[None, :, :] / np.where(ok, Z, 1.0)[:, None, :]  # (L, t, d)
        w = model.cells
        info_pp = np.diag(np.sum(w * sp**2, axis=0))
        info_pr = np.einsum("ly,liy->yi", w * sp, sr)
        info_rr = np.einsum("ly,liy,lky->ik", w, sr, sr)
    else:
        P1 = model._ones_weight(p)
        M = model.beta[None, :] + (model.alpha - model.beta)[None, :] * P1[:, None]
        with np.errstate(divide="ignore"):
            logj = np.log(rho)[None, :] + np.log(proto.pi.T[model.level]) + model.log_base + np.log(M)
        mx = logj.max(axis=1, keepdims=True)
        J = np.exp(logj - mx)
        post = J / J.sum(axis=1, keepdims=True)
        v = np.sum(post * (model.alpha - model.beta)[None, :] / M, axis=1)  # score_p = z_u * v_u
        sr = post / rho[None, :]  # score_rho
        bits = np.unpackbits(model.pat, axis=1, count=d).astype(float)
        wz = bits * (model.count * v)[:, None]
        info_pp = (bits * v[:, None]).T @ wz
        info_pr = wz.T @ sr
        info_rr = (sr * model.count[:, None]).T @ sr
    info = np.block([[info_pp, info_pr], [info_pr.T, info_rr]])
    # free coordinates: drop the last p and the last rho
    J = np.zeros((d + t, d + t - 2))
    J[: d - 1, : d - 1] = np.eye(d - 1)
    J[d - 1, : d - 1] = -1.0
    J[d : d + t - 1, d - 1 :] = np.eye(t - 1)
    J[d + t - 1, d - 1 :] = -1.0
    cov_free = np.linalg.pinv(J.T @ info @ J)
    return np.asarray(J @ cov_free @ J.T)

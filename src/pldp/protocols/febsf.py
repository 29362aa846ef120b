"""User-level personalized LDP with hidden budgets: PLDP-FEBSF (Wu, Zhu, Zhang, Xie).

Every user holds an item and chooses one of ``t`` public budget levels
:math:`\\varepsilon_1 < \\dots < \\varepsilon_t` (her choice, independent of her item). Her
client (Sec. 5.1, five steps) perturbs the item with a pure protocol at her level's budget
(``data="krr" | "rappor" | "oue"``; RAPPOR is basic one-time RAPPOR with
:math:`\\varepsilon/2` per bit) and perturbs her level index with a pure protocol over the
``t`` levels at budget :math:`\\varepsilon_p` (k-RR by default). She sends both reports; the
item report is :math:`\\varepsilon_\\tau`-LDP and the level report :math:`\\varepsilon_p`-LDP.

Server-side estimators (:mod:`pldp.protocols.febsf`):

* :func:`auem`: the approximately unbiased estimate of eq. 4-5 with a delta-method variance
  (ERRATA FEBSF-1: Theorem 5.3 is wrong);
* :func:`em`: maximum likelihood of ``(p, rho)`` by EM on the *joint* likelihood of
  (reported level, item report) (ERRATA FEBSF-4), or ``variant="paper"``, Section 6 as
  printed, kept only to reproduce the paper.

Tallies. For k-RR data the table of (reported level, reported item) counts is sufficient. For
unary data (RAPPOR, OUE) a user's likelihood under level ``i`` and item ``j`` is
:math:`b_i^{s}(1-b_i)^{d-s} R_i(z_j)` with ``s`` the number of ones and
:math:`R_i(1) = a_i/b_i`, :math:`R_i(0) = (1-a_i)/(1-b_i)`; summed over items it involves
:math:`\\sum_{j: z_j = 1} p_j`, which depends on *which* bits are set, so no per-bit count
table is sufficient. The unary tally therefore keeps the histogram of distinct (reported level,
bit pattern) pairs: exact, mergeable, and at most ``t * 2^d`` rows (much smaller than ``N``
for small domains, about ``N`` for large ones).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from pldp._validation import _show, as_counts, check_epsilon, check_int
from pldp.domain import Domain
from pldp.errors import DomainError, EstimationError, ParameterError, TallyError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.result import Estimate
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import KRR, DirectEncoding
from pldp.mechanisms.unary import OUE, RAPPOR
from pldp.protocols.base import Protocol
from pldp.tally import users_from_counts

__all__ = ["FEBSF", "FEBSFReports", "FEBSFTally", "auem", "check_levels", "em"]

_FORMAT = "pldp.febsf-tally/1"
_BIT_TABLE = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(float)  # (256, 8)


def check_levels(levels: Any) -> np.ndarray:
    """Validate budget levels: a non-empty, strictly increasing vector of finite budgets > 0."""
    arr = np.asarray(levels, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ParameterError("levels must hold at least one budget")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        raise ParameterError(f"levels must be finite and > 0; bad: {_show(arr[bad])}")
    if np.any(np.diff(arr) <= 0):
        raise ParameterError(f"levels must be strictly increasing, got {arr.tolist()}")
    return arr


@dataclass(frozen=True)
class FEBSFReports:
    """What users send: the item reports and the reported level indices.

    ``data`` is an int array of reported items (k-RR) or a uint8 array of bit-packed unary
    reports (one row per user); ``level`` holds the reported level index of each user.
    """

    data: np.ndarray
    level: np.ndarray


@dataclass(frozen=True, eq=False)
class FEBSFTally:
    """Sufficient statistics of PLDP-FEBSF reports (mergeable).

    k-RR data: ``table[l, y]`` counts users who reported level ``l`` and item ``y``.
    Unary data: distinct ``patterns`` (rows of bit-packed reports) with their reported
    ``pattern_level`` and ``pattern_count``.
    """

    kind: str
    t: int
    d: int
    table: np.ndarray | None = None
    patterns: np.ndarray | None = None
    pattern_level: np.ndarray | None = None
    pattern_count: np.ndarray | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        """Number of users."""
        if self.kind == "krr":
            return int(self.table.sum())  # type: ignore[union-attr]
        return int(self.pattern_count.sum())  # type: ignore[union-attr]

    @property
    def level_counts(self) -> np.ndarray:
        """Users per reported level."""
        if self.kind == "krr":
            return self.table.sum(axis=1)  # type: ignore[union-attr]
        return np.bincount(self.pattern_level, weights=self.pattern_count, minlength=self.t).astype(np.int64)  # type: ignore[arg-type]

    @property
    def support_counts(self) -> np.ndarray:
        """Reports supporting each item (over all users)."""
        if self.kind == "krr":
            return self.table.sum(axis=0)  # type: ignore[union-attr]
        bits = np.unpackbits(self.patterns, axis=1, count=self.d).astype(np.int64)  # type: ignore[arg-type]
        return self.pattern_count @ bits  # type: ignore[operator]

    def merge(self, other: FEBSFTally) -> FEBSFTally:
        """Combine with a tally of other users."""
        if not isinstance(other, FEBSFTally) or (other.kind, other.t, other.d) != (self.kind, self.t, self.d):
            raise TallyError("can only merge FEBSF tallies of the same data protocol, levels and domain")
        if self.kind == "krr":
            return FEBSFTally("krr", self.t, self.d, table=self.table + other.table)  # type: ignore[operator]
        return _pattern_tally(
            self.t,
            self.d,
            np.concatenate([self.patterns, other.patterns]),  # type: ignore[list-item]
            np.concatenate([self.pattern_level, other.pattern_level]),  # type: ignore[list-item]
            np.concatenate([self.pattern_count, other.pattern_count]),  # type: ignore[list-item]
        )

    __add__ = merge

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (patterns as lists of byte values)."""
        out: dict[str, Any] = {"format": _FORMAT, "kind": self.kind, "t": self.t, "d": self.d}
        if self.kind == "krr":
            out["table"] = self.table.tolist()  # type: ignore[union-attr]
        else:
            out["patterns"] = self.patterns.tolist()  # type: ignore[union-attr]
            out["pattern_level"] = self.pattern_level.tolist()  # type: ignore[union-attr]
            out["pattern_count"] = self.pattern_count.tolist()  # type: ignore[union-attr]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FEBSFTally:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise TallyError(f"not a {_FORMAT} tally")
        t, d = int(data["t"]), int(data["d"])
        if data["kind"] == "krr":
            table = np.asarray(data["table"], dtype=np.int64)
            if table.shape != (t, d) or np.any(table < 0):
                raise TallyError(f"table must be a non-negative ({t}, {d}) array")
            return cls("krr", t, d, table=table)
        return _pattern_tally(
            t,
            d,
            np.asarray(data["patterns"], dtype=np.uint8).reshape(-1, (d + 7) // 8),
            np.asarray(data["pattern_level"], dtype=np.int64),
            as_counts(data["pattern_count"], "pattern_count"),
        )


def _pattern_tally(t: int, d: int, patterns: np.ndarray, level: np.ndarray, count: np.ndarray) -> FEBSFTally:
    """Histogram of distinct (level, pattern) rows, summing counts of duplicates."""
    width = (d + 7) // 8
    if patterns.ndim != 2 or patterns.shape[1] != width or level.shape != (patterns.shape[0],):
        raise TallyError("patterns, levels and counts do not line up")
    if level.size and (level.min() < 0 or level.max() >= t):
        raise TallyError(f"reported levels must lie in [0, {t})")
    keys = np.concatenate([level.astype(np.uint8 if t < 256 else np.uint16)[:, None].view(np.uint8), patterns], axis=1)
    keys = np.ascontiguousarray(keys)
    void = keys.view(np.dtype((np.void, keys.shape[1]))).reshape(-1)
    uniq, inverse = np.unique(void, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=count, minlength=uniq.size).astype(np.int64)
    rows = uniq.view(np.uint8).reshape(uniq.size, keys.shape[1])
    lvl_bytes = keys.shape[1] - width
    lvl = rows[:, :lvl_bytes].copy().view(np.uint8 if t < 256 else np.uint16).reshape(-1).astype(np.int64)
    return FEBSFTally("unary", t, d, patterns=rows[:, lvl_bytes:].copy(), pattern_level=lvl, pattern_count=counts)


class FEBSF(Protocol):
    """The PLDP-FEBSF protocol (client and tally); estimators are :func:`auem` and :func:`em`.

    Parameters
    ----------
    levels : array_like of float
        Public budget levels, strictly increasing.
    eps_p : float
        Budget protecting the level report.
    d : int or Domain
        The item domain.
    data : {"krr", "rappor", "oue"}
        Pure protocol for the item report.
    level_mechanism : DirectEncoding, optional
        Pure direct-encoding protocol over the ``t`` level indices; default ``KRR(eps_p, t)``.
    """

    def __init__(
        self,
        levels: Any,
        eps_p: float,
        d: int | Domain,
        data: Literal["krr", "rappor", "oue"] = "krr",
        level_mechanism: DirectEncoding | None = None,
    ) -> None:
        self.levels = check_levels(levels)
        self.eps_p = check_epsilon(eps_p, "eps_p")
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        factory = {"krr": KRR, "rappor": RAPPOR, "oue": OUE}
        if data not in factory:
            raise ParameterError(f"data must be 'krr', 'rappor' or 'oue', got {data!r}")
        self.data = data
        self.mechanisms: list[Mechanism] = [factory[data](float(e), dom) for e in self.levels]
        t = self.levels.size
        if level_mechanism is None:
            level_mechanism = KRR(self.eps_p, t) if t >= 2 else None
        elif not isinstance(level_mechanism, DirectEncoding) or level_mechanism.d != t:
            raise ParameterError(f"level_mechanism must be a direct-encoding mechanism over the {t} levels")
        self.level_mechanism = level_mechanism
        supports = [m.support for m in self.mechanisms]
        self.p = np.array([s[0][0] for s in supports])  # per level: Pr[support own item]
        self.q = np.array([s[1][0] for s in supports])  # per level: Pr[support another item]
        # pi[i, l] = Pr(reported level l | true level i)
        self.pi = level_mechanism.channel() if level_mechanism is not None else np.ones((1, 1))

    @property
    def t(self) -> int:
        """Number of levels."""
        return int(self.levels.size)

    @property
    def domain(self) -> Domain:
        """The item domain."""
        return self.mechanisms[0].domain

    @property
    def d(self) -> int:
        """Domain size ``k``."""
        return self.mechanisms[0].d

    @property
    def kind(self) -> str:
        """Tally kind: ``"krr"`` or ``"unary"``."""
        return "krr" if self.data == "krr" else "unary"

    def __repr__(self) -> str:
        return f"FEBSF(levels={self.levels.tolist()}, eps_p={self.eps_p:g}, d={self.d}, data={self.data!r})"

    # ---------------------------------------------------------------------- client
    def _check_users(self, items: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(items)
        lv = np.asarray(levels)
        if x.ndim != 1 or lv.shape != x.shape:
            raise ParameterError(f"items and levels must be 1-D arrays of equal length, got {x.shape} and {lv.shape}")
        if x.size and (x.dtype.kind not in "iu" or lv.dtype.kind not in "iu"):
            raise ParameterError("items and levels must be integer indices")
        if lv.size and (lv.min() < 0 or lv.max() >= self.t):
            bad = lv[(lv < 0) | (lv >= self.t)]
            raise DomainError(f"level indices must lie in [0, {self.t}); got {_show(np.unique(bad))}")
        return x.astype(np.int64), lv.astype(np.int64)

    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> FEBSFReports:
        """Run every user's client: perturb the item at her level, and the level at ``eps_p``.

        Vectorised per level (a loop over the ``t`` levels, none over users).
        """
        x, lv = self._check_users(items, levels)
        if self.kind == "krr":
            data = np.empty(x.size, dtype=np.int64)
        else:
            data = np.empty((x.size, (self.d + 7) // 8), dtype=np.uint8)
        for i, mech in enumerate(self.mechanisms):
            sel = np.flatnonzero(lv == i)
            if sel.size:
                data[sel] = mech.perturb(x[sel], rng)
        reported = self.level_mechanism.perturb(lv, rng) if self.level_mechanism is not None else lv.copy()
        return FEBSFReports(data, reported.astype(np.int64))

    # ---------------------------------------------------------------------- server
    def tally(self, reports: FEBSFReports) -> FEBSFTally:
        """Aggregate reports into sufficient statistics."""
        if not isinstance(reports, FEBSFReports):
            raise TallyError(f"expected FEBSFReports, got {type(reports).__name__}")
        lv = np.asarray(reports.level)
        if lv.ndim != 1 or (lv.size and (lv.min() < 0 or lv.max() >= self.t)):
            raise TallyError(f"reported levels must be a 1-D array in [0, {self.t})")
        if self.kind == "krr":
            y = np.asarray(reports.data)
            if y.shape != lv.shape or (y.size and (y.min() < 0 or y.max() >= self.d)):
                raise TallyError(f"k-RR reports must be {lv.size} item indices in [0, {self.d})")
            table = np.bincount(lv * self.d + y, minlength=self.t * self.d).reshape(self.t, self.d)
            return FEBSFTally("krr", self.t, self.d, table=table)
        rep = self.mechanisms[0]._check_reports(reports.data)  # type: ignore[attr-defined]
        if rep.shape[0] != lv.size:
            raise TallyError("one reported level per report is needed")
        return _pattern_tally(self.t, self.d, rep, lv, np.ones(lv.size, dtype=np.int64))

    def simulate(self, cells: Any, rng: np.random.Generator) -> FEBSFTally:
        """Tally of users with ``cells[level, item]`` true counts.

        k-RR: exact count-level simulation (per true level, the item tally of k-RR, then each
        reported item's users split over reported levels by one multinomial); O(t^2 d).
        Unary: the pattern histogram needs each user's bits, so users are drawn per user
        (vectorised, bit-packed).
        """
        c = np.asarray(cells)
        if c.shape != (self.t, self.d):
            raise ParameterError(f"cells must have shape (t, d) = ({self.t}, {self.d}), got {c.shape}")
        c = np.stack([as_counts(row, "cells") for row in c])
        if self.kind == "krr":
            table = np.zeros((self.t, self.d), dtype=np.int64)
            for i, mech in enumerate(self.mechanisms):
                y = mech.simulate(c[i], rng).counts
                table += rng.multinomial(y, self.pi[i]).T  # (d, t) -> (t, d)
            return FEBSFTally("krr", self.t, self.d, table=table)
        return self.tally(self.perturb(*users_from_counts(c), rng))

    def privacy(self) -> dict[str, Any]:
        """Exact checks: each level's item mechanism and the level mechanism."""
        out: dict[str, Any] = {f"data[{e:g}]": m.privacy() for e, m in zip(self.levels, self.mechanisms, strict=True)}
        if self.level_mechanism is not None:
            out["level"] = self.level_mechanism.privacy()
        return out

    def estimate(self, tally: FEBSFTally, method: str = "auem", **options: Any) -> Estimate:
        """``"auem"`` (default), ``"em"`` (joint EM) or ``"em-paper"``; see :func:`auem`, :func:`em`."""
        if method == "auem":
            return auem(self, tally)
        em_options = {key: options[key] for key in ("tol", "max_iter", "start") if key in options}
        if method in ("em", "mle"):
            return em(self, tally, variant="joint", **em_options)
        if method == "em-paper":
            return em(self, tally, variant="paper", **em_options)
        raise EstimationError(f"unknown method {method!r} for FEBSF; choose 'auem', 'em' or 'em-paper'")

    def _check_tally(self, tally: Any) -> FEBSFTally:
        if not isinstance(tally, FEBSFTally) or (tally.kind, tally.t, tally.d) != (self.kind, self.t, self.d):
            raise EstimationError(f"the tally does not come from {self!r}")
        if tally.n == 0:
            raise EstimationError("the tally holds no reports")
        return tally

    @property
    def level_support(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p_p, q_p)``: support probabilities of the level mechanism per level."""
        if self.level_mechanism is None:
            return np.ones(1), np.zeros(1)
        return self.level_mechanism.support


# ------------------------------------------------------------------------------ AUEM
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
    gap = protocol.p - protocol.q
    den = float(rho @ gap)
    if not den > 0:
        raise EstimationError(f"the estimated level shares give p* - q* = {den:.3g} <= 0; use em() instead")
    qs = float(rho @ protocol.q)
    f = (c - qs) / den
    # delta method: g(c, lam); dg/dc = 1/den; dg/drho_l = -(q_l + f gap_l)/den; drho_l/dlam_l = 1/(pp_l - qp_l)
    dg_dlam = -(protocol.q[None, :] + f[:, None] * gap[None, :]) / den / (pp - qp)[None, :]  # (d, t)
    rho_c = np.clip(rho, 0.0, None)
    rho_c = rho_c / rho_c.sum() if rho_c.sum() > 0 else np.full(rho.size, 1.0 / rho.size)
    f_c = np.clip(f, 0.0, 1.0)
    # per-user moments under the model at the (clipped) estimates
    m_l = protocol.q[None, :] + gap[None, :] * f_c[:, None]  # (d, t): Pr[support j | true level l]
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
    return Estimate(
        f,
        np.maximum(var, 0.0),
        n,
        "auem",
        protocol.domain,
        info={"rho": rho, "p_star": float(rho @ protocol.p), "q_star": qs},
    )


# -------------------------------------------------------------------------------- EM
class _Model:
    """Per-cell likelihood pieces of the joint model for one tally (internal)."""

    def __init__(self, protocol: FEBSF, tally: FEBSFTally) -> None:
        self.proto = protocol
        self.tally = tally
        self.kind = tally.kind
        self.n = tally.n
        t, d = protocol.t, protocol.d
        if self.kind == "krr":
            self.cells = tally.table.astype(float)  # type: ignore[union-attr]
        else:
            pat = tally.patterns
            self.count = tally.pattern_count.astype(float)  # type: ignore[union-attr]
            self.level = tally.pattern_level  # type: ignore[assignment]
            self.pat = pat
            bits = np.unpackbits(pat, axis=1, count=d)  # type: ignore[arg-type]
            self.ones = bits.sum(axis=1).astype(float)
            self.group = (self.level * (d + 1) + bits.sum(axis=1)).astype(np.intp)  # (reported level, ones)
            a, b = protocol.p, protocol.q
            self.alpha, self.beta = a / b, (1 - a) / (1 - b)
            # log of b_i^s (1 - b_i)^(d - s) per pattern and level: (U, t)
            self.log_base = self.ones[:, None] * np.log(b)[None, :] + (d - self.ones)[:, None] * np.log1p(-b)[None, :]
        self.t, self.d = t, d

    def _ones_weight(self, p: np.ndarray) -> np.ndarray:
        """sum of p over the ones of each pattern, via one lookup table per byte column."""
        width = self.pat.shape[1]
        padded = np.zeros(8 * width)
        padded[: self.d] = p
        lut = _BIT_TABLE @ padded.reshape(width, 8).T  # (256, width)
        return sum(lut[self.pat[:, c], c] for c in range(width))

    def _weighted_bits(self, w: np.ndarray) -> np.ndarray:
        """sum_u w_u z_uj for every item j."""
        width = self.pat.shape[1]
        out = np.empty(8 * width)
        for c in range(width):
            out[8 * c : 8 * c + 8] = np.bincount(self.pat[:, c], weights=w, minlength=256) @ _BIT_TABLE
        return out[: self.d]

    def step(self, p: np.ndarray, rho: np.ndarray, joint: bool) -> tuple[np.ndarray, np.ndarray, float]:
        """One EM step; returns new (p, rho) and the log-likelihood at the old point."""
        proto = self.proto
        pi = proto.pi if joint else np.ones_like(proto.pi)
        gap = proto.p - proto.q
        if self.kind == "krr":
            cells = self.cells if joint else self.cells.sum(axis=0, keepdims=True)
            A = rho[None, :] * (pi.T if joint else np.ones((1, self.t)))  # (L, t): rho_i pi(l | i)
            M = proto.q[:, None] + gap[:, None] * p[None, :]  # (t, d): Pr(y | level i) under p
            Z = A @ M  # (L, d): Pr(l, y)
            W = cells / np.where(Z > 0, Z, 1.0)  # (L, d)
            post_i = (A.T @ W) * M  # (t, d): sum_l cells[l, y] A[l, i] M[i, y] / Z[l, y]
            rho_new = post_i.sum(axis=1) / self.n
            # expected holders of j: p_j [sum_{l,y,i} W A q_i + sum_{l,i} W[l, j] A[l, i] gap_i]
            WA = W.T @ A  # (d, t)
            e = p * (np.sum(WA @ proto.q) + WA @ gap)
            ll = float(np.sum(cells[cells > 0] * np.log(Z[cells > 0])))
            return e / self.n, rho_new, ll
        # unary patterns: with C[g, i] = rho_i pi(l | i) b_i^s (1 - b_i)^(d - s) for the group
        # g = (reported level l, number of ones s), a pattern's likelihood is affine in P1, the
        # p-mass of its ones: L_u = sum_i C[g, i] (beta_i + (alpha_i - beta_i) P1_u)
        C, scale = self._group_table(rho, joint)
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

    def _group_table(self, rho: np.ndarray, joint: bool) -> tuple[np.ndarray, np.ndarray]:
        """``C[g, i]`` for every group ``g = l * (d + 1) + s``, scaled by ``exp(-scale[g])``."""
        t, d = self.t, self.d
        pi = self.proto.pi if joint else np.ones_like(self.proto.pi)
        s = np.arange(d + 1, dtype=float)
        b = self.proto.q
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
        gap = proto.p - proto.q
        if self.kind == "krr":
            cnt = self.cells.sum(axis=0)  # reported levels are ignored (eq. 6)
            # Pr(Z | x_j, eps_i) = p_i if y = j else q_i; sum_j p_j Pr = q_i + gap_i p_y
            S = proto.q[:, None] + gap[:, None] * p[None, :]  # (t, d) indexed by y
            J = rho[:, None] * S
            post = J / J.sum(axis=0, keepdims=True)  # (t, d): Pr(level i | y)
            Q = float(np.sum(cnt[None, :] * post * np.log(np.where(J > 0, J, 1.0))))
            rho_new = (post * cnt[None, :]).sum(axis=1) / self.n
            # eq. 15: p_j = 1/N sum_u sum_i Pr(Z_u | x_j, eps_i) post_iu  (averages the likelihood)
            base = (post * cnt[None, :] * proto.q[:, None]).sum()  # y != j terms at q_i
            own = (post * cnt[None, :] * gap[:, None]).sum(axis=0)  # extra (p_i - q_i) when y = j
            p_new = (base + own) / self.n
            return p_new / p_new.sum(), rho_new, Q
        P1 = self._ones_weight(p)
        S = proto.q[None, :] + gap[None, :] * P1[:, None]  # (U, t)
        J = rho[None, :] * S
        post = J / J.sum(axis=1, keepdims=True)
        Q = float(np.sum(self.count[:, None] * post * np.log(J)))
        rho_new = self.count @ post / self.n
        wq = float(np.sum(self.count[:, None] * post * proto.q[None, :]))
        wg = self.count * (post @ gap)
        p_new = (wq + self._weighted_bits(wg)) / self.n
        return p_new / p_new.sum(), rho_new, Q


def em(
    protocol: FEBSF,
    tally: FEBSFTally,
    variant: Literal["joint", "paper"] = "joint",
    tol: float = 1e-10,
    max_iter: int = 20_000,
    start: tuple[np.ndarray, np.ndarray] | None = None,
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
    in one cycle, or ``max_iter`` EM steps (see :func:`_run_em`). The joint variant is
    accelerated by SQUAREM; the paper's runs plain EM steps, as printed.

    Variance (joint variant): the inverse of the observed information, estimated by the
    outer product of the per-cell score vectors, in the free coordinates of the two simplices.
    """
    protocol._check_tally(tally)
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
        if variant == "joint":
            pn, rn, value = model.step(theta[:d], theta[d:], joint=True)
        else:
            pn, rn, value = model.paper_step(theta[:d], theta[d:])
        return np.concatenate([pn, rn]), value

    theta, ll, it, converged = _run_em(step, np.concatenate([p, rho]), d, tol, max_iter, accelerate=variant == "joint")
    p, rho = theta[:d], theta[d:]
    info: dict[str, Any] = {"rho": rho, "log_likelihood": ll, "variant": variant}
    var = _em_variance(model, p, rho) if variant == "joint" else np.full(d, np.nan)
    return Estimate(p, var, tally.n, "em" if variant == "joint" else "em-paper", protocol.domain, it, converged, info)


def _run_em(
    step: Any, theta: np.ndarray, d: int, tol: float, max_iter: int, accelerate: bool
) -> tuple[np.ndarray, float, int, bool]:
    """Iterate an EM map ``step(theta) -> (F(theta), loglik(theta))`` to convergence.

    With ``accelerate`` the SQUAREM scheme S3 of Varadhan & Roland (Scand. J. Stat. 2008) is
    used: two EM steps give ``r`` and ``v``, the extrapolation
    ``theta - 2 a r + a^2 v`` with ``a = -|r|/|v|`` (halved towards -1 until both blocks stay
    non-negative) is stabilised by one more EM step and kept only if the log-likelihood did
    not fall; otherwise the plain second EM step is kept, so the likelihood never decreases.

    Stopping rule: the log-likelihood rises by less than ``tol * (1 + |loglik|)`` and no
    parameter moves by more than ``0.01 sqrt(tol)`` in one cycle, or ``max_iter`` EM steps.
    Returns ``(theta, loglik, EM steps, converged)``.
    """
    evals = 0
    prev = -math.inf
    ll = -math.inf
    while evals < max_iter:
        th1, ll = step(theta)
        evals += 1
        if not accelerate:
            moved = float(np.max(np.abs(th1 - theta)))
            theta = th1
            if ll - prev <= tol * (1 + abs(ll)) and moved <= 1e-2 * math.sqrt(tol):
                return theta, ll, evals, True
            prev = ll
            continue
        th2, ll1 = step(th1)
        evals += 1
        r = th1 - theta
        v = th2 - th1 - r
        nv = float(np.linalg.norm(v))
        candidate = th2
        if nv > 0:
            a = min(-float(np.linalg.norm(r)) / nv, -1.0)
            while a < -1.0:
                trial = theta - 2 * a * r + a * a * v
                if np.all(trial >= 0):
                    candidate = trial
                    break
                a = (a - 1.0) / 2.0 if a < -1.01 else -1.0
        th3, ll3 = step(
            candidate / np.r_[np.full(d, candidate[:d].sum()), np.full(theta.size - d, candidate[d:].sum())]
        )
        evals += 1
        new, new_ll = (th3, ll3) if ll3 >= ll1 - 1e-12 * (1 + abs(ll1)) else (th2, ll1)
        moved = float(np.max(np.abs(new - theta)))
        theta = new
        if new_ll - ll <= tol * (1 + abs(new_ll)) and moved <= 1e-2 * math.sqrt(tol):
            return theta, new_ll, evals, True
        ll = new_ll
    return theta, ll, evals, False


def _em_variance(model: _Model, p: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Diagonal of the inverse observed information (outer product of scores) for ``p``."""
    proto = model.proto
    t, d = proto.t, proto.d
    gap = proto.p - proto.q
    if model.kind == "krr":
        A = rho[None, :] * proto.pi.T  # (L, t)
        M = proto.q[:, None] + gap[:, None] * p[None, :]  # (t, d)
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
    cov = J @ cov_free @ J.T
    return np.maximum(np.diag(cov)[:d], 0.0)

"""PPDA: budgets hidden, unary reports padded with zero bits that calibrate the mix of levels.

Personalized privacy-preserving data aggregation (Wang et al., IEEE GLOBECOM 2015), as a
PLDP-FEBSF baseline (Appendix A.5); ``docs/protocols.md`` has its design and variance.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal, Self

import numpy as np

from pldp._validation import as_frequencies, check_int
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError
from pldp.estimation.consistency import norm_sub
from pldp.estimation.detect import DEFAULT_ALPHA, describe, flag_region
from pldp.estimation.mle import log_likelihood_unary, mle_unary
from pldp.estimation.result import Estimate
from pldp.methods import ESTIMATION_METHODS, STANDARD_METHODS
from pldp.protocols.leveled import UNARY_AFFINE, HiddenLevels, check_oracle, make_oracle
from pldp.registry import register
from pldp.tally import Tally

__all__ = ["PPDA"]


@register
class PPDA(HiddenLevels):
    """Personalized privacy-preserving data aggregation (Wang et al., GLOBECOM 2015), as a baseline.

    Budgets are hidden; unary reports carry ``m`` extra zero bits that calibrate the unknown mix
    of levels (PLDP-FEBSF, Appendix A.5). The design below is assumed from that description;
    ``docs/protocols.md`` says what the sources define, why it has these properties, and derives
    the variance.

    Client: a user at level :math:`\\tau` one-hot encodes her item into ``d`` bits, appends ``m``
    zero bits and perturbs all ``d + m`` bits with basic RAPPOR or OUE at :math:`\\varepsilon_\\tau`
    (``RAPPOR(eps_tau, d + m)`` on an item in ``[0, d)``), so her report is exactly
    :math:`\\varepsilon_\\tau`-LDP. For both oracles :math:`a = \\alpha + \\beta b` (OUE:
    :math:`\\alpha = 1/2, \\beta = 0`; RAPPOR: :math:`\\alpha = 1, \\beta = -1`).

    Server: with ``S`` the calibration count (``calibration="extra"``: ``E``, the ones among the
    ``N m`` appended bits, :math:`\\alpha_S = 0`, :math:`L_S = m`; ``"pooled"``: ``T``, the ones over
    all bits, :math:`\\alpha_S = \\alpha`, :math:`L_S = d + m - 1 + \\beta`) and :math:`C_i` the
    support counts,

    .. math::

        \\hat q^* = \\frac{S/N - \\alpha_S}{L_S}, \\qquad
        \\hat p_i = \\frac{C_i/N - \\hat q^*}{\\alpha + (\\beta - 1)\\hat q^*},

    a ratio estimator (bias :math:`O(1/N)`) that needs no knowledge of the level shares. Its
    delta-method variance depends on the spread :math:`\\mathrm{Var}_\\rho(b)` of the users'
    levels, which the counts do not identify: the reported variance takes the midpoint of its
    possible range and ``info["variance_bounds"]`` holds both ends. Budget hiding is not formal:
    the appended bits reveal the level statistically.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    d : int or Domain
        The item domain.
    extra_bits : int, optional
        Number ``m >= 1`` of appended zero bits; default ``d``.
    oracle : {"rappor", "oue"}
        Bit perturbation (PLDP-FEBSF's experiments use basic RAPPOR for every method).
    calibration : {"extra", "pooled"}
        Which bits estimate :math:`q^*`.
    """

    methods: ClassVar[tuple[str, ...]] = (*STANDARD_METHODS, "robust")

    def __init__(
        self,
        levels: Any,
        d: int | Domain,
        extra_bits: int | None = None,
        oracle: Literal["rappor", "oue"] = "rappor",
        calibration: Literal["extra", "pooled"] = "extra",
    ) -> None:
        super().__init__(levels, d)
        self.oracle = check_oracle(oracle, ("rappor", "oue"))
        if calibration not in ("extra", "pooled"):
            raise ParameterError(f"calibration must be 'extra' or 'pooled', got {calibration!r}")
        self.calibration = calibration
        self.extra_bits = self.d if extra_bits is None else check_int(extra_bits, "extra_bits", 1)
        width = self.d + self.extra_bits
        self.mechanisms = tuple(make_oracle(self.oracle, e, Domain.range(width)) for e in self.levels)
        self.alpha, self.beta = UNARY_AFFINE[self.oracle]
        a = np.array([m.support[0][0] for m in self.mechanisms])
        b = np.array([m.support[1][0] for m in self.mechanisms])
        if not np.array_equal(a, self.alpha + self.beta * b):  # pragma: no cover - exact on any coin grid
            raise AssertionError("the bit probabilities are not affine in b")
        self.b_levels = b
        length = width - 1  # L = d + m - 1
        if calibration == "extra":  # S = E: E[S/N | tau] = m b_tau
            self._gamma, self._n_b, self._alpha_s, self._length_s = (
                0.0,
                float(self.extra_bits),
                0.0,
                float(self.extra_bits),
            )
        else:  # S = T: E[S/N | tau] = alpha + (L + beta) b_tau
            self._gamma, self._n_b, self._alpha_s, self._length_s = 1.0, float(length), self.alpha, length + self.beta

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, labels, levels, oracle, appended bits and calibration."""
        return {
            **self._base_params(),
            "oracle": self.oracle,
            "extra_bits": self.extra_bits,
            "calibration": self.calibration,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        levels, dom = cls._params_levels(params)
        return cls(levels, dom, int(params["extra_bits"]), params["oracle"], params["calibration"])

    def __repr__(self) -> str:
        return (
            f"PPDA(levels={self.levels.tolist()}, d={self.d}, extra_bits={self.extra_bits}, "
            f"oracle={self.oracle!r}, calibration={self.calibration!r})"
        )

    @property
    def nbytes_per_report(self) -> int:
        """Bytes per bit-packed report, ``ceil((d + m) / 8)``."""
        return (self.d + self.extra_bits + 7) // 8

    def simulate(self, cells: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation: per level, binomial counts of the ``d + m`` bits."""
        c = self._check_cells(cells)
        pad = np.zeros(self.extra_bits, dtype=np.int64)
        return self._pooled_tally(
            [mech.simulate(np.concatenate([row, pad]), rng) for mech, row in zip(self.mechanisms, c, strict=True)]
        )

    def _variance(self, f: np.ndarray, q: float, n: int, spread: float) -> np.ndarray:
        """Delta-method variance (class docstring) at mixture mean ``q`` and level spread ``Var(b)``."""
        alpha, beta = self.alpha, self.beta
        gamma, n_b = self._gamma, self._n_b
        a, b = alpha + beta * q, q
        gap = a - b
        fc = np.clip(f, 0.0, 1.0)
        m = b + gap * fc
        lead = 1.0 + (beta - 1.0) * fc
        kappa = lead / self._length_s
        homogeneous = (
            m * (1.0 - m)
            - 2.0 * gamma * kappa * (fc * a * (1.0 - a) + (1.0 - fc) * b * (1.0 - b))
            + kappa**2 * (gamma * a * (1.0 - a) + n_b * b * (1.0 - b))
        )
        coef = lead**2 - 2.0 * gamma * kappa * (1.0 - fc + beta**2 * fc) + kappa**2 * (n_b + gamma * beta**2)
        return np.maximum(homogeneous - coef * spread, 0.0) / (n * gap**2)

    def spread_range(self, q: float) -> tuple[float, float]:
        """Range of :math:`\\mathrm{Var}_\\rho(b)` over shares with mixture mean ``q``.

        ``(0, (b_max - q)(q - b_min))``: the largest spread puts all users on the two extreme levels.
        """
        lo, hi = float(self.b_levels.min()), float(self.b_levels.max())
        return 0.0, max((hi - q) * (q - lo), 0.0)

    def expected_variance(self, p: Any, rho: Any, n: int) -> np.ndarray:
        """Delta-method variance of the ``"unbiased"`` estimate for true ``p`` and level shares ``rho``."""
        p = as_frequencies(p, self.d)
        rho = as_frequencies(rho, self.t, "rho")
        q = float(rho @ self.b_levels)
        spread = float(rho @ self.b_levels**2) - q**2
        return self._variance(p, q, check_int(n, "n", 1), max(spread, 0.0))

    def estimate(self, tally: Tally, method: str = "unbiased", *, alpha: float = DEFAULT_ALPHA) -> Estimate:
        """Estimate the item distribution (class docstring).

        * ``"unbiased"``: :math:`\\hat p` (approximately unbiased; entries may be
          negative; they sum to one only approximately).
        * ``"norm_sub"``: its projection onto the simplex.
        * ``"mle"``: maximum of the count-based likelihood (independent binomial bits, as
          :func:`pldp.estimation.mle.mle_unary`) over ``p`` and :math:`q^* \\in [\\min_\\tau b_\\tau,
          \\max_\\tau b_\\tau]`, profiling ``q`` with a bounded scalar search (it uses every bit,
          whatever the ``calibration``).

        * ``"robust"``: the calibration is where a fake can pretend to a level (all calibration
          bits set: :math:`\\hat q^*` up, the gap down, estimates amplified without bound, then
          an error). The reports whose number of ones is unlikely at every level (below
          ``alpha``, default 1e-3; :mod:`pldp.estimation.detect`) are dropped, and
          :math:`\\hat q^*` is clamped to :math:`[\\min_\\tau b_\\tau, \\max_\\tau b_\\tau]`, what honest
          users can produce, so the gap stays at least the smallest level's,
          :math:`\\delta_{\\min}`. **Bound:** a share :math:`\\beta` of fakes moves each estimate in
          [0, 1] by at most :math:`2\\beta/\\delta_{\\min}` (the support share by
          :math:`\\beta`, the clamped calibration by at most :math:`\\beta`, each amplified by at
          most :math:`1/\\delta_{\\min}`), where ``"unbiased"`` has no bound. The honest reports
          also dropped (under :math:`2\\alpha` of each level's) are not corrected for: they shift
          each kept bit rate by at most :math:`2\\alpha/(1-2\\alpha)`. Cost without attack: the
          same as ``"unbiased"`` unless the clamp binds (``info["clamped"]``).

        The variance is the delta-method variance (``docs/protocols.md``) at the estimate, with
        the midpoint of the possible level spread. ``info`` holds ``q_star`` and ``p_star``.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        if tally.kind != "unary" or tally.d != self.d + self.extra_bits:
            raise EstimationError(f"a {tally.kind} tally over {tally.d} bits does not fit {self!r}")
        n, d = tally.n, self.d
        counts = tally.counts.astype(float)
        extra: dict[str, Any] = {}
        if method == "robust" and tally.ones is not None:
            region = flag_region(self.ones_laws, alpha)
            dropped = sum((v for s, v in (tally.tails or {}).items() if region[s]), np.zeros(counts.size))
            counts = counts - dropped
            extra = describe(tally.ones, region, self.tail_region, alpha)
            n = n - extra["flagged"]
            if n <= 0:
                raise EstimationError("every report is flagged: nothing is left to estimate from")
        c = counts[:d]
        alpha, beta = self.alpha, self.beta  # the bits' affine law from here on (the detection level is used)
        calib = counts[d:].sum() if self.calibration == "extra" else counts.sum()
        q = (calib / n - self._alpha_s) / self._length_s
        if method == "robust":
            lo, hi = float(self.b_levels.min()), float(self.b_levels.max())
            extra["clamped"] = not lo <= q <= hi
            q = min(max(q, lo), hi)
        gap = alpha + (beta - 1.0) * q
        if not gap > 0:
            raise EstimationError(f"the estimated mixture gives p* - q* = {gap:.3g} <= 0 (too few reports)")
        freq = (c / n - q) / gap
        iterations = 0
        if method == "norm_sub":
            freq, iterations = norm_sub(freq)
        elif method == "mle":
            freq, q, iterations = self._mle(c, float(counts[d:].sum()), n)
        lo, hi = self.spread_range(q)
        var = self._variance(freq, q, n, 0.5 * (lo + hi))
        ends = np.stack([self._variance(freq, q, n, lo), self._variance(freq, q, n, hi)])
        info = {
            **extra,
            "protocol": "PPDA",
            "q_star": q,
            "p_star": alpha + beta * q,
            "extra_bits": self.extra_bits,
            "calibration": self.calibration,
            "variance_bounds": (ends.min(axis=0), ends.max(axis=0)),
        }
        on_simplex = ESTIMATION_METHODS[method].on_simplex
        return Estimate(
            np.asarray(freq, dtype=float), var, tally.n, method, self.domain, iterations, True, info, on_simplex
        )

    def _mle(self, c: np.ndarray, extra: float, n: int) -> tuple[np.ndarray, float, int]:
        """Profile likelihood over ``q``; the inner maximum over ``p`` by :func:`mle_unary`."""
        d, m = self.d, self.extra_bits
        steps = 0

        def fit(q: float) -> tuple[np.ndarray, float]:
            nonlocal steps
            a = np.full(d, self.alpha + self.beta * q)
            b = np.full(d, q)
            p, k = mle_unary(c, n, a, b)
            steps += k
            ll = log_likelihood_unary(c, n, a, b, p) + extra * math.log(q) + (m * n - extra) * math.log1p(-q)
            return p, ll

        lo, hi = float(self.b_levels.min()), float(self.b_levels.max())
        if hi - lo <= 1e-15:
            q = lo
        else:
            from scipy.optimize import (
                minimize_scalar,  # scipy is imported where it is used: `import pldp` and the clients load without it
            )

            res = minimize_scalar(lambda z: -fit(z)[1], bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
            q = float(res.x)
        p, _ = fit(q)
        return p, q, steps

"""Apple's count-mean sketches: CMS and HCMS (Apple Differential Privacy Team, "Learning with Privacy
at Scale", Apple Machine Learning Journal, 2017).

A user draws one of ``k`` public hash functions ``h_j`` into ``[0, m)`` and reports ``j`` with either
the ``m`` bits of the one-hot vector of ``h_j(x)``, each flipped w.p. ``1 / (e^{eps/2} + 1)`` (CMS),
or one uniform column ``l`` of the Hadamard matrix of order ``m`` and the entry ``H[h_j(x), l]``,
negated w.p. ``1 / (e^eps + 1)`` (HCMS); :mod:`pldp.channel.sketch` gives the exact programs and
their claims.

The server's sketch. Apple's server (A_server-CMS, A_server-HCMS) accumulates the ``k x m`` matrix
``M`` of debiased reports and estimates the count of ``x`` as
``(m / (m - 1)) (sum_j M[j, h_j(x)] / k - n / m)``. ``M[j, r]`` is an affine function of
``A[j, r]``, the reports of row ``j`` that *support* every item hashing to ``r`` in that row (CMS:
bit ``r`` set; HCMS: the bit equals ``H[r, l]``, so ``A[j, .] = (n_j + W a_j) / 2`` with ``W a_j``
the Walsh-Hadamard transform of row ``j``'s signed bits), and Apple's estimate is exactly every pure
oracle's estimate from the support counts ``C_x = sum_j A[j, h_j(x)]``:

.. math::

    \\hat f_x = \\frac{C_x / n - q^*}{p^* - q^*}, \\qquad
    q^* = \\frac{p^*}{m} + \\Big(1 - \\frac1m\\Big) q_0 ,

with ``p*`` the probability that a holder's report supports her item (``1 - flip``, ``keep``) and
``q_0`` that a report of a row where the two items do not collide supports the other (``flip``,
``1/2``). The tally is therefore the support counts (a :class:`~pldp.tally.Tally` of ``d`` counts,
merged by addition, like OLH's), computed from the sketch; the sketch itself is not kept.

Expectation and variance (over the reports and a hash family drawn at random, as in Pan 2024,
"Count-mean sketch as an optimized framework for frequency estimation", which adds the
hash-collision term Apple's analysis leaves out). Given the family, ``E[hat n_x] = n_x +
sum_{x' != x} n_{x'} (kappa_{x x'} - 1/m) / (1 - 1/m)`` with ``kappa`` the fraction of rows where
``x`` and ``x'`` collide; over a random family ``kappa`` has mean ``1/m`` (unbiased) and variance
``(1/m)(1 - 1/m)/k``, independently for each ``x'``, so two holders of the same ``x' != x`` are
correlated and

.. math::

    \\mathrm{Var}(\\hat n_x) = \\frac{n_x p^*(1 - p^*) + (n - n_x) q^*(1 - q^*)}{(p^* - q^*)^2}
        + \\sum_{x' \\ne x} \\frac{n_{x'} (n_{x'} - 1)}{k (m - 1)} ,

the second term growing with ``n^2 / (k m)``. :meth:`CMS.estimate` (and HCMS's) adds that term, at the estimated
frequencies (clipped at 0), to the variance of every method (:func:`collision_variance`).

For one fixed family (Apple's, and this one: the seeds ``0 .. k-1``, public) the estimate is biased
by the collisions above; :meth:`CMS.expected_counts` gives that bias exactly. Pan removes it by
drawing the hash functions per user (a seed in each report, as OLH does); these oracles keep
Apple's fixed rows, so the variance they state is the mean squared error over families.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import as_counts, check_epsilon, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.columns import refuse_out_of_range
from pldp.channel.exact import largest_within, log_ratio, ratio_within
from pldp.channel.sampling import GRID
from pldp.channel.sketch import SKETCH_D, SKETCH_K, SKETCH_M, CMSNode, HCMSNode, hadamard_entry, sketch_hashes
from pldp.domain import Domain
from pldp.errors import EstimationError, ParameterError, ReportError
from pldp.estimation.pure import estimate_counts
from pldp.estimation.result import Estimate
from pldp.fingerprint import canonical_labels
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.hadamard import hr_keep, walsh_hadamard
from pldp.mechanisms.support import run_program
from pldp.params import domain_of
from pldp.privacy import PairPrivacyReport
from pldp.registry import register
from pldp.tally import Tally

__all__ = ["CMS", "HCMS", "cms_flip", "collision_variance", "support_counts"]

#: The tally of sketch reports: per-item support counts, as a unary mechanism's.
_TALLY_KIND = "unary"
#: Table cells per block (hash values, unpacked bits, multinomial cells): a few MB of temporaries.
_BLOCK_CELLS = 1 << 21


def cms_flip(epsilon: float) -> int:
    """The smallest ``flip`` with ``((2**32 - flip) / flip)^2 <= e^eps``, decided exactly: ``2**32``
    less the largest keep in ``[2**31, 2**32)`` that meets it (:func:`~pldp.channel.exact.largest_within`;
    at ``2**31`` the ratio is 1, so one does)."""
    guess = GRID - math.ceil(GRID / (1.0 + math.exp(epsilon / 2.0)))
    keep = largest_within(guess, GRID // 2, GRID - 1, lambda t: ratio_within(t * t, (GRID - t) ** 2, epsilon))
    assert keep is not None  # the ratio is 1 at 2**31
    return GRID - keep


def support_counts(table: np.ndarray, d: int) -> np.ndarray:
    """``C_x = sum_j table[j, h_j(x)]`` for every item ``x < d``: ``k d`` hash evaluations, in blocks."""
    k, m = table.shape
    rows = np.arange(k, dtype=np.int64)[:, None]
    out = np.zeros(d, dtype=np.int64)
    block = max(1, _BLOCK_CELLS // k)
    for start in range(0, d, block):
        items = np.arange(start, min(d, start + block), dtype=np.int64)
        out[items] = table[rows, sketch_hashes(items[None, :], rows, m)].sum(axis=0)
    return out


def collision_variance(freq: np.ndarray, n: int, k: int, m: int) -> np.ndarray:
    """The hash-collision term of each frequency's variance, ``sum_{x' != x} f_{x'} (f_{x'} - 1/n) / (k (m - 1))``,
    at the frequencies ``freq`` clipped to ``[0, 1]`` (module docstring)."""
    f = np.clip(np.asarray(freq, dtype=float), 0.0, 1.0)
    each = f * np.maximum(f - 1.0 / n, 0.0)
    return np.asarray((each.sum() - each) / (k * (m - 1)))


class _Sketch(Mechanism):
    """What CMS and HCMS share: ``k`` hash functions into ``[0, m)``, support counts from the sketch."""

    family = "sketch"
    _node_type: type[CMSNode] | type[HCMSNode]

    def __init__(self, epsilon: float, d: int | Domain, k: int, m: int) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        if len(dom) > SKETCH_D[1]:
            raise ParameterError(f"d must be at most {SKETCH_D[1]}, got {len(dom)}")
        self._budgets = self._check_budgets(ItemBudgets.uniform(eps, dom), all_sensitive=True)
        self.epsilon = eps
        kind = self._node_type.kind
        for name, value, (lo, hi) in (("k", k, SKETCH_K), ("m", m, SKETCH_M[kind])):
            v = check_int(value, name, lo)
            if v > hi or v & (v - 1):
                raise ParameterError(f"{name} must be a power of two in [{lo}, {hi}], got {v}")
        self.k, self.m = int(k), int(m)
        self._threshold = self._grid_threshold(eps)

    def _grid_threshold(self, epsilon: float) -> int:
        raise NotImplementedError

    # ------------------------------------------------------------------ parameters
    def params(self) -> dict[str, Any]:
        """Canonical parameters: the class, the labels, the budget, ``k``, ``m``, the hash family and
        the grid threshold the clients run."""
        return {
            "mechanism": self._name,
            "family": self.family,
            "labels": canonical_labels(self.domain.labels),
            "epsilon": self.epsilon,
            "k": self.k,
            "m": self.m,
            "hash": self._node.family,
            self._node_type._threshold: self._threshold,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The oracle of :meth:`params`."""
        return cls(float(params["epsilon"]), domain_of(params["labels"]), int(params["k"]), int(params["m"]))

    def sampler(self) -> Any:
        """The sampler node: ``k``, ``m``, the hash family and the threshold on the grid."""
        return self._node

    @cached_property
    def _node(self) -> Any:
        return self._node_type(self.d, self.k, self.m, "xxh32", self.epsilon, self._threshold)

    def __repr__(self) -> str:
        return f"{self._name}(epsilon={self.epsilon:g}, d={self.d}, k={self.k}, m={self.m})"

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        p, q = self._node.support
        return np.full(self.d, p), np.full(self.d, q)

    def channel(self) -> np.ndarray:
        """The ``d x d`` support matrix over a random hash family (``p*`` on the diagonal, ``q*``
        elsewhere); for the family itself a pair's entry depends on its collisions (module docstring)."""
        p, q = self._node.support
        return np.full((self.d, self.d), q) + np.eye(self.d) * (p - q)

    def _words(self, x: Any, rng: np.random.Generator, per: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Run the node's program on ``x``: ``per`` words a report; the payload columns."""
        return run_program(self._node, x, self.d, rng, per)

    def _check_index(self, values: np.ndarray, name: str, high: int) -> None:
        refuse_out_of_range(values, high, name)

    # ---------------------------------------------------------------------- server
    def _tally(self, n: int, counts: np.ndarray) -> Tally:
        return Tally(n, counts, _TALLY_KIND, self.fingerprint)

    def table(self, reports: Any) -> np.ndarray:
        """The ``k x m`` table ``A``: ``A[j, r]`` reports of row ``j`` support the items hashing to ``r``."""
        raise NotImplementedError

    def tally(self, reports: Any) -> Tally:
        """The support count of every item, from the sketch (:meth:`table`, :func:`support_counts`)."""
        rep = np.asarray(reports)
        return self._tally(int(rep.shape[0]) if rep.ndim else 0, support_counts(self.table(reports), self.d))

    def _rows_of(self, t: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Each item's users split over the ``k`` rows (a multinomial each), and their hash values:
        ``(t_xj, h)``, both ``(k, d)``."""
        per_row = rng.multinomial(t, np.full(self.k, 1.0 / self.k)).T
        rows = np.arange(self.k, dtype=np.int64)[:, None]
        return per_row, sketch_hashes(np.arange(self.d, dtype=np.int64)[None, :], rows, self.m)

    def collided(self, items: Any) -> np.ndarray:
        """``kappa[i, x]``: the fraction of the ``k`` rows where ``items[i]`` and item ``x`` collide
        (``1`` at ``x = items[i]``), for this hash family; ``len(items) x d``."""
        rows = np.arange(self.k, dtype=np.int64)[:, None]
        own = sketch_hashes(np.asarray(items, dtype=np.int64)[None, :], rows, self.m)  # (k, r)
        every = sketch_hashes(np.arange(self.d, dtype=np.int64)[None, :], rows, self.m)  # (k, d)
        return np.asarray((own[:, :, None] == every[:, None, :]).mean(axis=0))

    def expected_counts(self, true_counts: Any, items: Any) -> np.ndarray:
        """The exact expectation of the unbiased estimate of ``items``' counts for this hash family:
        ``sum_x' n_x' (kappa_{x x'} - 1/m) / (1 - 1/m)`` (module docstring), which is ``n_x`` on
        average over families."""
        t = as_counts(true_counts, "true_counts", self.d).astype(float)
        return np.asarray((self.collided(items) - 1.0 / self.m) @ t / (1.0 - 1.0 / self.m))

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """Estimate the item distribution from a tally of support counts.

        ``method`` is ``"unbiased"`` (Apple's estimate), ``"norm_sub"``, ``"mle"`` (the likelihood of
        the counts' binomial marginals, as for unary reports) or ``"recover"``; see
        :func:`pldp.estimation.pure.estimate_counts`. Every method's variance adds the hash-collision
        term (:func:`collision_variance`) at its own estimate.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        if tally.kind != _TALLY_KIND or tally.d != self.d:
            raise EstimationError(f"a {tally.kind} tally over {tally.d} items does not fit {self!r}")
        est = estimate_counts(_TALLY_KIND, self.support, self.domain, tally.n, tally.counts, method, **options)
        extra = collision_variance(est.frequencies, tally.n, self.k, self.m)
        return replace(est, variance=est.variance + extra)

    # --------------------------------------------------------------------- privacy
    def privacy(self) -> PairPrivacyReport:
        """Exact check of epsilon-LDP: every pair of items, the node's largest ratio
        (:mod:`pldp.channel.sketch`), one group of items."""
        realised = log_ratio(*self._node.ratio())
        return PairPrivacyReport(
            "LDP",
            np.array([self.epsilon]),
            [np.arange(self.d)],
            np.array([[self.epsilon]]),
            np.array([[realised]]),
        )


@register
class CMS(_Sketch):
    """Apple's count-mean sketch (CMS), epsilon-LDP, for large domains.

    A report is a row below ``k`` and ``m`` bits, whatever ``d`` is (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.
    k : int, optional
        Number of hash functions, a power of two in ``[1, 2**16]`` (default 16).
    m : int, optional
        Width of the sketch, a power of two in ``[2, 2**16]`` (default 128): a report carries ``m``
        bits; the collision term of the variance falls as ``1 / (k m)``.

    Examples
    --------
    >>> import numpy as np
    >>> cms = CMS(2.0, 1000)
    >>> cms.k, cms.m, round(float(cms.support[0][0]), 4)
    (16, 128, 0.7311)
    >>> rep = cms.perturb(np.zeros(20_000, dtype=int), np.random.default_rng(1))
    >>> est = cms.estimate(cms.tally(rep))
    >>> bool(abs(est.frequencies[0] - 1) < 4 * est.std_error[0])
    True
    """

    _name = "CMS"
    _node_type = CMSNode

    def __init__(self, epsilon: float, d: int | Domain, k: int = 16, m: int = 128) -> None:
        super().__init__(epsilon, d, k, m)

    def _grid_threshold(self, epsilon: float) -> int:
        flip = cms_flip(epsilon)
        if 2 * flip >= GRID:
            raise ParameterError(f"epsilon={epsilon:g} is too small for the 2**32 grid")
        return flip

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices, one report per user (``1 + m`` words each; the node's program).

        Returns
        -------
        ndarray of uint8, shape (n, 4 + ceil(m / 8))
            Each row the report's fixed-width bytes: the row ``j`` as a little-endian int32, then the
            ``m`` bits packed (``numpy.packbits``).
        """
        _, out = self._words(x, rng, 1 + self.m)
        return self.reports_from_columns(out)[0]

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        rep = self._check_reports(reports)
        row, bits = self._node.columns()
        return {"row": row.from_bytes(rep[:, :4]), "bits": bits.from_bytes(rep[:, 4:])}

    def reports_from_columns(self, columns: Any) -> tuple[Any, ...]:
        row, bits = self._node.columns()
        rows, packed = np.asarray(columns["row"]), np.asarray(columns["bits"], dtype=np.uint8)
        return (np.concatenate([row.to_bytes(rows), bits.to_bytes(packed)], axis=1),)

    def _check_reports(self, reports: Any) -> np.ndarray:
        rep = np.asarray(reports)
        row, bits = self._node.columns()
        if rep.ndim != 2 or rep.dtype != np.uint8 or rep.shape[1] != row.width + bits.width:
            raise ReportError(
                f"CMS reports are an (n, {row.width + bits.width}) uint8 array (row, packed bits), got "
                f"{rep.dtype} of shape {rep.shape}"
            )
        self._check_index(row.from_bytes(rep[:, :4]), "row", self.k)
        bits.check(rep[:, 4:], self.m)
        return rep

    def table(self, reports: Any) -> np.ndarray:
        """``B[j, l]``: the reports of row ``j`` with bit ``l`` set (in blocks of reports)."""
        cols = self.report_columns(reports)
        rows, packed = cols["row"], cols["bits"]
        out = np.zeros((self.k, self.m), dtype=np.int64)
        block = max(1, _BLOCK_CELLS // self.m)
        for start in range(0, rows.size, block):
            bits = np.unpackbits(packed[start : start + block], axis=1)[:, : self.m]
            np.add.at(out, rows[start : start + block], bits.astype(np.int64))
        return out

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Count-level simulation with the sketch's exact joint law: each item's users split over the
        rows (a multinomial), ``u[j, l]`` of row ``j`` hash to ``l``; then
        ``B[j, l] ~ Bin(u[j, l], 1 - flip) + Bin(n_j - u[j, l], flip)``, independently. ``O(k (d + m))``."""
        t = as_counts(true_counts, "true_counts", self.d)
        n = int(t.sum())
        per_row, h = self._rows_of(t, rng)
        u = np.stack([np.bincount(h[j], weights=per_row[j], minlength=self.m) for j in range(self.k)])
        u = u.astype(np.int64)
        f = self._threshold / GRID
        b = rng.binomial(u, 1.0 - f) + rng.binomial(per_row.sum(axis=1)[:, None] - u, f)
        return self._drawn_tally(n, support_counts(b, self.d))


@register
class HCMS(_Sketch):
    """Apple's Hadamard count-mean sketch (HCMS), epsilon-LDP, for large domains.

    A report is a row below ``k``, a column below ``m`` and one bit (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.
    k : int, optional
        Number of hash functions, a power of two in ``[1, 2**16]`` (default 16).
    m : int, optional
        Width of the sketch, a power of two in ``[2, 2**24]`` (default 128).

    Examples
    --------
    >>> import numpy as np
    >>> hcms = HCMS(2.0, 1000)
    >>> round(float(hcms.support[0][0]), 4)
    0.8808
    >>> rep = hcms.perturb(np.zeros(20_000, dtype=int), np.random.default_rng(1))
    >>> est = hcms.estimate(hcms.tally(rep))
    >>> bool(abs(est.frequencies[0] - 1) < 4 * est.std_error[0])
    True
    """

    _name = "HCMS"
    _node_type = HCMSNode

    def __init__(self, epsilon: float, d: int | Domain, k: int = 16, m: int = 128) -> None:
        super().__init__(epsilon, d, k, m)

    def _grid_threshold(self, epsilon: float) -> int:
        keep = hr_keep(epsilon)
        if 2 * keep <= GRID:
            raise ParameterError(f"epsilon={epsilon:g} is too small for the 2**32 grid")
        return keep

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices, one report per user (three words each; the node's program).

        Returns
        -------
        ndarray of int64, shape (n, 3)
            Each row the hash function ``j < k``, the column ``l < m`` and the bit (1 for ``+1``).
        """
        _, out = self._words(x, rng, 3)
        return self.reports_from_columns(out)[0]

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        rep = self._check_reports(reports)
        return {"row": rep[:, 0].copy(), "index": rep[:, 1].copy(), "bit": rep[:, 2].copy()}

    def reports_from_columns(self, columns: Any) -> tuple[Any, ...]:
        return (np.stack([np.asarray(columns[c]) for c in ("row", "index", "bit")], axis=1).astype(np.int64),)

    def _check_reports(self, reports: Any) -> np.ndarray:
        rep = np.asarray(reports)
        if rep.ndim != 2 or rep.shape[1] != 3 or rep.dtype.kind not in "iu":
            raise ReportError(f"HCMS reports are an (n, 3) integer array of (row, index, bit), got shape {rep.shape}")
        rep = rep.astype(np.int64)
        for c, (name, high) in enumerate((("row", self.k), ("index", self.m), ("bit", 2))):
            self._check_index(rep[:, c], name, high)
        return rep

    def table(self, reports: Any) -> np.ndarray:
        """``A[j, r] = (n_j + (W a_j)_r) / 2``: the reports of row ``j`` whose bit equals ``H[r, l]``,
        from the signed bits ``a_j`` of each row by the fast Walsh-Hadamard transform ``W``."""
        rep = self._check_reports(reports)
        cells = rep[:, 0] * self.m + rep[:, 1]
        signed = np.bincount(cells, weights=2 * rep[:, 2] - 1, minlength=self.k * self.m).astype(np.int64)
        return self._agreements(signed.reshape(self.k, self.m), np.bincount(rep[:, 0], minlength=self.k))

    def _agreements(self, signed: np.ndarray, per_row: np.ndarray) -> np.ndarray:
        return (per_row[:, None] + np.stack([walsh_hadamard(a) for a in signed])) // 2

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Count-level simulation with the sketch's exact joint law: each item's users split over the
        rows, the ``u`` users of row ``j`` hashing to ``r`` spread over the ``m`` columns, kept or
        negated, as one multinomial over ``2 m`` cells (drawn for many ``(j, r)`` at once); their
        signed bits ``+-H[r, l]`` summed per row, then transformed as :meth:`table`. ``O(k min(d, m) m)``."""
        t = as_counts(true_counts, "true_counts", self.d)
        n = int(t.sum())
        per_row, h = self._rows_of(t, rng)
        p = self._threshold / GRID
        cells = np.concatenate([np.full(self.m, p / self.m), np.full(self.m, (1 - p) / self.m)])
        cols = np.arange(self.m, dtype=np.int64)
        signed = np.zeros((self.k, self.m), dtype=np.int64)
        for j in range(self.k):
            u = np.bincount(h[j], weights=per_row[j], minlength=self.m).astype(np.int64)
            occupied = np.flatnonzero(u)
            block = max(1, _BLOCK_CELLS // (2 * self.m))
            for start in range(0, occupied.size, block):
                r = occupied[start : start + block]
                draw = rng.multinomial(u[r], cells)
                net = draw[:, : self.m] - draw[:, self.m :]
                signed[j] += (net * hadamard_entry(r[:, None], cols[None, :])).sum(axis=0)
        return self._drawn_tally(n, support_counts(self._agreements(signed, per_row.sum(axis=1)), self.d))

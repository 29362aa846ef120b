r"""What mechanisms with one kind of report share on the server: :class:`DirectReports`, :class:`UnaryReports`.

A *direct* report is one item; its channel is :math:`Q = \delta I + 1 q^T`
(:mod:`pldp.mechanisms.direct`): KRR, URR, IPRR, and the direct memoized chains (L-GRR, L-IPRR),
whose one-report channel has this form too. A *unary* report is one bit per item, independent
given the user's item, bit ``k`` set w.p. :math:`p^*_k` for item ``k`` and :math:`q^*_k` for
another (RAPPOR, OUE, IDUE, and the unary chains L-OUE, L-OSUE, L-SUE, L-SOUE, L-IDUE), packed
with ``numpy.packbits`` along each row (big-endian bit order): ``ceil(d / 8)`` bytes per report,
the unused trailing bits 0.

Both bases derive everything the server does from the channel of one report: the tally (with, for
unary reports, the statistics detection needs), the count-level simulation and the estimators.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from pldp._validation import as_counts, as_indices, check_index_range
from pldp.errors import TallyError
from pldp.estimation.detect import DEFAULT_ALPHA, UnaryLaws, detect_unary, tally_region
from pldp.estimation.pure import COUNT_METHODS
from pldp.estimation.result import Estimate
from pldp.mechanisms.base import Mechanism
from pldp.tally import Tally, unary_report_stats

__all__ = ["DirectReports", "UnaryReports", "bit_counts", "check_packed", "count_items", "pack_bits", "unpack_bits"]


def count_items(reports: Any, d: int) -> tuple[int, np.ndarray]:
    """``(n, counts)``: the number of direct-encoding reports and of reports of each of the ``d`` items.

    ``bincount`` itself rejects negative entries and sizes its output by the largest one, so the
    range check costs nothing extra on valid reports; any report outside ``[0, d)`` raises
    :class:`~pldp.errors.DomainError` naming it; reports that are not a 1-D array (one per user)
    raise :class:`~pldp.errors.TallyError`.
    """
    arr = as_indices(reports, "reports", TallyError)
    try:
        counts = np.bincount(arr, minlength=d)
    except (ValueError, TypeError, MemoryError):  # negative, a dtype it does not take, an absurd maximum
        check_index_range(arr, d, "reports")
        counts = np.bincount(arr.astype(np.intp), minlength=d)
    if counts.size > d:
        check_index_range(arr, d, "reports")  # raises
    return arr.size, counts


#: Row ``v`` holds the 8 bits of the byte ``v``, most significant first.
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int64)


def check_packed(reports: Any, d: int) -> np.ndarray:
    """``reports`` as a ``uint8`` array of shape ``(n, ceil(d / 8))`` with no padding bit set, or a
    :class:`~pldp.errors.TallyError` saying what is wrong."""
    rep = np.asarray(reports)
    width = (d + 7) // 8
    if rep.dtype != np.uint8 or rep.ndim != 2 or rep.shape[1] != width:
        raise TallyError(
            f"unary reports must be a uint8 array of shape (n, {width}) (bit-packed, d={d}); "
            f"got dtype {rep.dtype} and shape {rep.shape}"
        )
    pad = 8 * width - d
    if pad and rep.size and np.any(rep[:, -1] & np.uint8((1 << pad) - 1)):
        raise TallyError(f"reports set padding bits beyond item {d - 1}: not reports of this mechanism")
    return rep


def bit_counts(rep: np.ndarray, d: int) -> np.ndarray:
    """The number of reports with each of the ``d`` bits set (one ``np.bincount`` per byte column)."""
    counts = np.empty(8 * rep.shape[1], dtype=np.int64)
    for j in range(rep.shape[1]):
        counts[8 * j : 8 * j + 8] = np.bincount(rep[:, j], minlength=256) @ _BYTE_BITS
    return counts[:d]


def unpack_bits(rep: np.ndarray, d: int) -> np.ndarray:
    """Packed reports -> boolean array of shape ``(n, d)``."""
    return np.unpackbits(rep, axis=1, count=d).astype(bool)


def pack_bits(bits: Any, d: int) -> np.ndarray:
    """Boolean array of shape ``(n, d)`` -> packed reports (the inverse of :func:`unpack_bits`)."""
    arr = np.asarray(bits)
    if arr.ndim != 2 or arr.shape[1] != d:
        raise TallyError(f"bits must have shape (n, {d}), got {arr.shape}")
    return np.packbits(arr.astype(bool), axis=1)


class DirectReports(Mechanism):
    r"""A mechanism whose report is one item, with channel :math:`Q(y|x) = q_y + \delta [x = y]`:
    its support, channel, tally and count-level simulation, from ``_q`` and ``_delta`` (set by the
    subclass: exact values on its grid)."""

    family = "direct"
    support_names = ("Q(x|x)", "Q(x|x')")
    _q: np.ndarray
    _delta: float

    @property
    def q(self) -> np.ndarray:
        """Dishonest probabilities :math:`q_y = Q(y|x)` for ``x != y`` (:math:`\bar q` of IPRR)."""
        return self._q

    @property
    def delta(self) -> float:
        r"""Honesty gap :math:`\delta = Q(x|x) - Q(x|x')`; equals :math:`S_{D_S}` of IPRR."""
        return self._delta

    def _gap(self) -> float:
        return self._delta

    @property
    def diagonal(self) -> np.ndarray:
        r"""The channel's diagonal :math:`Q(y|y) = q_y + \delta`: the probability of reporting one's own item."""
        return self._q + self._delta

    @property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return self.diagonal, self._q

    def channel(self) -> np.ndarray:
        """The ``d x d`` channel, rows = inputs: ``Q[x, y] = Pr(y | x)`` (``8 d^2`` bytes)."""
        Q = np.tile(self._q, (self.d, 1))
        Q[np.diag_indices(self.d)] += self._delta
        return Q

    def tally(self, reports: Any) -> Tally:
        """Count reports per item (``np.bincount``; ``count_items``)."""
        n, counts = count_items(reports, self.d)
        return self._tally(n, counts)

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation of the tally of users with ``true_counts``.

        Honest reports of item ``x`` are ``Bin(n_x, delta)``; the remaining users report
        draws from ``q / sum(q)``, one multinomial. This has exactly the distribution of
        ``tally(perturb(x))`` for any ``x`` with these counts, at O(d) cost.
        """
        c = as_counts(true_counts, "true_counts", self.d)
        honest = rng.binomial(c, self._delta)
        n = int(c.sum())
        rest = n - int(honest.sum())
        dishonest = rng.multinomial(rest, self._q / self._q.sum())
        return self._drawn_tally(n, honest + dishonest)


class UnaryReports(Mechanism):
    """A mechanism whose reports are bit-packed unary reports, bit ``k`` set w.p. ``p*_k`` for item ``k``
    and ``q*_k`` for another, independently (:attr:`support`): the tally, its report statistics and
    the ``"detect"`` estimate (UnaryEncoding; the unary memoized chains)."""

    family = "unary"
    methods = (*COUNT_METHODS, "detect")
    support_names = ("a (keep 1)", "b (raise 0)")

    @property
    def nbytes_per_report(self) -> int:
        """Bytes of one bit-packed report, ``ceil(d / 8)``."""
        return (self.d + 7) // 8

    def unpack(self, reports: Any) -> np.ndarray:
        """Bit-packed reports -> boolean array of shape ``(n, d)``."""
        return unpack_bits(self._check_reports(reports), self.d)

    def pack(self, bits: Any) -> np.ndarray:
        """Boolean array of shape ``(n, d)`` -> bit-packed reports (inverse of :meth:`unpack`)."""
        return pack_bits(bits, self.d)

    def _check_reports(self, reports: Any) -> np.ndarray:
        return check_packed(reports, self.d)

    def tally(self, reports: Any) -> Tally:
        """Count the ones of each bit (one ``np.bincount`` per byte column), with the histogram of
        ones per report and the tail counts detection needs (:meth:`report_stats`)."""
        rep = self._check_reports(reports)
        return self._tally(rep.shape[0], bit_counts(rep, self.d)).with_report_stats(*self.report_stats(rep))

    @cached_property
    def ones_laws(self) -> UnaryLaws:
        """The honest laws of a report's number of ones, per item class (:mod:`pldp.estimation.detect`)."""
        return UnaryLaws.of([(1.0, *self.support)])

    @cached_property
    def tail_region(self) -> np.ndarray:
        """Numbers of ones (``0..d``) in the tally region (:func:`~pldp.estimation.detect.tally_region`)
        for every item: the tallies keep per-bit counts of these reports."""
        return tally_region(self.ones_laws)

    def report_stats(self, rows: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """The histogram of ones of packed reports and their tail counts (:func:`pldp.tally.unary_report_stats`)."""
        return unary_report_stats(rows, self.d, self.tail_region)

    def estimate(self, tally: Tally, method: str = "unbiased", **options: Any) -> Estimate:
        """As :meth:`Mechanism.estimate`, and ``"detect"``: the reports whose number of ones honest
        users produce with probability below ``alpha`` (default 1e-3) are dropped and the channel of
        the kept reports inverted (:func:`pldp.estimation.detect.detect_unary`); ``info`` holds
        the flagged share."""
        if method != "detect":
            return super().estimate(tally, method, **options)
        tally = self._check_tally(tally)
        return detect_unary(self, tally, self.ones_laws, float(options.get("alpha", DEFAULT_ALPHA)))

    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Exact count-level simulation: :math:`C_k \\sim \\mathrm{Bin}(t_k, p^*_k) + \\mathrm{Bin}(n - t_k, q^*_k)`.

        Independent across bits, which is the exact joint law of the per-bit counts of
        ``tally(perturb(x))`` for any ``x`` with these counts. O(d) per trial.
        """
        t = as_counts(true_counts, "true_counts", self.d)
        n = int(t.sum())
        p_star, q_star = self.support
        return self._drawn_tally(n, rng.binomial(t, p_star) + rng.binomial(n - t, q_star))

"""Local hashing: OLH, and BLH as its setting ``g = 2`` (Wang, Blocki, Li, Jha, USENIX Security 2017, Sec. 4.4).

A user holding item ``x`` draws a seed ``s`` of a hash family, hashes her item to
``H_s(x)`` in ``[0, g)`` and reports ``(s, y)`` with ``y`` the g-ary randomized response to
``H_s(x)`` (:class:`~pldp.channel.HashedNode` gives the exact program and its claim). A report
*supports* every item ``v`` with ``H_s(v) = y``, so

.. math::

    p^* = \\Pr[\\text{supports } x \\mid x] = \\frac{e^\\varepsilon}{e^\\varepsilon + g - 1}, \\qquad
    q^* = \\Pr[\\text{supports } v \\mid x \\ne v] = \\frac1g ,

and the support counts are estimated as every pure oracle's (:class:`~pldp.mechanisms.base.Mechanism`):
:math:`\\hat f_v = (C_v/n - q^*) / (p^* - q^*)`, with per-report variance factor

.. math::

    V = \\frac{q^*(1 - q^*)}{(p^* - q^*)^2} = \\frac{(e^\\varepsilon + g - 1)^2}{(e^\\varepsilon - 1)^2 (g - 1)},

smallest at ``g = e^eps + 1`` (OLH, :math:`V = 4 e^\\varepsilon / (e^\\varepsilon - 1)^2`, the
variance of OUE with a report of one seed and one value instead of ``d`` bits). The default ``g``
is ``round(e^eps) + 1``.

Exact sampling: ``keep + g * weight = 2**32`` with ``weight = ceil(2**32 / (e^eps + g - 1))``, so the
realised budget ``log((weight + keep) / weight)`` is at most ``epsilon``; :attr:`support` is the grid's
``p* = (weight + keep) / 2**32``.

Counts. The support counts of ``n`` reports cost ``n d`` hash evaluations at the server
(:func:`support_counts`, vectorised in cache-sized ``uint32`` blocks: about 2.5 ns per evaluation on
one core, so 10^6 reports over 10^4 items take some 25 s; ``benchmarks/hashed_rows.py``). A count
is ``Bin(n_v, p*) + Bin(n - n_v, 1/g)`` with an ideal family, and two counts are uncorrelated (a
report supports two items together with probability :math:`p^*/g` for a holder of one of them and
:math:`1/g^2` otherwise); the estimator's variance is therefore the unary one, and
:meth:`OLH.simulate` draws each count from that law independently (exact marginals and
covariances; the joint law differs from the real counts' in higher moments, which no estimate of
pldp reads).

The Toeplitz family (``OLH(eps, d, hash="toeplitz")``; :mod:`pldp.channel.toeplitz`). An affine map
over GF(2) of the item's bits, with ``g`` a power of two: two items collide with probability exactly
``1/g``, so the estimates are exactly unbiased with exactly the variance above, and the server
counts the supports of ``n`` reports in ``O(n g + d log d)`` (:func:`~pldp.mechanisms.toeplitz.toeplitz_support`:
0.03 s for 10^6 reports at ``d = 10^4``, ``epsilon = 1``, against 22 s for XXH32's ``n d``). It is
pairwise independent, not three-wise: each count's law is exact, but the covariance of two counts
(a report of ``x`` supporting both ``v`` and ``w``) is the family's own; no estimate of pldp reads it,
and :meth:`OLH.simulate` draws the marginals.

A small family (FLH; Wang et al. 2017, Sec. 4.4; Cormode, Maddock, Maple, VLDB 2021). With
``seeds=S`` a report's seed is one of ``S`` (a power of two), and the server counts the reports per
``(seed, value)``, then hashes the ``d`` items under each seed drawn: ``O(n + S d)``
(:meth:`OLH.flh`, default ``S =`` :data:`FLH_SEEDS`). The claim is the same; what changes is the
collision rate ``c_xv`` of two items over the family, which is ``1/g`` only on average: a pair's
rate departs from it by about ``sqrt((1/g)(1 - 1/g)/S)`` (the seeds behave as independent draws;
``tests/test_olh.py`` measures it over all seeds for random pairs). A report of ``x`` supports
``v`` with probability ``q_xv = 1/g + (c_xv - 1/g) keep / 2**32``, so the unbiased estimate's mean
is exactly

.. math::

    \\mathbb E \\hat f_v = f_v + \\frac{g}{g - 1} \\sum_{x \\ne v} f_x \\left(c_{xv} - \\frac1g\\right),

a bias fixed by the family whose spread over items is about
:math:`\\sqrt{\\sum_{x \\ne v} f_x^2 / ((g - 1) S)}` (half the data on one item, ``g = 4``:
0.0023 at ``S = 2**14``, 0.0045 at ``2**12``, 0.0090 at ``2**10``, beside the sampling standard error
0.0019 of OLH at ``epsilon = 1``, ``n = 10^6``). The family's error stays below the sampling error
when ``S >= n sum_x f_x^2 / ((g - 1) V)``; the server's time grows as ``S d`` (some 4 ns per hash
with the table's gather: 0.6-0.7 s at ``S = 2**14``, ``d = 10^4``, ``n = 10^6``, against 22-27 s for
OLH's ``n d``; ``benchmarks/results.md``). The table is a sufficient statistic that merges by
addition (:class:`SeedValueCounts`, :meth:`OLH.count_reports`): parts of the reports (report files'
row groups, :mod:`pldp.aggregate`) are counted in ``O(n)`` each, their tables merged, and the
``S d`` step runs once (:meth:`OLH.tally_of`). The default ``2**14`` keeps the count under a second at
``d = 10^4`` with the bias about 1.2 standard errors for such data at ``n = 10^6`` (1.5 for
Zipf(2) data) and under half of one at ``n = 10^5``; ask for more seeds when ``n`` is large and the
data concentrated. :meth:`simulate` draws from the ideal family's law.

BLH is ``g = 2`` (:meth:`OLH.blh`), with either family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Self

import numpy as np

from pldp._validation import check_epsilon, check_int
from pldp.budgets import ItemBudgets
from pldp.channel.columns import refuse_out_of_range
from pldp.channel.exact import largest_within, ratio_within
from pldp.channel.hashed import (
    HASH_FAMILIES,
    HASHED_G,
    SEEDS,
    HashedNode,
    reduce_mod,
    seed_shift,
    xxh32_lane,
    xxh32_mix,
)
from pldp.channel.sampling import GRID
from pldp.channel.toeplitz import toeplitz_fits
from pldp.domain import Domain
from pldp.errors import ParameterError, ReportError, SpecError, TallyError
from pldp.fingerprint import canonical_labels
from pldp.mechanisms.support import SupportCountOracle, run_program
from pldp.mechanisms.toeplitz import toeplitz_support
from pldp.params import domain_of
from pldp.registry import register
from pldp.tally import Tally

__all__ = [
    "FLH_SEEDS",
    "OLH",
    "SeedValueCounts",
    "checked_reports",
    "has_table",
    "item_support",
    "olh_factor",
    "olh_g",
    "olh_grid",
    "seed_value_table",
    "support_counts",
    "table_support",
    "toeplitz_g",
]

#: FLH's default family size (:meth:`OLH.flh`; module docstring, "A small family").
FLH_SEEDS = 1 << 14
#: Hash evaluations per block of :func:`support_counts`' direct path: ``uint32`` blocks of 256 KiB,
#: which stay in a core's L2 cache through the dozen passes of the hash.
_BLOCK_CELLS = 1 << 16
#: The largest ``(seed, value)`` table the grouped path of :func:`support_counts` builds (64 MiB of int32).
_TABLE_CELLS = 1 << 24


def olh_g(epsilon: float) -> int:
    """OLH's number of hash values: ``round(e^eps) + 1`` (Wang et al. 2017, Sec. 4.4), at least 2."""
    return max(2, min(round(math.exp(epsilon)) + 1, HASHED_G[1]))


def olh_grid(epsilon: float, g: int) -> tuple[int, int]:
    """``(keep, weight)`` of local hashing on the ``2**32`` grid: the smallest ``weight`` with
    ``(keep + weight) / weight <= e^eps`` and ``keep = 2**32 - g weight >= 1``, decided exactly
    (:func:`~pldp.channel.exact.ratio_within`); a :class:`~pldp.errors.ParameterError` when no
    ``weight`` leaves ``keep >= 1``.

    Examples
    --------
    >>> keep, weight = olh_grid(1.0, 4)
    >>> keep + 4 * weight == 2**32 and (keep + weight) / weight <= math.e
    True
    """
    guess = -math.ceil(GRID / (math.exp(epsilon) + g - 1))
    # the largest t = -weight whose claim holds, from the float guess
    t = largest_within(guess, -((GRID - 1) // g), -1, lambda u: ratio_within(GRID + (g - 1) * u, -u, epsilon))
    if t is None:
        raise ParameterError(f"epsilon={epsilon:g} is too small for g={g} on the 2**32 grid")
    return GRID - g * -t, -t


def olh_factor(epsilon: float, g: int) -> float:
    """OLH's variance factor at an absent item, :math:`((e^\\varepsilon + g - 1)/(e^\\varepsilon - 1))^2 / (g - 1)`
    (module docstring; written as a ratio so that it stays finite at every budget).

    Examples
    --------
    >>> round(olh_factor(1.0, 4), 4)   # Wang et al.'s 4 e / (e - 1)^2, at g = e + 1, is 3.6827
    3.6917
    """
    e1 = math.expm1(epsilon)
    return ((e1 + g) / e1) ** 2 / (g - 1)


def toeplitz_g(epsilon: float, d: int) -> int:
    """The power of two ``g`` of smallest :func:`olh_factor` among those the Toeplitz family holds at
    ``d`` items (:func:`~pldp.channel.toeplitz.toeplitz_fits`).

    Examples
    --------
    >>> toeplitz_g(1.0, 10_000), toeplitz_g(4.0, 10_000), toeplitz_g(4.0, 10**7)   # e + 1 = 3.7; e^4 + 1 = 55.6
    (4, 64, 16)
    """
    fits = [1 << r for r in range(1, 24) if toeplitz_fits(d, 1 << r) is None]
    if not fits:
        raise ParameterError(toeplitz_fits(d, 2) or f"the Toeplitz family cannot hold d = {d}")
    return min(fits, key=lambda g: olh_factor(epsilon, g))


def checked_reports(reports: Any, g: int, seeds: int = SEEDS) -> np.ndarray:
    """``reports`` as an ``(n, 2)`` ``int64`` array of ``(seed, value)``, seeds in ``[0, seeds)`` and values
    in ``[0, g)``, or a :class:`~pldp.errors.ReportError` naming the first report that is not."""
    rep = np.asarray(reports)
    if rep.ndim != 2 or rep.shape[1] != 2 or rep.dtype.kind not in "iu":
        raise ReportError(f"OLH reports are an (n, 2) integer array of (seed, value), got shape {rep.shape}")
    rep = rep.astype(np.int64, copy=False)
    for column, name, high in ((rep[:, 0], "seed", seeds), (rep[:, 1], "value", g)):
        refuse_out_of_range(column, high, name)
    return rep


def support_counts(reports: Any, d: int, g: int, seeds: int = SEEDS, family: str = "xxh32") -> np.ndarray:
    """Per item ``v``, the reports ``(s, y)`` with ``H_s(v) = y``, from seeds in ``[0, seeds)``; a
    :class:`~pldp.errors.ReportError` naming the first report out of range (:func:`checked_reports`).

    The Toeplitz family: a spectrum and its transform, ``O(n g + d log d)``
    (:func:`~pldp.mechanisms.toeplitz.toeplitz_support`).

    Two paths, the same counts. A small family (FLH): the reports' counts per ``(seed, value)``
    (:func:`seed_value_table`, one ``bincount``), then for each seed some report drew, the hash
    values of all ``d`` items and ``C_v += table[s, H_s(v)]`` (:func:`table_support`): ``n +
    min(n, seeds) d`` operations. Otherwise (OLH's ``2**31`` seeds, or fewer reports than seeds):
    every report against every item, ``n d`` hash evaluations in cache-sized ``uint32`` blocks.
    """
    rep = checked_reports(reports, g, seeds)
    if family == "toeplitz":
        return toeplitz_support(rep[:, 0], rep[:, 1], d, g)
    n = rep.shape[0]
    if has_table(g, seeds) and seeds * (d + g) < n * d:
        return table_support(seed_value_table(rep[:, 0], rep[:, 1], g, seeds), d, g, seeds)
    return item_support(rep, np.arange(d), g)


def has_table(g: int, seeds: int) -> bool:
    """Whether a family of ``seeds`` is small enough for a ``(seed, value)`` table (FLH's)."""
    return seeds * g <= _TABLE_CELLS


def seed_value_table(seed: np.ndarray, value: np.ndarray, g: int, seeds: int) -> np.ndarray:
    """The reports per ``(seed, value)`` of checked columns (seeds in ``[0, seeds)``, values in
    ``[0, g)``), ``int64``, flat: the cell of ``(s, y)`` is ``s g + y`` (in the columns' own integer
    type: ``seeds g <= 2**24``)."""
    return np.bincount(seed * g + value, minlength=seeds * g)


def item_support(rep: np.ndarray, items: np.ndarray, g: int) -> np.ndarray:
    """Per item of ``items`` (any non-negative integers below ``2**32``), the checked reports ``(s, y)``
    (an ``(n, 2)`` array) with ``XXH32(item, s) mod g = y``: every report against every item, in
    cache-sized ``uint32`` blocks (the direct path of :func:`support_counts`; the heavy hitters'
    candidates, :mod:`pldp.heavy`)."""
    d = int(np.size(items))
    counts = np.zeros(d, dtype=np.int64)
    lane = xxh32_lane(items)
    seeds, values = rep[:, 0].astype(np.uint32), rep[:, 1].astype(np.uint32)
    block = max(1, _BLOCK_CELLS // max(d, 1))
    h = np.empty((block, d), dtype=np.uint32)
    t = np.empty_like(h)
    hits = np.empty((block, d), dtype=bool)
    for start in range(0, rep.shape[0], block):
        k = min(block, rep.shape[0] - start)
        hk, tk, hitk = h[:k], t[:k], hits[:k]
        np.add(seeds[start : start + k, None], lane[None, :], out=hk)
        reduce_mod(xxh32_mix(hk, tk), g, tk)
        np.equal(hk, values[start : start + k, None], out=hitk)
        counts += np.add.reduce(hitk.view(np.uint8), axis=0, dtype=np.int32)
    return counts


def table_support(table: np.ndarray, d: int, g: int, seeds: int) -> np.ndarray:
    """The support counts of the reports a ``(seed, value)`` table counts (:func:`seed_value_table`):
    per seed some report drew, the hash values of the ``d`` items, and ``C_v += table[s, H_s(v)]``
    (``min(n, seeds) d`` hash evaluations, whatever ``n`` is)."""
    drawn = np.flatnonzero(table.reshape(seeds, g).any(axis=1)).astype(np.uint32)
    flat = table.astype(np.int32, copy=False) if table.sum() < 1 << 31 else table  # a block's sum fits too
    lane = xxh32_lane(np.arange(d))
    counts = np.zeros(d, dtype=np.int64)
    block = max(1, _BLOCK_CELLS // max(d, 1))
    h = np.empty((block, d), dtype=np.uint32)
    t = np.empty_like(h)
    got = np.empty((block, d), dtype=flat.dtype)
    for start in range(0, drawn.size, block):
        s = drawn[start : start + block]
        hk, tk, gotk = h[: s.size], t[: s.size], got[: s.size]
        np.add(s[:, None], lane[None, :], out=hk)
        reduce_mod(xxh32_mix(hk, tk), g, tk)
        hk += (s * np.uint32(g))[:, None]  # the cell (s, H_s(x)) of the table; seeds * g < 2**32
        np.take(flat, hk, out=gotk)
        counts += np.add.reduce(gotk, axis=0, dtype=flat.dtype)
    return counts


@dataclass(frozen=True, eq=False)
class SeedValueCounts:
    """FLH's mergeable count of reports: how many hold each ``(seed, value)``, the sufficient statistic
    its support counts are read from (:meth:`OLH.tally_of`, ``seeds d`` hash evaluations once).

    Counting a part of the reports costs ``O(n)``; merging two parts adds their tables
    (``seeds g`` cells). A map-reduce over report files (:mod:`pldp.aggregate`) merges these and
    reads the support counts once at the end, instead of ``seeds d`` hash evaluations per part.

    Attributes
    ----------
    n : int
        Reports counted.
    table : ndarray of int32 (int64 from ``n = 2**31``)
        Flat, ``seeds * g`` cells; ``(s, y)`` at ``s g + y`` (:func:`seed_value_table`).
    fingerprint : str or None
        The oracle's fingerprint (merging refuses another's).
    """

    n: int
    table: np.ndarray
    fingerprint: str | None

    def __post_init__(self) -> None:  # int32 while every cell fits: half the bytes a merge moves
        object.__setattr__(self, "table", self.table.astype(np.int32 if self.n < 1 << 31 else np.int64, copy=False))

    def merge(self, other: SeedValueCounts) -> SeedValueCounts:
        """The count of both parts' reports (of the same oracle)."""
        if not isinstance(other, SeedValueCounts) or other.fingerprint != self.fingerprint:
            raise TallyError("can only merge (seed, value) counts of the same oracle")
        n = self.n + other.n
        wide = np.int32 if n < 1 << 31 else np.int64
        return SeedValueCounts(n, np.add(self.table, other.table, dtype=wide), self.fingerprint)


@register
class OLH(SupportCountOracle):
    """Optimized local hashing (OLH; BLH with ``g=2``), epsilon-LDP, for large domains.

    A report is a seed and one of ``g`` values, whatever ``d`` is (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget, ``0 < epsilon <= 700``.
    d : int or Domain
        Domain size (>= 2) or the domain itself.
    g : int, optional
        Number of hash values (``2 <= g <= 2**24``); default ``round(e^eps) + 1`` (OLH); ``g=2`` is
        BLH (:meth:`blh`).
    seeds : int, optional
        Size of the hash family, a power of two from 2 to ``2**31``: default ``2**31`` (OLH, a
        report's seed is a word's top 31 bits); smaller is FLH (:meth:`flh`, default
        :data:`FLH_SEEDS`), whose server work is ``O(n + seeds d)`` instead of ``O(n d)`` and
        whose estimates move with the family's collision rates (module docstring).
    hash : {"xxh32", "toeplitz"}, optional
        The hash family: XXH32 of the item index (default), or the Toeplitz family
        (:mod:`pldp.channel.toeplitz`): exactly pairwise independent, so the estimates are exactly
        unbiased with exactly the variance above, and counted at the server in ``O(n g + d log d)``;
        ``g`` is a power of two (default :func:`toeplitz_g`) and the family has ``2**31`` seeds.

    Examples
    --------
    >>> import numpy as np
    >>> m = OLH(2.0, 1000)
    >>> m.g, round(float(m.support[0][0]), 4), round(float(m.support[1][0]), 4)
    (8, 0.5135, 0.125)
    >>> rep = m.perturb(np.zeros(20_000, dtype=int), np.random.default_rng(1))
    >>> est = m.estimate(m.tally(rep))
    >>> bool(abs(est.frequencies[0] - 1) < 4 * est.std_error[0])
    True
    """

    family = "hashed"
    _name = "OLH"

    def __init__(
        self, epsilon: float, d: int | Domain, g: int | None = None, seeds: int | None = None, hash: str = "xxh32"
    ) -> None:
        eps = check_epsilon(epsilon)
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        self._budgets = self._check_budgets(ItemBudgets.uniform(eps, dom), all_sensitive=True)
        self.epsilon = eps
        if hash not in HASH_FAMILIES:
            raise ParameterError(f"hash must be one of {HASH_FAMILIES}, got {hash!r}")
        self.hash = hash
        toeplitz = hash == "toeplitz"
        if g is None:
            self.g = toeplitz_g(eps, dom.size) if toeplitz else olh_g(eps)
        else:
            self.g = check_int(g, "g", HASHED_G[0])
        if self.g > HASHED_G[1]:
            raise ParameterError(f"g must be at most {HASHED_G[1]}, got {self.g}")
        if toeplitz and (why := toeplitz_fits(dom.size, self.g)):
            raise ParameterError(why)
        if toeplitz and seeds not in (None, SEEDS):
            raise ParameterError(f"the Toeplitz family has 2**31 seeds (OLH's), got seeds={seeds}")
        self._keep, self._weight = olh_grid(eps, self.g)
        self.seeds = SEEDS if seeds is None else check_int(seeds, "seeds", 2)
        try:
            seed_shift(self.seeds)
        except SpecError as err:
            raise ParameterError(str(err)) from None

    @classmethod
    def flh(cls, epsilon: float, d: int | Domain, g: int | None = None, seeds: int = FLH_SEEDS) -> Self:
        """FLH (Cormode et al. 2021): OLH over a family of ``seeds`` hash functions (default
        :data:`FLH_SEEDS`), counted at the server in ``O(n + seeds d)``."""
        return cls(epsilon, d, g, seeds)

    @classmethod
    def blh(cls, epsilon: float, d: int | Domain, seeds: int | None = None) -> Self:
        """BLH (Wang et al. 2017, Sec. 4.4): local hashing to ``g = 2`` values, the variance factor
        ``(e^eps + 1)^2 / (e^eps - 1)^2`` (OLH's ``g`` is better from ``e^eps > 2``)."""
        return cls(epsilon, d, 2, seeds)

    # ------------------------------------------------------------------ parameters
    def params(self) -> dict[str, Any]:
        """Canonical parameters: the class, the labels, the budget, ``g``, the hash family (with its
        size when not OLH's) and the grid thresholds the clients run."""
        return {
            "mechanism": "OLH",
            "family": self.family,
            "labels": canonical_labels(self.domain.labels),
            "epsilon": self.epsilon,
            "g": self.g,
            "hash": self._node.family,
            **({} if self.seeds == SEEDS else {"seeds": self.seeds}),
            "keep_threshold": self._keep,
            "weight": self._weight,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The OLH of :meth:`params`."""
        seeds = params.get("seeds")
        dom = domain_of(params["labels"])
        return cls(
            float(params["epsilon"]), dom, int(params["g"]), seeds and int(seeds), str(params.get("hash", "xxh32"))
        )

    def sampler(self) -> HashedNode:  # type: ignore[override]
        """The sampler node: the seed, the hash family, ``keep`` and ``weight`` on the grid."""
        return self._node

    @cached_property
    def _node(self) -> HashedNode:
        return HashedNode(self.d, self.g, self.hash, self._keep, self._weight, self.epsilon, self.seeds)

    def __repr__(self) -> str:
        family = "" if self.seeds == SEEDS else f", seeds={self.seeds}"
        family += "" if self.hash == "xxh32" else f", hash={self.hash!r}"
        return f"OLH(epsilon={self.epsilon:g}, d={self.d}, g={self.g}{family})"

    # ---------------------------------------------------------------------- client
    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize item indices, one report ``(seed, value)`` per user (two words each; the node's program).

        Returns
        -------
        ndarray of int64, shape (n, 2)
            Each row a seed in ``[0, seeds)`` and a value in ``[0, g)``.
        """
        _, out = run_program(self._node, x, self.d, rng, 2)
        return np.stack([out["seed"], out["value"]], axis=1)

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        rep = self._check_reports(reports)
        return {"seed": rep[:, 0].copy(), "value": rep[:, 1].copy()}

    def reports_from_columns(self, columns: Any) -> tuple[Any, ...]:
        return (np.stack([np.asarray(columns["seed"]), np.asarray(columns["value"])], axis=1),)

    def _check_reports(self, reports: Any) -> np.ndarray:
        return checked_reports(reports, self.g, self.seeds)

    # ---------------------------------------------------------------------- server
    def tally(self, reports: Any) -> Tally:
        """The support count of every item (:func:`support_counts`: ``n d`` hash evaluations, or
        ``n + seeds d`` operations for a small family)."""
        counts = support_counts(reports, self.d, self.g, self.seeds, self.hash)  # checks the reports
        return self._tally(np.shape(reports)[0], counts)

    def count_reports(self, reports: Any) -> Tally | SeedValueCounts:
        """The mergeable count of ``reports`` whose support counts :meth:`tally_of` reads: a small
        family's :class:`SeedValueCounts` (``O(n)``, no hash), else the tally itself.

        ``tally_of(a.count_reports(r1).merge(a.count_reports(r2)))`` equals ``a.tally(r1 ++ r2)``: a
        map-reduce over many parts (:mod:`pldp.aggregate`) evaluates ``seeds d`` hashes once, not once
        per part.
        """
        rep = self._check_reports(reports)
        return self.count_columns({"seed": rep[:, 0], "value": rep[:, 1]})

    def count_columns(self, columns: Any) -> Tally | SeedValueCounts:
        """:meth:`count_reports` of payload columns already checked (``seed``, ``value``: any integer
        type; :func:`pldp.deploy.count.check_payload`)."""
        if self.hash != "xxh32" or not has_table(self.g, self.seeds):
            return self.tally(*self.reports_from_columns(columns))
        seed, value = columns["seed"], columns["value"]
        return SeedValueCounts(len(seed), seed_value_table(seed, value, self.g, self.seeds), self.fingerprint)

    def tally_of(self, count: Tally | SeedValueCounts) -> Tally:
        """The tally of a :meth:`count_reports` (merged or not): a table's support counts (:func:`table_support`)."""
        if not isinstance(count, SeedValueCounts):
            return count
        if count.fingerprint != self.fingerprint or count.table.size != self.seeds * self.g:
            raise TallyError(f"these (seed, value) counts do not come from {self!r}")
        return self._tally(count.n, table_support(count.table, self.d, self.g, self.seeds))

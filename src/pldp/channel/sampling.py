"""Sampling on an integer grid: every probability a numerator over ``2**32``, every draw a word.

The randomizers of pldp (the vectorised :meth:`~pldp.FrequencyOracle.perturb` of the library and
the device clients of :mod:`pldp.client`) draw uniform unsigned integers and compare them with
integer thresholds; no floating-point number enters a sampling decision (Mironov, CCS 2012, shows
what floating point does to a DP sampler). The functions here are the one implementation both
use, given arrays of random words from any source: a :class:`numpy.random.Generator`
(:func:`generator_words`, for simulations) or the operating system's CSPRNG (:func:`os_words`,
for clients).

* :func:`direct_draw`: a direct-encoding report, one 32-bit word per user: keep the item when
  ``w < keep``, else the smallest ``y`` with ``w - keep < weights[0] + ... + weights[y]``, found
  through a guide table (:class:`DirectTable`).
* :func:`unary_bits`: unary-encoding bits, one coin per bit compared with ``a[x]`` on the user's
  own bit and ``b[k]`` elsewhere.
* :func:`uniform_below`: exact uniform integers below ``m`` by rejection.
* :func:`irr_bits`: the instantaneous randomized response of a memoized unary chain
  (:class:`~pldp.channel.memo.MemoNode`): bit ``k`` of the report is 1 when the coin is below
  ``a[k]`` where the permanent response's bit is set and below ``b[k]`` where it is clear.

The wire-level contract (which word is used for what, in which order) is ``docs/wire-format.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

__all__ = [
    "GRID",
    "GRID_BITS",
    "DirectTable",
    "direct_draw",
    "direct_table",
    "generator_words",
    "irr_bits",
    "os_words",
    "unary_bits",
    "uniform_below",
]

#: Bits of the sampling grid: probabilities are multiples of ``2**-GRID_BITS``.
GRID_BITS = 32
#: ``2**GRID_BITS``.
GRID = 1 << GRID_BITS


def generator_words(rng: np.random.Generator, n: int, dtype: type = np.uint32) -> np.ndarray:
    """``n`` uniform words (``uint32`` or ``uint16``) from a numpy generator's raw 64-bit output."""
    per = 64 // (8 * np.dtype(dtype).itemsize)
    return rng.bit_generator.random_raw(-(-n // per)).view(dtype)[:n]


def os_words(n: int) -> np.ndarray:
    """``n`` uniform ``uint32`` words from the operating system's CSPRNG (``os.urandom``)."""
    return np.frombuffer(os.urandom(4 * n), dtype="<u4").astype(np.uint32, copy=False)


#: Buckets of the guide table of :class:`DirectTable`: ``2**GUIDE_BITS`` (a few KiB, kept in cache).
GUIDE_BITS = 12


@dataclass(frozen=True, eq=False)
class DirectTable:
    """How :func:`direct_draw` maps a word to an output: a direct node's thresholds, prepared.

    The outputs split ``[0, 2**32)`` at the *bounds* ``keep, keep + W_0, keep + W_0 + W_1, ...``
    (the last is ``2**32``); a word's output is the number ``c`` of bounds ``<= w``: ``c = 0`` keeps
    the user's item, ``c = y + 1`` reports ``y``. A guide table (Chen & Asau, 1974; Devroye,
    *Non-Uniform Random Variate Generation*, 1986, Sec. III.2.4) stores ``c`` at the start of each of
    ``2**GUIDE_BITS`` equal buckets of the words, so for a bucket with at most one bound inside,
    ``c`` is one lookup by the word's top bits and one exact comparison with the next bound. The
    few words that fall in a *crowded* bucket (several bounds inside: many small weights in a row)
    get a binary search over the bounds. Equal weights need no table: ``y = (w - keep) // W``.
    Every decision is an exact integer comparison of the word with a bound; the table only
    chooses where to start comparing.

    Build with :func:`direct_table`.
    """

    keep: int
    bounds: np.ndarray  # int64, keep + [0, cumsum(weights)]
    uniform: int  # the common weight when all are equal, else 0
    guide: np.ndarray  # int64, c at the start of each bucket
    crowded: np.ndarray  # bool, buckets with more than one bound inside (None of them: size 0)


def direct_table(keep: int, weights: np.ndarray | tuple[int, ...]) -> DirectTable:
    """The :class:`DirectTable` of keep threshold ``keep`` and integer ``weights`` (summing to ``2**32 - keep``)."""
    w = np.asarray(weights, dtype=np.int64)
    bounds = keep + np.concatenate([[0], np.cumsum(w)])
    uniform = int(w[0]) if w.size and np.all(w == w[0]) else 0
    width = 1 << (GRID_BITS - GUIDE_BITS)
    starts = np.arange(1 << GUIDE_BITS, dtype=np.int64) * width
    guide = np.searchsorted(bounds, starts, side="right")
    inside = np.searchsorted(bounds, starts + (width - 1), side="right") - guide
    crowded = inside > 1
    return DirectTable(keep, bounds, uniform, guide.astype(np.int64), crowded if crowded.any() else crowded[:0])


def direct_draw(x: np.ndarray, words: np.ndarray, table: DirectTable) -> np.ndarray:
    """Direct-encoding reports of items ``x`` driven by one ``uint32`` word each.

    A word ``w < keep`` reports ``x``; otherwise the report is the smallest ``y`` with ``w - keep <
    weights[0] + ... + weights[y]`` (see :class:`DirectTable` for how it is found).

    Parameters
    ----------
    x : ndarray of int
        Item indices.
    words : ndarray of uint32, same shape
        Uniform words.
    table : DirectTable
        The node's thresholds (:func:`direct_table`).

    Returns
    -------
    ndarray, the dtype of ``x``
    """
    if table.uniform:
        v = words.astype(np.int64)
        v -= table.keep
        return np.where(v < 0, x, v // table.uniform).astype(x.dtype, copy=False)
    bucket = (words >> (GRID_BITS - GUIDE_BITS)).astype(np.intp)
    c = np.take(table.guide, bucket)
    c += words >= np.take(table.bounds, c)
    if table.crowded.size:
        hard = np.flatnonzero(np.take(table.crowded, bucket))
        c[hard] = np.searchsorted(table.bounds, words[hard], side="right")
    c -= 1
    return np.where(c < 0, x, c).astype(x.dtype, copy=False)


def unary_bits(x: np.ndarray, coins: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unary-encoding bits ``(n, d)`` of items ``x`` from coins ``(n, d)`` of the thresholds' dtype.

    Bit ``k`` of user ``u`` is ``coins[u, k] < (a[k] if k == x[u] else b[k])``.
    """
    bits = np.less(coins, b)
    rows = np.arange(x.size)
    bits[rows, x] = coins[rows, x] < a[x]
    return bits


def irr_bits(permanent: np.ndarray, coins: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The instantaneous bits ``(n, d)`` of permanent bits ``(n, d)`` from coins ``(n, d)`` of the thresholds' dtype.

    Bit ``k`` of report ``u`` is ``coins[u, k] < (a[k] if permanent[u, k] else b[k])``: a set bit is
    kept with probability ``a[k] / 2**w`` and a clear one raised with probability ``b[k] / 2**w``
    (``w`` the coins' width). ``a`` and ``b`` hold one threshold per bit (or one for every bit).
    """
    return np.less(coins, np.where(permanent, a, b))


def uniform_below(words: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact uniform integers below ``m`` (``1 <= m <= 2**32``) by rejection, one word each.

    Returns ``(values, accepted)``: ``values = w mod m`` where ``w < 2**32 - (2**32 mod m)``
    (``accepted``); a rejected word must be replaced by the next one (docs/wire-format.md, §2).
    """
    w = words.astype(np.int64)
    mm = np.asarray(m, dtype=np.int64)
    limit = GRID - (GRID % mm)
    return w % mm, w < limit

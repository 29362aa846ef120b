"""Sampling on an integer grid: every probability a numerator over ``2**32``, every draw a word.

The randomizers of pldp (the vectorised :meth:`~pldp.FrequencyOracle.perturb` of the library and
the device clients of :mod:`pldp.client`) draw uniform unsigned integers and compare them with
integer thresholds; no floating-point number enters a sampling decision (Mironov, CCS 2012, shows
what floating point does to a DP sampler). The functions here are the one implementation both
use, given arrays of random words from any source: a :class:`numpy.random.Generator`
(:func:`generator_words`, for simulations) or the operating system's CSPRNG (:func:`os_words`,
for clients).

* :func:`direct_draw`: a direct-encoding report, one 32-bit word per user: keep the item when
  ``w < keep``, else the smallest ``y`` with ``w - keep < weights[0] + ... + weights[y]``.
* :func:`unary_bits`: unary-encoding bits, one coin per bit compared with ``a[x]`` on the user's
  own bit and ``b[k]`` elsewhere.
* :func:`uniform_below`: exact uniform integers below ``m`` by rejection.

The wire-level contract (which word is used for what, in which order) is ``docs/wire-format.md``.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = [
    "GRID",
    "GRID_BITS",
    "direct_draw",
    "generator_words",
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


def direct_draw(x: np.ndarray, words: np.ndarray, keep: int, cum: np.ndarray, uniform: int = 0) -> np.ndarray:
    """Direct-encoding reports of items ``x`` driven by one ``uint32`` word each.

    Parameters
    ----------
    x : ndarray of int
        Item indices.
    words : ndarray of uint32, same shape
        Uniform words.
    keep : int
        Threshold of honesty: ``w < keep`` reports ``x`` (probability ``keep / 2**32``).
    cum : ndarray of int64
        Cumulative weights, ``cum[y] = weights[0] + ... + weights[y]``, ending at ``2**32 - keep``.
    uniform : int
        The common weight when every weight is equal (then ``y = (w - keep) // uniform``), else 0.

    Returns
    -------
    ndarray, the dtype of ``x``
    """
    w = words.astype(np.int64)
    w -= keep
    if uniform:
        y = w // uniform
    else:
        y = np.searchsorted(cum, w, side="right")
    return np.where(w < 0, x, y).astype(x.dtype, copy=False)


def unary_bits(x: np.ndarray, coins: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unary-encoding bits ``(n, d)`` of items ``x`` from coins ``(n, d)`` of the thresholds' dtype.

    Bit ``k`` of user ``u`` is ``coins[u, k] < (a[k] if k == x[u] else b[k])``.
    """
    bits = np.less(coins, b)
    rows = np.arange(x.size)
    bits[rows, x] = coins[rows, x] < a[x]
    return bits


def uniform_below(words: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact uniform integers below ``m`` (``1 <= m <= 2**32``) by rejection, one word each.

    Returns ``(values, accepted)``: ``values = w mod m`` where ``w < 2**32 - (2**32 mod m)``
    (``accepted``); a rejected word must be replaced by the next one (docs/wire-format.md, §2).
    """
    w = words.astype(np.int64)
    mm = np.asarray(m, dtype=np.int64)
    limit = GRID - (GRID % mm)
    return w % mm, w < limit

"""The Toeplitz hash family: an affine map over GF(2), exactly pairwise independent, with a fast server.

A seed ``s`` (31 bits, drawn like OLH's: a word's top 31 bits) is read as an offset ``b``, its low
``r = log2(g)`` bits, and a bit string ``tau = s >> r``. An item ``x < d`` is a vector of
``B = bit_length(d - 1)`` bits, and

.. math::

    H_s(x) = T_\\tau x \\oplus b, \\qquad (T_\\tau x)_k = \\operatorname{parity}\\bigl((\\tau \\gg k)
    \\mathbin{\\&} x\\bigr), \\quad k = 0, \\dots, r - 1 :

row ``k`` of the ``r x B`` matrix over GF(2) is the window ``tau_k .. tau_{k+B-1}``, a Toeplitz
matrix with its columns reversed (Mansour, Nisan, Tiwari, STOC 1990; Krawczyk, CRYPTO 1994). It
reads ``r + B - 1`` bits of ``tau``, so the family needs ``2 r + B - 1 <= 31`` (:func:`toeplitz_fits`).

Exact pairwise independence. For ``x != x'`` let ``j`` be the highest bit of ``z = x XOR x'``.
Row ``k`` of ``T z`` holds ``tau_{k+j}``, which no row ``k' < k`` holds (it would meet a bit of
``z`` above ``j``), so ``T z`` is uniform over ``[0, g)``; ``b`` is uniform and independent of
``tau``, so ``(H_s(x), H_s(x'))`` is uniform over the ``g^2`` pairs. Two items therefore collide
with probability exactly ``1/g``, and OLH's estimator is exactly unbiased with exactly its
variance (:mod:`pldp.mechanisms.hashed`), where XXH32's family meets both to within its departure
from pairwise independence, and FLH's small family with a bias of its own. ``tests/test_toeplitz.py``
enumerates every seed of small families and finds every pair's law uniform.

The server. A report ``(s, y)`` supports ``v`` when ``T_\\tau v = c`` with ``c = y XOR b``;
over the characters of GF(2)^r,

.. math::

    [T_\\tau v = c] = 2^{-r} \\sum_{t < g} (-1)^{t \\cdot c}\\, (-1)^{(T_\\tau^\\top t) \\cdot v},
    \\qquad C_v = 2^{-r} \\sum_{u < 2^B} F(u)\\, (-1)^{u \\cdot v}, \\quad
    F(u) = \\sum_{i} \\sum_{t:\\, T_{\\tau_i}^\\top t = u} (-1)^{t \\cdot c_i} .

``F`` takes ``g`` integer additions per report, and the counts are its Walsh-Hadamard transform
divided by ``g``, exactly, in integers (:func:`pldp.mechanisms.toeplitz.toeplitz_support`):
``O(n g + B 2^B)`` operations instead of OLH's ``n d`` hash evaluations, and ``2^B < 2 d`` integers
of memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.bitcount import parity

__all__ = ["TOEPLITZ_BITS", "item_bits", "toeplitz_fits", "toeplitz_values"]

#: The bits of a seed: OLH's ``2**31`` seeds.
TOEPLITZ_BITS = 31


def item_bits(d: int) -> int:
    """``B``: the bits of an item index below ``d``, at least 1."""
    return max(1, (d - 1).bit_length())


def toeplitz_fits(d: int, g: int) -> str | None:
    """Why the Toeplitz family cannot serve ``d`` items and ``g`` hash values, or ``None`` when it can:
    ``g`` a power of two and ``2 log2(g) + B - 1 <= 31`` bits of seed (module docstring).

    Examples
    --------
    >>> toeplitz_fits(10_000, 64) is None, toeplitz_fits(10_000, 56)
    (True, 'the Toeplitz family needs g a power of two, got 56')
    """
    if g < 2 or g & (g - 1):
        return f"the Toeplitz family needs g a power of two, got {g}"
    r, b = g.bit_length() - 1, item_bits(d)
    if 2 * r + b - 1 > TOEPLITZ_BITS:
        return (
            f"the Toeplitz family needs 2 log2(g) + bits(d - 1) - 1 <= {TOEPLITZ_BITS} seed bits, got "
            f"2 * {r} + {b} - 1 = {2 * r + b - 1} (d = {d}, g = {g}): a smaller g or d"
        )
    return None


def toeplitz_values(items: Any, seeds: Any, g: int) -> np.ndarray:
    """``H_s(x) = T_tau x XOR b`` for items and seeds (broadcast), as ``uint32`` (module docstring).

    Examples
    --------
    >>> toeplitz_values([0, 1, 2, 3], 0b1011_01, 4).tolist()   # b = 1, tau = 0b1011
    [1, 2, 0, 3]
    """
    x = np.asarray(items).astype(np.int64)
    s = np.asarray(seeds).astype(np.int64)
    g = int(g)
    r = g.bit_length() - 1
    tau = s >> r
    h = np.broadcast_to(s & (g - 1), np.broadcast_shapes(s.shape, x.shape)).copy()
    for k in range(r):
        h ^= parity((tau >> k) & x) << k
    return h.astype(np.uint32)

"""OLH's support counts under the Toeplitz family in ``O(n g + B 2^B)``: a spectrum, then its transform.

The derivation is :mod:`pldp.channel.toeplitz`'s ("The server"): a report's indicator of ``T v = c``
is a sum of ``g`` characters of GF(2)^r, so the support counts of all items are the Walsh-Hadamard
transform of one integer array ``F`` over ``2^B`` cells, divided by ``g``, exactly. At ``d = 10^4``
and ``g = 64`` that is 64 additions per report and one transform of ``2^14`` cells, where the XXH32
family costs ``d`` hash evaluations per report (``benchmarks/results.md``). The ``n g`` term grows
with the budget (``g`` near ``e^eps``): 10^6 reports take about 0.03 s at ``g = 4``, 0.8 s at 64 and
8 s at 512 on one core, still far below the ``n d`` of XXH32 while ``g < d``.
"""

from __future__ import annotations

import numpy as np

from pldp.bitcount import parity
from pldp.channel.toeplitz import item_bits
from pldp.mechanisms.hadamard import walsh_hadamard

__all__ = ["toeplitz_support"]

#: Cells (reports times ``g``) per block of :func:`toeplitz_support` (16 MiB of int64), and reports per
#: block at most: larger blocks of a large ``g`` fall out of the cache (g = 512: 21 s with 2^15 reports
#: a block, 8 s with 2^12), smaller ones of a small ``g`` pay numpy's per-call cost.
_BLOCK_CELLS = 1 << 21
_BLOCK_REPORTS = 1 << 15
#: The largest ``g`` whose signs :func:`toeplitz_support` reads from a ``g x g`` table.
_SIGN_TABLE = 1 << 8


def toeplitz_support(seed: np.ndarray, value: np.ndarray, d: int, g: int) -> np.ndarray:
    """Per item ``v < d``, the reports ``(s, y)`` (checked: seeds below ``2**31``, values below ``g``) with
    ``H_s(v) = y``: the transform of ``F`` divided by ``g``, exact (:mod:`pldp.channel.toeplitz`, "The server").

    ``F``'s ``g`` terms of a report are its ``u(t) = T^T t``, built over ``t`` by one XOR each
    (``u(t) = u(t AND (t - 1)) XOR row(lowest bit of t)``), and the sign ``parity(t AND c)``:
    ``bincount`` counts each ``(u, sign)`` cell.
    """
    g = int(g)
    r, size = g.bit_length() - 1, 1 << item_bits(d)
    t = np.arange(g)
    # the sign parity(t AND c) looked up in a g x g table while it is small (a gather beats six shifts)
    signs = parity(t[:, None] & t[None, :]) if g <= _SIGN_TABLE else None
    lowest = [(int(k) & -int(k)).bit_length() - 1 for k in t]
    cells = np.zeros(2 * size, dtype=np.int64)
    # each block's bincount costs its 2 * size cells too: at large d, blocks of up to 2 * size / g reports
    # (at most 2**24 cells, 128 MiB)
    block = max(min(_BLOCK_REPORTS, _BLOCK_CELLS // g), min(2 * size, 1 << 24) // g, 1)
    for start in range(0, len(seed), block):
        s = np.asarray(seed[start : start + block]).astype(np.int64)
        c = (np.asarray(value[start : start + block]).astype(np.int64) ^ s) & (g - 1)
        rows = [((s >> (r + k)) & (size - 1)) for k in range(r)]
        u = np.empty((g, s.size), dtype=np.int64)
        u[0] = 0
        for k in range(1, g):
            np.bitwise_xor(u[k & (k - 1)], rows[lowest[k]], out=u[k])
        u <<= 1
        u |= parity(t[:, None] & c[None, :]) if signs is None else signs[:, c]  # each term's sign
        cells += np.bincount(u.ravel(), minlength=2 * size)
    spectrum = walsh_hadamard(cells[0::2] - cells[1::2])
    return np.asarray(spectrum[:d] >> r)

"""XXH32 of byte strings: the hash of free-text answers and of the heavy hitters' prefixes.

The hashed answer form (:mod:`pldp.deploy.labels`, ``docs/wire-format.md`` §1.5) maps an answer's
UTF-8 bytes to ``XXH32(bytes, seed 0) mod d``; the heavy hitters (:mod:`pldp.heavy.strings`) map each
prefix to its fingerprint the same way. Two implementations of the specification (Collet, xxHash
v0.8) live here: :func:`xxh32`, in pure Python, hashes one string of any length (an answer is at
most a few hundred bytes), and is the reference the other is tested against; :func:`xxh32_rows`
hashes the rows of an ``(m, L)`` ``uint8`` array, strings of one length, in numpy ``uint32`` lanes
(a million prefixes at once). The sampler's XXH32 (:mod:`pldp.channel.hashed`) hashes 4-byte item
indices in numpy lanes. ``clients/js/client-xxh32.mjs`` is the JS twin of :func:`xxh32`.

Examples
--------
>>> [f"{xxh32(s):08X}" for s in (b"", b"a", b"abc")]   # the specification's test vectors
['02CC5D05', '550D7456', '32D153FF']
>>> [f"{h:08X}" for h in xxh32_rows(np.array([[97, 98, 99], [120, 121, 122]], dtype=np.uint8))]
['32D153FF', 'F1932FD3']
"""

from __future__ import annotations

import operator

import numpy as np

from pldp.errors import ParameterError

__all__ = ["xxh32", "xxh32_rows"]

_M = 0xFFFFFFFF
#: PRIME32_1 to PRIME32_5 of the specification.
_P1, _P2, _P3, _P4, _P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 13) * _P1) & _M


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of ``data`` with ``seed`` (an unsigned 32-bit integer), as the specification defines it.

    Parameters
    ----------
    data : bytes
        The bytes hashed.
    seed : int, default 0
        The seed, taken modulo ``2**32``.

    Returns
    -------
    int
        The hash, in ``[0, 2**32)``.
    """
    n = len(data)
    seed &= _M
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed, (seed - _P1) & _M]
        while i + 16 <= n:
            for k in range(4):
                v[k] = _round(v[k], int.from_bytes(data[i + 4 * k : i + 4 * k + 4], "little"))
            i += 16
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M, 17) * _P4) & _M
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M
    h ^= h >> 13
    h = (h * _P3) & _M
    return h ^ (h >> 16)


#: The primes as ``uint32`` scalars, for :func:`xxh32_rows`: an operation on ``uint32`` lanes stays ``uint32``
#: (and wraps) under numpy 1's promotion rules and numpy 2's alike.
_U1, _U2, _U3, _U4, _U5 = (np.uint32(p) for p in (_P1, _P2, _P3, _P4, _P5))
#: The rows :func:`xxh32_rows` hashes at once: at most ``_BLOCK_ROWS``, and at most ``_BLOCK_BYTES`` bytes
#: unless one row is longer. Its scratch is about twice a block's bytes and 40 bytes a row, whatever ``m`` is.
_BLOCK_BYTES = 1 << 19
_BLOCK_ROWS = 1 << 14


def xxh32_rows(rows: np.ndarray, seed: int = 0) -> np.ndarray:
    """XXH32 of each row of an ``(m, L)`` ``uint8`` array with ``seed``, as ``uint32`` of shape ``(m,)``.

    Row ``i`` hashes to ``xxh32(rows[i].tobytes(), seed)`` (:func:`xxh32`): the same steps, each on
    a column of ``uint32`` lanes, every operation modulo ``2**32``. The rows go through in blocks,
    so the scratch memory is bounded whatever ``m`` is.

    Parameters
    ----------
    rows : numpy.ndarray
        The byte strings, one per row, all ``L >= 0`` bytes long; ``uint8``, 2-D.
    seed : int, default 0
        The seed, taken modulo ``2**32``.

    Returns
    -------
    numpy.ndarray
        The hashes, ``uint32``, shape ``(m,)``.

    Raises
    ------
    ParameterError
        If ``rows`` is not a 2-D ``uint8`` array.

    Examples
    --------
    >>> xxh32_rows(np.zeros((2, 0), dtype=np.uint8)).tolist() == [xxh32(b"")] * 2
    True
    """
    a = np.asarray(rows)
    if a.ndim != 2:
        raise ParameterError(f"rows must be a 2-D uint8 array (one byte string per row), got {a.ndim} dimension(s)")
    if a.dtype != np.uint8:
        raise ParameterError(f"rows must be a uint8 array (bytes), got dtype {a.dtype}")
    s = operator.index(seed) & _M
    m, n = a.shape
    out = np.empty(m, dtype=np.uint32)
    step = max(1, min(_BLOCK_ROWS, _BLOCK_BYTES // max(n, 1)))
    for start in range(0, m, step):
        _hash_block(a[start : start + step], s, out[start : start + step])
    return out


def _rotl_inplace(x: np.ndarray, r: int, t: np.ndarray) -> None:
    """``x = rotl(x, r)`` of ``uint32`` lanes, in place, with scratch ``t`` (``x``'s shape)."""
    np.right_shift(x, np.uint32(32 - r), out=t)
    np.left_shift(x, np.uint32(r), out=x)
    x |= t


def _hash_block(rows: np.ndarray, seed: int, h: np.ndarray) -> None:
    """:func:`xxh32_rows` of one block of rows (``(b, n)`` ``uint8``) into ``h`` (``(b,)`` ``uint32``)."""
    b, n = rows.shape
    t = np.empty(b, dtype=np.uint32)
    q = n // 4  # whole 4-byte lanes; lane i of every row is the contiguous row i of `lanes`
    lanes = np.empty((0, b), dtype=np.uint32)
    if q:
        words = np.ascontiguousarray(rows[:, : 4 * q]).view("<u4").astype(np.uint32, copy=False)
        lanes = np.ascontiguousarray(words.T)
    stripes = n // 16
    if stripes:
        v = np.empty((4, b), dtype=np.uint32)
        for k, init in enumerate((seed + _P1 + _P2, seed + _P2, seed, seed - _P1)):
            v[k] = init & _M
        tv = np.empty_like(v)
        for i in range(0, 4 * stripes, 4):
            np.multiply(lanes[i : i + 4], _U2, out=tv)
            v += tv
            _rotl_inplace(v, 13, tv)
            v *= _U1
        for k, r in enumerate((1, 7, 12, 18)):
            _rotl_inplace(v[k], r, tv[k])
        np.add(v[0], v[1], out=h)
        h += v[2]
        h += v[3]
    else:
        h[:] = (seed + _P5) & _M
    h += np.uint32(n & _M)
    for i in range(4 * stripes, q):
        np.multiply(lanes[i], _U3, out=t)
        h += t
        _rotl_inplace(h, 17, t)
        h *= _U4
    for i in range(4 * q, n):
        t[:] = rows[:, i]
        t *= _U5
        h += t
        _rotl_inplace(h, 11, t)
        h *= _U1
    for shift, prime in ((15, _U2), (13, _U3)):
        np.right_shift(h, np.uint32(shift), out=t)
        h ^= t
        h *= prime
    np.right_shift(h, np.uint32(16), out=t)
    h ^= t

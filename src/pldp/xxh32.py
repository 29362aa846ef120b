"""XXH32 of a byte string, in pure Python: the hash of free-text answers and of the heavy hitters' prefixes.

The hashed answer form (:mod:`pldp.deploy.labels`, ``docs/wire-format.md`` §1.5) maps an answer's
UTF-8 bytes to ``XXH32(bytes, seed 0) mod d``. The sampler's XXH32 (:mod:`pldp.channel.hashed`) hashes
4-byte item indices in numpy lanes; this one hashes any bytes, one string at a time (an answer is at
most a few hundred bytes). ``clients/js/client-xxh32.mjs`` is its JS twin.

Examples
--------
>>> [f"{xxh32(s):08X}" for s in (b"", b"a", b"abc")]   # the specification's test vectors
['02CC5D05', '550D7456', '32D153FF']
"""

from __future__ import annotations

__all__ = ["xxh32"]

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

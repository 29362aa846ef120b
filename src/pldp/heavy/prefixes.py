r"""Prefixes of bounded answers, ``s`` bits at a time: the prefix trees of PEM and TreeHist.

An answer is a row of ``L`` bytes padded with ``0x00`` (:mod:`pldp.heavy.strings`). Its prefix of
``b`` bits is its first :math:`\lceil b / 8 \rceil` bytes with the bits past ``b`` set to 0
(:func:`prefix_rows`), so a prefix and the fingerprint of those bytes stand for one node of a
:math:`2^s`-ary tree of depth ``8 L / s``; each depth has its own group of users, so two depths never
share a fingerprint's meaning.

A step (:func:`extend`) grows each kept prefix by each of the :math:`2^s` values of its next ``s``
bits and drops the prefixes no answer can have: a first byte ``0x00`` (an empty answer), and any bit
set after a complete byte ``0x00`` (the answer has ended, the rest is padding).
"""

from __future__ import annotations

import numpy as np

from pldp.channel.heavy import STEPS, prefix_rows
from pldp.errors import ParameterError

__all__ = ["STEPS", "extend", "possible", "prefix_rows"]


def _check_step(step_bits: int) -> None:
    if step_bits not in STEPS:
        raise ParameterError(f"step_bits must be one of {STEPS}, got {step_bits}")


def extend(kept: np.ndarray, bits: int, step_bits: int = 8) -> np.ndarray:
    """Each kept prefix of ``bits`` bits (rows of ``uint8``; ``bits = 0`` with no columns for the
    root) grown by ``step_bits`` bits, in the order of the kept rows, each grown by ``0 .. 2^s - 1``;
    the prefixes no answer can have are dropped (module docstring).

    Examples
    --------
    >>> extend(np.zeros((1, 0), dtype=np.uint8), 0).shape   # 255 first bytes: 0x00 is no answer
    (255, 1)
    >>> extend(np.array([[97, 0]], dtype=np.uint8), 16).tolist()   # "a" has ended: only padding follows
    [[97, 0, 0]]
    """
    _check_step(step_bits)
    values = np.arange(1 << step_bits, dtype=np.uint8)
    m = kept.shape[0]
    if bits % 8 == 0:
        grown = np.zeros((m << step_bits, kept.shape[1] + 1), dtype=np.uint8)
        grown[:, :-1] = np.repeat(kept, 1 << step_bits, axis=0)
    else:
        grown = np.repeat(kept, 1 << step_bits, axis=0)
    grown[:, -1] |= np.tile(values << np.uint8(8 - bits % 8 - step_bits), m)
    return grown[possible(grown, bits + step_bits)]


def possible(rows: np.ndarray, bits: int) -> np.ndarray:
    """Which prefixes of ``bits`` bits some answer has: the first byte, once complete, is not
    ``0x00``, and nothing follows a complete byte ``0x00``."""
    whole = bits // 8
    if rows.shape[0] == 0 or whole == 0:
        return np.ones(rows.shape[0], dtype=bool)
    zero = rows[:, :whole] == 0
    ended = np.logical_or.accumulate(zero, axis=1)  # a complete 0x00 at or before this byte
    after = np.zeros(rows.shape, dtype=bool)  # byte c follows a complete 0x00 (rows have whole or whole + 1 bytes)
    after[:, 1:] = ended[:, : rows.shape[1] - 1]
    return ~zero[:, 0] & ~((rows != 0) & after).any(axis=1)

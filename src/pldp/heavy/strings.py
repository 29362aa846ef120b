"""The strings of the heavy-hitter protocols: answers as bounded byte rows, their prefixes and fingerprints.

An answer is text (normalised as every text answer is: Unicode NFC, ASCII white space trimmed,
:func:`pldp.text.normalize_text`, then UTF-8) or bytes. Its first ``L = max_bytes`` bytes are kept
and the rest padded with ``0x00``, so every answer is a row of ``L`` bytes and the prefix of ``j``
bytes of a shorter answer ends in padding: ``"ab"`` at ``j = 4`` is ``b"ab\\x00\\x00"``. A byte
``0x00`` therefore means "the answer has ended", and an answer may not hold one.

A prefix reaches the frequency oracle as its *fingerprint*, ``XXH32(prefix, seed 0) mod (2^31 - 1)``
(:func:`fingerprints`): an item index of local hashing's largest domain, which it then randomizes
(:mod:`pldp.channel.hashed`). The fingerprint is a fixed, public function of the answer, so the
report is as private as the oracle's claim on any two items. Two prefixes with one fingerprint are
one item to the server: a candidate's count then includes the other's holders, with probability
about ``2^-31`` per pair (accuracy, never privacy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.channel.hashed import HASHED_D
from pldp.errors import ParameterError
from pldp.text import normalize_text
from pldp.xxh32 import xxh32_rows

__all__ = ["FINGERPRINTS", "answer_rows", "fingerprints", "shown"]

#: The fingerprints' range: local hashing's largest number of items (:data:`pldp.channel.hashed.HASHED_D`).
FINGERPRINTS = HASHED_D[1]


def answer_rows(answers: Sequence[Any], max_bytes: int) -> np.ndarray:
    """The answers as an ``(n, max_bytes)`` ``uint8`` array: text normalised and encoded, bytes as given,
    each cut to ``max_bytes`` bytes and padded with ``0x00``.

    A :class:`~pldp.errors.ParameterError` names the first answer that is neither text nor bytes,
    empty, or holds a byte ``0x00`` (the padding); its content is never repeated.

    Examples
    --------
    >>> answer_rows(["ab", b"xyz12"], 4).tolist()
    [[97, 98, 0, 0], [120, 121, 122, 49]]
    """
    out = np.zeros((len(answers), max_bytes), dtype=np.uint8)
    for i, answer in enumerate(answers):
        if isinstance(answer, (bytes, bytearray)):
            raw = bytes(answer)
            if not raw:
                raise ParameterError(f"answer {i} is empty")
        elif isinstance(answer, str):
            try:
                raw = normalize_text(answer, limit=None).encode("utf-8")  # cut below, not refused
            except ParameterError as err:
                raise ParameterError(f"answer {i}: {err}") from None
        else:
            raise ParameterError(f"answer {i} is a {type(answer).__name__}: answers are text or bytes")
        if 0 in raw:
            raise ParameterError(f"answer {i} holds a byte 0x00, which marks the end of an answer")
        cut = raw[:max_bytes]
        out[i, : len(cut)] = np.frombuffer(cut, dtype=np.uint8)
    return out


def fingerprints(prefixes: np.ndarray) -> np.ndarray:
    """``XXH32(row, 0) mod (2**31 - 1)`` of each row of an ``(m, j)`` ``uint8`` array of prefixes, ``int64``
    (:func:`pldp.xxh32.xxh32_rows`, every row at once).

    Examples
    --------
    >>> fingerprints(np.frombuffer(b"abc", dtype=np.uint8)[None, :]).tolist()   # XXH32("abc") = 0x32D153FF
    [852579327]
    """
    h = xxh32_rows(np.asarray(prefixes, dtype=np.uint8)).astype(np.int64)
    h %= FINGERPRINTS
    return h


def shown(row: np.ndarray | bytes) -> str | bytes:
    """A discovered row as the answer it stands for: the padding dropped, then UTF-8 text when it
    decodes (a row cut inside a character, or bytes that are not UTF-8, stay bytes)."""
    raw = bytes(row).rstrip(b"\x00")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw

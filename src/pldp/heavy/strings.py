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

The rows and fingerprints are the sampler's own (:mod:`pldp.channel.heavy`, which both device clients
run); this module gives them to the protocols, with :func:`shown`, a discovered row as an answer.
"""

from __future__ import annotations

import numpy as np

from pldp.channel.heavy import FINGERPRINTS, answer_rows, fingerprints

__all__ = ["FINGERPRINTS", "answer_rows", "fingerprints", "shown"]


def shown(row: np.ndarray | bytes) -> str | bytes:
    """A discovered row as the answer it stands for: the padding dropped, then UTF-8 text when it
    decodes (a row cut inside a character, or bytes that are not UTF-8, stay bytes)."""
    raw = bytes(row).rstrip(b"\x00")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw

"""Uniform words as a sampler program reads them: a buffered source, and per-report cursors.

A report's program (``docs/wire-format.md`` §2) reads its words in order: the 4 words of the
report id, then what its nodes draw. A batch of reports is drawn from one block of words, each
report reading from its own offset (:class:`Cursor`), so that a batch gives the same bytes as the
same reports made one at a time. Rejection sampling (padding's uniform slot) may need a word more
than planned; then the batch is redrawn report by report from a :class:`WordStream`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.channel.sampling import uniform_below
from pldp.errors import ParameterError

__all__ = ["Cursor", "RejectedError", "WordSource", "WordStream"]

#: A source of randomness: ``source(n)`` returns ``n`` uniform words as a ``uint32`` array.
WordSource = Callable[[int], np.ndarray]


class RejectedError(Exception):
    """A rejection-sampling draw needed another word: redo the batch one report at a time."""


class WordStream:
    """Buffered reading of a word source, with look-ahead."""

    def __init__(self, source: WordSource) -> None:
        self._source = source
        self._buf = np.empty(0, dtype=np.uint32)

    def peek(self, n: int) -> np.ndarray:
        """The next ``n`` words, without consuming them."""
        if self._buf.size < n:
            more = np.asarray(self._source(n - self._buf.size), dtype=np.uint32).reshape(-1)
            if more.size != n - self._buf.size:
                raise ParameterError("the word source returned the wrong number of words")
            self._buf = np.concatenate([self._buf, more])
        return self._buf[:n]

    def advance(self, n: int) -> None:
        """Consume ``n`` words."""
        self._buf = self._buf[n:]

    def uniforms(self, bounds: Any) -> np.ndarray:
        """Exact uniform integers below each of ``bounds`` in turn (``int64``), by rejection
        (:func:`~pldp.channel.sampling.uniform_below`): each draw consumes words until one is
        accepted, a rejected word replaced by the next. The words of the draws left are read at once,
        up to the first rejected one.

        Examples
        --------
        >>> words = iter([7, 2**32 - 1, 9])   # 2**32 - 1 is rejected below 3
        >>> WordStream(lambda n: np.array([next(words) for _ in range(n)])).uniforms([10, 3]).tolist()
        [7, 0]
        """
        m = np.asarray(bounds, dtype=np.int64).reshape(-1)
        out = np.empty(m.size, dtype=np.int64)
        t = 0
        while t < m.size:
            v, ok = uniform_below(self.peek(m.size - t), m[t:])
            good = int(np.argmin(ok)) if not ok.all() else m.size - t
            out[t : t + good] = v[:good]
            self.advance(good + (t + good < m.size))  # a rejected word is consumed and replaced
            t += good
        return out


class Cursor:
    """Per-report positions in a block of words: ``take(rows, k)`` gives each row its next ``k``."""

    def __init__(self, words: np.ndarray, starts: np.ndarray) -> None:
        self.words = words
        self.pos = starts.astype(np.int64)

    def take(self, rows: np.ndarray, k: int) -> np.ndarray:
        """The next ``k`` words of each report in ``rows``, shape ``(len(rows), k)``."""
        idx = self.pos[rows, None] + np.arange(k)
        self.pos[rows] += k
        return self.words[idx]

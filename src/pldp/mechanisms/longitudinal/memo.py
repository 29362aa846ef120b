"""The memo of a simulated population: one permanent randomized response per (user, value), kept across rounds.

What each device keeps for itself (``docs/wire-format.md`` §2, the memo node), held here for many
simulated users at once, so that the library's rounds reuse the permanent responses exactly as the
clients do: a user who reports a value again reuses its permanent response; a user whose value
changes draws one for the new value, and gets her old one back if she returns to the old value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError

__all__ = ["Memo"]


@dataclass(frozen=True, eq=False)
class Memo:
    """Permanent responses by (user, value), immutable: :meth:`with_responses` returns a new memo.

    Attributes
    ----------
    fingerprint : str
        The fingerprint of the oracle whose permanent responses these are (another oracle refuses
        the memo: its :math:`\\varepsilon_\\infty` claim would not cover them).
    d : int
        Values per user.
    keys : ndarray of int64, sorted
        ``user * d + value`` of each permanent response held.
    responses : ndarray
        The responses, row ``i`` for ``keys[i]``: an item (direct chains) or a bit-packed row (unary).
    """

    fingerprint: str
    d: int
    keys: np.ndarray
    responses: np.ndarray

    @classmethod
    def empty(cls, fingerprint: str, d: int, row_shape: tuple[int, ...], dtype: type) -> Memo:
        """A memo that holds nothing yet."""
        return cls(fingerprint, d, np.empty(0, dtype=np.int64), np.empty((0, *row_shape), dtype=dtype))

    def __len__(self) -> int:
        return int(self.keys.size)

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(index, found)``: where each key's response sits in :attr:`responses`, and whether it is held."""
        idx = np.searchsorted(self.keys, keys)
        found = idx < self.keys.size
        found[found] = self.keys[idx[found]] == keys[found]
        return idx, found

    def with_responses(self, keys: np.ndarray, responses: np.ndarray) -> Memo:
        """A memo holding these too (``keys`` distinct and not held yet)."""
        if not keys.size:
            return self
        all_keys = np.concatenate([self.keys, keys])
        order = np.argsort(all_keys, kind="stable")
        return Memo(self.fingerprint, self.d, all_keys[order], np.concatenate([self.responses, responses])[order])

    def check(self, fingerprint: str) -> Memo:
        """This memo, if it holds the permanent responses of the oracle of ``fingerprint``."""
        if fingerprint != self.fingerprint:
            raise ParameterError(
                "the memo holds another mechanism's permanent responses (fingerprint "
                f"{self.fingerprint}, not {fingerprint}): reusing them would void both claims"
            )
        return self

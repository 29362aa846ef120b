"""Populations of free-text answers for the heavy-hitter tests."""

from __future__ import annotations

import numpy as np


def population(shares: dict[str, float], n: int, rng: np.random.Generator, tail: int = 0) -> list[str]:
    """``n`` answers: each planted string at its share, the rest ``tail`` distinct random strings."""
    out = [s for s, share in shares.items() for _ in range(round(share * n))]
    rest = n - len(out)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out += ["".join(rng.choice(letters, 6)) for _ in range(min(rest, tail))] * (rest // max(tail, 1) + 1)
    return out[:n]

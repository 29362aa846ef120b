"""Synthetic data as the papers describe it."""

from __future__ import annotations

import numpy as np

from pldp._validation import check_int
from pldp.errors import ParameterError

__all__ = ["zipf_counts", "zipf_items", "zipf_probabilities"]


def zipf_probabilities(d: int, exponent: float = 2.0) -> np.ndarray:
    """:math:`p_k \\propto k^{-a}` for ranks ``k = 1..d`` (item index ``k - 1``).

    Sampling Zipf(``a``) and keeping only values ``<= d`` (the "filtering" of Li et al.,
    Sec. 7.1) gives exactly this truncated distribution.
    """
    d = check_int(d, "d", 1)
    if not np.isfinite(exponent) or exponent <= 0:
        raise ParameterError(f"exponent must be finite and > 0, got {exponent!r}")
    w = np.arange(1, d + 1, dtype=float) ** -float(exponent)
    return w / w.sum()


def zipf_items(n: int, d: int, rng: np.random.Generator, exponent: float = 2.0) -> np.ndarray:
    """``n`` users' item indices from the truncated Zipf law (IPRR's Zipf: ``d=20, n=100_000``)."""
    n = check_int(n, "n", 0)
    return rng.choice(d, size=n, p=zipf_probabilities(d, exponent))


def zipf_counts(n: int, d: int, rng: np.random.Generator, exponent: float = 2.0) -> np.ndarray:
    """Item counts of ``n`` users drawn from the truncated Zipf law (one multinomial)."""
    n = check_int(n, "n", 0)
    return rng.multinomial(n, zipf_probabilities(d, exponent))


def mpldp_dataset(n: int, k: list[int] | tuple[int, ...]) -> np.ndarray:
    """MPLDP Algorithm 4: ``n`` users, attribute ``i`` with ``k_i`` values in equal consecutive blocks.

    User ``m`` (1-based) holds value ``j`` of attribute ``i`` when
    ``round((j-1) n / k_i) + 1 <= m <= round(j n / k_i)``: every value has about ``n / k_i``
    holders and the rows are sorted, so levels must be assigned at random, not in blocks
    (ERRATA MPLDP-2). Returns an ``(n, l)`` int array of value indices.
    """
    n = check_int(n, "n", 1)
    out = np.empty((n, len(k)), dtype=np.int64)
    for i, ki in enumerate(k):
        ki = check_int(ki, "k", 1)
        bounds = np.round(np.arange(ki + 1) * n / ki).astype(np.int64)
        out[:, i] = np.repeat(np.arange(ki), np.diff(bounds))
    return out

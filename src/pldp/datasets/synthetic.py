"""Synthetic data as the papers describe it."""

from __future__ import annotations

import numpy as np

from pldp._validation import check_int
from pldp.errors import ParameterError

__all__ = ["mpldp_dataset", "power_law_items", "uniform_items", "zipf_counts", "zipf_items", "zipf_probabilities"]


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


def power_law_items(
    n: int, m: int, rng: np.random.Generator, alpha: float = 2.0, method: str = "discrete"
) -> np.ndarray:
    """``n`` users' item indices in ``0..m-1`` from a power law (IDUE's synthetic data).

    Gu et al. (ICDE 2020, Sec. VII) describe "generating random values from the power-law
    distribution with the law's exponent alpha=2, then scaling and rounding into an integer in
    {1..m}". The paper does not give the scaling, so two precise readings are offered.
    Value ``v`` in ``1..m`` becomes item index ``v - 1``.

    ``method="discrete"`` (the default) is the power law restricted to the integers
    ``1..m``: :math:`P(v) \\propto v^{-\\alpha}`. Item ``0`` is the most frequent, and this is the
    same law as :func:`zipf_probabilities` with ``exponent=alpha``. The distribution does not
    depend on ``n``.

    ``method="scaled"`` draws continuous power-law values :math:`X \\ge 1` with density
    :math:`(\\alpha - 1) x^{-\\alpha}` (Pareto, which needs ``alpha > 1``). It then maps
    ``[min X, max X]`` linearly onto ``[1, m]`` and rounds. Because the scale depends on the
    sample maximum, the distribution depends on ``n``. With ``alpha = 2`` almost every user
    lands on item ``0``.

    >>> items = power_law_items(10_000, 50, np.random.default_rng(0))
    >>> items.shape, bool(items.min() >= 0 and items.max() < 50)
    ((10000,), True)
    """
    n = check_int(n, "n", 0)
    m = check_int(m, "m", 1)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ParameterError(f"alpha must be finite and > 0, got {alpha!r}")
    if method == "discrete":
        return rng.choice(m, size=n, p=zipf_probabilities(m, alpha)).astype(np.int64)
    if method == "scaled":
        if alpha <= 1:
            raise ParameterError(f"method='scaled' needs alpha > 1 (a normalisable Pareto density), got {alpha!r}")
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        x = 1.0 + rng.pareto(alpha - 1.0, size=n)
        span = x.max() - x.min()
        unit = (x - x.min()) / span if span > 0 else np.zeros(n)
        return np.rint(unit * (m - 1)).astype(np.int64)
    raise ParameterError(f"method must be 'discrete' or 'scaled', got {method!r}")


def uniform_items(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` users' item indices drawn uniformly from ``0..m-1`` (IDUE's uniform data).

    >>> uniform_items(5, 3, np.random.default_rng(0)).tolist()
    [2, 1, 1, 0, 0]
    """
    n = check_int(n, "n", 0)
    m = check_int(m, "m", 1)
    return rng.integers(0, m, size=n, dtype=np.int64)

"""The unbiased (empirical) estimator of pure protocols."""

from __future__ import annotations

import numpy as np

__all__ = ["invert", "plugin_variance"]


def invert(counts: np.ndarray, n: int, p_star: np.ndarray, q_star: np.ndarray) -> np.ndarray:
    """Unbiased frequency estimate of a pure protocol.

    .. math:: \\hat f_y = \\frac{C_y / n - q^*_y}{p^*_y - q^*_y}

    For IPRR this is eq. 12 of Li et al., :math:`\\hat p_x = \\hat m_x / S - r_x`, since
    :math:`p^* - q^* = S` and :math:`q^* = r S`; for KRR and OUE it is the estimator of
    Wang et al. (USENIX Security 2017).
    """
    return (counts / n - q_star) / (p_star - q_star)


def plugin_variance(m: np.ndarray, n: int, p_star: np.ndarray, q_star: np.ndarray) -> np.ndarray:
    """Variance of :func:`invert` when reports are i.i.d. with support probability ``m``.

    Each support count is :math:`\\mathrm{Bin}(n, m_y)` when users are drawn i.i.d. from the
    population (Li et al., proof of Theorem 3), so
    :math:`\\mathrm{Var}(\\hat f_y) = m_y (1 - m_y) / (n (p^*_y - q^*_y)^2)`. Used with the
    observed ``m = C / n`` it is the usual plug-in variance.
    """
    m = np.clip(m, 0.0, 1.0)
    return m * (1.0 - m) / (n * (p_star - q_star) ** 2)

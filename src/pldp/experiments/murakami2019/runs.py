"""Murakami & Kawamoto 2019 experiments: the mechanisms, the populations, the closed-form MSE and one repeat.

A repeat draws ``n`` users i.i.d. from a population ``p`` (one multinomial, shared by every method
of the repeat), turns their counts into each mechanism's tally (``simulate``, or perturb + tally),
and scores the unbiased estimate by its squared error summed over the items,
:math:`\\mathrm{MSE} = \\sum_y (\\hat f_y - p_y)^2` (the expected :math:`l_2` loss; the mean over
the items is this divided by ``d``). "non-private" is the empirical distribution of the ``n``
users, the best any mechanism can do from them.

The closed form. Each report supports ``y`` with probability :math:`m_y = q^*_y + \\delta_y p_y`
independently of the other users, so the support count is exactly :math:`\\mathrm{Bin}(n, m_y)` and
:math:`\\sigma_y^2 = \\mathrm{Var}[\\hat f_y] = m_y(1 - m_y)/(n \\delta_y^2)` (:func:`pldp.theory.item_variance`,
``model="iid"``; for "non-private" :math:`p_y(1 - p_y)/n`); the expected MSE is their sum
(:func:`pldp.theory.expected_l2`).

The spread of one repeat's MSE (:func:`mse_sd`), for the checks' standard errors: with the errors
Gaussian of covariance :math:`\\Sigma`,
:math:`\\mathrm{Var}[\\sum_y e_y^2] = 2\\,\\mathrm{tr}(\\Sigma^2) = 2\\sum_y \\sigma_y^4 + 2\\sum_{x \\ne y} c_{xy}^2`,
and each count's fourth cumulant adds :math:`\\kappa_y \\sigma_y^4` with the binomial's excess kurtosis
:math:`\\kappa_y = (1 - 6 m_y(1 - m_y))/(n m_y(1 - m_y))`. The covariances of one report's supports:
a direct-encoding report supports one item, so :math:`c_{xy} = -m_x m_y/(n \\delta_x \\delta_y)`; a
unary report's bits are independent given the input, and
:math:`\\Pr[\\text{both}] - m_x m_y = -\\delta_x \\delta_y p_x p_y`, so :math:`c_{xy} = -p_x p_y / n`, as
for the empirical distribution. Both are :math:`-a_x a_y / n` with :math:`a = m/\\delta` or :math:`a = p`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from pldp.datasets import load_adult_education_country, zipf_probabilities
from pldp.experiments.paths import observe, path_of
from pldp.mechanisms import KRR, OUE, RAPPOR, URAP, URR
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import DirectEncoding
from pldp.theory import expected_l2, item_variance

__all__ = [
    "METHODS",
    "NON_PRIVATE",
    "PAPER",
    "SENSITIVE_SEED",
    "mechanism",
    "mse_sd",
    "population",
    "run_mse",
    "sensitive_mask",
    "theory_mse",
]

PAPER = "murakami2019"
#: The empirical distribution of the users (no privacy).
NON_PRIVATE = "non-private"
#: The methods compared: three LDP oracles, the two utility-optimized ones (uRAP at theta = 1/2 and at
#: RAPPOR's theta = e^(eps/2) / (e^(eps/2) + 1)), and no privacy.
METHODS: tuple[str, ...] = ("RR", "RAPPOR", "OUE", "uRR", "uRAP", "uRAP-RAPPOR", NON_PRIVATE)
#: The seed of the permutation whose first ``|X_S|`` items are sensitive (:func:`sensitive_mask`).
SENSITIVE_SEED = 2019


@functools.cache
def population(data: str, d: int = 0, exponent: float = 1.0) -> np.ndarray:
    """The true distribution ``p`` (read-only): ``"zipf"`` over ``d`` items, :math:`p_k \\propto k^{-a}`,
    or ``"adult"``, the frequencies of Adult's 484 (education, native-country) pairs over its 48,842 rows."""
    if data == "zipf":
        p = zipf_probabilities(d, exponent)
    elif data == "adult":
        counts = load_adult_education_country().counts()
        p = counts / counts.sum()
    else:
        raise KeyError(data)
    p.setflags(write=False)
    return p


@functools.cache
def sensitive_mask(d: int, size: int) -> np.ndarray:
    """``X_S``: the first ``size`` items of a permutation of ``0..d-1`` seeded by ``(SENSITIVE_SEED, d)``
    (a random subset, nested in ``size``), read-only."""
    order = np.random.default_rng([SENSITIVE_SEED, d]).permutation(d)
    mask = np.zeros(d, dtype=bool)
    mask[order[:size]] = True
    mask.setflags(write=False)
    return mask


@functools.cache
def mechanism(name: str, epsilon: float, d: int, size: int) -> Mechanism:
    """The mechanism ``name`` (one of :data:`METHODS` but "non-private") at ``epsilon`` over ``d`` items,
    the utility-optimized ones with :func:`sensitive_mask` ``(d, size)`` (cached)."""
    mask = sensitive_mask(d, size)
    h = math.exp(epsilon / 2)
    makers = {
        "RR": lambda: KRR(epsilon, d),
        "RAPPOR": lambda: RAPPOR(epsilon, d),
        "OUE": lambda: OUE(epsilon, d),
        "uRR": lambda: URR(epsilon, mask),
        "uRAP": lambda: URAP(epsilon, mask),
        "uRAP-RAPPOR": lambda: URAP(epsilon, mask, theta=h / (h + 1)),
    }
    return makers[name]()


def _moments(mech: Mechanism | None, p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: the support probability ``m``, the gap ``delta`` and the ``a`` of the covariances
    ``-a_x a_y / n`` (module docstring); ``None`` is the empirical distribution."""
    if mech is None:
        return p, np.ones_like(p), p
    p_star, q_star = (np.asarray(s, dtype=float) for s in mech.support)
    delta = p_star - q_star
    m = q_star + delta * p
    return m, delta, (m / delta if isinstance(mech, DirectEncoding) else p)


def theory_mse(mech: Mechanism | None, p: np.ndarray, n: int) -> float:
    """The expected MSE (summed over items) of ``mech``'s unbiased estimate from ``n`` i.i.d. users:
    :func:`pldp.theory.expected_l2`, or :math:`\\sum_y p_y(1 - p_y)/n` for the empirical distribution (``None``)."""
    if mech is None:
        return float(np.sum(p * (1 - p)) / n)
    return expected_l2(mech, p, n, "iid")


def mse_sd(mech: Mechanism | None, p: np.ndarray, n: int) -> float:
    """Standard deviation of one repeat's MSE (module docstring): Gaussian errors with the exact
    covariances, and each count's binomial fourth cumulant."""
    m, _, a = _moments(mech, p)
    var = p * (1 - p) / n if mech is None else item_variance(mech, p, n, "iid")
    s = m * (1 - m)
    kurt = np.divide(1 - 6 * s, n * s, out=np.zeros_like(s), where=s > 0)
    a2 = a**2
    cross = (float(a2.sum()) ** 2 - float(np.sum(a2**2))) / n**2
    return math.sqrt(float(np.sum(var**2 * (2 + kurt))) + 2 * cross)


def run_mse(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat: ``n`` users from the population, every method's MSE and its closed form.

    Setting keys: ``data`` (``"zipf"`` with ``d`` and ``exponent``, or ``"adult"``), ``n`` (users; for
    Adult its 48,842 rows when absent), ``sensitive`` (``|X_S|``) and ``epsilon``. Rows: ``method``,
    ``mse``, ``theory`` (:func:`theory_mse`), ``mse_sd`` (:func:`mse_sd`), ``d``, ``n`` and
    ``sensitive_mass`` (the population's mass on ``X_S``).
    """
    p = population(str(setting["data"]), int(setting.get("d", 0)), float(setting.get("exponent", 1.0)))
    d, size, eps = p.size, int(setting["sensitive"]), float(setting["epsilon"])
    n = int(setting.get("n", load_adult_education_country().n))
    counts = rng.multinomial(n, p)
    mass = float(p[sensitive_mask(d, size)].sum())
    rows = []
    for name in METHODS:
        mech = None if name == NON_PRIVATE else mechanism(name, eps, d, size)
        if mech is None:
            est = counts / n
        else:
            est = mech.estimate(observe(mech, counts, rng=rng, path=path_of(setting)), "unbiased").frequencies
        rows.append(
            {
                "method": name,
                "mse": float(np.sum((est - p) ** 2)),
                "theory": theory_mse(mech, p, n),
                "mse_sd": mse_sd(mech, p, n),
                "d": d,
                "n": n,
                "sensitive_mass": mass,
            }
        )
    return rows

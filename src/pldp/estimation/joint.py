"""The joint test of the histogram of ones, and what the detection screen can see.

The per-report flag (:func:`pldp.estimation.unary_laws.flag_region`) sees reports in the tails of
the honest laws only; fakes just below the region pass one by one. :func:`joint_test` tests the
whole histogram of ones of the unflagged reports against the honest law (:func:`honest_law`:
exact, or the levels' mixture fitted): a binomial scan of every count and a likelihood-ratio test,
at most ``alpha`` false alarms without fakes. :func:`detection_power` states what the screen can
see at a campaign's ``n``.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from pldp.estimation.unary_laws import DEFAULT_ALPHA, UnaryLaws, flag_region

__all__ = ["HONEST_LAW_STEPS", "NO_POWER_SHARE", "POWER", "detection_power", "honest_law", "joint_test"]

#: SQUAREM cycles (3 EM steps each) of :func:`honest_law`'s fit of unknown weights (it stops
#: earlier once the likelihood settles).
HONEST_LAW_STEPS = 60
#: The power :func:`detection_power` states the smallest detected fake share at.
POWER = 0.9
#: A fake share above which the screen is said to have no power (the attacks measured: 1-5 %).
NO_POWER_SHARE = 0.05


def honest_law(laws: UnaryLaws, hist: np.ndarray, keep: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The honest law of the number of ones a tally is tested against, and its free parameters.

    Exact (:meth:`UnaryLaws.mixture`, 0 free parameters) for one item class with known weights;
    else the maximum-likelihood mixture of the laws of every component and class
    (:meth:`UnaryLaws.laws`) fitted to ``hist`` on the counts ``keep`` (the unflagged ones:
    truncated data) by EM accelerated by SQUAREM, at most :data:`HONEST_LAW_STEPS` cycles (the likelihood, not the
    weights, converges: the levels' laws are nearly collinear), with their number less one free
    parameters.
    """
    mix = laws.mixture()
    if mix is not None:
        return mix, 0
    comps = laws.laws()
    size = comps.shape[1]
    inside, part, mass, start = _truncated(laws, keep, size)
    obs = np.asarray(hist, dtype=float)[:size][inside]
    total = max(float(obs.sum()), 1.0)

    # Each weight vector's honest probabilities w @ part (floored) are computed once: its
    # log-likelihood and, for the cycle's start, its EM step share them. ``.dot`` rather than
    # ``@``: the same BLAS call on these contiguous arrays (the same bits), without matmul's
    # dispatch, which costs more than the product at these sizes. The weights themselves (one per
    # component and class, a handful) are Python floats: numpy's ufunc calls cost more than their
    # arithmetic, which is the same IEEE arithmetic in the same order (:func:`_total`, :func:`_dot`).
    mass_w = mass.tolist()

    def fitted(w: list[float]) -> np.ndarray:
        return np.maximum(np.array(w).dot(part), 1e-300)

    def loglik(w: list[float], probs: np.ndarray) -> float:
        return float(obs.dot(np.log(probs))) - total * math.log(max(_dot(w, mass_w), 1e-300))

    def step(
        w: list[float], probs: np.ndarray
    ) -> list[float]:  # EM for truncated data: each component's mass outside put back
        new = [x * y / z for x, y, z in zip(w, part.dot(obs / probs).tolist(), mass_w, strict=True)]
        norm = _total(new)
        return [x / norm for x in new]

    w0, probs, log_probs, log_mass = start  # equal weights, and what loglik needs of them
    w = w0.tolist()
    last = float(obs.dot(log_probs)) - total * log_mass
    for _ in range(HONEST_LAW_STEPS):  # SQUAREM cycles (Varadhan and Roland), each checked to increase
        w1 = step(w, probs)
        w2 = step(w1, fitted(w1))
        r = [y - x for x, y in zip(w, w1, strict=True)]
        v = [z - 2 * y + x for x, y, z in zip(w, w1, w2, strict=True)]
        a = -float(math.sqrt(_dot(r, r)) / max(math.sqrt(_dot(v, v)), 1e-300))
        twice, square = 2 * a, a * a
        jump = [max(x - twice * y + square * z, 0.0) for x, y, z in zip(w, r, v, strict=True)]
        mass_jump = _total(jump)
        if mass_jump > 0:
            jump = [x / mass_jump for x in jump]
            jump = step(jump, fitted(jump))
        else:
            jump = w2
        probs = fitted(jump)
        value = loglik(jump, probs)
        probs2 = fitted(w2)
        if not value >= (fallback := loglik(w2, probs2)):
            jump, value, probs = w2, fallback, probs2
        w, done = jump, value - last < 1e-3  # G = 2 log-likelihood ratio: 1e-3 is nothing on chi-square's scale
        last = value
        if done:
            break
    return np.asarray(np.array(w) @ comps), comps.shape[0] - 1


def _total(values: list[float]) -> float:
    """``np.sum`` of a list of floats, bit for bit: numpy adds fewer than 8 in order (the base case
    of its pairwise summation), so does this; more go to numpy."""
    if len(values) < 8:
        return functools.reduce(operator.add, values)
    return float(np.add.reduce(np.array(values)))


def _dot(x: list[float], y: list[float]) -> float:
    """``np.dot`` of two lists of floats: fewer than 8 products added in order, as OpenBLAS's ``ddot``
    does (bit for bit on the machines measured; elsewhere within rounding); more go to numpy."""
    if len(x) < 8:
        return functools.reduce(operator.add, [a * b for a, b in zip(x, y, strict=True)])
    return float(np.array(x).dot(np.array(y)))


#: How many truncations (sets of kept counts) :func:`_truncated` keeps per law: the flag region's
#: at each level asked for, and those with the joint test's suspect counts out.
_TRUNCATIONS = 64


def _truncated(
    laws: UnaryLaws, keep: np.ndarray | None, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """What :func:`honest_law`'s fit on the counts ``keep`` needs that does not depend on the
    tally, cached on ``laws``: ``(inside, part, mass, start)``, the laws on the kept counts, their
    masses there (floored at 1e-300) and, at the equal weights ``w`` the fit starts from, ``(w,
    w @ part, log(w @ part), log(w @ mass))`` (floored at 1e-300 as the fit floors them)."""
    inside = np.ones(size, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)[:size]

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
        part = laws.laws()[:, inside]
        mass = np.maximum(part.sum(axis=1), 1e-300)
        w = np.full(part.shape[0], 1.0 / part.shape[0])
        probs = np.maximum(w.dot(part), 1e-300)
        start = (w, probs, np.log(probs), math.log(max(float(w.dot(mass)), 1e-300)))
        return (inside.copy(), part, mass, start)

    cached: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, float]]
    cached = laws.memo(("truncated", inside.tobytes()), build, most=_TRUNCATIONS)
    return cached


def _binom_ppf(q: float, n: int, p: float) -> int:
    """The smallest ``k`` with ``Pr[Bin(n, p) <= k] >= q`` (scipy.special, without scipy.stats' overhead)."""
    from scipy.special import bdtr, bdtrik

    if n <= 0 or p <= 0:
        return 0
    if p >= 1:
        return n
    guess = float(bdtrik(q, n, p))
    k = min(max(int(np.floor(guess)) if np.isfinite(guess) else 0, 0), n)
    while k < n and bdtr(k, n, p) < q:
        k += 1
    while k > 0 and bdtr(k - 1, n, p) >= q:
        k -= 1
    return k


def _critical(n: int, p: float, level: float) -> int:
    """The smallest number of reports ``c`` with ``Pr[Bin(n, p) >= c] < level``."""
    return _binom_ppf(1.0 - level, n, p) + 1


@functools.cache
def _tails() -> tuple[Any, Any]:
    """scipy's ``bdtrc`` and ``chdtrc``, imported once on first use (``import pldp`` and the
    clients load without scipy; a ``from`` import per call costs more than the test's arithmetic)."""
    from scipy.special import bdtrc, chdtrc

    return bdtrc, chdtrc


def joint_test(
    hist: np.ndarray, law: np.ndarray, alpha: float, free: int = 0, keep: np.ndarray | None = None
) -> dict[str, Any]:
    """The joint test of the whole histogram of ones against the honest ``law``, at level ``alpha``.

    Two parts at ``alpha / 2`` each: the **scan** (any count holds more reports than ``Bin(N,
    P_s)`` allows at level ``alpha / (2 (d + 1))``, exact binomial tails, Bonferroni over the
    counts: a mass of fakes at one count, flagged or not) and the **likelihood ratio** (G test)
    over the counts, the tails of expectation below 5 pooled (a deviation spread over counts),
    against chi-square with ``bins - 1 - free`` degrees of freedom. With ``keep`` (the unflagged
    counts), the reports at the other counts are left out and the law truncated to ``keep``: the
    flagged reports are dropped anyway, and fakes there must not move the test. Returns ``joint_p`` (the
    combined p-value, ``2 min``), ``joint_fired`` and ``worst_ones``: the count above its honest
    expectation with the smallest binomial tail (None when no count is above it).
    """
    bdtrc, chdtrc = _tails()
    h = np.array(hist, dtype=float)
    size = h.size
    p = np.zeros(size)
    m = min(size, law.size)
    p[:m] = law[:m]
    if keep is not None:
        if len(keep) >= size:
            inside = np.asarray(keep[:size], dtype=bool)
        else:
            inside = np.zeros(size, dtype=bool)
            inside[: len(keep)] = keep
        h *= inside
        p *= inside
    mass = p.sum()
    if mass > 0:
        p /= mass
    n = int(h.sum())
    if n == 0:
        return {"joint_p": 1.0, "joint_fired": False, "worst_ones": None}
    expected = n * p
    # Pr[Bin(n, P_s) >= h_s] at the counts above their expectation only: at the others (h_s <=
    # floor(n P_s), the binomial's median or below) it is at least 1/2, so it neither makes the
    # scan's Bonferroni p-value (size / 2 >= 1) nor is the worst count.
    (over,) = (h > expected).nonzero()
    tail = bdtrc(h[over] - 1, n, p[over])
    p_scan = min(1.0, float(tail.min()) * size) if over.size else 1.0
    (big,) = (expected >= 5).nonzero()
    p_g = 1.0
    if big.size >= 2:  # the tails of expectation below 5 pooled into the end cells
        lo, hi = int(big[0]), int(big[-1])
        obs = h[lo : hi + 1].copy()
        exp = expected[lo : hi + 1].copy()
        obs[0], obs[-1] = h[: lo + 1].sum(), h[hi:].sum()
        exp[0], exp[-1] = expected[: lo + 1].sum(), expected[hi:].sum()
        seen = obs > 0  # some: the n > 0 reports are in these cells
        obs_seen, exp_seen = (obs, exp) if seen.all() else (obs[seen], exp[seen])  # all, at a campaign's n
        if (exp_seen <= 0).any():
            p_g = 0.0
        elif obs.size - 1 - free >= 1:
            p_g = float(chdtrc(obs.size - 1 - free, 2.0 * float(obs_seen.dot(np.log(obs_seen / exp_seen)))))
    joint_p = min(1.0, 2.0 * min(p_scan, p_g))
    fired = joint_p < alpha
    worst = int(over[tail.argmin()]) if over.size else None
    return {"joint_p": joint_p, "joint_fired": bool(fired), "worst_ones": worst}


def detection_power(laws: UnaryLaws, n: int, alpha: float = DEFAULT_ALPHA, power: float = POWER) -> dict[str, Any]:
    """What the screen can see at ``n`` reports: the smallest fake share it detects with ``power``.

    Against the best-hiding attacker that the counts can see, the one sending the **largest
    unflagged number of ones** ``s*`` (every fake report at ``s*``: most bits set, none flagged),
    the joint test's scan fires once the count ``s*`` holds more than its critical number of
    reports; the smallest share ``beta`` with ``Pr[Bin(n (1 - beta), P) + n beta >= c] >=
    power`` is ``min_share`` (``P`` the honest probability of ``s*``, the mixture of the laws with
    their weights, or their largest where the shares are unknown). ``has_power`` is ``min_share
    <=`` :data:`NO_POWER_SHARE`. An attacker drawing each fake's count from the honest law
    (``"adaptive"``) leaves the histogram honest: no test of the counts sees it at any ``n``
    (``adaptive``: None), and it sets fewer target bits. ``flag_from``: the smallest flagged count
    above the mean (None: no count is flagged, the per-report screen sees nothing at this
    mechanism's budget and ``d``).
    """
    key = ("power", n, float(alpha), float(power))
    # the last one asked for is kept (a campaign's n changes slowly)
    return dict(laws.last("power", key, lambda: _detection_power(laws, n, alpha, power)))


def _detection_power(laws: UnaryLaws, n: int, alpha: float, power: float) -> dict[str, Any]:
    region = flag_region(laws, alpha)
    comps = laws.laws()
    mix = laws.mixture()
    law = mix if mix is not None else comps.max(axis=0)
    mean = float(np.arange(law.size) @ (law / law.sum()))
    above = np.flatnonzero(region & (np.arange(region.size) > mean))
    flag_from = int(above[0]) if above.size else None
    unflagged = np.flatnonzero(~region)
    s_star = int(unflagged.max())
    prob = float(law[s_star])
    out: dict[str, Any] = {"alpha": alpha, "power": power, "flag_from": flag_from, "largest_unflagged": s_star,
                           "adaptive": None}  # fmt: skip
    if n <= 0:
        return {**out, "min_share": None, "has_power": False}
    crit = _critical(n, prob, alpha / (2 * region.size))
    beta = 0.0
    for _ in range(4):  # fixed point: the honest count at share 1 - beta
        honest = max(round(n * (1 - beta)), 0)
        low = _binom_ppf(1 - power, honest, prob)
        beta = min(1.0, max(crit - low, 1) / n)
    return {**out, "min_share": beta, "has_power": beta <= NO_POWER_SHARE}

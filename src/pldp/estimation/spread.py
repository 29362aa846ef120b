"""Equal influence per report: a combination of budget levels that spread claims cannot game.

Protocols whose users claim their budget level in the clear (RCF, APLDP, LLevels; MPLDP per
attribute) estimate the item frequencies per level and combine them. A fake user chooses its level. Under any
combination with weights :math:`w_g` a fake claiming level ``g`` and supporting item ``i``
moves the estimate by about :math:`w_g s_g / N_g`, with :math:`N_g` the users claiming ``g``
and :math:`s_g = (1 - q^*_g)/(p^*_g - q^*_g)` the most one report moves the level's unbiased
estimate (in units of :math:`1/N_g`). The attacker who knows the weights puts its fakes where
that is largest: with the minimum-variance weights, the largest budget; with the bounded-influence
``"huber"`` combination, the few levels of most weight.

**The estimator.** Weights that give every report the same influence,

.. math::

    w_g \\propto N_g\\, r_g, \\qquad r_g = \\frac{p^*_g - q^*_g}{1 - q^*_g} = 1/s_g,

with :math:`N_g` the *claimed* counts (fakes included). Then

.. math::

    \\hat\\mu = \\sum_g w_g \\hat x_g = \\frac{\\sum_g (c_g - N_g q^*_g)/(1 - q^*_g)}{\\sum_g N_g r_g}
    = \\frac{A}{B},

with :math:`c_g` the reports of level ``g`` that support the item: every report adds
:math:`(\\mathbb 1[\\text{supports}] - q^*_g)/(1 - q^*_g) \\le 1` to the numerator and
:math:`r_g > 0` to the denominator, *whatever level it claims*. So the split of the fakes over
the levels buys nothing on the numerator, and claiming a level only adds to the denominator.

**The bound (any split, any reports).** Honest reports give :math:`A, B`; ``m`` fakes add
:math:`a \\le m` and :math:`b \\in [m r_{\\min}, m r_{\\max}]`. The gain
:math:`(A + a)/(B + b) - A/B = (a - \\hat\\mu b)/(B + b) \\le m (1 + r_{\\max}\\max(0, -\\hat\\mu))/B`,
with :math:`\\hat\\mu = A/B` the estimate without the fakes. With a share :math:`\\beta` of fakes
among the :math:`N` reports, :math:`m \\le \\beta N` and :math:`B \\ge B_{obs} - \\beta N r_{\\max}`:

.. math::

    X = \\frac{\\beta N (1 + r_{\\max} \\max(0, -\\hat\\mu))}{B_{obs} - \\beta N r_{\\max}},

evaluated at the attacked :math:`\\hat\\mu` (``info["bound"]``; the threat model is
:data:`BOUND_MODEL`, ``beta`` is an option, default 5 %). It holds for every split over the
levels and every report, not only for the one-level claims of ``"huber"``'s bound. After the
projection it is capped at 1 (``info["vacuous"]`` where the cap binds: the bound then says nothing).

**The margin.** On the same reports this combination can move more than the protocol's
``"unbiased"`` one (fakes on the smallest level, which the minimum-variance weights neglect); the
excess is at most this bound plus the most the fakes can lower the unbiased combination
(:func:`linear_moves`, ``info["margin"]``, :data:`MARGIN_MODEL`).

**Why these weights and no others.** A linear combination in which no level's reports move the
estimate more than another's must weigh level ``g`` in proportion to :math:`N_g r_g`: any other
weights give some level a larger influence per report, and the attacker puts every fake there.
So the variance these weights cost over the minimum-variance ones (below) is the price of
"spreading buys nothing", not a tuning choice.

**Compared with the uniform mechanism.** MGA against one mechanism at budget :math:`\\bar\\varepsilon`
gains about :math:`\\beta/r(\\bar\\varepsilon)`; here the most is about :math:`\\beta/\\bar r` with
:math:`\\bar r = \\sum_g \\rho_g r_g` the level shares' mean of :math:`r`. For k-RR :math:`r` is
convex in :math:`\\varepsilon` (below :math:`\\ln(d-2)`) so :math:`\\bar r \\ge r(\\bar\\varepsilon)` and
the gain is at most MGA's at the mean budget. For OUE :math:`r = (1 - e^{-\\varepsilon})/2` is
concave: :math:`\\bar r < r(\\bar\\varepsilon)` (ten levels 0.1..1.0: ×1.06).

**No combination of the levels does better** (among those that move by :math:`\\Delta` when every
level's estimate does, as every location estimate does): fakes claiming level ``g`` in proportion
to :math:`N_g r_g`, each supporting the target, move every level's estimate by the same
:math:`\\Delta = m / \\sum_g N_g r_g`; the levels then agree with each other as honest data of a
shifted distribution would, and this estimator gains exactly that (the lower bound,
:func:`consistent_shift`).

**Measured** (``benchmarks/spread_candidates.py``, table in ``docs/attacks.md``; ten levels
0.1..1.0 evenly shared, :math:`d = 16`, :math:`n = 10^5`, Zipf(2), the rarest item, the
optimising attacker that knows the estimate, which RCF, APLDP and LLevels call ``"robust"``: this
combination then :func:`lowering_projection`). RCF-k-RR and LLevels-L-GRR: 0.185 at β = 1 %
(×0.86 MGA against k-RR at 0.55), 0.68 at 4.5 % (×0.70), every fake on the smallest level;
RCF-OUE 0.049 (×1.03) and 0.214 (×1.01), unary fakes with the target bit alone 0.052 (×1.10) and
0.228 (×1.07), where the lower bound's attack, made explicit, gains ×1.06 and ×1.05 against the
unbiased combination. MSE over that of Norm-Sub without attack: ×1.31 (k-RR), ×1.43 (OUE).

**Cost.** These weights are not the minimum-variance ones (:math:`\\propto N_g r_g^2\\,(1-q^*)/q^*`):
for ten levels 0.1..1.0 the variance is about :math:`\\overline{\\varepsilon^2}/\\bar\\varepsilon^2 = 1.27`
times the minimum (k-RR, small budgets). The estimate is linear and unbiased (the weights
depend on the counts and the budgets only); its variance is :math:`\\sum_g w_g^2 V_g`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.errors import EstimationError, ParameterError

__all__ = [
    "BOUND_MODEL",
    "DEFAULT_BETA",
    "MARGIN_MODEL",
    "SpreadCombination",
    "bound_model",
    "consistent_shift",
    "equal_influence",
    "influence",
    "linear_moves",
    "lowering_projection",
    "spread_robust",
]

#: The share of fakes the reported bound covers by default.
DEFAULT_BETA = 0.05
#: Where ``info["bound"]`` is taken: before, or after the projection (:func:`bound_model`).
BEFORE, AFTER = "(before projection)", "(after the projection onto the simplex; at most 1: vacuous where it is)"


def bound_model(split: str = "claiming any levels in any split", when: str = BEFORE) -> str:
    """The threat model of ``info["bound"]`` of the equal-influence combination: a share of fakes
    ``split`` over what the estimate combines, the bound taken ``when`` (:data:`BEFORE` or
    :data:`AFTER` the projection)."""
    return (
        f"a share beta of fake reports among all reports (info['beta']), {split}, "
        f"each report anything: bound[x] is the most they move item x's estimate {when}"
    )


#: The threat model of ``info["bound"]`` of the equal-influence combination, before projection.
BOUND_MODEL = bound_model()
#: What ``info["margin"]`` of :func:`spread_robust` covers.
MARGIN_MODEL = (
    "the same fake reports as bound_model: margin[x] is the most by which they raise item x's estimate more "
    "than they raise the reference combination's (the method 'unbiased', before projection) on the same reports"
)


def influence(support: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """:math:`r = (p^* - q^*)/(1 - q^*)` per group and item: the inverse of the most one report moves
    its group's unbiased estimate, in units of one over the group's size."""
    p_star, q_star = (np.asarray(a, dtype=float) for a in support)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q_star < 1, (p_star - q_star) / (1.0 - q_star), 0.0)


def lowering_projection(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Norm-Sub that only lowers: :math:`\\max(x - \\theta, 0)` with :math:`\\theta` Norm-Sub's
    threshold (the projection onto the simplex) when it is :math:`\\ge 0`, else 0 (the entries are
    then only clipped at zero and sum to less than one). Returns the estimate and :math:`\\theta`.

    Plain Norm-Sub couples the items: fakes whose reports lower every other item (unary reports
    with the target bit alone) lower its threshold and so raise the target by up to that much
    again (RCF-OUE, β = 1 %, every fake on level 0.1: 0.086 against 0.050 before projection,
    ``benchmarks/spread_candidates.py --consistent``). With the threshold kept
    at zero or above, fakes can lower it only down to zero: the target gains at most the honest
    threshold (≈ 0.003 on average in the setting of ``docs/attacks.md``, at most 0.012) more than
    before projection, and on honest data nothing changes where the threshold is positive.

    Examples
    --------
    >>> lowering_projection(np.array([0.7, 0.5, -0.2]))[0].tolist()
    [0.6, 0.4, 0.0]
    >>> lowering_projection(np.array([0.5, 0.2, -0.1]))[0].tolist()
    [0.5, 0.2, 0.0]
    """
    v = np.asarray(x, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    rho = int(np.flatnonzero(u - css / k > 0)[-1])
    theta = max(float(css[rho] / (rho + 1)), 0.0)
    return np.maximum(v - theta, 0.0), theta


def consistent_shift(sizes: np.ndarray, support: tuple[np.ndarray, np.ndarray], m: int) -> np.ndarray:
    """The lower bound: :math:`m / \\sum_g N_g r_g` per item, what ``m`` fakes claiming levels in
    proportion to :math:`N_g r_g` move every level's estimate by alike (module docstring)."""
    r = influence(support)
    n = np.asarray(sizes, dtype=float).reshape(-1, *([1] * (r.ndim - 1)))
    return m / np.sum(n * r, axis=0)


@dataclass(frozen=True)
class SpreadCombination:
    """What :func:`equal_influence` returns (per item, shape (d,), unless noted): the combination,
    its variance, the weights (G, d), the most a share ``beta`` of fakes moves each item up
    (``bound``) and down (``down``) in the linear combination."""

    frequencies: np.ndarray
    variance: np.ndarray
    weights: np.ndarray
    bound: np.ndarray
    down: np.ndarray
    beta: float

    def projected_bound(self) -> np.ndarray:
        """The bound after a projection onto the simplex (Norm-Sub): :math:`X_x + \\max_i
        \\max(X_i, X^-_i)`, since moving every item by at most :math:`\\eta` moves Norm-Sub's
        threshold by at most :math:`\\eta`."""
        return self.bound + float(np.max(np.maximum(self.bound, self.down)))

    def info(self, projected: bool = False) -> dict[str, object]:
        """The diagnostics an :class:`~pldp.Estimate` carries in ``info`` (``projected``: the
        bound of the estimate after Norm-Sub, and the linear one as ``linear_bound``).

        ``bound`` is capped at 1: after the projection every item lies in [0, 1], so no move
        exceeds 1. Where the cap binds (``vacuous``) the share ``beta`` of fakes could put the
        item anywhere and the bound says nothing: read the worst case measured instead
        (:func:`pldp.attacks.optimal.worst_case`).
        """
        raw = self.projected_bound() if projected else self.bound
        bound = np.minimum(raw, 1.0) if projected else raw
        model = bound_model(when=AFTER if projected else BEFORE)
        return {
            "weights": self.weights,
            "bound": bound,
            "bound_model": model,
            "spread_bound": bound,
            "linear_bound": self.bound,
            "vacuous": raw >= 1.0 if projected else np.zeros(raw.shape, dtype=bool),
            "beta": self.beta,
        }


def linear_moves(
    weights: np.ndarray, sizes: np.ndarray, support: tuple[np.ndarray, np.ndarray], mu: np.ndarray, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """The most a share ``beta`` of fake reports, in any split over the groups and with any reports,
    moves each item of a linear combination of the groups' unbiased estimates up and down.

    The combination :math:`\\mu = \\sum_g w_g \\hat x_g` must weigh group ``g`` as
    :math:`w_g = N_g h_g / \\sum_k N_k h_k`, with :math:`N_g` the claimed counts and :math:`h_g`
    fixed by the group's mechanism (the equal-influence weights, :math:`h = r`; the minimum-variance
    weights of a data-free variance, RCF's and MPLDP's ``"unbiased"``). Normalised so that
    :math:`\\sum_g N_g h_g = 1`, a report of group ``g`` adds :math:`h_g (\\mathbb 1[\\text{supports}]
    - q^*_g)/(p^*_g - q^*_g)` to the numerator and :math:`h_g` to the denominator, and ``m`` fakes
    move the estimate by exactly :math:`\\sum_i (a_i - \\mu b_i) / B_{honest}` with :math:`\\mu` the
    attacked estimate and :math:`B_{honest} = 1 - \\sum_i b_i \\ge 1 - m h_{\\max}`. So, with
    :math:`m \\le \\beta N`,

    .. math::

        X^+ = \\frac{\\beta N\\,(\\max_g h_g (1 - q^*_g)/(p^*_g - q^*_g) + h_{\\max}\\max(0, -\\mu))}
        {1 - \\beta N h_{\\max}}, \\qquad
        X^- = \\frac{\\beta N\\,(\\max_g h_g q^*_g/(p^*_g - q^*_g) + h_{\\max}\\max(0, \\mu))}
        {1 - \\beta N h_{\\max}},

    infinite when the denominator is not positive (the fakes could then be all the weight).

    Parameters
    ----------
    weights : ndarray, shape (G, d)
        The combination's weights (0 for a group it does not use), each column summing to one.
    sizes : ndarray, shape (G,)
        Reports per group, as claimed.
    support : (ndarray, ndarray), each broadcastable to (G, d)
        Each group's :math:`(p^*, q^*)` per item.
    mu : ndarray, shape (d,)
        The combination's estimate (of the attacked reports).
    beta : float
        The share of fakes among all reports, in [0, 1).

    Returns
    -------
    up, down : ndarray, shape (d,)

    Examples
    --------
    >>> w = np.array([[0.5], [0.5]])
    >>> up, down = linear_moves(w, np.array([100, 100]), (np.array([[0.75]]), np.array([[0.25]])), np.zeros(1), 0.01)
    >>> round(float(up[0]), 4), round(float(down[0]), 4)
    (0.0152, 0.0051)
    """
    w = np.asarray(weights, dtype=float)
    n = np.asarray(sizes, dtype=float)[:, None]
    p_star, q_star = (np.broadcast_to(np.asarray(a, dtype=float), w.shape) for a in support)
    used = (w > 0) & (n > 0)
    h = np.where(used, w / np.where(n > 0, n, 1.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(used, p_star - q_star, 1.0)
        most_up = np.max(np.where(used, h * (1.0 - q_star) / gap, 0.0), axis=0)
        most_down = np.max(np.where(used, h * q_star / gap, 0.0), axis=0)
    h_max = np.max(h, axis=0)
    fakes = float(beta) * float(np.sum(np.where(np.any(used, axis=1), n[:, 0], 0.0)))
    honest = 1.0 - fakes * h_max
    m = np.asarray(mu, dtype=float)
    with np.errstate(divide="ignore"):
        up = np.where(honest > 0, fakes * (most_up + h_max * np.maximum(0.0, -m)) / honest, np.inf)
        down = np.where(honest > 0, fakes * (most_down + h_max * np.maximum(0.0, m)) / honest, np.inf)
    return up, down


def equal_influence(
    estimates: np.ndarray,
    variances: np.ndarray,
    sizes: np.ndarray,
    support: tuple[np.ndarray, np.ndarray],
    *,
    beta: float = DEFAULT_BETA,
) -> SpreadCombination:
    """Combine group estimates with weights :math:`\\propto N_g r_g` (module docstring).

    Parameters
    ----------
    estimates, variances : ndarray, shape (G, d)
        Each group's unbiased estimate (NaN without users) and its plug-in variance.
    sizes : ndarray, shape (G,)
        Reports per group, as claimed.
    support : (ndarray, ndarray), each broadcastable to (G, d)
        Each group's :math:`(p^*, q^*)` per item.
    beta : float
        The share of fakes the bound covers, in [0, 1).
    """
    if not (0.0 <= float(beta) < 1.0):
        raise ParameterError(f"beta must lie in [0, 1), got {beta!r}")
    x = np.asarray(estimates, dtype=float)
    n = np.asarray(sizes, dtype=float)[:, None]
    r = np.broadcast_to(influence(support), x.shape)
    has = (n > 0) & np.isfinite(x) & (r > 0)
    mass = np.where(has, n * r, 0.0)
    total = mass.sum(axis=0)
    if np.any(total <= 0):
        raise EstimationError("no group holds information for some item: nothing to combine")
    w = mass / total
    # a group without information may hold an infinite estimate or variance: mask it before the
    # weights (0 there) multiply it, as 0 * inf is NaN
    mu = np.sum(w * np.where(has, x, 0.0), axis=0)
    variance = np.sum(w**2 * np.where(has, np.asarray(variances, dtype=float), 0.0), axis=0)
    bound, down = linear_moves(np.where(has, w, 0.0), sizes, support, mu, beta)
    return SpreadCombination(mu, variance, w, bound, down, float(beta))


def spread_robust(
    estimates: np.ndarray,
    variances: np.ndarray,
    sizes: np.ndarray,
    support: tuple[np.ndarray, np.ndarray],
    *,
    beta: float = DEFAULT_BETA,
    reference: np.ndarray | None = None,
) -> tuple[np.ndarray, SpreadCombination, dict[str, object]]:
    """The ``"robust"`` estimate of the protocols whose users claim their level in the clear (RCF,
    APLDP, LLevels; MPLDP per attribute): :func:`equal_influence`, then :func:`lowering_projection`.

    Returns the estimate, the combination (its ``variance`` describes the estimate before
    projection, ``weights`` the levels' weights) and the ``info`` entries: the bound after the
    projection (:meth:`SpreadCombination.info`) and Norm-Sub's ``threshold``. Arguments as
    :func:`equal_influence`; ``reference``, shape (G, d): the weights of the protocol's
    ``"unbiased"`` combination (of the form :func:`linear_moves` needs), for the **margin**.

    On the same reports the two combinations weigh the levels differently, so fakes can raise
    this estimate more than the unbiased one (every fake on the smallest level: little weight in
    the minimum-variance combination, as much as any other in this one). The excess is at most
    this estimate's bound plus the most the fakes lower the unbiased combination
    (:func:`linear_moves`): ``info["margin"]``, model :data:`MARGIN_MODEL`.
    """
    eq = equal_influence(estimates, variances, sizes, support, beta=beta)
    freq, theta = lowering_projection(eq.frequencies)
    info = {**eq.info(projected=True), "threshold": theta}
    if reference is not None:
        x = np.asarray(estimates, dtype=float)
        ref = np.broadcast_to(np.asarray(reference, dtype=float).reshape(x.shape[0], -1), x.shape)
        mu = np.sum(np.where(ref > 0, ref * np.nan_to_num(x), 0.0), axis=0)
        _, lowered = linear_moves(ref, sizes, support, mu, beta)
        info["margin"] = np.asarray(info["bound"]) + lowered
        info["margin_model"] = MARGIN_MODEL
    return freq, eq, info

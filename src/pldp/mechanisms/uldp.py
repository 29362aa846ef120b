"""Utility-optimized RAPPOR (uRAP): unary encoding under ULDP (Murakami & Kawamoto, USENIX Security 2019).

ULDP protects a sensitive set :math:`X_S` at :math:`\\varepsilon` and lets a non-sensitive input
:math:`x \\in X_N` be revealed by an *invertible* output (one only ``x`` can produce); every other
output is *protected*, and on those every two inputs must be within :math:`e^{\\varepsilon}`.
The unary form keeps RAPPOR's independent bits with three probabilities (all on the ``2**32`` grid):

* a sensitive item's bit: 1 w.p. :math:`\\theta` for its holder, :math:`b` for anyone else;
* a non-sensitive item's bit: 1 w.p. :math:`\\theta_N` for its holder, **never** for anyone else
  (``b = 0``), so that a set bit of :math:`X_N` reveals the input and a sensitive input's report
  is always protected.

The conditions (derived here; :func:`pldp.channel.unary.uldp_rows` checks them exactly). On a
protected output the bits other than those of the two inputs ``i`` and ``j`` cancel, so ULDP at
:math:`\\varepsilon` is, for sensitive :math:`i, j` and non-sensitive :math:`k, l`:

.. math::

    \\frac{\\theta(1-b)}{b(1-\\theta)} \\le e^{\\varepsilon}\\ (i, j),\\qquad
    \\frac{\\theta}{b(1-\\theta_N)} \\le e^{\\varepsilon}\\ (i, k),\\qquad
    \\frac{(1-\\theta_N)(1-b)}{1-\\theta} \\le e^{\\varepsilon}\\ (k, i),\\qquad
    1 \\le e^{\\varepsilon}\\ (k, l).

The parameters. The sensitive bits are the generalized RAPPOR's at :math:`\\varepsilon` (the first
condition tight): :math:`b = \\theta / (\\theta + (1-\\theta) e^{\\varepsilon})`, so a sensitive item
is estimated exactly as well as by RAPPOR/OUE with the same :math:`\\theta`. The second condition
then caps the non-sensitive bit at :math:`\\theta_N = \\theta (1 - e^{-\\varepsilon})`, which is taken
(the third condition holds with ratio 1). This mirrors URR, whose non-sensitive keep probability
is its sensitive one times :math:`1 - e^{-\\varepsilon}`. ``theta`` defaults to ``1/2`` (OUE-shaped
sensitive bits, Wang et al.'s optimum for the sensitive items' variance);
``theta=math.exp(eps/2)/(math.exp(eps/2)+1)`` gives RAPPOR-shaped ones.

Provenance. The text of Murakami & Kawamoto's uRAP definition was not at hand: the mechanism above
is derived from ULDP's definition (protected outputs within :math:`e^{\\varepsilon}`, invertible
outputs from one non-sensitive input only) as the unary mechanism with generalized-RAPPOR
sensitive bits and the largest non-sensitive keep probability; where the paper's parameters
differ, this class is the derived one. ``tests/test_uldp.py`` shows every condition tight on the
grid (one grid step more generous fails). At RAPPOR-shaped ``theta`` the derived parameters are
the closed forms an independent implementation of uRAP uses (the encoder and decoder published
with "Optimal Discrete Distribution Estimation under Utility-Optimized Local Differential
Privacy"): a sensitive bit flips w.p. :math:`1/(e^{\\varepsilon/2}+1)` and a
non-sensitive holder keeps her bit w.p. :math:`1 - e^{-\\varepsilon/2}`
(``test_rappor_shaped_urap_has_the_published_closed_forms``).

Exact grid. ``theta`` is rounded down to ``A``; ``b`` is the smallest ``B`` and ``theta_N`` the
largest ``A_N`` whose conditions :func:`~pldp.channel.exact.ratio_within` accepts, so the thresholds
that run are the tight ones (coins of 32 bits). The sampler is the unary node with notion
``"ULDP"`` (``docs/wire-format.md`` §3.12): not a new kind, since the report and the program are
the unary node's and only the claims differ.
"""

from __future__ import annotations

import math
from typing import Any, Self

import numpy as np

from pldp._validation import check_epsilon
from pldp.budgets import ItemBudgets
from pldp.channel.exact import ratio_within
from pldp.channel.sampling import GRID
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.mechanisms.unary import UnaryEncoding
from pldp.params import domain_of, epsilons_of
from pldp.registry import register

__all__ = ["URAP", "uldp_thresholds"]


def _smallest(ok: Any, guess: int) -> int:
    """The smallest integer ``v`` near ``guess`` with ``ok(v)`` (``ok`` monotone increasing)."""
    v = guess
    while not ok(v):
        v += 1
    while ok(v - 1):
        v -= 1
    return v


def uldp_thresholds(epsilon: float, theta: float) -> tuple[int, int, int]:
    """``(A, B, A_N)`` on the ``2**32`` grid: ``A = floor(theta 2**32)``, ``B`` the smallest with
    ``A (G - B) / (B (G - A)) <= e^eps`` and ``A_N`` the largest with ``A G / (B (G - A_N)) <= e^eps``,
    both decided exactly (the tight conditions of the module docstring)."""
    a = math.floor(theta * GRID)
    e = math.exp(epsilon)
    b = _smallest(
        lambda v: v > 0 and ratio_within(a * (GRID - v), v * (GRID - a), epsilon),
        math.ceil(a * GRID / (a + e * (GRID - a))),
    )
    # the largest A_N: the smallest G - A_N whose ratio A G / (B (G - A_N)) is within
    rest = _smallest(lambda v: v > 0 and ratio_within(a * GRID, b * v, epsilon), math.ceil(a * GRID / (b * e)))
    return a, b, GRID - rest


@register
class URAP(UnaryEncoding):
    """Utility-optimized RAPPOR, :math:`(X_S, \\varepsilon)`-ULDP (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Budget of the sensitive items.
    sensitive : array_like of bool
        Mask of the sensitive items (at least one True).
    domain : Domain, optional
        Item labels; defaults to ``0..d-1``.
    theta : float, optional
        A sensitive item's bit for its holder, in ``(0, 1)``; default ``1/2`` (OUE-shaped).

    Examples
    --------
    >>> import numpy as np
    >>> m = URAP(1.0, np.array([True, True, False, False]))
    >>> float(m.a[0]), round(float(m.b[0]), 6), round(float(m.a[2]), 6), float(m.b[2])
    (0.5, 0.268941, 0.31606, 0.0)
    >>> m.privacy().holds, m.notion
    (True, 'ULDP')
    """

    _name = "URAP"

    def __init__(self, epsilon: float, sensitive: Any, domain: Domain | None = None, theta: float = 0.5) -> None:
        eps = check_epsilon(epsilon)
        budgets = ItemBudgets.one_sensitive_budget(eps, sensitive, domain)
        mask = np.isfinite(budgets.epsilons)
        if not (isinstance(theta, float | int) and 0.0 < float(theta) < 1.0):
            raise ParameterError(f"theta must be in (0, 1), got {theta!r}")
        a_s, b_s, a_n = uldp_thresholds(eps, float(theta))
        a = np.where(mask, a_s, a_n) / GRID
        b = np.where(mask, b_s, 0) / GRID
        self.epsilon = eps
        self.theta = float(theta)
        super().__init__(a, b, budgets, "uldp", coin_bits=32)

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        eps = epsilons_of(params["epsilons"])
        sens = np.isfinite(eps)
        theta = float(params["theta"]) if "theta" in params else 0.5
        return cls(float(eps[sens][0]), sens, domain_of(params["labels"]), theta)

    def params(self) -> dict[str, Any]:
        """The parameters of :class:`~pldp.mechanisms.unary.UnaryEncoding` and ``theta``."""
        return {**super().params(), "theta": self.theta}

    def __repr__(self) -> str:
        return f"URAP(epsilon={self.epsilon:g}, d={self.d}, |D_S|={self.budgets.n_sensitive}, theta={self.theta:g})"

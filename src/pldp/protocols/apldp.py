"""APLDP: budgets in the clear, each level with the pure oracle that suits its budget best.

Adaptive personalized LDP (Song et al., Computers & Security 2024), as a PLDP-FEBSF baseline
(Appendix A.5): as :class:`~pldp.protocols.rcf.RCF`, but every level uses the pure frequency
oracle with the lowest expected squared error for its budget and the domain size
(:func:`select_mechanism`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from pldp._validation import check_int
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.protocols.leveled import ORACLES, check_levels, make_oracle
from pldp.protocols.rcf import RCF
from pldp.registry import register
from pldp.theory import expected_l2

__all__ = ["APLDP", "select_mechanism"]


def select_mechanism(
    epsilon: float, d: int, candidates: Sequence[str] = ("krr", "oue", "rappor")
) -> tuple[str, dict[str, float]]:
    """The pure protocol with the smallest expected squared error at ``epsilon`` and ``d``.

    Criterion: the expected :math:`l_2` loss of the unbiased estimate from one user drawn
    i.i.d. from ``p`` (:func:`pldp.theory.expected_l2`),

    .. math::

        \\sum_y \\frac{m_y (1 - m_y)}{\\delta^2}
        = d\\,\\frac{q^*(1-q^*)}{\\delta^2} + \\frac{1 - 2q^*}{\\delta} - \\sum_y p_y^2,
        \\qquad m_y = q^* + \\delta p_y,

    evaluated at the uniform ``p``. The last term is the same for every mechanism, so the
    ranking does not depend on ``p``; the uniform ``p`` is also the worst case (the loss is
    concave and symmetric in ``p``). The first term alone is Wang et al.'s approximate-variance
    rule (k-RR beats OUE when :math:`d < 3e^\\varepsilon + 2`); the second adds 2 for OUE, 1 for
    RAPPOR and :math:`(e^\\varepsilon + d - 3)/(e^\\varepsilon - 1)` for k-RR. OUE always beats
    basic RAPPOR on the first term; with the second, RAPPOR beats OUE only when
    :math:`d\\,e^{\\varepsilon/2} < (e^{\\varepsilon/2} + 1)^2`, where k-RR beats both (checked
    numerically for ``2 <= d < 5000``, ``0 < eps <= 20``), so RAPPOR is chosen only when OUE is
    not a candidate.

    The large-domain oracles (``"olh"``, ``"hr"``, ``"ss"``) are scored by the same criterion,
    which is exact for them too: a support count is a sum of the users' independent indicators,
    each 1 with probability :math:`m_y`, and the loss sums the items' variances whatever the
    counts' covariances. OLH at its rounded optimal ``g`` scores within a few per mille of OUE
    (equal at :math:`g = e^\\varepsilon + 1`: :math:`q^* = 1/g` gives the same two terms), so the
    grid's rounding decides between them; subset selection with ``k = 1`` is k-RR, and they tie
    up to that rounding too.

    Returns
    -------
    (str, dict)
        The chosen name (ties go to the earlier candidate) and every candidate's score.
    """
    if not candidates or any(c not in ORACLES for c in candidates):
        raise ParameterError(f"candidates must be a non-empty subset of {tuple(ORACLES)}, got {candidates!r}")
    dom = Domain.range(check_int(d, "d", 2))
    uniform = np.full(len(dom), 1.0 / len(dom))
    scores = {c: expected_l2(make_oracle(c, epsilon, dom), uniform, 1) for c in candidates}
    return min(candidates, key=lambda c: scores[c]), scores


@register
class APLDP(RCF):
    """Adaptive personalized LDP (Song et al., Computers & Security 2024), as a PLDP-FEBSF baseline.

    As :class:`RCF` (budgets in the clear, per-level unbiased estimates, minimum-variance
    combination with data-independent weights), but every level uses the pure protocol with
    the lowest expected squared error for its budget and the domain size, chosen by
    :func:`select_mechanism` among ``candidates``.

    What the sources define. PLDP-FEBSF (Appendix A.5): "different local perturbation
    algorithms are optimal for different ranges of privacy budgets"; users are grouped by
    budget, each group uses the optimal algorithm for its budget, and the group estimates are
    "weighted and summed"; Sec. 7.1 says APLDP used k-RR and basic RAPPOR.

    What is assumed here. The candidates default to k-RR, OUE and basic RAPPOR (pass
    ``candidates=("krr", "rappor")`` for the original pair); the large-domain oracles OLH, HR
    and SS may be added (e.g. ``candidates=("krr", "oue", "olh", "ss")``) but are not among the
    defaults, so that a default APLDP keeps its levels' oracles and its spec (subset selection
    would win most levels, and OLH ties with OUE up to rounding). The selection criterion is the
    expected :math:`l_2` loss of :func:`select_mechanism` (data-independent, equal to the worst
    case over ``p``); the weights are those of :class:`RCF`, whose estimators serve every mix.

    Parameters
    ----------
    levels : array_like of float
        Budget levels, strictly increasing.
    d : int or Domain
        The item domain.
    candidates : sequence of {"krr", "oue", "rappor", "olh", "hr", "ss"}
        Protocols to choose from (:data:`~pldp.protocols.leveled.ORACLES`).

    Attributes
    ----------
    choices : tuple of str
        The protocol of each level.
    scores : list of dict
        The criterion of every candidate at each level.

    Examples
    --------
    >>> APLDP([0.5, 4.0], 16).choices
    ('oue', 'krr')
    >>> APLDP([0.5, 4.0], 1000, candidates=("krr", "oue", "olh", "hr")).choices
    ('oue', 'olh')
    """

    def __init__(self, levels: Any, d: int | Domain, candidates: Sequence[str] = ("krr", "oue", "rappor")) -> None:
        lv = check_levels(levels)
        size = len(d) if isinstance(d, Domain) else check_int(d, "d", 2)
        self.candidates = tuple(candidates)
        picked = [select_mechanism(float(e), size, self.candidates) for e in lv]
        self.scores = [s for _, s in picked]
        self._setup(lv, d, [c for c, _ in picked])

    def __repr__(self) -> str:
        return f"APLDP(levels={self.levels.tolist()}, d={self.d}, candidates={self.candidates!r})"

    def params(self) -> dict[str, Any]:
        """The parameters of :class:`~pldp.protocols.rcf.RCF` and the candidates chosen from."""
        return {**super().params(), "candidates": list(self.candidates)}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        levels, dom = cls._params_levels(params)
        return cls(levels, dom, params["candidates"])

"""Longitudinal mechanisms: memoized chains of a permanent and an instantaneous randomized response.

Every claim about one report becomes a claim about many once users report again. A memoized chain
(RAPPOR's memoization, Erlingsson et al. CCS 2014; Arcolezi et al. 2022) draws a *permanent*
randomized response (PRR) once per value, at budgets :math:`\\varepsilon_\\infty` that bound any
number of reports of that value, and sends each report through a fresh *instantaneous* one (IRR),
chosen so that one report meets :math:`\\varepsilon_1`. They bound what the reports reveal about
the values (given the rounds at which the value changed), not a device's whole history: whether
and when its value changes leaks more with every report, without limit
(:func:`pldp.privacy.over_rounds`, ``docs/longitudinal.md``).

==============  ======================================================================
module          holds
==============  ======================================================================
``formulas``    closed forms: the IRR of each chain, chained probabilities, variances
``memo``        :class:`Memo`: the permanent responses of a simulated population
``base``        :class:`Longitudinal`: the memo, rounds, the two claims
``direct``      :class:`LGRR`, :class:`LIPRR` (and their core :class:`LongitudinalDirect`)
``unary``       :class:`LOUE`, :class:`LOSUE`, :class:`LSUE`, :class:`LSOUE`, :class:`LIDUE`
                (and their core :class:`LongitudinalUnary`)
==============  ======================================================================
"""

from pldp.mechanisms.longitudinal.base import Longitudinal
from pldp.mechanisms.longitudinal.direct import LGRR, LIPRR, LongitudinalDirect
from pldp.mechanisms.longitudinal.memo import Memo
from pldp.mechanisms.longitudinal.unary import LIDUE, LOSUE, LOUE, LSOUE, LSUE, LongitudinalUnary

__all__ = [
    "LGRR",
    "LIDUE",
    "LIPRR",
    "LOSUE",
    "LOUE",
    "LSOUE",
    "LSUE",
    "Longitudinal",
    "LongitudinalDirect",
    "LongitudinalUnary",
    "Memo",
]

"""The two claims of a memoized chain: :math:`\\varepsilon_\\infty` for any number of reports of one value,
:math:`\\varepsilon_1` for one.

A longitudinal mechanism (L-GRR, L-IPRR, L-OUE, ...; :mod:`pldp.mechanisms.longitudinal`) draws a
permanent randomized response once per value and sends each report through a fresh instantaneous
one. Its :class:`LongitudinalPrivacy` holds both checks: the permanent response's own (every
report of one value is a function of it and of fresh coins, so it bounds them all) and the
one-report check of the chained channel; both are exact checks of the sampler node's claims
(:meth:`pldp.channel.MemoNode.claims`), and the two parts also report the realised epsilons per
output or pair of items.

Both are claims about values: :math:`\\varepsilon_\\infty` bounds any number of reports of one value
against another value held as long (and, per distinct value, two histories that change at the
same rounds). They do not bound a device's whole history, whose loss grows with the number of
reports when the histories differ in whether or when the value changes
(:func:`pldp.privacy.over_rounds`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pldp.privacy.base import PrivacyCheck

__all__ = ["LongitudinalPrivacy"]


@dataclass(frozen=True, repr=False)
class LongitudinalPrivacy(PrivacyCheck):
    """The privacy of a memoized chain: the permanent claim and the one-report claim.

    Attributes
    ----------
    notion : str
        What is claimed, e.g. ``"LDP (eps_inf over any number of reports of one value, eps_1 per report)"``.
    permanent : PrivacyCheck
        The permanent randomized response's check: its budgets :math:`\\varepsilon_\\infty`.
    one_report : PrivacyCheck
        The chained channel's check (one report with a fresh permanent response): :math:`\\varepsilon_1`.
    exact : bool
        Whether every claim of the sampler node holds when decided with exact arithmetic
        (:func:`pldp.channel.check_claims`); the parts' float checks agree with it within their
        tolerance.

    Examples
    --------
    >>> import pldp
    >>> rep = pldp.LGRR(2.0, 1.0, 5).privacy()
    >>> rep.holds, round(rep.ldp_epsilon, 6), round(rep.permanent_epsilon, 6)
    (True, 1.0, 2.0)
    """

    notion: str
    permanent: PrivacyCheck
    one_report: PrivacyCheck
    exact: bool

    @property
    def holds(self) -> bool:
        return self.exact and self.permanent.holds and self.one_report.holds

    @property
    def slack(self) -> float:
        return min(self.permanent.slack, self.one_report.slack)

    @property
    def ldp_epsilon(self) -> float:
        """The LDP epsilon of one report (:math:`\\varepsilon_1` realised)."""
        return self.one_report.ldp_epsilon

    @property
    def permanent_epsilon(self) -> float:
        """The LDP epsilon of any number of reports of one value, against another value held as long
        (:math:`\\varepsilon_\\infty` realised; not a bound on a whole history: module docstring)."""
        return self.permanent.ldp_epsilon

    def summary(self) -> str:
        state = "holds" if self.holds else "FAILS" + ("" if self.exact else " (exact check)")
        return (
            f"{self.notion} {state}; one report: {self.one_report.summary()}; any number of reports of one "
            f"value: {self.permanent.summary()}"
        )

"""Poisoning attacks by fake users on every mechanism and protocol, and their gain.

A collector cannot tell a fake report from a real one (Cao, Jia, Gong, "Data Poisoning Attacks to
Local Differential Privacy Protocols", USENIX Security 2021). :func:`fake_reports` makes what
``m`` fake users send to promote chosen items, in each oracle's own report format, so that::

    fake = fake_reports(oracle, targets, m, rng=rng, strategy="mga")
    poisoned = honest_tally + oracle.tally(fake)          # merges like any tally
    gain(oracle, honest_tally, oracle.tally(fake), targets)   # the targets' frequency gain
    expected_gain(oracle, targets, m, *true_data)         # the same in closed form

=============  ==================================================================================
module         holds
=============  ==================================================================================
``base``       the strategies, an attack's parameters, each oracle family's rule and their registry
``pure``       KRR, URR, IPRR, RAPPOR, OUE, IDUE and padding-and-sampling
``hashed``     OLH and BLH: the maximal gain attack searches seeds that hash the targets together
``hadamard``   HR: the maximal gain attack reports an index in every target's half
``subset``     SS: the targets, filled up to k items with random others
``sketch``     CMS and HCMS: a row's report that supports every target, without flips
``leveled``    PLDP-FEBSF, RCF, APLDP, PBP, PPDA, MPLDP: level claims, then reports at the level
``optimal``    ``strategy="optimal"``: the attacker who knows the estimator searches its split on shadow tallies
``across``     the same search for MPLDP: a split over (attribute, level) claims, attribute by attribute
``api``        :func:`fake_reports`, :func:`promoted`, :func:`shift`, :func:`gain`, :func:`expected_gain`
=============  ==================================================================================

The closed forms of a mechanism's robustness (the per-fake gain :math:`(1-q_x)/(p_x-q_x)`, its
amplification against the uniform mechanism) are in :mod:`pldp.robustness`.
"""

from pldp.attacks import hadamard, hashed, leveled, optimal, pure, sketch, subset  # noqa: F401 (registers every family's rule)
from pldp.attacks.api import expected_gain, fake_reports, gain, gain_is_exact, promoted, shift
from pldp.attacks.base import LEVEL_STRATEGIES, STRATEGIES, Attack, Rule, rule_for, rule_of

__all__ = [
    "LEVEL_STRATEGIES",
    "STRATEGIES",
    "Attack",
    "Rule",
    "expected_gain",
    "fake_reports",
    "gain",
    "gain_is_exact",
    "promoted",
    "rule_for",
    "rule_of",
    "shift",
]

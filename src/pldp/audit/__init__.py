"""Empirical privacy auditing: what the running code leaks, measured by a distinguishing game.

An exact privacy check (``privacy()``, :func:`pldp.deploy.verify`) proves what the parameters
promise; an audit tests the code that draws the reports. For pairs of inputs it runs the real
sampler many times, counts how often a test of the report fires on each input, and turns the
counts into a lower bound on epsilon that holds with a stated confidence (Jagielski et al. 2020;
LDP-Auditor, Arcolezi & Gambs, PETS 2024). pldp's audit differs from LDP-Auditor's in three ways:

* the test is the **optimal** one, read off the exact channel (:mod:`pldp.audit.events`), so
  audits are tight for every encoding (LDP-Auditor's own attacks are in
  :mod:`pldp.audit.attacks`);
* it audits **personalized** notions against their own claims: IPLDP's per-output budgets,
  MinID/AvgID-LDP's pair budgets, item-set budgets of padding-and-sampling, and the budget
  *level* of PLDP-FEBSF, PBP and PPDA as a secret of its own (ERRATA FEBSF-6);
* it audits every layer that draws reports: the library's samplers, specs through the Python
  client, and the JS client in Node (:mod:`pldp.audit.targets`).

==================  ====================================================================
module              holds
==================  ====================================================================
``bounds``          Clopper–Pearson intervals and the audited epsilon
``pairs``           inputs, pairs and the secret each tests; the default pairs
``events``          the optimal test of a pair from the exact channel, and the claims
``attacks``         LDP-Auditor's attacks
``targets``         mechanisms, protocols, specs, the Python client and the JS client
``jsclient``        the JS client driven through Node
``run``             :func:`audit`
``result``          :class:`AuditResult`: the table and the figure
``catalog``         every mechanism and protocol in a standard configuration (``make audit``)
``longitudinal``    :func:`audit_rounds`: the audit over time, ``r`` reports of one device,
                    fresh and memoized
``histories``       the pairs of histories it compares (segments of rounds)
``heavy``           :func:`audit_heavy`: a heavy-hitter protocol's reports of one answer
                    against another
``round_models``    the exact law of a device's reports over rounds (its likelihood ratio)
``rounds``          :class:`RoundsResult`: its table and plot
``rounds_figure``   the figure of ``docs/auditing.md`` (``make audit``)
``history_figure``  the whole-history accountant's figure of ``docs/longitudinal.md``
                    (:func:`pldp.privacy.over_rounds`, computed; ``make audit``)
==================  ====================================================================
"""

from pldp.audit.attacks import ATTACKS, ldp_auditor_test
from pldp.audit.bounds import clopper_pearson, epsilon_lower_bound
from pldp.audit.events import Test, optimal_test, pair_claim
from pldp.audit.heavy import HeavyAudit, audit_heavy
from pldp.audit.jsclient import JSClient
from pldp.audit.longitudinal import audit_rounds
from pldp.audit.pairs import Input, Pair, default_pairs
from pldp.audit.result import AuditResult, AuditRow
from pldp.audit.rounds import RoundsResult, RoundsRow
from pldp.audit.run import audit

__all__ = [
    "ATTACKS",
    "AuditResult",
    "AuditRow",
    "HeavyAudit",
    "Input",
    "JSClient",
    "Pair",
    "RoundsResult",
    "RoundsRow",
    "Test",
    "audit",
    "audit_heavy",
    "audit_rounds",
    "clopper_pearson",
    "default_pairs",
    "epsilon_lower_bound",
    "ldp_auditor_test",
    "optimal_test",
    "pair_claim",
]

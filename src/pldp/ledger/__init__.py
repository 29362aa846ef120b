"""The device's privacy ledger (``pldp.ledger/1``): what the reports of this device have spent.

Every report a client makes spends some of its owner's privacy: the ledger adds it up per
*campaign family* and in total, per UTC day and over all time, and refuses a batch that would go
over a cap the device's owner set (per day or in all; per family or for the whole device), *before*
a single random word is drawn. Apple's devices keep such a ledger with a daily budget per use case
(Apple, "Differential Privacy Overview", 2017); RAPPOR's memoization is what lets a device report
every day without paying again for an answer it already reported (Erlingsson, Pihur, Korolova,
CCS 2014, §3 and §6).

The accounting rule
-------------------
A *family* is the set of campaigns whose reports share a secret: the campaigns with one memo key
(``spec.memo_key``, whose rounds share one permanent randomized response per value), else one
spec (its id). Each batch of ``n`` reports of a spec ``s`` charges its family

.. math::

    c = \\begin{cases}
        n \\, \\bar\\varepsilon(s) & s \\text{ not memoized,} \\\\
        k \\, \\bar\\varepsilon_\\infty(s) & s \\text{ memoized, } k \\text{ values new to the memo,}
    \\end{cases}

where :math:`\\bar\\varepsilon(s)` is the worst case the spec claims for one whole report (the
``ldp_epsilon`` of :func:`pldp.deploy.verify`: the largest budget over its items and levels, summed
over attributes, with the level report's budget) and :math:`\\bar\\varepsilon_\\infty(s)` the
largest budget of its permanent response (the claim "any number of reports of one value"). A
family's spend after its batches, and the device's, are the sums

.. math::

    \\varepsilon_f = \\sum_{\\text{reports of fresh specs}} \\bar\\varepsilon(s)
        + \\sum_{x \\in X_f} \\bar\\varepsilon_\\infty(s_x), \\qquad
    \\varepsilon_{\\text{device}} = \\sum_f \\varepsilon_f,

with :math:`X_f` the values whose permanent response the device drew (the memo's new values),
by sequential composition (Dwork and Roth 2014, Theorem 3.16): fresh reports are independent
mechanisms of the same secret, and the reports of a memoized value are functions of its permanent
response and fresh coins, so all of them together reveal at most :math:`\\varepsilon_\\infty` of it
(RAPPOR §3), and distinct values compose over their independent permanent responses (RAPPOR §6:
the protection degrades with the number of distinct values reported). A report of a value already
in the memo charges nothing. The per-day spend is the same sum over the day's batches.

Each report's own bound (:math:`\\varepsilon_1` of a memoized spec, :math:`\\bar\\varepsilon` of
another) is recorded as the family's ``report_epsilon``, not added up: for memoized reports
:math:`r \\varepsilon_1` is no bound of :math:`r` reports of one value (they share their
permanent response, so they are not independent; a chain whose single reports say nothing may
reveal the value in two), and :math:`\\varepsilon_\\infty` is.

The worst case is charged: the level a user chose, or the item she reported, may have a smaller
budget than the largest the spec claims, but the ledger does not look at answers.

Storage
-------
:class:`Ledger` keeps the record in a JSON file (mode ``0600``, rewritten atomically under a lock,
like the memo store), or in memory (``Ledger(None)``, tests only). A file that cannot be read or
trusted makes :meth:`Ledger.charge` refuse (:class:`LedgerError`): starting again would forget
what was spent. The JS client (``clients/js/pldp-ledger.mjs``) keeps the same format in a file
(Node) or in ``localStorage`` (browsers)::

    {"format": "pldp.ledger/1",
     "families": {"<family>": {"epsilon": 2.0, "reports": 3, "values": 0, "report_epsilon": 1.0,
                               "day": "2025-03-01", "day_epsilon": 1.0, "day_reports": 1, "day_values": 0,
                               "campaigns": {"<spec id>": {"reports": 3, "rounds": [1, 2, 3]}}}}}

A spend that is unbounded (a spec that leaves an answer unprotected) is ``null``.

Caps
----
The device owner sets caps (:class:`Caps`): per UTC day and in all, for the whole device and for
each family. A spec may set its own (its ``caps`` member, ``docs/wire-format.md`` §1.3: the most
one device may spend on its family per UTC day and in all); a charge then keeps the family within
the smaller of the spec's and the owner's family caps, and the refusal names which one refused
(the spec's or the owner's) with the numbers. A spec's caps bind the batches of that spec: the
campaigns of one family may set different caps, and each is checked against the family's whole
spend when its own reports are charged. A spec with caps needs a ledger that outlives the process:
:class:`pldp.client.Client` given none opens :func:`default_ledger_path` (a file in the user's data
directory), and the JS client refuses to report without one.

Modules: ``costs`` (what a spec's reports charge), ``store`` (the file), ``book`` (the caps, the
charge and the view).
"""

from pldp.ledger.book import Caps, FamilySpend, Ledger, LedgerCapError, LedgerView, Spend, default_ledger_path
from pldp.ledger.costs import SpecCost, new_values, spec_cost
from pldp.ledger.store import LEDGER_FORMAT, LedgerError

__all__ = [
    "LEDGER_FORMAT",
    "Caps",
    "FamilySpend",
    "Ledger",
    "LedgerCapError",
    "LedgerError",
    "LedgerView",
    "SpecCost",
    "Spend",
    "default_ledger_path",
    "new_values",
    "spec_cost",
]

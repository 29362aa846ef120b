r"""The device's privacy ledger (``pldp.ledger/2``): what the reports of this device have spent.

Every report a client makes spends some of its owner's privacy: the ledger adds it up per
*campaign family* and in total, per UTC day and over all time, and refuses a batch that would go
over a cap the device's owner set (per day or in all; per family or for the whole device), *before*
a single random word is drawn. Apple's devices keep such a ledger with a daily budget per use case
(Apple, "Differential Privacy Overview", 2017); RAPPOR's memoization is what lets a device report
every day without revealing its answer again and again (Erlingsson, Pihur, Korolova, CCS 2014, §3
and §6).

The accounting rule
-------------------
A *family* is the set of campaigns whose reports share a secret: the campaigns with one memo key
(``spec.memo_key``, whose rounds share one permanent randomized response per value), else one
spec (its id). Whether a batch is sent or refused must not depend on the answers it protects:
the collector sees which reports arrive, so a refusal that depended on the answer (say, on whether
it changed) would tell it. The ledger therefore keeps two spends per family.

**The charged spend** (``epsilon``, ``day_epsilon``), what every cap is checked against. A batch
of ``n`` reports of a spec ``s`` charges its family

.. math::

    c = \begin{cases}
        n \, \bar\varepsilon(s) & s \text{ not memoized,} \\
        \bigl(\min(R + n, d) - \min(R, d)\bigr) \, \bar\varepsilon_\infty(s) & s \text{ memoized,}
    \end{cases}

where :math:`\bar\varepsilon(s)` is the worst case the spec claims for one whole report (the
``ldp_epsilon`` of :func:`pldp.deploy.verify`: the largest budget over its items and levels, summed
over attributes, with the level report's budget), :math:`\bar\varepsilon_\infty(s)` the largest
budget of its permanent response (the claim "any number of reports of one value"), :math:`R` the
number of reports the family made before (all time: a public number, since the collector sees
every report) and :math:`d` the number of values that can draw a permanent response (the domain
of the spec's memo node). Every memoized report is charged as if its value were new to the memo,
until :math:`d` reports, after which no value can be new: the most the per-value spend below can
reach after :math:`R + n` reports, from counts and the spec only. The charge is computed, and the
caps checked, before the answers are used: :meth:`Ledger.charge` refuses from the charged spends,
the charge and the caps alone.

**The per-value spend** (``values_epsilon``, ``day_values_epsilon``), shown for information only
and never read by a refusal: the same sum with :math:`k\,\bar\varepsilon_\infty(s)` for a memoized
batch whose :math:`k` values were new to the memo (``values`` counts them). It is what this
device's actual history revealed about its values: the reports of a memoized value are functions
of its permanent response and fresh coins, so all of them together reveal at most
:math:`\varepsilon_\infty` of it (RAPPOR §3), and distinct values compose over their independent
permanent responses (RAPPOR §6) by sequential composition (Dwork and Roth 2014, Theorem 3.16), as
fresh reports do. It depends on the answers, and it is never larger than the charged spend.

Both are sums over a family's batches, and the device's spends the sums over families; the per-day
spends the same sums over the day's batches. Neither bounds everything the reports reveal: the
per-value spend bounds what they reveal about the values *given the times they changed*, and the
charged spend bounds that for every history of as many reports. Two histories whose answers change
at different times (a, a, b, b against a, b, b, b) are told apart by a loss that grows with the
number of rounds, however few the values: a whole-history accountant (``pldp.privacy.over_rounds``)
bounds that one.

Each report's own bound (:math:`\varepsilon_1` of a memoized spec, :math:`\bar\varepsilon` of
another) is recorded as the family's ``report_epsilon``, not added up: for memoized reports
:math:`r \varepsilon_1` is no bound of :math:`r` reports of one value (they share their
permanent response, so they are not independent; a chain whose single reports say nothing may
reveal the value in two), and :math:`\varepsilon_\infty` is.

The worst case is charged: the level a user chose, or the item she reported, may have a smaller
budget than the largest the spec claims, but the ledger does not look at answers.

Storage
-------
:class:`Ledger` keeps the record in a JSON file (mode ``0600``, rewritten atomically under a lock,
``flock`` on ``PATH.lock``, like the memo store; the JS client takes the same lock in Node), or in
memory (``Ledger(None)``, tests only). A file that cannot be read or trusted makes
:meth:`Ledger.charge` refuse (:class:`LedgerError`): starting again would forget what was spent.
The JS client (``clients/js/pldp-ledger.mjs``) keeps the same format in a file (Node) or in
``localStorage`` (browsers)::

    {"format": "pldp.ledger/2",
     "families": {"<family>": {"epsilon": 4.0, "values_epsilon": 2.0, "reports": 2, "values": 1,
                               "report_epsilon": 1.0, "day": "2025-03-01", "day_epsilon": 2.0,
                               "day_values_epsilon": 0.0, "day_reports": 1, "day_values": 0,
                               "campaigns": {"<spec id>": {"reports": 2, "rounds": [1, 2]}}}}}

A spend that is unbounded (a spec that leaves an answer unprotected) is ``null``. A
``pldp.ledger/1`` file (whose ``epsilon`` was the per-value spend) is read by migrating it
conservatively (``pldp.ledger.store.migrate_family``): a family with ``values > 0`` (memoized:
a fresh spec never records values) is charged ``reports * (epsilon / values)``, an upper bound of
:math:`\min(R, d)\,\bar\varepsilon_\infty` from counts only (today: ``day_reports`` times the
same), and its old ``epsilon`` becomes its per-value spend; a family with ``values == 0`` keeps
its spend as both. The next charge writes the file as ``pldp.ledger/2``.

Caps
----
The device owner sets caps (:class:`Caps`): per UTC day and in all, for the whole device and for
each family. A spec may set its own (its ``caps`` member, ``docs/wire-format.md`` §1.3: the most
one device may spend on its family per UTC day and in all); a charge then keeps the family within
the smaller of the spec's and the owner's family caps, and the refusal names which one refused
(the spec's or the owner's) with the numbers. Every epsilon cap is checked against the charged
spend. A spec may also cap the family's reports: ``"rounds": N``, the most reports one device sends
on it (one per round of a recurring campaign), so that the whole history it reveals is that of at
most :math:`N` reports (``pldp.privacy.over_rounds(spec.root, N)``: the loss over whether and when
the answer changed, which grows with the number of reports however few the values). A batch of
:math:`n` reports is refused when the family's :math:`R` reports so far and :math:`n` exceed
:math:`N`, whatever it would be charged (after :math:`d` reports a memoized batch is charged 0, and
is still refused): a count, public and independent of the answers like the charge. A spec's caps
bind the batches of that spec: the campaigns of one family may set different caps, and each is
checked against the family's whole charged spend (and whole count of reports, of every spec of the
family) when its own reports are charged: a spec's rounds cap counts the reports of the other specs
of its family too. A
spec with caps needs a ledger that outlives the process: :class:`pldp.client.Client` given none
opens :func:`default_ledger_path` (a file in the user's data directory), and the JS client refuses
to report without one.

Modules: ``costs`` (what a spec's reports charge, and their per-value spend), ``store`` (the file,
and the migration of format 1), ``book`` (the caps, the charge and the view).
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

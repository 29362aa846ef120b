"""Poisoning attacks on LDP and personalized LDP: ``pldp reproduce attacks`` and ``pldp attack``.

Three experiments (:mod:`~pldp.experiments.attacks.specs`):

* ``cao_mga``: Cao, Jia and Gong's maximal gain attack (USENIX Security 2021) on k-RR and OUE, the
  gain against beta, epsilon and the number of targets, measured and in closed form (their
  theorems); the check: every mean gain within its Bonferroni bound of standard errors;
* ``best_moves``: fake users' best moves (100,000 honest users, Zipf(2) over 16 items, the rarest
  as target), next to reference measurements of the same setting;
* ``personalized``: every strategy of :func:`pldp.attacks.fake_reports` against every personalized
  protocol at 10^6 users over 100 items, against the uniform mechanism at the same mean budget.

Modules: :mod:`~pldp.experiments.attacks.catalog` (the oracles by name, the honest users),
:mod:`~pldp.experiments.attacks.runs` (one repeat), :mod:`~pldp.experiments.attacks.checks` and
:mod:`~pldp.experiments.attacks.tables` (the check, the Markdown tables),
:mod:`~pldp.experiments.attacks.specs` (the experiments).
"""

from pldp.experiments.attacks import catalog, checks, runs, specs, tables
from pldp.experiments.attacks.catalog import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.attacks.checks import *  # noqa: F403
from pldp.experiments.attacks.runs import *  # noqa: F403
from pldp.experiments.attacks.specs import *  # noqa: F403
from pldp.experiments.attacks.tables import *  # noqa: F403

__all__ = [*catalog.__all__, *checks.__all__, *runs.__all__, *specs.__all__, *tables.__all__]

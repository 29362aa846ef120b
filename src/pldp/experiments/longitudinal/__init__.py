"""Reproduction of Arcolezi, Couchot, Al Bouna & Xiao, *Improving the utility of locally differentially
private protocols for longitudinal and multidimensional frequency estimates* (2022, arXiv:2111.04636),
Sec. 4, and the personalized chains on the personalized papers' datasets.

Memoized chains (:mod:`pldp.mechanisms.longitudinal`): a permanent randomized response at
``eps_perm`` (any number of reports of one value) and an instantaneous one per report meeting
``eps_1 = alpha * eps_perm``.

Experiments (one :class:`Experiment` each):

* ``variance``: their table of approximate variances (``n = 10,000``, ``f = 0``) at
  ``eps_perm`` in {0.5, 1, 2, 4} and alpha in {0.6, ..., 0.1}: pldp's closed forms against the
  printed numbers (rows alpha = 0.6 and 0.3), their L-GRR IRR beside the exact one (ERRATA LONG-1).
* ``uniform``: MSE of one round against ``eps_perm`` in 0.5..4 at alpha 0.3 and 0.6 (their
  figure's grid) for L-GRR (exact and printed IRR), L-OUE, L-OSUE, L-SUE, L-SOUE on Adult
  native-country; one figure per alpha.
* ``personalized``: L-IPRR and L-IDUE against L-GRR and L-OSUE at the smallest budgets on
  Education, Job and Country (PLDP-FEBSF's datasets).

The speed and estimates of multi-freq-ldpy's longitudinal clients on identical users are in
``benchmarks/longitudinal_rows.py`` (``make bench``).

Modules: :mod:`~pldp.experiments.longitudinal.runs`, :mod:`~pldp.experiments.longitudinal.checks`,
:mod:`~pldp.experiments.longitudinal.specs`.
"""

from pldp.experiments.longitudinal import checks, runs, specs
from pldp.experiments.longitudinal.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.longitudinal.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.longitudinal.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

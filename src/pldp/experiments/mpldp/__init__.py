"""Reproduction of Feng & Zhang, *MPLDP: Multi-Level Personalized LDP* (IEEE Access 2024), Sec. VI.

Setting (Sec. VI): five attributes with ``k = (5, 10, 15, 20, 25)`` candidate values, the data of
Algorithm 4 (:func:`pldp.datasets.mpldp_dataset`: every value of attribute ``i`` held by about
``n / k_i`` users), ``n = 10,000`` (panels a) and ``n = 1,000`` (panels b), a total budget
``eps`` in {1.0, 1.5, ..., 6.0} split over the attributes by :func:`allocate_budget` (Table 2,
ERRATA MPLDP-3), three levels per attribute with budgets ``eps_i/3, eps_i/2, eps_i`` that every
user picks at random with equal shares, independently per attribute (ERRATA MPLDP-2: Algorithm
4's rows are sorted, so levels assigned in blocks would bias everything).

Experiments (one :class:`Experiment` per paper figure/table):

* ``fig3a`` / ``fig3b``: NSE (eq. in Sec. VI: squared count error summed over the five
  attributes' histograms, divided by ``n``) of the plain sum of the levels' estimates (the
  paper's "BRR") and of OC (Theorem 2) against the total ``eps``; n = 10,000 / 1,000.
* ``fig3_eps_i``: the same with the x-axis a per-attribute ``eps_i`` in [1, 6] (every attribute
  gets ``eps_i``), where ERRATA MPLDP-5 locates the paper's "about 60 %".
* ``table3``: OP (Algorithm 3, an evaluation-only oracle that regresses the TRUE histogram on
  the level estimates, ERRATA MPLDP-4): log10 of the maximum absolute count error, averaged
  over the five attributes and the repeats, after iterations 1..20 (iteration 1 is the least
  squares fit, iteration ``t`` follows ``t - 1`` perturbation steps); written as
  ``table3{a,b}.md`` / ``.csv`` (iterations 1-10 and 20, as in the paper) and a figure.
* ``fig4``: NSE of sum, OC and OP (weights of the 20th regression) against the total ``eps``,
  one panel per ``n``. The table also holds ``OP (LS)``, OP's least-squares start, which is not
  drawn.

Each repeat draws fresh levels and fresh BRR noise on the fixed Algorithm 4 data, simulated
exactly at the count level (:meth:`MPLDP.simulate`). Besides the total NSE, ``fig3*`` record
``nse_perturbation``: the error against the OC-weighted truth *within* the levels, the part
that eq. 11 describes; OC's total error adds the level-sampling term of ERRATA MPLDP-1 (the
plain sum has none).

Modules: :mod:`~pldp.experiments.mpldp.runs` (data, protocol, one repeat),
:mod:`~pldp.experiments.mpldp.checks` (the paper's claims), :mod:`~pldp.experiments.mpldp.figures`
(the panels and Table 3's files) and :mod:`~pldp.experiments.mpldp.specs` (grids and the experiments).
"""

from pldp.experiments.mpldp import checks, runs, specs
from pldp.experiments.mpldp.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.mpldp.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.mpldp.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

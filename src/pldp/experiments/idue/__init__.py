"""Reproduction of Gu, Li, Xiong, Cao, "Providing Input-Discriminative Protection for LDP" (ICDE 2020).

Figures 2-8 of Sec. VII: IDUE (opt0, and opt1/opt2 in Fig. 2) under MinID-LDP against RAPPOR and
OUE under epsilon-LDP with epsilon the smallest budget, on single items (Figs. 2-5) and, through
padding-and-sampling, on item-sets (IDUE-PS, OUE-PS, RAPPOR-PS, Figs. 6-8).

Choices the paper leaves open (see ``docs/reproduction/idue.md``):

* Budgets: every item draws its budget from :math:`\\{\\varepsilon, 1.2\\varepsilon, 2\\varepsilon\\}`
  with probabilities :math:`\\{5\\%, 5\\%, 90\\%\\}` (``ItemBudgets.random_levels``), *afresh in
  every repeat*; IDUE is re-solved for each draw (the solve is on the three levels only). RAPPOR
  and OUE use the smallest budget actually drawn (:math:`\\varepsilon` unless that level came out
  empty). Fig. 5 uses two levels with exact shares (``exact_shares=True``).
* Every repeat is a count-level simulation (``mech.simulate``; for item-sets one
  padding-and-sampling draw per repeat, shared by the three mechanisms, then binomial bit counts),
  estimated with the unbiased estimator (eq. 6; for item-sets scaled by ``ell``).
* Synthetic data (Fig. 2) are redrawn in every repeat; theory is eq. 7 summed over the items on
  the realised counts (``pldp.theory.expected_l2(..., model="fixed")`` times ``n``).
* Single-item real data are the first item of every user (``ItemSets.first_items``). Kosarak is
  the bundled real prefix (36,682 users, 17,034 items), not the 990,002-user file, unless
  ``experiments(kosarak=PATH)`` (``pldp reproduce idue --kosarak PATH``) names that file: the path
  travels in the settings on Kosarak as ``source``.
* Grids: epsilon in {1, 2, 3, 4, 5}; RE(k) vs k at epsilon = 2; Fig. 5 with
  :math:`\\varepsilon_1 = 1 < \\varepsilon_2 = 2`; Fig. 6 at ``ell = 2``, k = 20 (vs epsilon)
  and epsilon = 2 (vs k).

Modules: :mod:`~pldp.experiments.idue.runs` (data, mechanisms, one repeat),
:mod:`~pldp.experiments.idue.checks` (the paper's claims), :mod:`~pldp.experiments.idue.figures`
(the panels) and :mod:`~pldp.experiments.idue.specs` (grids and the experiments).
"""

from pldp.experiments.idue import checks, runs, specs
from pldp.experiments.idue.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.idue.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.idue.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

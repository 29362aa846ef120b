"""PLDP-FEBSF (Wu, Zhu, Zhang, Xie): reproduction of Figures 2-8.

Setting (Sec. 7.1, 7.2). Every user of a real dataset (Education: Adult ``education``, 16
values, 32,561 users; Job: Bank Marketing ``job``, 12 values (the paper says 9), 45,211 users;
Country: Adult ``native-country``, 42 values, 48,842 users) picks a budget level at random,
independently of her item, with level shares ``rho`` uniform or power-law; ``cells[level, item]``
is a multinomial split of each item's users over the levels, drawn afresh in every repeat.
Data are perturbed with basic RAPPOR at the user's level, the level with k-RR at ``eps_p``
(Sec. 7.1); every baseline also uses basic RAPPOR (APLDP chooses between k-RR and basic RAPPOR
per level, as Sec. 7.1 says APLDP does).

Choices the paper leaves open (documented in ``docs/reproduction/febsf.md``):

* power-law shares: :math:`\\rho_i \\propto i^{-1}` over the levels in increasing budget order
  (favouring small budgets: 0.34, 0.17, 0.11, ... for ten levels; 2/3, 1/3 for two);
* MSE is the mean over items of the squared *frequency* error, ``l2(p, p_hat) / d``; MAE the
  mean absolute frequency error (:func:`pldp.metrics.mae`), the truth being the dataset's
  frequencies;
* "EMOA" is our joint EM (ERRATA FEBSF-4); the paper's printed EM is shown as "EM (paper)",
  capped at :data:`PAPER_EM_STEPS` steps (its item estimate is settled after one step; further
  steps mostly move ``rho``, see the docs); the joint EM is capped at
  :data:`EM_MAX_STEPS` steps;
* every other estimator is reported raw (no projection onto the simplex), as the paper's schemes
  are defined; Fig. 3-4 add "AUEM + Norm-Sub" and "RCF + Norm-Sub" (not in the paper) to
  separate the simplex constraint from the joint likelihood in EMOA's gain;
* PBP: the paper "randomly assigned" the public level distribution; we show PBP given the true
  shares (its own assumption) and "PBP (random shares)", given shares drawn uniformly on the
  simplex in every repeat;
* Fig. 3-4 vary ``|D|`` through the three datasets (12, 16, 42);
* repeats: not stated in the paper; 50 for Fig. 2, 30 for Figs. 3-8.

Modules: :mod:`~pldp.experiments.febsf.runs` (data, levels, one repeat of every method),
:mod:`~pldp.experiments.febsf.checks` (the paper's claims) and
:mod:`~pldp.experiments.febsf.specs` (grids, panels, the experiments).
"""

from pldp.experiments.febsf import checks, runs, specs
from pldp.experiments.febsf.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.febsf.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.febsf.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

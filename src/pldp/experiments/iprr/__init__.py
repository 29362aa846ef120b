"""Reproduction of Li, Zhu, Zhang, Xie, *Item-Oriented Personalized LDP* (IPRR), Sec. 7.

Five experiments (Table 2) on two datasets (Table 1), one :class:`Experiment` per figure and
dataset (its check tests all of that figure's claims on that dataset):

* ``fig2_zipf`` (panels (a)-(c)) and ``fig2_kosarak`` ((d)-(f)): #1-#3. KRR (at
  :math:`\\varepsilon_{min}`, LDP), URR (:math:`(D_S, D_S, \\varepsilon_{min})`-ULDP) and IPRR,
  each with Norm-Sub (NS) and MLE, against the sample ratio SR in {0.2, ..., 1.0};
  ``LC = 4``, ``NR = 0.5`` and budgets in [0.1, 1] (#1), [1, 10] (#2), [0.1, 10] (#3).
* ``fig3_zipf`` (NR 0.0-0.8) and ``fig3_kosarak`` (NR 0.1-0.9, the range the preprint keeps):
  #4, IPRR against URR at SR = 1, budgets in [0.1, 10].
* ``fig4_zipf`` and ``fig4_kosarak``: #5, IPRR against IDUE opt0/opt1/opt2 (MinID-LDP) with the
  same item budgets and ``NR = 0`` (IDUE has no non-sensitive items), SR 0.1-1.0.

Every panel is drawn once per metric of eq. 25 (MSE, the total squared count error over
``n``, and RE, the summed relative count error): ``fig2a_mse.png``, ``fig2a_re.png``, ...,
``fig3_zipf_mse.png``, ..., ``fig4_kosarak_re.png``, log y.

Data (built once per process, from a fixed seed, so every repeat sees the same dataset):

* Zipf: 100,000 users drawn from the Zipf law of exponent 2 restricted to 20 items
  (:func:`pldp.datasets.zipf_counts`).
* Kosarak: the paper gives each of Kosarak's users one random item of her click-stream and
  keeps the users whose item is among the 100 most frequent (646,510 users). pldp bundles
  only a 36,682-user prefix of Kosarak; the same construction on it keeps about 24,000 users.
  ``experiments(kosarak=PATH)`` (``pldp reproduce iprr --kosarak PATH``) reads the full file:
  the path travels in the settings of the Kosarak experiments as ``source``.

One repeat of a setting draws ``round(SR * N)`` of the ``N`` users without replacement (a
multivariate hypergeometric draw on the item counts), simulates each mechanism exactly at the
count level (:meth:`Mechanism.simulate`) and scores NS and MLE on the *same* tally against the
sample's true counts. Item budgets follow :meth:`ItemBudgets.by_frequency` on the whole
dataset's counts (the rarer the item, the smaller its budget; the most frequent ``NR`` share of
the items is non-sensitive).

Modules: :mod:`~pldp.experiments.iprr.runs` (data, mechanisms, one repeat),
:mod:`~pldp.experiments.iprr.checks` (the paper's claims) and
:mod:`~pldp.experiments.iprr.specs` (grids, panels, the experiments).
"""

from pldp.experiments.iprr import checks, runs, specs
from pldp.experiments.iprr.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.iprr.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.iprr.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

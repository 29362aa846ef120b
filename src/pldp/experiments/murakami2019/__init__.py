"""Reproduction of Murakami & Kawamoto, *Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation* (USENIX Security 2019): uRR and uRAP against RR, RAPPOR and OUE.

ULDP protects only a sensitive set :math:`X_S` of the items at :math:`\\varepsilon`; the
utility-optimized mechanisms (:class:`~pldp.URR`, :class:`~pldp.URAP`) spend nothing on the others.
The paper's text was not at hand: its claims are quoted from its abstract, and the settings are ours.
Every method's MSE (the squared error of the unbiased estimate summed over the items) is compared
with its closed form, from ``n`` users drawn i.i.d. from a population; "non-private" is the users'
empirical distribution.

Experiments (one :class:`Experiment` each):

* ``mse_eps``: against epsilon in 0.1..10 on a Zipf(1) population over ``d = 1,000``, ``n = 100,000``,
  ``|X_S| = 10`` and ``100``; figures ``mse_eps_s10.png``, ``mse_eps_s100.png``, table ``mse_eps.md``;
* ``adult``: the same on Adult's 484 (education, native-country) pairs (``n = 48,842``),
  ``|X_S| = 10`` and ``50``; figures ``adult_s10.png``, ``adult_s50.png``, table ``adult.md``.

Methods: RR (:class:`~pldp.KRR`), RAPPOR (basic one-time RAPPOR), OUE, uRR, uRAP (``theta = 1/2``),
uRAP-RAPPOR (``theta = e^(eps/2) / (e^(eps/2) + 1)``) and non-private.

Modules: :mod:`~pldp.experiments.murakami2019.runs`, :mod:`~pldp.experiments.murakami2019.checks`,
:mod:`~pldp.experiments.murakami2019.figures`, :mod:`~pldp.experiments.murakami2019.specs`.
"""

from pldp.experiments.murakami2019 import checks, runs, specs
from pldp.experiments.murakami2019.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.murakami2019.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.murakami2019.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

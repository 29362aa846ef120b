"""Reproduction of Wang, Blocki, Li & Jha, *Locally Differentially Private Protocols for Frequency
Estimation* (USENIX Security 2017): the variance comparison of the frequency oracles.

Oracles: GRR (:class:`~pldp.KRR`), SUE (basic RAPPOR, :class:`~pldp.RAPPOR`), OUE, BLH
(:class:`~pldp.OLH` with ``g = 2``), OLH, and the later SS (:class:`~pldp.SS`) and HR
(:class:`~pldp.HR`). Every variance is per report, at an item no user holds (``f = 0``):
``n Var[f_hat]``, :math:`q^*(1 - q^*)/(p^* - q^*)^2` from the oracle's own ``support`` (so
that pldp's rounding, the integer ``g`` of OLH and ``k`` of SS and the ``2**-32`` grid, is what
is compared), beside the paper's closed form at the ideal parameters.

Experiments (one :class:`Experiment` each):

* ``var_eps``: against epsilon in 0.5..5 at ``d = 1,024``; figure ``var_eps.png``, table
  ``var_eps.md``;
* ``var_d``: against ``d = 2 .. 2**14`` at epsilon 2 and 4; figures ``var_d_eps2.png``,
  ``var_d_eps4.png``, table ``var_d.md``;
* ``per_user``: the same through real per-user reports (``perturb`` + ``tally``) at ``d = 64``;
  table ``per_user.md``;
* ``kosarak``: the MSE of each oracle's estimates on Kosarak's first items (``d = 17,034``), over
  all items and the 50 most frequent; figure ``kosarak.png``, table ``kosarak.md``.

Modules: :mod:`~pldp.experiments.wang2017.runs`, :mod:`~pldp.experiments.wang2017.checks`,
:mod:`~pldp.experiments.wang2017.figures`, :mod:`~pldp.experiments.wang2017.specs`.
"""

from pldp.experiments.wang2017 import checks, runs, specs
from pldp.experiments.wang2017.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.wang2017.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.wang2017.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

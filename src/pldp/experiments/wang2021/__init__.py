"""Reproduction of Wang, Li & Jha, *Locally Differentially Private Heavy Hitter Identification*
(IEEE TDSC 18(2), 2021; arXiv:1708.06674): how well PEM, the paper's prefix extending method, identifies
the heavy hitters against epsilon, beside TreeHist and SFP.

Protocols (:mod:`pldp.heavy`): :class:`~pldp.heavy.PEM`, :class:`~pldp.heavy.TreeHist` (a byte a
step) and :class:`~pldp.heavy.SFP` (one-byte fragments); each asked for the top 10.

Experiments (one :class:`Experiment` each):

* ``zipf``: Zipf(1.3) over 3,000 random words of at most 8 bytes, ``n = 200,000``, epsilon 1..6;
  figure ``zipf.png`` (precision and recall with 95 % bands), table ``zipf.md``;
* ``kosarak``: Kosarak's users' first items as text, epsilon 1..6; figure ``kosarak.png``, table
  ``kosarak.md``.

Modules: :mod:`~pldp.experiments.wang2021.runs`, :mod:`~pldp.experiments.wang2021.checks`,
:mod:`~pldp.experiments.wang2021.figures`, :mod:`~pldp.experiments.wang2021.specs`.
"""

from pldp.experiments.wang2021 import checks, runs, specs
from pldp.experiments.wang2021.checks import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.wang2021.runs import *  # noqa: F403 (re-exported: the names of its __all__)
from pldp.experiments.wang2021.specs import *  # noqa: F403 (re-exported: the names of its __all__)

__all__ = [*checks.__all__, *runs.__all__, *specs.__all__]

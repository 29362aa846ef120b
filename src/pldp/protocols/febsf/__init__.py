"""User-level personalized LDP with hidden budgets: PLDP-FEBSF (Wu, Zhu, Zhang, Xie).

* :class:`FEBSF` (:mod:`~pldp.protocols.febsf.protocol`): the client (item report at the user's
  level, level report at :math:`\\varepsilon_p`), the tally, the simulation and the privacy check;
* :class:`FEBSFReports`, :class:`FEBSFTally` (:mod:`~pldp.protocols.febsf.tally`): what users
  send and what the server keeps;
* :func:`auem` (:mod:`~pldp.protocols.febsf.auem`): the approximately unbiased estimate of
  eq. 4-5 with a delta-method variance (ERRATA FEBSF-1: Theorem 5.3 is wrong);
* :func:`em` (:mod:`~pldp.protocols.febsf.em`): maximum likelihood of ``(p, rho)`` by EM on the
  *joint* likelihood of (reported level, item report) (ERRATA FEBSF-4), or ``variant="paper"``,
  Section 6 as printed, kept only to reproduce the paper;
* :func:`~pldp.protocols.febsf.robust.robust` and :func:`~pldp.protocols.febsf.huber.huber`: the
  estimates under attack (equal influence over report groups; bounded influence over reported
  levels), :mod:`~pldp.protocols.febsf.detect` the ones-count screen.
"""

from pldp.protocols.febsf.auem import auem
from pldp.protocols.febsf.em import em
from pldp.protocols.febsf.protocol import FEBSF
from pldp.protocols.febsf.tally import FEBSFReports, FEBSFTally

__all__ = ["FEBSF", "FEBSFReports", "FEBSFTally", "auem", "em"]

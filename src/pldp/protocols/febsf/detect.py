"""PLDP-FEBSF's ``"detect"``: unlikely unary reports dropped, and level reports tested against the level model.

* **Unary reports** (OUE, RAPPOR): a report whose number of ones is unlikely at *every* level
  (below ``alpha``; :mod:`pldp.estimation.detect`) is flagged. The pattern tally holds every
  report's bits, so the flagged ones are simply left out and the joint EM runs on the rest as
  truncated data (:func:`~pldp.protocols.febsf.em.em` with ``keep``): an honest report of level
  ``i`` is kept with probability :math:`\\kappa_i`, the same for every item, and the EM adds back
  the expected dropped ones. That is the correction for the honest reports dropped; ``rho`` and
  ``p`` are the whole honest population's.
* **k-RR reports** are never unlikely (every level and item can be reported): nothing is flagged
  and the estimate is the joint EM's.
* **Level reports**: under the level mechanism, the share of reports at level ``l`` is
  :math:`\\lambda_l = \\sum_i \\rho_i \\pi(l|i) \\le \\max_i \\pi(l|i)` whatever the shares. A share
  above that by more than :math:`z = 4` binomial standard errors cannot come from honest users;
  ``info["level_excess"]`` counts the reports beyond it (a lower bound on the fakes claiming that
  level) and ``info["level_excess_share"]`` their share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pldp.estimation.detect import ALPHA_BAND, DEFAULT_ALPHA, UnaryLaws, describe, flag_region
from pldp.estimation.result import Estimate
from pldp.protocols.febsf.em import em
from pldp.protocols.febsf.tally import pattern_tally

if TYPE_CHECKING:
    from pldp.protocols.febsf.protocol import FEBSF
    from pldp.protocols.febsf.tally import FEBSFTally

__all__ = ["LEVEL_Z", "detect", "level_excess"]

#: Standard errors by which a reported level's share must exceed what any level shares allow.
LEVEL_Z = 4.0


def level_excess(protocol: FEBSF, tally: FEBSFTally) -> dict[str, Any]:
    """The level reports' test against the level model (module docstring)."""
    n = tally.n
    share = tally.level_counts / n
    most = protocol.pi.max(axis=0)  # the largest share each reported level can have
    slack = LEVEL_Z * np.sqrt(most * (1 - most) / n)
    excess = np.maximum(share - most - slack, 0.0)
    return {
        "level_excess": int(np.floor(excess.sum() * n)),
        "level_excess_share": float(excess.sum()),
        "level_excess_levels": np.flatnonzero(excess > 0).tolist(),
    }


def laws(protocol: FEBSF) -> UnaryLaws:
    """Each level's law of a report's number of ones (unary data)."""
    d = protocol.d
    comps = [
        (1.0 / protocol.t, np.full(d, a), np.full(d, b)) for a, b in zip(protocol.p_star, protocol.q_star, strict=True)
    ]
    return UnaryLaws.of(comps, weights_known=False)  # the level shares are unknown


def detect(
    protocol: FEBSF, tally: FEBSFTally, *, alpha: float = DEFAULT_ALPHA, tol: float = 1e-10, max_iter: int = 20_000
) -> Estimate:
    """The ``"detect"`` estimate (module docstring); ``info`` holds the flagged share and the level test."""
    tally = protocol._check_tally(tally)
    info: dict[str, Any] = level_excess(protocol, tally)
    keep = None
    screened = tally
    if protocol.kind == "unary":
        the_laws = laws(protocol)
        region = flag_region(the_laws, alpha)
        patterns, level, count = tally.rows
        ones = tally.pattern_ones
        info.update(describe(tally.ones, region, flag_region(the_laws, ALPHA_BAND), alpha))
        kept = ~region[ones]
        screened = pattern_tally(
            protocol.t, protocol.d, patterns[kept], level[kept], count[kept], fingerprint=tally.fingerprint
        )
        keep = 1.0 - the_laws.laws() @ region.astype(float)  # per level (one item class)
    else:
        info["detection"] = "k-RR reports are never unlikely: nothing is flagged"
    fit = em(protocol, screened, tol=tol, max_iter=max_iter, keep=keep)
    info = {**fit.info, **info, "estimator": "detect: flagged reports dropped, joint EM on the rest (truncated data)"}
    return Estimate(fit.frequencies, fit.variance, tally.n, "detect", protocol.domain, fit.iterations, True, info, True)

"""A campaign spec's caps (``docs/wire-format.md`` §1.3): what one device may spend or send on the
spec's family, checked as :mod:`pldp.deploy.spec` reads a spec."""

from __future__ import annotations

import math
from typing import Any

from pldp.errors import SpecError

__all__ = ["CAP_MEMBERS", "MAX_ROUNDS", "check_caps"]

#: The members of a spec's ``caps``: the campaign's caps per UTC day and in total (epsilon), and on
#: the number of reports (rounds).
CAP_MEMBERS = ("day", "total", "rounds")
#: The largest rounds cap: 2**53 - 1, the largest integer both clients read exactly.
MAX_ROUNDS = 2**53 - 1


def check_caps(caps: Any) -> None:
    """The optional ``caps`` member, when present: ``{"day": eps, "total": eps, "rounds": n}``, one or
    more of them: ``day`` and ``total`` positive finite numbers (the most one device may spend on the
    spec's family, :mod:`pldp.ledger`), ``rounds`` a positive integer (the most reports one device
    sends on the family: one per round of a recurring campaign)."""
    if not isinstance(caps, dict) or not caps:
        raise SpecError("caps must be an object with one or more of 'day', 'total' and 'rounds'")
    extra = sorted(set(caps) - set(CAP_MEMBERS))
    if extra:
        raise SpecError(f"caps has unknown members {', '.join(extra)}; a spec's caps are 'day', 'total' and 'rounds'")
    for name in ("day", "total"):
        v = caps.get(name)
        if name in caps and not (isinstance(v, (int, float)) and not isinstance(v, bool) and _positive(v)):
            raise SpecError(f"caps.{name} must be a positive finite number (an epsilon)")
    if "rounds" in caps and not _rounds(caps["rounds"]):
        raise SpecError("caps.rounds must be a positive integer (the most reports one device sends)")


def _rounds(v: Any) -> bool:
    """Whether ``v`` is a rounds cap: an integer (a whole float too: JSON does not tell ``8.0`` from
    ``8``, nor does JavaScript) from 1 to :data:`MAX_ROUNDS`."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, float) and not v.is_integer():  # also inf and nan
        return False
    return 1 <= v <= MAX_ROUNDS


def _positive(v: float) -> bool:
    try:
        return math.isfinite(float(v)) and v > 0
    except OverflowError:  # an integer beyond every float
        return False

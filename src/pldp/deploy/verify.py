"""Verify a spec's privacy claims from the spec alone, with exact arithmetic.

A spec's sampler carries its claims (``docs/wire-format.md`` §3); :func:`verify` reads the spec
(format, id, structure) and checks every claim exactly with :func:`pldp.channel.check_claims`,
returning a :class:`~pldp.channel.Verification`: one row per claim with the budget claimed and
the realised epsilon.
"""

from __future__ import annotations

from typing import Any

from pldp.channel.claims import Verification, check_claims
from pldp.channel.node import Row
from pldp.deploy.spec import Spec, read_spec

__all__ = ["Row", "Verification", "verify"]


def verify(spec: Any) -> Verification:
    """Check every privacy claim of a spec exactly, from the spec alone.

    Parameters
    ----------
    spec : Spec, dict or str
        A :class:`~pldp.deploy.Spec`, or its JSON (text or parsed). The format, the id and the
        sampler's structure are checked first (:class:`~pldp.errors.SpecError` if they fail);
        the privacy claims are then checked and reported, not raised.

    Returns
    -------
    Verification
        ``holds`` is True exactly when every claim holds; ``rows`` hold each realised epsilon.

    Examples
    --------
    >>> import pldp
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Pick one", labels=["a", "b", "c"])
    >>> v = verify(spec)
    >>> v.holds, [round(r.realised, 9) for r in v.rows]
    (True, [0.999999999])
    """
    root, spec_id = (spec.root, spec.id) if isinstance(spec, Spec) else read_spec(spec)
    return check_claims(root, spec_id)

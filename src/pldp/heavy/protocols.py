"""The heavy-hitter protocols by name, and a protocol rebuilt from its parameters (a free-text spec's
``oracle`` member: :meth:`pldp.deploy.Spec.heavy_hitter`)."""

from __future__ import annotations

from typing import Any

from pldp.errors import ParameterError
from pldp.heavy.base import HeavyHitter
from pldp.heavy.pem import PEM
from pldp.heavy.sfp import SFP
from pldp.heavy.treehist import TreeHist

__all__ = ["PROTOCOLS", "heavy_from_params"]

#: The protocols by the name their :meth:`~HeavyHitter.params` give.
PROTOCOLS: dict[str, type[HeavyHitter]] = {"PEM": PEM, "TreeHist": TreeHist, "SFP": SFP}


def heavy_from_params(params: dict[str, Any]) -> HeavyHitter:
    """The protocol of :meth:`HeavyHitter.params` (a :class:`~pldp.errors.ParameterError` for an unknown
    name or a bad argument).

    Examples
    --------
    >>> heavy_from_params(TreeHist(4.0, max_bytes=8).params())
    TreeHist(epsilon=4, max_bytes=8, step_bits=8, split=0.5)
    """
    args = dict(params)
    name = args.pop("name", None)
    cls = PROTOCOLS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ParameterError(f"the heavy-hitter protocol must be one of {sorted(PROTOCOLS)}, got {name!r}")
    try:
        return cls(**args)
    except (TypeError, ValueError) as err:  # an unknown member, or one of no number's type
        raise ParameterError(f"bad arguments for {cls.__name__}: {err}") from None

"""The two calls of :mod:`pldp.testing` into an oracle's channel and parameters, kept in one place.

An oracle's *sampler node* (:meth:`~pldp.FrequencyOracle.sampler`) is the exact description of the
randomizer its clients run (integer thresholds on the 2^-32 grid and the claims); its *parameters*
rebuild it (:meth:`~pldp.FrequencyOracle.from_params`). The audit checks and the default data read
the node; the round-trip check rebuilds the oracle from its parameters.
"""

from __future__ import annotations

import json

from pldp.channel import Node
from pldp.fingerprint import canonical
from pldp.oracle import FrequencyOracle
from pldp.registry import oracle_from_params, registered

__all__ = ["from_params", "sampler_node"]


def sampler_node(oracle: FrequencyOracle) -> Node | None:
    """The sampler node that runs ``oracle``'s client, or ``None`` when its class describes none (an
    oracle built from scratch on :class:`pldp.FrequencyOracle`)."""
    try:
        return oracle.sampler()
    except NotImplementedError:
        return None


def from_params(oracle: FrequencyOracle) -> FrequencyOracle | None:
    """The oracle rebuilt from ``oracle.params()`` read back from JSON, or ``None`` when its class
    cannot be rebuilt from parameters.

    A registered class (:func:`pldp.registry.register`: one a campaign spec can name) is rebuilt by
    the registry, which also checks that the parameters are the canonical ones it builds; another
    class by the :meth:`~pldp.FrequencyOracle.from_params` it defines itself. An unregistered
    subclass that only inherits ``from_params`` (its constructor may take other arguments) is not
    rebuilt.

    Raises
    ------
    SpecError
        A registered class whose parameters do not rebuild it.
    """
    params = json.loads(json.dumps(canonical(oracle.params())))
    cls = type(oracle)
    if registered().get(cls.__name__) is cls:
        return oracle_from_params(params)
    if "from_params" not in vars(cls):
        return None
    return cls.from_params(params)

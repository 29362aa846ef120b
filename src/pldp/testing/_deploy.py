"""The two calls of :mod:`pldp.testing` into the deployment layer, kept in one place.

An oracle's *sampler node* is the exact description of the randomizer its clients run (integer
thresholds on the 2^-32 grid and the claims); its *parameters* rebuild it. The audit checks and
the default data read the node; the round-trip check rebuilds the oracle from its parameters.
"""

from __future__ import annotations

import json
from typing import Any

from pldp.errors import SpecError
from pldp.fingerprint import canonical
from pldp.oracle import FrequencyOracle

__all__ = ["from_params", "sampler_node"]


def sampler_node(oracle: FrequencyOracle) -> Any:
    """The sampler node that runs ``oracle``'s client, or ``None`` when pldp has no sampler
    description of its class (an oracle built from scratch on :class:`pldp.FrequencyOracle`)."""
    from pldp.deploy.sampler import sampler_of

    try:
        return sampler_of(oracle)
    except SpecError:
        return None


def from_params(oracle: FrequencyOracle) -> FrequencyOracle | None:
    """The oracle rebuilt from ``oracle.params()`` read back from JSON, or ``None`` when its class
    is not one of pldp's own (which a campaign spec can name).

    Raises
    ------
    SpecError
        A class of pldp's whose parameters do not rebuild it.
    """
    from pldp.deploy.oracles import oracle_from_params

    if type(oracle).__module__.split(".")[0] != "pldp":
        return None
    return oracle_from_params(json.loads(json.dumps(canonical(oracle.params()))))

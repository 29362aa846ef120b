"""``pldp.estimate``: one entry point for every mechanism and protocol."""

from __future__ import annotations

from typing import Any

from pldp.errors import EstimationError
from pldp.methods import STANDARD_METHODS
from pldp.oracle import FrequencyOracle

__all__ = ["METHODS", "estimate"]

#: The standard estimation methods every mechanism and protocol accepts.
METHODS: tuple[str, ...] = STANDARD_METHODS


def estimate(oracle: FrequencyOracle, tally: Any, method: str = "unbiased", **options: Any) -> Any:
    """Estimate the item distribution from a tally of ``oracle``'s reports.

    The same call serves every mechanism and protocol: it checks that ``oracle`` is one and
    returns ``oracle.estimate(tally, method, **options)``.

    Parameters
    ----------
    oracle : FrequencyOracle
        The mechanism or protocol that produced the reports (its public parameters).
    tally
        The aggregated reports (``oracle.tally``, ``oracle.simulate``, or a merge of several);
        refused if another oracle made it (fingerprint).
    method : str
        ``"unbiased"``, ``"norm_sub"`` or ``"mle"`` for every oracle (see
        :mod:`pldp.oracle`), or one of the extra names in ``oracle.methods`` (PLDP-FEBSF:
        ``"paper"``; MPLDP: ``"sum"``); :mod:`pldp.methods` says what each does and guarantees.
        For mechanisms see :func:`pldp.estimation.pure.estimate_counts`.
    **options
        The oracle's estimator options (mechanisms: ``solver``, ``tol``, ``max_iter``; FEBSF:
        ``tol``, ``max_iter``, ``start``; MPLDP: ``attribute``).

    Returns
    -------
    Estimate
        Frequencies, counts, a per-item variance and confidence intervals (MPLDP: an
        :class:`~pldp.estimation.result.EstimateSet`, one per attribute).

    Raises
    ------
    EstimationError
        Not a pldp oracle, an unknown method, a tally of another oracle, or a tally with no
        reports.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> mech = pldp.KRR(1.0, 3)
    >>> tally = mech.simulate([500, 300, 200], np.random.default_rng(0))
    >>> est = pldp.estimate(mech, tally, "mle")
    >>> est.method, est.on_simplex, bool(abs(est.frequencies.sum() - 1) < 1e-12)
    ('mle', True, True)
    """
    if not isinstance(oracle, FrequencyOracle):
        raise EstimationError(f"expected a pldp mechanism or protocol, got {type(oracle).__name__}")
    return oracle.estimate(tally, method, **options)

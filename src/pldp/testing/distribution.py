"""Do two ways of drawing a tally have the same law? Tallies as vectors, and a two-sample test.

:func:`flatten` turns any tally into the vector of every count it holds; :func:`same_law_pvalue`
compares two samples of such vectors (rows: repeats) coordinate by coordinate, with Welch's
t-test of the means and the Brown-Forsythe test of the spreads (Levene's test about the median),
and combines all of them by Bonferroni. :func:`pldp.testing.check_per_user_matches_simulate`
uses both, at a family-wise significance of :data:`ALPHA`.

A tally type of your own is flattened by adding a function to :data:`FLATTENERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from pldp.protocols import FEBSFTally, GroupedTally, MPLDPTally
from pldp.tally import Tally

__all__ = ["ALPHA", "FLATTENERS", "can_flatten", "flatten", "same_law_pvalue"]

#: Family-wise significance of the distribution test (Bonferroni over coordinates and tests).
ALPHA = 1e-3


def _febsf(tally: FEBSFTally) -> np.ndarray:
    """Direct data: the (level, item) table; unary data: users and ones per reported level and bit."""
    if tally.kind == "direct":
        return np.asarray(tally.cells).ravel()
    patterns, level, count = tally.rows
    bits = np.unpackbits(patterns, axis=1, count=tally.d) * count[:, None]
    per_level = np.stack([bits[level == lv].sum(axis=0) for lv in range(tally.t)])
    return np.concatenate([tally.level_counts, per_level.ravel()])


#: Tally type -> the vector of its counts (looked up along the type's MRO).
FLATTENERS: dict[type, Callable[[Any], np.ndarray]] = {
    Tally: lambda t: np.concatenate([[t.n], t.counts]),
    GroupedTally: lambda t: np.concatenate([flatten(x) for x in t.tallies]),
    MPLDPTally: lambda t: np.concatenate([t.sizes.ravel(), *(c.ravel() for c in t.counts)]),
    FEBSFTally: _febsf,
}


def _flattener(tally_type: type) -> Callable[[Any], np.ndarray] | None:
    return next((FLATTENERS[cls] for cls in tally_type.__mro__ if cls in FLATTENERS), None)


def can_flatten(tally_type: type) -> bool:
    """Whether :func:`flatten` knows tallies of ``tally_type`` (an oracle's ``tally_type``)."""
    return _flattener(tally_type) is not None


def flatten(tally: Any) -> np.ndarray:
    """Every count a tally holds, as one vector of fixed length for a given oracle.

    Raises
    ------
    TypeError
        A tally type with no entry in :data:`FLATTENERS` (nor one of its base classes).

    Examples
    --------
    >>> import pldp
    >>> flatten(pldp.KRR(1.0, 3).tally([0, 2, 2])).tolist()
    [3, 1, 0, 2]
    """
    how = _flattener(type(tally))
    if how is not None:
        return np.asarray(how(tally))
    raise TypeError(f"no flattening of a {type(tally).__name__}: add one to pldp.testing.distribution.FLATTENERS")


def same_law_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Bonferroni-combined p-value that two samples of tally vectors (rows) share their law.

    Per coordinate: Welch's t-test of the means and the Brown-Forsythe test of the spreads.
    Coordinates constant in both samples must be equal (else p = 0).

    Parameters
    ----------
    a, b : ndarray, shape (repeats, k)
        Two samples of flattened tallies.

    Returns
    -------
    float
        ``min(1, m * min p)`` over the ``m`` tests.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> same_law_pvalue(rng.normal(0, 1, (200, 3)), rng.normal(0, 1, (200, 3))) > 1e-3
    True
    >>> same_law_pvalue(rng.normal(0, 1, (200, 3)), rng.normal(0.5, 1, (200, 3))) < 1e-3
    True
    """
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"expected two samples of vectors of one length, got shapes {a.shape} and {b.shape}")
    pvals = []
    for j in range(a.shape[1]):
        x, y = a[:, j].astype(float), b[:, j].astype(float)
        if x.std() == 0 and y.std() == 0:
            pvals.append(1.0 if x[0] == y[0] else 0.0)
            continue
        pvals.append(stats.ttest_ind(x, y, equal_var=False).pvalue)
        pvals.append(stats.levene(x, y, center="median").pvalue)
    return float(min(1.0, min(pvals) * len(pvals)))

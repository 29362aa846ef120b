"""How an experiment turns true data into a tally: exact count-level simulation or the per-user path.

Every mechanism and protocol of pldp offers two ways from the users' true data to the server's
tally, with the same distribution (each ``simulate`` docstring says why; the tests check it
with chi-square homogeneity tests):

* ``"count"`` (the default): ``obj.simulate(data, rng)`` draws the sufficient statistics from
  their exact law, at a cost that depends on the domain, not on the number of users;
* ``"per-user"``: every user is materialised, ``obj.perturb`` randomizes each of them (vectorised,
  bit-packed for unary encoding) and ``obj.tally`` aggregates the reports, as a real collection
  would. Slower, and the check that nothing in an experiment depends on the shortcut.

The experiment modules call :func:`observe` wherever a repeat needs a tally, with the path taken
from the setting (``setting["path"]``, which the runner sets from ``pldp reproduce --path``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pldp.errors import ParameterError
from pldp.itemsets import ItemSets
from pldp.protocols.leveled import cell_users

__all__ = ["DEFAULT_PATH", "PATHS", "check_path", "observe", "path_of", "users_of"]

#: The two ways from true data to a tally.
PATHS = ("count", "per-user")
#: What the runner uses unless told otherwise.
DEFAULT_PATH = "count"


def check_path(path: str) -> str:
    """``path`` if it is one of :data:`PATHS`, else :class:`~pldp.errors.ParameterError`."""
    if path not in PATHS:
        raise ParameterError(f"path must be one of {PATHS}, got {path!r}")
    return path


def path_of(setting: Mapping[str, Any]) -> str:
    """The path a setting asks for (``setting["path"]``, default :data:`DEFAULT_PATH`), validated."""
    return check_path(str(setting.get("path", DEFAULT_PATH)))


def users_of(*data: Any) -> tuple[Any, ...]:
    """The per-user form of the data a ``simulate`` call takes, as ``perturb`` takes it.

    * one 1-D array of counts per item (mechanisms, padding-and-sampling's inner mechanism)
      -> ``(items,)``;
    * one 2-D ``(t, d)`` table of counts per (level, item) (PLDP-FEBSF and the grouped
      baselines) -> ``(items, levels)``;
    * anything else (MPLDP's ``(values, levels)``, padding-and-sampling's item-sets) is already
      per user and is returned as is.

    The 2-D expansion is :func:`pldp.protocols.leveled.cell_users`.
    """
    if len(data) != 1 or isinstance(data[0], ItemSets):
        return data
    counts = np.asarray(data[0])
    if counts.dtype.kind not in "iu":
        raise ParameterError(f"counts must be integers, got dtype {counts.dtype}")
    if counts.size and counts.min() < 0:
        raise ParameterError("counts must be non-negative")
    if counts.ndim not in (1, 2):
        raise ParameterError(f"counts must be 1-D (per item) or 2-D (per level and item), got shape {counts.shape}")
    if counts.ndim == 1:
        return (np.repeat(np.arange(counts.size), counts),)
    return cell_users(counts)


def observe(obj: Any, *data: Any, rng: np.random.Generator, path: str = DEFAULT_PATH) -> Any:
    """The tally of ``data`` under ``obj`` (a mechanism or a protocol), by the chosen ``path``.

    Parameters
    ----------
    obj
        Anything with ``simulate(*data, rng)``, ``perturb(*users, rng)`` and ``tally(reports)``.
    *data
        What ``obj.simulate`` takes (counts, a ``(t, d)`` table, or per-user arrays).
    rng : numpy.random.Generator
    path : {"count", "per-user"}
        Exact count-level simulation, or perturb every user and tally the reports.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> mech = pldp.KRR(1.0, 4)
    >>> counts = np.array([50, 30, 15, 5])
    >>> observe(mech, counts, rng=np.random.default_rng(0)).n
    100
    >>> observe(mech, counts, rng=np.random.default_rng(0), path="per-user").n
    100
    """
    if check_path(path) == "count":
        return obj.simulate(*data, rng)
    return obj.tally(obj.perturb(*users_of(*data), rng))

"""One adapter per peer library and mechanism, and pldp's per-user paths, for ``peers.py``.

Each peer's client and server calls are written once here, in :func:`pure_ldp` and
:func:`multi_freq_ldpy`, behind the common :class:`Peer` interface; ``peers.py`` drives
every library with the same loops. The peers are imported when an adapter is made, so
this module imports without them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pldp
from pldp.mechanisms.base import Mechanism

EPS = 1.0

MECHANISMS = {  # pldp name -> (family, pldp class, the peers' name for it)
    "KRR": ("direct", pldp.KRR, "GRR/DE"),
    "OUE": ("unary", pldp.OUE, "OUE"),
    "RAPPOR": ("unary", pldp.RAPPOR, "SUE"),
}


@dataclass
class Peer:
    """One peer library's implementation of one mechanism.

    ``path(xs)`` perturbs every user of the list ``xs``, aggregates and estimates with the
    library's own estimator; ``unbiased(xs)`` does the same and returns the plain unbiased
    estimate, and the library's own estimate when that is something else (else ``None``).
    Both return frequencies (fractions of the users).

    Attributes
    ----------
    library : str
        The library's name.
    api : str
        The calls of the path, as shown in the table.
    path : callable
        Users (list of int) to frequencies.
    unbiased : callable
        Users to the unbiased estimate and the library's own estimate (or ``None``).
    seed : callable
        Seeds the generator the library's clients draw from.
    path_held : callable or None
        The same path when all the reports exist before they are aggregated, as at a
        collector that receives them (``None``: ``path`` already holds them).
    """

    library: str
    api: str
    path: Callable[[list[int]], np.ndarray]
    unbiased: Callable[[list[int]], tuple[np.ndarray, np.ndarray | None]]
    seed: Callable[[int], None]
    path_held: Callable[[list[int]], np.ndarray] | None = None


def _identity(x: int) -> int:
    """pure-ldp's index mapper for 0-based items (its default is ``x - 1``)."""
    return x


def pure_ldp(name: str, d: int) -> Peer:
    """pure-ldp: ``DEClient``/``DEServer`` and ``UEClient``/``UEServer`` (SUE, or OUE with ``use_oue``).

    Parameters
    ----------
    name : str
        pldp's name of the mechanism (a key of :data:`MECHANISMS`).
    d : int
        Items.

    Returns
    -------
    Peer
        The adapter; it streams (each report aggregated as it is made) and also holds.
    """
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    if name == "KRR":
        client_cls, server_cls, kw, api = DEClient, DEServer, {}, "DEClient + DEServer"
    else:
        oue = name == "OUE"
        client_cls, server_cls, kw = UEClient, UEServer, {"use_oue": oue}
        api = f"UEClient + UEServer(use_oue={oue})"
    client = client_cls(EPS, d, index_mapper=_identity, **kw)
    mech = MECHANISMS[name][1](EPS, d)
    support = mech.support
    # Same mechanism: pure-ldp's (p, q) are pldp's support probabilities (pldp rounds its
    # unary coins to a 2^-16 grid, a change below 0.1 %).
    assert math.isclose(client.p, float(support[0][0]), rel_tol=1e-3), (name, client.p, support)
    assert math.isclose(client.q, float(support[1][0]), rel_tol=1e-3), (name, client.q, support)

    def aggregate(reports: Iterable[Any]) -> np.ndarray:
        server = server_cls(EPS, d, index_mapper=_identity, **kw)
        for report in reports:
            server.aggregate(report)
        return server.estimate_all(range(d), suppress_warnings=True) / server.n

    def path(xs: list[int]) -> np.ndarray:  # each report aggregated as it is made
        return aggregate(client.privatise(x) for x in xs)

    def path_held(xs: list[int]) -> np.ndarray:  # what a collector has received, then aggregated
        return aggregate([client.privatise(x) for x in xs])

    return Peer("pure-ldp", api, path, lambda xs: (path(xs), None), seed_pure_ldp, path_held)


def seed_pure_ldp(s: int) -> None:
    """Seed the generators pure-ldp's clients (and its Hadamard server's permutation) draw from.

    Parameters
    ----------
    s : int
        The seed.
    """
    random.seed(s)
    np.random.seed(s)  # noqa: NPY002 (pure-ldp draws from the global generators)


def multi_freq_ldpy(name: str, d: int) -> Peer:
    """multi-freq-ldpy: ``GRR_Client`` / ``UE_Client`` per user, then ``*_Aggregator_MI``.

    Its aggregators return the matrix-inversion estimate clipped at 0 and renormalised, not
    the unbiased estimate; for the like-for-like MSE the unbiased estimate is formed from the
    counts of its own reports with its own (p, q).

    Parameters
    ----------
    name : str
        pldp's name of the mechanism (a key of :data:`MECHANISMS`).
    d : int
        Items.

    Returns
    -------
    Peer
        The adapter (it holds every report before aggregating).
    """
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

    e = math.exp(EPS)
    if name == "KRR":
        p, q = e / (e + d - 1), 1 / (e + d - 1)
        api = "GRR_Client + GRR_Aggregator_MI"

        def reports_of(xs: list[int]) -> list[Any]:
            return [GRR_Client(x, d, EPS) for x in xs]

        def aggregate(reports: list[Any]) -> np.ndarray:
            return GRR_Aggregator_MI(reports, d, EPS)

        def counts_of(reports: list[Any]) -> np.ndarray:
            return np.bincount(np.asarray(reports), minlength=d)

    else:
        oue = name == "OUE"
        p, q = (0.5, 1 / (e + 1)) if oue else (math.sqrt(e) / (math.sqrt(e) + 1), 1 / (math.sqrt(e) + 1))
        api = f"UE_Client + UE_Aggregator_MI(optimal={oue})"

        def reports_of(xs: list[int]) -> list[Any]:
            return [UE_Client(x, d, EPS, oue) for x in xs]

        def aggregate(reports: list[Any]) -> np.ndarray:
            return UE_Aggregator_MI(reports, EPS, oue)

        def counts_of(reports: list[Any]) -> np.ndarray:
            return np.sum(reports, axis=0)

    def path(xs: list[int]) -> np.ndarray:
        return aggregate(reports_of(xs))

    def unbiased(xs: list[int]) -> tuple[np.ndarray, np.ndarray]:
        reports = reports_of(xs)
        return (counts_of(reports) / len(xs) - q) / (p - q), aggregate(reports)

    return Peer("multi-freq-ldpy", api, path, unbiased, _numba_seeder())


def _numba_seeder() -> Callable[[int], None]:
    """A jitted ``np.random.seed``: multi-freq-ldpy's clients draw from numba's generator, not numpy's."""
    import numba

    @numba.njit(cache=False)
    def _numba_seed(s: int) -> None:
        np.random.seed(s)  # noqa: NPY002

    return _numba_seed


#: The adapters, by library, in the order of the table; and each library's package.
PEER_FACTORIES: dict[str, Callable[[str, int], Peer]] = {"pure-ldp": pure_ldp, "multi-freq-ldpy": multi_freq_ldpy}
PEER_PACKAGES = {"pure-ldp": "pure-ldp", "multi-freq-ldpy": "multi-freq-ldpy"}


def pldp_path(mech: Mechanism, rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """pldp's per-user path: perturb every user, tally, unbiased estimate.

    Parameters
    ----------
    mech : Mechanism
        The mechanism.
    rng : numpy.random.Generator
        The generator of the perturbation.

    Returns
    -------
    callable
        Users (an item array) to frequencies.
    """

    def path(x: np.ndarray) -> np.ndarray:
        return pldp.estimate(mech, mech.tally(mech.perturb(x, rng))).frequencies

    return path


def pldp_streaming_path(
    mech: Mechanism, rng: np.random.Generator, chunk: int = 1024
) -> Callable[[np.ndarray], np.ndarray]:
    """pldp ingesting a stream: perturb and tally ``chunk`` users at a time, merging the tallies.

    Parameters
    ----------
    mech : Mechanism
        The mechanism.
    rng : numpy.random.Generator
        The generator of the perturbation.
    chunk : int, optional
        Users per step.

    Returns
    -------
    callable
        Users (an item array) to frequencies.
    """

    def path(x: np.ndarray) -> np.ndarray:
        tally = mech.tally(mech.perturb(x[:chunk], rng))
        for start in range(chunk, x.size, chunk):
            tally = tally.merge(mech.tally(mech.perturb(x[start : start + chunk], rng)))
        return pldp.estimate(mech, tally).frequencies

    return path

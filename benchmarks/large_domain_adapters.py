"""pure-ldp's large-domain oracles with client and server apart, and the law of every library's estimates.

For ``large_domain_rows.py``: pure-ldp 1.2.0's ``LHClient``/``LHServer`` (OLH),
``FastLHClient``/``FastLHServer`` (FLH) and ``HadamardResponseClient``/``HadamardResponseServer``
(HR) behind one :class:`SplitPeer` each, and the exact mean and variance of each item's unbiased
estimate (:func:`support_law`) for pldp's and pure-ldp's oracles on given users, from which the
suite's MSE rows take their closed form. pure-ldp is imported when an adapter is made.

A report of item ``x`` *supports* item ``v`` with probability ``Q[x, v]``; the counts ``C_v`` of
``n`` independent reports have mean ``sum_x n_x Q[x, v]`` and variance
``sum_x n_x Q[x, v] (1 - Q[x, v])``, and the unbiased estimate is ``(C_v / n - q) / (p - q)``.
With an ideal hash family ``Q`` is ``p`` on the diagonal and ``q`` elsewhere (the textbook
fixed-population variance); a small family (FLH) has its own collision rates ``c_xv`` and
``Q[x, v] = c_xv p + (1 - c_xv) (1 - p) / (g - 1)``, which biases the estimate by a fixed amount.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pldp
from pldp.channel.hashed import hash_values
from pldp.mechanisms.base import Mechanism

#: Mean and variance of every item's unbiased estimate, from the users' true counts.
Law = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass
class SplitPeer:
    """One pure-ldp oracle, its client and server apart.

    Attributes
    ----------
    api : str
        The calls, as shown in the table.
    make_server : callable
        A fresh server (its construction is timed apart: FLH's hashes the domain).
    privatise : callable
        Users (list of int) to their reports (the client, one call per user).
    estimate : callable
        A server and the reports to the unbiased frequencies (``server.aggregate`` per report,
        then ``estimate_all(range(d)) / n``).
    law : callable
        The users' true counts to the mean and variance of each item's estimate.
    """

    api: str
    make_server: Callable[[], Any]
    privatise: Callable[[list[int]], list[Any]]
    estimate: Callable[[Any, list[Any]], np.ndarray]
    law: Law


def support_law(support: np.ndarray, counts: np.ndarray, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of each item's unbiased estimate ``(C_v / n - q) / (p - q)`` (module docstring).

    Parameters
    ----------
    support : numpy.ndarray
        ``(d, d)``: ``[x, v]`` the probability that a report of ``x`` supports ``v``.
    counts : numpy.ndarray
        Users per item.
    p, q : float
        The estimator's support probabilities.

    Returns
    -------
    mean, variance : numpy.ndarray
        Per item.
    """
    n = float(counts.sum())
    mean = (counts @ support / n - q) / (p - q)
    var = counts @ (support * (1 - support)) / (n * (p - q)) ** 2
    return mean, var


def ideal_support(d: int, p: float, q: float) -> np.ndarray:
    """``p`` on the diagonal, ``q`` elsewhere: OLH with an ideal family, HR."""
    return np.full((d, d), q) + np.eye(d) * (p - q)


def family_support(hashes: np.ndarray, g: int, p: float) -> np.ndarray:
    """The support matrix of local hashing over a small family, from its ``(seeds, d)`` hash values.

    ``c_xv`` is the share of the seeds with ``H_s(x) = H_s(v)`` (``g`` products of one-hot
    matrices); a report keeps its hash value w.p. ``p``, else takes each other value w.p.
    ``(1 - p) / (g - 1)``.
    """
    seeds, d = hashes.shape
    same = np.zeros((d, d))
    for value in range(g):
        hit = (hashes == value).astype(np.float32)
        same += hit.T @ hit
    c = same / seeds
    return c * p + (1 - c) * (1 - p) / (g - 1)


def pldp_law(mech: Mechanism) -> Law:
    """The law of pldp's unbiased estimate for OLH (ideal or small family, :attr:`pldp.OLH.seeds`) or HR.

    Parameters
    ----------
    mech : Mechanism
        ``pldp.OLH`` or ``pldp.HR``.

    Returns
    -------
    callable
        True counts to the mean and variance of each item's estimate.
    """
    p, q = float(mech.support[0][0]), float(mech.support[1][0])
    if isinstance(mech, pldp.OLH) and mech.seeds < 1 << 20:  # FLH: its own family's collisions
        hashes = hash_values(np.arange(mech.d)[None, :], np.arange(mech.seeds)[:, None], mech.g)
        support = family_support(hashes, mech.g, p)
    else:  # 2**31 seeds: within 2**-16 of the ideal family's collision rate 1/g
        support = mech.channel()
    return lambda counts: support_law(support, counts, p, q)


def _estimate_all(server: Any, reports: list[Any]) -> np.ndarray:
    for report in reports:
        server.aggregate(report)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(server.estimate_all(range(server.d), suppress_warnings=True)) / server.n


def _identity(x: int) -> int:
    return x


def pure_ldp_olh(eps: float, d: int) -> SplitPeer:
    """pure-ldp's OLH: ``LHClient``/``LHServer(use_olh=True)``, ``g = round(e^eps) + 1``.

    A report's seed is ``random.randint(0, sys.maxsize)``, which xxhash 3 takes modulo ``2**32``
    (xxhash 4 refuses such seeds, and ``str`` input): an ideal family.
    """
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer

    client = LHClient(eps, d, use_olh=True, index_mapper=_identity)
    p, g = client.p, client.g
    support = ideal_support(d, p, 1 / g)
    return SplitPeer(
        "LHClient + LHServer(use_olh=True)",
        lambda: LHServer(eps, d, use_olh=True, index_mapper=_identity),
        lambda xs: [client.privatise(x) for x in xs],
        _estimate_all,
        lambda counts: support_law(support, counts, p, 1 / g),
    )


def pure_ldp_flh(eps: float, d: int, k: int) -> SplitPeer:
    """pure-ldp's FLH: ``FastLHClient``/``FastLHServer(k, use_olh=True)``, ``k`` hash functions.

    Seeds ``0..k-1`` of ``xxh32(str(v), seed)``; the server hashes the whole domain under every
    seed when it is made (``k d`` calls in Python, made twice by its constructor).
    """
    from pure_ldp.frequency_oracles.local_hashing import FastLHClient, FastLHServer

    client = FastLHClient(eps, d, k, use_olh=True, index_mapper=_identity)
    p, g = client.p, client.g
    probe = FastLHServer(eps, d, k, use_olh=True, index_mapper=_identity)
    assert probe.g == g and math.isclose(probe.p, p), (probe.g, g)
    support = family_support(np.asarray(probe.hash_matrix, dtype=np.int64), g, p)
    return SplitPeer(
        f"FastLHClient + FastLHServer(k={k}, use_olh=True)",
        lambda: FastLHServer(eps, d, k, use_olh=True, index_mapper=_identity),
        lambda xs: [client.privatise(x) for x in xs],
        _estimate_all,
        lambda counts: support_law(support, counts, p, 1 / g),
    )


def pure_ldp_hr(eps: float, d: int, seed: int) -> SplitPeer:
    """pure-ldp's Hadamard response: ``HadamardResponseServer`` and ``HadamardResponseClient``.

    For ``eps <= 1`` it is the symmetric HR of Acharya, Sun and Zhang (pldp's :class:`pldp.HR`):
    ``K`` the smallest power of two above ``d``, a report uniform over the ``+1`` half of row
    ``x + 1`` w.p. ``e^eps / (e^eps + 1)``. For ``eps > 1`` it is their blocked variant
    (:func:`blocked_hr_law`). The server's random permutation (drawn at ``eps > 1``) is seeded by
    ``seed``; every server of the adapter has the same one.
    """
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer

    def make_server() -> Any:  # the permutation from np.random seeded by `seed`, the generator then restored
        state = np.random.get_state()  # noqa: NPY002 (pure-ldp draws from the global generator)
        np.random.seed(seed)  # noqa: NPY002
        try:
            return HadamardResponseServer(eps, d, index_mapper=_identity)
        finally:
            np.random.set_state(state)  # noqa: NPY002

    server = make_server()
    client = HadamardResponseClient(eps, d, server.get_hash_funcs(), index_mapper=_identity)
    if eps <= 1:
        e = math.exp(eps)
        support = ideal_support(d, e / (e + 1), 0.5)
        law: Law = lambda counts: support_law(support, counts, e / (e + 1), 0.5)  # noqa: E731
        variant = f"symmetric HR, K = {server.hr.outsz}"
    else:
        law = blocked_hr_law(server.hr, eps)
        variant = f"blocked HR, B = {server.hr.part} blocks of {server.hr.partsz}"
    return SplitPeer(
        f"HadamardResponseClient + HadamardResponseServer ({variant})",
        make_server,
        lambda xs: [client.privatise(x) for x in xs],
        _estimate_all,
        law,
    )


def blocked_hr_law(hr: Any, eps: float) -> Law:
    """The law of pure-ldp's HR at ``eps > 1`` (``Hadamard_Rand_general_original``), from its source.

    ``B`` blocks of ``b`` outputs; item ``x`` (after the server's permutation) owns column ``x mod
    (b - 1) + 1`` of block ``x // (b - 1)``. A report is uniform over all ``B b`` outputs w.p.
    ``u = 2B / (2B - 1 + e^eps)``, else uniform over the ``+1`` half of its column in its block.
    The estimate of ``v`` is the mean of ``Z = 2 [y in C_v] - [y in block(v)]`` over ``1 - u``:
    unbiased, with variance ``[n u / B + (1 - u) n_block(v) - n_v (1 - u)^2] / (n (1 - u))^2``.
    """
    e = math.exp(eps)
    blocks = hr.part
    u = 2 * blocks / (2 * blocks - 1 + e)
    block_of = np.asarray(hr.permute, dtype=np.int64) // (hr.partsz - 1)

    def law(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = float(counts.sum())
        in_block = np.bincount(block_of, weights=counts)[block_of]
        var = (n * u / blocks + (1 - u) * in_block - counts * (1 - u) ** 2) / (n * (1 - u)) ** 2
        return counts / n, var

    return law

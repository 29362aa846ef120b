"""Memoized chains (issue 27): pldp's longitudinal perturb + tally on one core, and pldp beside
multi-freq-ldpy's longitudinal clients (L-GRR, L-OUE, L-OSUE, L-SUE, L-SOUE) on identical users.

Rows (``--only longitudinal``):

* ``longitudinal perturb + tally``: ``m.tally(m.perturb(items, rng))`` at n = 10^6, d = 100,
  Zipf(2), ε∞ = 2, ε1 = 1, a first report per user (a fresh permanent response), timed interleaved
  with the one-shot mechanism at ε1 (KRR, OUE) for reference. Targets (issue 27): 30 M users/s
  (L-GRR), 3 M users/s (L-OUE, L-OSUE).
* ``longitudinal round from a memo``: a second round of the same users, their permanent responses
  read from the memo of the first (lookup + IRR + tally); no target.
* ``vs multi-freq-ldpy (longitudinal): per-user path``: its ``L_*_Client`` per user and its
  ``L_*_Aggregator_MI`` over the first 10^4 users of the same population, against pldp's
  perturb + tally + unbiased estimate of all 10^6 (the speed ratio).
* ``vs multi-freq-ldpy (longitudinal): same estimates (MSE)``: 10^4 identical users, seeded
  repeats; each library's unbiased estimate (multi-freq-ldpy's: the inversion of its own reports'
  counts with its own probabilities; its MI output is clipped and renormalised) against the closed
  form of its own chain. L-GRR at k = 2, where the printed IRR is right, and at k = 100, where it is
  not (ERRATA LONG-1): there multi-freq-ldpy's chain is GRR at a smaller one-report budget than
  ε1, and the row states its variance against pldp's exact L-GRR.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import pldp
from adapters import _numba_seeder
from harness import N_USERS, SEED, Mode, Row, best_of, measure, measure_group, timed_row, zipf_population
from pldp.experiments.longitudinal import paper_lgrr_epsilon, uniform_mechanism
from pldp.mechanisms.base import Mechanism
from report import fmt_time, users
from same_estimates import mse_row

D, EPS_PERM, EPS_1 = 100, 2.0, 1.0
#: Targets of issue 27 (users/s, one core).
TARGETS = {"L-GRR": 30e6, "L-OUE": 3e6, "L-OSUE": 3e6}
PROTOCOLS = ("L-GRR", "L-OUE", "L-OSUE", "L-SUE", "L-SOUE")
#: The peer's module and function names of each protocol.
PEER_NAMES = {"L-GRR": "L_GRR", "L-OUE": "L_OUE", "L-OSUE": "L_OSUE", "L-SUE": "L_SUE", "L-SOUE": "L_SOUE"}
PEER_USERS, PEER_USERS_QUICK = 10_000, 2_000
MSE_USERS, MSE_REPEATS, MSE_REPEATS_QUICK = 10_000, 5, 3
#: Repeats of the unary rows (each call is a fraction of a second).
UNARY_REPEATS, UNARY_REPEATS_QUICK = 15, 3


def bench_longitudinal(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """The speed rows, then the rows beside multi-freq-ldpy (one ``skipped`` row without it).

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the population and of pldp's runs.

    Returns
    -------
    list of Row
        The rows, in the order of the table.
    """
    _, items = zipf_population(N_USERS, D, rng)
    rows, seconds = speed_rows(mode, rng, items)
    rows += memo_rows(mode, rng, items)
    try:
        version = importlib.metadata.version("multi-freq-ldpy")
        peers = {p: _peer(p) for p in PROTOCOLS}
    except (ImportError, importlib.metadata.PackageNotFoundError) as exc:
        return [*rows, Row("vs multi-freq-ldpy (longitudinal): skipped", f"not installed ({exc})", None, None, "", "-")]
    rows += peer_speed_rows(mode, rng, items, seconds, peers, version)
    rows += mse_rows(mode, items[:MSE_USERS], peers, version)
    return rows


# ------------------------------------------------------------------------------- speed
def _mech(protocol: str, d: int = D) -> Mechanism:
    return uniform_mechanism(protocol, EPS_PERM, EPS_1, d)


def speed_rows(mode: Mode, rng: np.random.Generator, items: np.ndarray) -> tuple[list[Row], dict[str, float]]:
    """perturb + tally of every chain, interleaved with the one-shot mechanism at ε1 of its family.

    Returns the rows and each protocol's best time (seconds per 10^6 users).
    """
    direct = {"L-GRR": _mech("L-GRR"), "KRR": pldp.KRR(EPS_1, D)}
    unary = {p: _mech(p) for p in PROTOCOLS[1:]} | {"OUE": pldp.OUE(EPS_1, D)}

    def run(m: Mechanism) -> Callable[[], object]:
        return lambda: m.tally(m.perturb(items, rng))

    times = measure_group({k: run(m) for k, m in direct.items()}, mode.repeats, mode.min_repeat_s)
    repeats = UNARY_REPEATS_QUICK if mode.name == "quick" else UNARY_REPEATS
    times |= measure_group({k: run(m) for k, m in unary.items()}, repeats, mode.min_repeat_s)
    rows = []
    for p in PROTOCOLS:
        ref = "KRR" if p == "L-GRR" else "OUE"
        t, target = times[p], TARGETS.get(p)
        rate = N_USERS / t.best
        how = "one draw from the chained channel" if p == "L-GRR" else "the chained bits, one coin each"
        rows.append(
            timed_row(
                "longitudinal perturb + tally",
                f"{p} ε∞={EPS_PERM:g}, ε1={EPS_1:g}, n={users(N_USERS)}, d={D}, a first report per user ({how}); "
                f"{ref} ε={EPS_1:g} beside it {fmt_time(times[ref].best)}",
                t,
                rate,
                "users/s",
                "-" if target is None else f"≥ {target / 1e6:g} Musers/s",
                None if target is None else rate >= target,
                reference_seconds=times[ref].best,
            )
        )
    return rows, {p: times[p].best for p in PROTOCOLS}


def memo_rows(mode: Mode, rng: np.random.Generator, items: np.ndarray) -> list[Row]:
    """A second round of the same users from the memo of the first: L-GRR and L-OSUE."""
    rows = []
    for p in ("L-GRR", "L-OSUE"):
        m = _mech(p)
        _, memo = m.perturb(items, rng, memo=m.memo())

        def again(m: Any = m, memo: Any = memo) -> object:
            return m.tally(m.perturb(items, rng, memo=memo)[0])

        t = measure(again, 1 if mode.name == "quick" else 3, mode.min_repeat_s)
        rows.append(
            timed_row(
                "longitudinal round from a memo",
                f"{p} ε∞={EPS_PERM:g}, ε1={EPS_1:g}: the same {users(N_USERS)} users again, d={D}, every permanent "
                "response read from the first round's memo (lookup, IRR, tally)",
                t,
                N_USERS / t.best,
                "users/s",
                "-",
                None,
            )
        )
    return rows


# ------------------------------------------------------------------------------- peer
def _peer(protocol: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """multi-freq-ldpy's client and MI aggregator of ``protocol``."""
    name = PEER_NAMES[protocol]
    module = importlib.import_module(f"multi_freq_ldpy.long_freq_est.{name}")
    return getattr(module, f"{name}_Client"), getattr(module, f"{name}_Aggregator_MI")


def _peer_reports(protocol: str, client: Callable[..., Any], xs: list[int], k: int) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [client(x, k, EPS_PERM, EPS_1) for x in xs]


def _peer_path(protocol: str, peer: tuple[Callable[..., Any], Callable[..., Any]], xs: list[int], k: int) -> Any:
    client, aggregate = peer
    reports = _peer_reports(protocol, client, xs, k)
    if protocol == "L-GRR":
        return aggregate(reports, k, EPS_PERM, EPS_1)
    return aggregate(reports, EPS_PERM, EPS_1)


def peer_speed_rows(
    mode: Mode,
    rng: np.random.Generator,
    items: np.ndarray,
    seconds: dict[str, float],
    peers: dict[str, Any],
    version: str,
) -> list[Row]:
    """The peer's per-user path on the first users, against pldp's perturb + tally + estimate of all."""
    n_sub = PEER_USERS_QUICK if mode.name == "quick" else PEER_USERS
    xs = items[:n_sub].tolist()
    rows = []
    for p in PROTOCOLS:
        m = _mech(p)
        tally = m.tally(m.perturb(items, rng))
        est = measure(lambda m=m, tally=tally: pldp.estimate(m, tally, "unbiased"), 3, mode.min_repeat_s)
        pldp_rate = N_USERS / (seconds[p] + est.best)
        t = best_of(
            lambda p=p: _peer_path(p, peers[p], xs, D),
            lambda p=p: _peer_path(p, peers[p], xs[:200], D),
            1 if mode.name == "quick" else 3,
        )
        rate = n_sub / t.best
        rows.append(
            timed_row(
                "vs multi-freq-ldpy (longitudinal): per-user path",
                f"{p} ε∞={EPS_PERM:g}, ε1={EPS_1:g}, d={D}: multi-freq-ldpy {version} {PEER_NAMES[p]}_Client + "
                f"{PEER_NAMES[p]}_Aggregator_MI, per-user loop over the first {users(n_sub)} of the same users; pldp "
                f"perturb + tally + estimate of all {users(N_USERS)} {fmt_time(seconds[p] + est.best)}; "
                f"**pldp {pldp_rate / rate:.3g}x faster**",
                t,
                rate,
                "users/s",
                "-",
                None,
                users=n_sub,
                speedup=pldp_rate / rate,
            )
        )
    return rows


# -------------------------------------------------------------------------------- MSE
def _peer_mechanism(protocol: str, k: int) -> Mechanism:
    """pldp's chain with the peer's one-report law: the printed L-GRR IRR is LGRR at the budget it gives."""
    return uniform_mechanism("L-GRR (paper)" if protocol == "L-GRR" else protocol, EPS_PERM, EPS_1, k)


def _peer_unbiased(protocol: str, client: Callable[..., Any], xs: list[int], k: int, same: Mechanism) -> np.ndarray:
    """The unbiased inversion of the peer's reports' counts, with its chain's support probabilities."""
    reports = _peer_reports(protocol, client, xs, k)
    if protocol == "L-GRR":
        counts = np.bincount(np.asarray(reports, dtype=np.int64), minlength=k)
    else:
        counts = np.sum(np.asarray(reports), axis=0)
    p, q = (float(v[0]) for v in same.support)  # (p*, q*): a report supports the user's item / another
    return (counts / len(xs) - q) / (p - q)


def mse_rows(mode: Mode, x: np.ndarray, peers: dict[str, Any], version: str) -> list[Row]:
    """MSE of pldp and of multi-freq-ldpy on identical users against each one's closed form."""
    repeats = MSE_REPEATS_QUICK if mode.name == "quick" else MSE_REPEATS
    seed_peer = _numba_seeder()
    rows = []
    cases = [("L-GRR", 2), ("L-GRR", D)] + [(p, D) for p in PROTOCOLS[1:]]
    for p, k in cases:
        xk = x % k
        n, f = xk.size, np.bincount(xk, minlength=k) / xk.size
        xs = xk.tolist()
        ours, same = _mech(p, k), _peer_mechanism(p, k)

        def pldp_est(r: int, m: Mechanism = ours, xk: np.ndarray = xk) -> np.ndarray:
            rng = np.random.default_rng(SEED + r)
            return pldp.estimate(m, m.tally(m.perturb(xk, rng)), "unbiased").frequencies

        def peer_est(r: int, p: str = p, k: int = k, xs: list[int] = xs, same: Mechanism = same) -> np.ndarray:
            seed_peer(SEED + r)
            np.random.seed(SEED + r)  # noqa: NPY002 (its L-GRR client draws from numpy's global generator too)
            return _peer_unbiased(p, peers[p][0], xs, k, same)

        exact = float(pldp.theory.expected_l2(ours, f, n, model="fixed"))
        for lib, mech, estimate in (("pldp", ours, pldp_est), ("multi-freq-ldpy", same, peer_est)):
            var = pldp.theory.item_variance(mech, f, n, model="fixed")
            theory, se = float(var.mean()), math.sqrt(2 * float(np.sum(var**2)) / repeats) / k
            losses = [float(np.mean((estimate(r) - f) ** 2)) for r in range(repeats)]
            api = (
                f'pldp {pldp.__version__} estimate(..., "unbiased")'
                if lib == "pldp"
                else f"multi-freq-ldpy {version} {PEER_NAMES[p]}_Client; unbiased inversion of its reports' counts"
            )
            note = ""
            if lib != "pldp" and p == "L-GRR" and k > 2:
                eps = paper_lgrr_epsilon(EPS_PERM, EPS_1, k)
                note = (
                    f"; its printed IRR (ERRATA LONG-1) makes one report GRR at ε={eps:.3f}, not {EPS_1:g}: "
                    f"{theory * k / exact:.2f}x the exact L-GRR's variance"
                )
            setting = (
                f"{p} ε∞={EPS_PERM:g}, ε1={EPS_1:g}, n={users(n)}, k={k}, {repeats} seeded repeats, identical "
                f"users: {api}{note}"
            )
            rows.append(mse_row("vs multi-freq-ldpy (longitudinal): same estimates (MSE)", setting, losses, theory, se))
    return rows

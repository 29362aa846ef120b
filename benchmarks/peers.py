"""pldp side by side with the other LDP libraries: pure-ldp 1.2.0 and multi-freq-ldpy 0.2.5.

Called by ``benchmarks/run.py`` (``make bench``), which puts these rows in the same table as
its own; see ``benchmarks/peers_README.md`` for what every row measures. In short:

* **per-user path** (perturb every user, aggregate, estimate) of GRR/KRR, OUE and basic
  RAPPOR (SUE) at (n = 10^6, d = 100) and (n = 10^5, d = 1,000): users per second and peak
  memory of each library. pldp runs on all n users; the peers loop over users in Python and
  run on a prefix of the same (shuffled) users, as many as they get through in about a
  second; the rates are users per second either way.
* **reference lines** (bare numpy, same amount of random bits) and pldp's ratio to them;
* **same estimates**: the MSE of every library over seeded repeats on identical inputs,
  against the closed-form MSE, to show the comparison is like for like;
* **count-level trials** (pldp only: the peers have no count-level simulation).

Peak memory is measured in a forked child process (:func:`peak_memory`): after a warm-up
on 200 users, ``gc.collect()`` and glibc's ``malloc_trim(0)``, the child resets its RSS
high-water mark (``/proc/self/clear_refs``), runs the path once and reports the growth of
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (tracemalloc in the child where that reset is
not available; the method is recorded in ``results.json``).
"""

from __future__ import annotations

import ctypes
import gc
import importlib.metadata
import json
import math
import os
import random
import resource
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pldp
import run  # the helpers of run.py (a second copy of the module when run.py is __main__: harmless)
from pldp.datasets import zipf_counts
from pldp.mechanisms.base import Mechanism
from run import Mode, Row, Timing, fmt_time, measure, measure_group

# Settings of the per-user rows: (users, items).
SETTINGS = ((1_000_000, 100), (100_000, 1_000))
EPS = 1.0
# Users each peer runs in the full mode, by (library, family, d): about a second of work.
PEER_USERS = {
    ("pure-ldp", "direct", 100): 100_000,
    ("pure-ldp", "direct", 1_000): 100_000,
    ("pure-ldp", "unary", 100): 10_000,
    ("pure-ldp", "unary", 1_000): 10_000,
    ("multi-freq-ldpy", "direct", 100): 100_000,
    ("multi-freq-ldpy", "direct", 1_000): 100_000,
    ("multi-freq-ldpy", "unary", 100): 100_000,
    ("multi-freq-ldpy", "unary", 1_000): 10_000,
}
QUICK_DIVISOR = 10  # --quick: the peers run on a tenth of those users
MSE_USERS, MSE_D, MSE_REPEATS, MSE_REPEATS_QUICK = 10_000, 100, 5, 3
SIM_ROWS = (("KRR", 41_270), ("OUE", 100), ("OUE", 1_000), ("RAPPOR", 100), ("RAPPOR", 1_000), ("RAPPOR", 41_270))

# Targets.
TARGET_SPEEDUP = 10.0  # pldp users/s over every peer's, per-user rows
TARGET_MEMORY = 0.25  # pldp peak / peer peak at the same users, unary rows
TARGET_REF_RATIO = run.TARGET_REF_RATIO  # pldp / bare-numpy reference, direct-encoding rows
TARGET_Z = 4.0  # |MSE - theory| / standard error of the mean squared error

MECHANISMS = {  # pldp name -> (family, pldp class, the peers' name for it)
    "KRR": ("direct", pldp.KRR, "GRR/DE"),
    "OUE": ("unary", pldp.OUE, "OUE"),
    "RAPPOR": ("unary", pldp.RAPPOR, "SUE"),
}


def _identity(x: int) -> int:
    """pure-ldp's index mapper for 0-based items (its default is ``x - 1``)."""
    return x


@dataclass
class Peer:
    """One peer library's implementation of one mechanism.

    ``path(xs)`` perturbs every user of the list ``xs``, aggregates and estimates with the
    library's own estimator; ``unbiased(xs)`` does the same and returns the plain unbiased
    estimate, and the library's own estimate when that is something else (else ``None``).
    Both return frequencies (fractions of the users).
    """

    library: str
    api: str
    path: Callable[[list[int]], np.ndarray]
    unbiased: Callable[[list[int]], tuple[np.ndarray, np.ndarray | None]]
    seed: Callable[[int], None]
    #: The same path when all the reports exist before they are aggregated, as at a collector
    #: that receives them (None: ``path`` already holds them).
    path_held: Callable[[list[int]], np.ndarray] | None = None


def _pure_ldp(name: str, d: int) -> Peer:
    """pure-ldp: ``DEClient``/``DEServer`` and ``UEClient``/``UEServer`` (SUE, or OUE with ``use_oue``)."""
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

    def seed(s: int) -> None:
        random.seed(s)
        np.random.seed(s)  # noqa: NPY002 (pure-ldp draws from the global generator)

    return Peer("pure-ldp", api, path, lambda xs: (path(xs), None), seed, path_held)


def _multi_freq_ldpy(name: str, d: int) -> Peer:
    """multi-freq-ldpy: ``GRR_Client`` / ``UE_Client`` per user, then ``*_Aggregator_MI``.

    Its aggregators return the matrix-inversion estimate clipped at 0 and renormalised, not
    the unbiased estimate; for the like-for-like MSE the unbiased estimate is formed from the
    counts of its own reports with its own (p, q).
    """
    import numba
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

    @numba.njit(cache=False)
    def _numba_seed(s: int) -> None:  # its clients draw from numba's generator, not numpy's
        np.random.seed(s)  # noqa: NPY002

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

    return Peer("multi-freq-ldpy", api, path, unbiased, _numba_seed)


PEER_FACTORIES = {"pure-ldp": _pure_ldp, "multi-freq-ldpy": _multi_freq_ldpy}
PEER_PACKAGES = {"pure-ldp": "pure-ldp", "multi-freq-ldpy": "multi-freq-ldpy"}


def pldp_path(mech: Mechanism, rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """pldp's per-user path: perturb every user, tally, unbiased estimate."""

    def path(x: np.ndarray) -> np.ndarray:
        return pldp.estimate(mech, mech.tally(mech.perturb(x, rng))).frequencies

    return path


def pldp_streaming_path(
    mech: Mechanism, rng: np.random.Generator, chunk: int = 1024
) -> Callable[[np.ndarray], np.ndarray]:
    """pldp ingesting a stream: perturb and tally ``chunk`` users at a time, merging the tallies."""

    def path(x: np.ndarray) -> np.ndarray:
        tally = mech.tally(mech.perturb(x[:chunk], rng))
        for start in range(chunk, x.size, chunk):
            tally = tally.merge(mech.tally(mech.perturb(x[start : start + chunk], rng)))
        return pldp.estimate(mech, tally).frequencies

    return path


def population(n: int, d: int) -> np.ndarray:
    """The shuffled Zipf(2) users of a setting (its own seed: the same in every run)."""
    return run.zipf_population(n, d, np.random.default_rng([run.SEED, n, d]))[1]


# ------------------------------------------------------------------------ measurement
def _malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_peak() -> bool:
    """Reset this process's RSS high-water mark (Linux >= 4.0); False where not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_memory(fn: Callable[[], object], warm: Callable[[], object]) -> tuple[int, str]:
    """Peak memory (bytes) one call of ``fn`` adds, measured in a forked child; and the method.

    The child first calls ``warm`` (the same path on a few users: it faults in the code
    pages, which a forked child shares with its parent but has not mapped yet), frees what
    it can (``gc.collect``, ``malloc_trim``: memory the parent freed earlier must not be
    silently reused), resets the RSS high-water mark and reports the growth of
    ``ru_maxrss`` over the call. Without ``fork`` or the reset, tracemalloc.
    """
    if not hasattr(os, "fork"):
        warm()
        return _tracemalloc_peak(fn), "tracemalloc"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: measure, write one JSON line, leave without cleanup
        status = 1
        try:
            os.close(read_end)
            warm()
            gc.collect()
            _malloc_trim()
            if _reset_peak():
                before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                fn()
                peak, method = 1024 * (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before), "ru_maxrss"
            else:
                peak, method = _tracemalloc_peak(fn), "tracemalloc"
            os.write(write_end, json.dumps({"peak": peak, "method": method}).encode())
            status = 0
        except BaseException as exc:  # report anything to the parent
            os.write(write_end, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(status)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks) or b'{"error": "no answer"}')
    if "error" in answer:
        raise RuntimeError(f"memory measurement failed: {answer['error']}")
    return int(answer["peak"]), str(answer["method"])


def _tracemalloc_peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best_of(fn: Callable[[], object], warm: Callable[[], object], repeats: int) -> Timing:
    """Warm up with ``warm`` (a small call: compiles numba code), then the best of ``repeats`` calls.

    The garbage collector is off while timing, as in :func:`run.measure_group`.
    """
    warm()
    times = []
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was_on:
            gc.enable()
        gc.collect()
    return Timing(min(times), times, 1, float("nan"))


def mib(nbytes: float) -> str:
    """Bytes as KiB below 1 MiB, else MiB (two significant digits below 10 MiB); RSS moves by 4 KiB pages."""
    if nbytes < 4096:
        return "< 4 KiB"
    if nbytes < 2**20:
        return f"{nbytes / 2**10:.0f} KiB"
    value = nbytes / 2**20
    return f"{value:.2g} MiB" if value < 10 else f"{value:.0f} MiB"


def users(n: int) -> str:
    """10^k for powers of ten, else with thousands separators."""
    k = round(math.log10(n)) if n > 0 else 0
    return f"10^{k}" if 10**k == n else f"{n:,}"


# ------------------------------------------------------------------------------ rows
def bench_peers(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """All rows of the comparison with pure-ldp and multi-freq-ldpy (plus pldp-only trials)."""
    try:
        versions = {lib: importlib.metadata.version(pkg) for lib, pkg in PEER_PACKAGES.items()}
        for lib in PEER_FACTORIES:
            PEER_FACTORIES[lib]("KRR", 10)
    except (ImportError, importlib.metadata.PackageNotFoundError) as exc:
        skipped = Row(
            "vs peers: skipped",
            f"the peer libraries are not installed ({exc}): pip install -e '.[bench]'",
            None,
            None,
            "",
            "-",
        )
        return [skipped, *bench_count_level(mode, rng, {})]
    rows, fastest = per_user_rows(mode, rng, versions)
    rows += mse_rows(mode, versions)
    rows += bench_count_level(mode, rng, fastest)
    return rows


def per_user_rows(
    mode: Mode, rng: np.random.Generator, versions: dict[str, str]
) -> tuple[list[Row], dict[tuple[str, int], tuple[str, float]]]:
    """Per-user path of every library, the references, speed-up and memory rows."""
    quick = mode.name == "quick"
    peer_repeats = 1 if quick else 3
    rows: list[Row] = []
    fastest: dict[tuple[str, int], tuple[str, float]] = {}
    for n, d in SETTINGS:
        items = population(n, d)
        where = f"n={users(n)}, d={d:,}"
        # pldp and the references, interleaved (same machine load for the ratios).
        thr = np.uint16(round(65536 * pldp.OUE(EPS, d).b[0]))  # OUE's zero-bit threshold
        block_coins = pldp.UnaryEncoding._BLOCK_COINS
        block = max(64, block_coins // d)  # pldp's block

        def coins_packbits(x: np.ndarray = items, d: int = d, thr: np.uint16 = thr, block: int = block) -> np.ndarray:
            out = np.empty((x.size, -(-d // 8)), dtype=np.uint8)
            for start in range(0, x.size, block):
                m = min(block, x.size - start)
                coins = rng.bit_generator.random_raw(-(-m * d // 4)).view(np.uint16)[: m * d].reshape(m, d)
                out[start : start + m] = np.packbits(coins < thr, axis=1)
            return out

        refs: dict[str, tuple[str, Callable[[], object]]] = {
            "direct": (
                "rng.random(n) + np.bincount(items)",
                lambda x=items, d=d: (rng.random(x.size), np.bincount(x, minlength=d)),
            ),
            "unary": (
                "16-bit coins rng.bit_generator.random_raw(n·d/4) < t + np.packbits, blocks of "
                f"2^{block_coins.bit_length() - 1} coins",
                coins_packbits,
            ),
        }
        mechs = {name: cls(EPS, d) for name, (_, cls, _) in MECHANISMS.items()}
        fns: dict[str, Callable[[], object]] = {f"ref|{fam}": fn for fam, (_, fn) in refs.items()}
        for name, mech in mechs.items():
            est = pldp_path(mech, rng)(items)
            assert est.shape == (d,) and np.isfinite(est).all(), name
            fns[name] = lambda m=mech, x=items: pldp_path(m, rng)(x)
        timings = measure_group(fns, max(3, mode.repeats // 4), mode.min_repeat_s)
        for fam, (label, _) in refs.items():
            t = timings[f"ref|{fam}"]
            rows.append(
                run._row(
                    "vs peers: reference (bare numpy)",
                    f"{label}, {where}",
                    t,
                    n / t.best,
                    "users/s",
                    "-",
                    None,
                )
            )
        for name, mech in mechs.items():
            family, _, peer_name = MECHANISMS[name]
            t_pldp = timings[name]
            rate_pldp = n / t_pldp.best
            ref_s = timings[f"ref|{family}"].best
            ratio_ref = t_pldp.best / ref_s
            peak_full, method = peak_memory(
                lambda m=mech, x=items: pldp_path(m, rng)(x), lambda m=mech, x=items: pldp_path(m, rng)(x[:1000])
            )
            direct = family == "direct"
            rows.append(
                run._row(
                    "vs peers: per-user path",
                    f"{name} ε={EPS:g}, {where}: **pldp** {pldp.__version__} perturb + tally + estimate, all "
                    f"{users(n)} users; peak {mib(peak_full)}; {ratio_ref:.2f}x the {family} reference",
                    t_pldp,
                    rate_pldp,
                    "users/s",
                    f"≤ {TARGET_REF_RATIO:g}x reference" if direct else "-",
                    (round(ratio_ref, 2) <= TARGET_REF_RATIO) if direct else None,
                    reference_s=ref_s,
                    reference_ratio=ratio_ref,
                    peak_bytes=peak_full,
                    memory_method=method,
                )
            )
            best_peer = ("", 0.0)
            for lib, factory in PEER_FACTORIES.items():
                peer = factory(name, d)
                n_sub = PEER_USERS[(lib, family, d)] // (QUICK_DIVISOR if quick else 1)
                xs = items[:n_sub].tolist()
                sub = items[:n_sub]
                est = peer.path(xs)
                assert est.shape == (d,) and np.isfinite(est).all(), (lib, name)
                t = best_of(lambda p=peer, xs=xs: p.path(xs), lambda p=peer, xs=xs: p.path(xs[:200]), peer_repeats)
                rate = n_sub / t.best
                speedup = rate_pldp / rate
                if rate > best_peer[1]:
                    best_peer = (lib, rate)
                peak_peer, method_peer = peak_memory(
                    lambda p=peer, xs=xs: p.path(xs), lambda p=peer, xs=xs: p.path(xs[:200])
                )
                peak_same, _ = peak_memory(
                    lambda m=mech, x=sub: pldp_path(m, rng)(x), lambda m=mech, x=sub: pldp_path(m, rng)(x[:200])
                )
                rows.append(
                    run._row(
                        "vs peers: per-user path",
                        f"{peer_name} ε={EPS:g}, d={d:,}: {lib} {versions[lib]} {peer.api}, per-user loop over "
                        f"the first {users(n_sub)} of the same users; peak {mib(peak_peer)}; "
                        f"**pldp {speedup:.3g}x faster**",
                        t,
                        rate,
                        "users/s",
                        f"pldp ≥ {TARGET_SPEEDUP:g}x",
                        speedup >= TARGET_SPEEDUP,
                        users=n_sub,
                        speedup=speedup,
                        peak_bytes=peak_peer,
                        memory_method=method_peer,
                        pldp_peak_bytes_same_users=peak_same,
                    )
                )
                if direct:
                    continue
                judged = not quick  # quick mode: too few users, pldp's fixed block buffers dominate
                if peer.path_held is not None:  # the peer also streams: compare both ways
                    peak_stream = peak_peer
                    peak_peer, _ = peak_memory(
                        lambda p=peer, xs=xs: p.path_held(xs), lambda p=peer, xs=xs: p.path_held(xs[:200])
                    )
                    peak_pldp_stream, _ = peak_memory(
                        lambda m=mech, x=sub: pldp_streaming_path(m, rng)(x),
                        lambda m=mech, x=sub: pldp_streaming_path(m, rng)(x[:200]),
                    )
                    rows.append(
                        Row(
                            "vs peers: peak memory, streaming",
                            f"{peer_name} ε={EPS:g}, d={d:,}, the same {users(n_sub)} users, no report kept: "
                            f"{lib} aggregates each report as it is made ({mib(peak_stream)}); pldp perturbs and "
                            f"tallies 1,024 users at a time, merging the tallies ({mib(peak_pldp_stream)}); both "
                            "O(d) and flat in n, so no ratio is judged",
                            None,
                            None,
                            "",
                            "-",
                            extra={
                                "pldp_bytes": peak_pldp_stream,
                                "peer_bytes": peak_stream,
                                "users": n_sub,
                                "library": lib,
                            },
                        )
                    )
                mem_ratio = peak_same / peak_peer if peak_peer > 0 else math.inf
                held = " (all reports received, then aggregated)" if peer.path_held is not None else ""
                rows.append(
                    Row(
                        "vs peers: peak memory",
                        f"{peer_name} ε={EPS:g}, d={d:,}, the same {users(n_sub)} users, reports held: "
                        f"pldp {mib(peak_same)}, {lib} {mib(peak_peer)}{held}",
                        None,
                        mem_ratio,
                        "x the peer",
                        f"pldp {mem_ratio:.2g}x the peer" if peak_peer > 0 else "peer: no growth",
                        f"≤ {TARGET_MEMORY:g}x" + ("" if judged else " (judged in full mode)"),
                        (mem_ratio <= TARGET_MEMORY) if judged else None,
                        extra={"pldp_bytes": peak_same, "peer_bytes": peak_peer, "users": n_sub, "library": lib},
                    )
                )
            fastest[(name, d)] = best_peer
    return rows, fastest


def mse_rows(mode: Mode, versions: dict[str, str]) -> list[Row]:
    """MSE of every library on identical inputs over seeded repeats, against the closed form.

    MSE = mean over repeats of (1/d) Σ_y (f̂_y − f_y)², f the users' true frequencies. The
    theory is ``pldp.theory.expected_l2(mech, f, n, model="fixed") / d`` (the population is
    fixed and only the perturbation is random); z is (MSE − theory) over the standard error
    of a mean of ``repeats`` losses, sqrt(2 Σ_y σ_y⁴ / repeats) / d (Gaussian item errors).
    """
    n, d = MSE_USERS, MSE_D
    repeats = MSE_REPEATS_QUICK if mode.name == "quick" else MSE_REPEATS
    x = population(SETTINGS[0][0], d)[:n]
    xs = x.tolist()
    f = np.bincount(x, minlength=d) / n
    rows: list[Row] = []
    for name, (_, cls, peer_name) in MECHANISMS.items():
        mech = cls(EPS, d)
        theory = pldp.theory.expected_l2(mech, f, n, model="fixed") / d
        var = pldp.theory.item_variance(mech, f, n, model="fixed")
        se = math.sqrt(2 * float(np.sum(var**2)) / repeats) / d

        def clip(est: np.ndarray) -> np.ndarray:
            c = np.clip(est, 0, None)
            return c / c.sum()

        losses: dict[str, list[float]] = {"pldp": []}
        clipped: dict[str, list[float]] = {"pldp": []}
        apis = {"pldp": f'pldp {pldp.__version__} estimate(..., "unbiased")'}
        for r in range(repeats):
            est = pldp_path(mech, np.random.default_rng(run.SEED + r))(x)
            losses["pldp"].append(float(np.mean((est - f) ** 2)))
            clipped["pldp"].append(float(np.mean((clip(est) - f) ** 2)))
        for lib, factory in PEER_FACTORIES.items():
            peer = factory(name, d)
            apis[lib] = f"{lib} {versions[lib]} {peer.api}"
            losses[lib], clipped[lib] = [], []
            for r in range(repeats):
                peer.seed(run.SEED + r)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est, own = peer.unbiased(xs)
                losses[lib].append(float(np.mean((est - f) ** 2)))
                if own is not None:
                    clipped[lib].append(float(np.mean((own - f) ** 2)))
        for lib, values in losses.items():
            mse = float(np.mean(values))
            z = (mse - theory) / se
            note = ""
            if lib == "multi-freq-ldpy":
                note = (
                    f"; unbiased inversion of its own reports' counts; its MI output (clipped at 0, renormalised) "
                    f"has MSE {np.mean(clipped[lib]):.3g}, pldp's estimate clipped the same way "
                    f"{np.mean(clipped['pldp']):.3g}"
                )
            elif lib == "pure-ldp":
                note = "; estimate_all(normalization=0) / n"
            rows.append(
                Row(
                    "vs peers: same estimates (MSE)",
                    f"{name if lib == 'pldp' else peer_name} ε={EPS:g}, n={users(n)}, d={d}, {repeats} seeded "
                    f"repeats, identical users: {apis[lib]}{note}; theory {theory:.3g}",
                    None,
                    mse / theory,
                    "x theory",
                    f"MSE {mse:.3g} = {mse / theory:.2f}x theory (z = {z:+.1f})",
                    f"|z| ≤ {TARGET_Z:g}",
                    abs(z) <= TARGET_Z,
                    extra={
                        "mse": mse,
                        "theory": theory,
                        "z": z,
                        "losses": values,
                        "clipped_mse": float(np.mean(clipped[lib])) if clipped[lib] else None,
                    },
                )
            )
    return rows


def bench_count_level(
    mode: Mode, rng: np.random.Generator, fastest: dict[tuple[str, int], tuple[str, float]]
) -> list[Row]:
    """One count-level trial (``simulate`` + unbiased + Norm-Sub, n = 10^6) where run.py has none.

    pldp only: neither peer can simulate the counts, so a trial costs them a per-user run.
    """
    rows: list[Row] = []
    n = run.N_USERS
    for name, d in SIM_ROWS:
        family, cls, _ = MECHANISMS[name]
        counts = zipf_counts(n, d, rng, exponent=1.5 if d > 10_000 else 2.0)
        mech = cls(EPS, d)

        def trial(m: Mechanism = mech, c: np.ndarray = counts) -> pldp.Estimate:
            tally = m.simulate(c, rng)
            pldp.estimate(m, tally, "unbiased")
            return pldp.estimate(m, tally, "norm_sub")

        assert trial().frequencies.min() >= 0
        t = measure(trial, mode.repeats, mode.min_repeat_s)
        peer_note = "the peers have no count-level simulation"
        if (name, d) in fastest:
            lib, rate = fastest[(name, d)]
            peer_note += f"; their fastest per-user run ({lib}) takes ≈ {fmt_time(n / rate)} for 10^6 users"
        rows.append(
            run._row(
                "count-level trial, pldp only",
                f"{name} ε={EPS:g} ({family}) simulate + unbiased + Norm-Sub, n=10^6, d={d:,}, "
                f"Zipf({1.5 if d > 10_000 else 2}): {peer_note}",
                t,
                1 / t.best,
                "trials/s",
                "-",
                None,
            )
        )
    return rows


def main() -> None:
    """Run only this suite and print its rows (``python benchmarks/peers.py [--quick]``)."""
    import sys

    mode = run.QUICK if "--quick" in sys.argv else run.FULL
    rows = bench_peers(mode, np.random.default_rng(run.SEED))
    print(run.markdown(rows, "pldp vs pure-ldp and multi-freq-ldpy"), end="")


if __name__ == "__main__":
    main()

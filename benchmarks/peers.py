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

The peers' calls are in ``adapters.py`` (one :class:`adapters.Peer` per library and
mechanism); peak memory is measured in a forked child by ``memory.py``; timing, rows and
formatting come from ``harness.py``.
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import importlib.metadata
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import pldp
from adapters import EPS, MECHANISMS, PEER_FACTORIES, PEER_PACKAGES, Peer, pldp_path, pldp_streaming_path
from harness import Mode, Row, Timing, best_of, measure, measure_group, timed_row
from memory import path_peak
from pldp.datasets import zipf_counts
from pldp.mechanisms.base import Mechanism
from report import fmt_time, mib, users
from same_estimates import MSE_D, MSE_USERS, mse_rows

# Settings of the per-user rows: (users, items).
SETTINGS = ((1_000_000, 100), (100_000, 1_000))
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
SIM_ROWS = (("KRR", 41_270), ("OUE", 100), ("OUE", 1_000), ("RAPPOR", 100), ("RAPPOR", 1_000), ("RAPPOR", 41_270))

# Targets.
TARGET_SPEEDUP = 10.0  # pldp users/s over every peer's, per-user rows
TARGET_MEMORY = 0.25  # pldp peak / peer peak at the same users, unary rows
TARGET_REF_RATIO = harness.TARGET_REF_RATIO  # pldp / bare-numpy reference, direct-encoding rows

#: Per-user rows: a (family) reference's label and call.
Reference = tuple[str, Callable[[], object]]


def population(n: int, d: int) -> np.ndarray:
    """The shuffled Zipf(2) users of a setting (its own seed: the same in every run).

    Parameters
    ----------
    n : int
        Users.
    d : int
        Items.

    Returns
    -------
    numpy.ndarray
        Every user's item, length ``n``.
    """
    return harness.zipf_population(n, d, np.random.default_rng([harness.SEED, n, d]))[1]


# ------------------------------------------------------------------------------ rows
def bench_peers(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """All rows of the comparison with pure-ldp and multi-freq-ldpy (plus pldp-only trials).

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the pldp runs and the count-level trials.

    Returns
    -------
    list of Row
        The rows, in the order of the table; one ``vs peers: skipped`` row in place of the
        comparison when the peers are not installed.
    """
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
    rows += mse_rows(mode, versions, population(SETTINGS[0][0], MSE_D)[:MSE_USERS])
    rows += bench_count_level(mode, rng, fastest)
    return rows


# ----------------------------------------------------------------------- per-user path
@dataclass
class Case:
    """One mechanism at one setting of the per-user rows: what its pldp and peer rows share."""

    name: str  # pldp's name of the mechanism (a key of MECHANISMS)
    mech: Mechanism
    items: np.ndarray  # all n users of the setting
    rng: np.random.Generator
    quick: bool
    pldp_rate: float  # pldp's users/s on all n users

    @property
    def d(self) -> int:
        """Items."""
        return self.mech.d

    @property
    def family(self) -> str:
        """``direct`` or ``unary``."""
        return MECHANISMS[self.name][0]

    @property
    def peer_name(self) -> str:
        """The peers' name of the mechanism."""
        return MECHANISMS[self.name][2]


def per_user_rows(
    mode: Mode, rng: np.random.Generator, versions: dict[str, str]
) -> tuple[list[Row], dict[tuple[str, int], tuple[str, float]]]:
    """Per-user path of every library, the references, speed-up and memory rows.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the pldp runs and the references.
    versions : dict of str to str
        Each peer library's version.

    Returns
    -------
    rows : list of Row
        The rows, setting by setting: the references, then per mechanism pldp's row and
        each peer's.
    fastest : dict
        ``(mechanism, d)`` to the fastest peer library and its users/s.
    """
    rows: list[Row] = []
    fastest: dict[tuple[str, int], tuple[str, float]] = {}
    for n, d in SETTINGS:
        items = population(n, d)
        refs = {"direct": _direct_reference(items, d, rng), "unary": _unary_reference(items, d, rng)}
        mechs = {name: cls(EPS, d) for name, (_, cls, _) in MECHANISMS.items()}
        timings = _time_pldp_and_references(mechs, refs, items, rng, mode)
        where = f"n={users(n)}, d={d:,}"
        for fam, (label, _) in refs.items():
            t = timings[f"ref|{fam}"]
            rows.append(
                timed_row("vs peers: reference (bare numpy)", f"{label}, {where}", t, n / t.best, "users/s", "-", None)
            )
        for name, mech in mechs.items():
            case = Case(name, mech, items, rng, mode.name == "quick", n / timings[name].best)
            rows.append(_pldp_row(case, timings[name], timings[f"ref|{case.family}"].best))
            rates: dict[str, float] = {}
            for lib, factory in PEER_FACTORIES.items():
                peer_rows, rates[lib] = _peer_rows(case, factory(name, d), versions[lib])
                rows += peer_rows
            fastest[(name, d)] = max(rates.items(), key=lambda lib_rate: lib_rate[1])
    return rows, fastest


def _direct_reference(x: np.ndarray, d: int, rng: np.random.Generator) -> Reference:
    """The least work of a direct-encoding path: one random number and one count per user."""
    return "rng.random(n) + np.bincount(items)", lambda: (rng.random(x.size), np.bincount(x, minlength=d))


def _unary_reference(x: np.ndarray, d: int, rng: np.random.Generator) -> Reference:
    """The least work of a unary path: n·d 16-bit coins, compared with OUE's threshold, bit-packed."""
    thr = np.uint16(round(65536 * pldp.OUE(EPS, d).b[0]))  # OUE's zero-bit threshold
    block_coins = pldp.UnaryEncoding._BLOCK_COINS
    block = max(64, block_coins // d)  # pldp's block

    def coins_packbits() -> np.ndarray:
        out = np.empty((x.size, -(-d // 8)), dtype=np.uint8)
        for start in range(0, x.size, block):
            m = min(block, x.size - start)
            coins = rng.bit_generator.random_raw(-(-m * d // 4)).view(np.uint16)[: m * d].reshape(m, d)
            out[start : start + m] = np.packbits(coins < thr, axis=1)
        return out

    label = (
        "16-bit coins rng.bit_generator.random_raw(n·d/4) < t + np.packbits, blocks of "
        f"2^{block_coins.bit_length() - 1} coins"
    )
    return label, coins_packbits


def _time_pldp_and_references(
    mechs: dict[str, Mechanism],
    refs: dict[str, Reference],
    items: np.ndarray,
    rng: np.random.Generator,
    mode: Mode,
) -> dict[str, Timing]:
    """pldp's path of every mechanism and the references, interleaved (same machine load for the ratios)."""
    fns: dict[str, Callable[[], object]] = {f"ref|{fam}": fn for fam, (_, fn) in refs.items()}
    for name, mech in mechs.items():
        est = pldp_path(mech, rng)(items)
        assert est.shape == (mech.d,) and np.isfinite(est).all(), name
        fns[name] = lambda m=mech, x=items: pldp_path(m, rng)(x)
    return measure_group(fns, max(3, mode.repeats // 4), mode.min_repeat_s)


def _pldp_row(case: Case, t: Timing, ref_s: float) -> Row:
    """pldp's per-user path on all n users: speed, peak memory and the ratio to its family's reference."""
    n = case.items.size
    ratio_ref = t.best / ref_s
    peak_full, method = path_peak(pldp_path(case.mech, case.rng), case.items, warm_users=1000)
    direct = case.family == "direct"
    return timed_row(
        "vs peers: per-user path",
        f"{case.name} ε={EPS:g}, n={users(n)}, d={case.d:,}: **pldp** {pldp.__version__} perturb + tally + estimate, "
        f"all {users(n)} users; peak {mib(peak_full)}; {ratio_ref:.2f}x the {case.family} reference",
        t,
        case.pldp_rate,
        "users/s",
        f"≤ {TARGET_REF_RATIO:g}x reference" if direct else "-",
        (round(ratio_ref, 2) <= TARGET_REF_RATIO) if direct else None,
        reference_s=ref_s,
        reference_ratio=ratio_ref,
        peak_bytes=peak_full,
        memory_method=method,
    )


def _peer_rows(case: Case, peer: Peer, version: str) -> tuple[list[Row], float]:
    """A peer's per-user path on the first users of the case (and, for unary encoding, the memory rows).

    Returns the rows and the peer's users/s.
    """
    n_sub = PEER_USERS[(peer.library, case.family, case.d)] // (QUICK_DIVISOR if case.quick else 1)
    sub = case.items[:n_sub]
    xs = sub.tolist()
    est = peer.path(xs)
    assert est.shape == (case.d,) and np.isfinite(est).all(), (peer.library, case.name)
    t = best_of(lambda: peer.path(xs), lambda: peer.path(xs[:200]), 1 if case.quick else 3)
    rate = n_sub / t.best
    speedup = case.pldp_rate / rate
    peak_peer, method_peer = path_peak(peer.path, xs)
    peak_same, _ = path_peak(pldp_path(case.mech, case.rng), sub)
    speed = timed_row(
        "vs peers: per-user path",
        f"{case.peer_name} ε={EPS:g}, d={case.d:,}: {peer.library} {version} {peer.api}, per-user loop over "
        f"the first {users(n_sub)} of the same users; peak {mib(peak_peer)}; **pldp {speedup:.3g}x faster**",
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
    if case.family == "direct":
        return [speed], rate
    return [speed, *_memory_rows(case, peer, sub, xs, peak_peer, peak_same)], rate


def _memory_rows(case: Case, peer: Peer, sub: np.ndarray, xs: list[int], peak_peer: int, peak_same: int) -> list[Row]:
    """Peak memory of pldp and a peer on the same users: reports held (judged) and, if the peer streams, streaming.

    ``sub`` holds the users as pldp takes them, ``xs`` the same as the peer takes them;
    ``peak_peer`` and ``peak_same`` are the peer's and pldp's peaks on them.
    """
    n_sub, lib = sub.size, peer.library
    rows: list[Row] = []
    if peer.path_held is not None:  # the peer also streams: compare both ways
        peak_stream = peak_peer
        peak_peer, _ = path_peak(peer.path_held, xs)
        peak_pldp_stream, _ = path_peak(pldp_streaming_path(case.mech, case.rng), sub)
        rows.append(
            Row(
                "vs peers: peak memory, streaming",
                f"{case.peer_name} ε={EPS:g}, d={case.d:,}, the same {users(n_sub)} users, no report kept: "
                f"{lib} aggregates each report as it is made ({mib(peak_stream)}); pldp perturbs and "
                f"tallies 1,024 users at a time, merging the tallies ({mib(peak_pldp_stream)}); both "
                "O(d) and flat in n, so no ratio is judged",
                None,
                None,
                "",
                "-",
                extra={"pldp_bytes": peak_pldp_stream, "peer_bytes": peak_stream, "users": n_sub, "library": lib},
            )
        )
    judged = not case.quick  # quick mode: too few users, pldp's fixed block buffers dominate
    mem_ratio = peak_same / peak_peer if peak_peer > 0 else math.inf
    held = " (all reports received, then aggregated)" if peer.path_held is not None else ""
    rows.append(
        Row(
            "vs peers: peak memory",
            f"{case.peer_name} ε={EPS:g}, d={case.d:,}, the same {users(n_sub)} users, reports held: "
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
    return rows


# ----------------------------------------------------------------------- count level
def bench_count_level(
    mode: Mode, rng: np.random.Generator, fastest: dict[tuple[str, int], tuple[str, float]]
) -> list[Row]:
    """One count-level trial (``simulate`` + unbiased + Norm-Sub, n = 10^6) where the pldp suites have none.

    pldp only: neither peer can simulate the counts, so a trial costs them a per-user run.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the counts and the trials.
    fastest : dict
        ``(mechanism, d)`` to the fastest peer library and its users/s (from
        :func:`per_user_rows`; empty without the peers).

    Returns
    -------
    list of Row
        One row per entry of :data:`SIM_ROWS`.
    """
    rows: list[Row] = []
    n = harness.N_USERS
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
            timed_row(
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

    mode = harness.QUICK if "--quick" in sys.argv else harness.FULL
    rows = bench_peers(mode, np.random.default_rng(harness.SEED))
    print(harness.markdown(rows, "pldp vs pure-ldp and multi-freq-ldpy"), end="")


if __name__ == "__main__":
    main()

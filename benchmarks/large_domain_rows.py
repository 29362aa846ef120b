"""pldp's large-domain oracles beside pure-ldp 1.2.0's: OLH, FLH and HR, client and server apart, and their estimates.

A suite of ``run.py`` (``--only peers_large``; ``bench_large_domain(mode, rng)``), also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/large_domain_rows.py [--quick]

On identical users (Zipf(2) over ``d`` items, shuffled, ``peers.population``), at ε = 2 and 1:

* ``vs pure-ldp: client`` and ``vs pure-ldp: server``: reports per second of pldp
  (``perturb``; ``tally`` + ``estimate``) and of pure-ldp (``client.privatise`` per user;
  ``server.aggregate`` per report + ``estimate_all``), and the ratio. OLH and HR at d = 1,000 and
  10^4 (pldp's OLH with XXH32 and with the Toeplitz family, both beside pure-ldp's OLH), FLH (k =
  2^10 hash functions in both) at d = 1,000. pure-ldp's OLH server, a Python loop
  over the d hashes of each report, is timed on the first :data:`PEER_SERVER_REPORTS` reports only
  (its time is linear in them); its rate stands for all n. Target: pldp's OLH server at least
  100x pure-ldp's.
* ``vs pure-ldp: same estimates (MSE)``: at d = 1,000, each library's MSE over seeded repeats
  against its exact expected MSE (``large_domain_adapters.support_law``: the variance, plus for
  FLH the squared bias its fixed family causes); |z| <= 4.

``benchmarks/peers_README.md`` says what each row measures and what pinning pure-ldp needs.
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import importlib.metadata
import math
from typing import Any

import numpy as np

import pldp
from adapters import pldp_path, seed_pure_ldp
from harness import SEED, Mode, Row, Timing, best_of, measure
from large_domain_adapters import SplitPeer, pldp_law, pure_ldp_flh, pure_ldp_hr, pure_ldp_olh
from peers import population
from pldp.mechanisms.base import Mechanism
from report import fmt_rate, users
from same_estimates import mse_row

EPSILONS = (2.0, 1.0)
FLH_K = 1 << 10  # hash functions of both libraries' FLH (pure-ldp hashes k d values in Python per server)
CASES = (
    ("OLH", 1_000),
    ("OLH", 10_000),
    ("OLH-Toeplitz", 1_000),
    ("OLH-Toeplitz", 10_000),
    ("HR", 1_000),
    ("HR", 10_000),
    ("FLH", 1_000),
)
NAMES = ("OLH", "OLH-Toeplitz", "FLH", "HR")
N = 100_000  # users of each setting: pldp's, and pure-ldp's client
PLDP_USERS = {("OLH", 10_000): 20_000}  # pldp's OLH server: n d hashes (else N users)
PEER_SERVER_REPORTS = {(o, d): r for o in ("OLH", "OLH-Toeplitz") for d, r in ((1_000, 2_000), (10_000, 200))}  # else N
QUICK_DIVISOR = 10  # --quick: the peer runs on a tenth of those users
MSE_D, MSE_USERS = 1_000, {"OLH": 2_000, "OLH-Toeplitz": 2_000, "FLH": 10_000, "HR": 10_000}
MSE_REPEATS, MSE_REPEATS_QUICK = 5, 3
TARGET_OLH_SERVER = 100.0  # pldp's OLH server reports/s over pure-ldp's


def mechanism(name: str, eps: float, d: int) -> Mechanism:
    """pldp's oracle of a row: ``OLH``, ``OLH-Toeplitz`` (the Toeplitz family, ``g`` a power of two), ``FLH``
    (:meth:`pldp.OLH.flh` with :data:`FLH_K` seeds) or ``HR``."""
    if name == "OLH":
        return pldp.OLH(eps, d)
    if name == "OLH-Toeplitz":
        return pldp.OLH(eps, d, hash="toeplitz")
    if name == "FLH":
        return pldp.OLH.flh(eps, d, seeds=FLH_K)
    return pldp.HR(eps, d)


def peer(name: str, eps: float, d: int) -> SplitPeer:
    """pure-ldp's oracle of a row (:mod:`large_domain_adapters`): its OLH for both of pldp's families."""
    if name.startswith("OLH"):
        return pure_ldp_olh(eps, d)
    if name == "FLH":
        return pure_ldp_flh(eps, d, FLH_K)
    return pure_ldp_hr(eps, d, SEED)


def bench_large_domain(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """Every row of the suite, or one ``skipped`` row without a working pure-ldp.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of pldp's reports in the speed rows.

    Returns
    -------
    list of Row
        Client and server rows per oracle, ``d`` and ε, then the MSE rows.
    """
    try:
        version = importlib.metadata.version("pure-ldp")
        pure_ldp_olh(1.0, 10).privatise([0])
    except (ImportError, importlib.metadata.PackageNotFoundError, TypeError) as exc:
        why = (
            "pip install -e '.[bench]'"
            if not isinstance(exc, TypeError)
            else "xxhash 4 refuses pure-ldp's str input: pip install -e '.[bench]' (pins xxhash 3.8.2)"
        )
        return [Row("vs pure-ldp: skipped", f"pure-ldp's oracles do not run ({exc}): {why}", None, None, "", "-")]
    rows: list[Row] = []
    for name, d in CASES:
        x = population(N, d)
        for eps in EPSILONS:
            rows += speed_rows(name, eps, d, x, mode, rng, version)
    for name in NAMES:
        for eps in EPSILONS:
            rows += mse_rows(name, eps, mode, version)
    return rows


# ------------------------------------------------------------------------------ speed
def speed_rows(
    name: str, eps: float, d: int, x: np.ndarray, mode: Mode, rng: np.random.Generator, version: str
) -> list[Row]:
    """The client row and the server row of one oracle at one setting.

    Parameters
    ----------
    name : str
        ``OLH``, ``FLH`` or ``HR``.
    eps : float
        The budget.
    d : int
        Items.
    x : numpy.ndarray
        The setting's users (shuffled); each side takes a prefix.
    mode : Mode
        Quick or full.
    rng : numpy.random.Generator
        pldp's generator.
    version : str
        pure-ldp's version.

    Returns
    -------
    list of Row
        ``vs pure-ldp: client`` and ``vs pure-ldp: server``.
    """
    quick = mode.name == "quick"
    mech, other = mechanism(name, eps, d), peer(name, eps, d)
    n = PLDP_USERS.get((name, d), N)
    n_client = N // (QUICK_DIVISOR if quick else 1)
    n_server = min(n_client, PEER_SERVER_REPORTS.get((name, d), N) // (QUICK_DIVISOR if quick else 1))
    repeats = max(3, mode.repeats // 20)
    reports = mech.perturb(x[:n], rng)
    t_client = measure(lambda: mech.perturb(x[:n], rng), repeats, mode.min_repeat_s)
    t_server = measure(lambda: pldp.estimate(mech, mech.tally(reports)), repeats, mode.min_repeat_s)
    xs = x[:n_client].tolist()
    t_peer_client = best_of(lambda: other.privatise(xs), lambda: other.privatise(xs[:200]), 1 if quick else 3)
    peer_reports = other.privatise(xs)[:n_server]
    t_peer_server, build_s = _time_server(other, peer_reports, 1 if quick else 3)
    where = f"{name} ε={eps:g}, d={d:,}"
    client = _ratio_row(
        "vs pure-ldp: client",
        f"{where}: pldp {pldp.__version__} perturb, {users(n)} users; pure-ldp {version} privatise per user, "
        f"the first {users(n_client)} of the same users",
        (t_client, n),
        (t_peer_client, n_client),
        None,
    )
    partial = "" if n_server == n_client else f" (timed on the first {users(n_server)}, linear in the reports)"
    build = f"; its server's construction {build_s:.3g} s, not counted" if build_s >= 0.01 else ""
    server = _ratio_row(
        "vs pure-ldp: server",
        f"{where}: pldp tally + estimate of {users(n)} reports; pure-ldp {other.api}: aggregate per report + "
        f"estimate_all, {users(n_server)} reports{partial}{build}",
        (t_server, n),
        (t_peer_server, n_server),
        TARGET_OLH_SERVER if name.startswith("OLH") else None,
    )
    return [client, server]


def _time_server(other: SplitPeer, reports: list[Any], repeats: int) -> tuple[Timing, float]:
    """Best of ``repeats`` runs of a fresh pure-ldp server on ``reports``, and its first construction's seconds."""
    build_s = math.inf
    times = []
    for _ in range(repeats):
        server, t_build = harness.once(other.make_server)
        build_s = min(build_s, t_build.best)
        _, t = harness.once(lambda s=server: other.estimate(s, reports))
        times.append(t.best)
    return Timing(min(times), times, 1, float("nan")), build_s


def _ratio_row(
    bench: str, setting: str, ours: tuple[Timing, int], theirs: tuple[Timing, int], target: float | None
) -> Row:
    """A row of pldp's reports/s over pure-ldp's: ``ours`` and ``theirs`` are (timing, reports)."""
    rate, peer_rate = ours[1] / ours[0].best, theirs[1] / theirs[0].best
    ratio = rate / peer_rate
    return Row(
        bench,
        setting,
        ours[0].best,
        ratio,
        "x pure-ldp",
        f"pldp {fmt_rate(rate, 'reports/s')}, pure-ldp {fmt_rate(peer_rate, 'reports/s')}: **pldp {ratio:.3g}x**",
        "-" if target is None else f"pldp ≥ {target:g}x",
        None if target is None else ratio >= target,
        extra={"pldp_rate": rate, "peer_rate": peer_rate, "pldp_reports": ours[1], "peer_reports": theirs[1]},
    )


# ------------------------------------------------------------------------------- MSE
def mse_rows(name: str, eps: float, mode: Mode, version: str) -> list[Row]:
    """pldp's and pure-ldp's MSE over seeded repeats on identical users, each against its exact expectation.

    The expectation is ``mean_v (b_v^2 + s_v^2)``, with ``b_v`` and ``s_v^2`` the bias and variance
    of item ``v``'s estimate (:func:`large_domain_adapters.support_law`; ``b = 0`` but for FLH);
    z is the MSE's departure over the standard error of a mean of ``repeats`` losses,
    ``sqrt(sum_v (4 b_v^2 s_v^2 + 2 s_v^4) / repeats) / d`` (Gaussian item errors).

    Parameters
    ----------
    name : str
        ``OLH``, ``FLH`` or ``HR``.
    eps : float
        The budget.
    mode : Mode
        Quick (fewer repeats) or full.
    version : str
        pure-ldp's version.

    Returns
    -------
    list of Row
        pldp's row, then pure-ldp's.
    """
    d, n = MSE_D, MSE_USERS[name]
    repeats = MSE_REPEATS_QUICK if mode.name == "quick" else MSE_REPEATS
    x = population(N, d)[:n]
    counts = np.bincount(x, minlength=d)
    f = counts / n
    mech, other = mechanism(name, eps, d), peer(name, eps, d)
    xs = x.tolist()

    def pldp_estimate(r: int) -> np.ndarray:
        return pldp_path(mech, np.random.default_rng(SEED + r))(x)

    def peer_estimate(r: int) -> np.ndarray:
        seed_pure_ldp(SEED + r)
        return other.estimate(other.make_server(), other.privatise(xs))

    rows = []
    for lib, api, law, estimate in (
        ("pldp", f'pldp {pldp.__version__} estimate(..., "unbiased")', pldp_law(mech), pldp_estimate),
        ("pure-ldp", f"pure-ldp {version} {other.api}, estimate_all / n", other.law, peer_estimate),
    ):
        mean, var = law(counts)
        if lib == "pldp" and name != "FLH":  # the support law is pldp's own closed form for an ideal family;
            # both sum the same d terms, so they agree to round-off (1e-12 relative), far inside 1e-6
            assert np.allclose(var, pldp.theory.item_variance(mech, f, n, model="fixed"), rtol=1e-6, atol=0)
        bias = mean - f
        theory = float(np.mean(bias**2 + var))
        se = math.sqrt(float(np.sum(4 * bias**2 * var + 2 * var**2)) / repeats) / d
        losses = [float(np.mean((estimate(r) - f) ** 2)) for r in range(repeats)]
        family = f", of which the family's bias² {np.mean(bias**2):.3g}" if name == "FLH" else ""
        setting = f"{name} ε={eps:g}, n={users(n)}, d={d:,}, {repeats} seeded repeats, identical users: {api}{family}"
        rows.append(mse_row("vs pure-ldp: same estimates (MSE)", setting, losses, theory, se, library=lib))
    return rows


def main() -> None:
    """Run only this suite and print its rows (``python benchmarks/large_domain_rows.py [--quick]``)."""
    import sys

    mode = harness.QUICK if "--quick" in sys.argv else harness.FULL
    rows = bench_large_domain(mode, np.random.default_rng(SEED))
    print(harness.markdown(rows, "pldp's large-domain oracles vs pure-ldp"), end="")


if __name__ == "__main__":
    main()

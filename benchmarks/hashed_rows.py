"""Local hashing: the server's support counts of OLH and FLH, and the clients' reports per second.

* the tally (support counts) of 10^6 reports over d = 10^4 items, one core: OLH (``2**31`` seeds,
  ``n d = 10^10`` hash evaluations, timed once; 10^5 reports with ``--quick``) and FLH at ``2**10``,
  ``2**12`` and the default ``2**14`` seeds (a ``(seed, value)`` table, then ``S d`` hash
  evaluations), and OLH over the Toeplitz family at ε = 1 and 4 (``n g`` additions and one transform);
  target 2 s. Each FLH row also gives the root mean squared error of its estimate
  over the items (Zipf(2) data, the tallied reports) beside the sampling error alone, the mean of
  the variances :meth:`pldp.OLH.estimate` states (what OLH's family gives), and the family's own
  error predicted by ``sqrt(sum_x f_x^2 / ((g - 1) S))`` (``pldp.mechanisms.hashed``);
* the Python client: ``Client.reports`` of a deployed OLH spec (d = 10^4, OS CSPRNG) and
  ``OLH.perturb`` (numpy's generator), batches of 10^6; target 10^6 reports/s;
* the JS client in Node (``benchmarks/hashed_js.mjs``, ``crypto.getRandomValues``, one serialized
  report per call for 1 s) on the OLH and FLH specs, when ``node`` is on the PATH; target 10^5
  reports/s.

A suite of ``run.py`` (``bench_hashed(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/hashed_rows.py [--quick]
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import pldp
from pldp.client import Client
from pldp.deploy import Spec
from pldp.mechanisms.hashed import FLH_SEEDS

N, D, EPS, TARGET_S, CLIENT_TARGET, JS_TARGET = 10**6, 10**4, 1.0, 2.0, 1e6, 1e5


def _timed_tally(
    mech: pldp.OLH, x: np.ndarray, f: np.ndarray, mode: harness.Mode, rng: np.random.Generator
) -> tuple[harness.Timing, float, float]:
    """The tally's timing on the reports of ``x``, the estimate's root mean squared error against ``f``,
    and the sampling error alone (the root of the mean stated variance)."""
    reports = mech.perturb(x, rng)
    t = harness.measure(lambda: mech.tally(reports), max(3, mode.repeats // 20), mode.min_repeat_s)
    est = mech.estimate(mech.tally(reports))
    rmse = math.sqrt(float(np.mean((est.frequencies - f) ** 2)))
    return t, rmse, math.sqrt(float(np.mean(est.std_error**2)))


def _tally_rows(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    f = pldp.datasets.zipf_counts(N, D, rng) / N
    x = rng.choice(D, size=N, p=f)
    rows = []
    for seeds in (FLH_SEEDS >> 4, FLH_SEEDS >> 2, FLH_SEEDS):
        mech = pldp.OLH(EPS, D, seeds=seeds)
        t, rmse, sampling = _timed_tally(mech, x, f, mode, rng)
        family = math.sqrt(float(np.sum(f**2)) / ((mech.g - 1) * seeds))
        default = " (the default)" if seeds == FLH_SEEDS else ""
        rows.append(
            harness.timed_row(
                "OLH tally: FLH support counts",
                f"S=2^{seeds.bit_length() - 1} seeds{default}, ε={EPS:g} (g={mech.g}), n=10^6, d=10^4, Zipf(2): "
                f"RMSE {rmse:.4f} (sampling alone {sampling:.4f}, family predicted {family:.4f})",
                t,
                N / t.best,
                "reports/s",
                f"≤ {TARGET_S:g} s",
                t.best <= TARGET_S,
                rmse=rmse,
                sampling_rmse=sampling,
                family_predicted=family,
            )
        )
    for eps in (EPS, 4.0):
        mech = pldp.OLH(eps, D, hash="toeplitz")
        t, rmse, sampling = _timed_tally(mech, x, f, mode, rng)
        rows.append(
            harness.timed_row(
                "OLH tally: Toeplitz family",
                f"2^31 seeds, ε={eps:g} (g={mech.g}), n=10^6, d=10^4, Zipf(2): a spectrum of n g terms and one "
                f"Walsh-Hadamard transform; RMSE {rmse:.4f} (sampling alone {sampling:.4f}: no family term)",
                t,
                N / t.best,
                "reports/s",
                f"≤ {TARGET_S:g} s",
                t.best <= TARGET_S,
                rmse=rmse,
                sampling_rmse=sampling,
            )
        )
    n = N if mode.name == "full" else N // 10
    olh = pldp.OLH(EPS, D)
    reports = olh.perturb(x[:n], rng)
    _, t = harness.once(lambda: olh.tally(reports))
    rows.append(
        harness.timed_row(
            "OLH tally: OLH support counts",
            f"2^31 seeds, ε={EPS:g}, n=10^{round(math.log10(n))}, d=10^4: n d hash evaluations, "
            f"{t.best / (n * D) * 1e9:.2f} ns each" + ("" if n == N else f" (10^6 reports: {t.best * N / n:.0f} s)"),
            t,
            n / t.best,
            "reports/s",
            f"≤ {TARGET_S:g} s at 10^6",
            t.best * N / n <= TARGET_S,
            ns_per_hash=t.best / (n * D) * 1e9,
        )
    )
    return rows


def _client_rows(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    mech = pldp.OLH(EPS, D)
    x = rng.integers(0, D, N)
    toeplitz = pldp.OLH(EPS, D, hash="toeplitz")
    client = Client(Spec.from_mechanism(mech, question="bench"))
    repeats = max(3, mode.repeats // 10)
    rows = []
    for bench, setting, fn in (
        (
            "client: Client.reports",
            "OLH ε=1, d=10^4, a batch of 10^6, OS CSPRNG (os.urandom)",
            lambda: client.reports(x),
        ),
        ("OLH.perturb", "OLH ε=1, d=10^4, 10^6 users, numpy's generator", lambda: mech.perturb(x, rng)),
        (
            "OLH.perturb",
            "OLH ε=1, d=10^4, the Toeplitz family (g=4), 10^6 users, numpy's generator",
            lambda: toeplitz.perturb(x, rng),
        ),
    ):
        t = harness.measure(fn, repeats, mode.min_repeat_s)
        target = f"≥ {CLIENT_TARGET / 1e6:g} M reports/s"
        rows.append(harness.timed_row(bench, setting, t, N / t.best, "reports/s", target, N / t.best >= CLIENT_TARGET))
    return rows


def _js_rows() -> list[harness.Row]:
    node = shutil.which("node")
    if node is None:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, mech in (
            ("olh.json", pldp.OLH(EPS, D)),
            ("flh.json", pldp.OLH.flh(EPS, D)),
            ("toeplitz.json", pldp.OLH(EPS, D, hash="toeplitz")),
        ):
            path = Path(tmp) / name
            path.write_text(Spec.from_mechanism(mech, question="bench").to_json(), encoding="utf-8")
            paths.append(str(path))
        script = harness.HERE / "hashed_js.mjs"
        out = subprocess.run([node, str(script), *paths], capture_output=True, text=True, check=True, timeout=300)
    rates = json.loads(out.stdout)
    rows = []
    for key, label in (
        ("olh.json", "OLH"),
        ("flh.json", f"FLH (2^{FLH_SEEDS.bit_length() - 1} seeds)"),
        ("toeplitz.json", "OLH, the Toeplitz family (g=4),"),
    ):
        rate = float(rates[key])
        rows.append(
            harness.Row(
                "JS client in Node: reportJSON",
                f"{label} ε=1, d=10^4, crypto.getRandomValues, one serialized report per call for 1 s "
                "(benchmarks/hashed_js.mjs)",
                1 / rate,
                rate,
                "reports/s",
                f"{rate / 1e3:.0f} k reports/s",
                f"≥ {JS_TARGET / 1e3:g} k reports/s",
                rate >= JS_TARGET,
            )
        )
    return rows


def bench_hashed(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """The tally rows (FLH at three family sizes, OLH), the Python client rows and the JS client rows.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full); quick times OLH's tally on 10^5 reports.
    rng : numpy.random.Generator
        The generator of the data and of ``perturb``.

    Returns
    -------
    list of Row
        The rows, in that order.
    """
    return _tally_rows(mode, rng) + _client_rows(mode, rng) + _js_rows()


if __name__ == "__main__":
    chosen = harness.QUICK if "--quick" in sys.argv else harness.FULL
    table = bench_hashed(chosen, np.random.default_rng(harness.SEED))
    print(harness.markdown(table, f"local hashing ({chosen.name} mode)"), end="")

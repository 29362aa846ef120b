"""Speed of the deployment path: the Python client with OS randomness, and decode from Arrow.

Run: ``python benchmarks/deploy.py`` (prints a Markdown table; ``make bench-deploy``). Targets
(issue 12): client batches >= 1 M direct reports/s and >= 100 k unary reports/s at d = 100 on
one core; decode >= 5 M direct reports/s from Arrow; one ``Client.report`` <= 50 us (direct).
"""

from __future__ import annotations

import subprocess
import time

import numpy as np

import pldp
from pldp.client import Client
from pldp.deploy import Spec, decode


def best(f, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    d = 100
    direct = Spec.from_mechanism(pldp.KRR(1.0, d), question="q")
    unary = Spec.from_mechanism(pldp.OUE(1.0, d), question="q")
    rng = np.random.default_rng(0)
    rows = []
    n = 1_000_000
    x = rng.integers(0, d, n)
    c = Client(direct)
    t = best(lambda: c.reports(x))
    rows.append(("Client.reports, KRR d=100, OS randomness", n / t, 1e6, "reports/s"))
    nu = 100_000
    cu = Client(unary)
    t = best(lambda: cu.reports(x[:nu]))
    rows.append(("Client.reports, OUE d=100, OS randomness", nu / t, 1e5, "reports/s"))
    big = np.tile(x, 5)
    table = Client(direct).reports(big).to_arrow()
    t = best(lambda: decode(direct, table))
    rows.append(("decode, KRR d=100, from Arrow (5 M rows)", big.size / t, 5e6, "reports/s"))
    k = 2000
    t = best(lambda: [c.report(3) for _ in range(k)]) / k
    rows.append(("Client.report, one KRR report", t * 1e6, 50, "us (at most)"))
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"Deployment path at {sha} (1 core, best of 3)\n")
    print("| row | measured | target | unit | met |\n|---|---:|---:|---|---|")
    for name, value, target, unit in rows:
        met = value <= target if unit.startswith("us") else value >= target
        print(f"| {name} | {value:,.0f} | {target:,.0f} | {unit} | {'yes' if met else 'NO'} |")


if __name__ == "__main__":
    main()

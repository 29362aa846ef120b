"""The empirical privacy audit: 10^6 trials per input pair, one core (issue 15's speed targets).

``pldp.audit.audit`` of one pair of items at 10^6 reports per input (2 x 10^6 reports drawn by the
library's sampler, the optimal test counted on each, the Clopper-Pearson bound), in this process:
k-RR over d = 100 (target 1 s) and OUE over d = 100 (target 5 s); LDP-Auditor's unary attack on
OUE for reference. The audit over time (``pldp.audit.audit_rounds``): 30 reports of one device,
memoized and fresh, L-GRR and L-OSUE, for reference.

A suite of ``run.py`` (``bench_audit(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/audit_rows.py
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import numpy as np

import pldp
from pldp.audit import audit, audit_rounds

D = 100
TRIALS = 10**6
#: Devices per history of the audit over time (and half as many more that calibrate the test).
DEVICES = 50_000
ROUNDS = 30


def bench_audit(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """One pair at 10^6 trials per input: k-RR and OUE (optimal test), OUE (LDP-Auditor's attack)."""
    rows: list[harness.Row] = []
    repeats = max(3, mode.repeats // 10)
    cases = (
        ("k-RR ε=1", pldp.KRR(1.0, D), "optimal", 1.0),
        ("OUE ε=1", pldp.OUE(1.0, D), "optimal", 5.0),
        ("OUE ε=1", pldp.OUE(1.0, D), "ldp-auditor", None),
    )
    for label, mech, attack, target in cases:
        t = harness.measure(
            lambda m=mech, a=attack: audit(m, pairs=[(0, 1)], trials=TRIALS, attack=a, rng=rng), repeats, 0.0
        )
        rows.append(
            harness.timed_row(
                "audit: one pair",
                f"{label}, d={D}, {attack} test, 10^6 reports per input (2 x 10^6 drawn), one core",
                t,
                2 * TRIALS / t.best,
                "reports/s",
                "-" if target is None else f"≤ {target:g} s",
                None if target is None else t.best <= target,
            )
        )
    rows += _rounds_rows(rng, repeats)
    return rows


def _rounds_rows(rng: np.random.Generator, repeats: int) -> list[harness.Row]:
    """The audit over time at r = 30, same value, memoized and fresh: every report drawn, counted."""
    rows: list[harness.Row] = []
    drawn = 2 * 2 * (DEVICES + DEVICES // 2) * ROUNDS  # modes x histories x (trials + calibration) x rounds
    for label, mech in (
        ("L-GRR ε∞=2, ε₁=0.5, d=4", pldp.LGRR(2.0, 0.5, 4)),
        ("L-OSUE ε∞=2, ε₁=0.5, d=8", pldp.LOSUE(2.0, 0.5, 8)),
    ):
        t = harness.measure(
            lambda m=mech: audit_rounds(m, [ROUNDS], trials=DEVICES, scenarios=["same"], rng=rng), repeats, 0.0
        )
        rows.append(
            harness.timed_row(
                "audit over time: r = 30",
                f"{label}, memoized and fresh, {DEVICES:,} devices per history "
                f"(+ {DEVICES // 2:,} calibrating), one core",
                t,
                drawn / t.best,
                "reports/s",
                "-",
                None,
            )
        )
    return rows


if __name__ == "__main__":
    from harness import FULL, SEED, markdown

    print(markdown(bench_audit(FULL, np.random.default_rng(SEED)), "audit rows"), end="")

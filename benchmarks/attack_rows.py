"""The attack experiments' speed: 20 repeats at n = 10^6 honest users, d = 100, one core (issue 26).

For each protocol of :mod:`pldp.experiments.attacks.catalog`, the setting of the personalized
table (``pldp reproduce attacks``): Zipf(1) honest users simulated at count level, the rarest item
as target, beta = 1 % fake users, every strategy that applies (MGA only for k-RR and OUE), the
methods unbiased, Norm-Sub, MLE (not for PLDP-FEBSF, whose joint EM is its own table) and
``"robust"`` where the oracle has it. Each of the 20 repeats draws one honest tally and, per
strategy, the fakes' tally, and estimates every method twice (with and without the fakes). Target:
under a minute per protocol. ``--quick`` times 2 repeats and scales them to 20.

A suite of ``run.py`` (``bench_attacks(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/attack_rows.py [protocol ...]
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import sys
import time

import numpy as np

from pldp.experiments.attacks.catalog import PROTOCOLS, build
from pldp.experiments.attacks.runs import run_repeat
from pldp.experiments.attacks.specs import personalized_settings
from report import fmt_rate

N, D, BETA, REPEATS, TARGET_S = 10**6, 100, 0.01, 20, 60.0


def setting_of(protocol: str) -> dict[str, object]:
    """The personalized table's setting of ``protocol`` at n = 10^6, d = 100, beta = 1 %."""
    return personalized_settings([BETA], [protocol], n=N)[0]


def bench_attacks(
    mode: harness.Mode, rng: np.random.Generator, protocols: tuple[str, ...] = tuple(PROTOCOLS)
) -> list[harness.Row]:
    """20 repeats of each protocol's attack setting (2 scaled to 20 in quick mode), one row each."""
    repeats = REPEATS if mode.name == "full" else 2
    rows: list[harness.Row] = []
    for protocol in protocols:
        setting = setting_of(protocol)
        build(protocol, D)  # the oracle is built once per process (IDUE's opt0 solve), not per repeat
        start = time.perf_counter()
        measured = [run_repeat(setting, rng) for _ in range(repeats)]
        seconds = (time.perf_counter() - start) * REPEATS / repeats
        cells = sum(len(r) for r in measured) // repeats
        note = "" if repeats == REPEATS else f" ({repeats} repeats timed, scaled)"
        rows.append(
            harness.Row(
                "attack experiment",
                f"{protocol}, {REPEATS} repeats, n=10^6, d={D}, beta=1 %, {cells} (strategy, method) cells a repeat, "
                f"one core{note}",
                seconds,
                REPEATS * N / seconds,
                "honest users/s",
                fmt_rate(REPEATS * N / seconds, "users/s"),
                f"< {TARGET_S:g} s",
                seconds < TARGET_S,
            )
        )
    return rows


if __name__ == "__main__":
    from harness import FULL, QUICK, SEED, markdown

    names = tuple(sys.argv[1:]) or tuple(PROTOCOLS)
    quick = "--quick" in names
    names = tuple(n for n in names if n != "--quick") or tuple(PROTOCOLS)
    print(markdown(bench_attacks(QUICK if quick else FULL, np.random.default_rng(SEED), names), "attack rows"), end="")

"""The defences' cost (``"detect"``; ``"robust"`` where not a closed form) against ``"unbiased"``, n = 10^6.

For every oracle offering ``"detect"`` (OUE, RAPPOR, IDUE, PBP-OUE, PLDP-FEBSF over OUE and k-RR),
d = 16, Zipf(1): 10^6 honest users' reports tallied per user (the tally holds their histogram of
ones), and 1 % of fakes at the largest unflagged number of ones (the rarest item's bit and others:
the joint test fires and ``"detect"`` drops that count; PLDP-FEBSF-KRR: fakes claiming the
smallest level). Each estimate is timed on the same tally, the two interleaved; PLDP-FEBSF's
derived counts (cached on its tally) are cleared before each call of either, so each pays for
its own counting. Target: every defence at most x20 ``"unbiased"``. PLDP-FEBSF's ``"robust"`` and
``"huber"`` are timed too (they fit level shares by EM; the other protocols' are closed forms), also
on honest PLDP-FEBSF-KRR reports of a Zipf(2) distribution, where the joint EM takes the most steps.

A suite of ``run.py`` (``bench_detect(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/detect_rows.py [--quick]
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import pldp
from pldp.estimation.detect import detection_power
from pldp.protocols import FEBSF, PBP, FEBSFReports
from pldp.protocols.leveled import cell_users

N, D, BETA, TARGET_RATIO = 10**6, 16, 0.01, 20.0
#: The derived counts a PLDP-FEBSF tally caches (cleared before each timed call).
_FEBSF_CACHED = ("level_counts", "support_counts", "level_support_counts", "level_ones_support", "pattern_ones", "ones")


def _hiding(d: int, ones: int, m: int, rng: np.random.Generator) -> np.ndarray:
    bits = np.zeros((m, d), dtype=bool)
    cols = np.argsort(rng.random((m, d - 1)), axis=1)[:, : ones - 1]
    np.put_along_axis(bits[:, : d - 1], cols, True, axis=1)
    bits[:, d - 1] = True
    return np.packbits(bits, axis=1)


FAKES = "n=10^6 + 1 % fakes at the largest unflagged count"


def cases(rng: np.random.Generator) -> list[tuple[str, Any, Any, list[str]]]:
    """``(name, oracle, tally, defences)`` of each oracle offering ``"detect"``, attacked as the module
    docstring says (the name says what the tally holds), with the defences timed on it."""
    p = 1.0 / np.arange(1, D + 1)
    p /= p.sum()
    m = round(BETA / (1 - BETA) * N)
    out: list[tuple[str, Any, Any, list[str]]] = []
    budgets = pldp.ItemBudgets.from_array([0.5] * 4 + [1.0] * 6 + [2.0] * 6)
    for name, mech in (
        ("OUE eps=1", pldp.OUE(1.0, D)),
        ("OUE eps=0.55", pldp.OUE(0.55, D)),
        ("RAPPOR eps=1", pldp.RAPPOR(1.0, D)),
        ("IDUE opt2 (0.5, 1, 2)", pldp.IDUE(budgets, "opt2")),
    ):
        top = detection_power(mech.ones_laws, N)["largest_unflagged"]
        tally = mech.tally(mech.perturb(rng.choice(D, N, p=p), rng)) + mech.tally(_hiding(D, top, m, rng))
        out.append((f"{name}, {FAKES}", mech, tally, ["detect"]))
    pbp = PBP([0.5, 1.0, 2.0], [0.3, 0.3, 0.4], D, oracle="oue")
    cells = rng.multinomial(N, np.outer(pbp.rho, p).ravel()).reshape(3, D)
    top = detection_power(pbp.ones_laws, N)["largest_unflagged"]
    out.append(
        (
            f"PBP-OUE (0.5, 1, 2), {FAKES}",
            pbp,
            pbp.tally(pbp.perturb(*cell_users(cells), rng)) + pbp.tally(_hiding(D, top, m, rng)),
            ["detect"],
        )
    )
    levels = np.arange(1, 11) / 10
    for oracle in ("oue", "krr"):
        proto = FEBSF(levels, 0.3, D, oracle=oracle)
        cells = rng.multinomial(N, np.outer(np.full(10, 0.1), p).ravel()).reshape(10, D)
        honest = proto.simulate(cells, rng)
        if oracle == "oue":
            top = detection_power(proto.ones_laws, N)["largest_unflagged"]
            fake = FEBSFReports(_hiding(D, top, m, rng), rng.integers(0, 10, m))
        else:
            fake = FEBSFReports(np.full(m, D - 1), np.zeros(m, dtype=np.int64))
        defences = ["detect", "robust", "huber"]
        out.append((f"PLDP-FEBSF-{oracle.upper()} (0.1..1.0), {FAKES}", proto, honest + proto.tally(fake), defences))
    zipf2 = 1.0 / np.arange(1, D + 1) ** 2
    cells = rng.multinomial(N, np.outer(np.full(10, 0.1), zipf2 / zipf2.sum()).ravel()).reshape(10, D)
    krr = FEBSF(levels, 0.3, D, oracle="krr")
    honest = krr.simulate(cells, rng)  # the joint EM's slowest case among these
    out.append(("PLDP-FEBSF-KRR (0.1..1.0), n=10^6 honest Zipf(2) reports", krr, honest, ["robust", "huber"]))
    return out


def _call(oracle: Any, tally: Any, method: str) -> Callable[[], object]:
    if isinstance(oracle, FEBSF):

        def fresh() -> object:
            for key in _FEBSF_CACHED:
                tally.__dict__.pop(key, None)
            return oracle.estimate(tally, method)

        return fresh
    return lambda: oracle.estimate(tally, method)


def bench_detect(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """One row per oracle: ``"detect"``'s time, its ratio to ``"unbiased"`` on the same tally."""
    rows: list[harness.Row] = []
    for name, oracle, tally, defences in cases(rng):
        calls = {m: _call(oracle, tally, m) for m in ["unbiased", *defences]}
        t = harness.measure_group(calls, max(3, mode.repeats // 4), mode.min_repeat_s)
        for method in defences:
            ratio = t[method].best / t["unbiased"].best
            est = oracle.estimate(tally, method)
            dropped = est.info.get("dropped_ones")
            rows.append(
                harness.Row(
                    f"{method} vs unbiased",
                    f"{name}, d={D}: unbiased "
                    f"{t['unbiased'].best * 1e3:.3g} ms, {method} {t[method].best * 1e3:.3g} ms"
                    + (f" (dropped counts {dropped})" if dropped else ""),
                    t[method].best,
                    ratio,
                    "x unbiased",
                    f"x{ratio:.1f}",
                    f"<= x{TARGET_RATIO:g}",
                    ratio <= TARGET_RATIO,
                    timing={"unbiased": t["unbiased"].best, method: t[method].best},
                )
            )
    return rows


if __name__ == "__main__":
    from harness import FULL, QUICK, SEED, markdown

    quick = "--quick" in sys.argv[1:]
    print(markdown(bench_detect(QUICK if quick else FULL, np.random.default_rng(SEED)), "detect rows"), end="")

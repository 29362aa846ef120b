"""PEM beside pure-ldp 1.2.0's PEM on identical users: precision and recall of the top 10, and server time.

Users hold 2-byte words (200 random pairs of letters, Zipf(1.1)); ε = 4; both libraries run PEM
with one byte per step (pure-ldp: ``PEMClient``/``PEMServer(epsilon, 0, 16, 8)`` over the words' bit
strings, its default OLH oracle; pldp: ``pldp.PEM(4, max_bytes=2)``), top 10, over seeded repeats.
Two bytes is as far as pure-ldp goes here: its ``PEMServer`` allocates ``2^(8L)`` floats per group
(32 GiB at L = 4) and its OLH ``aggregate`` loops over the ``2^(8L)`` items in Python for every
report (3,000 users at L = 2 take about 36 s).

A suite of ``run.py`` (``--only peers_heavy``; needs the ``bench`` extra); also standalone::

    PYTHONPATH=src:benchmarks <bench venv>/bin/python benchmarks/heavy_peers.py [--quick]
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import importlib.metadata
import sys
from typing import Any

import numpy as np

import pldp
from adapters import seed_pure_ldp
from harness import SEED, Mode, Row

N, WORDS, EPS, TOP = 3_000, 200, 4.0, 10
REPEATS, REPEATS_QUICK = 3, 1


def _population(rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """``N`` answers over :data:`WORDS` two-letter words (Zipf(1.1)), and the true top :data:`TOP`."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = sorted({"".join(rng.choice(letters, 2)) for _ in range(2 * WORDS)})[:WORDS]
    p = 1.0 / np.arange(1, WORDS + 1) ** 1.1
    x = rng.choice(WORDS, size=N, p=p / p.sum())
    counts = np.bincount(x, minlength=WORDS)
    return [words[i] for i in x], [words[i] for i in np.argsort(-counts, kind="stable")[:TOP]]


def _pure_ldp(answers: list[str], seed: int) -> tuple[list[Any], float]:
    """pure-ldp's top :data:`TOP` of ``answers`` and its server's seconds (aggregate + find)."""
    from pure_ldp.heavy_hitters.prefix_extending.pem_client import PEMClient
    from pure_ldp.heavy_hitters.prefix_extending.pem_server import PEMServer

    seed_pure_ldp(seed)
    client, server = PEMClient(EPS, 0, 16, 8), PEMServer(EPS, 0, 16, 8)
    reports = [client.privatise("".join(f"{b:08b}" for b in a.encode())) for a in answers]

    def serve() -> Any:
        for r in reports:
            server.aggregate(r)
        return server.find_heavy_hitters(k=TOP)[0]

    found, t = harness.once(serve)
    return [bytes(int(h[i : i + 8], 2) for i in range(0, len(h), 8)).decode(errors="replace") for h in found], t.best


def _pldp(answers: list[str], seed: int) -> tuple[list[Any], float]:
    pem = pldp.PEM(EPS, max_bytes=2)
    reports = pem.perturb(answers, np.random.default_rng(seed))
    found, t = harness.once(lambda: pem.discover(reports, top=TOP))
    return found.answers, t.best


def bench_heavy_peers(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """One row per library: mean precision and recall of the top 10 over the repeats, server time.

    Parameters
    ----------
    mode : Mode
        Quick (one repeat) or full (three).
    rng : numpy.random.Generator
        Unused (the population and every repeat are seeded from :data:`harness.SEED`).

    Returns
    -------
    list of Row
        pldp's row, then pure-ldp's (or one ``skipped`` row without pure-ldp).
    """
    try:
        version = importlib.metadata.version("pure-ldp")
    except importlib.metadata.PackageNotFoundError as exc:
        return [Row("vs pure-ldp PEM: skipped", f"pure-ldp is not installed ({exc})", None, None, "", "-")]
    answers, truth = _population(np.random.default_rng(SEED))
    repeats = REPEATS_QUICK if mode.name == "quick" else REPEATS
    rows = []
    for lib, run in (("pldp", _pldp), ("pure-ldp", _pure_ldp)):
        found, times = zip(*(run(answers, SEED + r) for r in range(repeats)), strict=True)
        hits = [len(set(f) & set(truth)) for f in found]
        precision = float(np.mean([h / max(len(f), 1) for h, f in zip(hits, found, strict=True)]))
        recall = float(np.mean(hits)) / TOP
        best = min(times)
        name = f"pldp {pldp.__version__}" if lib == "pldp" else f"pure-ldp {version}"
        rows.append(
            Row(
                "vs pure-ldp PEM: top 10",
                f"{name}, {N:,} users, {WORDS} two-letter words (Zipf(1.1)), ε={EPS:g}, a byte a step, "
                f"{repeats} seeded repeats: hits {list(hits)}",
                best,
                recall,
                "recall",
                f"precision {precision:.2f}, recall {recall:.2f}; server {best:.3g} s",
                "-",
                None,
                extra={"precision": precision, "recall": recall, "server_s": list(times)},
            )
        )
    return rows


if __name__ == "__main__":
    chosen = harness.QUICK if "--quick" in sys.argv else harness.FULL
    table = bench_heavy_peers(chosen, np.random.default_rng(SEED))
    print(harness.markdown(table, f"PEM beside pure-ldp ({chosen.name} mode)"), end="")

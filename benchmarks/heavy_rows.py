"""Heavy hitters: PEM's, TreeHist's and SFP's discovery at 10^6 users and their clients, one core.

Each row below is measured for each protocol, ``PEM(4, max_bytes=16)``, ``TreeHist(4, max_bytes=16)``
(bytes a step, the budget split evenly) and ``SFP(4, max_bytes=16)`` (fragments of two bytes, the
budget split evenly), on the same answers:

* ``PEM discover``: 10^6 users holding Zipf(1.2) strings (5,000 distinct words of 10 bytes,
  ``w00042x123``), ε = 4, ``max_bytes = 16``, top 20: the whole discovery from the reports; target
  30 s. The row gives the recall of the true top 20, how many answers no user holds (a real
  prefix and bytes that rose on noise), how many lie above the discovery's floor, and the largest
  error of a found answer's estimate in its standard errors.
* ``PEM perturb``: the client on the same users, per user (Python, numpy's generator); target 100 µs.
* ``PEM on Kosarak``: a real corpus, every record of the bundled Kosarak sample (294,008 clicks of
  36,682 users) as one answer, the item's id as text (at most 5 bytes), ε = 4, top 20, three seeds:
  how many of the true top 20 are found and how many answers lie above the floor (SFP: 6 bytes).

A suite of ``run.py`` (``--only heavy``; ``bench_heavy(mode, rng)``); also standalone::

    PYTHONPATH=src .venv/bin/python benchmarks/heavy_rows.py [--quick]
"""

from __future__ import annotations

import harness  # first: pins the BLAS/OpenMP threads to one before numpy is imported

# isort: split

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import pldp

N, WORDS, MAX_BYTES, EPS, TOP = 10**6, 5_000, 16, 4.0, 20
TARGET_DISCOVER_S, TARGET_CLIENT_US = 30.0, 100.0


def _population(n: int, rng: np.random.Generator) -> tuple[list[str], np.ndarray, list[str]]:
    """``n`` answers drawn Zipf(1.2) from :data:`WORDS` words of 10 bytes, their indices, and the words."""
    words = [f"w{i:05d}x{(i * 7919) % 1000:03d}" for i in range(WORDS)]
    p = 1.0 / np.arange(1, WORDS + 1) ** 1.2
    x = rng.choice(WORDS, size=n, p=p / p.sum())
    return [words[i] for i in x], x, words


#: The protocols measured, as each row builds them (``max_bytes``: the bound on an answer).
PROTOCOLS: dict[str, Callable[[int], Any]] = {
    "PEM": lambda max_bytes: pldp.PEM(EPS, max_bytes=max_bytes),
    "TreeHist": lambda max_bytes: pldp.TreeHist(EPS, max_bytes=max_bytes),
    "SFP": lambda max_bytes: pldp.SFP(EPS, max_bytes=max_bytes + max_bytes % 2),  # fragments of 2 bytes
}


def bench_heavy(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """Per protocol, the discovery row and the client row (10^5 users with ``--quick``).

    Parameters
    ----------
    mode : Mode
        Quick (10^5 users) or full (10^6).
    rng : numpy.random.Generator
        The generator of the data and of ``perturb``.

    Returns
    -------
    list of Row
        Per protocol: discovery, then the client.
    """
    n = N if mode.name == "full" else N // 10
    answers, x, words = _population(n, rng)
    counts = np.bincount(x, minlength=WORDS)
    truth = {words[i]: counts[i] / n for i in np.argsort(-counts, kind="stable")[:TOP]}
    index = {w: i for i, w in enumerate(words)}
    users = f"10^{round(np.log10(n))}"
    rows = []
    for name, build in PROTOCOLS.items():
        proto = build(MAX_BYTES)
        reports, t_client = harness.once(lambda p=proto: p.perturb(answers, rng))
        found, t = harness.once(lambda p=proto, rep=reports: p.discover(rep, top=TOP))
        recall = len(set(truth) & set(found.answers)) / TOP
        shares = np.array([counts[index[a]] / n if a in index else 0.0 for a in found.answers])
        nobody = int(np.sum(shares == 0))
        z = float(np.max(np.abs(found.estimate.frequencies - shares) / found.estimate.std_error))
        per_user = t_client.best / n * 1e6
        del reports
        rows += [
            harness.timed_row(
                f"{name} discover",
                f"{users} users, Zipf(1.2) over {WORDS:,} words of 10 bytes, ε={EPS:g}, {proto!r}, top {TOP}: "
                f"recall {recall:.2f} of the true top {TOP}; {nobody} answer(s) held by nobody; "
                f"{len(found.confident)} above the floor {found.floor:.2%}; largest error {z:.1f} SE",
                t,
                n / t.best,
                "users/s",
                f"≤ {TARGET_DISCOVER_S:g} s at 10^6",
                t.best * N / n <= TARGET_DISCOVER_S,
                recall=recall,
                held_by_nobody=nobody,
                confident=len(found.confident),
                largest_z=z,
            ),
            harness.timed_row(
                f"{name} perturb",
                f"{users} users, the same answers, Python, numpy's generator: {per_user:.1f} µs a user",
                t_client,
                n / t_client.best,
                "users/s",
                f"≤ {TARGET_CLIENT_US:g} µs a user",
                per_user <= TARGET_CLIENT_US,
            ),
        ]
    return rows


def bench_kosarak(mode: harness.Mode, rng: np.random.Generator) -> list[harness.Row]:
    """PEM on Kosarak's records as text answers: hits of the true top 20 over seeded repeats (one with
    ``--quick``), the answers above the floor, and the discovery's time.

    Parameters
    ----------
    mode : Mode
        Quick (one seed) or full (three).
    rng : numpy.random.Generator
        Unused: each repeat is seeded from :data:`harness.SEED`.

    Returns
    -------
    list of Row
        One row.
    """
    from pldp.datasets.real import item_labels, load_kosarak

    sets = load_kosarak()
    labels = item_labels("kosarak")
    answers = [str(t) for t in labels[sets.indices]]
    counts = np.bincount(sets.indices, minlength=sets.d)
    truth = {str(labels[i]) for i in np.argsort(-counts, kind="stable")[:TOP]}
    shares = np.sort(counts)[::-1] / len(answers)
    rows = []
    for name, build in PROTOCOLS.items():
        hits, confident, true_confident, times, floor = [], [], [], [], 0.0
        for r in range(1 if mode.name == "quick" else 3):
            proto = build(5)
            reports = proto.perturb(answers, np.random.default_rng(harness.SEED + r))
            found, t = harness.once(lambda p=proto, rep=reports: p.discover(rep, top=TOP))
            hits.append(len(truth & set(found.answers)))
            confident.append(len(found.confident))
            true_confident.append(len(truth & set(found.confident)))
            times.append(t.best)
            floor = found.floor
        rows.append(
            harness.Row(
                f"{name} on Kosarak",
                f"the bundled sample's {len(answers):,} records as answers (item ids as text, 5 bytes), ε={EPS:g}, "
                f"{proto!r}, top {TOP}, {len(hits)} seed(s): true top {TOP} found {hits}, above the floor "
                f"{floor:.2%} {confident} (of them true: {true_confident}); "
                f"the true top {TOP}'s shares run from {shares[0]:.2%} to {shares[TOP - 1]:.2%}",
                min(times),
                float(np.mean(hits)) / TOP,
                "recall",
                f"recall {np.mean(hits) / TOP:.2f}",
            )
        )
    return rows


if __name__ == "__main__":
    chosen = harness.QUICK if "--quick" in sys.argv else harness.FULL
    table = bench_heavy(chosen, np.random.default_rng(harness.SEED)) + bench_kosarak(chosen, np.random.default_rng(0))
    print(harness.markdown(table, f"heavy hitters ({chosen.name} mode)"), end="")

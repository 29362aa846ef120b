"""The audit loop: draw reports of every input, count each pair's test, bound epsilon."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.audit.attacks import ATTACKS, ldp_auditor_test
from pldp.audit.bounds import epsilon_lower_bound
from pldp.audit.events import Test, check_pair, optimal_test, pair_claim
from pldp.audit.jsclient import JSClient
from pldp.audit.pairs import Input, Pair, default_pairs
from pldp.audit.result import AuditResult, AuditRow
from pldp.audit.targets import Target, as_target
from pldp.errors import ParameterError

__all__ = ["CHUNK", "audit"]

#: Reports drawn per task (one input, one chunk): bounds the memory of a unary audit.
CHUNK = 1 << 16


def _task(
    target: Target,
    inp: Input,
    n: int,
    seed: np.random.SeedSequence,
    tests: list[tuple[int, Test]],
) -> tuple[list[int], np.ndarray]:
    """Draw ``n`` reports of ``inp`` and count the hits of each ``(slot, test)``."""
    rng = np.random.default_rng(seed)
    cols = target.sample(inp, n, rng)
    counts = np.array([int(np.count_nonzero(test.hits(cols, rng))) for _, test in tests], dtype=np.int64)
    return [slot for slot, _ in tests], counts


def _pairs(target: Target, pairs: Any, rng: np.random.Generator) -> list[Pair]:
    if pairs is None:
        return default_pairs(target.node)
    if isinstance(pairs, (int, np.integer)) and not isinstance(pairs, bool):
        return default_pairs(target.node, max_pairs=int(pairs), rng=rng)
    if isinstance(pairs, Sequence) and not isinstance(pairs, str):
        out = [check_pair(target.node, p) for p in pairs]
        if not out:
            raise ParameterError("pairs is empty: nothing to audit")
        return out
    raise ParameterError(f"pairs must be None, a number of pairs or a list of pairs, got {pairs!r}")


def audit(
    target: Any,
    pairs: Any = None,
    trials: int = 10**6,
    alpha: float = 0.01,
    attack: str = "optimal",
    rng: np.random.Generator | None = None,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = False,
) -> AuditResult:
    """Audit a sampler empirically: how well can one report tell two inputs apart?

    For each pair of inputs :math:`(x_0, x_1)` the test (the optimal event of the exact channel,
    :mod:`pldp.audit.events`, or LDP-Auditor's guess, :mod:`pldp.audit.attacks`) runs on
    ``trials`` real reports of each input; the hit rates are bounded by Clopper–Pearson intervals
    and the audited epsilon is :math:`\\ln(\\mathrm{TPR}_{lo}/\\mathrm{FPR}_{hi})`
    (:mod:`pldp.audit.bounds`; Arcolezi & Gambs, PETS 2024). The reports of an input are drawn
    once and serve every pair it belongs to.

    Parameters
    ----------
    target : FrequencyOracle, Spec, dict, str, pldp.client.Client or pldp.audit.JSClient
        What to audit (:mod:`pldp.audit.targets`).
    pairs : None, int or list of Pair
        None: :func:`pldp.audit.default_pairs` (every ordered pair of items on small domains, item
        classes on large ones, and the level pairs of protocols that hide the level); an int: a
        random sample of that many of them; a list: these pairs (``(i, j)`` means items ``i`` and
        ``j`` of a mechanism).
    trials : int
        Reports drawn for each input.
    alpha : float
        One minus the joint confidence: every row's bound holds simultaneously with probability
        at least ``1 - alpha`` (Clopper–Pearson at ``alpha / len(pairs)`` per row, Bonferroni; with
        one pair, LDP-Auditor's per-pair bound).
    attack : {"optimal", "ldp-auditor"}
        The test.
    rng : numpy.random.Generator, optional
        Seeds the draws (mechanisms, protocols, specs) and randomized attacks; same seed, same
        result, serial or on Dask. Clients draw from their own source.
    scheduler : str, optional
        Address of a Dask scheduler to spread the draws over (seeded targets only).
    workers : int, optional
        Local Dask worker processes (default: none, run in this process).
    progress : bool
        Show a progress bar of the draws.

    Returns
    -------
    AuditResult
        One row per pair: claimed, exact and audited epsilon, with ``flagged`` when the audited
        bound exceeds the claim.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> res = audit(pldp.KRR(1.0, 3), trials=20_000, rng=np.random.default_rng(1))
    >>> len(res.rows), res.ok
    (6, True)
    >>> all(0.8 < r.audited <= r.exact <= r.claimed for r in res.rows)
    True
    """
    from pldp.parallel import dask_workers, progress_bar, run_tasks

    if attack not in ATTACKS:
        raise ParameterError(f"attack must be one of {ATTACKS}, got {attack!r}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ParameterError(f"trials must be a positive integer, got {trials!r}")
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha!r}")
    rng = rng if rng is not None else np.random.default_rng()
    tgt = as_target(target)
    chosen = _pairs(tgt, pairs, rng)
    each = alpha / len(chosen)
    optimal = [optimal_test(tgt.node, p, int(trials), each) for p in chosen]
    exact = [t.exact for t in optimal]
    tests = optimal if attack == "optimal" else [ldp_auditor_test(tgt.node, p) for p in chosen]
    claims = [pair_claim(tgt.node, p, tgt.level_claim) for p in chosen]

    inputs: dict[Input, list[tuple[int, Test]]] = {}
    for i, (p, t) in enumerate(zip(chosen, tests, strict=True)):
        inputs.setdefault(p.x0, []).append((2 * i, t))
        inputs.setdefault(p.x1, []).append((2 * i + 1, t))
    jobs = [(inp, min(CHUNK, trials - s)) for inp in inputs for s in range(0, int(trials), CHUNK)]
    seeds = np.random.SeedSequence(int(rng.integers(1 << 62))).spawn(len(jobs))

    n_workers = dask_workers(workers, scheduler, 0)
    if (n_workers or scheduler is not None) and not tgt.seeded:
        raise ParameterError("clients draw from their own randomness: audit them in this process (no scheduler)")
    hits = np.zeros(2 * len(chosen), dtype=np.int64)
    bar = progress_bar(int(trials) * len(inputs), "audit", progress, unit="report")
    start = time.perf_counter()
    args = [(tgt, inp, n, seed, inputs[inp]) for (inp, n), seed in zip(jobs, seeds, strict=True)]
    results = run_tasks(_task, args, workers=n_workers, scheduler=scheduler)
    try:
        for i, (slots, counts) in results:
            hits[slots] += counts
            if bar is not None:
                bar.update(jobs[i][1])
    finally:
        results.close()  # at once, also after Ctrl-C in this loop: the cluster closes before anything else
        if bar is not None:
            bar.close()
        if tgt is not target and not isinstance(target, JSClient):
            tgt.close()  # a target made here; the caller's JSClient stays open for more audits
    seconds = time.perf_counter() - start

    n = int(trials)
    rows = []
    for i, (p, t) in enumerate(zip(chosen, tests, strict=True)):
        k0, k1 = int(hits[2 * i]), int(hits[2 * i + 1])
        audited = epsilon_lower_bound(k0, n, k1, n, each)
        expected = epsilon_lower_bound(round(n * t.p0), n, min(n, round(n * t.p1)), n, each)
        rows.append(
            AuditRow(
                secret=p.secret,
                pair=p.label(),
                claimed=claims[i],
                exact=exact[i],
                limit=t.log_ratio,
                expected=expected,
                tpr=k0 / n,
                fpr=k1 / n,
                trials=n,
                audited=audited,
                flagged=bool(audited > claims[i] + 1e-12 and not math.isinf(claims[i])),
                deviates=bool(audited > exact[i] + 1e-12),
            )
        )
    return AuditResult(tgt.describe(), attack, alpha, rows, seconds, tgt.seeded)

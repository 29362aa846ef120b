"""pldp's direct-encoding rows: per-user perturb + tally, Monte Carlo trials and the MLE.

* per-user ``perturb`` + ``tally`` of KRR and IPRR at n = 10^6, d = 100 (users per second);
* reference lines for the same amount of work done by bare numpy on this machine
  (``rng.random(n)`` + ``np.bincount``, ``rng.integers(0, d, n)`` + ``np.bincount``) and
  pldp's ratio to the faster of the two;
* one Monte Carlo trial (``simulate`` + unbiased + Norm-Sub) at d = 100, 1,000, 10,000;
* the MLE (exact solver) at d = 100 and 1,000 and the EM solver at d = 100.

Called by ``run.py``; see ``benchmarks/README.md`` for what every row measures.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict

import numpy as np

import pldp
from harness import (
    N_USERS,
    TARGET_REF_RATIO,
    Mode,
    Row,
    Timing,
    measure,
    measure_group,
    once,
    quiet,
    timed_row,
    zipf_population,
)
from pldp.datasets import zipf_counts
from report import fmt_rate, fmt_time

D_SMALL = 100

# Targets (the brief of the benchmark suite); TARGET_REF_RATIO is in harness (peers.py judges it too).
TARGET_USERS_PER_S = 30e6
TARGET_TRIAL_S = 5e-3
TARGET_MLE_S = {100: 50e-3, 1000: 1.0}

IPRR_PAPER = "IPRR ε∈[0.1, 10], 4 levels, NR=0.5"


def iprr_paper(counts: np.ndarray) -> pldp.IPRR:
    """IPRR with the budget policy of Li et al. Sec. 7.1: eps in [0.1, 10], 4 levels, NR = 0.5.

    Parameters
    ----------
    counts : numpy.ndarray
        Users per item; the frequent half of the items is non-sensitive.

    Returns
    -------
    pldp.IPRR
        The mechanism.
    """
    return pldp.IPRR(pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5))


def krr_and_iprr(counts: np.ndarray, d: int) -> tuple[tuple[str, pldp.DirectEncoding], ...]:
    """The two mechanisms of every direct-encoding row, with their labels: KRR(1) and the paper's IPRR.

    Parameters
    ----------
    counts : numpy.ndarray
        Users per item (for the IPRR policy).
    d : int
        Items.

    Returns
    -------
    tuple of (str, pldp.DirectEncoding)
        ``(label, mechanism)`` pairs.
    """
    return ("KRR ε=1", pldp.KRR(1.0, d)), (IPRR_PAPER, iprr_paper(counts))


# --------------------------------------------------------------------------- rows
def bench_perturb(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """Per-user ``perturb`` + ``tally`` at n = 10^6, d = 100, the references and the ratios.

    All lines are timed interleaved (:func:`harness.measure_group`), so the ratios to the
    reference compare timings taken under the same machine load.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the data and the perturbation.

    Returns
    -------
    list of Row
        The reference rows, the perturb + tally rows, then their ratios to the reference.
    """
    n, d = N_USERS, D_SMALL
    counts, items = zipf_population(n, d, rng)
    setups: list[tuple[str, pldp.DirectEncoding]] = [
        *krr_and_iprr(counts, d),
        ("KRR ε=0.1", pldp.KRR(0.1, d)),
        ("IPRR ε=0.1 on D_S, NR=0.5", pldp.IPRR(pldp.ItemBudgets.by_frequency(counts, 0.1, 0.1, 1, 0.5))),
    ]
    # References: the least work any randomized-response sampler + tally does per user.
    refs: dict[str, Callable[[], object]] = {
        "rng.random(n) + np.bincount(items)": lambda: (rng.random(n), np.bincount(items, minlength=d)),
        "np.bincount(rng.integers(0, d, n))": lambda: np.bincount(rng.integers(0, d, n), minlength=d),
    }
    timings = _time_perturb(setups, refs, items, rng, mode)
    rows: list[Row] = []
    for label in refs:
        t = timings[label]
        rows.append(timed_row("reference (bare numpy)", f"{label}, n=10^6, d={d}", t, n / t.best, "users/s", "-", None))
    ref_best = min(timings[label].best for label in refs)
    parts = [tuple(timings[f"{label}|{part}"] for part in ("both", "perturb", "tally")) for label, _ in setups]
    rows += [_perturb_row(label, mech, *times, n, d) for (label, mech), times in zip(setups, parts, strict=True)]
    rows += [_ratio_row(label, *times, ref_best) for (label, _), times in zip(setups, parts, strict=True)]
    return rows


def _time_perturb(
    setups: list[tuple[str, pldp.DirectEncoding]],
    refs: dict[str, Callable[[], object]],
    items: np.ndarray,
    rng: np.random.Generator,
    mode: Mode,
) -> dict[str, Timing]:
    """The references, then per setup ``label|both``, ``label|perturb`` and ``label|tally``, interleaved."""
    n = items.size
    fns: dict[str, Callable[[], object]] = dict(refs)
    for label, mech in setups:
        reports = mech.perturb(items, rng)
        tally = mech.tally(reports)
        assert tally.n == n and tally.counts.sum() == n
        fns[f"{label}|both"] = lambda m=mech: m.tally(m.perturb(items, rng))
        fns[f"{label}|perturb"] = lambda m=mech: m.perturb(items, rng)
        fns[f"{label}|tally"] = lambda m=mech, r=reports: m.tally(r)
    return measure_group(fns, mode.repeats, mode.min_repeat_s)


def _perturb_row(
    label: str, mech: pldp.DirectEncoding, t_both: Timing, t_pert: Timing, t_tally: Timing, n: int, d: int
) -> Row:
    """``perturb`` + ``tally`` of one mechanism: users/s against the target, the parts in ``extra``."""
    rate = n / t_both.best
    return timed_row(
        "perturb + tally",
        f"{label}, n=10^6, d={d} (liars {1.0 - mech.delta:.1%})",
        t_both,
        rate,
        "users/s",
        f"≥ {fmt_rate(TARGET_USERS_PER_S, 'users/s')}",
        rate >= TARGET_USERS_PER_S,
        perturb_s=t_pert.best,
        tally_s=t_tally.best,
        delta=mech.delta,
        perturb_timing=asdict(t_pert),
        tally_timing=asdict(t_tally),
    )


def _ratio_row(label: str, t_both: Timing, t_pert: Timing, t_tally: Timing, ref_best: float) -> Row:
    """``perturb`` + ``tally`` over the faster reference, judged as shown (to 2 decimals)."""
    ratio = t_both.best / ref_best
    return Row(
        "perturb + tally vs reference",
        f"{label}: perturb {fmt_time(t_pert.best)} + tally {fmt_time(t_tally.best)}",
        t_both.best,
        ratio,
        "x reference",
        f"{ratio:.2f}x reference",
        f"≤ {TARGET_REF_RATIO:g}x",
        round(ratio, 2) <= TARGET_REF_RATIO,  # judged as shown, to 2 decimals
        extra={"reference_s": ref_best},
    )


def bench_trials(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """One Monte Carlo trial: ``simulate`` + unbiased + Norm-Sub, n = 10^6.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the counts and the trials.

    Returns
    -------
    list of Row
        KRR and IPRR at d = 100, 1,000 and 10,000; the parts' times in ``extra``.
    """
    rows: list[Row] = []
    for d in (100, 1_000, 10_000):
        counts = zipf_counts(N_USERS, d, rng, exponent=2.0)
        for label, mech in krr_and_iprr(counts, d):

            def trial(m: pldp.DirectEncoding = mech, c: np.ndarray = counts) -> tuple[pldp.Estimate, pldp.Estimate]:
                tally = m.simulate(c, rng)
                return pldp.estimate(m, tally, "unbiased"), pldp.estimate(m, tally, "norm_sub")

            unb, ns = trial()
            assert abs(unb.frequencies.sum() - 1) < 1e-9 and abs(ns.frequencies.sum() - 1) < 1e-9
            assert ns.frequencies.min() >= 0
            t = measure(trial, mode.repeats, mode.min_repeat_s)
            tally = mech.simulate(counts, rng)
            parts = {
                "simulate_s": measure(
                    lambda m=mech, c=counts: m.simulate(c, rng), mode.repeats, mode.min_repeat_s
                ).best,
                "unbiased_s": measure(
                    lambda m=mech, tl=tally: pldp.estimate(m, tl, "unbiased"), mode.repeats, mode.min_repeat_s
                ).best,
                "norm_sub_s": measure(
                    lambda m=mech, tl=tally: pldp.estimate(m, tl, "norm_sub"), mode.repeats, mode.min_repeat_s
                ).best,
                "norm_sub_rounds": ns.iterations,
            }
            target = TARGET_TRIAL_S if d == 100 else None
            rows.append(
                timed_row(
                    "simulate + unbiased + Norm-Sub",
                    f"{label}, n=10^6, d={d:,}",
                    t,
                    1.0 / t.best,
                    "trials/s",
                    f"≤ {fmt_time(target)}" if target else "-",
                    (t.best <= target) if target else None,
                    **parts,
                )
            )
    return rows


def bench_mle(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """MLE: the exact solver at d = 100 and 1,000, the EM solver at d = 100.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the counts and the tallies.

    Returns
    -------
    list of Row
        The exact solver's rows, then the EM solver's.
    """
    rows: list[Row] = []
    em_rows: list[Row] = []
    for d in (100, 1_000):
        counts = zipf_counts(N_USERS, d, rng, exponent=2.0)
        for label, mech in krr_and_iprr(counts, d):
            tally = mech.simulate(counts, rng)
            est = pldp.estimate(mech, tally, "mle")
            t = measure(lambda m=mech, tl=tally: pldp.estimate(m, tl, "mle"), mode.repeats, mode.min_repeat_s)
            target = TARGET_MLE_S[d]
            rows.append(
                timed_row(
                    "MLE, exact solver",
                    f"{label}, n=10^6, d={d:,}",
                    t,
                    1.0 / t.best,
                    "fits/s",
                    f"≤ {fmt_time(target)}",
                    t.best <= target,
                    log_likelihood=est.info.get("log_likelihood"),
                    finite=bool(np.isfinite(est.frequencies).all()),
                )
            )
            if d == 100:
                em_rows.append(_em_row(mode, f"{label}, n=10^6, d={d}", mech, tally, est))
    return rows + em_rows


def _em_row(mode: Mode, where: str, mech: pldp.DirectEncoding, tally: pldp.Tally, exact: pldp.Estimate) -> Row:
    """The EM solver on the tally the exact MLE ``exact`` fitted: time per iteration, convergence, log-likelihood gap.

    The quick mode times the first call alone (the EM runs about a second); the full mode
    the best of ``mode.slow_repeats`` more.
    """

    def em() -> pldp.Estimate:
        return pldp.estimate(mech, tally, "mle", solver="em")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit, first = once(em)
    finite = bool(np.isfinite(fit.frequencies).all())
    t_em = first if mode.name == "quick" else measure(lambda: quiet(em), mode.slow_repeats, mode.min_repeat_s)
    its = fit.iterations
    status = "converged" if fit.converged else "max_iter hit"
    note = ", result NaN" if not finite else ""
    ll_gap = (
        exact.info["log_likelihood"] - fit.info["log_likelihood"]
        if finite and exact.info.get("log_likelihood") is not None
        else None
    )
    return Row(
        "MLE, EM solver (for comparison)",
        f"{where}: {its:,} iterations ({status}{note}"
        + (f", log-lik {ll_gap:.2g} below exact" if ll_gap is not None else "")
        + ")",
        t_em.best,
        its / t_em.best,
        "iterations/s",
        f"{fmt_time(t_em.best / max(its, 1))} per iteration",
        timing=asdict(t_em),
        extra={
            "iterations": its,
            "converged": fit.converged,
            "finite": finite,
            "loglik_exact_minus_em": ll_gap,
            "warnings": sorted({str(w.message) for w in caught}),
        },
    )

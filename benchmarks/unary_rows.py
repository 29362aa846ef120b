"""pldp's unary-encoding rows, the IDUE parameter solvers and the PLDP-FEBSF joint EM.

* per-user ``perturb`` + ``tally`` of OUE and IDUE (users per second, bits per item, peak
  memory) at (n = 10^6, d = 100) and (10^5, 1,000), and their trials at d = 41,270;
* the IDUE solvers (opt0, opt1, opt2) and the PLDP-FEBSF joint EM on k-RR and RAPPOR data.

Called by ``run.py``; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import tracemalloc

import numpy as np

import pldp
from harness import N_USERS, Mode, Row, measure, once, timed_row
from pldp.datasets import zipf_counts
from report import fmt_rate, fmt_time


def bench_unary(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """Unary encoding: per-user perturb + tally (users/s, bits per item), trials at d = 41,270.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the data and the perturbation.

    Returns
    -------
    list of Row
        OUE and IDUE per user at (n = 10^6, d = 100) and (10^5, 1,000), then their trials.
    """
    per_user = _unary_per_user_rows(mode, rng)
    return per_user + _unary_trial_rows(mode, rng)


def oue_and_idue(d: int, budget_seed: int) -> tuple[tuple[str, pldp.UnaryEncoding], ...]:
    """The two mechanisms of the unary rows, with their labels: OUE(1) and IDUE (opt0) on random budget levels.

    Parameters
    ----------
    d : int
        Items.
    budget_seed : int
        Seed of :meth:`pldp.ItemBudgets.random_levels` (ε ∈ {1, 1.2, 2}).

    Returns
    -------
    tuple of (str, pldp.UnaryEncoding)
        ``(label, mechanism)`` pairs.
    """
    budgets = pldp.ItemBudgets.random_levels(d, 1.0, np.random.default_rng(budget_seed))
    return ("OUE ε=1", pldp.OUE(1.0, d)), ("IDUE opt0, ε∈{1, 1.2, 2}", pldp.IDUE(budgets))


def _unary_per_user_rows(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """Per-user ``perturb`` + ``tally``: users/s, bits per item and tracemalloc's peak of one ``perturb``."""
    rows: list[Row] = []
    for d, n, target in ((100, N_USERS, 3e6), (1_000, 100_000, 0.5e6)):
        items = rng.choice(d, size=n, p=pldp.datasets.synthetic.zipf_probabilities(d, 2.0))
        for label, mech in oue_and_idue(d, 1):

            def run(m: pldp.UnaryEncoding = mech, x: np.ndarray = items) -> pldp.Tally:
                return m.tally(m.perturb(x, rng))

            t = measure(run, max(3, mode.repeats // 4), mode.min_repeat_s)
            tracemalloc.start()
            reports = mech.perturb(items, rng)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            bits = 8 * reports.nbytes / (n * d)
            rows.append(
                timed_row(
                    "unary perturb + tally",
                    f"{label}, n={n:,}, d={d:,}; {bits:.2f} bits/item, peak {peak / 2**20:.0f} MiB",
                    t,
                    n / t.best,
                    "users/s",
                    f"≥ {fmt_rate(target, 'users/s')}",
                    n / t.best >= target,
                    bits_per_item=bits,
                    peak_bytes=peak,
                )
            )
    return rows


def _unary_trial_rows(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """One trial (``simulate`` + unbiased + Norm-Sub) at n = 10^6 over Kosarak's domain, d = 41,270."""
    rows: list[Row] = []
    d = 41_270  # Kosarak's domain
    counts = zipf_counts(N_USERS, d, rng, exponent=1.5)
    for label, mech in oue_and_idue(d, 2):

        def trial(m: pldp.UnaryEncoding = mech, c: np.ndarray = counts) -> pldp.Estimate:
            tally = m.simulate(c, rng)
            pldp.estimate(m, tally, "unbiased")
            return pldp.estimate(m, tally, "norm_sub")

        t = measure(trial, mode.repeats, mode.min_repeat_s)
        rows.append(
            timed_row(
                "unary simulate + unbiased + Norm-Sub",
                f"{label}, n=10^6, d={d:,}",
                t,
                1 / t.best,
                "trials/s",
                "≤ 20 ms",
                t.best <= 20e-3,
            )
        )
    return rows


def bench_solvers(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """IDUE parameter solvers and the PLDP-FEBSF joint EM.

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the FEBSF data.

    Returns
    -------
    list of Row
        The IDUE solver rows, then the two FEBSF EM rows.
    """
    from pldp.mechanisms.idue_solver import solve_idue

    rows: list[Row] = []
    r = np.random.default_rng(3)
    for model, t_levels, target in (("opt0", 3, 2.0), ("opt0", 5, None), ("opt1", 100, 1.0), ("opt2", 100, 1.0)):
        eps = np.sort(r.uniform(0.5, 4.0, t_levels))
        sizes = r.integers(1, 50, t_levels)
        t = measure(lambda m=model, e=eps, s=sizes: solve_idue(e, s, model=m), max(2, mode.slow_repeats), 0.0)
        rows.append(
            timed_row(
                "IDUE solver",
                f"{model}, t={t_levels} levels (MinID)",
                t,
                1 / t.best,
                "solves/s",
                f"≤ {fmt_time(target)}" if target else "-",
                (t.best <= target) if target else None,
            )
        )
    return rows + _febsf_rows(mode, rng)


def _febsf_rows(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """The PLDP-FEBSF joint EM on k-RR data (N = 10^6, timed) and RAPPOR data (N = 10^5, one call), and
    the paper's EM on OUE data (N = 10^5, one call; issue 34's target: under 10 s)."""
    from pldp.protocols.febsf import FEBSF, em

    k, t_levels = 42, 10
    proto = FEBSF(np.linspace(0.1, 1.0, t_levels), 0.3, k, oracle="krr")
    p = pldp.datasets.synthetic.zipf_probabilities(k, 1.0)
    cells = rng.multinomial(N_USERS, np.outer(np.full(t_levels, 1 / t_levels), p).ravel()).reshape(t_levels, k)
    tally = proto.simulate(cells, rng)
    fit = em(proto, tally)
    t = measure(lambda: em(proto, tally), max(2, mode.slow_repeats), 0.0)
    krr_row = timed_row(
        "PLDP-FEBSF joint EM",
        f"k-RR data, N=10^6, k={k}, t={t_levels}, ε_p=0.3: {fit.iterations} iterations",
        t,
        1 / t.best,
        "fits/s",
        "≤ 2 s",
        t.best <= 2.0,
    )
    n_small = 100_000
    proto_r = FEBSF(np.linspace(0.1, 1.0, t_levels), 0.3, k, oracle="rappor")
    cells = rng.multinomial(n_small, np.outer(np.full(t_levels, 1 / t_levels), p).ravel()).reshape(t_levels, k)
    tally_r = proto_r.simulate(cells, rng)
    fit, t = once(lambda: em(proto_r, tally_r))  # ~1-3 s: one timed call (the code is warm from the k-RR fits)
    rappor_row = timed_row(
        "PLDP-FEBSF joint EM",
        f"RAPPOR data, N={n_small:,}, k={k}, t={t_levels}: "
        f"{tally_r.patterns.shape[0]:,} distinct patterns, {fit.iterations} iterations",
        t,
        1 / t.best,
        "fits/s",
        "-",
        None,
    )
    # the paper's printed EM (Section 6), run to its stopping rule, in issue 34's setting: OUE items
    p16 = pldp.datasets.synthetic.zipf_probabilities(16, 2.0)
    proto_o = FEBSF(np.linspace(0.1, 1.0, t_levels), 0.3, 16, oracle="oue")
    cells = rng.multinomial(n_small, np.outer(np.full(t_levels, 1 / t_levels), p16).ravel()).reshape(t_levels, 16)
    tally_o = proto_o.simulate(cells, rng)
    fit, t = once(lambda: proto_o.estimate(tally_o, "paper"))  # 103 s before issue 34: one timed call
    paper_row = timed_row(
        "PLDP-FEBSF paper EM",
        f'OUE data, N={n_small:,}, d=16 (Zipf(2)), t={t_levels}, ε_p=0.3: estimate(..., "paper"), '
        f"{tally_o.patterns.shape[0]:,} (level, pattern) rows, {fit.iterations} iterations",
        t,
        1 / t.best,
        "fits/s",
        "≤ 10 s",
        t.best <= 10.0,
    )
    return [krr_row, rappor_row, paper_row]

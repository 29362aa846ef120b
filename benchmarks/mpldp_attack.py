"""MPLDP under the optimising attacker, across attributes (issue 34, item 6).

Run: ``PYTHONPATH=src python benchmarks/mpldp_attack.py [--quick] [--beta 0.045] | --mse | --options``
(about 2 minutes on a shared two-core machine; ``--quick``: 4 repeats; ``--mse``: the honest-data
MSE ratios). Setting of docs/attacks.md's MPLDP table: ``n = 10^5``
honest users, two attributes of ``d = 16`` values, each Zipf(2) (independent), budget 0.9 per
attribute (levels 0.3, 0.45, 0.9: mean 0.55), levels drawn with the even shares; the rarest value
of each attacked attribute as target, ``m`` fakes with :math:`\\beta = m/(n+m) = 1\\%`, attacking
attribute 0 only or both. The attacker (:func:`pldp.attacks.optimal.search`, 20 chunks, 12 shadow tallies)
draws its shadow tallies from its own seed (uniform values, even shares, the true ``n``); the gain
of its split is measured on ``REPEATS`` fresh perturbations of the honest users with fresh fakes,
per attribute and in total, against ``"robust"`` (equal influence, with its bound at the share of
fakes), ``"huber"``, ``"unbiased"`` (OC) and ``"sum"``. Comparator: MGA against OUE at 0.55
(closed form, per attribute).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from pldp.attacks import expected_gain, shift
from pldp.attacks.optimal import search, split_reports
from pldp.datasets.synthetic import zipf_probabilities
from pldp.mechanisms import OUE
from pldp.protocols import MPLDP

N, D, SEED, BETA = 100_000, 16, 346, 0.01
REPEATS = 30
#: Shadow tallies of the search (the robust gain varies much from tally to tally near a clip).
SHADOWS = 12


def users(mp: MPLDP, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = zipf_probabilities(D)
    values = np.stack([rng.choice(D, N, p=p) for _ in range(mp.n_attributes)], axis=1)
    return values, mp.assign_levels(N, rng)


def main(quick: bool = False, beta: float = BETA) -> None:
    repeats, shadows = (4, 4) if quick else (REPEATS, SHADOWS)
    mp = MPLDP([D, D], [0.9, 0.9])
    values, levels = users(mp, np.random.default_rng(SEED))
    m = round(beta * N / (1 - beta))
    target = np.array([D - 1])
    uniform = expected_gain(OUE(0.55, D), target, m, np.bincount(values[:, 0], minlength=D))
    print(f"MPLDP k={list(mp.k)} eps={mp.eps.tolist()} n={N} m={m} (beta={beta}) MGA@OUE(0.55)={uniform:.4f}")
    none = np.empty(0, dtype=np.int64)
    for attacked, targets in ((1, [target, none]), (2, [target, target])):
        for idx, defence in enumerate(("robust", "huber", "unbiased", "sum")):
            t0 = time.time()
            s = search(mp, targets, m, rng=np.random.default_rng([SEED, attacked, idx]), defence=defence, population=N,
                       shadows=shadows)  # fmt: skip
            rng = np.random.default_rng([SEED, 1, attacked, idx])
            per, unb, bound, above = [], [], [], 0
            for _ in range(repeats):
                honest = mp.simulate(values, levels, rng)
                fake = mp.tally(split_reports(mp, targets, s.counts, rng))
                moved = shift(mp, honest, fake, defence)
                per.append([float(np.sum(d[t])) for d, t in zip(moved, targets, strict=True)])
                unb.append(sum(float(np.sum(d[t])) for d, t in zip(shift(mp, honest, fake), targets, strict=True)))
                if defence == "robust":  # the bound at the share of fakes, per attribute, from the attacked tally
                    est = mp.estimate(honest + fake, "robust", beta=m / (N + m))
                    bound.append(sum(float(np.sum(e.info["bound"][t])) for e, t in zip(est, targets, strict=True)))
                    above += bool(sum(per[-1]) > bound[-1])
            g = np.array(per)
            total = g.sum(axis=1)
            se = total.std(ddof=1) / np.sqrt(repeats)
            parts = ", ".join(f"a{i} {v:.4f}" for i, v in enumerate(g.mean(axis=0)))
            extra = f" bound={np.mean(bound):.4f} (exceeded {above}/{repeats})" if bound else ""
            print(
                f"  {attacked} attacked, {defence}: "
                f"split={s.counts.reshape(mp.n_attributes, 2, mp.n_levels).tolist()} total={total.mean():.4f}±{se:.4f} "
                f"(x{total.mean() / (attacked * uniform):.2f} of {attacked} x MGA) per attribute: {parts}; "
                f"unbiased-same-fakes={np.mean(unb):.4f}{extra} fixed-best={max(s.fixed.values()):.4f} "
                f"[{time.time() - t0:.0f} s]",
                flush=True,
            )


def mse(repeats: int = 100) -> None:
    """``--mse``: without attack, each method's MSE (summed over both attributes) over ``repeats``
    tallies of the users of :func:`main`, relative to Norm-Sub's and to OC's (``"unbiased"``)."""
    mp = MPLDP([D, D], [0.9, 0.9])
    values, levels = users(mp, np.random.default_rng(SEED))
    truth = np.stack([np.bincount(values[:, i], minlength=D) / N for i in range(mp.n_attributes)])
    rng = np.random.default_rng([SEED, 7])
    err: dict[str, list[float]] = {method: [] for method in ("robust", "huber", "unbiased", "norm_sub", "sum")}
    for _ in range(repeats):
        tally = mp.simulate(values, levels, rng)
        for method, out in err.items():
            out.append(
                sum(float(np.sum((e.frequencies - truth[i]) ** 2)) for i, e in enumerate(mp.estimate(tally, method)))
            )
    for method, out in err.items():
        a = np.array(out)
        print(
            f"{method}: MSE {a.mean():.3e} ±{a.std(ddof=1) / np.sqrt(repeats):.1e}, "
            f"x{a.mean() / np.mean(err['norm_sub']):.2f} Norm-Sub, x{a.mean() / np.mean(err['unbiased']):.2f} OC",
            flush=True,
        )


def options(repeats: int = 16) -> None:
    """``--options``: attribute 0 attacked at β = 1 % and 4.5 %, the optimal attacker (8 shadow
    tallies) against ``"huber"`` with the cap 1/2 and clips k = 2, 4, 8 and none (1e6: the capped
    linear combination), and against OC; gain over ``repeats`` fresh tallies, and the MSE of each
    estimate without attack over the same tallies, relative to OC's."""
    mp = MPLDP([D, D], [0.9, 0.9])
    values, levels = users(mp, np.random.default_rng(SEED))
    truth = np.bincount(values[:, 0], minlength=D) / N
    targets = [np.array([D - 1]), np.empty(0, dtype=np.int64)]
    for beta in (0.01, 0.045):
        m = round(beta * N / (1 - beta))
        uniform = expected_gain(OUE(0.55, D), targets[0], m, np.bincount(values[:, 0], minlength=D))
        for idx, (method, opts) in enumerate(
            [("huber", {"cap": 0.5, "k": k}) for k in (2.0, 4.0, 8.0, 1e6)] + [("unbiased", {})]
        ):
            s = search(mp, targets, m, rng=np.random.default_rng([SEED, 5, idx]), defence=method, options=opts,
                       population=N, shadows=8)  # fmt: skip
            rng = np.random.default_rng([SEED, 6, idx])
            g, err, oc = [], [], []
            for _ in range(repeats):
                honest = mp.simulate(values, levels, rng)
                fake = mp.tally(split_reports(mp, targets, s.counts, rng))
                g.append(float(shift(mp, honest, fake, method, **opts)[0][D - 1]))
                err.append(np.sum((mp.estimate(honest, method, attribute=0, **opts).frequencies - truth) ** 2))
                oc.append(np.sum((mp.estimate(honest, attribute=0).frequencies - truth) ** 2))
            print(
                f"beta={beta} {method} {opts}: split={s.counts[: mp.n_levels].tolist()} gain={np.mean(g):.4f}"
                f"±{np.std(g, ddof=1) / np.sqrt(repeats):.4f} (x{np.mean(g) / uniform:.2f} MGA {uniform:.4f}) "
                f"honest MSE x{np.mean(err) / np.mean(oc):.2f} OC",
                flush=True,
            )


if __name__ == "__main__":
    if "--options" in sys.argv:
        options()
    elif "--mse" in sys.argv:
        mse()
    else:
        beta = float(sys.argv[sys.argv.index("--beta") + 1]) if "--beta" in sys.argv else BETA
        main("--quick" in sys.argv, beta)

"""Issue 34 item 3: combinations of the levels measured against the optimising attacker that knows each
(pldp.attacks.optimal), for the protocols whose level is claimed in the clear.

Run: ``PYTHONPATH=src python benchmarks/spread_candidates.py [--quick] [--all] [--consistent]`` (about
3 minutes; ``--quick``: β = 1 % only; ``--all``: also the exploratory candidates of the previous
study; ``--consistent``: only the lower bound's attack, measured, :func:`consistent`; ``--three``:
levels (0.5, 1, 2) instead, :func:`three`; ``--pbp``: PBP's ``"robust"``, :func:`pbp`).
Setting of docs/attacks.md's table: ten levels 0.1..1.0 evenly shared, Zipf(2), d = 16,
n = 10^5, the rarest item, β = 1 % and 4.5 %; RCF-k-RR, RCF-OUE, LLevels-L-GRR (eps_perm twice
eps_1). Methods:

* ``robust``: the shipped default, :func:`pldp.estimation.spread.equal_influence` (weights
  proportional to claimed count x r, r = (p* - q*)/(1 - q*)) then Norm-Sub;
* ``equal``: the same before the projection (the linear combination whose bound is proven);
* ``equal_ns`` (``--consistent`` and ``--all``): ``equal`` then plain Norm-Sub;
* ``huber``: the former ``"robust"`` (Huber over the levels, capped inverse-variance weights);
* with ``--all``: ``robust_shares`` (Huber with the published sizes), ``median`` (weighted
  median), ``trim`` (excess claims over the published shares shrunk to the median).

Printed per protocol: the MSE over the 16 items without attack relative to ``"norm_sub"`` (40
honest tallies), then per β and method the optimal attacker's split, its gain on 8 fresh tallies
± SE and the ratio to MGA against the pure mechanism at the mean budget 0.55 (closed form:
0.2145 / 0.0473 at 1 %, 0.9655 / 0.2127 at 4.5 %), and the lower bound ``LB``: the gain of the
consistent split (claims in proportion to n_g r_g, every level's estimate moved alike), which no
combination of the level estimates that follows a common shift can tell from honest data
(:func:`pldp.estimation.spread.consistent_shift`).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from pldp.attacks import expected_gain, gain
from pldp.attacks.leveled import largest_remainder
from pldp.attacks.optimal import worst_case
from pldp.datasets.synthetic import zipf_probabilities
from pldp.estimation.consistency import norm_sub
from pldp.estimation.groups import group_estimates
from pldp.estimation.result import Estimate
from pldp.estimation.robust import capped_weights, robust_combine, weighted_median
from pldp.estimation.spread import consistent_shift, equal_influence, influence
from pldp.mechanisms import KRR, OUE
from pldp.protocols import RCF, GroupedReports, LLevels

LEVELS = np.arange(1, 11) / 10
N, D = 100_000, 16
SHARES = np.full(10, 0.1)
EXTRA = ("equal", "equal_ns", "robust_shares", "median", "trim")


def candidates(base: type[RCF]) -> type[RCF]:
    """``base`` with the exploratory methods."""

    class Candidates(base):  # type: ignore[misc, valid-type]
        methods = (*base.methods, *EXTRA)

        def estimate(self, tally: Any, method: str = "unbiased", **options: Any) -> Estimate:
            if method in base.methods:
                return super().estimate(tally, method, **options)
            sizes = tally.level_counts.astype(float)
            published = SHARES * sizes.sum()
            est, var = group_estimates(self.mechanisms, tally.tallies)
            support = tuple(np.stack([m.support[i] for m in self.mechanisms]) for i in (0, 1))
            if method in ("equal", "equal_ns"):
                freq = equal_influence(est, var, sizes, (support[0], support[1])).frequencies
                freq = norm_sub(freq)[0] if method == "equal_ns" else freq
            elif method == "robust_shares":
                freq = robust_combine(est, var, published, (support[0], support[1])).frequencies
            else:
                w = self.weights(published)
                med = weighted_median(est, capped_weights(w, 0.5))
                if method == "median":
                    freq = med
                else:
                    excess = np.clip((sizes - published) / np.maximum(sizes, 1.0), 0.0, 1.0)[:, None]
                    freq = np.sum(w * (est - excess * (est - med[None, :])), axis=0)
            return Estimate(freq, np.zeros(self.d), tally.n, method, self.domain, 0, True, {}, False)

    return Candidates


def consistent_fakes(proto: RCF, data: np.ndarray, m: int, rng: np.random.Generator) -> GroupedReports:
    """The lower bound's attack, made: claims in proportion to n_g r_g; at each level the target's
    support (k-RR: the target; unary: its bit) and, for unary reports, the other bits at the rate
    that keeps every level's estimates those of honest data of f' = (1 - Δ) f + Δ e_target (the
    attacker knows f): the levels then agree with each other as honest data of f' would."""
    target = D - 1
    support = tuple(np.stack([mm.support[i] for mm in proto.mechanisms]) for i in (0, 1))
    r = influence((support[0], support[1]))[:, target]
    n_g = data.sum(axis=1).astype(float)
    claims = largest_remainder(n_g * r, m)
    delta_shift = m / float(np.sum(n_g * r))
    f = data.sum(axis=0) / data.sum()
    parts, levels = [], []
    for g, mech in enumerate(proto.mechanisms):
        k = int(claims[g])
        levels.append(np.full(k, g))
        if mech.family == "direct":
            parts.append(np.full(k, target))
            continue
        p_star, q_star = (float(a[0]) for a in mech.support)
        gap = p_star - q_star
        rate = q_star + gap * f * (1 - delta_shift) - (n_g[g] / max(k, 1)) * gap * f * delta_shift
        bits = rng.random((k, D)) < np.clip(rate, 0.0, 1.0)
        bits[:, target] = True
        parts.append(mech.pack(bits))  # type: ignore[attr-defined]
    return GroupedReports(tuple(parts), np.concatenate(levels))


def few_ones(proto: RCF, level: int, m: int) -> GroupedReports:
    """Unary fakes at one level with the target bit alone: every other item's estimate falls, which
    lowers plain Norm-Sub's threshold (the attack on the projection)."""
    bits = np.zeros((m, D), dtype=bool)
    bits[:, D - 1] = True
    empty = np.zeros((0, D), dtype=bool)
    parts = tuple(mech.pack(bits if i == level else empty) for i, mech in enumerate(proto.mechanisms))  # type: ignore[attr-defined]
    return GroupedReports(parts, np.full(m, level))


def consistent(repeats: int = 8) -> None:
    """``--consistent``: the lower bound's attack measured under each method at β = 1 % and 4.5 %."""
    p = zipf_probabilities(D)
    data = np.stack([np.round(N // 10 * p).astype(np.int64) for _ in range(10)])
    protos = {
        "rcf-krr": (candidates(RCF)(LEVELS, D), KRR(0.55, D)),
        "rcf-oue": (candidates(RCF)(LEVELS, D, "oue"), OUE(0.55, D)),
    }
    for idx, (name, (proto, pure)) in enumerate(protos.items()):
        for beta in (0.01, 0.045):
            m = round(beta * N / (1 - beta))
            uniform = expected_gain(pure, [D - 1], m, data.sum(axis=0))
            rng = np.random.default_rng([3416, idx, round(beta * 1000)])
            gains: dict[str, list[float]] = {mt: [] for mt in ("robust", "unbiased", "norm_sub", "huber")}
            for _ in range(repeats):
                honest = proto.simulate(data, rng)
                fake = proto.tally(consistent_fakes(proto, data, m, rng))
                for mt, g in gains.items():
                    g.append(gain(proto, honest, fake, [D - 1], mt))
            if name == "rcf-oue":
                for level in (0, 1, 9):
                    few: dict[str, list[float]] = {mt: [] for mt in ("robust", "equal", "equal_ns", "norm_sub")}
                    for _ in range(repeats):
                        honest = proto.simulate(data, rng)
                        fake = proto.tally(few_ones(proto, level, m))
                        for mt, g in few.items():
                            g.append(gain(proto, honest, fake, [D - 1], mt))
                    print(
                        f"{name} beta={beta} target bit alone at level {level}: "
                        + ", ".join(f"{mt} {np.mean(g):.4f} (x{np.mean(g) / uniform:.3f})" for mt, g in few.items()),
                        flush=True,
                    )
            print(
                f"{name} beta={beta} consistent split: "
                + ", ".join(
                    f"{mt} {np.mean(g):.4f}±{np.std(g, ddof=1) / np.sqrt(len(g)):.4f} (x{np.mean(g) / uniform:.3f})"
                    for mt, g in gains.items()
                ),
                flush=True,
            )


def three(repeats: int = 8) -> None:
    """``--three``: levels (0.5, 1, 2) evenly shared (the issue's other setting), d = 16, n = 10^5,
    β = 1 %: MSE over Norm-Sub's (200 honest tallies) and the optimising attacker against each method,
    against MGA on the pure mechanism at the mean budget 7/6."""
    levels = np.array([0.5, 1.0, 2.0])
    p = zipf_probabilities(D)
    data = np.stack([np.round(N // 3 * p).astype(np.int64) for _ in range(3)])
    truth = data.sum(axis=0) / data.sum()
    for oracle, pure in (("krr", KRR), ("oue", OUE)):
        proto = RCF(levels, D, oracle)  # type: ignore[arg-type]
        rng = np.random.default_rng(5)
        err: dict[str, list[float]] = {mt: [] for mt in ("robust", "huber", "norm_sub")}
        for _ in range(200):
            tally = proto.simulate(data, rng)
            for mt, e in err.items():
                e.append(float(np.sum((proto.estimate(tally, mt).frequencies - truth) ** 2)))
        base = np.mean(err["norm_sub"])
        print(oracle, "MSE / norm_sub:", {mt: round(float(np.mean(e) / base), 3) for mt, e in err.items()}, flush=True)
        m = round(0.01 * data.sum() / 0.99)
        uniform = expected_gain(pure(float(levels.mean()), D), [D - 1], m, data.sum(axis=0))
        for mt in ("robust", "huber", "unbiased"):
            w = worst_case(
                proto, [D - 1], m, data, rng=np.random.default_rng(7), defence=mt, repeats=repeats,
                population=int(data.sum()), chunks=20, shadows=3,
            )  # fmt: skip
            print(
                f"  {oracle} {mt}: split={w.search.counts.tolist()} gain={w.gain:.4f}±{w.se:.4f} "
                f"(x{w.gain / uniform:.3f} MGA@{levels.mean():.3f}={uniform:.4f})",
                flush=True,
            )


def pbp(repeats: int = 6) -> None:
    """``--pbp``: PBP (level hidden behind the published even shares) in the same setting, its own
    ``"robust"`` against the optimising attacker (10 chunks, 2 shadows), β = 1 % and 4.5 %."""
    from pldp.protocols import PBP

    p = zipf_probabilities(D)
    data = np.stack([np.round(N // 10 * p).astype(np.int64) for _ in range(10)])
    for oracle, pure in (("krr", KRR), ("oue", OUE)):
        proto = PBP(LEVELS, SHARES, D, oracle)
        for beta in (0.01, 0.045):
            m = round(beta * N / (1 - beta))
            uniform = expected_gain(pure(0.55, D), [D - 1], m, data.sum(axis=0))
            w = worst_case(
                proto, [D - 1], m, data, rng=np.random.default_rng(3418), defence="robust", repeats=repeats,
                population=N, chunks=10, shadows=2,
            )  # fmt: skip
            print(
                f"pbp-{oracle} beta={beta} robust: split={w.search.counts.tolist()} gain={w.gain:.4f}±{w.se:.4f} "
                f"(x{w.gain / uniform:.3f} MGA)",
                flush=True,
            )


def main(quick: bool = False, everything: bool = False) -> None:
    p = zipf_probabilities(D)
    data = np.stack([np.round(N // 10 * p).astype(np.int64) for _ in range(10)])
    truth = data.sum(axis=0) / data.sum()
    protos = {
        "rcf-krr": (candidates(RCF)(LEVELS, D), KRR(0.55, D)),
        "rcf-oue": (candidates(RCF)(LEVELS, D, "oue"), OUE(0.55, D)),
        "llevels-lgrr": (candidates(LLevels)(2 * LEVELS, LEVELS, D), KRR(0.55, D)),
    }
    methods = ("robust", "equal", "huber", *(EXTRA[1:] if everything else ()))
    for idx, (name, (proto, pure)) in enumerate(protos.items()):
        rng = np.random.default_rng([3411, idx])
        honest = [proto.simulate(data, rng) for _ in range(40)]
        base = np.mean([np.sum((norm_sub(proto.estimate(h, "unbiased").frequencies)[0] - truth) ** 2) for h in honest])
        mse = {
            mt: np.mean([np.sum((proto.estimate(h, mt).frequencies - truth) ** 2) for h in honest]) / base
            for mt in ("unbiased", *methods)
        }
        print(name, "MSE / norm_sub without attack:", {k: round(float(v), 3) for k, v in mse.items()}, flush=True)
        support = tuple(np.stack([mm.support[i] for mm in proto.mechanisms]) for i in (0, 1))
        for beta in (0.01,) if quick else (0.01, 0.045):
            m = round(beta * N / (1 - beta))
            uniform = expected_gain(pure, [D - 1], m, data.sum(axis=0))
            lower = float(consistent_shift(data.sum(axis=1), (support[0], support[1]), m)[D - 1])
            print(f"  beta={beta} m={m} MGA@0.55={uniform:.4f} LB={lower:.4f} (x{lower / uniform:.3f})", flush=True)
            for j, mt in enumerate(methods):
                t0 = time.time()
                w = worst_case(
                    proto,
                    [D - 1],
                    m,
                    data,
                    rng=np.random.default_rng([3410, idx, round(beta * 1000), j]),
                    defence=mt,
                    repeats=8,
                    population=N,
                    chunks=20,
                    shadows=3,
                )
                print(
                    f"    {mt}: split={w.search.counts.tolist()} gain={w.gain:.4f}±{w.se:.4f} "
                    f"(x{w.gain / uniform:.3f} MGA) [{time.time() - t0:.0f} s]",
                    flush=True,
                )


if __name__ == "__main__":
    if "--consistent" in sys.argv:
        consistent()
    elif "--three" in sys.argv:
        three()
    elif "--pbp" in sys.argv:
        pbp()
    else:
        main("--quick" in sys.argv, "--all" in sys.argv)

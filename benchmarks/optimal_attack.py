"""The worst case of ``"huber"`` (the former ``"robust"`` of RCF, APLDP, LLevels) and ``"unbiased"`` measured
by the optimising attacker (issue 34). The default ``"robust"`` of those protocols is measured by
``benchmarks/spread_candidates.py``.

Run: ``PYTHONPATH=src python benchmarks/optimal_attack.py [--quick | --pure | --febsf]`` (about 4 minutes on a shared
two-core machine; ``--quick``: β = 1 % only, fewer repeats). Setting of docs/attacks.md's numbers:
``n = 10^5`` honest users, Zipf(2) over ``d = 16`` items, spread evenly over ten levels 0.1..1.0
(LLevels-L-GRR: ``eps_1`` = those, ``eps_perm`` twice them), the rarest item as target, ``m`` fakes
with :math:`\\beta = m/(n+m)`. The attacker (:func:`pldp.attacks.optimal.worst_case`) draws its
shadow tallies from its own seed (uniform items, even level shares, the true ``n``), the gain is
measured on ``REPEATS`` fresh honest tallies of the true data. Comparator: MGA against the pure
mechanism (k-RR or OUE) at the mean budget 0.55, closed form (:func:`pldp.attacks.expected_gain`).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from pldp.attacks import expected_gain, fake_reports, gain
from pldp.attacks.optimal import split_reports, worst_case
from pldp.datasets.synthetic import zipf_probabilities
from pldp.mechanisms import KRR, OUE
from pldp.protocols import FEBSF, RCF, LLevels

LEVELS = np.arange(1, 11) / 10
N, D, SEED = 100_000, 16, 34
REPEATS = 10


def cells() -> np.ndarray:
    p = zipf_probabilities(D)
    per_level = np.full(10, N // 10)
    return np.stack([np.round(n * p).astype(np.int64) for n in per_level])


def main(quick: bool = False) -> None:
    repeats = 4 if quick else REPEATS
    data = cells()
    n = int(data.sum())
    target = [D - 1]
    protos = {
        "rcf-krr": (RCF(LEVELS, D), KRR(0.55, D)),
        "rcf-oue": (RCF(LEVELS, D, "oue"), OUE(0.55, D)),
        "llevels-lgrr": (LLevels(2 * LEVELS, LEVELS, D), KRR(0.55, D)),
    }
    for beta in (0.01,) if quick else (0.01, 0.045):
        m = round(beta * n / (1 - beta))
        for idx, (name, (proto, pure)) in enumerate(protos.items()):
            t0 = time.time()
            uniform = expected_gain(pure, target, m, data.sum(axis=0))
            row = [f"{name} beta={beta} m={m} MGA@0.55={uniform:.4f}"]
            for defence, spread in (("huber", True), ("huber", False), ("unbiased", True)):
                rng = np.random.default_rng([SEED, int(beta * 1000), idx, spread])
                w = worst_case(
                    proto, target, m, data, rng=rng, defence=defence, repeats=repeats, population=n, spread=spread
                )
                extra = ""
                if defence == "huber":
                    # the same fakes under "unbiased", and the bound the estimate reports
                    r2 = np.random.default_rng([SEED, 1, int(beta * 1000), spread])
                    un, bound = [], []
                    for _ in range(repeats):
                        h = proto.simulate(data, r2)
                        f = proto.tally(split_reports(proto, target, w.search.counts, r2))
                        un.append(gain(proto, h, f, target, "unbiased"))
                        bound.append(float(proto.estimate(h + f, "huber").info["bound"][target[0]]))
                    extra = f" unbiased-same-fakes={np.mean(un):.4f} bound={np.mean(bound):.4f}"
                    if spread:  # the fixed spread strategies, measured alike
                        r3 = np.random.default_rng([SEED, 2, int(beta * 1000), idx])
                        for strategy in ("mga", "knows_defence"):
                            g = [
                                gain(
                                    proto,
                                    proto.simulate(data, r3),
                                    proto.tally(fake_reports(proto, target, m, rng=r3, strategy=strategy)),
                                    target,
                                    "huber",
                                )
                                for _ in range(repeats)
                            ]
                            extra += f" {strategy}={np.mean(g):.4f}"
                row.append(
                    f"  {defence}{'' if spread else ' one-level'}: split={w.search.counts.tolist()} "
                    f"gain={w.gain:.4f}±{w.se:.4f} (x{w.gain / uniform:.2f}){extra}"
                )
            print("\n".join(row), f"[{time.time() - t0:.0f} s]", flush=True)


def febsf(repeats: int = REPEATS) -> None:
    """``--febsf``: PLDP-FEBSF (levels 0.1..1.0, eps_p 0.3), its ``"robust"`` (equal influence over the
    report groups, a bound for a share beta of fakes in any split) against the attacker who knows it,
    with the bound it reports at ``beta`` = the fakes' share, and ``"unbiased"`` (AUEM)."""
    data = cells()
    n = int(data.sum())
    target = [D - 1]
    for beta in (0.01, 0.045):
        m = round(beta * n / (1 - beta))
        for idx, (oracle, pure_mech) in enumerate((("krr", KRR(0.55, D)), ("oue", OUE(0.55, D)))):
            proto = FEBSF(LEVELS, 0.3, D, oracle=oracle)
            uniform = expected_gain(pure_mech, target, m, data.sum(axis=0))
            t0 = time.time()
            row = [f"febsf-{oracle} beta={beta} m={m} MGA@0.55={uniform:.4f}"]
            for defence in ("robust", "unbiased"):
                rng = np.random.default_rng([SEED, 3, int(beta * 1000), idx, 1])
                w = worst_case(
                    proto, target, m, data, rng=rng, defence=defence, repeats=repeats, population=n,
                    chunks=10, shadows=2,
                )  # fmt: skip
                found = {a: int(c) for a, c in zip(w.search.atoms, w.search.counts, strict=True) if c}
                extra = ""
                if defence == "robust":
                    r2 = np.random.default_rng([SEED, 4, int(beta * 1000), idx, 1])
                    bound = [
                        float(
                            np.asarray(
                                proto.estimate(
                                    proto.simulate(data, r2)
                                    + proto.tally(split_reports(proto, target, w.search.counts, r2)),
                                    "robust",
                                    beta=beta,
                                ).info["bound"]
                            )[target[0]]
                        )
                        for _ in range(3)
                    ]
                    extra = f" bound(beta={beta})={np.mean(bound):.4f}"
                row.append(f"  {defence}: split={found} gain={w.gain:.4f}±{w.se:.4f} (x{w.gain / uniform:.2f}){extra}")
            print("\n".join(row), f"[{time.time() - t0:.0f} s]", flush=True)


def pure(repeats: int = REPEATS) -> None:
    """``--pure``: the single mechanisms at 0.55 and PBP (published even shares) at β = 1 %: the
    optimal attacker against each defence, and MGA measured alike."""
    from pldp.protocols import PBP

    data = cells()
    counts = data.sum(axis=0)
    n = int(counts.sum())
    m = round(0.01 * n / 0.99)
    target = [D - 1]
    cases = {
        "krr": (KRR(0.55, D), counts, ("norm_sub", "recover")),
        "oue": (OUE(0.55, D), counts, ("norm_sub", "detect", "recover")),
        "pbp-oue": (PBP(LEVELS, np.full(10, 0.1), D, "oue"), data, ("unbiased", "robust", "detect")),
    }
    for idx, (name, (oracle, honest, defences)) in enumerate(cases.items()):
        for j, defence in enumerate(defences):
            rng = np.random.default_rng([SEED, 3, idx, j])
            w = worst_case(oracle, target, m, honest, rng=rng, defence=defence, repeats=repeats, population=n)
            g = [
                gain(
                    oracle,
                    oracle.simulate(honest, rng),
                    oracle.tally(fake_reports(oracle, target, m, rng=rng)),
                    target,
                    defence,
                )
                for _ in range(repeats)
            ]
            print(
                f"{name} {defence}: split={w.search.counts.tolist()} over {w.search.atoms} "
                f"gain={w.gain:.4f}±{w.se:.4f} mga={np.mean(g):.4f}",
                flush=True,
            )


if __name__ == "__main__":
    if "--febsf" in sys.argv:
        febsf(4 if "--quick" in sys.argv else REPEATS)
    elif "--pure" in sys.argv:
        pure()
    else:
        main("--quick" in sys.argv)

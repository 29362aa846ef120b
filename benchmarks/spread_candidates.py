"""Exploration for issue 34 item 3 (not a defence shipped): candidate combinations of RCF's levels
measured against the optimising attacker that knows each (pldp.attacks.optimal).

Run: ``PYTHONPATH=src python benchmarks/spread_candidates.py`` (a few minutes). Setting of
docs/attacks.md's table: RCF-k-RR, ten levels 0.1..1.0 evenly shared (published shares), Zipf(2),
d = 16, n = 10^5, the rarest item, beta = 1 %. Candidates:

* ``robust``: the shipped ``"robust"``;
* ``robust_shares``: ``"robust"`` with the precisions of the *published* level sizes (shares x n)
  instead of the claimed counts;
* ``median``: the weighted median of the level estimates with the published sizes' capped weights;
* ``consistent``: ``"robust"`` when the level counts pass a chi-square test against the published
  shares at 1e-3, else ``trim``;
* ``trim``: the unbiased combination with the published sizes' weights, each level's estimate
  shrunk towards the weighted median of the levels by the share of its count above the
  published share (the excess claims are treated as fakes).

Printed: the optimal attacker's split and gain (fresh tallies), and the MSE over the 16 items
without attack relative to ``"unbiased"``.
"""

from __future__ import annotations

import numpy as np

from pldp.attacks.optimal import worst_case
from pldp.datasets.synthetic import zipf_probabilities
from pldp.estimation.groups import group_estimates
from pldp.estimation.result import Estimate
from pldp.estimation.robust import capped_weights, robust_combine, weighted_median
from pldp.protocols import RCF

LEVELS = np.arange(1, 11) / 10
N, D = 100_000, 16
SHARES = np.full(10, 0.1)


class Candidates(RCF):
    methods = (*RCF.methods, "robust_shares", "median", "trim", "consistent")

    def estimate(self, tally, method="unbiased", **options):  # type: ignore[no-untyped-def, override]
        if method in RCF.methods:
            return super().estimate(tally, method, **options)
        sizes = tally.level_counts.astype(float)
        published = SHARES * sizes.sum()
        est, var = group_estimates(self.mechanisms, tally.tallies)
        support = tuple(np.stack([m.support[i] for m in self.mechanisms]) for i in (0, 1))
        if method == "consistent":
            # level counts against the published shares: chi-square at 1e-3; robust if consistent, trim if not
            from scipy.stats import chi2

            stat = float(np.sum((sizes - published) ** 2 / published))
            if chi2.sf(stat, sizes.size - 1) >= 1e-3:
                return super().estimate(tally, "robust", **options)
            return self.estimate(tally, "trim")
        if method == "robust_shares":
            freq = robust_combine(est, var, published, support).frequencies
        else:
            w = self.weights(published)
            wc = capped_weights(w, 0.5)
            med = weighted_median(est, wc)
            if method == "median":
                freq = med
            else:
                excess = np.clip((sizes - published) / np.maximum(sizes, 1.0), 0.0, 1.0)[:, None]
                freq = np.sum(w * (est - excess * (est - med[None, :])), axis=0)
        return Estimate(freq, np.zeros(self.d), tally.n, method, self.domain, 0, True, {}, False)


def main() -> None:
    proto = Candidates(LEVELS, D)
    p = zipf_probabilities(D)
    data = np.stack([np.round(N // 10 * p).astype(np.int64) for _ in range(10)])
    m = round(0.01 * N / 0.99)
    rng = np.random.default_rng(3409)
    honest = [proto.simulate(data, rng) for _ in range(30)]
    truth = data.sum(axis=0) / data.sum()
    base = np.mean([np.sum((proto.estimate(h, "unbiased").frequencies - truth) ** 2) for h in honest])
    for method in ("unbiased", "robust", "robust_shares", "median", "trim", "consistent"):
        w = worst_case(
            proto,
            [D - 1],
            m,
            data,
            rng=np.random.default_rng(3410),
            defence=method,
            repeats=6,
            population=N,
            chunks=20,
            shadows=3,
        )
        mse = np.mean([np.sum((proto.estimate(h, method).frequencies - truth) ** 2) for h in honest])
        print(
            f"{method}: split={w.search.counts.tolist()} gain={w.gain:.4f}±{w.se:.4f} "
            f"(x{w.gain / 0.2145:.2f} MGA@0.55) MSE/unbiased={mse / base:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

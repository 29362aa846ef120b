"""What an attacker who stays below AUEM's fallback rule gains.

Setting (that of docs/attacks.md): ``n = 10^5`` honest users, Zipf(2) over ``d = 16`` items, levels
0.1..1.0 with uniform shares, :math:`\\varepsilon_p = 0.3`, k-RR or OUE items; the target is the rarest item.
``m = \\beta n / (1 - \\beta)`` fakes send the level report ``level`` as is and an item report
supporting the target alone (k-RR: the target; OUE: its bit only). For every claimed level and
:math:`\\beta`, ``repeats`` tallies are drawn by :func:`~pldp.protocols.febsf.auem.simulate_statistics`
(the exact law of AUEM's statistics) and the rule of :func:`~pldp.protocols.febsf.auem.auem_trouble`
is applied; the gain is the mean of AUEM's target estimate minus the target's frequency over the
tallies that do **not** fall back (what the attacker gets when he is not caught).

The attacker below the trigger picks the (level, :math:`\\beta`) with the largest gain among those
caught in at most ``caught`` of the tallies; the amplification is his gain per unit of
:math:`\\beta` over that of MGA against the uniform mechanism of the same oracle at the mean budget 0.55
(``docs/attacks.md``: 0.2145 for k-RR, 0.0473 for OUE at 1 %).

Run: ``python -m pldp.experiments.febsf.below_trigger [repeats]``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from pldp.datasets.synthetic import zipf_probabilities
from pldp.protocols import FEBSF
from pldp.protocols.febsf.auem import simulate_statistics, trouble_codes

__all__ = ["MGA_PER_BETA", "below_trigger", "main", "worst"]

#: MGA's gain on the rarest of 16 Zipf(2) items against the uniform k-RR / OUE at 0.55, per unit of beta.
MGA_PER_BETA = {"krr": 21.45, "oue": 4.73}
SHARES = (0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03)
LEVELS = (0, 1, 2, 4, 9)


def below_trigger(
    oracle: str,
    repeats: int = 200,
    n: int = 100_000,
    d: int = 16,
    levels: tuple[int, ...] = LEVELS,
    shares: tuple[float, ...] = SHARES,
    seed: int = 34,
) -> list[dict[str, Any]]:
    """One row per (claimed level, beta): ``caught`` (share of tallies that fall back) and ``gain``
    (mean over the others; NaN when all fall back)."""
    proto = FEBSF(np.round(np.arange(1, 11) / 10, 1), 0.3, d, oracle=oracle)  # type: ignore[arg-type]
    p = zipf_probabilities(d, 2.0)
    target = d - 1
    rng = np.random.default_rng(seed)
    rows = []
    for lv in levels:
        for beta in shares:
            m = round(beta / (1 - beta) * n)
            cells = rng.multinomial(n, np.outer(np.full(10, 0.1), p).ravel()).reshape(10, d)
            level, support = simulate_statistics(proto, cells, rng, repeats)
            level[:, lv] += m
            support[:, target] += m
            code, f = trouble_codes(proto, level, support)[:2]
            ok = code == 0
            gain = float(np.mean(f[ok, target] - p[target])) if ok.any() else float("nan")
            rows.append({"oracle": oracle, "level": lv, "beta": beta, "caught": float(np.mean(~ok)), "gain": gain})
    return rows


def worst(rows: list[dict[str, Any]], caught: float = 0.05) -> dict[str, Any]:
    """The row of the largest gain per unit of beta among those caught at most ``caught`` of the time,
    with its amplification ``x`` over the uniform comparator."""
    ok = [r for r in rows if r["caught"] <= caught and np.isfinite(r["gain"])]
    w = max(ok, key=lambda r: r["gain"] / r["beta"])
    return {**w, "x": w["gain"] / w["beta"] / MGA_PER_BETA[w["oracle"]]}


def main(argv: list[str] | None = None) -> None:
    """Print the table and the worst case below the trigger per oracle."""
    args = sys.argv[1:] if argv is None else argv
    repeats = int(args[0]) if args else 200
    for oracle in ("krr", "oue"):
        rows = below_trigger(oracle, repeats)
        for r in rows:
            print(
                f"{oracle} level {r['level']} beta {r['beta']:.4f}: caught {r['caught']:.3f} gain {r['gain']:.3f} "
                f"(x{r['gain'] / r['beta'] / MGA_PER_BETA[oracle]:.2f})"
            )
        for c in (0.01, 0.05, 0.2):
            w = worst(rows, c)
            print(
                f"{oracle}: worst caught <= {c:.0%}: level {w['level']} beta {w['beta']:.4f} gain {w['gain']:.3f} "
                f"caught {w['caught']:.3f}, x{w['x']:.2f} MGA against the uniform {oracle} at 0.55"
            )


if __name__ == "__main__":
    main()

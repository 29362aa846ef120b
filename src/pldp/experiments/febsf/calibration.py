"""AUEM's fallback rule and intervals on honest tallies, in every PLDP-FEBSF setting of the docs and
of the reproduction.

The settings (:func:`settings`): the docs' and the attack experiment's levels 0.1..1.0 with
:math:`\\varepsilon_p = 0.3`, k-RR and OUE items, Zipf(2) over 16 and 42 items and Zipf(1) over 100,
n = 10^4 and 10^5 (and 10^6 for k-RR); the reproduction's basic RAPPOR on Job, Education and Country
with ten levels at every :math:`\\varepsilon_p` of Fig. 2 (uniform shares) and at 0.3 with power-law
shares, and two levels {0.1, 0.2} at :math:`\\varepsilon_p = 0.1` (Fig. 5-6). Honest tallies are drawn
by :func:`~pldp.protocols.febsf.auem.simulate_statistics` (the exact law of AUEM's statistics, all
repeats at once, from a seed derived from the setting's name).

Run: ``python -m pldp.experiments.febsf.calibration [repeats]`` (4,000 by default, about a minute):
per setting, the share of tallies that fall back by the gap rule and by the range rule, and the
coverage of AUEM's 95 % intervals pooled over items (its lowest item's too).
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Iterator

import numpy as np

from pldp.datasets.synthetic import zipf_probabilities
from pldp.experiments.febsf.runs import dataset_counts, level_shares, levels_for
from pldp.experiments.febsf.specs import EPS_P
from pldp.protocols import FEBSF
from pldp.protocols.febsf.auem import simulate_statistics, trouble_codes

__all__ = ["draw", "main", "settings"]

LEVELS10 = np.round(np.arange(1, 11) / 10, 1)


def settings() -> Iterator[tuple[str, FEBSF, np.ndarray]]:
    """``(name, protocol, cells)`` of every setting; ``cells[level, item]`` are the true counts."""
    for oracle in ("krr", "oue"):
        for d, a in ((16, 2.0), (42, 2.0), (100, 1.0)):
            for n in (10**4, 10**5, 10**6):
                if oracle == "oue" and n == 10**6:
                    continue
                cells = np.round(np.outer(np.full(10, 0.1), zipf_probabilities(d, a)) * n).astype(np.int64)
                yield f"{oracle} d={d} zipf({a:g}) n={n}", FEBSF(LEVELS10, 0.3, d, oracle=oracle), cells
    for ds in ("job", "education", "country"):
        counts = dataset_counts(ds)
        for rho, eps in [("uniform", e) for e in EPS_P] + [("power-law", 0.3)]:
            cells = np.round(np.outer(level_shares(10, rho), counts)).astype(np.int64)
            yield f"rappor {ds} {rho} t=10 eps_p={eps:g}", FEBSF(levels_for(10), eps, counts.size, "rappor"), cells
        cells = np.round(np.outer(level_shares(2, "uniform"), counts)).astype(np.int64)
        yield f"rappor {ds} t=2 eps_p=0.1", FEBSF(levels_for(2), 0.1, counts.size, "rappor"), cells


def draw(name: str, proto: FEBSF, cells: np.ndarray, repeats: int) -> tuple[np.ndarray, ...]:
    """:func:`~pldp.protocols.febsf.auem.trouble_codes` of ``repeats`` honest tallies of a setting."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # a stable seed per setting
    return trouble_codes(proto, *simulate_statistics(proto, cells, rng, repeats))


def main(argv: list[str] | None = None) -> None:
    """Print, per setting, the fallback rates (gap rule, range rule) and the intervals' coverage."""
    args = sys.argv[1:] if argv is None else argv
    repeats = int(args[0]) if args else 4000
    for name, proto, cells in settings():
        code, f, var = draw(name, proto, cells, repeats)[:3]
        truth = cells.sum(axis=0) / cells.sum()
        ok = code == 0
        cover = np.mean(np.abs(f[ok] - truth) <= 1.959964 * np.sqrt(var[ok]), axis=0)
        print(
            f"{name:42s} fallback: gap {np.mean(code == 1):.4f} range {np.mean(code == 2):.4f} | "
            f"coverage {cover.mean():.3f} (lowest item {cover.min():.3f})",
            flush=True,
        )


if __name__ == "__main__":
    main()

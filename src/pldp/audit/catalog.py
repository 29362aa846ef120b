"""Every mechanism and protocol in a standard configuration, audited: ``make audit`` → ``docs/audit.md``.

``python -m pldp.audit.catalog [--trials N] [--out docs/audit.md]`` audits each entry of
:func:`catalog` (every class of the registry, :data:`pldp.registry.ENTRIES`, in the
configurations of :func:`configurations`) with the optimal attack on its default pairs, runs LDP-Auditor's two findings
(GRR tight; their unary attack recovering about half of RAPPOR's epsilon, the optimal test all of
it), and writes a Markdown page with a summary table, the PLDP-FEBSF level rows and a figure of
audited against claimed epsilon (``audit.svg`` beside the page).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

from pldp.registry import ENTRIES

__all__ = ["catalog", "configurations", "main", "not_audited", "write_page"]

IDUE_MODELS: tuple[Literal["opt0", "opt1", "opt2"], ...] = ("opt0", "opt1", "opt2")
#: The memoized chains of one budget eps_1 per report and eps_perm over any number of reports.
CHAINS = ("LGRR", "LOUE", "LOSUE", "LSUE", "LSOUE")


def _one_budget(cls: Any) -> Callable[[], Any]:
    """The standard configuration of a mechanism of one budget over ``d`` items: epsilon 1, 10 items."""
    return partial(cls, 1.0, 10)


def configurations() -> dict[str, dict[str, Callable[[], Any]]]:
    """Class name → (row name → constructor) of the configurations the audit runs of each class: a
    mechanism of one budget over ``d`` items (:attr:`pldp.registry.Entry.one_budget`) at epsilon 1
    over 10 items, the others as written here."""
    import pldp
    from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF, LLevels, PaddingSampling

    fig1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])  # Li et al., Fig. 1
    b5 = pldp.ItemBudgets.from_array([0.5, 0.5, 1.0, 2.0, 2.0])
    b5_perm = pldp.ItemBudgets.from_array(2 * b5.epsilons)
    paper = np.arange(1, 11) / 10  # PLDP-FEBSF's levels (ERRATA FEBSF-6)
    return {
        **{e.name: {e.name: _one_budget(e.load())} for e in ENTRIES if e.one_budget},
        "URR": {"URR": lambda: pldp.URR(1.0, fig1.sensitive)},
        "IPRR": {"IPRR": lambda: pldp.IPRR(fig1)},
        "URAP": {"URAP": lambda: pldp.URAP(1.0, fig1.sensitive)},
        "IDUE": {
            f"IDUE {m} {r}": partial(pldp.IDUE, b5, model=m, pair_rule=r) for m in IDUE_MODELS for r in ("min", "avg")
        },
        # eps_perm twice eps_1: one report of the chain is audited against eps_1
        **{name: {name: partial(getattr(pldp, name), 2.0, 1.0, 10)} for name in CHAINS},
        "LIPRR": {"LIPRR": lambda: pldp.LIPRR(pldp.ItemBudgets.from_array(2 * fig1.epsilons), fig1)},
        "LIDUE": {"LIDUE": lambda: pldp.LIDUE(b5_perm, b5)},
        "PaddingSampling": {
            "OUE-PS": lambda: PaddingSampling(pldp.OUE(1.0, 5), 2),
            "IDUE-PS": lambda: PaddingSampling(pldp.IDUE(b5, model="opt2", same_level="always"), 2),
        },
        "FEBSF": {
            "PLDP-FEBSF k-RR": lambda: FEBSF(paper, 0.3, 16, "krr"),
            "PLDP-FEBSF OUE": lambda: FEBSF(paper, 0.3, 16, "oue"),
            "PLDP-FEBSF RAPPOR": lambda: FEBSF([0.5, 1.0, 2.0], 0.5, 6, "rappor"),
        },
        "RCF": {"RCF": lambda: RCF([0.5, 1.0, 2.0], 6)},
        "APLDP": {"APLDP": lambda: APLDP([0.5, 4.0], 16)},
        "PBP": {"PBP": lambda: PBP([0.5, 1.0, 2.0], [0.3, 0.3, 0.4], 6)},
        "PPDA": {"PPDA": lambda: PPDA([0.5, 1.0, 2.0], 6)},
        "MPLDP": {"MPLDP": lambda: MPLDP([3, 4], [1.0, 2.0])},
        "LLevels": {
            f"LLevels {chain}": partial(LLevels, [1.0, 2.0, 4.0], [0.5, 1.0, 2.0], 6, chain=chain)
            for chain in ("lgrr", "losue")
        },
    }


def not_audited() -> dict[str, str]:
    """Class name → why the catalog has no row of it: the registry's generic cores."""
    return {e.name: "a shared core: audited through the named mechanisms built on it" for e in ENTRIES if e.generic}


def catalog() -> dict[str, Callable[[], Any]]:
    """Row name → constructor of every mechanism and protocol of the registry (:data:`pldp.registry.ENTRIES`)
    in a standard configuration, in the registry's order.

    Raises
    ------
    LookupError
        A registry entry with neither configurations nor a reason it has none.
    """
    configs, skipped = configurations(), not_audited()
    missing = [e.name for e in ENTRIES if e.name not in configs and e.name not in skipped]
    if missing:
        raise LookupError(f"the audit catalog has no configuration of {', '.join(missing)}")
    return {row: make for e in ENTRIES for row, make in configs.get(e.name, {}).items()}


def _finite_max(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return max(finite) if finite else math.nan


def _f(v: float) -> str:
    return "inf" if v == math.inf else ("–" if math.isnan(v) else f"{v:.3f}")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_page(results: dict[str, Any], auditor: list[dict[str, Any]], trials: int, out: Path) -> None:
    """Write ``out`` (Markdown) and the figure ``out.with_suffix('.svg')``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    svg = out.with_suffix(".svg")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    rows = [(name, r) for name, res in results.items() for r in res.rows]
    for ax, secret_set, title in (
        (axes[0], ("item", "item-set"), "items and item-sets: every pair of every mechanism and protocol"),
        (axes[1], ("level",), "budget levels (PLDP-FEBSF against ε_p; PBP, PPDA against the truth)"),
    ):
        pts = [(n, r) for n, r in rows if r.secret in secret_set and math.isfinite(r.claimed)]
        top = max([r.claimed for _, r in pts] + [r.audited for _, r in pts] + [1.0]) * 1.05
        ax.plot([0, top], [0, top], color="0.6", ls="--", lw=1, label="audited = claimed")
        ok = [r for _, r in pts if not r.flagged]
        bad = [r for _, r in pts if r.flagged]
        ax.scatter([r.claimed for r in ok], [r.audited for r in ok], s=10, color="C0", label="audited, within claim")
        if bad:
            claimed, audited = [r.claimed for r in bad], [r.audited for r in bad]
            ax.scatter(claimed, audited, s=14, color="C3", label="audited, ABOVE claim")
        ax.set_xlabel("claimed ε of the pair")
        ax.set_ylabel("audited ε (lower bound, 99 % joint confidence)")
        ax.set_title(title, fontsize=8)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(svg)
    plt.close(fig)

    lines = [
        "# Empirical privacy audit of every mechanism and protocol",
        "",
        f"Written by `make audit` (`python -m pldp.audit.catalog --trials {trials}`) at commit `{_commit()}`: "
        f"{trials:,} reports per input, the optimal attack of each pair (`pldp.audit`), bounds holding jointly "
        "for all pairs of a target with confidence 0.99. *claimed*: the largest claim of the target's pairs; "
        "*exact*: the largest realised epsilon of its exact channel; *audited*: the largest audited lower "
        "bound; *gap*: the largest distance between a pair's audited bound and the limit of its test; "
        "*flagged*: pairs audited above their claim; *above exact*: pairs audited above the exact channel "
        "(a sampler that does not follow its parameters). See the [user guide](auditing.md) for the method.",
        "",
        "| target | pairs | invertible | claimed | exact | audited | gap | flagged | above exact | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, res in results.items():
        claimed = [r for r in res.rows if math.isfinite(r.claimed)]
        lines.append(
            f"| {name} | {len(res.rows)} | {len(res.rows) - len(claimed)} | "
            f"{_f(_finite_max([r.claimed for r in claimed]))} | {_f(_finite_max([r.exact for r in claimed]))} | "
            f"{_f(_finite_max([r.audited for r in claimed]))} | {_f(res.max_gap())} | {len(res.flagged)} | "
            f"{len(res.deviations)} | {res.seconds:.1f} |"
        )
    lines += [
        "",
        "*invertible*: pairs whose test is an output the notion lets through in the clear (IPRR's and URR's "
        "non-sensitive items, claim and exact epsilon infinite); their audited bounds are large and finite, and "
        "not a violation, so the maxima above leave them out.",
        "",
        f"![audited against claimed epsilon]({svg.name})",
        "",
        "## PLDP-FEBSF's budget level (ERRATA FEBSF-6)",
        "",
        "The paper claims the level is protected at ε_p by the level report. The audit treats the level as a "
        "secret of its own and tests the *whole* report (item report and level report). The rows of the "
        "largest audited bound:",
        "",
        "| protocol | pair (item@level) | claimed (ε_p) | exact | audited |",
        "|---|---|---:|---:|---:|",
    ]
    for name, res in results.items():
        level = sorted((r for r in res.rows if r.secret == "level"), key=lambda r: -r.audited)[:3]
        for r in level:
            lines.append(f"| {name} | {r.pair} | {_f(r.claimed)} | {_f(r.exact)} | {_f(r.audited)} |")
    lines += [
        "",
        "`FEBSF.privacy().level` states the same exactly (worst case, and the Bayes guess of the level). "
        "PBP and PPDA claim nothing about the level; their rows are audited against its exact protection.",
        "",
        "## LDP-Auditor's findings on pldp's samplers",
        "",
        "Arcolezi & Gambs (PETS 2024) found that GRR audits tight and that their unary attack recovers only "
        "about half of basic RAPPOR's epsilon. One pair, the same trials, α = 0.01:",
        "",
        "| mechanism | ε | attack | audited | limit of the attack |",
        "|---|---:|---|---:|---:|",
    ]
    lines += [
        f"| {a['mechanism']} | {a['eps']:g} | {a['attack']} | {a['audited']:.3f} | {a['limit']:.3f} |" for a in auditor
    ]
    out.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Audit the catalog and write the page."""
    import pldp
    from pldp.audit.run import audit

    parser = argparse.ArgumentParser(prog="python -m pldp.audit.catalog", description=__doc__)
    parser.add_argument("--trials", type=int, default=10**6)
    parser.add_argument("--out", default="docs/audit.md")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=None, help="local Dask workers (default: this process)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    results = {}
    for name, make in catalog().items():
        start = time.perf_counter()
        results[name] = audit(make(), trials=args.trials, rng=rng, workers=args.workers)
        res = results[name]
        print(f"{name:20s} {len(res.rows):4d} pairs, {len(res.flagged):3d} flagged, "
              f"{len(res.deviations)} above exact, {time.perf_counter() - start:6.1f} s", flush=True)  # fmt: skip
    auditor = []
    for mech in [*(pldp.KRR(e, 10) for e in (0.5, 1.0, 2.0, 4.0)), *(pldp.RAPPOR(e, 10) for e in (1.0, 2.0, 4.0))]:
        for attack in ("ldp-auditor", "optimal"):
            r = audit(mech, pairs=[(0, 1)], trials=args.trials, attack=attack, rng=rng).rows[0]
            auditor.append({"mechanism": repr(mech), "eps": mech.budgets.epsilons[0], "attack": attack,
                            "audited": r.audited, "limit": r.limit})  # fmt: skip
    write_page(results, auditor, args.trials, Path(args.out))
    print(f"wrote {args.out} and {Path(args.out).with_suffix('.svg')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

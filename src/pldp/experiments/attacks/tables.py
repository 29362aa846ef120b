"""The attack experiments' tables, written as Markdown next to their figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pldp.attacks import expected_gain
from pldp.experiments.attacks.catalog import MEAN_BUDGET, PROTOCOLS, build, honest_counts
from pldp.experiments.attacks.checks import gain_summary
from pldp.experiments.attacks.runs import fakes_for

__all__ = ["REFERENCE_NUMBERS", "cao_table", "markdown", "moves_table", "personalized_table", "uniform_gain"]

#: The reference measurements of the best moves (the unbiased estimators, 20 repeats, their own seeds).
REFERENCE_NUMBERS: dict[tuple[str, float, str, float], str] = {
    ("krr", 1.0, "mga", 0.01): "0.097",
    ("oue", 1.0, "mga", 0.01): "0.032",
    ("iprr", 0.55, "sensitive", 0.01): "0.439 (x2.05)",
    ("idue", 0.55, "sensitive", 0.01): "0.255 (x5.4)",
    ("febsf-oue", 0.55, "max_level", 0.01): "0.214 (x4.5)",
    ("rcf-krr", 0.55, "max_level", 0.01): "0.300 (x1.4)",
    ("febsf-krr", 0.55, "min_level", 0.03): "2.5",
    ("febsf-krr", 0.55, "min_level", 0.04): "53",
    ("febsf-krr", 0.55, "min_level", 0.045): "raises in 20 of 20 (4.5-5 %)",
    ("febsf-krr", 0.55, "min_level", 0.05): "raises in 20 of 20 (4.5-5 %)",
}


def markdown(rows: list[list[str]], head: list[str]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def _write(directory: Path, name: str, text: str) -> list[Path]:
    """``text`` written to ``directory / name`` (the directory made if needed); the path, in a list."""
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return [path]


def _cell(mean: float, se: float, failed: int, repeats: int) -> str:
    if failed >= repeats:
        return f"fails {failed}/{repeats}"
    text = f"{mean:.4f} ± {se:.4f}" if np.isfinite(mean) else "-"
    return text + (f" (fails {failed}/{repeats})" if failed else "")


def uniform_gain(protocol: str, setting: Any) -> float:
    """The expected MGA gain (closed form) of the uniform mechanism ``protocol`` is compared with, at
    the mean budget, for the setting's honest users, targets and ``beta``."""
    d, n, r = int(setting["d"]), int(setting["n"]), int(setting["r"])
    uniform = build(PROTOCOLS[protocol][1], d, MEAN_BUDGET)
    counts = honest_counts(n, d, float(setting["zipf"]))
    value = expected_gain(uniform, np.arange(d - r, d), fakes_for(n, float(setting["beta"])), counts)
    return float("nan") if value is None else value


def _times(mean: float, uniform: float) -> str:
    return f"x{mean / uniform:.2f}" if np.isfinite(mean) and np.isfinite(uniform) and uniform else "-"


def cao_table(table: Any, directory: Path) -> list[Path]:
    """``cao_mga.md``: per setting, the closed form (Cao et al.'s theorem) and the measured mean gain
    of k-RR and OUE, with the measured one's distance from it in standard errors."""
    s = gain_summary(table)
    rows = []
    for (eps, beta, r), part in s.groupby(["eps", "beta", "r"], sort=True):
        cells = [f"{eps:g}", f"{beta:g}", str(int(r))]
        for protocol in ("krr", "oue"):
            row = part[part["protocol"] == protocol]
            if not len(row):
                cells += ["", "", ""]
                continue
            x = row.iloc[0]
            z = abs(x["excess"]) / x["excess_se"] if x["excess_se"] > 0 else 0.0
            cells += [f"{x['expected']:.5f}", f"{x['mean']:.5f} ± {x['se']:.5f}", f"{z:.1f}"]
        rows.append(cells)
    head = ["eps", "beta", "r", "k-RR closed form", "k-RR measured", "z", "OUE closed form", "OUE measured", "z"]
    return _write(directory, "cao_mga.md", markdown(rows, head))


def moves_table(table: Any, directory: Path) -> list[Path]:
    """``best_moves.md``: our gain per setting of the best moves, next to the reference number."""
    s = gain_summary(table)
    rows = []
    for key, part in s.groupby(["protocol", "eps", "strategy", "beta"], sort=False):
        protocol, eps, strategy, beta = key
        by = {m: r for m, r in part.set_index("method").iterrows()}
        u = by["unbiased"]
        uniform = uniform_gain(protocol, part.iloc[0])
        closed = (
            "-" if not np.isfinite(u["expected"]) else f"{u['expected']:.4f}" + ("" if u["exact"] else " (1st order)")
        )
        other = [
            _cell(r["mean"], r["se"], int(r["failed"]), int(r["repeats"])) for m, r in by.items() if m != "unbiased"
        ]
        rows.append(
            [
                protocol,
                f"{eps:g}",
                strategy,
                f"{beta:g}",
                _cell(u["mean"], u["se"], int(u["failed"]), int(u["repeats"])),
                _times(u["mean"], uniform) if protocol not in ("krr", "oue") else "",
                closed,
                "; ".join(f"{m}: {c}" for m, c in zip([m for m in by if m != "unbiased"], other, strict=True)),
                REFERENCE_NUMBERS.get((protocol, float(eps), strategy, float(beta)), ""),
            ]
        )
    head = [
        "protocol",
        "eps",
        "move",
        "beta",
        "gain (unbiased)",
        "x uniform",
        "closed form",
        "other methods",
        "reference",
    ]
    return _write(directory, "best_moves.md", markdown(rows, head))


def personalized_table(table: Any, directory: Path) -> list[Path]:
    """``personalized.md``: per beta and estimation method, a table of protocols (rows) and
    strategies (columns): the mean gain of the targets, and for the unbiased estimate its ratio to
    the uniform mechanism's at the mean budget (``xN``; ``fails k/R``: the method refused ``k`` of
    ``R`` repeats)."""
    from pldp.attacks import STRATEGIES

    s = gain_summary(table)
    methods = [m for m in ("unbiased", "norm_sub", "mle", "robust") if m in set(s["method"])]
    strategies = [x for x in STRATEGIES if x in set(s["strategy"])]
    parts = []
    for beta, sb in s.groupby("beta", sort=True):
        for method in methods:
            sm = sb[sb["method"] == method]
            rows = []
            for protocol, part in sm.groupby("protocol", sort=False):
                by = {r["strategy"]: r for _, r in part.iterrows()}
                uniform = uniform_gain(str(protocol), part.iloc[0]) if method == "unbiased" else float("nan")
                cells = []
                for x in strategies:
                    if x not in by:
                        cells.append("")
                        continue
                    r = by[x]
                    cell = _cell(r["mean"], r["se"], int(r["failed"]), int(r["repeats"])).split(" ± ")[0]
                    if method == "unbiased" and protocol not in ("krr", "oue") and "fails" not in cell:
                        cell += f" ({_times(r['mean'], uniform)})"
                    cells.append(cell)
                rows.append([str(protocol), *cells])
            parts.append(f"beta = {beta:g}, {method}\n\n" + markdown(rows, ["protocol", *strategies]))
    return _write(directory, "personalized.md", "\n".join(parts))

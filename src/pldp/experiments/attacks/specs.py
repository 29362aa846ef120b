"""The attack experiments as data: Cao et al.'s MGA table, the best moves, the personalized table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pldp.attacks import STRATEGIES
from pldp.experiments.attacks.catalog import PROTOCOLS
from pldp.experiments.attacks.checks import check_closed_forms, check_reference
from pldp.experiments.attacks.runs import run_repeat
from pldp.experiments.attacks.tables import cao_table, moves_table, personalized_table
from pldp.experiments.plotting import Panel
from pldp.experiments.spec import Experiment

__all__ = ["BETAS", "CAO_EPS", "MOVES", "PERSONALIZED", "experiments", "personalized_settings"]

PAPER = "attacks"
#: Cao et al.'s shares of fake users.
BETAS = (0.001, 0.005, 0.01, 0.05, 0.1)
#: Budgets of the k-RR and OUE grid.
CAO_EPS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: The best moves' setting: 100,000 honest users, Zipf(2) over 16 items, the rarest as target, 1 % fakes;
#: IPRR's and IDUE's budgets 1.0, 0.7, 0.4, 0.1 by frequency rank, 4 items each (mean 0.55).
MOVES: dict[str, Any] = {"n": 100_000, "d": 16, "zipf": 2.0, "r": 1, "item_levels": 4}
#: The personalized table's setting: 10^6 honest users (10^5 for PLDP-FEBSF-OUE, whose tally is
#: per bit pattern), Zipf(1) over 100 items, the rarest as target.
PERSONALIZED: dict[str, Any] = {"n": 1_000_000, "d": 100, "zipf": 1.0, "r": 1}
#: Protocols of the personalized table whose honest tally is drawn per user (and so at 10^5 users).
PER_USER = {"febsf-oue": 100_000}


def _cao_settings(d: int, n: int) -> list[dict[str, Any]]:
    grid = [(1.0, b, 1) for b in BETAS] + [(e, 0.05, 1) for e in CAO_EPS] + [(1.0, 0.05, r) for r in (5, 10)]
    unique = list(dict.fromkeys(grid))
    return [
        {"protocol": p, "eps": e, "beta": b, "r": r, "d": d, "n": n, "zipf": 1.0, "strategies": ["mga"],
         "methods": ["unbiased"]}
        for p in ("krr", "oue")
        for e, b, r in unique
    ]  # fmt: skip


def label_closed_form(rows: Any) -> Any:
    """Rows of the Cao panels, one line per mechanism for the measured gain and for its closed form."""
    import pandas as pd

    measured = rows.assign(line=rows["protocol"].str.upper() + " measured", value=rows["gain"])
    closed = rows.assign(line=rows["protocol"].str.upper() + " closed form", value=rows["expected"])
    return pd.concat([measured, closed], ignore_index=True)


def _cao_panels() -> tuple[Panel, ...]:
    common = {"y": "value", "hue": "line", "prepare": label_closed_form, "ylabel": "gain of the target"}
    return (
        Panel("cao_beta", "beta", title="MGA gain vs beta (eps 1, d 100, r 1)", xlabel="beta", logx=True,
              where={"eps": 1.0, "r": 1}, **common),  # type: ignore[arg-type]
        Panel("cao_eps", "eps", title="MGA gain vs eps (beta 0.05, d 100, r 1)", xlabel="epsilon",
              where={"beta": 0.05, "r": 1}, **common),  # type: ignore[arg-type]
        Panel("cao_r", "r", title="MGA gain vs targets (eps 1, beta 0.05, d 100)", xlabel="r", logy=False,
              where={"beta": 0.05, "eps": 1.0}, **common),  # type: ignore[arg-type]
    )  # fmt: skip


#: The best moves' rows: (protocol, eps, strategies, beta).
MOVES_ROWS: tuple[tuple[str, float, tuple[str, ...], float], ...] = (
    ("krr", 1.0, ("mga",), 0.01),
    ("oue", 1.0, ("mga",), 0.01),
    ("krr", 0.55, ("mga",), 0.01),
    ("oue", 0.55, ("mga",), 0.01),
    ("iprr", 0.55, ("sensitive",), 0.01),
    ("idue", 0.55, ("sensitive",), 0.01),
    ("febsf-oue", 0.55, ("max_level", "min_level"), 0.01),
    ("rcf-krr", 0.55, ("max_level",), 0.01),
    ("febsf-krr", 0.55, ("min_level",), 0.03),
    ("febsf-krr", 0.55, ("min_level",), 0.04),
    ("febsf-krr", 0.55, ("min_level",), 0.045),
    ("febsf-krr", 0.55, ("min_level",), 0.05),
)


def _moves_settings() -> list[dict[str, Any]]:
    return [
        {"protocol": p, "eps": e, "beta": b, "strategies": list(s), "methods": ["unbiased", "norm_sub"], **MOVES}
        for p, e, s, b in MOVES_ROWS
    ]


def personalized_settings(betas: Sequence[float], protocols: Sequence[str], n: int | None = None) -> list[dict]:
    """The personalized table's settings: per protocol and beta, every strategy that applies (MGA
    alone for k-RR and OUE), unbiased, Norm-Sub and (but for PLDP-FEBSF) the MLE; ``n`` honest users
    (default :data:`PERSONALIZED`'s, or :data:`PER_USER`'s)."""
    out = []
    for p in protocols:
        size = n or PER_USER.get(p, int(PERSONALIZED["n"]))
        methods = ["unbiased", "norm_sub"] if p.startswith("febsf") else ["unbiased", "norm_sub", "mle"]
        for b in betas:
            strategies = ["mga"] if p in ("krr", "oue") else list(STRATEGIES)
            out.append({**PERSONALIZED, "n": size, "protocol": p, "beta": b, "strategies": strategies,
                        "methods": methods})  # fmt: skip
    return out


def _personalized_panels(protocols: Sequence[str]) -> tuple[Panel, ...]:
    return tuple(
        Panel(f"personalized_{p.replace('-', '_')}", "beta", "gain", f"{p}: gain of the rarest item (unbiased)",
              xlabel="beta", ylabel="gain", hue="strategy", where={"protocol": p, "method": "unbiased"},
              logx=True, logy=False)
        for p in protocols
    )  # fmt: skip


def experiments() -> list[Experiment]:
    """The attack experiments (``pldp reproduce attacks``)."""
    protocols = list(PROTOCOLS)
    quick_protocols = ["oue", "idue", "febsf-krr", "rcf-krr", "pbp-krr", "mpldp"]
    return [
        Experiment(
            PAPER,
            "cao_mga",
            "Cao et al.'s maximal gain attack on k-RR and OUE: gain vs beta, epsilon and targets",
            "MGA's expected gain is beta(1 - f_T) + beta(d - r)/(e^eps - 1) for k-RR and "
            "beta(2 r e^eps/(e^eps - 1) - f_T) for OUE (Cao, Jia, Gong, USENIX Security 2021, Theorems "
            "for k-RR and OUE; beta = m/(n+m))",
            _cao_settings(100, 1_000_000),
            run_repeat,
            20,
            quick_settings=_cao_settings(100, 100_000)[::3],
            quick_repeats=5,
            panels=_cao_panels(),
            plot=cao_table,
            check=check_closed_forms,
            notes="n = 10^6 honest users, Zipf(1) over d = 100 items (IPUMS-sized), the r rarest items as "
            "targets; honest users at count level, fakes report by report; the closed forms are the "
            "theorems' (pldp.robustness.krr_mga_gain, oue_mga_gain) evaluated at the coins that run.",
            quick_decides=False,
            full_verdict="agrees",
            full_ours="22 settings, every mean gain within 2.66 standard errors of its closed form (bound 4.08)",
        ),
        Experiment(
            PAPER,
            "best_moves",
            "Fake users' best moves against personalized LDP, next to reference measurements",
            "(reference measurements: the unbiased estimators, 20 repeats with their own seeds) 1 % fake "
            "users gain 0.097 / 0.032 (KRR / OUE at eps 1), x2.05 under IPRR, x5.4 under IDUE, x4.5 under "
            "PLDP-FEBSF-OUE claiming the largest level, x1.4 under RCF-KRR; PLDP-FEBSF-KRR's AUEM explodes "
            "and then refuses at 4.5-5 % claims of the smallest level",
            _moves_settings(),
            run_repeat,
            20,
            quick_repeats=3,
            plot=moves_table,
            check=check_reference,
            full_ours="KRR 0.0973, OUE 0.0316, IPRR 0.4393, IDUE 0.2552, RCF-KRR 0.3001, FEBSF-OUE 0.2234 "
            "(reference: 0.097, 0.032, 0.439, 0.255, 0.300, 0.214)",
            notes="n = 100,000 honest users, Zipf(2) over 16 items, the rarest as target; IPRR's and IDUE's "
            "budgets 1.0, 0.7, 0.4, 0.1 by frequency rank (4 items each), the levels 0.1, ..., 1.0 of the "
            "user-level protocols (uniform shares, eps_p = 0.3): every mean budget is 0.55; beta = m/(n+m).",
            quick_decides=False,
            full_verdict="agrees",
        ),
        Experiment(
            PAPER,
            "personalized",
            "Every strategy against every personalized protocol, against the uniform mechanism at the same mean budget",
            "(no paper: the first table of these attacks on personalized LDP) The closed forms of "
            "pldp.attacks.expected_gain give the mean gain of every setting where they are exact",
            personalized_settings((0.001, 0.01, 0.05), protocols),
            run_repeat,
            20,
            quick_settings=personalized_settings((0.01,), quick_protocols, n=20_000),
            quick_repeats=3,
            panels=_personalized_panels(protocols),
            plot=personalized_table,
            check=check_closed_forms,
            quick_decides=False,
            full_verdict="agrees",
            full_ours="117 settings, every mean gain within 2.80 standard errors of its closed form (bound 4.45)",
            notes="n = 10^6 honest users (PLDP-FEBSF-OUE 10^5), Zipf(1) over d = 100 items, the rarest "
            "as target; every personalized oracle has mean budget 0.55 (catalog).",
        ),
    ]

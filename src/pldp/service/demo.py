"""The collection demo of ``make demo`` (``pldp demo-collection``): a campaign end to end over HTTP.

It starts a collector (``pldp serve``) on a temporary database, creates an IPRR campaign with the
Fig. 1 budgets of Li et al., makes an analyst token, sends ``n`` simulated respondents' reports
over HTTP in batches (the Python client randomizes each answer with the OS CSPRNG), reads the
estimate with confidence intervals from the API, prints it next to the truth, and shuts the
collector down. The respondents' answers never reach the collector; only their reports do.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from pldp.client import Client
from pldp.datasets.synthetic import zipf_items
from pldp.demo import FIG1_LABELS, fig1_budgets
from pldp.deploy import Spec
from pldp.mechanisms.direct import IPRR
from pldp.service.process import CollectorProcess

__all__ = ["run_collection_demo"]


def run_collection_demo(n: int = 100_000, batch: int = 1_000, seed: int = 2024, level: float = 0.95) -> str:
    """Run the demo and return its report as text (see module doc).

    Parameters
    ----------
    n : int
        Respondents.
    batch : int
        Reports per HTTP request.
    seed : int
        Seed of the respondents' answers (their randomization uses the OS CSPRNG).
    level : float
        Confidence level of the intervals.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    answers = 4 - zipf_items(n, 5, rng)  # the rarer the item, the more sensitive (as in pldp demo)
    truth = np.bincount(answers, minlength=5) / n
    spec = Spec.from_mechanism(IPRR(fig1_budgets()), question="Which condition do you have?")
    lines = ["pldp demo-collection: an IPRR campaign (Li et al., Fig. 1 budgets) through a real collector"]
    with tempfile.TemporaryDirectory(prefix="pldp-demo-") as tmp:
        # every simulated respondent sends from this machine's one address: no per-address rate limit
        with CollectorProcess(Path(tmp) / "collector.db", "--rate", "0") as server:
            admin = server.admin()
            created = admin.create_campaign(spec)
            analyst = server.client(admin.create_token("demo analyst", [spec.id])["token"])
            lines.append(f"collector {server.url}, campaign {created['id']} ({created['kind']})")
            respondents = server.client()
            client = Client(spec)  # one device per respondent in real life; the same code
            t_send = time.perf_counter()
            labels = np.array(FIG1_LABELS)
            for start in range(0, n, batch):
                out = respondents.submit(spec.id, client.reports(labels[answers[start : start + batch]]))
                assert out["duplicates"] == 0
            sent = time.perf_counter() - t_send
            lines.append(f"{n:,} reports sent in {n // batch} requests of {batch:,}: {sent:.2f} s ({n / sent:,.0f}/s)")
            result = {m: analyst.estimate(spec.id, m, level) for m in ("unbiased", "norm_sub")}
            respondents.close()
            admin.close()
            analyst.close()
    lines.append(f"\nestimates with {level:.0%} intervals (n = {result['unbiased']['n']:,}) next to the truth:")
    head = ("answer", "budget", "truth", "unbiased [interval]", "Norm-Sub [interval]")
    lines.append(f"  {head[0]:<10} {head[1]:>6} {head[2]:>7}   {head[3]:>26}   {head[4]:>26}")
    eps = fig1_budgets().epsilons
    inside = 0
    for i, lab in enumerate(FIG1_LABELS):
        cells = []
        for m in ("unbiased", "norm_sub"):
            part = result[m]["attributes"][0]
            f, lo, hi = part["frequencies"][i], part["ci_low"][i], part["ci_high"][i]
            cells.append(f"{f:8.4f} [{lo:7.4f}, {hi:7.4f}]")
            inside += m == "unbiased" and lo <= truth[i] <= hi
        budget = "inf" if not np.isfinite(eps[i]) else f"{eps[i]:g}"
        lines.append(f"  {lab:<10} {budget:>6} {truth[i]:7.4f}   {cells[0]:>26}   {cells[1]:>26}")
    lines.append(f"\n{inside} of 5 unbiased intervals contain the truth; collector stopped, database removed.")
    lines.append(f"done in {time.perf_counter() - t0:.2f} s")
    return "\n".join(lines)

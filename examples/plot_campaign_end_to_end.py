"""
A campaign end to end through a local collector
===============================================

The other examples simulate tallies. This one runs the deployment path: a campaign **spec**
(the mechanism, the question and the answers, with a verified privacy claim), a real
**collector** (``pldp serve``, FastAPI on one SQLite file) started on ``127.0.0.1`` in a
temporary directory, respondents' **clients** that randomize their answers on the device and
post the reports over HTTP, and an analyst who reads the **estimate** with confidence intervals
from the collector's API. The answers never reach the collector, only the reports do.

The campaign asks the question of Fig. 1 of Li et al. with IPRR and the figure's budgets
(HIV 0.1, Cancer 0.5, Hepatitis 1.0; Flu and None not sensitive), like ``pldp demo-collection``.
"""

# %%
# Setup
# -----
# Everything runs on the loopback interface; nothing leaves the machine.
import os
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm

import pldp
from pldp.client import Client
from pldp.datasets import zipf_items
from pldp.demo import FIG1_LABELS, fig1_budgets
from pldp.deploy import Spec
from pldp.service.process import CollectorProcess

QUICK = os.environ.get("PLDP_DOCS_QUICK") == "1"
N_RESPONDENTS = 5_000 if QUICK else 20_000
BATCH = 500 if QUICK else 1_000  # reports per HTTP request
LEVEL = 0.95  # confidence level of the intervals
SEED = 2024

# %%
# The spec
# --------
# :meth:`Spec.from_mechanism <pldp.deploy.Spec.from_mechanism>` turns a mechanism into a campaign
# spec. Its id is a hash of its content, and a client refuses a spec whose privacy claim does
# not verify.
mechanism = pldp.IPRR(fig1_budgets())
spec = Spec.from_mechanism(mechanism, question="Which condition do you have?", labels=list(FIG1_LABELS))
print(f"spec {spec.id}: {spec.question!r}, answers {spec.labels}")

# %%
# The respondents
# ---------------
# Their true answers: a seeded Zipf sample in which the rarer an answer, the more sensitive it is.
# Each answer is randomized by :class:`pldp.client.Client` with the operating system's CSPRNG, as
# on a real device, so the reports (and the figure) differ slightly from one build to the next;
# only the answers are seeded.
rng = np.random.default_rng(SEED)
answers = np.array(FIG1_LABELS)[4 - zipf_items(N_RESPONDENTS, 5, rng)]
truth = np.array([np.mean(answers == label) for label in FIG1_LABELS])

# %%
# Collect
# -------
# Start the collector in a child process (:class:`~pldp.service.process.CollectorProcess`, the
# same ``pldp serve`` as in production), publish the campaign with the admin token, make an
# analyst token, send the reports in batches (no token needed) and, after every batch, read the
# running estimate. Every simulated respondent sends from this machine's one address, so the
# collector's limit of reports per client address is off (``--rate 0``; see the threat model). The
# collector is stopped and the directory removed in ``finally``, even if something fails on the way.
workdir = Path(tempfile.mkdtemp(prefix="pldp-gallery-"))
server = CollectorProcess(workdir / "collector.db", "--rate", "0")
history = []  # (reports received, half-widths of the intervals)
try:
    server.start()
    admin = server.admin()
    created = admin.create_campaign(spec)
    analyst = server.client(admin.create_token("gallery analyst", [spec.id])["token"])
    respondents = server.client()  # anyone may post reports
    device = Client(respondents.spec(spec.id))  # the spec as a device reads it, verified
    print(f"collector at {server.url}, campaign {created['id']} ({created['kind']})")
    for start in range(0, N_RESPONDENTS, BATCH):
        batch = device.reports(answers[start : start + BATCH])  # randomized on the device
        ack = respondents.submit(spec.id, batch)  # acknowledged once durably stored
        running = analyst.estimate(spec.id, "unbiased", LEVEL)["attributes"][0]
        history.append((start + ack["accepted"], (np.array(running["ci_high"]) - running["ci_low"]) / 2))
    final = {m: analyst.estimate(spec.id, m, LEVEL) for m in ("unbiased", "norm_sub")}
    for client in (admin, analyst, respondents):
        client.close()
finally:
    server.stop()
    shutil.rmtree(workdir, ignore_errors=True)
print(f"collector stopped; {final['unbiased']['n']:,} reports in the estimate")

# %%
# The estimate with its intervals
# -------------------------------
# The collector serves each answer's frequency with its standard error and interval. The unbiased
# estimate can leave [0, 1]; the Norm-Sub estimate is projected onto the simplex. The grey bars
# are the respondents' true answers, which the collector never saw.
fig, ax = plt.subplots(figsize=(7.0, 4.2))
x = np.arange(len(FIG1_LABELS))
ax.bar(x, truth, color="0.85", label="truth (never sent)")
for k, method in enumerate(("unbiased", "norm_sub")):
    part = final[method]["attributes"][0]
    f = np.array(part["frequencies"])
    err = np.array([f - part["ci_low"], np.array(part["ci_high"]) - f])
    ax.errorbar(x + (k - 0.5) * 0.2, f, yerr=err, fmt="o", capsize=4, label=f"{method}, {LEVEL:.0%} interval")
    inside = np.sum((np.array(part["ci_low"]) <= truth) & (truth <= np.array(part["ci_high"])))
    print(f"{method:<9}", "  ".join(f"{v:.4f}" for v in f), f"({inside} of 5 intervals hold the truth)")
print("truth    ", "  ".join(f"{v:.4f}" for v in truth))
budgets = fig1_budgets().epsilons
ax.set_xticks(x, [f"{lab}\n(ε={e:g})" for lab, e in zip(FIG1_LABELS, budgets, strict=True)])
ax.set_xlabel("answer (budget)")
ax.set_ylabel("frequency")
ax.set_title(f"IPRR campaign through a local collector: {final['unbiased']['n']:,} reports")
ax.legend()
fig.tight_layout()

# %%
# Intervals shrink as reports arrive
# ----------------------------------
# The half-width of each answer's interval after every batch (solid), against what
# :func:`pldp.theory.item_variance` predicts for that many reports (dashed): both fall like
# :math:`1/\sqrt{n}`. The sensitive answers with small budgets stay the least precise. The
# collector's standard errors are evaluated at the estimate, not at the (unknown) truth, so they
# wander around the theory while few reports are in.
received = np.array([h[0] for h in history])
half = np.array([h[1] for h in history])
z = norm.ppf(0.5 + LEVEL / 2)  # the intervals are frequency +- z standard errors
fig, ax = plt.subplots(figsize=(7.0, 4.2))
for i, label in enumerate(FIG1_LABELS):
    ax.plot(received, half[:, i], color=f"C{i}", label=f"{label} (ε={budgets[i]:g})")
    predicted = [z * np.sqrt(pldp.theory.item_variance(mechanism, truth, int(n))[i]) for n in received]
    ax.plot(received, predicted, color=f"C{i}", ls="--")
ax.plot([], [], color="0.4", ls="--", label="theory")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("reports received")
ax.set_ylabel(f"half-width of the {LEVEL:.0%} interval")
ax.set_title("Running estimate: interval half-width vs reports")
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
plt.show()

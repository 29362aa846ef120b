"""
Fake users: Cao et al.'s attack, and what personalized budgets let it do
========================================================================

A collector cannot tell a fake report from a real one. Cao, Jia and Gong (USENIX Security 2021)
showed that a few fake users running the *maximal gain attack* (MGA: report a target item, or set
every target bit) promote chosen items under k-RR and OUE by a predictable amount. This example
checks their closed forms against simulation with :mod:`pldp.attacks`, then shows what a small
budget costs in robustness (:mod:`pldp.robustness`), and what the personalized protocols let a fake
user do (claim the budget level that its report is most amplified at).

Honest users are simulated at count level (``oracle.simulate``), the fakes report by report
(:func:`pldp.attacks.fake_reports`); the gain of a target is its estimate with the fakes minus
without them (:func:`pldp.attacks.gain`). ``pldp reproduce attacks`` runs the full-scale version
(``docs/attacks.md``).
"""

# %%
# Setup
# -----
import os

import matplotlib.pyplot as plt
import numpy as np

import pldp
from pldp.attacks import expected_gain, fake_reports, gain
from pldp.experiments.attacks import build, fakes_for, honest_counts, honest_data
from pldp.robustness import per_fake_gain

QUICK = os.environ.get("PLDP_DOCS_QUICK") == "1"
N = 100_000 if QUICK else 1_000_000
REPEATS = 3 if QUICK else 20
D = 100
BETAS = [0.001, 0.005, 0.01, 0.05, 0.1]
counts = honest_counts(N, D, 1.0)  # Zipf(1) over 100 items, most frequent first
target = [D - 1]  # the rarest item


def mean_gain(oracle, beta, strategy="mga", seed=0):
    """Mean gain of the target over seeded repeats, with the honest users at count level."""
    rng = np.random.default_rng(seed)
    m = fakes_for(N, beta)
    values = []
    for _ in range(REPEATS):
        data = honest_data(oracle, counts, rng)
        honest = oracle.simulate(*data, rng)
        fake = oracle.tally(fake_reports(oracle, target, m, rng=rng, strategy=strategy))
        values.append(gain(oracle, honest, fake, target))
    return float(np.mean(values))


# %%
# Cao et al.'s closed forms against simulation
# --------------------------------------------
# With :math:`\beta = m/(n+m)` fake users, MGA's expected gain is
# :math:`\beta(1 - f_T) + \beta(d - r)/(e^\varepsilon - 1)` under k-RR and
# :math:`\beta(2re^\varepsilon/(e^\varepsilon - 1) - f_T)` under OUE. The dots (simulation) sit on
# the lines (closed forms).
fig, ax = plt.subplots(figsize=(5.2, 3.6))
for name, colour in (("krr", "C0"), ("oue", "C1")):
    oracle = build(name, D, 1.0)
    closed = [expected_gain(oracle, target, fakes_for(N, b), counts) for b in BETAS]
    ax.plot(BETAS, closed, color=colour, label=f"{name.upper()} closed form")
    ax.plot(BETAS, [mean_gain(oracle, b) for b in BETAS], "o", color=colour, label=f"{name.upper()} simulated")
ax.set(xscale="log", yscale="log", xlabel="beta (share of fake users)", ylabel="gain of the target")
ax.set_title("MGA, eps = 1, d = 100, one target", fontsize=10)
ax.legend(fontsize=8, frameon=False)
fig.tight_layout()

# %%
# Small budgets amplify every fake report
# ---------------------------------------
# One fake report moves an item's unbiased estimate by up to :math:`(1 - q)/(n(p - q))`, which
# grows like :math:`1/\varepsilon` as the budget shrinks (k-RR: like :math:`d/\varepsilon`). Under
# IDUE the most sensitive item's gap :math:`a - b` is small, so its estimate moves most.
eps = np.geomspace(0.05, 4, 40)
fig, ax = plt.subplots(figsize=(5.2, 3.6))
ax.plot(eps, [per_fake_gain(pldp.KRR(e, 16))[0] for e in eps], label="k-RR, d = 16")
ax.plot(eps, [per_fake_gain(pldp.OUE(e, 16))[0] for e in eps], label="OUE")
idue_eps = [0.1, 0.25, 0.5, 1.0]
idue = [per_fake_gain(pldp.IDUE(pldp.ItemBudgets.from_array([e, 4 * e, 4 * e, 4 * e])))[0] for e in idue_eps]
ax.plot(idue_eps, idue, "s", label="IDUE, its most sensitive item (others at 4x)")
ax.set(xscale="log", yscale="log", xlabel="budget of the item", ylabel="per-fake gain x n")
ax.legend(fontsize=8, frameon=False)
fig.tight_layout()

# %%
# Personalized protocols: the level a fake user claims
# ----------------------------------------------------
# Every personalized oracle here has mean budget 0.55 (levels 0.1, ..., 1.0); the bars are the
# gain of the rarest item at 0.1 % fake users for each move (k-RR over 100 items at 0.55 is already
# lost to 1 %), against the uniform mechanism of the same family at 0.55 (dashed). RCF's weights
# favour the largest level; PLDP-FEBSF's hidden level report is estimated with a large factor, so
# a claimed level moves every item's estimate; PBP's public shares make the claim irrelevant.
moves = ["mga", "min_level", "max_level", "adaptive"]
protocols = ["rcf-krr", "febsf-krr", "pbp-krr"]
fig, ax = plt.subplots(figsize=(5.8, 3.6))
width = 0.8 / len(moves)
for i, move in enumerate(moves):
    values = [mean_gain(build(p, D), 0.001, move, seed=i) for p in protocols]
    ax.bar(np.arange(len(protocols)) + i * width, values, width, label=move)
uniform = mean_gain(build("krr", D), 0.001)
ax.axhline(uniform, color="k", ls="--", lw=1, label="KRR at 0.55")
ax.set_xticks(np.arange(len(protocols)) + 0.4 - width / 2, protocols)
ax.set_ylabel("gain of the rarest item")
ax.legend(fontsize=7, frameon=False, ncol=2)
fig.tight_layout()
plt.show()

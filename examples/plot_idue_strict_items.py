"""
IDUE's gain as strict items become rare
=======================================

Gu et al. (*Providing Input-Discriminative Protection for Local Differential Privacy*,
ICDE 2020) let every item carry its own budget (MinID-LDP) and optimise a unary encoding for
those budgets: **IDUE**. Under plain LDP a collector must apply the smallest budget to every
item, e.g. with **OUE** or **RAPPOR**. Fig. 5 of the paper shows when this matters: with two
budgets :math:`\\varepsilon_1 = 1 < \\varepsilon_2 = 2`, IDUE gains much when only a few items
are strict (at :math:`\\varepsilon_1`) and almost nothing once about 40 % of them are.

This example redraws that curve on the bundled Retail data (each user's first item, as in
``pldp reproduce idue``) with the closed-form variances of :mod:`pldp.theory`, so every point
costs one IDUE solve and no simulation; a few simulated repeats check the theory.
"""

# %%
# Setup
# -----
import os

import matplotlib.pyplot as plt
import numpy as np

import pldp
from pldp.datasets import load_retail

QUICK = os.environ.get("PLDP_DOCS_QUICK") == "1"
EPS1, EPS2 = 1.0, 2.0
SHARES = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
DRAWS = 2 if QUICK else 5  # random assignments of items to the two budgets, per share
SIMULATED = 1 if QUICK else 3  # simulated repeats per share for the empirical check
SEED = 7

# %%
# The data
# --------
# Retail (Brijs et al., FIMI) holds item-sets; the paper's single-item version keeps each user's
# first item. :meth:`pldp.ItemSets.first_items` gives it.
retail = load_retail()
counts = np.bincount(retail.first_items(), minlength=retail.d)
n = int(counts.sum())
p = counts / n
print(f"Retail, first item per user: {n:,} users over {retail.d:,} items")

# %%
# Budgets with a given share of strict items
# ------------------------------------------
# :meth:`pldp.ItemBudgets.random_levels` is the budget policy of the IDUE experiments. With
# ``exact_shares=True`` exactly ``round(share * d)`` items, chosen at random, get
# :math:`\varepsilon_1` and the rest :math:`\varepsilon_2`.
rng = np.random.default_rng(SEED)


def two_budgets(share: float) -> pldp.ItemBudgets:
    return pldp.ItemBudgets.random_levels(
        retail.d, EPS1, rng, multipliers=(1.0, EPS2 / EPS1), shares=(share, 1.0 - share), exact_shares=True
    )


# %%
# Expected error from theory
# --------------------------
# For a fixed dataset, the expected MSE (Gu et al. Sec. VII: the total squared count error over
# ``n``) of the unbiased estimator is ``n`` times :func:`pldp.theory.expected_l2` with
# ``model="fixed"`` (the sum of Gu et al.'s eq. 7 over the items, divided by ``n``). OUE and RAPPOR
# at :math:`\varepsilon_1` do not depend on the share; OUE at :math:`\varepsilon_2` is what one
# would get if no item were strict.


def expected_mse(mechanism: pldp.Mechanism) -> float:
    return n * pldp.theory.expected_l2(mechanism, p, n, model="fixed")


uniform = {
    f"RAPPOR (ε = {EPS1:g} for all)": expected_mse(pldp.RAPPOR(EPS1, retail.d)),
    f"OUE (ε = {EPS1:g} for all)": expected_mse(pldp.OUE(EPS1, retail.d)),
    f"OUE (ε = {EPS2:g} for all, no strict item)": expected_mse(pldp.OUE(EPS2, retail.d)),
}
idue_theory = np.empty((SHARES.size, DRAWS))
idue_empirical = np.empty((SHARES.size, SIMULATED))
oue_empirical = np.empty((SHARES.size, SIMULATED))
oue = pldp.OUE(EPS1, retail.d)
for i, share in enumerate(SHARES):
    for j in range(DRAWS):
        idue = pldp.IDUE(two_budgets(share))  # solves the opt0 model of Gu et al. (eq. 8)
        idue_theory[i, j] = expected_mse(idue)
        if j < SIMULATED:  # the empirical check: one simulated tally per draw
            est = pldp.estimate(idue, idue.simulate(counts, rng), "unbiased")
            idue_empirical[i, j] = pldp.metrics.mse(counts, est.counts)
            est = pldp.estimate(oue, oue.simulate(counts, rng), "unbiased")
            oue_empirical[i, j] = pldp.metrics.mse(counts, est.counts)

for share, th, emp in zip(SHARES, idue_theory.mean(axis=1), idue_empirical.mean(axis=1), strict=True):
    print(f"share {share:4.2f}: IDUE expected MSE {th:9.0f}, simulated {emp:9.0f}")
for name, value in uniform.items():
    print(f"{name:<40} expected MSE {value:9.0f}")

# %%
# Error against the share of strict items
# ---------------------------------------
# IDUE (solid line: theory averaged over the random assignments; markers: simulated repeats)
# against the uniform-budget mechanisms (horizontal lines). With 1 % of the items strict, IDUE's
# error is about half of OUE's at :math:`\varepsilon_1` (though still about twice OUE's at
# :math:`\varepsilon_2`: even a few strict items cost much); from about 40 % on it is no better
# than OUE at :math:`\varepsilon_1`, as the paper reports. The simulated repeats fall on the theory.
fig, ax = plt.subplots(figsize=(7.0, 4.2))
for k, (name, value) in enumerate(uniform.items()):
    ax.axhline(value, color=f"C{k + 1}", ls="--", label=name)
ax.plot(SHARES, idue_theory.mean(axis=1), color="C0", lw=2, label="IDUE-opt0 (MinID-LDP): theory")
ax.plot(np.repeat(SHARES, SIMULATED), idue_empirical.ravel(), "o", color="C0", ms=4, label="IDUE: simulated")
ax.plot(np.repeat(SHARES, SIMULATED), oue_empirical.ravel(), "s", color="C2", ms=4, label=f"OUE ε={EPS1:g}: simulated")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(f"share of strict items (budget ε1 = {EPS1:g}; the others ε2 = {EPS2:g})")
ax.set_ylabel("MSE (total squared count error / n)")
ax.set_title(f"Gu et al. Fig. 5 setting on Retail ({n:,} users, {retail.d:,} items)")
ax.legend(fontsize=8)
fig.tight_layout()

# %%
# The gain
# --------
# The ratio of OUE's error at the strictest budget to IDUE's: how much accuracy a collector
# loses by treating every item as the strictest one. The band (the spread over the random choices
# of the strict items) is hardly visible: with thousands of items, which items are strict matters
# much less than how many.
fig, ax = plt.subplots(figsize=(7.0, 3.6))
gain = uniform[f"OUE (ε = {EPS1:g} for all)"] / idue_theory
ax.plot(SHARES, gain.mean(axis=1), "o-", label="OUE(ε1) / IDUE, theory")
ax.fill_between(SHARES, gain.min(axis=1), gain.max(axis=1), alpha=0.3, label=f"range over {DRAWS} assignments")
ax.axhline(1.0, color="0.5", lw=1)
ax.set_xscale("log")
ax.set_xlabel("share of strict items")
ax.set_ylabel("MSE ratio (higher: IDUE gains more)")
ax.set_title("IDUE's gain over OUE at the strictest budget")
ax.legend()
fig.tight_layout()
plt.show()

"""
Auditing a mechanism empirically
================================

``privacy()`` proves what a mechanism's *parameters* promise; an audit tests the *code* that
draws the reports. :func:`pldp.audit.audit` plays a distinguishing game: for pairs of inputs it
draws many real reports of each, counts how often a test of the report fires, and turns the
counts into a lower bound on epsilon that holds with a stated confidence (Jagielski et al. 2020;
LDP-Auditor, Arcolezi & Gambs, PETS 2024).

The bound is only as good as the test. pldp reads the **optimal** test off the exact channel,
so its audits are tight for every encoding; LDP-Auditor's own attacks (``attack="ldp-auditor"``)
guess the input from the report and, for RAPPOR, recover only about half of the budget. The
second part audits a *personalized* claim: PLDP-FEBSF says the user's budget level is protected
at :math:`\\varepsilon_p`, and the audit shows that the whole report reveals much more
(ERRATA FEBSF-6).
"""

# %%
# Setup
# -----
import os

import matplotlib.pyplot as plt
import numpy as np

import pldp
from pldp.audit import Input, Pair, audit
from pldp.protocols import FEBSF

QUICK = os.environ.get("PLDP_DOCS_QUICK") == "1"
TRIALS = 2 * 10**4 if QUICK else 10**5
EPSILONS = [0.5, 1.0, 2.0, 4.0] if QUICK else [0.25, 0.5, 1.0, 2.0, 3.0, 4.0]
D = 8
rng = np.random.default_rng(5)

# %%
# One audit
# ---------
# ``audit(OUE(1, 8))`` runs every ordered pair of the 8 items (56 pairs); each row's bound holds
# jointly with the others at 99 % confidence. ``exact`` is the pair's epsilon from the exact
# channel, ``expected`` the bound a correct sampler gives at this number of trials (the audit's
# resolution), ``audited`` the bound observed; ``flagged`` would mark a row above its claim.
result = audit(pldp.OUE(1.0, D), trials=TRIALS, rng=rng)
print(result.summary())
print(result.to_pandas()[["pair", "claimed", "exact", "expected", "audited", "flagged"]].head())

# %%
# The optimal test against LDP-Auditor's attack
# ---------------------------------------------
# For OUE and RAPPOR at several budgets, the largest audited epsilon over the pairs with both
# tests. ``limit`` is what a test converges to with unlimited trials: the claimed epsilon for the
# optimal test, much less for LDP-Auditor's guess (about 0.58 of it for RAPPOR at ε = 1).
audits = {}
for name, make in (("OUE", pldp.OUE), ("RAPPOR", pldp.RAPPOR)):
    for attack in ("optimal", "ldp-auditor"):
        rows = [audit(make(eps, D), trials=TRIALS, attack=attack, rng=rng).rows for eps in EPSILONS]
        audits[name, attack] = (
            np.array([max(r.audited for r in rs) for rs in rows]),
            np.array([rs[0].limit for rs in rows]),
        )
        print(f"{name:<6} {attack:<11}", " ".join(f"{a:5.2f}" for a in audits[name, attack][0]))

fig, ax = plt.subplots(figsize=(6.5, 4.5))
ax.plot(EPSILONS, EPSILONS, color="0.6", ls="--", label="audited = claimed")
for k, ((name, attack), (audited, limit)) in enumerate(audits.items()):
    ax.plot(EPSILONS, audited, "os"[k % 2] + "-", color=f"C{k}", label=f"{name}, {attack}: audited")
    if attack == "ldp-auditor":
        ax.plot(EPSILONS, limit, ":", color=f"C{k}", label=f"{name}, {attack}: limit")
ax.set_xlabel("claimed ε")
ax.set_ylabel("audited ε (largest over the 56 pairs)")
ax.set_title(f"OUE and RAPPOR, d = {D}: {TRIALS:,} reports per input, 99 % confidence", fontsize=10)
ax.legend(fontsize=8)
fig.tight_layout()

# %%
# PLDP-FEBSF's level leak
# -----------------------
# PLDP-FEBSF with the paper's levels 0.1, ..., 1.0, a level report at :math:`\varepsilon_p = 0.3`
# and OUE over 16 items. Its default audit has two kinds of pairs: two items at the same level
# (secret ``"item"``, claimed: that level's budget) and one item at two levels (secret
# ``"level"``, claimed: 0.3). The item report is drawn at the user's true level, so it gives the
# level away too: most level pairs are flagged. The exact check states the whole truth.
febsf = FEBSF(np.arange(1, 11) / 10, 0.3, 16, "oue")
leak = audit(febsf, trials=TRIALS, rng=rng)
print(leak.summary())
print(febsf.privacy().level.summary())

# %%
# How far above the claim? One item at level 0 (budget 0.1) against the same item at each other
# level: explicit :class:`~pldp.audit.Pair` objects. The further apart the two budgets, the
# easier the item report alone tells them apart.
others = np.arange(1, 10)
pairs = [Pair("level", Input(0, 0), Input(0, int(level))) for level in others]
by_level = audit(febsf, pairs, trials=TRIALS, rng=rng)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.0, 4.3))
leak.plot(ax=ax1)
ax1.set_title("audit of PLDP-FEBSF: audited vs claimed ε, every default pair", fontsize=9)
budgets = febsf.levels[others]
ax2.plot(budgets, [r.exact for r in by_level.rows], "o-", label="exact (from the channel)")
ax2.plot(budgets, [r.audited for r in by_level.rows], "^-", color="C3", label="audited lower bound")
ax2.axhline(0.3, color="0.5", ls="--", label="claimed ε_p = 0.3")
ax2.set_xlabel("budget of the second level (the first is 0.1)")
ax2.set_ylabel("ε protecting the level")
ax2.set_title("level 0.1 vs each other level, item 0", fontsize=9)
ax2.legend(fontsize=8)
fig.suptitle("PLDP-FEBSF (levels 0.1..1.0, ε_p = 0.3, OUE over 16 items): the level is not protected at ε_p")
fig.tight_layout()
plt.show()

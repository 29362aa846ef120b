"""
Reports over time: memoized chains
==================================

A device that reports every day leaks a little more each day, unless its reports are
*memoized*: it draws a permanent randomized response (PRR) once per value, at
:math:`\\varepsilon_\\infty`, remembers it, and sends each day a fresh instantaneous response (IRR)
of it, which meets :math:`\\varepsilon_1` alone. Any number of reports of one value then reveal at
most :math:`\\varepsilon_\\infty` (RAPPOR's memoization; Arcolezi et al. 2022).

This example runs ten rounds of the same 50,000 users through L-OSUE (OUE then SUE), with the
users' PRRs kept in a :class:`~pldp.mechanisms.longitudinal.Memo`, estimates every round, and
compares the errors with the closed form of :func:`pldp.theory.longitudinal_variance`. It also
shows why the memo matters: averaging the ten rounds does *not* shrink the error the way ten
independent collections would, since every round re-randomizes the same permanent responses.
"""

# %%
# Ten rounds from one memo
# ------------------------
import matplotlib.pyplot as plt
import numpy as np

import pldp

rng = np.random.default_rng(7)
d, n, rounds = 20, 50_000, 10
items = pldp.datasets.zipf_items(n, d, rng)
f = np.bincount(items, minlength=d) / n

mech = pldp.LOSUE(2.0, 1.0, d)  # eps_perm = 2 over any number of reports of a value, eps_1 = 1 per report
print(mech.privacy().holds, round(mech.privacy().permanent_epsilon, 3))

memo = mech.memo()
estimates = []
for _ in range(rounds):
    reports, memo = mech.perturb(items, rng, memo=memo)  # the same users: their PRRs come from the memo
    estimates.append(pldp.estimate(mech, mech.tally(reports), "unbiased").frequencies)
estimates = np.array(estimates)

# %%
# One round's error is the closed form's; the average of rounds keeps the PRR's noise
# ------------------------------------------------------------------------------------
per_round = ((estimates - f) ** 2).mean(axis=1)
theory = pldp.theory.longitudinal_variance("L-OSUE", 2.0, 1.0, d, n=n)
averaged = ((estimates.mean(axis=0) - f) ** 2).mean()
print(f"one round: MSE {per_round.mean():.2e} (closed form at f = 0: {theory:.2e})")
print(
    f"mean of {rounds} rounds: MSE {averaged:.2e} "
    f"(ten independent rounds would give about {per_round.mean() / rounds:.2e})"
)

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(range(1, rounds + 1), per_round, "o-", label="one round")
ax.axhline(theory, ls="--", c="grey", label="closed form (f = 0)")
ax.axhline(averaged, ls=":", c="k", label=f"mean of {rounds} rounds")
ax.set_yscale("log")
ax.set_xlabel("round")
ax.set_ylabel("MSE")
ax.legend(fontsize=8)
fig.tight_layout()

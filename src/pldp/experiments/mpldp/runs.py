"""MPLDP experiments: Algorithm 4's data, the protocol at a budget, and one repeat of Fig. 3-4 or Table 3."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from pldp.datasets import mpldp_dataset
from pldp.experiments.oracles import op_weights_with_ground_truth
from pldp.experiments.paths import observe, path_of
from pldp.metrics import max_abs_error, nse
from pldp.protocols.mpldp import MPLDP, allocate_budget

__all__ = ["OC", "OP", "OP_LS", "OP_REGRESSIONS", "SUM", "K", "protocol", "run_nse", "run_op_max_error", "truth"]

PAPER = "mpldp"
#: Candidate values of the five attributes (Sec. VI).
K: tuple[int, ...] = (5, 10, 15, 20, 25)
#: OP runs 20 regressions (Algorithm 3 with ``iter = 20``); Table 3 shows the first 10.
OP_REGRESSIONS = 20
SUM, OC, OP, OP_LS = "BRR (sum)", "OC", "OP", "OP (LS)"


@functools.cache
def truth(n: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Algorithm 4's data ``(n, 5)`` and the true count histogram of each attribute (cached)."""
    values = mpldp_dataset(n, list(K))
    values.setflags(write=False)
    return values, tuple(np.bincount(values[:, i], minlength=k) for i, k in enumerate(K))


@functools.cache
def protocol(eps: float, per_attribute: bool) -> MPLDP:
    """MPLDP on the five attributes: total ``eps`` split as in Table 2, or ``eps`` for every
    attribute (``per_attribute``); cached (the budget split solves a small convex problem)."""
    eps_i = np.full(len(K), eps) if per_attribute else allocate_budget(eps, K)
    return MPLDP(list(K), eps_i)


def _setup(setting: dict[str, Any]) -> tuple[MPLDP, int]:
    if "eps_i" in setting:
        return protocol(float(setting["eps_i"]), True), int(setting["n"])
    return protocol(float(setting["eps"]), False), int(setting["n"])


def _op_runs(proto: MPLDP, tally: Any, hist: tuple[np.ndarray, ...]) -> list[Any]:
    """OP (the ground-truth oracle, ERRATA MPLDP-4) on each attribute: its 20 regressions."""
    runs = []
    for i in range(len(K)):
        level_counts, _ = proto.level_estimates(tally, i)
        runs.append(op_weights_with_ground_truth(hist[i], level_counts, iterations=OP_REGRESSIONS - 1))
    return runs


def run_nse(setting: dict[str, Any], rng: np.random.Generator, *, with_op: bool = False) -> list[dict[str, Any]]:
    """One repeat: NSE of sum and OC (and OP, OP's least-squares start, with ``with_op``).

    Setting keys: ``n`` and either ``eps`` (total, Table 2 split) or ``eps_i`` (per attribute).
    Rows also carry ``nse_perturbation``, the error against the combination of the levels'
    own true counts with the method's weights (for the sum that is the truth itself).
    """
    proto, n = _setup(setting)
    values, hist = truth(n)
    levels = proto.assign_levels(n, rng)
    tally = observe(proto, values, levels, rng=rng, path=path_of(setting))
    true_all = np.concatenate(hist)
    # each attribute's true counts within each level (the same for every method)
    withins = [np.bincount(levels[:, i] * k + values[:, i], minlength=3 * k).reshape(3, k) for i, k in enumerate(K)]
    rows: list[dict[str, Any]] = []
    for label, method in ((SUM, "sum"), (OC, "unbiased")):
        ests = proto.estimate(tally, method)
        est_all = np.concatenate([e.counts for e in ests])
        targets = []
        for within, e in zip(withins, ests, strict=True):
            c = n * e.info["weights"] / e.info["n_tau"]
            targets.append(c @ within)
        rows.append(
            {
                "method": label,
                "nse": float(nse(true_all, est_all, n=n)),
                "nse_perturbation": float(nse(np.concatenate(targets), est_all, n=n)),
            }
        )
    if with_op:
        runs = _op_runs(proto, tally, hist)
        rows.append({"method": OP, "nse": float(nse(true_all, np.concatenate([r.estimates[-1] for r in runs]), n=n))})
        rows.append({"method": OP_LS, "nse": float(nse(true_all, np.concatenate([r.estimates[0] for r in runs]), n=n))})
    return rows


def run_op_max_error(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of Table 3: OP's maximum absolute count error after each of its 20 regressions.

    Rows: ``iteration`` (1 = least squares), ``max_error`` (averaged over the five attributes),
    ``rise`` (the largest growth of any attribute's maximum error since the previous iteration,
    relative to it; Theorem 3 says it is never positive) and, at iteration 1, OC's maximum
    error for comparison (``oc_max_error``).
    """
    proto, n = _setup(setting)
    values, hist = truth(n)
    tally = observe(proto, values, proto.assign_levels(n, rng), rng=rng, path=path_of(setting))
    errors = np.array([r.max_error for r in _op_runs(proto, tally, hist)])
    oc = proto.estimate(tally, "unbiased")
    oc_max = float(np.mean([max_abs_error(h, e.counts) for h, e in zip(hist, oc, strict=True)]))
    rise = np.zeros(OP_REGRESSIONS)
    rise[1:] = np.max(np.diff(errors, axis=1) / errors[:, :-1], axis=0)
    mean_err = errors.mean(axis=0)
    return [
        {
            "method": OP,
            "iteration": t + 1,
            "max_error": float(mean_err[t]),
            "rise": float(rise[t]),
            **({"oc_max_error": oc_max} if t == 0 else {}),
        }
        for t in range(OP_REGRESSIONS)
    ]

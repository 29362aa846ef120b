"""Evaluation-only oracles: procedures that read the true histogram.

No aggregator can run these: they take the ground truth as input. They exist only so that the
experiments can reproduce figures of the papers that use them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError

__all__ = ["OPResult", "op_weights_with_ground_truth"]


@dataclass(frozen=True)
class OPResult:
    """Outcome of MPLDP's OP.

    Attributes
    ----------
    weights : ndarray, shape (iterations + 1, levels)
        The regression weights :math:`W^{(t)}` (multiplying the level count estimates).
    max_error : ndarray, shape (iterations + 1,)
        :math:`\\max_j |\\hat H^{(t)}_j - H_j|` after each iteration (index 0: least squares).
    estimates : ndarray, shape (iterations + 1, k)
        :math:`\\hat H^{(t)} = W^{(t)} \\tilde H`.
    """

    weights: np.ndarray
    max_error: np.ndarray
    estimates: np.ndarray


def op_weights_with_ground_truth(
    true_counts: np.ndarray, level_counts: np.ndarray, iterations: int = 20, step: float = 0.5
) -> OPResult:
    """MPLDP's OP (Algorithm 3, Theorem 3): least squares of the TRUE histogram on the level
    estimates, then perturbation steps that lower the largest error.

    It needs the true histogram ``H`` (ERRATA MPLDP-4), so it is an evaluation oracle, not an
    estimator: ``W = H H~^T (H~ H~^T)^-1`` regresses the truth on the ``levels x k`` matrix of
    per-level count estimates ``H~`` (eq. 24), and these "least squares" weights are not
    Theorem 2's. Each iteration finds the worst item ``k``, and moves the regression target
    ``H_k`` by the largest step that Theorem 3 allows,
    :math:`\\delta = \\min(|r_k| / |P_{kk}|, \\min_{t \\ne k} (|r_k| - |r_t|)/|P_{kt}|)` with the hat
    matrix :math:`P = \\tilde H^T(\\tilde H \\tilde H^T)^{-1}\\tilde H`, in the direction of
    :math:`r_k`. Errors are measured against the true ``H`` (as in the proof; Algorithm 3's
    line 8 writes ``H`` where the proof has ``H~`` in the hat matrix: the proof is followed).

    ``step`` scales Theorem 3's largest step. With ``step=1`` (the paper's "upper limit") the
    step lifts the runner-up error exactly to the largest one, the next iteration finds a tie,
    its largest step is 0, and the iteration stalls; the default 0.5 keeps the guarantee of
    Theorem 3 (the largest error never grows) and keeps making progress.
    """
    H = np.asarray(true_counts, dtype=float)
    Ht = np.asarray(level_counts, dtype=float)
    if H.ndim != 1 or Ht.ndim != 2 or Ht.shape[1] != H.size:
        raise ParameterError(f"need true counts (k,) and level estimates (levels, k); got {H.shape}, {Ht.shape}")
    if not np.all(np.isfinite(Ht)):
        raise ParameterError("level estimates must be finite (drop empty levels first)")
    if iterations < 0:
        raise ParameterError(f"iterations must be >= 0, got {iterations!r}")
    if not 0 < step <= 1:
        raise ParameterError(f"step must lie in (0, 1], got {step!r}")
    gram_inv = np.linalg.pinv(Ht @ Ht.T)
    to_weights = Ht.T @ gram_inv  # (k, levels): W = target @ to_weights
    hat = to_weights @ Ht  # (k, k): the estimate is target @ hat
    with np.errstate(divide="ignore"):
        inv_hat = 1.0 / np.abs(hat)  # inf where an entry is 0: its step is no bound
    target = H.copy()
    weights, errors, estimates = [], [], []
    with np.errstate(invalid="ignore"):  # 0 * inf: an item as far off as the worst, where hat is 0
        for it in range(iterations + 1):
            w = target @ to_weights
            est = target @ hat
            r = H - est
            weights.append(w)
            estimates.append(est)
            ar = np.abs(r)
            k = int(np.argmax(ar))
            errors.append(float(ar[k]))
            if it == iterations:
                break
            m = (ar[k] - ar) * inv_hat[k]
            m[k] = ar[k] * inv_hat[k, k]
            # the smallest finite bound >= 0 (none: no step); NaN and inf are no bound
            m_min = float(np.where(np.isfinite(m) & (m >= 0), m, np.inf).min())
            delta = step * m_min if m_min < np.inf else 0.0
            target[k] += delta if r[k] > 0 else -delta
    return OPResult(np.array(weights), np.array(errors), np.array(estimates))

"""The lower bound of PLDP-FEBSF's defences: fakes whose reports, added to the honest ones, look
exactly like honest reports of other item shares ``f'`` and true-level shares ``rho'``. No estimator
that is right on honest data can tell the two apart, so every such estimator moves the target by
``f'_t - f_t`` on those reports (docs/attacks.md, "The lower bound" of PLDP-FEBSF).

Run: ``PYTHONPATH=src python benchmarks/febsf_lower_bound.py`` (about 2 minutes). Setting of
docs/attacks.md: Zipf(2) over ``d = 16`` items, the rarest as target, ten levels 0.1..1.0 with even
shares, ``eps_p = 0.3``; ``beta`` the fakes' share of all reports.

The reports of ``m = beta/(1 - beta) n`` fakes look honest for ``(f', rho')`` when the honest law
of ``(f', rho')`` times ``1 + m/n`` is at least that of ``(f, rho)`` at every report (the
difference, divided by ``m/n``, is then the fakes' law). For fixed ``rho'`` that is linear in
``f'``:

* k-RR: a report is (reported level ``l``, item ``y``), ``P(l, y) = sum_i rho_i pi(l|i) (q_i + f_y
  (p_i - q_i))``: a linear programme in ``f'`` (160 constraints), maximising ``f'_t``.
* OUE (``p = 1/2``): a report is (``l``, bit pattern ``x``), ``P(l, x) = sum_i rho_i pi(l|i) A_i(s)
  (1 + F(x) (w_i - 1))`` with ``s`` the number of ones, ``A_i(s) = q_i^s (1 - q_i)^(d-1-s) / 2``,
  ``w_i = (1 - q_i)/q_i`` and ``F(x)`` the item shares of the set bits; with ``f' = (1 - delta) f +
  delta e_t`` each constraint is linear in ``F``, so only the least and the largest ``F`` over the
  patterns of each ``(s, x_t)`` matter, and the largest ``delta`` is a ratio test (a restriction
  of ``f'``: the bound found is a lower bound of the attack's best).

``rho'`` is searched by Nelder-Mead over a softmax from the even shares and 9 random starts.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog, minimize

from pldp.attacks import expected_gain
from pldp.datasets.synthetic import zipf_probabilities
from pldp.mechanisms import KRR, OUE
from pldp.protocols import FEBSF

LEVELS = np.arange(1, 11) / 10
D, T = 16, 15
N = 100_000


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def krr_gain(proto: FEBSF, f: np.ndarray, rho2: np.ndarray, beta: float) -> float:
    """The largest ``f'_t - f_t`` of honest-looking k-RR reports for level shares ``rho2``."""
    pi, q, gap = proto.pi, proto.q_star, proto.p_star - proto.q_star
    even = np.full(proto.t, 1 / proto.t)
    honest = (even @ (pi * q[:, None]))[:, None] + f[None, :] * (even @ (pi * gap[:, None]))[:, None]
    a, b = rho2 @ (pi * q[:, None]), rho2 @ (pi * gap[:, None])
    scale = 1 / (1 - beta)  # (n + m)/n
    rows = np.zeros((proto.t * D, D))
    rows[np.arange(proto.t * D), np.tile(np.arange(D), proto.t)] = -scale * np.repeat(b, D)
    rhs = (scale * a[:, None] - honest).ravel()
    c = np.zeros(D)
    c[T] = -1
    res = linprog(c, A_ub=rows, b_ub=rhs, A_eq=np.ones((1, D)), b_eq=[1], bounds=[(0, 1)] * D, method="highs")
    return float(res.x[T] - f[T]) if res.status == 0 else -1.0


def oue_gain(proto: FEBSF, f: np.ndarray, rho2: np.ndarray, beta: float) -> float:
    """The largest ``delta (1 - f_t)`` of honest-looking OUE reports for level shares ``rho2``."""
    pi, q = proto.pi, proto.q_star
    s = np.arange(D + 1)
    w = (1 - q) / q
    base = 0.5 * q[:, None] ** s[None, :] * (1 - q[:, None]) ** (D - 1 - s[None, :])  # (i, s)
    other = np.sort(np.delete(f, T))
    ext = []  # (s, x_t, F): the least and the largest F of the patterns with s ones and bit t = x_t
    for xt in (0, 1):
        for k in range(xt, D + xt):
            rest = k - xt
            if rest <= D - 1:
                ext += [(k, xt, other[:rest].sum() + xt * f[T]), (k, xt, other[::-1][:rest].sum() + xt * f[T])]
    k, xt, big_f = (np.array(col) for col in zip(*ext, strict=True))
    k = k.astype(int)
    shape = base[:, k] * (1 + big_f[None, :] * (w[:, None] - 1))  # (i, K)
    even = np.full(proto.t, 1 / proto.t)
    honest = np.einsum("i,il,ik->lk", even, pi, shape)
    scale = 1 / (1 - beta)
    at0 = scale * np.einsum("i,il,ik->lk", rho2, pi, shape)
    slope = scale * np.einsum("i,il,ik->lk", rho2, pi, base[:, k] * ((xt - big_f)[None, :] * (w[:, None] - 1)))
    need = honest - at0  # at0 + delta * slope >= honest
    lo = np.max(np.where(slope > 0, need / np.where(slope > 0, slope, 1), np.where(need > 1e-18, np.inf, -np.inf)))
    hi = np.min(np.where(slope < 0, need / np.where(slope < 0, slope, -1), np.inf))
    if max(lo, 0.0) > hi:
        return -1.0
    return float(min(hi, 1.0) * (1 - f[T]))


def best(gain_of, proto: FEBSF, f: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    rng = np.random.default_rng(37)
    top, shares = gain_of(proto, f, np.full(proto.t, 1 / proto.t), beta), np.full(proto.t, 1 / proto.t)
    for start in range(10):
        z0 = np.zeros(proto.t) if start == 0 else 2 * rng.normal(size=proto.t)
        r = minimize(
            lambda z: -gain_of(proto, f, _softmax(z), beta),
            z0,
            method="Nelder-Mead",
            options={"maxiter": 3000, "xatol": 1e-5, "fatol": 1e-9},
        )
        if -r.fun > top:
            top, shares = -r.fun, _softmax(r.x)
    return top, shares


def main() -> None:
    f = zipf_probabilities(D)
    counts = np.round(N * f)
    for oracle, mech, gain_of in (("krr", KRR(0.55, D), krr_gain), ("oue", OUE(0.55, D), oue_gain)):
        proto = FEBSF(LEVELS, 0.3, D, oracle=oracle)
        for beta in (0.01, 0.045):
            m = round(beta * N / (1 - beta))
            mga = expected_gain(mech, [T], m, counts)
            top, shares = best(gain_of, proto, f, beta)
            found = f"lower bound {top:.4f} (x{top / mga:.2f} MGA {mga:.4f})"
            print(f"febsf-{oracle} beta={beta}: {found}; rho' {np.round(shares, 3).tolist()}")


if __name__ == "__main__":
    main()

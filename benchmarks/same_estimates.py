"""Same estimates: the MSE of pldp and of each peer on identical users, against the closed form.

The ``vs peers: same estimates (MSE)`` rows, called by ``peers.py``: they show that the
speed comparison is like for like (the same mechanism, the same estimator, the same
accuracy). See ``benchmarks/peers_README.md``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import pldp
from adapters import EPS, MECHANISMS, PEER_FACTORIES, Peer, pldp_path
from harness import SEED, Mode, Row
from pldp.mechanisms.base import Mechanism
from report import users

MSE_USERS, MSE_D, MSE_REPEATS, MSE_REPEATS_QUICK = 10_000, 100, 5, 3
TARGET_Z = 4.0  # |MSE - theory| / standard error of the mean squared error

#: An estimator of the MSE rows: seeded by the repeat, it returns the unbiased estimate and
#: a second one to report beside it (pldp's clipped, a peer's own), or None.
Estimator = Callable[[int], tuple[np.ndarray, np.ndarray | None]]


def mse_rows(mode: Mode, versions: dict[str, str], x: np.ndarray) -> list[Row]:
    """MSE of every library on identical inputs over seeded repeats, against the closed form.

    MSE = mean over repeats of (1/d) Σ_y (f̂_y − f_y)², f the users' true frequencies. The
    theory is ``pldp.theory.expected_l2(mech, f, n, model="fixed") / d`` (the population is
    fixed and only the perturbation is random); z is (MSE − theory) over the standard error
    of a mean of ``repeats`` losses, sqrt(2 Σ_y σ_y⁴ / repeats) / d (Gaussian item errors).

    Parameters
    ----------
    mode : Mode
        Quick (fewer repeats) or full.
    versions : dict of str to str
        Each peer library's version.
    x : numpy.ndarray
        The users' items (:data:`MSE_USERS` users over :data:`MSE_D` items), the same for
        every library and repeat.

    Returns
    -------
    list of Row
        Per mechanism, a row for pldp and for each peer.
    """
    n, d = x.size, MSE_D
    repeats = MSE_REPEATS_QUICK if mode.name == "quick" else MSE_REPEATS
    f = np.bincount(x, minlength=d) / n
    rows: list[Row] = []
    for name, (_, cls, peer_name) in MECHANISMS.items():
        mech = cls(EPS, d)
        theory = pldp.theory.expected_l2(mech, f, n, model="fixed") / d
        var = pldp.theory.item_variance(mech, f, n, model="fixed")
        se = math.sqrt(2 * float(np.sum(var**2)) / repeats) / d
        samples = {lib: (api, *_losses(est, f, repeats)) for lib, api, est in _estimators(name, mech, x, versions)}
        for lib, (api, losses, clipped) in samples.items():
            setting = (
                f"{name if lib == 'pldp' else peer_name} ε={EPS:g}, n={users(n)}, d={d}, {repeats} seeded "
                f"repeats, identical users: {api}{_mse_note(lib, clipped, samples['pldp'][2])}"
            )
            clipped_mse = float(np.mean(clipped)) if clipped else None
            rows.append(mse_row("vs peers: same estimates (MSE)", setting, losses, theory, se, clipped_mse=clipped_mse))
    return rows


def mse_row(bench: str, setting: str, losses: list[float], theory: float, se: float, **extra: Any) -> Row:
    """A row of the MSE over seeded repeats against its closed form, judged by |z| <= :data:`TARGET_Z`.

    Parameters
    ----------
    bench, setting : str
        The first two columns (``"; theory ..."`` is appended to the setting).
    losses : list of float
        One repeat's mean squared error each.
    theory : float
        The closed-form MSE.
    se : float
        The standard error of the mean of the losses under the closed form.
    **extra
        Further numbers, kept in ``results.json``.

    Returns
    -------
    Row
        The row, with the MSE, theory, z and losses in its ``extra``.
    """
    mse = float(np.mean(losses))
    z = (mse - theory) / se
    return Row(
        bench,
        f"{setting}; theory {theory:.3g}",
        None,
        mse / theory,
        "x theory",
        f"MSE {mse:.3g} = {mse / theory:.2f}x theory (z = {z:+.1f})",
        f"|z| ≤ {TARGET_Z:g}",
        abs(z) <= TARGET_Z,
        extra={"mse": mse, "theory": theory, "z": z, "losses": losses, **extra},
    )


def _clip(est: np.ndarray) -> np.ndarray:
    """Clip at 0 and renormalise (what multi-freq-ldpy's aggregators do)."""
    c = np.clip(est, 0, None)
    return c / c.sum()


def _estimators(
    name: str, mech: Mechanism, x: np.ndarray, versions: dict[str, str]
) -> Iterator[tuple[str, str, Estimator]]:
    """pldp's and each peer's seeded estimator of the users ``x``: (library, api, estimator).

    A generator: a peer's adapter is made when its turn comes, after the previous library's
    repeats have run.
    """

    def pldp_estimate(r: int) -> tuple[np.ndarray, np.ndarray]:
        est = pldp_path(mech, np.random.default_rng(SEED + r))(x)
        return est, _clip(est)

    yield "pldp", f'pldp {pldp.__version__} estimate(..., "unbiased")', pldp_estimate
    xs = x.tolist()
    for lib, factory in PEER_FACTORIES.items():
        peer = factory(name, mech.d)

        def peer_estimate(r: int, peer: Peer = peer) -> tuple[np.ndarray, np.ndarray | None]:
            peer.seed(SEED + r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return peer.unbiased(xs)

        yield lib, f"{lib} {versions[lib]} {peer.api}", peer_estimate


def _losses(estimate: Estimator, f: np.ndarray, repeats: int) -> tuple[list[float], list[float]]:
    """Mean squared error of each repeat's estimate, and of the second estimate where there is one."""
    losses: list[float] = []
    clipped: list[float] = []
    for r in range(repeats):
        est, other = estimate(r)
        losses.append(float(np.mean((est - f) ** 2)))
        if other is not None:
            clipped.append(float(np.mean((other - f) ** 2)))
    return losses, clipped


def _mse_note(lib: str, clipped: list[float], clipped_pldp: list[float]) -> str:
    """What a library's MSE row says about its estimator."""
    if lib == "multi-freq-ldpy":
        return (
            f"; unbiased inversion of its own reports' counts; its MI output (clipped at 0, renormalised) "
            f"has MSE {np.mean(clipped):.3g}, pldp's estimate clipped the same way "
            f"{np.mean(clipped_pldp):.3g}"
        )
    if lib == "pure-ldp":
        return "; estimate_all(normalization=0) / n"
    return ""

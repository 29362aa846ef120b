"""The conformance check of :mod:`pldp.attacks`: fake reports in the oracle's own format, and their gain.

:func:`check_attack` makes :data:`FAKE_SHARE` of the case's population in fake users by the default
strategy (Cao et al.'s MGA, :func:`pldp.attacks.fake_reports`) promoting the last item (MPLDP: the
last value of every attribute), and checks that

* the fake reports have the format of ``perturb``'s (types, dtypes, trailing shapes; one report
  per fake user), ``tally`` takes them, and their tally merges with the honest one;
* where :func:`pldp.attacks.expected_gain` is exact (every pure mechanism, padding-and-sampling,
  RCF, APLDP, PBP, MPLDP), the mean gain of the ``"unbiased"`` estimate over :data:`REPEATS`
  honest populations lies within :data:`Z` standard errors of it (PLDP-FEBSF's closed form is
  first-order and PPDA has none: their gain is only required to be finite);
* the attacker who knows the defence (:mod:`pldp.attacks.optimal`, ``strategy="optimal"``), where
  it searches the family (not padding-and-sampling; MPLDP over (attribute, level) pairs): against the oracle's defence
  (:data:`DEFENCES`, the first it has; else ``"norm_sub"``), on its own shadow tallies, its split
  is worth at least every fixed strategy's (MGA, each single claim, ``knows_defence``); its
  reports have ``perturb``'s format and their gain is finite; and an estimate that reports a
  ``bound`` states its threat model (``info["bound_model"]``) and whether spread claims are
  bounded (``info["spread_bound"]``), since the attacker beats a one-level bound by spreading.
"""

from __future__ import annotations

import unittest
from typing import Any

import numpy as np

from pldp.estimation.result import EstimateSet
from pldp.oracle import FrequencyOracle
from pldp.testing.case import OracleCase
from pldp.testing.checks import _check, _expect, _users

__all__ = ["DEFENCES", "FAKE_SHARE", "REPEATS", "Z", "check_attack"]

#: Fake users per honest user in the check.
FAKE_SHARE = 0.1
#: Honest populations the mean gain is taken over.
REPEATS = 120
#: How many standard errors the mean gain may lie from the closed form (two-sided 1e-5 per case).
Z = 4.42
#: The defences the optimising attacker is run against, the first the oracle has.
DEFENCES = ("robust", "detect", "recover")


def _format(fake: Any, real: Any, m: int, n: int, where: str = "reports") -> None:
    """``fake`` (``m`` users) has the format of ``real`` (``n`` users): same types, dtypes and
    trailing shapes, arrays of users first."""
    _expect(type(fake) is type(real), f"{where}: a {type(fake).__name__}, perturb gives a {type(real).__name__}")
    if isinstance(real, np.ndarray):
        _expect(fake.dtype == real.dtype, f"{where}: dtype {fake.dtype}, perturb gives {real.dtype}")
        _expect(fake.shape[1:] == real.shape[1:], f"{where}: shape {fake.shape}, perturb gives {real.shape}")
        if real.ndim and real.shape[0] == n:
            _expect(fake.shape[0] == m, f"{where}: {fake.shape[0]} rows for {m} fake users")
    elif isinstance(real, tuple):
        _expect(len(fake) == len(real), f"{where}: {len(fake)} parts, perturb gives {len(real)}")
        for i, (f, r) in enumerate(zip(fake, real, strict=True)):
            _format(f, r, m, n, f"{where}[{i}]")
    elif hasattr(real, "__dataclass_fields__"):
        for name in real.__dataclass_fields__:
            _format(getattr(fake, name), getattr(real, name), m, n, f"{where}.{name}")


def _targets(oracle: FrequencyOracle) -> Any:
    """The last item, or for several attributes (MPLDP) the last value of each."""
    k = getattr(oracle, "k", None)
    if isinstance(k, tuple):
        return [np.array([ki - 1]) for ki in k]
    return np.array([oracle.d - 1])


@_check
def check_attack(case: OracleCase) -> None:
    """:func:`pldp.attacks.fake_reports` (MGA) gives reports in ``perturb``'s format that ``tally``
    takes and whose tally merges with the honest one; their mean gain over 120 repeats matches
    :func:`pldp.attacks.expected_gain` within 4.42 standard errors (two-sided 1e-5) where it is
    exact."""
    from pldp.attacks import expected_gain, fake_reports, gain, gain_is_exact, rule_of

    oracle, data = case.oracle, case.data
    try:
        rule_of(oracle)
    except TypeError as exc:
        raise unittest.SkipTest(str(exc)) from None
    rng = case.rng("check_attack")
    targets = _targets(oracle)
    honest = oracle.simulate(*data, rng)
    m = max(1, round(FAKE_SHARE * honest.n))
    fake = fake_reports(oracle, targets, m, rng=rng)
    real = oracle.perturb(*_users(data), rng)
    _format(fake, real, m, honest.n)
    tally = oracle.tally(fake)
    _expect(tally.n == m, f"the tally of {m} fake reports counts {tally.n} users")
    merged = honest + tally
    _expect(merged.n == honest.n + m and merged == tally + honest, "the fake tally does not merge with the honest one")
    first = gain(oracle, honest, tally, targets)
    _expect(np.isfinite(first), f"the gain is {first!r}")
    _check_optimal(oracle, targets, m, honest, real, rng)
    expected = expected_gain(oracle, targets, m, *data)
    if expected is None or not gain_is_exact(oracle):
        return
    gains = np.array(
        [
            gain(oracle, oracle.simulate(*data, rng), oracle.tally(fake_reports(oracle, targets, m, rng=rng)), targets)
            for _ in range(REPEATS)
        ]
    )
    mean, se = float(gains.mean()), float(gains.std(ddof=1) / np.sqrt(REPEATS))
    _expect(
        abs(mean - expected) <= Z * se + 1e-12 * max(1.0, abs(expected)),
        f"mean gain {mean:.6f} over {REPEATS} repeats (se {se:.2e}) is {abs(mean - expected) / max(se, 1e-300):.1f} "
        f"standard errors from the closed form {expected:.6f} ({m} fakes, MGA on {targets})",
    )


def _check_optimal(oracle: Any, targets: Any, m: int, honest: Any, real: Any, rng: np.random.Generator) -> None:
    """The optimising attacker against the oracle's defence (module docstring), at a coarse
    resolution (4 chunks, 1 shadow tally, no local moves)."""
    from pldp.attacks import gain
    from pldp.attacks.atoms import atoms_of
    from pldp.attacks.optimal import search, split_reports
    from pldp.errors import ParameterError

    try:
        atoms_of(oracle)
    except ParameterError:
        return
    methods = getattr(oracle, "methods", ())
    defence = next((d for d in DEFENCES if d in methods), "norm_sub")
    found = search(oracle, targets, m, rng=rng, defence=defence, population=honest.n, chunks=4, shadows=1, passes=0)
    worst_fixed = max(found.fixed.values())
    _expect(
        found.objective >= worst_fixed,
        f"the optimal attacker's split {found.counts.tolist()} is worth {found.objective:.6f} against {defence!r}, "
        f"less than a fixed strategy's {worst_fixed:.6f}",
    )
    fake = split_reports(oracle, targets, found.counts, rng)
    _format(fake, real, m, honest.n, "optimal reports")
    tally = oracle.tally(fake)
    measured = gain(oracle, honest, tally, targets, defence)
    _expect(np.isfinite(measured), f"the optimal attacker's gain against {defence!r} is {measured!r}")
    result = oracle.estimate(honest + tally, defence)
    for info in [e.info for e in result] if isinstance(result, EstimateSet) else [result.info]:
        if "bound" in info:
            _expect(
                isinstance(info.get("bound_model"), str) and "spread_bound" in info,
                f"{defence!r} reports a bound without its threat model (info['bound_model'], info['spread_bound'])",
            )

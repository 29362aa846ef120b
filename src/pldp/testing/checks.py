"""The checks of the conformance battery, one function each.

Every check takes an :class:`~pldp.testing.OracleCase` (or a bare oracle, checked with the
defaults), returns nothing when the oracle conforms, raises ``AssertionError`` whose message
starts with the check's name and the case's name when it does not, and raises
``unittest.SkipTest`` (a skip under pytest) when it does not apply (no variant for a power
check, no sampler description for an audit). :data:`CHECKS` lists them in the order
:func:`~pldp.testing.check_oracle` runs them.

The statistical checks state their significance and are deterministic for a given case seed:

=================================  ===============================================================
check                              fails when
=================================  ===============================================================
check_per_user_matches_simulate    the per-user path (``perturb`` + ``tally``) and ``simulate``
                                   differ in law, p < 1e-3 (Bonferroni over every tally
                                   coordinate; :mod:`pldp.testing.distribution`), or the test
                                   does not tell the variant's ``simulate`` apart (power)
check_audit_tight                  an audited epsilon exceeds the exact channel or the claim
                                   (joint confidence 0.99), or lies more than 5 standard
                                   deviations below what a correct sampler gives
check_audit_flags_variant          reports drawn by the variant, audited against the oracle's
                                   channel, are not caught (power)
=================================  ===============================================================

``quick`` cases use :data:`QUICK` instead of :data:`FULL`: fewer repeats and trials, and no
power check against the variant (at 60 repeats the distribution test does not reliably tell
budgets 1.25 times larger apart, e.g. IPRR's of 0.1 to 1.0).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import unittest
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp.errors import EstimationError, PLDPError, TallyError
from pldp.estimation import Estimate, EstimateSet, estimate
from pldp.fingerprint import canonical, fingerprint, is_fingerprint
from pldp.oracle import STANDARD_METHODS, FrequencyOracle
from pldp.privacy import PrivacyCheck
from pldp.testing._deploy import from_params, sampler_node
from pldp.testing.case import OracleCase, as_case
from pldp.testing.distribution import ALPHA, can_flatten, flatten, same_law_pvalue
from pldp.testing.privacy_map import privacy_map_disagreements

__all__ = [
    "CHECKS",
    "FULL",
    "QUICK",
    "Effort",
    "check_audit_flags_variant",
    "check_audit_tight",
    "check_estimation_methods",
    "check_fingerprint",
    "check_params_round_trip",
    "check_per_user_matches_simulate",
    "check_privacy",
    "check_privacy_map",
    "check_refusals",
    "check_refuses_foreign_tally",
    "check_seeded",
    "check_tally_roundtrip",
]


@dataclass(frozen=True)
class Effort:
    """How many draws the statistical checks make."""

    #: Repeats of each path in the distribution test.
    repeats: int
    #: Reports per input of the audit of the oracle's own sampler.
    audit_trials: int
    #: Reports per input, and pairs, of the audit of a sampler running the variant.
    power_trials: int
    power_pairs: int
    #: Whether the power checks against the variant run.
    power: bool = True


#: The standard effort: about a second per oracle of the shipped sizes.
FULL = Effort(repeats=150, audit_trials=20_000, power_trials=100_000, power_pairs=12)
#: ``quick=True``: fewer repeats and trials, and no power checks (less power against small deviations).
QUICK = Effort(repeats=60, audit_trials=10_000, power_trials=0, power_pairs=0, power=False)

#: Every check, in the order :func:`~pldp.testing.check_oracle` runs them.
CHECKS: list[Callable[[OracleCase | FrequencyOracle], None]] = []


def _effort(case: OracleCase) -> Effort:
    return QUICK if case.quick else FULL


def _power(case: OracleCase) -> tuple[FrequencyOracle, Effort]:
    """The variant and the effort of a power check against it; skip it without one or when quick."""
    if case.variant is None:
        raise unittest.SkipTest("no variant given")
    if not _effort(case).power:
        raise unittest.SkipTest("quick: no power checks")
    return case.variant, _effort(case)


def _expect(condition: Any, message: str) -> None:
    """Raise ``AssertionError(message)`` unless ``condition`` (not ``assert``: checks run under -O too)."""
    if not condition:
        raise AssertionError(message)


def _raises(kind: type[Exception], match: str, what: str, call: Callable[[], Any]) -> None:
    """``call()`` must raise ``kind`` with ``match`` in its message."""
    try:
        call()
    except kind as exc:
        _expect(match in str(exc), f"{what} raised {type(exc).__name__} without {match!r} in its message: {exc}")
        return
    except Exception as exc:
        raise AssertionError(f"{what} raised {type(exc).__name__} instead of {kind.__name__}: {exc}") from exc
    raise AssertionError(f"{what} was not refused (expected {kind.__name__})")


def _check(fn: Callable[[OracleCase], None]) -> Callable[[OracleCase | FrequencyOracle], None]:
    """Register a check: it takes a case or an oracle, and its failures name it and the case."""

    @functools.wraps(fn)
    def run(case: OracleCase | FrequencyOracle) -> None:
        case = as_case(case)
        try:
            fn(case)
        except unittest.SkipTest:
            raise
        except AssertionError as exc:
            raise AssertionError(f"{fn.__name__} failed for {case.name}: {exc}") from None
        except Exception as exc:
            raise AssertionError(f"{fn.__name__} failed for {case.name}: {type(exc).__name__}: {exc}") from exc

    CHECKS.append(run)
    return run


def _users(data: tuple[Any, ...]) -> tuple[Any, ...]:
    from pldp.experiments.paths import users_of

    return users_of(*data)


# ------------------------------------------------------------------------------ construction
@_check
def check_refusals(case: OracleCase) -> None:
    """Every bad construction of the case raises a :class:`pldp.PLDPError` with a message."""
    if not case.bad:
        raise unittest.SkipTest("no bad constructions given")
    for i, bad in enumerate(case.bad):
        try:
            bad()
        except PLDPError as exc:
            _expect(str(exc), f"bad construction #{i} raised {type(exc).__name__} without a message")
            continue
        except Exception as exc:
            raise AssertionError(f"bad construction #{i} raised {type(exc).__name__}, not a PLDPError: {exc}") from exc
        raise AssertionError(f"bad construction #{i} was accepted")


@_check
def check_fingerprint(case: OracleCase) -> None:
    """Parameters identify the oracle: JSON-able params whose hash is the fingerprint; an oracle
    built again (or a copy) is equal, hashes equal and has the same fingerprint; the variant differs."""
    oracle = case.oracle
    _expect(is_fingerprint(oracle.fingerprint), f"not a fingerprint: {oracle.fingerprint!r}")
    json.dumps(canonical(oracle.params()))
    _expect(fingerprint(oracle.params()) == oracle.fingerprint, "the fingerprint is not the hash of params()")
    again = case.rebuild()
    if again is None:
        again = copy.deepcopy(oracle)
        again.__dict__.pop("fingerprint", None)  # recomputed from the copy's parameters
    _expect(again == oracle, f"an oracle built the same way is not equal: {again!r}")
    _expect(hash(again) == hash(oracle), "equal oracles hash differently")
    _expect(again.fingerprint == oracle.fingerprint, "an oracle built the same way has another fingerprint")
    if case.variant is not None:
        _expect(case.variant != oracle, "the variant is equal to the oracle")
        _expect(case.variant.fingerprint != oracle.fingerprint, "the variant has the oracle's fingerprint")


@_check
def check_params_round_trip(case: OracleCase) -> None:
    """The oracle rebuilt from its parameters (read back from JSON) is equal and runs the same sampler."""
    oracle = case.oracle
    rebuilt = from_params(oracle)
    if rebuilt is None:
        name = type(oracle).__name__
        raise unittest.SkipTest(f"{name} is neither registered nor defines from_params: no spec can name it")
    _expect(rebuilt == oracle, f"params rebuild another oracle: {rebuilt!r}")
    _expect(sampler_node(rebuilt) == sampler_node(oracle), "the rebuilt oracle runs another sampler")


# ----------------------------------------------------------------------------------- privacy
@_check
def check_privacy(case: OracleCase) -> None:
    """``privacy()`` returns a :class:`pldp.PrivacyCheck` that holds, with its interface."""
    rep = case.oracle.privacy()
    _expect(isinstance(rep, PrivacyCheck), f"privacy() returned a {type(rep).__name__}, not a PrivacyCheck")
    _expect(rep.holds is True, f"the privacy claim does not hold:\n{rep.summary()}")
    _expect(isinstance(rep.slack, float) and rep.slack >= -1e-12, f"slack {rep.slack!r}: not a float >= 0")
    # inf: ULDP, IPLDP with invertible items; LDP must be finite
    _expect(isinstance(rep.ldp_epsilon, float) and rep.ldp_epsilon > 0, f"ldp_epsilon {rep.ldp_epsilon!r}")
    _expect(rep.notion != "LDP" or rep.ldp_epsilon < math.inf, "an LDP claim with an infinite ldp_epsilon")
    text = rep.summary()
    _expect(isinstance(text, str) and "holds" in text and repr(rep), "summary() does not say whether it holds")


@_check
def check_privacy_map(case: OracleCase) -> None:
    """``privacy()`` states nothing the exact check of ``sampler()`` does not prove: the same notion
    at every channel, no budget below the sampler's, every budget and realised epsilon it states
    proven on the sampler's integers (:mod:`pldp.testing.privacy_map`)."""
    node = sampler_node(case.oracle)
    if node is None:
        raise unittest.SkipTest(f"no sampler description of {type(case.oracle).__name__}: no exact claims to compare")
    problems = privacy_map_disagreements(case.oracle.privacy(), node)
    shown = "\n".join(problems[:8]) + (f"\n... and {len(problems) - 8} more" if len(problems) > 8 else "")
    _expect(not problems, f"privacy() states what the exact check of sampler() does not prove:\n{shown}")


# ------------------------------------------------------------------------------------ audit
def _audit_node(case: OracleCase) -> Any:
    node = sampler_node(case.oracle)
    if node is None:
        raise unittest.SkipTest(f"no sampler description of {type(case.oracle).__name__}: nothing to audit against")
    return node


def _target(oracle: FrequencyOracle) -> Any:
    """The audit target of ``oracle``'s ``perturb``. For a memoized chain, whose ``perturb`` draws
    every user's permanent response afresh, the node audited is the chain's one-report channel
    (:meth:`pldp.channel.MemoNode.one_report`) with its claim :math:`\\varepsilon_1`."""
    from pldp.audit.targets import OracleTarget

    target = OracleTarget(oracle)
    node: Any = target.node
    if node.memoized:
        target.node = node.one_report()
    return target


def _resolution(test: Any, n: int) -> float:
    """Standard deviation of the observed log-ratio of a test's hit rates at ``n`` reports per input."""
    return float(np.sqrt((1 - test.p0) / (n * test.p0) + (1 - test.p1) / (n * max(test.p1, 1 / n))))


@_check
def check_audit_tight(case: OracleCase) -> None:
    """The optimal attack on every default pair audits ``perturb``: no audited bound above the
    pair's exact epsilon (joint confidence 0.99) nor above its claim (except PLDP-FEBSF's level,
    ERRATA FEBSF-6), and every bound within 5 standard deviations of what a correct sampler gives
    on average."""
    from pldp.audit import audit, default_pairs, optimal_test

    _audit_node(case)
    trials = _effort(case).audit_trials
    target = _target(case.oracle)
    res = audit(target, trials=trials, rng=case.rng("check_audit_tight"))
    each = res.alpha / len(res.rows)
    pairs = default_pairs(target.node)
    _expect(len(pairs) == len(res.rows) > 0, f"{len(res.rows)} audited pairs for {len(pairs)} default pairs")
    conf = f"joint confidence {res.confidence:g}, {trials:,} reports per input"
    for pair, row in zip(pairs, res.rows, strict=True):
        where = f"{row.secret} pair {row.pair}: audited epsilon {row.audited:.4f}"
        _expect(
            row.audited <= row.exact + 1e-12 and not row.deviates,
            f"{where} > exact {row.exact:.4f} of the stated channel ({conf}): the sampler does not follow its "
            f"parameters\n{res.table(max_rows=8)}",
        )
        if row.secret != "level" or target.level_claim is None:
            _expect(not row.flagged, f"{where} > claimed {row.claimed:.4f} ({conf})\n{res.table(max_rows=8)}")
        if math.isfinite(row.expected):
            sd = _resolution(optimal_test(target.node, pair, trials, each), trials)
            _expect(
                row.audited >= row.expected - 5 * sd,
                f"{where} < {row.expected:.4f} - 5 sd ({sd:.4f}): the audit is not tight\n{res.table(max_rows=8)}",
            )


@_check
def check_audit_flags_variant(case: OracleCase) -> None:
    """Power: reports drawn by the variant, audited against the oracle's channel, are caught:
    above the claim, or (where the claim has room, as padding's item-set budgets) above the exact
    channel."""
    from pldp.audit import audit

    _audit_node(case)
    variant, effort = _power(case)
    res = audit(
        _sampled_by(case.oracle, variant),
        pairs=effort.power_pairs,
        trials=effort.power_trials,
        rng=case.rng("check_audit_flags_variant"),
    )
    _expect(not res.faithful, f"the variant's reports pass for the oracle's (power):\n{res.table(max_rows=8)}")
    _expect(res.ok or res.flagged[0].claimed < res.flagged[0].audited, f"inconsistent flag:\n{res.table(max_rows=8)}")


def _sampled_by(oracle: FrequencyOracle, sampler: FrequencyOracle) -> Any:
    """An audit target with ``oracle``'s claims and channel and ``sampler``'s reports."""
    target = _target(oracle)
    drawn = _target(sampler)
    target.sample = drawn.sample
    return target


# ---------------------------------------------------------------------------- distribution
@_check
def check_per_user_matches_simulate(case: OracleCase) -> None:
    """The per-user path (``perturb`` + ``tally``) and ``simulate`` draw tallies of the same law
    (p >= 1e-3), and, given a variant, the same test tells the variant's ``simulate`` apart
    (p < 1e-3; :mod:`pldp.testing.distribution`; not when quick)."""
    oracle, data, variant = case.oracle, case.data, case.variant if _effort(case).power else None
    repeats = _effort(case).repeats
    rng = case.rng("check_per_user_matches_simulate")
    if not can_flatten(oracle.tally_type):
        raise unittest.SkipTest(f"no flattening of a {oracle.tally_type.__name__}: see pldp.testing.distribution")
    users = _users(data)
    per_user = np.array([flatten(oracle.tally(oracle.perturb(*users, rng))) for _ in range(repeats)])
    simulated = np.array([flatten(oracle.simulate(*data, rng)) for _ in range(repeats)])
    how = f"Welch and Brown-Forsythe tests of {per_user.shape[1]} tally coordinates over {repeats} repeats, Bonferroni"
    p = same_law_pvalue(per_user, simulated)
    _expect(p >= ALPHA, f"p = {p:.3g} < {ALPHA:g}: the per-user path and simulate differ in law ({how})")
    if variant is not None:
        other = np.array([flatten(variant.simulate(*data, rng)) for _ in range(repeats)])
        p = same_law_pvalue(per_user, other)
        _expect(p < ALPHA, f"p = {p:.3g} >= {ALPHA:g}: the test does not tell the variant apart (power; {how})")


# ------------------------------------------------------------------------------ estimation
def _estimates(result: Any) -> list[Estimate]:
    if isinstance(result, EstimateSet):
        return list(result)
    _expect(isinstance(result, Estimate), f"estimate returned a {type(result).__name__}, not an Estimate")
    return [result]


@_check
def check_estimation_methods(case: OracleCase) -> None:
    """:func:`pldp.estimate` takes every method in ``oracle.methods`` (the standard ones first) and
    returns estimates whose intervals contain the point at every level, on the simplex when they
    say so; the default is ``unbiased``; an unknown method is refused."""
    oracle = case.oracle
    tally = oracle.simulate(*case.data, case.rng("check_estimation_methods"))
    _expect(oracle.methods[:3] == STANDARD_METHODS, f"methods {oracle.methods} do not start with {STANDARD_METHODS}")
    for method in oracle.methods:
        for est in _estimates(estimate(oracle, tally, method)):
            _expect(est.method == method and est.n == tally.n, f"{method}: method {est.method!r} and n {est.n}")
            shape = (len(est.domain),)
            _expect(est.frequencies.shape == est.variance.shape == shape, f"{method}: shapes differ from {shape}")
            for level in (0.5, 0.95, 0.999):
                lo, hi = est.ci(level)
                outside = np.flatnonzero((lo > est.frequencies) | (est.frequencies > hi))
                _expect(
                    outside.size == 0,
                    f"{method}: the {level:g} interval does not contain the point at items {outside[:5].tolist()}",
                )
            if est.on_simplex:
                f, (lo, hi) = est.frequencies, est.ci()
                _expect(f.min() >= 0 and abs(f.sum() - 1.0) <= 1e-9, f"{method}: on_simplex but sums to {f.sum()!r}")
                _expect(np.all(lo >= 0) and np.all(hi <= 1), f"{method}: on_simplex but an interval leaves [0, 1]")
    default = _estimates(estimate(oracle, tally))
    _expect(all(e.method == "unbiased" for e in default), "the default method is not 'unbiased'")
    _raises(EstimationError, "unknown method", "an unknown method", lambda: estimate(oracle, tally, "no-such-method"))


# --------------------------------------------------------------------------------- tallies
@_check
def check_tally_roundtrip(case: OracleCase) -> None:
    """Tallies merge (``+``) by adding every count, and round-trip through JSON (``to_dict`` /
    ``from_dict`` / ``load_tally``)."""
    oracle = case.oracle
    rng = case.rng("check_tally_roundtrip")
    a, b = oracle.simulate(*case.data, rng), oracle.simulate(*case.data, rng)
    merged = a + b
    _expect(merged.n == a.n + b.n, f"merged n {merged.n} != {a.n} + {b.n}")
    _expect(merged == a.merge(b) == b.merge(a), "a + b, a.merge(b) and b.merge(a) differ")
    if can_flatten(type(merged)):
        _expect(np.array_equal(flatten(merged), flatten(a) + flatten(b)), "merging does not add the counts")
    for t in (a, merged):
        text = json.dumps(t.to_dict())
        _expect(type(t).from_dict(json.loads(text), source=oracle) == t, "the tally does not round-trip through JSON")
        _expect(oracle.load_tally(json.loads(text)) == t, "load_tally does not read the tally's JSON back")


def _foreign(case: OracleCase, ours: Any) -> Any:
    """A tally of another oracle: the variant's, or ours relabelled with another fingerprint."""
    if case.variant is not None:
        theirs = case.variant.simulate(*case.data, case.rng("check_refuses_foreign_tally/variant"))
        _expect(theirs.fingerprint == case.variant.fingerprint, "the variant's tally lacks its fingerprint")
        return theirs
    data = ours.to_dict()
    data["fingerprint"] = fingerprint({"another oracle than": case.oracle.fingerprint})
    return type(ours).from_dict(data)


@_check
def check_refuses_foreign_tally(case: OracleCase) -> None:
    """A tally of another oracle (the variant's, else a relabelled one) is refused by
    :func:`pldp.estimate`, by merging and by ``load_tally``."""
    oracle = case.oracle
    ours = oracle.simulate(*case.data, case.rng("check_refuses_foreign_tally"))
    _expect(ours.fingerprint == oracle.fingerprint, "the tally does not carry the oracle's fingerprint")
    theirs = _foreign(case, ours)
    _raises(
        EstimationError, "does not come from", "estimating another oracle's tally", lambda: estimate(oracle, theirs)
    )
    _raises(TallyError, "different mechanisms or protocols", "merging another oracle's tally", lambda: ours + theirs)
    _raises(
        TallyError, "does not come from", "loading another oracle's tally", lambda: oracle.load_tally(theirs.to_dict())
    )


# ------------------------------------------------------------------------------- randomness
def _same(a: Any, b: Any) -> bool:
    """Same bytes: arrays of one dtype and content, dataclasses (reports) field by field."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if hasattr(a, "__dataclass_fields__") and not hasattr(a, "fingerprint"):
        return type(a) is type(b) and all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@_check
def check_seeded(case: OracleCase) -> None:
    """The same seed gives the same bytes (``perturb``) and the same tally (``simulate``); another
    seed gives other reports."""
    oracle, data = case.oracle, case.data
    users = _users(data)
    seed = int(case.rng("check_seeded").integers(1 << 62))

    def rng(offset: int = 0) -> np.random.Generator:
        return np.random.default_rng(seed + offset)

    first = oracle.perturb(*users, rng())
    _expect(_same(first, oracle.perturb(*users, rng())), "perturb gives other reports with the same seed")
    _expect(not _same(first, oracle.perturb(*users, rng(1))), "perturb gives the same reports with another seed")
    _expect(
        oracle.simulate(*data, rng()) == oracle.simulate(*data, rng()),
        "simulate gives another tally with the same seed",
    )

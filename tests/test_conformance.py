"""Conformance suite: every public mechanism and protocol through the same checks.

In the manner of scikit-learn's ``test_common.py``: :data:`CASES` lists every public
:class:`pldp.FrequencyOracle` (a way to build it, the true data of a small population, a
*variant* of the same kind with other parameters, and constructions with bad parameters), and
each test below runs on every case. Adding an oracle to :data:`CASES` gives it every check:

* construction validates bad parameters (a ``PLDPError`` naming the problem);
* ``privacy()`` returns a :class:`pldp.PrivacyCheck` (``holds``, ``slack``, ``ldp_epsilon``,
  ``summary()``) and holds;
* the per-user path (``perturb`` + ``tally``) and ``simulate`` agree in distribution (Welch
  t-tests of the means and Brown-Forsythe tests of the spreads of every tally coordinate over
  repeats, Bonferroni-combined at a family-wise significance of 1e-3), and the same test tells
  the oracle from its variant (power check);
* ``pldp.estimate`` takes every method in ``oracle.methods`` (the standard ``unbiased``,
  ``norm_sub`` and ``mle`` first) and returns an :class:`pldp.Estimate` (MPLDP: an
  :class:`pldp.EstimateSet`) whose intervals contain the point, on the simplex when it says so;
* tallies merge (``+``) by adding, and round-trip through JSON;
* a tally of another oracle (the variant) is refused by ``estimate``, ``merge`` and ``from_dict``;
* the same seed gives the same bytes; parameters give a stable fingerprint.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import stats

import pldp
from pldp.audit import audit, default_pairs, optimal_test
from pldp.audit.targets import OracleTarget
from pldp.experiments.paths import users_of
from pldp.oracle import STANDARD_METHODS, FrequencyOracle
from pldp.protocols import (
    APLDP,
    FEBSF,
    MPLDP,
    PBP,
    PPDA,
    RCF,
    FEBSFTally,
    GroupedTally,
    MPLDPTally,
    PaddingSampling,
)

#: Family-wise significance of the distribution test (Bonferroni over coordinates and tests).
ALPHA = 1e-3
#: Repeats of each path in the distribution test.
REPEATS = 150
#: How much larger the budgets of each case's variant are: the power check must detect this.
VARIANT = 1.25

LEVELS = [0.5, 1.0, 2.0]
CELLS = np.array([[300, 200, 100, 50, 50], [250, 150, 100, 100, 50], [200, 200, 100, 100, 100]])
COUNTS = np.array([400, 250, 150, 100, 100])
BUDGETS = pldp.ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 2.0])
FIG1 = pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])


def _itemsets() -> pldp.ItemSets:
    rng = np.random.default_rng(3)
    sets = [rng.choice(5, size=rng.integers(0, 4), replace=False).tolist() for _ in range(1500)]
    return pldp.ItemSets.from_lists(sets, 5)


def _mpldp_users() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    values = np.stack([rng.integers(0, 3, 1500), rng.integers(0, 4, 1500)], axis=1)
    return values, rng.integers(0, 3, size=values.shape)


@dataclass(frozen=True)
class Case:
    """One oracle under test: how to build it, its data, a variant and bad constructions."""

    make: Callable[[], FrequencyOracle]
    data: Callable[[], tuple[Any, ...]]
    variant: Callable[[], FrequencyOracle]
    bad: tuple[Callable[[], Any], ...]


def _mechanism(make: Callable[[float], FrequencyOracle], bad: tuple[Callable[[], Any], ...]) -> Case:
    return Case(lambda: make(1.0), lambda: (COUNTS,), lambda: make(VARIANT), bad)


def _idue(model: str, rule: str) -> Case:
    def make(scale: float) -> FrequencyOracle:
        return pldp.IDUE(pldp.ItemBudgets.from_array(BUDGETS.epsilons * scale), model, rule)  # type: ignore[arg-type]

    return _mechanism(
        make,
        (lambda: pldp.IDUE(BUDGETS, "opt3"), lambda: pldp.IDUE(BUDGETS, pair_rule="max"), lambda: pldp.IDUE(FIG1)),
    )


def _padding(base: Callable[[float], pldp.UnaryEncoding]) -> Case:
    return Case(
        lambda: PaddingSampling(base(1.0), 2),
        lambda: (_itemsets(),),
        lambda: PaddingSampling(base(VARIANT), 2),
        (lambda: PaddingSampling(base(1.0), 0), lambda: PaddingSampling(pldp.KRR(1.0, 5), 2)),  # type: ignore[arg-type]
    )


def _leveled(make: Callable[[list[float]], FrequencyOracle], bad: tuple[Callable[[], Any], ...]) -> Case:
    return Case(lambda: make(LEVELS), lambda: (CELLS,), lambda: make([VARIANT * e for e in LEVELS]), bad)


def _febsf(oracle: str) -> Case:
    return _leveled(
        lambda lv: FEBSF(lv, 0.5, 5, oracle=oracle),  # type: ignore[arg-type]
        (lambda: FEBSF(LEVELS, 0.0, 5), lambda: FEBSF([1.0, 0.5], 0.5, 5), lambda: FEBSF(LEVELS, 0.5, 5, oracle="grr")),  # type: ignore[arg-type]
    )


RHO = [0.5, 0.3, 0.2]
LEVELED_BAD: tuple[Callable[[], Any], ...] = (lambda: RCF([0.0, 1.0], 5), lambda: RCF(LEVELS, 1))

CASES: dict[str, Case] = {
    "krr": _mechanism(lambda e: pldp.KRR(e, 5), (lambda: pldp.KRR(0.0, 5), lambda: pldp.KRR(1.0, 1))),
    "urr": _mechanism(
        lambda e: pldp.URR(e, np.array([True, True, True, False, False])),
        (lambda: pldp.URR(1.0, [1, 1, 0]), lambda: pldp.URR(-1.0, np.array([True, False]))),
    ),
    "iprr": _mechanism(
        lambda e: pldp.IPRR(pldp.ItemBudgets.from_array(FIG1.epsilons * e)),
        (lambda: pldp.IPRR(pldp.ItemBudgets.from_array([np.inf, np.inf])), lambda: pldp.IPRR([0.1, 0.2])),  # type: ignore[arg-type]
    ),
    "rappor": _mechanism(
        lambda e: pldp.RAPPOR(e, 5), (lambda: pldp.RAPPOR(float("nan"), 5), lambda: pldp.RAPPOR(1, 0))
    ),
    "oue": _mechanism(lambda e: pldp.OUE(e, 5), (lambda: pldp.OUE(0, 5), lambda: pldp.OUE(1.0, 2.5))),
    **{f"idue-{m}-{r}": _idue(m, r) for m in ("opt0", "opt1", "opt2") for r in ("min", "avg")},
    "idue-ps": _padding(lambda e: pldp.IDUE(pldp.ItemBudgets.from_array(BUDGETS.epsilons * e), same_level="always")),
    "oue-ps": _padding(lambda e: pldp.OUE(e, 5)),
    "rappor-ps": _padding(lambda e: pldp.RAPPOR(e, 5)),
    **{f"febsf-{o}": _febsf(o) for o in ("krr", "rappor", "oue")},
    "rcf": _leveled(lambda lv: RCF(lv, 5, oracle="oue"), LEVELED_BAD),
    "apldp": _leveled(lambda lv: APLDP(lv, 5), (lambda: APLDP(LEVELS, 5, candidates=("grr",)), *LEVELED_BAD)),
    "pbp": _leveled(lambda lv: PBP(lv, RHO, 5), (lambda: PBP(LEVELS, [0.5, 0.6, 0.1], 5), *LEVELED_BAD)),
    "ppda": _leveled(
        lambda lv: PPDA(lv, 5), (lambda: PPDA(LEVELS, 5, extra_bits=0), lambda: PPDA(LEVELS, 5, oracle="krr"))
    ),  # type: ignore[arg-type]
    "mpldp": Case(
        lambda: MPLDP([3, 4], [2.0, 3.0]),
        _mpldp_users,
        lambda: MPLDP([3, 4], [VARIANT * 2.0, VARIANT * 3.0]),
        (lambda: MPLDP([3, 1], [2.0, 3.0]), lambda: MPLDP([3, 4], [2.0]), lambda: MPLDP([3], [1.0], [0.5, 1.5])),
    ),
}

_BUILT: dict[str, tuple[FrequencyOracle, FrequencyOracle, tuple[Any, ...]]] = {}


def _built(name: str) -> tuple[FrequencyOracle, FrequencyOracle, tuple[Any, ...]]:
    """The oracle, its variant and its data, built once per process (IDUE's solver is not free)."""
    if name not in _BUILT:
        case = CASES[name]
        _BUILT[name] = (case.make(), case.variant(), case.data())
    return _BUILT[name]


def _flat(tally: Any) -> np.ndarray:
    """Every count a tally holds, as one vector (for unary PLDP-FEBSF: users and ones per reported level and bit)."""
    if isinstance(tally, pldp.Tally):
        return np.concatenate([[tally.n], tally.counts])
    if isinstance(tally, GroupedTally):
        return np.concatenate([_flat(t) for t in tally.tallies])
    if isinstance(tally, MPLDPTally):
        return np.concatenate([tally.sizes.ravel(), *(c.ravel() for c in tally.counts)])
    if isinstance(tally, FEBSFTally):
        if tally.kind == "direct":
            return tally.cells.ravel()
        patterns, level, count = tally.rows
        bits = np.unpackbits(patterns, axis=1, count=tally.d) * count[:, None]
        per_level = np.stack([bits[level == lv].sum(axis=0) for lv in range(tally.t)])
        return np.concatenate([tally.level_counts, per_level.ravel()])
    raise TypeError(type(tally))


def _per_user(oracle: FrequencyOracle, data: tuple[Any, ...], rng: np.random.Generator) -> Any:
    return oracle.tally(oracle.perturb(*users_of(*data), rng))


def _pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Bonferroni-combined p-value that two samples of tally vectors (rows) share their law.

    Per coordinate: Welch's t-test of the means and the Brown-Forsythe test of the spreads.
    Coordinates constant in both samples must be equal (else p = 0).
    """
    pvals = []
    for j in range(a.shape[1]):
        x, y = a[:, j].astype(float), b[:, j].astype(float)
        if x.std() == 0 and y.std() == 0:
            pvals.append(1.0 if x[0] == y[0] else 0.0)
            continue
        pvals.append(stats.ttest_ind(x, y, equal_var=False).pvalue)
        pvals.append(stats.levene(x, y, center="median").pvalue)
    return float(min(1.0, min(pvals) * len(pvals)))


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> str:
    return request.param


# ------------------------------------------------------------------------------ construction
def test_bad_parameters_are_refused(case: str) -> None:
    """Every bad construction raises a PLDPError with a message."""
    for bad in CASES[case].bad:
        with pytest.raises(pldp.PLDPError) as info:
            bad()
        assert str(info.value)


def test_parameters_identify_the_oracle(case: str) -> None:
    """Equal parameters: equal objects and fingerprints; the variant differs; params are JSON."""
    oracle, variant, _ = _built(case)
    again = CASES[case].make()
    assert again == oracle and hash(again) == hash(oracle) and again.fingerprint == oracle.fingerprint
    assert variant != oracle and variant.fingerprint != oracle.fingerprint
    assert pldp.fingerprint.is_fingerprint(oracle.fingerprint)
    json.dumps(pldp.fingerprint.canonical(oracle.params()))


# ----------------------------------------------------------------------------------- privacy
def test_privacy_report_interface_and_claim_holds(case: str) -> None:
    oracle, _, _ = _built(case)
    rep = oracle.privacy()
    assert isinstance(rep, pldp.PrivacyCheck)
    assert rep.holds is True
    assert isinstance(rep.slack, float) and rep.slack >= -1e-12
    assert isinstance(rep.ldp_epsilon, float) and rep.ldp_epsilon > 0  # inf: ULDP, IPLDP with invertible items
    if rep.notion == "LDP":
        assert rep.ldp_epsilon < np.inf
    text = rep.summary()
    assert isinstance(text, str) and "holds" in text and repr(rep)


# ----------------------------------------------------------------------------------- audit
#: Reports per input of the conformance audit: a few seconds for every case together.
AUDIT_TRIALS = 20_000


class _SampledBy(OracleTarget):
    """The claims and channel of one oracle, the reports of another (a sampler that does not
    follow its parameters)."""

    def __init__(self, oracle: FrequencyOracle, sampler: FrequencyOracle) -> None:
        super().__init__(oracle)
        self._sampler = OracleTarget(sampler)

    def sample(self, inp: Any, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return self._sampler.sample(inp, n, rng)


def _resolution(test: Any, n: int) -> float:
    """Standard deviation of the observed log-ratio of a test's hit rates at ``n`` reports per input."""
    return float(np.sqrt((1 - test.p0) / (n * test.p0) + (1 - test.p1) / (n * max(test.p1, 1 / n))))


def test_audit_of_the_running_sampler_is_within_its_exact_channel_and_tight(case: str) -> None:
    """The optimal attack on every default pair: no audited bound above the pair's exact epsilon
    (joint confidence 0.99) nor above its claim (except PLDP-FEBSF's level, ERRATA FEBSF-6), and
    every bound within 5 standard deviations of what a correct sampler gives on average."""
    oracle, _, _ = _built(case)
    res = audit(oracle, trials=AUDIT_TRIALS, rng=np.random.default_rng(11))
    target = OracleTarget(oracle)
    each = res.alpha / len(res.rows)
    pairs = default_pairs(target.node)
    assert len(pairs) == len(res.rows) > 0
    for pair, row in zip(pairs, res.rows, strict=True):
        assert row.audited <= row.exact + 1e-12 and not row.deviates, row
        if row.secret != "level" or target.level_claim is None:
            assert not row.flagged, row
        if math.isfinite(row.expected):
            test = optimal_test(target.node, pair, AUDIT_TRIALS, each)
            assert row.audited >= row.expected - 5 * _resolution(test, AUDIT_TRIALS), row


def test_audit_flags_a_sampler_that_runs_the_variants_budgets(case: str) -> None:
    """Power: reports drawn by the variant (budgets 1.25 times larger) audited against the oracle's
    channel are caught: above the claim, or (where the claim has room, as padding's item-set
    budgets) above the exact channel."""
    oracle, variant, _ = _built(case)
    res = audit(_SampledBy(oracle, variant), pairs=12, trials=100_000, rng=np.random.default_rng(12))
    assert not res.faithful, res.table()
    assert res.ok or res.flagged[0].claimed < res.flagged[0].audited


# ------------------------------------------------------------------------- distribution
@pytest.mark.slow
def test_per_user_path_and_simulate_agree_in_distribution(case: str) -> None:
    """Same law (p >= 1e-3, Bonferroni), and the variant's simulation is told apart (p < 1e-3)."""
    oracle, variant, data = _built(case)
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    per_user = np.array([_flat(_per_user(oracle, data, rng)) for _ in range(REPEATS)])
    simulated = np.array([_flat(oracle.simulate(*data, rng)) for _ in range(REPEATS)])
    other = np.array([_flat(variant.simulate(*data, rng)) for _ in range(REPEATS)])
    assert _pvalue(per_user, simulated) >= ALPHA
    assert _pvalue(per_user, other) < ALPHA  # power check


# --------------------------------------------------------------------------------- estimation
def _estimates(result: Any) -> list[pldp.Estimate]:
    if isinstance(result, pldp.EstimateSet):
        return list(result)
    assert isinstance(result, pldp.Estimate)
    return [result]


def test_every_method_gives_an_estimate_whose_interval_contains_it(case: str) -> None:
    oracle, _, data = _built(case)
    tally = oracle.simulate(*data, np.random.default_rng(11))
    assert oracle.methods[:3] == STANDARD_METHODS
    for method in oracle.methods:
        for est in _estimates(pldp.estimate(oracle, tally, method)):
            assert est.method == method and est.n == tally.n
            assert est.frequencies.shape == est.variance.shape == (len(est.domain),)
            for level in (0.5, 0.95, 0.999):
                lo, hi = est.ci(level)
                assert np.all(lo <= est.frequencies) and np.all(est.frequencies <= hi), (method, level)
            if est.on_simplex:
                assert est.frequencies.min() >= 0 and est.frequencies.sum() == pytest.approx(1.0, abs=1e-9)
                assert np.all(est.ci()[0] >= 0) and np.all(est.ci()[1] <= 1)
    default = _estimates(pldp.estimate(oracle, tally))
    assert all(e.method == "unbiased" for e in default)
    with pytest.raises(pldp.EstimationError, match="unknown method"):
        pldp.estimate(oracle, tally, "no-such-method")


# ------------------------------------------------------------------------------- tallies
def test_tallies_merge_by_adding_and_round_trip_through_json(case: str) -> None:
    oracle, _, data = _built(case)
    rng = np.random.default_rng(12)
    a, b = oracle.simulate(*data, rng), oracle.simulate(*data, rng)
    merged = a + b
    assert merged.n == a.n + b.n and merged == a.merge(b) == b.merge(a)
    np.testing.assert_array_equal(_flat(merged), _flat(a) + _flat(b))
    for t in (a, merged):
        text = json.dumps(t.to_dict())
        assert type(t).from_dict(json.loads(text), source=oracle) == t
        assert oracle.load_tally(json.loads(text)) == t


def test_a_tally_of_another_oracle_is_refused(case: str) -> None:
    oracle, variant, data = _built(case)
    rng = np.random.default_rng(13)
    ours, theirs = oracle.simulate(*data, rng), variant.simulate(*data, rng)
    assert ours.fingerprint == oracle.fingerprint and theirs.fingerprint == variant.fingerprint
    with pytest.raises(pldp.EstimationError, match="does not come from"):
        pldp.estimate(oracle, theirs)
    with pytest.raises(pldp.TallyError, match="different mechanisms or protocols"):
        ours + theirs
    with pytest.raises(pldp.TallyError, match="does not come from"):
        oracle.load_tally(theirs.to_dict())


# ------------------------------------------------------------------------------- randomness
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if hasattr(a, "__dataclass_fields__") and not hasattr(a, "fingerprint"):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_same_seed_same_bytes(case: str) -> None:
    oracle, _, data = _built(case)
    users = users_of(*data)
    first = oracle.perturb(*users, np.random.default_rng(5))
    assert _same(first, oracle.perturb(*users, np.random.default_rng(5)))
    assert not _same(first, oracle.perturb(*users, np.random.default_rng(6)))
    assert oracle.simulate(*data, np.random.default_rng(5)) == oracle.simulate(*data, np.random.default_rng(5))


def test_fingerprints_are_the_same_in_another_process() -> None:
    """A fingerprint hashes parameters, not object identity or process state."""
    names = ["krr", "idue-opt1-avg", "febsf-oue", "mpldp", "rappor-ps"]
    code = (
        "import sys; sys.path.insert(0, 'tests'); import test_conformance as t;"
        f"print(' '.join(t.CASES[n].make().fingerprint for n in {names!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=".")
    assert out.stdout.split() == [_built(n)[0].fingerprint for n in names]


def test_fingerprints_do_not_change_across_versions() -> None:
    """Pinned values: a change here changes every stored tally's identity, so make it on purpose."""
    krr = pldp.KRR(1.0, 5)
    # the thresholds the clients run are part of the identity (see PINNED): W = ceil(2^32 / (e + 4)), K = 2^32 - 5 W
    assert krr.params()["keep_threshold"] == 1098489826 and krr.params()["weights"].tolist() == [639295494] * 5
    assert krr.fingerprint == PINNED["krr"]
    assert pldp.OUE(1.0, 5).fingerprint == PINNED["oue"]
    assert RCF(LEVELS, 5).fingerprint == PINNED["rcf"]


PINNED = {
    # direct-encoding fingerprints changed with the 2^-32 grid thresholds (840a1e8): the params of
    # KRR, URR, IPRR now include ``keep_threshold`` and ``weights``; before: f1d3bea2bcae931757292e52b8797690
    "krr": "64016c300942d325f60d548000e8de62",
    "oue": "131bd707e0ebf1062387778c3f14e90b",
    "rcf": "8530807191ae9cc636846e5984a0facc",
}

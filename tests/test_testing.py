"""``pldp.testing``: the battery passes every shipped oracle with its defaults, and catches bugs.

Each buggy oracle below is checked with fixed seeds (the case seed is the crc32 of the oracle's
fingerprint), so every outcome here is the same in every run.
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys
import unittest
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.testing import (
    CHECKS,
    OracleCase,
    check_audit_flags_variant,
    check_audit_tight,
    check_oracle,
    check_per_user_matches_simulate,
    check_privacy,
    check_privacy_map,
    default_data,
    flatten,
    parametrize_with_checks,
    standard_cases,
)

CASES = standard_cases()
N_CHECKS = len(CHECKS)


def _failed(info: pytest.ExceptionInfo[AssertionError]) -> list[str]:
    """The names of the checks a ``check_oracle`` failure lists."""
    return [line.split(" failed for ")[0] for line in str(info.value).splitlines()[1:] if " failed for " in line]


# ------------------------------------------------------------------------ every shipped oracle
@pytest.mark.parametrize("name", list(CASES))
def test_check_oracle_passes_every_shipped_oracle_with_default_data(name: str) -> None:
    """No argument but the oracle and its variant: the default data of its kind, every check passes
    (the refusals are skipped, as no bad construction is given)."""
    case = CASES[name]
    results = check_oracle(case.oracle, variant=case.variant)
    assert results == {check.__name__: "passed" for check in CHECKS} | {
        "check_refusals": "skipped: no bad constructions given"
    }


def test_check_oracle_needs_nothing_but_the_oracle() -> None:
    results = check_oracle(pldp.KRR(1.0, 5))
    assert results["check_audit_flags_variant"] == "skipped: no variant given"
    assert results["check_per_user_matches_simulate"] == "passed"
    quick = check_oracle(pldp.KRR(1.0, 5), variant=pldp.KRR(1.25, 5), quick=True)
    assert quick["check_audit_flags_variant"] == "skipped: quick: no power checks"


def test_default_data_follow_the_kind_of_oracle() -> None:
    """Counts for mechanisms, item-sets for padding, a (level, item) table for leveled protocols,
    values and levels for MPLDP; the same data for the same seed."""
    (counts,) = default_data(pldp.OUE(1.0, 7))
    assert counts.shape == (7,) and counts.sum() == 1000 and np.all(np.diff(counts) <= 0)
    (sets,) = default_data(CASES["oue-ps"].oracle, seed=1)
    assert isinstance(sets, pldp.ItemSets) and sets.n == 1500 and sets.sizes.max() == 3
    assert np.array_equal(sets.indices, default_data(CASES["oue-ps"].oracle, seed=1)[0].indices)
    (cells,) = default_data(CASES["febsf-oue"].oracle)
    assert cells.shape == (3, 5) and cells.sum() == 1998
    values, levels = default_data(CASES["mpldp"].oracle)
    assert values.shape == levels.shape == (1500, 2) and values[:, 1].max() == 3 and levels.max() == 2


# ---------------------------------------------------------------------------- buggy oracles
class ClaimsOneRunsTwo(pldp.KRR):
    """States epsilon = 1 (parameters, privacy check, simulate), samples at epsilon = 2."""

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        return pldp.KRR(2.0, self.d).perturb(x, rng)


def test_a_krr_that_samples_at_epsilon_2_while_claiming_1_fails() -> None:
    """The issue's acceptance test: the distribution test (p < 1e-3) and the audit (the sampler
    leaks above the exact channel, joint confidence 0.99) both catch it; the exact privacy check
    of the stated parameters cannot, and passes."""
    cheat = ClaimsOneRunsTwo(1.0, 5)
    with pytest.raises(AssertionError) as info:
        check_oracle(cheat)
    assert _failed(info) == ["check_audit_tight", "check_per_user_matches_simulate"]
    text = str(info.value)
    assert text.startswith(f"2 of {N_CHECKS} checks failed for KRR(epsilon=1, d=5):")
    assert "check_per_user_matches_simulate failed for KRR(epsilon=1, d=5): p = " in text and "< 0.001" in text
    assert "> exact 1.0000 of the stated channel (joint confidence 0.99" in text
    check_privacy(cheat)
    with pytest.raises(AssertionError, match=r"^check_audit_tight failed for KRR\(epsilon=1, d=5\): item pair"):
        check_audit_tight(cheat)
    with pytest.raises(AssertionError, match=r"p = \S+ < 0\.001: the per-user path and simulate differ"):
        check_per_user_matches_simulate(OracleCase(cheat, data=(np.array([400, 250, 150, 100, 100]),), quick=True))


class ClaimsHalfOfItsSampler(pldp.KRR):
    """Samples at its epsilon (parameters, sampler, perturb), but privacy() states half of it."""

    def privacy(self) -> pldp.PrivacyCheck:
        return pldp.KRR(self.epsilon / 2, self.d).privacy()


def test_a_privacy_map_stronger_than_the_sampler_fails() -> None:
    """privacy() holds by its own numbers, so check_privacy passes; the map of the exact claims of the
    sampler (budget 1 on every output, realised ln((W + K) / W) just below it) does not prove 0.5."""
    cheat = ClaimsHalfOfItsSampler(1.0, 5)
    with pytest.raises(AssertionError) as info:
        check_oracle(cheat, checks=[check_privacy, check_privacy_map])
    assert _failed(info) == ["check_privacy_map"]
    text = str(info.value)
    assert text.startswith("1 of 2 checks failed for KRR(epsilon=1, d=5):")
    assert "check_privacy_map failed for KRR(epsilon=1, d=5): privacy() states what the exact check" in text
    assert "root: output 0 states epsilon 0.5 where the sampler claims 1 (stronger than the exact claim)" in text
    assert "root: output 0 (+4): epsilon 0.5 is not proven exactly (the exact log-ratio is 0.99999999" in text
    assert "root: output 0: realised epsilon 0.49999999" in text
    assert "is below the exact log-ratio 0.99999999" in text and "by more than rounding" in text


class UnderstatesItsLeak(pldp.OUE):
    """States OUE's budgets, but realised epsilons 1e-9 below the sampler's."""

    def privacy(self) -> pldp.PrivacyCheck:
        rep = super().privacy()
        return dataclasses.replace(rep, realised=rep.realised - 1e-9)


class ComposesAttributesByMax(pldp.protocols.MPLDP):
    """Each user runs every attribute, yet privacy() composes them as if she ran one."""

    def privacy(self) -> pldp.PrivacyCheck:
        rep = super().privacy()
        return pldp.privacy.ComposedPrivacy(rep.notion, dict(rep.parts), "max")


class HidesItsLevelBetter(pldp.protocols.FEBSF):
    """PLDP-FEBSF whose privacy() states the level's worst case 1e-9 below the whole report's."""

    def privacy(self) -> Any:
        rep = super().privacy()
        return dataclasses.replace(rep, level=dataclasses.replace(rep.level, worst_case=rep.level.worst_case - 1e-9))


class NoSampler(pldp.KRR):
    def sampler(self) -> Any:
        raise NotImplementedError("no sampler")


def test_the_privacy_map_check_catches_a_small_understatement_and_a_wrong_composition() -> None:
    """1e-9 below the exact log-ratio is far more than the float map's rounding (2**-40), for a pair of
    items and for PLDP-FEBSF's level; a sum composed by max understates the whole report's epsilon;
    without a sampler there is nothing to compare."""
    with pytest.raises(
        AssertionError,
        match=r"items 0 vs 1: realised epsilon 0\.99994\d+ is below the exact log-ratio 0\.99994\d+ by more",
    ):
        check_privacy_map(UnderstatesItsLeak(1.0, 5))
    with pytest.raises(
        AssertionError, match=r"root: privacy\(\) composes its parts by 'max'; the sampler's parts compose by 'sum'"
    ):
        check_privacy_map(ComposesAttributesByMax([3, 4], [2.0, 3.0]))
    check_privacy_map(CASES["mpldp"])
    with pytest.raises(AssertionError, match=r"root: the level's worst case \S+ is below the exact log-ratio"):
        check_privacy_map(HidesItsLevelBetter([0.5, 1.0, 2.0], 0.5, 5, oracle="oue"))
    with pytest.raises(unittest.SkipTest, match="no sampler description of NoSampler"):
        check_privacy_map(NoSampler(1.0, 5))


class OffCentre(pldp.Estimate):
    """An estimate whose interval lies beside its point."""

    def ci(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = super().ci(level)
        return hi, 2 * hi - lo


class IntervalBeside(pldp.KRR):
    def estimate(self, tally: pldp.Tally, method: str = "unbiased", **options: Any) -> pldp.Estimate:
        est = super().estimate(tally, method, **options)
        return OffCentre(**{f.name: getattr(est, f.name) for f in dataclasses.fields(est)})


def test_an_interval_that_does_not_contain_the_point_fails() -> None:
    with pytest.raises(AssertionError) as info:
        check_oracle(IntervalBeside(1.0, 5))
    assert _failed(info) == ["check_estimation_methods"]
    assert "unbiased: the 0.5 interval does not contain the point at items [0, 1, 2, 3, 4]" in str(info.value)


class RoundedTally(pldp.Tally):
    """Writes its counts rounded to tens (a lossy "compression")."""

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "counts": [10 * round(c / 10) for c in self.counts.tolist()]}

    def _merge(self, other: pldp.Tally) -> RoundedTally:  # merged tallies stay of this class
        merged = super()._merge(other)
        return RoundedTally(merged.n, merged.counts, merged.kind, merged.fingerprint)


class LossyOUE(pldp.OUE):
    tally_type = RoundedTally

    def _tally(self, n: int, counts: np.ndarray) -> pldp.Tally:
        return RoundedTally(n, counts, self.family, self.fingerprint)


def test_a_tally_that_does_not_round_trip_through_json_fails() -> None:
    with pytest.raises(AssertionError) as info:
        check_oracle(LossyOUE(1.0, 5))
    assert _failed(info) == ["check_tally_roundtrip"]
    assert "the tally does not round-trip through JSON" in str(info.value)


class OwnGenerator(pldp.KRR):
    """Draws from a generator of its own (seeded by a count of its calls), not the caller's."""

    def __init__(self, epsilon: float, d: int) -> None:
        super().__init__(epsilon, d)
        self._calls = itertools.count()

    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        return super().perturb(x, np.random.default_rng(next(self._calls)))


def test_a_perturb_that_ignores_the_seed_fails() -> None:
    with pytest.raises(AssertionError) as info:
        check_oracle(OwnGenerator(1.0, 5))
    assert _failed(info) == ["check_seeded"]
    assert "perturb gives other reports with the same seed" in str(info.value)


class BrokenMLE(pldp.KRR):
    def estimate(self, tally: pldp.Tally, method: str = "unbiased", **options: Any) -> pldp.Estimate:
        if method == "mle":
            raise RuntimeError("solver diverged")
        return super().estimate(tally, method, **options)


def test_an_exception_inside_a_check_fails_that_check_by_name() -> None:
    with pytest.raises(AssertionError) as info:
        check_oracle(BrokenMLE(1.0, 5), quick=True)
    assert _failed(info) == ["check_estimation_methods"]
    assert "RuntimeError: solver diverged" in str(info.value)


def test_an_accepted_bad_construction_fails_the_refusals() -> None:
    with pytest.raises(AssertionError, match=r"check_refusals failed .*: bad construction #1 was accepted"):
        check_oracle(pldp.KRR(1.0, 5), bad=[lambda: pldp.KRR(0.0, 5), lambda: pldp.KRR(1.0, 5)], quick=True)


def test_a_variant_that_is_not_told_apart_fails_the_power_checks() -> None:
    """The power checks can fail: a variant with the oracle's own parameters."""
    case = OracleCase(pldp.KRR(1.0, 5), variant=pldp.KRR(1.0, 5))
    with pytest.raises(AssertionError) as info:
        check_oracle(case)
    assert _failed(info) == [
        "check_fingerprint",
        "check_audit_flags_variant",
        "check_per_user_matches_simulate",
        "check_refuses_foreign_tally",
    ]
    assert "the test does not tell the variant apart (power" in str(info.value)


# ------------------------------------------------------------------------------- the tool
def test_checks_that_do_not_apply_are_skipped() -> None:
    with pytest.raises(unittest.SkipTest, match="no variant given"):
        check_audit_flags_variant(pldp.KRR(1.0, 5))
    results = check_oracle(ClaimsOneRunsTwo(1.0, 5), checks=[CHECKS[2]])
    assert results == {
        "check_params_round_trip": "skipped: ClaimsOneRunsTwo is neither registered nor defines from_params: "
        "no spec can name it"
    }


def test_parametrize_with_checks_gives_readable_ids() -> None:
    mark = parametrize_with_checks([pldp.KRR(1.0, 5), OracleCase(pldp.OUE(1.0, 5), name="oue")])
    argnames, params = mark.mark.args
    assert argnames == ("case", "check") and len(params) == 2 * N_CHECKS
    ids = [p.id for p in params]
    assert ids[0] == "KRR(epsilon=1,d=5)-check_refusals" and ids[-1] == "oue-check_attack"
    assert [p.values[1] for p in params[:N_CHECKS]] == CHECKS


def test_case_seeds_are_stable_and_pytest_is_not_imported() -> None:
    """Seeds come from the fingerprint (crc32), not from ``hash``: the same in another process.
    And pldp.testing imports pytest only for parametrize_with_checks."""
    code = (
        "import sys, pldp; from pldp.testing import OracleCase;"
        "print(OracleCase(pldp.KRR(1.0, 5)).seed, 'pytest' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(OracleCase(pldp.KRR(1.0, 5)).seed), "False"]
    assert OracleCase(pldp.KRR(1.0, 5)).seed == 1376708491


def test_flatten_refuses_an_unknown_tally() -> None:
    @dataclasses.dataclass(frozen=True)
    class Mine(pldp.tally.BaseTally):
        fingerprint: str | None = None

    with pytest.raises(TypeError, match="FLATTENERS"):
        flatten(Mine())

"""Conformance suite: every public mechanism and protocol through the same checks.

In the manner of scikit-learn's ``test_common.py``: :func:`pldp.testing.standard_cases` lists
every public :class:`pldp.FrequencyOracle` (a way to build it, the true data of a small
population, a *variant* of the same kind with budgets 1.25 times larger, and constructions with
bad parameters), and every check of :mod:`pldp.testing.checks` runs on every case. Adding an
oracle to the standard cases gives it every check:

* construction validates bad parameters (a ``PLDPError`` naming the problem);
* parameters identify the oracle (fingerprint), and rebuild it with the same sampler;
* ``privacy()`` returns a :class:`pldp.PrivacyCheck` (``holds``, ``slack``, ``ldp_epsilon``,
  ``summary()``) and holds, and states nothing the exact claims of ``sampler()`` do not prove
  (:mod:`pldp.testing.privacy_map`);
* the audit of ``perturb`` is within the exact channel and tight, and flags a sampler running the
  variant's budgets (power check);
* the per-user path (``perturb`` + ``tally``) and ``simulate`` agree in distribution (Welch
  t-tests of the means and Brown-Forsythe tests of the spreads of every tally coordinate over
  150 repeats, Bonferroni-combined at a family-wise significance of 1e-3), and the same test tells
  the oracle from its variant (power check);
* ``pldp.estimate`` takes every method in ``oracle.methods`` (the standard ``unbiased``,
  ``norm_sub`` and ``mle`` first) and returns an :class:`pldp.Estimate` (MPLDP: an
  :class:`pldp.EstimateSet`) whose intervals contain the point, on the simplex when it says so;
* tallies merge (``+``) by adding, and round-trip through JSON;
* a tally of another oracle (the variant) is refused by ``estimate``, ``merge`` and ``from_dict``;
* the same seed gives the same bytes.

Every check draws from its own stream of the case's seed, ``zlib.crc32`` of the oracle's
fingerprint: the same draws in every run and process.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

import pldp
from pldp.protocols import RCF
from pldp.registry import ENTRIES
from pldp.testing import CHECKS, OracleCase, check_per_user_matches_simulate, parametrize_with_checks, standard_cases
from pldp.testing.cases import LEVELS

CASES = standard_cases()
FAST = [check for check in CHECKS if check is not check_per_user_matches_simulate]


def test_every_check_runs_on_every_case() -> None:
    """The suite below is the whole battery over every case (nothing dropped), and every named oracle
    of the registry has a case."""
    named = {e.name for e in ENTRIES if not e.generic}
    assert named <= {type(case.oracle).__name__ for case in CASES.values()}
    assert set(FAST) | {check_per_user_matches_simulate} == set(CHECKS)
    assert all(case.variant is not None and case.bad for case in CASES.values())


@parametrize_with_checks(list(CASES.values()), checks=FAST)
def test_conformance(case: OracleCase, check: Callable[[OracleCase], None]) -> None:
    check(case)


@pytest.mark.slow
@parametrize_with_checks(list(CASES.values()), checks=[check_per_user_matches_simulate])
def test_per_user_path_and_simulate_agree_in_distribution(
    case: OracleCase, check: Callable[[OracleCase], None]
) -> None:
    """Same law (p >= 1e-3, Bonferroni), and the variant's simulation is told apart (p < 1e-3)."""
    check(case)


def test_fingerprints_are_the_same_in_another_process() -> None:
    """A fingerprint hashes parameters, not object identity or process state."""
    names = ["krr", "idue-opt1-avg", "febsf-oue", "mpldp", "rappor-ps"]
    code = (
        "from pldp.testing import standard_cases; c = standard_cases();"
        f"print(' '.join(c[n].oracle.fingerprint for n in {names!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [CASES[n].oracle.fingerprint for n in names]


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

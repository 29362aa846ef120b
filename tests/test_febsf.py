"""PLDP-FEBSF: client, tallies, AUEM with its delta-method variance, the joint EM, the paper's EM."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import pldp
from pldp.protocols.febsf import FEBSF, FEBSFReports, FEBSFTally, auem, em
from tests.test_statistics import _homogeneity_pvalue

RHO = np.array([0.3, 0.3, 0.4])


def _cells(rng: np.random.Generator, n: int, p: np.ndarray, rho: np.ndarray = RHO) -> np.ndarray:
    return rng.multinomial(n, np.outer(rho, p).ravel()).reshape(rho.size, p.size)


@pytest.mark.parametrize("data", ["krr", "rappor", "oue"])
def test_auem_mean_and_delta_method_variance(data: str) -> None:
    """AUEM is a ratio estimator: its second-order bias is O(1/N), far below the 4-SE
    tolerance at N = 20,000 (ERRATA FEBSF-2). Its delta-method variance is within 15 % of
    the Monte Carlo variance (ERRATA FEBSF-1); eq. 3 with the true rho has lower variance."""
    k, n, trials = 6, 20_000, 600
    p = pldp.datasets.synthetic.zipf_probabilities(k, 1.0)
    proto = FEBSF([0.5, 1.0, 2.0], 0.5, k, oracle=data)
    rng = np.random.default_rng(10)
    est, rep, known = [], [], []
    for _ in range(trials):
        tally = proto.simulate(_cells(rng, n, p), rng)
        a = auem(proto, tally)
        est.append(a.frequencies)
        rep.append(a.variance)
        # eq. 3 with the true rho (what PBP assumes)
        ps, qs = RHO @ proto.p_star, RHO @ proto.q_star
        known.append((tally.support_counts / n - qs) / (ps - qs))
    est, rep, known = np.array(est), np.array(rep), np.array(known)
    se = est.std(axis=0, ddof=1) / math.sqrt(trials)
    assert np.all(np.abs(est.mean(axis=0) - p) < 4 * se)
    np.testing.assert_allclose(est.var(axis=0, ddof=1) / rep.mean(axis=0), 1.0, atol=0.15)
    assert np.all(known.var(axis=0) < est.var(axis=0))


def test_joint_em_beats_auem_with_rappor_and_matches_with_krr() -> None:
    """The setting of the issue: k = 9, levels {0.5, 1, 2}, eps_p = 0.3, N = 45,211."""
    k, n, trials = 9, 45_211, 30
    p = pldp.datasets.synthetic.zipf_probabilities(k, 1.0)
    rng = np.random.default_rng(11)
    ratio = {}
    for data in ("rappor", "krr"):
        proto = FEBSF([0.5, 1.0, 2.0], 0.3, k, oracle=data)
        err_a, err_e = [], []
        for _ in range(trials):
            cells = _cells(rng, n, p)
            truth = cells.sum(axis=0) / n
            tally = proto.simulate(cells, rng)
            e = em(proto, tally)
            assert e.converged and np.all(e.frequencies >= 0) and e.frequencies.sum() == pytest.approx(1.0)
            assert np.all(e.info["rho"] >= 0) and e.info["rho"].sum() == pytest.approx(1.0)
            err_a.append(np.sum((auem(proto, tally).frequencies - truth) ** 2))
            err_e.append(np.sum((e.frequencies - truth) ** 2))
        ratio[data] = np.mean(err_a) / np.mean(err_e)
    assert ratio["rappor"] > 1.5, ratio
    assert 0.8 < ratio["krr"] < 1.25, ratio


@pytest.mark.parametrize("data", ["krr", "rappor"])
def test_joint_em_recovers_rho_and_reports_its_variance(data: str) -> None:
    k, n = 5, 30_000
    p = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
    rho = np.array([0.6, 0.1, 0.3])
    proto = FEBSF([0.5, 1.0, 2.0], 1.0, k, oracle=data)
    rng = np.random.default_rng(12)
    est, rep, rhos = [], [], []
    repeats = 240
    for _ in range(repeats):
        e = em(proto, proto.simulate(_cells(rng, n, p, rho), rng))
        est.append(e.frequencies)
        rep.append(e.variance)
        rhos.append(e.info["rho"])
    est, rep, rhos = np.array(est), np.array(rep), np.array(rhos)
    rse = rhos.std(axis=0, ddof=1) / math.sqrt(len(rhos))
    assert np.all(np.abs(rhos.mean(axis=0) - rho) < 4 * rse + 2e-3)
    # the sample variance of `repeats` near-normal estimates has a relative SE of sqrt(2 / (repeats - 1))
    np.testing.assert_allclose(est.var(axis=0, ddof=1) / rep.mean(axis=0), 1.0, atol=4 * math.sqrt(2 / (repeats - 1)))


def test_em_increases_likelihood_and_stays_on_the_simplex() -> None:
    k, n = 7, 5000
    p = pldp.datasets.synthetic.zipf_probabilities(k, 1.5)
    proto = FEBSF([0.2, 0.4, 0.8, 1.6], 0.3, k, oracle="oue")
    rng = np.random.default_rng(13)
    tally = proto.simulate(_cells(rng, n, p, np.full(4, 0.25)), rng)
    lls = [em(proto, tally, max_iter=m, tol=0.0).info["log_likelihood"] for m in (1, 2, 5, 20, 80)]
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(lls))
    e = em(proto, tally)
    assert np.all(e.frequencies >= 0) and np.all(e.info["rho"] >= 0)


@pytest.mark.parametrize("data", ["krr", "rappor"])
def test_paper_em_runs(data: str) -> None:
    """Section 6 as printed: it runs and returns a distribution (not tuned, not trusted)."""
    proto = FEBSF([0.5, 1.0, 2.0], 0.3, 6, oracle=data)
    rng = np.random.default_rng(14)
    tally = proto.simulate(_cells(rng, 5000, np.full(6, 1 / 6)), rng)
    e = pldp.estimate(proto, tally, "paper")
    assert e.method == "paper" and np.all(np.isfinite(e.frequencies))
    assert e.frequencies.sum() == pytest.approx(1.0)


def test_per_user_path_and_simulation_agree_for_krr() -> None:
    """The whole (reported level x reported item) table has the same law both ways
    (chi-square homogeneity on the table as a category, few users so that it is feasible)."""
    proto = FEBSF([0.5, 2.0], 0.7, 3, oracle="krr")
    rng = np.random.default_rng(15)
    cells = np.array([[2, 0, 1], [0, 1, 0]])
    items = np.repeat(np.tile(np.arange(3), 2), cells.ravel())
    levels = np.repeat(np.repeat(np.arange(2), 3), cells.ravel())
    trials = 20_000
    a = np.array([proto.tally(proto.perturb(items, levels, rng)).table.ravel() for _ in range(trials)])
    b = np.array([proto.simulate(cells, rng).table.ravel() for _ in range(trials)])
    assert _homogeneity_pvalue(a, b) > 1e-3
    wrong = FEBSF([0.5, 2.0], 1.2, 3, oracle="krr")  # power check: another eps_p is detected
    c = np.array([wrong.simulate(cells, rng).table.ravel() for _ in range(trials)])
    assert _homogeneity_pvalue(a, c) < 1e-6


def test_privacy_of_each_report() -> None:
    proto = FEBSF([0.5, 1.0, 2.0], 0.3, 8, oracle="rappor")
    reps = proto.privacy()
    for key, rep in reps.items():
        assert rep.holds, key
    assert reps["level report"].ldp_epsilon == pytest.approx(0.3, abs=1e-12)
    assert reps["item report"]["level 2 (eps=2)"].ldp_epsilon <= 2.0 + 1e-12
    assert reps.ldp_epsilon <= 2.0 + 0.3 + 1e-12  # sequential composition: item report + level report


def test_tally_merge_and_json_round_trip() -> None:
    rng = np.random.default_rng(16)
    for data in ("krr", "oue"):
        proto = FEBSF([0.5, 1.0], 0.5, 10, oracle=data)
        items = rng.integers(0, 10, 3000)
        levels = rng.integers(0, 2, 3000)
        rep = proto.perturb(items, levels, rng)
        whole = proto.tally(rep)
        half = proto.tally(FEBSFReports(rep.data[:1000], rep.level[:1000])) + proto.tally(
            FEBSFReports(rep.data[1000:], rep.level[1000:])
        )
        assert half.n == whole.n == 3000
        np.testing.assert_array_equal(half.support_counts, whole.support_counts)
        np.testing.assert_array_equal(half.level_counts, whole.level_counts)
        back = FEBSFTally.from_dict(json.loads(json.dumps(whole.to_dict())))
        np.testing.assert_allclose(em(proto, back).frequencies, em(proto, whole).frequencies)


def test_bad_input() -> None:
    with pytest.raises(pldp.ParameterError, match="eps_p"):
        FEBSF([0.5, 1.0], 0.0, 5)
    with pytest.raises(pldp.ParameterError, match="increasing"):
        FEBSF([1.0, 0.5], 0.3, 5)
    with pytest.raises(pldp.ParameterError, match="oracle"):
        FEBSF([1.0], 0.3, 5, oracle="grr")
    proto = FEBSF([0.5, 1.0], 0.3, 5)
    with pytest.raises(pldp.DomainError, match="2"):
        proto.perturb(np.array([0, 1]), np.array([0, 2]), np.random.default_rng(0))
    with pytest.raises(pldp.ParameterError, match="shape"):
        proto.simulate(np.ones((3, 5), dtype=int), np.random.default_rng(0))
    other = FEBSF([0.5, 1.0], 0.3, 6)
    tally = other.simulate(np.ones((2, 6), dtype=int), np.random.default_rng(0))
    with pytest.raises(pldp.EstimationError, match="another mechanism or protocol"):
        auem(proto, tally)
    with pytest.raises(pldp.TallyError):
        FEBSF([0.5, 1.0], 0.3, 5, oracle="oue").tally(FEBSFReports(np.zeros((3, 2), np.uint8), np.zeros(3, int)))

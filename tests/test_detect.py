"""Detection of unlikely unary reports ("detect"), the tally's report statistics, PBP's and PPDA's
"robust", and "recover" (issue 26, items 2.3 and 2.4).

Fakes come from :func:`pldp.attacks.fake_reports` where its strategies fit (MGA pads its reports
to the honest mean number of ones; "adaptive" draws the count from the honest law), else are
built directly (reports setting every calibration bit, for PPDA).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy.stats import norm

import pldp
from pldp.attacks import fake_reports
from pldp.client import Client
from pldp.datasets.synthetic import zipf_probabilities
from pldp.deploy import Spec, decode
from pldp.estimation.detect import flag_region, poisson_binomial
from pldp.protocols import FEBSF, PBP, PPDA, FEBSFReports
from pldp.protocols.leveled import cell_users
from tests.deploy_cases import words

P16 = zipf_probabilities(16)


def test_poisson_binomial_is_exact() -> None:
    probs, counts = np.array([0.1, 0.6, 0.35]), np.array([2, 1, 3])
    flat = np.repeat(probs, counts)
    brute = np.zeros(flat.size + 1)
    for bits in itertools.product((0, 1), repeat=flat.size):
        brute[sum(bits)] += np.prod(np.where(np.array(bits) == 1, flat, 1 - flat))
    np.testing.assert_allclose(poisson_binomial(probs, counts), brute, atol=1e-15)


def test_honest_reports_are_flagged_below_twice_alpha() -> None:
    """An honest report is flagged with probability below 2 alpha (exactly: the flagged numbers of
    ones carry less than alpha in each tail of the law), measured on 400,000 reports."""
    mech = pldp.IDUE(pldp.ItemBudgets.from_array([0.5] * 4 + [1.0] * 6 + [2.0] * 6), "opt2")
    laws = mech.ones_laws
    region = flag_region(laws, 1e-3)
    exact = laws.laws() @ region.astype(float)
    assert laws.sizes.size >= 2 and np.all(exact < 2e-3) and region.any()
    rng = np.random.default_rng(1)
    tally = mech.tally(mech.perturb(rng.integers(0, 16, 400_000), rng))
    share = tally.ones[region].sum() / tally.n
    assert share < 2e-3 + 3 * np.sqrt(2e-3 / tally.n)


def test_tally_statistics_merge_round_trip_and_come_from_the_collector() -> None:
    """The unary tally's histogram of ones and tail counts: added by merging, dropped when merged
    with a count-level simulation, kept through JSON (fingerprint still checked), and filled by the
    collector's decode path."""
    mech = pldp.OUE(1.0, 16)
    rng = np.random.default_rng(2)
    a = mech.tally(mech.perturb(rng.integers(0, 16, 3000), rng))
    b = mech.tally(np.packbits(np.ones((7, 16), dtype=bool), axis=1))  # every bit set: 16 ones, in the tail
    merged = a + b
    assert merged.ones[16] == 7 and 16 in merged.tails and merged.tails[16].tolist() == [7] * 16
    np.testing.assert_array_equal(merged.ones, a.ones + b.ones)
    assert (a + mech.simulate(np.full(16, 10), rng)).ones is None
    back = mech.load_tally(json.loads(json.dumps(merged.to_dict())))
    assert back == merged and back.tails.keys() == merged.tails.keys()
    with pytest.raises(pldp.errors.TallyError, match="does not come from"):
        pldp.OUE(2.0, 16).load_tally(merged.to_dict())
    spec = Spec.from_mechanism(mech, question="q?")
    batch = Client(spec, random=words(3)).reports(rng.integers(0, 16, 200).tolist())
    decoded = decode(spec, batch.to_json())
    assert decoded.ones is not None and decoded.ones.sum() == 200


def _oue_run(strategy: str | None, targets: list[int], share: float, repeats: int) -> dict[str, np.ndarray]:
    mech = pldp.OUE(1.0, 16)
    rng = np.random.default_rng(4)
    n = 50_000
    m = round(share / (1 - share) * n)
    out: dict[str, list] = {"unbiased": [], "detect": [], "flagged": [], "excess": [], "cover": []}
    for _ in range(repeats):
        tally = mech.tally(mech.perturb(rng.choice(16, n, p=P16), rng))
        if strategy is not None:
            tally = tally + mech.tally(fake_reports(mech, targets, m, rng=rng, strategy=strategy))
        e = mech.estimate(tally, "detect")
        out["unbiased"].append(mech.estimate(tally).frequencies)
        out["detect"].append(e.frequencies)
        out["flagged"].append(e.info["flagged_share"])
        out["excess"].append(e.info["ones_excess_share"])
        lo, hi = e.ci(0.95)
        out["cover"].append((lo <= P16) & (P16 <= hi))
    return {k: np.array(v) for k, v in out.items()}


def test_detect_costs_nothing_without_attack() -> None:
    """Cost: MSE ratio to "unbiased" 0.9-1.04 (measured 0.95: it normalises the estimate); the flagged
    share is the honest rate (< 2e-3); 95 % intervals cover at their rate."""
    run = _oue_run(None, [], 0.0, 40)
    ratio = ((run["detect"] - P16) ** 2).mean() / ((run["unbiased"] - P16) ** 2).mean()
    assert 0.9 <= ratio <= 1.04, ratio
    assert run["flagged"].mean() < 2e-3 and np.mean(run["excess"] == 0) >= 0.9
    hits = run["cover"]
    assert abs(hits.mean() - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / hits.size) + 0.01


def test_detect_removes_fakes_that_set_many_bits() -> None:
    """MGA on 12 targets sets 12 bits per report (an honest one has 4.5 on average): every fake is
    flagged and dropped, and the rarest target's gain falls from 0.09 to within noise (bound: the
    gain of the unflagged fakes, 0 here)."""
    run = _oue_run("mga", list(range(4, 16)), 0.03, 10)
    gain = run["detect"][:, 15] - P16[15]
    assert run["flagged"].mean() > 0.029 and (run["unbiased"][:, 15] - P16[15]).mean() > 0.08
    assert abs(gain.mean()) <= 3 * gain.std(ddof=1) / np.sqrt(gain.size) + 1e-3


def test_detect_sees_mga_in_the_histogram_but_not_adaptive_fakes() -> None:
    """MGA on one target gives every fake report the same (typical) number of ones: no report is
    flagged, but the histogram's excess over the honest law (a lower bound on the fakes) shows
    about 2 % of 3 %; the adaptive attack draws the count from the honest law and shows nothing."""
    mga = _oue_run("mga", [15], 0.03, 3)
    adaptive = _oue_run("adaptive", [15], 0.03, 3)
    assert mga["flagged"].max() < 2e-3 and 0.01 < mga["excess"].mean() <= 0.03
    assert adaptive["excess"].max() < 0.003


# ------------------------------------------------------------------------------ PBP, PPDA
def _pbp_case(oracle: str, fakes: int, seed: int) -> tuple[PBP, object]:
    """PBP (levels 0.5, 1, 2; public shares 0.3, 0.3, 0.4; d = 16), 60,000 honest users (per user,
    so that the tally holds their numbers of ones) and ``fakes`` reports setting every bit."""
    proto = PBP([0.5, 1.0, 2.0], [0.3, 0.3, 0.4], 16, oracle=oracle)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(60_000, np.outer(proto.rho, P16).ravel()).reshape(3, 16)
    tally = proto.tally(proto.perturb(*cell_users(cells), rng))
    if fakes:
        tally = tally + proto.tally(np.packbits(np.ones((fakes, 16), dtype=bool), axis=1))
    return proto, tally


def test_pbp_robust_and_detect() -> None:
    """PBP (public shares): "detect" drops 3 % of fakes setting every bit (16 ones are unlikely at
    every level) and inverts the kept reports' channel exactly, so every estimate is as without
    them; "robust" is its projection. Without fakes "robust" costs less than "unbiased" (MSE
    ratio < 1, the projection), and k-RR PBP's "robust" is its MLE."""
    proto, clean = _pbp_case("oue", 0, 5)
    _, tally = _pbp_case("oue", 1800, 5)
    det, rob, unb = (proto.estimate(tally, m) for m in ("detect", "robust", "unbiased"))
    assert det.info["flagged_share"] > 0.028 and rob.on_simplex
    np.testing.assert_allclose(det.frequencies, proto.estimate(clean, "detect").frequencies, atol=1e-3)
    assert np.abs(unb.frequencies - proto.estimate(clean).frequencies).min() > 0.05
    errs = {m: [] for m in ("unbiased", "robust")}
    for seed in range(6):
        proto, tally = _pbp_case("oue", 0, 10 + seed)
        for m in errs:
            errs[m].append(((proto.estimate(tally, m).frequencies - P16) ** 2).mean())
    assert np.mean(errs["robust"]) < np.mean(errs["unbiased"])
    krr, tally = _pbp_case("krr", 0, 7)
    np.testing.assert_allclose(krr.estimate(tally, "robust").frequencies, krr.estimate(tally, "mle").frequencies)


def _ppda_tally(share: float, seed: int) -> tuple[PPDA, object]:
    """PPDA (levels 0.5, 1, 2, RAPPOR, d = 16) and fakes that report the rarest item and set every
    calibration bit (pretending to a level below the smallest)."""
    proto = PPDA([0.5, 1.0, 2.0], 16)
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(50_000, np.outer(np.full(3, 1 / 3), P16).ravel()).reshape(3, 16)
    tally = proto.simulate(cells, rng)
    m = round(share / (1 - share) * 50_000)
    if m:
        bits = np.zeros((m, 32), dtype=bool)
        bits[:, 15] = True
        bits[:, 16:] = True
        tally = tally + proto.tally(np.packbits(bits, axis=1))
    return proto, tally


def test_ppda_robust_bound_under_a_calibration_attack() -> None:
    """25 % of fakes setting every calibration bit push the calibrated b past 1/2: "unbiased" raises
    (p* - q* <= 0); "robust" clamps it to the levels' range and stays within its bound
    2 beta / delta_min (a weak bound: the smallest level's gap is 0.12 here; see the docstring)."""
    proto, tally = _ppda_tally(0.25, 8)
    with pytest.raises(pldp.errors.EstimationError, match="p\\* - q\\*"):
        proto.estimate(tally, "unbiased")
    rob = proto.estimate(tally, "robust")
    delta_min = float(1 - 2 * proto.b_levels.max())
    assert rob.info["clamped"] and np.abs(rob.frequencies - P16).max() <= 2 * 0.25 / delta_min


def test_ppda_robust_costs_nothing_without_attack() -> None:
    """Without fakes (count-level simulation: nothing to flag, the clamp rarely binds) "robust" is
    "unbiased": MSE ratio 1."""
    ratios = []
    for seed in range(5):
        proto, tally = _ppda_tally(0.0, 20 + seed)
        rob, unb = proto.estimate(tally, "robust"), proto.estimate(tally, "unbiased")
        ratios.append(((rob.frequencies - P16) ** 2).mean() / ((unb.frequencies - P16) ** 2).mean())
    assert np.allclose(ratios, 1.0, atol=0.05)


# ------------------------------------------------------------------------------------ FEBSF
def test_febsf_detect_drops_unlikely_reports_and_tests_the_level_reports() -> None:
    """FEBSF-OUE with 2 % of fakes setting every bit at level 0.1: flagged and dropped (the joint
    EM on the rest as truncated data gives what it gives without them); the issue's k-RR attack
    (4.5 % claiming level 0.1) shows as reports beyond what any level shares allow."""
    proto = FEBSF(np.arange(1, 11) / 10, 0.3, 16, oracle="oue")
    rng = np.random.default_rng(9)
    cells = rng.multinomial(50_000, np.outer(np.full(10, 0.1), P16).ravel()).reshape(10, 16)
    honest = proto.simulate(cells, rng)
    m = 1000
    fake = proto.tally(FEBSFReports(np.packbits(np.ones((m, 16), dtype=bool), axis=1), np.zeros(m, dtype=np.int64)))
    clean, screened = proto.estimate(honest, "detect"), proto.estimate(honest + fake, "detect")
    assert screened.info["flagged"] >= m and clean.info["flagged_share"] < 2e-3
    np.testing.assert_allclose(screened.frequencies, clean.frequencies, atol=5e-3)
    krr = FEBSF(np.arange(1, 11) / 10, 0.3, 16)
    honest = krr.simulate(cells, rng)
    fakes = krr.tally(FEBSFReports(np.full(2356, 15), np.zeros(2356, dtype=np.int64)))
    attacked = krr.estimate(honest + fakes, "detect")
    assert 0 < attacked.info["level_excess"] <= 2356 and attacked.info["level_excess_levels"] == [0]
    assert krr.estimate(honest, "detect").info["level_excess"] == 0


@pytest.mark.parametrize("name", ["febsf-oue", "febsf-rappor"])
def test_febsf_detect_is_a_distribution_on_a_small_tally(name: str) -> None:
    """The 300-report tallies of the pinned cases: the kept AUEM divides by a noisy gap, and
    unprojected it summed to 9 (OUE); ``"detect"`` projects it with Norm-Sub's threshold kept at
    zero or above (only lowering: 9 becomes 1, and a sum below 1 keeps its mass, negatives cut),
    with the kept AUEM's variance."""
    from tests.deploy_cases import oracle_cases
    from tests.test_pinned import _reports

    spec, _, tally = _reports(name, oracle_cases()[name])
    est = spec.mechanism().estimate(tally, "detect")
    assert np.all(est.frequencies >= 0) and est.frequencies.sum() <= 1 + 1e-12
    if est.info["kept_auem_sum"] > 1:
        assert est.on_simplex and est.frequencies.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.isfinite(est.variance)) and abs(est.info["kept_auem_sum"] - 1) > 0.1  # the projection mattered


# ---------------------------------------------------------------------------------- recover
@pytest.mark.parametrize(("mech", "share", "before", "after"), [(pldp.KRR(1.0, 16), 0.05, 0.45, 0.25)])
def test_recover_with_known_targets_removes_most_of_the_gain(
    mech: object, share: float, before: float, after: float
) -> None:
    """KRR, MGA on the rarest item with 5 % fakes: "unbiased" gains 0.49; "recover" told the target
    estimates the fakes' share from the items they push below zero and gains 0.17 (the fakes it
    cannot prove are left); without the target it only repairs the other items (gain 0.43)."""
    rng = np.random.default_rng(11)
    n = 100_000
    m = round(share / (1 - share) * n)
    gains: dict[str, list[float]] = {"unbiased": [], "recover": [], "told": []}
    for _ in range(10):
        tally = mech.simulate(rng.multinomial(n, P16), rng) + mech.tally(fake_reports(mech, [15], m, rng=rng))  # type: ignore[attr-defined]
        gains["unbiased"].append(mech.estimate(tally).frequencies[15] - P16[15])  # type: ignore[attr-defined]
        gains["recover"].append(mech.estimate(tally, "recover").frequencies[15] - P16[15])  # type: ignore[attr-defined]
        told = mech.estimate(tally, "recover", targets=[15])  # type: ignore[attr-defined]
        gains["told"].append(told.frequencies[15] - P16[15])
        assert 0 < told.info["fake_share"] <= share
    assert np.mean(gains["unbiased"]) > before and np.mean(gains["told"]) < after
    assert np.mean(gains["recover"]) <= np.mean(gains["unbiased"])


def test_recover_costs_what_norm_sub_costs_without_attack() -> None:
    """Without fakes the fake share is estimated at 0 in at least 95 % of tallies (z is Bonferroni
    over the items), and "recover" is then "norm_sub": MSE ratio to "unbiased" below 1."""
    mech = pldp.KRR(1.0, 16)
    rng = np.random.default_rng(12)
    zero, errs = 0, {"unbiased": [], "recover": []}
    for _ in range(40):
        tally = mech.simulate(rng.multinomial(20_000, P16), rng)
        e = mech.estimate(tally, "recover")
        zero += e.info["fake_share"] == 0
        if e.info["fake_share"] == 0:
            np.testing.assert_allclose(e.frequencies, mech.estimate(tally, "norm_sub").frequencies)
        for m in errs:
            errs[m].append(((mech.estimate(tally, m).frequencies - P16) ** 2).mean())
    assert zero >= 36 and np.mean(errs["recover"]) < np.mean(errs["unbiased"])
    assert norm.ppf(1 - 0.05 / 16) == pytest.approx(e.info["z"])


def test_screen_reports_the_flagged_share_without_estimating() -> None:
    """pldp.estimation.detect.screen: detection's diagnostics next to any estimate (a dashboard's);
    None where there is nothing to screen (k-RR, a count-level simulation)."""
    from pldp.estimation.detect import screen

    mech = pldp.OUE(1.0, 16)
    rng = np.random.default_rng(13)
    tally = mech.tally(mech.perturb(rng.integers(0, 16, 5000), rng))
    tally = tally + mech.tally(np.packbits(np.ones((50, 16), dtype=bool), axis=1))
    info = screen(mech, tally)
    assert (
        info is not None
        and info["flagged"] >= 50
        and info == {k: v for k, v in mech.estimate(tally, "detect").info.items() if k in info}
    )
    febsf = FEBSF([0.5, 1.0, 2.0], 0.5, 16, oracle="oue")
    seen = screen(febsf, febsf.simulate(np.full((3, 16), 100), rng))
    assert seen is not None and "ones_excess_share" not in seen  # the level shares are unknown
    assert screen(pldp.KRR(1.0, 4), pldp.KRR(1.0, 4).simulate([5, 5, 5, 5], rng)) is None
    assert screen(mech, mech.simulate(np.full(16, 10), rng)) is None


# ------------------------------------------------------------------- the joint test (issue 34)
def _hiding_fakes(d: int, target: int, ones: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` packed reports with exactly ``ones`` ones: the target's bit and ``ones - 1`` others at random."""
    bits = np.zeros((m, d), dtype=bool)
    others = np.delete(np.arange(d), target)
    for row in bits:
        row[rng.choice(others, ones - 1, replace=False)] = True
    bits[:, target] = True
    return np.packbits(bits, axis=1)


@pytest.mark.parametrize("alpha", [0.05, 0.01])
@pytest.mark.parametrize("eps", [0.55, 1.0])
def test_the_joint_test_false_alarms_at_most_alpha(eps: float, alpha: float) -> None:
    """Honest histograms of ones (exactly: Multinomial(n, law), the law of OUE's count not
    depending on the item), 400 at n = 10^5: the joint test fires at most at rate alpha, within a
    binomial tolerance of 3 standard errors (measured 0.04-0.05 at 0.05, 0.007-0.012 at 0.01 over
    1,000 at n = 10^3..10^6)."""
    from pldp.estimation.detect import joint_test

    mech = pldp.OUE(eps, 16)
    law = mech.ones_laws.mixture()
    keep = ~flag_region(mech.ones_laws, 1e-3)
    rng = np.random.default_rng(34)
    runs = 400
    fired = sum(joint_test(rng.multinomial(100_000, law), law, alpha, 0, keep)["joint_fired"] for _ in range(runs))
    assert fired <= runs * alpha + 3 * np.sqrt(runs * alpha * (1 - alpha)), fired


def test_the_joint_test_is_conservative_where_the_level_shares_are_fitted() -> None:
    """PLDP-FEBSF-OUE (levels 0.1..1.0): the honest law is the mixture of the levels' laws with
    unknown shares, fitted by maximum likelihood; the G test keeps chi-square(bins - 1), so the
    test is conservative: 60 honest histograms at n = 5 10^4 fire at alpha = 0.05 at most at
    rate 0.05 + 3 standard errors (measured 0.005 over 200)."""
    from pldp.estimation.detect import joint_info
    from pldp.protocols.febsf.detect import laws

    proto = FEBSF(np.arange(1, 11) / 10, 0.3, 16, oracle="oue")
    the_laws = laws(proto)
    law = the_laws.laws().mean(axis=0)  # equal level shares
    rng = np.random.default_rng(35)
    runs = 60
    fired = sum(joint_info(the_laws, rng.multinomial(50_000, law), 0.05)["joint_fired"] for _ in range(runs))
    assert fired <= runs * 0.05 + 3 * np.sqrt(runs * 0.05 * 0.95), fired


@pytest.mark.parametrize(("eps", "hiding"), [(0.55, 12), (1.0, 10)])
@pytest.mark.parametrize("share", [0.01, 0.05])
def test_the_attacker_at_the_largest_unflagged_count_is_detected(eps: float, hiding: int, share: float) -> None:
    """OUE (d = 16), fakes that set the rarest item's bit and as many others as the screen lets
    through (the largest unflagged count: 12 ones at eps = 0.55, 10 at eps = 1). No report is
    flagged (the old screen saw nothing and "detect" gained what "unbiased" gains), but the joint
    test fires, the count is suspect and dropped, and "detect"'s gain is within noise (3 standard
    errors of the mean over 4 tallies at n = 10^5)."""
    from pldp.estimation.detect import detection_power

    mech = pldp.OUE(eps, 16)
    power = detection_power(mech.ones_laws, 100_000)
    assert power["largest_unflagged"] == hiding and power["has_power"] and power["min_share"] < share
    rng = np.random.default_rng(36)
    n = 100_000
    m = round(share / (1 - share) * n)
    gains: dict[str, list[float]] = {"unbiased": [], "detect": []}
    for _ in range(4):
        tally = mech.tally(mech.perturb(rng.choice(16, n, p=P16), rng))
        tally = tally + mech.tally(_hiding_fakes(16, 15, hiding, m, rng))
        e = mech.estimate(tally, "detect")
        assert e.info["flagged_share"] < 2e-3 and e.info["joint_fired"] and hiding in e.info["dropped_ones"], e.info
        gains["detect"].append(e.frequencies[15] - P16[15])
        gains["unbiased"].append(mech.estimate(tally).frequencies[15] - P16[15])
    g = np.array(gains["detect"])
    assert np.mean(gains["unbiased"]) > 2.5 * share  # 0.04 at 1 %, 0.25 at 5 % (eps = 0.55)
    assert abs(g.mean()) <= 3 * g.std(ddof=1) / np.sqrt(g.size) + 2e-3, gains


def test_twelve_target_mga_at_small_eps_is_detected() -> None:
    """The issue's case: at OUE(0.55) the flag region is >= 13 ones and 12-target MGA (12 ones a
    report) was never flagged; 3 % of fakes: the joint test drops the count 12 and the targets'
    summed gain falls from over 1 (unbiased) to within 0.1."""
    mech = pldp.OUE(0.55, 16)
    rng = np.random.default_rng(37)
    n, targets = 100_000, list(range(4, 16))
    m = round(0.03 / 0.97 * n)
    tally = mech.tally(mech.perturb(rng.choice(16, n, p=P16), rng))
    tally = tally + mech.tally(fake_reports(mech, targets, m, rng=rng, strategy="mga"))
    det, unb = mech.estimate(tally, "detect"), mech.estimate(tally)
    assert det.info["flagged"] < 2e-3 * tally.n and det.info["dropped_ones"] == [12]
    assert (unb.frequencies - P16)[targets].sum() > 1.0
    assert abs((det.frequencies - P16)[targets].sum()) < 0.1


def test_detection_power_is_what_the_joint_test_achieves() -> None:
    """detection_power: at OUE(0.55), d = 16, n = 10^4, the smallest share of fakes at the
    largest unflagged count (12) detected with power 0.9; 300 honest histograms with that many
    fakes at 12 are detected at least 0.9 - 3 standard errors of the time; with a third of them,
    far less often. With 60 reports the screen has no power (a share above 5 % is needed)."""
    from pldp.estimation.detect import detection_power, joint_test

    mech = pldp.OUE(0.55, 16)
    laws = mech.ones_laws
    n = 10_000
    power = detection_power(laws, n)
    assert power["flag_from"] == 13 and power["largest_unflagged"] == 12 and power["adaptive"] is None
    law, keep = laws.mixture(), ~flag_region(laws, 1e-3)
    rng = np.random.default_rng(38)

    def rate(m: int) -> float:
        hits = 0
        for _ in range(300):
            hist = rng.multinomial(n - m, law)
            hist[12] += m
            hits += joint_test(hist, law, 1e-3, 0, keep)["joint_fired"]
        return hits / 300

    m = round(power["min_share"] * n)
    assert rate(m) >= 0.9 - 3 * np.sqrt(0.09 / 300)
    assert rate(m // 3) < 0.5
    small = detection_power(laws, 60)
    assert not small["has_power"] and small["min_share"] > 0.05


def test_what_twelve_targets_gain_against_the_joint_test() -> None:
    """OUE(1.0), d = 16, 12 targets (items 4-15), 1 % of fakes, n = 10^5, 3 tallies each. A fake
    gains the targets (k - 12 b)/(a - b) with k its target bits: at the largest unflagged count
    (10 target bits a report) the targets' summed gain is 0.30 under "unbiased", and "detect"
    drops it to noise (0.005). The best an attacker can do that no test of the counts sees is to
    draw each fake's count from the honest law and put every one on a target: it is never
    flagged nor seen (the joint test does not fire) and gains 0.05, what "adaptive" gains; the
    screen bounds the promotion per fake by the honest number of ones."""
    mech = pldp.OUE(1.0, 16)
    targets = list(range(4, 16))
    law = mech.ones_laws.mixture()
    rng = np.random.default_rng(39)
    n = 100_000
    m = round(0.01 / 0.99 * n)
    gains: dict[str, list[float]] = {"hiding": [], "hiding_detect": [], "honest": [], "honest_detect": []}
    for _ in range(3):
        honest = mech.tally(mech.perturb(rng.choice(16, n, p=P16), rng))
        hiding = np.zeros((m, 16), dtype=bool)
        for row in hiding:
            row[rng.choice(targets, 10, replace=False)] = True
        drawn = np.zeros((m, 16), dtype=bool)
        for row, count in zip(drawn, rng.choice(17, m, p=law / law.sum()), strict=True):
            row[rng.choice(targets, min(count, 12), replace=False)] = True
            row[rng.choice(4, max(count - 12, 0), replace=False)] = True
        for name, bits in (("hiding", hiding), ("honest", drawn)):
            tally = honest + mech.tally(np.packbits(bits, axis=1))
            det = mech.estimate(tally, "detect")
            assert det.info["joint_fired"] == (name == "hiding"), (name, det.info["joint_p"])
            gains[name].append(float((mech.estimate(tally).frequencies - P16)[targets].sum()))
            gains[f"{name}_detect"].append(float((det.frequencies - P16)[targets].sum()))
    mean = {k: np.mean(v) for k, v in gains.items()}
    assert mean["hiding"] > 0.25 and abs(mean["hiding_detect"]) < 0.03, mean
    assert 0.0 < mean["honest_detect"] < 0.1 and mean["honest_detect"] < mean["hiding"] / 3, mean


def test_fakes_with_the_target_bit_alone_do_not_shrink_the_normalisation() -> None:
    """``"detect"`` normalises by the users the kept reports stand for, from the kept reports counted:
    fakes that set the target bit alone (the fewest ones a report can have) lower every other bit,
    and an estimate normalised by the bits' own total would rise with them (OUE at 0.55, d = 16,
    n = 10^5, β = 1 %: 0.071 against MGA's 0.047 before). Now, with nothing dropped, "detect" is the
    unbiased estimate, whose gain is the target's support alone."""
    from pldp.attacks import fake_reports, gain
    from pldp.mechanisms import OUE

    oue = OUE(0.55, 16)
    rng = np.random.default_rng(3440)
    alone = np.array([0, 0, 0, 1010])  # atoms: mga, adaptive, knows_defence, alone
    gains = []
    for _ in range(4):
        honest = oue.simulate(np.full(16, 6250), rng)
        fake = oue.tally(fake_reports(oue, [15], 1010, rng=rng, strategy="optimal", split=alone))
        gains.append((gain(oue, honest, fake, [15], "detect"), gain(oue, honest, fake, [15], "unbiased")))
    detect, unbiased = np.array(gains).T
    assert np.allclose(detect, unbiased, atol=1e-9)
    assert np.mean(detect) < 0.05

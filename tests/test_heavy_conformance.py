"""The heavy-hitter protocols through the conformance checks that fit them (pldp.testing.heavy), each check
able to fail."""

from __future__ import annotations

import numpy as np
import pytest

import pldp
from pldp.heavy.base import HeavyHitter
from pldp.testing.heavy import HEAVY_CHECKS, check_heavy_hitter

PROTOCOLS = {
    "PEM": lambda: pldp.PEM([1.0, 4.0], max_bytes=4),
    "TreeHist": lambda: pldp.TreeHist(4.0, max_bytes=4, step_bits=4),
    "SFP": lambda: pldp.SFP(4.0, max_bytes=4, hash_bits=4),
}


@pytest.mark.parametrize("check", list(HEAVY_CHECKS))
@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_the_protocols_pass_the_checks_that_fit_them(name: str, check: str) -> None:
    HEAVY_CHECKS[check](PROTOCOLS[name]())


def test_a_protocol_whose_level_claims_less_fails_privacy_and_audit() -> None:
    """A TreeHist whose level says 3 while its parts spend 2 and 2: the exact check and the audit fail,
    and the battery names both."""
    tree = pldp.TreeHist(4.0, max_bytes=4)
    tree.levels = np.array([3.0])
    with pytest.raises(AssertionError, match=r"(?s)fails 2 check\(s\):\nprivacy: .*\naudit: the code leaks") as err:
        check_heavy_hitter(tree)
    assert "discovery" not in str(err.value)


class _Leaky(pldp.PEM):
    """A PEM whose group is the answer's length: the group reads the answer."""

    def perturb(self, answers, rng, level=None):  # type: ignore[no-untyped-def]
        out = super().perturb(answers, rng, level)
        out[:, 1] = np.array([min(len(a), self.max_bytes) - 1 for a in answers])
        return out


def test_a_group_that_reads_the_answer_fails() -> None:
    with pytest.raises(AssertionError, match="the level, group or a seed depends on the answer"):
        HEAVY_CHECKS["group_apart"](_Leaky(4.0, max_bytes=4))


class _Fixed(pldp.PEM):
    """A PEM that ignores the generator it is given: every seed gives one draw."""

    def perturb(self, answers, rng, level=None):  # type: ignore[no-untyped-def]
        return super().perturb(answers, np.random.default_rng(0), level)


class _Lax(pldp.PEM):
    """A PEM whose server takes any reports: nothing is refused."""

    def checked(self, reports):  # type: ignore[no-untyped-def]
        return np.asarray(reports, dtype=np.int64)


class _Backwards(pldp.PEM):
    """A PEM that returns its answers smallest first."""

    def discover(self, reports, top=20, width=None):  # type: ignore[no-untyped-def]
        found = super().discover(reports, top, width)
        est = found.estimate
        flipped = type(est)(
            est.frequencies[::-1], est.variance[::-1], est.n, est.method, type(est.domain)(found.answers[::-1])
        )
        return type(found)(flipped, found.max_bytes, found.floor, found.miss)


@pytest.mark.parametrize(
    ("broken", "check", "why"),
    [
        (_Fixed, "seeds", "two seeds gave one draw"),
        (_Lax, "refusals", "not a ReportError|were not refused"),
        (_Backwards, "discovery", "found \\['no', 'yes'\\]"),
    ],
)
def test_each_remaining_check_fails_a_protocol_broken_its_way(broken: type, check: str, why: str) -> None:
    with pytest.raises(AssertionError, match=why):
        HEAVY_CHECKS[check](broken(4.0, max_bytes=4))


def test_every_check_is_run_by_check_heavy_hitter() -> None:
    """A protocol that passes every check passes the battery (no check left out or failing on its own)."""
    protocol: HeavyHitter = PROTOCOLS["PEM"]()
    check_heavy_hitter(protocol)

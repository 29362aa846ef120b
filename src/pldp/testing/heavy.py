r"""The conformance battery where a heavy-hitter protocol's interface fits it.

A heavy-hitter protocol (:class:`~pldp.heavy.base.HeavyHitter`: :class:`~pldp.PEM`,
:class:`~pldp.TreeHist`, :class:`~pldp.SFP`) is not a :class:`~pldp.FrequencyOracle`: it has no domain
to list, so no tally of counts per item, no count-level ``simulate``, no ``params`` a registry
rebuilds it from, and its estimate is a discovery over the raw reports rather than a function of a
mergeable tally. The oracles' checks of those (round trips, merging, simulation against the per-user
path, every estimation method, the float privacy map) do not apply. What does, :data:`HEAVY_CHECKS`,
one function each:

* ``seeds``: the same seed gives the same reports, byte for byte, and another seed others;
* ``group_apart``: the level, the group and every seed are the same for any answers under the same
  randomness (only the values read the answer);
* ``refusals``: reports of the wrong width, out-of-range columns and a missing group are refused with
  a reason naming the report;
* ``privacy``: the exact check holds at every level;
* ``audit``: the running client's audited epsilon (:func:`pldp.audit.audit_heavy`) is within the
  claim and within 0.3 of it;
* ``discovery``: two planted answers at 60 % and 40 % are found, in order, each estimate within 4.5
  standard errors, and nothing nobody holds above the floor.

:func:`check_heavy_hitter` runs them all.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pldp.audit.heavy import audit_heavy
from pldp.errors import ReportError
from pldp.heavy.base import HeavyHitter

__all__ = ["HEAVY_CHECKS", "check_heavy_hitter"]

#: Users of the checks that draw reports.
_USERS = 20_000


def _answers(protocol: HeavyHitter) -> list[str]:
    """``"yes"`` for 60 % of the users and ``"no"`` for 40 %, cut to the protocol's bound."""
    return ["yes"] * (_USERS * 3 // 5) + ["no"] * (_USERS * 2 // 5)


def check_seeds(protocol: HeavyHitter) -> None:
    """The same seed gives the same reports; another seed gives others."""
    answers = _answers(protocol)
    one = protocol.perturb(answers, np.random.default_rng(5))
    assert np.array_equal(one, protocol.perturb(answers, np.random.default_rng(5))), "a seed is not reproducible"
    assert not np.array_equal(one, protocol.perturb(answers, np.random.default_rng(6))), "two seeds gave one draw"


def check_group_apart(protocol: HeavyHitter) -> None:
    """Under the same randomness, the level, group and seeds of two populations' reports agree."""
    a = protocol.perturb(["spam"] * 2000, np.random.default_rng(9))
    b = protocol.perturb(["ham"] * 2000, np.random.default_rng(9))  # another first byte, another length
    apart = [0, 1, *range(2, a.shape[1], 2)]
    assert np.array_equal(a[:, apart], b[:, apart]), "the level, group or a seed depends on the answer"
    values = list(range(3, a.shape[1], 2))
    assert not np.array_equal(a[:, values], b[:, values]), "the values do not read the answer"


def check_refusals(protocol: HeavyHitter) -> None:
    """Reports of the wrong width, a column out of range, and a missing group are refused with a reason."""
    reports = protocol.perturb(_answers(protocol)[:2000], np.random.default_rng(3))
    cases: list[tuple[np.ndarray, str]] = [(reports[:, :-1], "integer array")]
    for col, bad in ((0, protocol.levels.size), (1, protocol.groups), (2, -1), (3, 1 << 40)):
        broken = reports.copy()
        broken[4, col] = bad
        cases.append((broken, "report 4: "))
    cases.append((reports[reports[:, 1] != protocol.groups - 1], "no reports"))
    for broken, why in cases:
        try:
            protocol.discover(broken, top=2)
        except ReportError as err:
            assert why in str(err), f"refused for another reason: {err}"
        else:
            raise AssertionError(f"reports were not refused ({why})")


def check_privacy(protocol: HeavyHitter) -> None:
    """The exact check holds at every level, at the level's budget."""
    for eps, check in zip(protocol.levels, protocol.privacy(), strict=True):
        assert check.holds, f"the exact check fails at ε = {eps:g}:\n{check}"
        assert check.ldp_epsilon <= eps + 1e-12, f"the report is {check.ldp_epsilon}-LDP at a level of {eps:g}"


def check_audit(protocol: HeavyHitter) -> None:
    """The audited epsilon of ``"spam"`` against ``"eggs"`` at the top level is within the claim and
    within 0.3 of it (200,000 reports each; the bound's own slack is about 0.1 at ε = 4)."""
    top = protocol.levels.size - 1
    result = audit_heavy(protocol, "spam", "eggs", 200_000, np.random.default_rng(17), level=top)
    assert result.holds, f"the code leaks {result.audited:.3f} > {result.claimed:g}"
    assert result.audited > result.claimed - 0.3, f"the audit is loose: {result.audited:.3f} of {result.claimed:g}"


def check_discovery(protocol: HeavyHitter) -> None:
    """``"yes"`` (60 %) and ``"no"`` (40 %) are found in order, each within 4.5 standard errors."""
    found = protocol.discover(protocol.perturb(_answers(protocol), np.random.default_rng(21)), top=2)
    assert found.answers == ["yes", "no"], f"found {found.answers}"
    est = found.estimate
    assert np.all(np.abs(est.frequencies - [0.6, 0.4]) < 4.5 * est.std_error), f"estimates {est.frequencies}"


#: Every check, by name.
HEAVY_CHECKS: dict[str, Callable[[HeavyHitter], None]] = {
    "seeds": check_seeds,
    "group_apart": check_group_apart,
    "refusals": check_refusals,
    "privacy": check_privacy,
    "audit": check_audit,
    "discovery": check_discovery,
}


def check_heavy_hitter(protocol: HeavyHitter) -> None:
    """Run every check of :data:`HEAVY_CHECKS` on ``protocol``; an :class:`AssertionError` names the
    ones that fail."""
    failed = []
    for name, check in HEAVY_CHECKS.items():
        try:
            check(protocol)
        except AssertionError as err:
            failed.append(f"{name}: {err}")
    if failed:
        raise AssertionError(f"{protocol!r} fails {len(failed)} check(s):\n" + "\n".join(failed))

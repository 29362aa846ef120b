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
  claim and close to it (the reports drawn and the slack allowed follow from the test's expected
  firings, :func:`audit_trials`);
* ``discovery``: two planted answers at 60 % and 40 % are found, in order, each estimate within 4.5
  standard errors, and nothing else above the floor, from enough users that the step finding them
  sees 40 % at eight standard errors (:func:`discovery_users`).

:func:`check_heavy_hitter` runs them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pldp.audit.heavy import audit_heavy
from pldp.channel.hashed import HashedNode
from pldp.errors import ReportError
from pldp.heavy.base import HeavyHitter

__all__ = ["HEAVY_CHECKS", "audit_trials", "check_heavy_hitter", "discovery_users"]

#: Users of the checks that draw reports, and the most the discovery check draws.
_USERS, _MOST_USERS = 20_000, 2_000_000
#: Firings of the audit's test on the second answer it aims for, and the most reports it draws.
_FIRINGS, _MOST_TRIALS = 1_000, 2_000_000


def _answers(n: int) -> list[str]:
    """``"yes"`` for 60 % of ``n`` users and ``"no"`` for 40 %."""
    return ["yes"] * (n * 3 // 5) + ["no"] * (n - n * 3 // 5)


def _factor(node: HashedNode) -> float:
    """OLH's variance factor at an absent item on the node's grid, :math:`q^*(1 - q^*)/(p^* - q^*)^2`."""
    p, q = node.support
    return q * (1 - q) / (p - q) ** 2


def discovery_users(protocol: HeavyHitter) -> int:
    """Users enough that one group of the part that finds candidates (the first) sees a share of 0.4
    at eight standard errors at an absent item, and every other part (over all users) too: at least
    :data:`_USERS`, at most :data:`_MOST_USERS`."""
    first, *rest = (nodes[0] for nodes in protocol.parts.values())
    need = max([protocol.groups * _factor(first)] + [_factor(node) for node in rest]) * (8 / 0.4) ** 2
    return int(min(max(_USERS, math.ceil(need)), _MOST_USERS))


def audit_trials(protocol: HeavyHitter, level: int) -> tuple[int, float]:
    """Reports of each answer for the audit, and the slack allowed below the claim: enough that the
    test fires about :data:`_FIRINGS` times on the second answer (each part reports the first answer's
    hash value, apart from the second's, with probability ``(1 - 1/g) weight / 2**32``; at most
    :data:`_MOST_TRIALS`), and a slack of ``4 / sqrt(expected firings)`` plus 0.05 (the 99 %
    Clopper-Pearson bound's own is about ``2.6 / sqrt`` of them)."""
    rate = math.prod((1 - 1 / n.g) * n.weight / 2**32 for n in (nodes[level] for nodes in protocol.parts.values()))
    trials = int(min(max(200_000, math.ceil(_FIRINGS / rate)), _MOST_TRIALS))
    return trials, 4 / math.sqrt(trials * rate) + 0.05


def check_seeds(protocol: HeavyHitter) -> None:
    """The same seed gives the same reports; another seed gives others."""
    answers = _answers(2000)
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
    reports = protocol.perturb(_answers(2000), np.random.default_rng(3))
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
        except Exception as err:  # any other failure is no refusal with a reason
            raise AssertionError(f"bad reports ({why}) raised a {type(err).__name__}, not a ReportError") from err
        else:
            raise AssertionError(f"reports were not refused ({why})")


def check_privacy(protocol: HeavyHitter) -> None:
    """The exact check holds at every level, at the level's budget."""
    for eps, check in zip(protocol.levels, protocol.privacy(), strict=True):
        assert check.holds, f"the exact check fails at ε = {eps:g}:\n{check}"
        whole = [row.claimed for row in check.rows if row.part == "whole report"]
        assert whole == [eps], f"the whole report is checked against {whole}, not the level's {eps:g}"


def check_audit(protocol: HeavyHitter) -> None:
    """The audited epsilon of ``"spam"`` against ``"eggs"`` at the top level is within the claim and
    within the slack of :func:`audit_trials` of it."""
    top = protocol.levels.size - 1
    trials, slack = audit_trials(protocol, top)
    result = audit_heavy(protocol, "spam", "eggs", trials, np.random.default_rng(17), level=top)
    assert result.holds, f"the code leaks {result.audited:.3f} > {result.claimed:g}"
    assert result.audited > result.claimed - slack, (
        f"the audit is loose: {result.audited:.3f} of {result.claimed:g} ({trials:,} reports, slack {slack:.2f})"
    )


def check_discovery(protocol: HeavyHitter) -> None:
    """``"yes"`` (60 %) and ``"no"`` (40 %) of :func:`discovery_users` users are found in order, each
    within 4.5 standard errors, and nothing else is above the floor."""
    n = discovery_users(protocol)
    found = protocol.discover(protocol.perturb(_answers(n), np.random.default_rng(21)), top=2)
    assert found.answers == ["yes", "no"], f"found {found.answers}"
    est = found.estimate
    assert np.all(np.abs(est.frequencies - [0.6, 0.4]) < 4.5 * est.std_error), f"estimates {est.frequencies}"
    assert set(found.confident) <= {"yes", "no"}, f"above the floor: {found.confident}"


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

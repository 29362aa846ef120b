r"""What a memoized spec's reports protect over a device's rounds: two guarantees, not one.

A memoized spec (``pldp.LGRR``, ``pldp.LOUE``, ...; ``docs/wire-format.md`` §2, ``memo``) draws a
permanent randomized response once per answer and sends every report through a fresh
instantaneous one. Its reports protect two things, at two different strengths:

* **the answer**: every report of one answer is a function of its one permanent response, so all
  of them together reveal at most :math:`\varepsilon_\infty` of it; a device spends that each
  time its answer is *new* (a value it never reported before), so :math:`N` rounds spend at most
  :math:`\min(N, d)\,\varepsilon_\infty` on the values (:math:`d` answers), which is what the
  device's ledger charges (:mod:`pldp.ledger`);
* **whether and when the answer changes**: reports of one permanent response agree more often
  than reports of two, so the change times leak more with every round, without limit: the
  whole-history loss of :math:`r` reports (:func:`pldp.privacy.over_rounds`, over every pair of
  histories, values and change times) grows with :math:`r`, and a spec bounds it only by capping
  the reports one device sends (its ``caps.rounds``, :attr:`pldp.deploy.Spec.rounds_cap`).

:func:`rounds_guarantees` gives both for a spec (the whole-history loss at the spec's rounds cap,
or at :data:`UNCAPPED_ROUNDS` without one), with :math:`r\,\varepsilon_1` (as many fresh,
non-memoized reports) for comparison; ``pldp spec verify`` prints it and the collector's survey
page and dashboard say it in words (``GET /v1/campaigns/{id}/round``). :func:`whole_history` is
one whole-history loss, cached per spec and number of reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from pldp.channel.memo import MemoNode
from pldp.channel.node import budget_json
from pldp.deploy.spec import Spec
from pldp.privacy.base import repeated
from pldp.privacy.rounds import history_bound, over_rounds

__all__ = [
    "HISTORY_MAX_EXACT",
    "HISTORY_MAX_WORK",
    "UNCAPPED_ROUNDS",
    "HistoryLoss",
    "RoundsGuarantees",
    "rounds_guarantees",
    "whole_history",
]

#: ``max_exact`` of :func:`whole_history` for two answers (divided by ``d / 2`` for ``d``): the exact
#: search's output configurations, kept small so that one loss takes well under a second (beyond it,
#: the accountant's proven bound). L-GRR over two answers is exact up to 10 reports.
HISTORY_MAX_EXACT = 10_000
#: The most reports times answers :func:`whole_history` hands to :func:`pldp.privacy.over_rounds`
#: (whose same-pattern search grows with both); beyond it, the proven bound alone
#: (:func:`pldp.privacy.history_bound`), for any number of reports.
HISTORY_MAX_WORK = 20_000
#: The numbers of reports :func:`rounds_guarantees` gives the whole-history loss for, without a rounds cap.
UNCAPPED_ROUNDS = (1, 2, 5, 10, 30)


@dataclass(frozen=True)
class HistoryLoss:
    r"""The whole-history loss of ``rounds`` reports of one device (:func:`whole_history`).

    Attributes
    ----------
    rounds : int
    epsilon : float
        The largest privacy loss over every pair of histories (values and change times) and
        reports: exact when :attr:`exact`, else a proven upper bound; ``inf`` when an answer is
        not protected.
    exact : bool
    fresh_epsilon : float
        :math:`r\,\varepsilon_1`: as many fresh (non-memoized) reports, for comparison.
    """

    rounds: int
    epsilon: float
    exact: bool
    fresh_epsilon: float

    def to_dict(self) -> dict[str, Any]:
        """As JSON values (``"inf"`` for an infinite epsilon)."""
        return {
            "rounds": self.rounds,
            "epsilon": budget_json(self.epsilon),
            "exact": self.exact,
            "fresh_epsilon": budget_json(self.fresh_epsilon),
        }


@lru_cache(maxsize=256)
def whole_history(spec: Spec, rounds: int) -> HistoryLoss:
    """The whole-history loss of ``rounds`` reports of a memoized spec, cached per spec and ``rounds``:
    :func:`pldp.privacy.over_rounds` with a small ``max_exact`` (:data:`HISTORY_MAX_EXACT`), or
    beyond :data:`HISTORY_MAX_WORK` its proven bound alone (:func:`pldp.privacy.history_bound`).

    Raises
    ------
    ParameterError
        When the spec is not memoized or ``rounds`` is not a positive integer.
    """
    d = int(cast(MemoNode, spec.root).d) if spec.root.memoized else 1
    if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds * d > HISTORY_MAX_WORK:
        bound, fresh = history_bound(spec.root, rounds)
        return HistoryLoss(rounds, bound, False, fresh)
    found = over_rounds(spec.root, rounds, max_exact=HISTORY_MAX_EXACT * 2 // max(d, 2))
    return HistoryLoss(found.rounds, found.epsilon, found.exact, found.fresh_epsilon)


@dataclass(frozen=True)
class RoundsGuarantees:
    r"""What a memoized spec's reports protect over a device's rounds (:func:`rounds_guarantees`).

    Attributes
    ----------
    permanent_epsilon : float
        :math:`\varepsilon_\infty`, the largest budget of the permanent response: what the answer
        is protected at each time it is new (all its reports together).
    permanent_epsilons : tuple of float
        Each answer's :math:`\varepsilon_\infty` (an item-personalized spec's differ).
    one_report_epsilon : float
        :math:`\varepsilon_1`: one report's own bound (the spec's claim, over every answer).
    values : int
        :math:`d`, the answers that can draw a permanent response.
    rounds_cap : int or None
        The spec's ``caps.rounds`` (:math:`N`), else None.
    values_epsilon : float or None
        :math:`\min(N, d)\,\varepsilon_\infty`: the most :math:`N` reports spend on the values
        (what the device's ledger charges them); None without a rounds cap.
    history : tuple of HistoryLoss
        The whole-history loss: by default one entry, at :math:`N`, with a rounds cap; else one per
        :data:`UNCAPPED_ROUNDS` (it grows without limit).
    """

    permanent_epsilon: float
    permanent_epsilons: tuple[float, ...]
    one_report_epsilon: float
    values: int
    rounds_cap: int | None
    values_epsilon: float | None
    history: tuple[HistoryLoss, ...]

    def to_dict(self) -> dict[str, Any]:
        """As JSON values (``"inf"`` for an infinite epsilon)."""
        return {
            "permanent_epsilon": budget_json(self.permanent_epsilon),
            "permanent_epsilons": [budget_json(e) for e in self.permanent_epsilons],
            "one_report_epsilon": budget_json(self.one_report_epsilon),
            "values": self.values,
            "rounds_cap": self.rounds_cap,
            "values_epsilon": None if self.values_epsilon is None else budget_json(self.values_epsilon),
            "history": [h.to_dict() for h in self.history],
        }

    def lines(self) -> list[str]:
        """The guarantees in words, as ``pldp spec verify`` prints them (three significant digits; with a
        rounds cap, the loss of the first :attr:`history` entry, that of the cap by default)."""
        eps = self.permanent_epsilons
        each = f"eps_inf = {_g(self.permanent_epsilon)}"
        if len(set(eps)) > 1:
            each = f"eps_inf = {_g(min(eps))} to {_g(max(eps))} by answer (at worst {_g(self.permanent_epsilon)})"
        out = [
            "Over a device's rounds (memoized: one permanent response per answer, a fresh report of it each round):",
        ]
        head = f"  the answer: at {each} each time it is new"
        n, d = self.rounds_cap, self.values
        if n is None or self.values_epsilon is None:
            most = _g(repeated(d, self.permanent_epsilon))
            out.append(
                f"{head}; at most d * eps_inf = {d} * {_g(self.permanent_epsilon)} = {most} over any number of reports"
            )
            out.append(
                "  whether and when the answer changes: no rounds cap (caps.rounds), so the whole-history eps "
                "grows with the number of reports, without limit:"
            )
            rows = [("reports", "whole history", "r * eps_1")]
            rows += [(str(h.rounds), _how(h), _g(h.fresh_epsilon)) for h in self.history]
            widths = [max(len(row[i]) for row in rows) for i in range(3)]
            out += [f"    {a:>{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}".rstrip() for a, b, c in rows]
            return out
        out.append(
            f"{head}; at most min({n}, {d}) * {_g(self.permanent_epsilon)} = {_g(self.values_epsilon)} "
            f"over the spec's {n} rounds"
        )
        h = self.history[0]
        out.append(
            f"  whether and when the answer changes: eps {_how(h, '= ')} over the spec's {n} rounds (caps.rounds); "
            f"{n} fresh reports: r * eps_1 = {_g(h.fresh_epsilon)}"
        )
        return out


def _g(eps: float) -> str:
    """An epsilon for people, as the pages write it: three significant digits, ``inf`` for none."""
    return "inf" if eps == math.inf else f"{eps:.3g}"


def _how(h: HistoryLoss, equals: str = "") -> str:
    """``6.16 (exact)``, ``at most 25.4`` or ``inf (an answer is not protected)`` (after ``equals``
    where it is a value, not a bound)."""
    if h.epsilon == math.inf:
        return f"{equals}inf (an answer is not protected)"
    return f"{equals}{_g(h.epsilon)} (exact)" if h.exact else f"at most {_g(h.epsilon)}"


def rounds_guarantees(spec: Spec, counts: tuple[int, ...] | None = None) -> RoundsGuarantees | None:
    r"""Both guarantees of a memoized spec over a device's rounds (module docstring); None for a spec
    that is not memoized (its :math:`r` reports compose to :math:`r\,\bar\varepsilon`).

    Parameters
    ----------
    spec : Spec
    counts : tuple of int, optional
        The numbers of reports to give the whole-history loss for (:attr:`RoundsGuarantees.history`,
        in this order); default the spec's rounds cap, or :data:`UNCAPPED_ROUNDS` without one.

    Examples
    --------
    >>> import pldp
    >>> spec = Spec.from_mechanism(pldp.LGRR(2.0, 1.0, 2), question="Slept well?", labels=["yes", "no"],
    ...                            caps={"rounds": 8})
    >>> g = rounds_guarantees(spec)
    >>> g.permanent_epsilon, g.values_epsilon, [(h.rounds, round(h.epsilon, 2), h.exact) for h in g.history]
    (2.0, 4.0, [(8, 6.16, True)])
    """
    root = spec.root
    if not root.memoized:
        return None
    node = cast(MemoNode, root)
    _, one = node.claims()
    eps = tuple(float(e) for e in node.permanent_epsilons)
    worst = max(eps)
    cap = spec.rounds_cap
    if counts is None:
        counts = UNCAPPED_ROUNDS if cap is None else (cap,)
    values = None if cap is None else min(cap, node.d) * worst
    return RoundsGuarantees(
        permanent_epsilon=worst,
        permanent_epsilons=eps,
        one_report_epsilon=float(one),
        values=int(node.d),
        rounds_cap=cap,
        values_epsilon=values,
        history=tuple(whole_history(spec, r) for r in counts),
    )

"""The ledger itself (:mod:`pldp.ledger`): the caps, the charge of a batch, and the view."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pldp.deploy.spec import Spec
from pldp.devicefiles import device_file_path
from pldp.errors import ParameterError, PLDPError
from pldp.ledger.costs import SpecCost, spec_cost
from pldp.ledger.store import LedgerFile, is_count, json_eps, read_eps

__all__ = ["Caps", "FamilySpend", "Ledger", "LedgerCapError", "LedgerView", "Spend", "default_ledger_path"]

#: Slack of a cap comparison (absolute, in epsilon), for sums of decimal budgets such as 0.1 * 3.
TOLERANCE = 1e-9


class LedgerCapError(PLDPError, RuntimeError):
    """A batch that would spend more than a cap allows: refused before anything was drawn or recorded."""


def default_ledger_path() -> Path:
    """Where a device keeps its ledger by default: ``$PLDP_LEDGER`` if set, else ``pldp/ledger.json`` in
    the user's data directory (beside the memo store, :func:`pldp.deploy.memostore.default_store_path`).
    :class:`pldp.client.Client` opens it for a spec that sets caps when it is given no ledger."""
    return device_file_path("ledger.json", "PLDP_LEDGER")


@dataclass(frozen=True)
class Caps:
    """The device owner's caps, in epsilon (None: no cap). ``day`` and ``total`` bound the whole device
    (all families), per UTC day and over all time; ``family_day`` and ``family_total`` each family
    (a spec's own ``caps`` bound its family too: the smaller cap applies, :meth:`Ledger.charge`)."""

    day: float | None = None
    total: float | None = None
    family_day: float | None = None
    family_total: float | None = None

    def __post_init__(self) -> None:
        for name in ("day", "total", "family_day", "family_total"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
                raise ParameterError(f"the cap {name} must be a number >= 0 or None, got {v!r}")


@dataclass(frozen=True)
class Spend:
    r"""Spend and counts of a family or the device (epsilon ``inf``: unbounded).

    ``epsilon`` is the *charged* spend, what the caps are checked against: the worst case of the
    reports made, from their counts and specs only (:mod:`pldp.ledger`, the accounting rule).
    ``values_epsilon`` is the *per-value* spend, for information only: the sum of
    :math:`\bar\varepsilon_\infty` over the values this device's reports actually drew a permanent
    response for (``values`` of them), plus the fresh reports' :math:`\bar\varepsilon`. It depends on
    the answers, so no refusal ever reads it; it bounds what the reports reveal about the values
    given the times they changed, not the loss over whole histories (:mod:`pldp.ledger`).
    """

    epsilon: float = 0.0
    reports: int = 0
    values: int = 0
    values_epsilon: float = 0.0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.epsilon + other.epsilon,
            self.reports + other.reports,
            self.values + other.values,
            self.values_epsilon + other.values_epsilon,
        )


@dataclass(frozen=True)
class FamilySpend:
    """One family's line of the ledger: today's and all-time spend (:class:`Spend`: charged, and per
    value), the largest one-report bound of its reports, and its campaigns (spec id to the rounds
    reported, when the caller named them)."""

    family: str
    today: Spend
    total: Spend
    report_epsilon: float
    campaigns: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LedgerView:
    """What :meth:`Ledger.view` (and :meth:`pldp.client.Client.ledger`) shows: the UTC day, the device's
    spend today and in all, each family's, and the caps (checked against the charged spends,
    ``Spend.epsilon``; ``Spend.values_epsilon`` is shown for information only)."""

    day: str
    today: Spend
    total: Spend
    families: tuple[FamilySpend, ...]
    caps: Caps


class Ledger:
    """A device's privacy ledger (:mod:`pldp.ledger`).

    Parameters
    ----------
    path : path or None
        The ledger file (created at the first charge, mode ``0600``); None keeps it in memory (tests
        and simulations only: it dies with the process).
    caps : Caps, optional
        The device owner's caps; default none.
    clock : callable, optional
        Seconds since the epoch (default :func:`time.time`); its UTC date is the ledger's day.

    Examples
    --------
    >>> import pldp
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="OS?", labels=["linux", "mac", "windows"])
    >>> ledger = Ledger(None, caps=Caps(day=2.0))
    >>> ledger.charge(spec, 2)
    2.0
    >>> ledger.view().today
    Spend(epsilon=2.0, reports=2, values=0, values_epsilon=2.0)
    >>> try:
    ...     ledger.charge(spec, 1)
    ... except LedgerCapError as exc:
    ...     print(str(exc).split(": ")[1])
    the device's daily cap is epsilon = 2, 2 is spent today, and this batch would spend 1. Nothing was drawn or sent.
    """

    def __init__(
        self, path: str | os.PathLike[str] | None, *, caps: Caps | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = None if path is None else Path(path)
        self.caps = caps if caps is not None else Caps()
        self.clock = clock
        self._file = LedgerFile(self.path)

    def __repr__(self) -> str:
        return f"Ledger({str(self.path) if self.path else None!r}, caps={self.caps!r})"

    def today(self) -> str:
        """The ledger's day: the UTC date of :attr:`clock`, ``YYYY-MM-DD``."""
        return time.strftime("%Y-%m-%d", time.gmtime(self.clock()))

    # ------------------------------------------------------------------ charging
    def _refusal(
        self, spent: _Charged, cost: float, spec_caps: dict[str, float] | None, before: int, reports: int
    ) -> str | None:
        """Why a batch of ``reports`` reports charging ``cost`` to a family that sent ``before`` reports
        (all time) would break a cap, or None. A family's epsilon cap is the smaller of the owner's and
        the spec's (the spec's on a tie); the spec's rounds cap bounds ``before + reports``, whatever
        the charge (a batch charged 0 is refused by it too).

        Its inputs are data-independent by construction: the charged spends (:class:`_Charged`, read
        from the counts and specs of earlier reports), the charge (:meth:`SpecCost.charge`), the counts
        and the caps; never the values new to the memo nor the per-value spend."""
        theirs = spec_caps or {}
        if cost > 0:
            day_name, day_cap = _smaller(("the spec's", theirs.get("day")), ("the owner's", self.caps.family_day))
            all_name, all_cap = _smaller(("the spec's", theirs.get("total")), ("the owner's", self.caps.family_total))
            checks = [
                (f"{day_name} daily cap of this family", day_cap, spent.family_today, "today"),
                (f"{all_name} total cap of this family", all_cap, spent.family_total, "in all"),
                ("the device's daily cap", self.caps.day, spent.device_today, "today"),
                ("the device's total cap", self.caps.total, spent.device_total, "in all"),
            ]
            for name, cap, was, when in checks:
                if cap is not None and was + cost > cap + TOLERANCE:
                    return f"{name} is epsilon = {cap:g}, {was:g} is spent {when}, and this batch would spend {cost:g}"
        rounds = theirs.get("rounds")
        if rounds is not None and reports > 0 and before + reports > rounds:
            return (
                f"the spec's rounds cap of this family is {int(rounds)} report(s), {before} sent so far, "
                f"and this batch would send {reports}"
            )
        return None

    def charge(self, spec: Spec, reports: int, values: int = 0, *, round: int | None = None) -> float:
        """Check the caps and record a batch of ``reports`` reports of ``spec``; the charge :math:`c`
        (:mod:`pldp.ledger`), which depends on ``reports``, the family's earlier reports and the spec
        only.

        The caps are the owner's (:attr:`caps`) and the spec's own (:attr:`pldp.deploy.Spec.caps`): its
        family's charged spend today and in all must stay within the smaller of the spec's ``day`` and
        the owner's ``family_day``, and of the spec's ``total`` and the owner's ``family_total``; and
        its reports in all (the earlier ones and this batch's) within the spec's ``rounds``.

        ``values`` (how many of the batch's values were new to its memo, :func:`new_values`) is
        recorded for display (the per-value spend, ``Spend.values_epsilon``) and never decides
        anything: whether a batch is refused does not depend on the answers it protects.

        Call it before drawing the batch: a refused batch is never drawn, and spends nothing.

        Raises
        ------
        LedgerCapError
            When :math:`c > 0` would take a charged spend over a cap, or the batch would take the
            family's reports over the spec's rounds cap; nothing is recorded.
        LedgerError
            When the ledger cannot be read, trusted or written.
        """
        if not (is_count(reports) and is_count(values) and values <= max(reports, 0)):
            raise ParameterError(
                f"reports and values must be integers with 0 <= values <= reports, got {reports}, {values}"
            )
        if round is not None and not (is_count(round) and round > 0):
            raise ParameterError(f"round must be a positive integer, got {round!r}")
        cost = spec_cost(spec)
        with self._file.locked():
            families = self._file.read()
            day = self.today()
            entry = families.get(cost.family)
            before = entry["reports"] if entry else 0
            c = cost.charge(reports, before)
            why = self._refusal(_Charged.of(families, cost.family, day), c, spec.caps, before, reports)
            if why is not None:
                raise LedgerCapError(
                    f"the privacy ledger refuses {reports} report(s) of spec {spec.id} (family {cost.family!r}): "
                    f"{why}. Nothing was drawn or sent."
                )
            spent = _Batch(reports, values, c, cost.spend(reports, values))
            families[cost.family] = _add(entry, spec, cost, spent, day, round)
            self._file.write(families)
        return c

    def view(self) -> LedgerView:
        """The ledger as it stands (:class:`LedgerView`); :class:`LedgerError` if it cannot be trusted."""
        return _view(self._file.read(), self.today(), self.caps)


def _smaller(*caps: tuple[str, float | None]) -> tuple[str, float | None]:
    """The smallest of named caps (None: no cap), the first on a tie; ``("", None)`` when none is set."""
    named = [(cap, i, name) for i, (name, cap) in enumerate(caps) if cap is not None]
    if not named:
        return "", None
    cap, _, name = min(named)
    return name, cap


@dataclass(frozen=True)
class _Charged:
    """The charged spends a refusal compares with the caps: the family's and the device's, today and in
    all (``epsilon`` and ``day_epsilon``: never the per-value spend)."""

    family_today: float
    family_total: float
    device_today: float
    device_total: float

    @classmethod
    def of(cls, families: dict[str, Any], family: str, day: str) -> _Charged:
        def today(e: dict[str, Any]) -> float:
            return read_eps(e["day_epsilon"]) if e["day"] == day else 0.0

        mine = families.get(family)
        every = [families[name] for name in sorted(families)]  # the order of the view and of the JS ledger
        return cls(
            today(mine) if mine else 0.0,
            read_eps(mine["epsilon"]) if mine else 0.0,
            sum((today(e) for e in every), 0.0),
            sum((read_eps(e["epsilon"]) for e in every), 0.0),
        )


@dataclass(frozen=True)
class _Batch:
    """What a charged batch adds to its family: its reports, its values new to the memo, its charge
    :math:`c` and its per-value spend."""

    reports: int
    values: int
    charged: float
    values_epsilon: float


def _add(
    entry: dict[str, Any] | None, spec: Spec, cost: SpecCost, batch: _Batch, day: str, round: int | None
) -> dict[str, Any]:
    """A family's entry after a charge (a new entry for a new family; today's figures restarted on a new day)."""
    e: dict[str, Any] = (
        dict(entry)
        if entry
        else {"epsilon": 0.0, "reports": 0, "values": 0, "values_epsilon": 0.0, "report_epsilon": 0.0}
    )
    if e.get("day") != day:
        e.update(day=day, day_epsilon=0.0, day_reports=0, day_values=0, day_values_epsilon=0.0)

    def plus(key: str, eps: float) -> float | None:
        return json_eps(read_eps(e[key]) + eps)

    e.update(epsilon=plus("epsilon", batch.charged), day_epsilon=plus("day_epsilon", batch.charged))
    e.update(
        values_epsilon=plus("values_epsilon", batch.values_epsilon),
        day_values_epsilon=plus("day_values_epsilon", batch.values_epsilon),
    )
    e.update(reports=e["reports"] + batch.reports, values=e["values"] + batch.values)
    e.update(day_reports=e["day_reports"] + batch.reports, day_values=e["day_values"] + batch.values)
    e["report_epsilon"] = json_eps(max(read_eps(e["report_epsilon"]), cost.report_epsilon))
    campaigns = dict(e.get("campaigns", {}))
    old = campaigns.get(spec.id, {"reports": 0, "rounds": []})
    mine: dict[str, Any] = {
        "reports": old["reports"] + batch.reports,
        "rounds": sorted(set(old["rounds"]) | ({round} if round is not None else set())),
    }
    if isinstance(spec.question, str):
        mine["question"] = spec.question
    campaigns[spec.id] = mine
    e["campaigns"] = campaigns
    return e


def _view(families: dict[str, Any], day: str, caps: Caps) -> LedgerView:
    """The :class:`LedgerView` of checked ``families`` on ``day``."""
    lines = []
    for name in sorted(families):
        e = families[name]
        today = (
            Spend(read_eps(e["day_epsilon"]), e["day_reports"], e["day_values"], read_eps(e["day_values_epsilon"]))
            if e["day"] == day
            else Spend()
        )
        total = Spend(read_eps(e["epsilon"]), e["reports"], e["values"], read_eps(e["values_epsilon"]))
        campaigns = {k: tuple(v["rounds"]) for k, v in sorted(e["campaigns"].items())}
        lines.append(FamilySpend(name, today, total, read_eps(e["report_epsilon"]), campaigns))
    today_all = sum((f.today for f in lines), Spend())
    total_all = sum((f.total for f in lines), Spend())
    return LedgerView(day, today_all, total_all, tuple(lines), caps)

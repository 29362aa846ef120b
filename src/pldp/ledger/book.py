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
    """Epsilon spent (``inf``: unbounded), the reports made and the memoized values drawn."""

    epsilon: float = 0.0
    reports: int = 0
    values: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.epsilon + other.epsilon, self.reports + other.reports, self.values + other.values)


@dataclass(frozen=True)
class FamilySpend:
    """One family's line of the ledger: today's and all-time spend, the largest one-report bound of
    its reports, and its campaigns (spec id to the rounds reported, when the caller named them)."""

    family: str
    today: Spend
    total: Spend
    report_epsilon: float
    campaigns: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LedgerView:
    """What :meth:`Ledger.view` (and :meth:`pldp.client.Client.ledger`) shows: the UTC day, the device's
    spend today and in all, each family's, and the caps."""

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
    Spend(epsilon=2.0, reports=2, values=0)
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
        self, families: dict[str, Any], family: str, cost: float, day: str, spec_caps: dict[str, float] | None
    ) -> str | None:
        """Why a charge of ``cost`` to ``family`` would break a cap, or None. A family's cap is the smaller
        of the owner's and the spec's (the spec's on a tie)."""
        view = _view(families, day, self.caps)
        mine = next((f for f in view.families if f.family == family), None)
        fam_today = mine.today.epsilon if mine else 0.0
        fam_total = mine.total.epsilon if mine else 0.0
        theirs = spec_caps or {}
        day_name, day_cap = _smaller(("the spec's", theirs.get("day")), ("the owner's", self.caps.family_day))
        all_name, all_cap = _smaller(("the spec's", theirs.get("total")), ("the owner's", self.caps.family_total))
        checks = [
            (f"{day_name} daily cap of this family", day_cap, fam_today, "today"),
            (f"{all_name} total cap of this family", all_cap, fam_total, "in all"),
            ("the device's daily cap", self.caps.day, view.today.epsilon, "today"),
            ("the device's total cap", self.caps.total, view.total.epsilon, "in all"),
        ]
        for name, cap, spent, when in checks:
            if cap is not None and spent + cost > cap + TOLERANCE:
                return f"{name} is epsilon = {cap:g}, {spent:g} is spent {when}, and this batch would spend {cost:g}"
        return None

    def charge(self, spec: Spec, reports: int, values: int = 0, *, round: int | None = None) -> float:
        """Check the caps and record a batch of ``reports`` reports of ``spec`` (``values`` of them new to
        its memo); the charge :math:`c` (:mod:`pldp.ledger`).

        The caps are the owner's (:attr:`caps`) and the spec's own (:attr:`pldp.deploy.Spec.caps`): its
        family's spend today and in all must stay within the smaller of the spec's ``day`` and the
        owner's ``family_day``, and of the spec's ``total`` and the owner's ``family_total``.

        Call it before drawing the batch: a refused batch is never drawn, and spends nothing.

        Raises
        ------
        LedgerCapError
            When :math:`c > 0` would take a spend over a cap; nothing is recorded.
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
        c = cost.charge(reports, values)
        with self._file.locked():
            families = self._file.read()
            day = self.today()
            if c > 0:
                why = self._refusal(families, cost.family, c, day, spec.caps)
                if why is not None:
                    raise LedgerCapError(
                        f"the privacy ledger refuses {reports} report(s) of spec {spec.id} (family {cost.family!r}): "
                        f"{why}. Nothing was drawn or sent."
                    )
            families[cost.family] = _add(families.get(cost.family), spec, cost, reports, values, c, day, round)
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


def _add(
    entry: dict[str, Any] | None,
    spec: Spec,
    cost: SpecCost,
    reports: int,
    values: int,
    c: float,
    day: str,
    round: int | None,
) -> dict[str, Any]:
    """A family's entry after a charge (a new entry for a new family; today's figures restarted on a new day)."""
    e: dict[str, Any] = dict(entry) if entry else {"epsilon": 0.0, "reports": 0, "values": 0, "report_epsilon": 0.0}
    if e.get("day") != day:
        e.update(day=day, day_epsilon=0.0, day_reports=0, day_values=0)

    def plus(key: str) -> float | None:
        return json_eps(read_eps(e[key]) + c)

    e.update(epsilon=plus("epsilon"), day_epsilon=plus("day_epsilon"))
    e.update(reports=e["reports"] + reports, values=e["values"] + values)
    e.update(day_reports=e["day_reports"] + reports, day_values=e["day_values"] + values)
    e["report_epsilon"] = json_eps(max(read_eps(e["report_epsilon"]), cost.report_epsilon))
    campaigns = dict(e.get("campaigns", {}))
    old = campaigns.get(spec.id, {"reports": 0, "rounds": []})
    mine: dict[str, Any] = {
        "reports": old["reports"] + reports,
        "rounds": sorted(set(old["rounds"]) | ({round} if round is not None else set())),
    }
    if isinstance(spec.question, str):
        mine["question"] = spec.question
    campaigns[spec.id] = mine
    e["campaigns"] = campaigns
    return e


def _view(families: dict[str, Any], day: str, caps: Caps) -> LedgerView:
    lines = []
    for name in sorted(families):
        e = families[name]
        today = Spend(read_eps(e["day_epsilon"]), e["day_reports"], e["day_values"]) if e["day"] == day else Spend()
        total = Spend(read_eps(e["epsilon"]), e["reports"], e["values"])
        campaigns = {k: tuple(v["rounds"]) for k, v in sorted(e["campaigns"].items())}
        lines.append(FamilySpend(name, today, total, read_eps(e["report_epsilon"]), campaigns))
    today_all = sum((f.today for f in lines), Spend())
    total_all = sum((f.total for f in lines), Spend())
    return LedgerView(day, today_all, total_all, tuple(lines), caps)

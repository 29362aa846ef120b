"""What every attack rule shares: the strategies, an attack's parameters, and the rules' registry.

An oracle family's *rule* (:class:`Rule`) says, in one place, how fake users attack that family:
which items they promote (:meth:`Rule.promoted`), the fake reports in the family's own format
(:meth:`Rule.reports`), the expected gain in closed form where one exists
(:meth:`Rule.expected_gain`) and how to measure the gain of a tally (:meth:`Rule.shift`). Rules are
registered by oracle class (:func:`rule_for`); :func:`rule_of` finds the rule of an oracle through
its class's method resolution order, so a subclass (KRR of the direct encoding, APLDP of RCF)
uses its base's rule unless it has its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from pldp._validation import _show
from pldp.errors import ParameterError
from pldp.oracle import FrequencyOracle

__all__ = ["LEVEL_STRATEGIES", "STRATEGIES", "Attack", "Rule", "check_targets", "rule_for", "rule_of"]

#: The fixed strategies of :func:`pldp.attacks.fake_reports`, in the order the docs list them (the
#: searching attacker, ``"optimal"``, is not one of them: :mod:`pldp.attacks.optimal`).
STRATEGIES: tuple[str, ...] = (
    "mga",
    "adaptive",
    "input",
    "min_level",
    "max_level",
    "level",
    "sensitive",
    "knows_defence",
)
#: The strategies that choose a claimed budget level (user-level protocols only).
LEVEL_STRATEGIES: tuple[str, ...] = ("min_level", "max_level", "level")


@dataclass(frozen=True)
class Attack:
    """The parameters of one attack, checked.

    Attributes
    ----------
    targets : ndarray of int, or tuple of them
        The items the fakes promote (after :meth:`Rule.promoted`): sorted, distinct indices; for
        MPLDP one array per attribute (possibly empty).
    strategy : str
        One of :data:`STRATEGIES`.
    level : int or None
        The claimed level's index (``strategy="level"``).
    shares : ndarray or None
        The honest users' level shares the attacker assumes (``"adaptive"``, ``"input"``).
    defence : str or None
        The estimation method the attacker knows of (``"knows_defence"``, ``"optimal"``).
    split : ndarray or None
        Fakes per claimed level (``"optimal"`` on a levelled protocol: the split found by
        :func:`pldp.attacks.optimal.search`, or given); shape ``(t,)``, or ``(2, t)`` whose
        second row counts the fakes of each (unary) level that set the target bits alone.
    """

    targets: Any
    strategy: str
    level: int | None = None
    shares: np.ndarray | None = None
    defence: str | None = None
    split: np.ndarray | None = None


def check_targets(targets: Any, d: int) -> np.ndarray:
    """``targets`` as sorted distinct int64 indices in ``[0, d)``, at least one (else
    :class:`~pldp.errors.ParameterError` naming the bad ones)."""
    arr = np.asarray(targets)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"targets must be a non-empty 1-D array of item indices, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ParameterError(f"targets must be integer item indices, got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= d)
    if bad.any():
        raise ParameterError(f"targets must lie in [0, {d}); bad: {_show(arr[bad])}")
    out = np.unique(arr.astype(np.int64))
    if out.size != arr.size:
        raise ParameterError(f"targets must be distinct, got {_show(arr)}")
    return out


class Rule(ABC):
    """How fake users attack one family of oracles (module docstring)."""

    #: The strategies this family accepts (others raise :class:`~pldp.errors.ParameterError`).
    strategies: tuple[str, ...] = STRATEGIES

    def check(self, oracle: FrequencyOracle, strategy: str) -> None:
        """Refuse a strategy this family does not take, saying why."""
        if strategy not in STRATEGIES:
            raise ParameterError(f"unknown strategy {strategy!r}; choose one of {STRATEGIES}")
        if strategy not in self.strategies:
            raise ParameterError(
                f"strategy {strategy!r} does not apply to {type(oracle).__name__}: "
                f"it takes {', '.join(self.strategies)}"
            )

    def promoted(self, oracle: FrequencyOracle, targets: Any, strategy: str) -> Any:
        """The items the fakes promote: ``targets`` checked (``"sensitive"`` may choose others)."""
        return check_targets(targets, oracle.d)

    @abstractmethod
    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> Any:
        """What ``oracle.perturb`` returns, for ``m`` fake users."""

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        """The expected gain of the ``"unbiased"`` estimate, in closed form, when ``m`` fakes join the
        honest users of ``data`` (``simulate``'s arguments); None where no closed form is given."""
        return None

    def exact(self, attack: Attack) -> bool:
        """Whether :meth:`expected_gain` is exact for this attack (else a first-order value)."""
        return True

    def frequencies(self, oracle: FrequencyOracle, tally: Any, method: str, options: dict[str, Any]) -> Any:
        """The estimated frequencies of ``tally`` (for MPLDP, one array per attribute)."""
        return oracle.estimate(tally, method, **options).frequencies

    def difference(self, after: Any, before: Any) -> Any:
        """``after - before``, item by item, of two :meth:`frequencies`."""
        return after - before

    def shift(self, oracle: FrequencyOracle, honest: Any, poisoned: Any, method: str, options: dict[str, Any]) -> Any:
        """The estimate of ``poisoned`` minus that of ``honest``, item by item (for MPLDP, one array
        per attribute)."""
        before = self.frequencies(oracle, honest, method, options)
        return self.difference(self.frequencies(oracle, poisoned, method, options), before)

    def total(self, shift: Any, targets: Any) -> float:
        """The gain of the targets: the sum of their shifts."""
        return float(np.sum(np.asarray(shift)[targets]))

    def gain(
        self, oracle: FrequencyOracle, honest: Any, fake: Any, targets: Any, method: str, options: dict[str, Any]
    ) -> float:
        """The gain of ``targets`` (checked) when the tally ``fake`` joins ``honest``: :meth:`total`
        of :meth:`shift` (:func:`pldp.attacks.gain`)."""
        return self.total(
            self.shift(oracle, honest, honest + fake, method, options), self.promoted(oracle, targets, "mga")
        )

    def fixed_reports(
        self,
        oracle: FrequencyOracle,
        targets: Any,
        strategy: str,
        m: int,
        rng: np.random.Generator,
        level: int | None = None,
    ) -> Any:
        """``m`` fake reports of a fixed ``strategy`` (``level=`` for ``"level"``), as
        :func:`pldp.attacks.fake_reports` sends them with its defaults."""
        self.check(oracle, strategy)
        return self.reports(oracle, Attack(self.promoted(oracle, targets, strategy), strategy, level), m, rng)


R = TypeVar("R", bound=Rule)
#: Oracle class -> its family's rule (filled by :func:`rule_for`).
RULES: dict[type, Rule] = {}


def rule_for(*classes: type) -> Callable[[type[R]], type[R]]:
    """Class decorator: register an instance of the rule for each of ``classes``."""

    def register(cls: type[R]) -> type[R]:
        for c in classes:
            RULES[c] = cls()
        return cls

    return register


def rule_of(oracle: Any) -> Rule:
    """The rule of the closest class of ``oracle`` that has one (:class:`TypeError` naming the oracle
    if none: pldp.attacks does not know how to attack it)."""
    if not isinstance(oracle, FrequencyOracle):
        raise ParameterError(f"expected a pldp mechanism or protocol, got {type(oracle).__name__}")
    for cls in type(oracle).__mro__:
        if cls in RULES:
            return RULES[cls]
    raise TypeError(f"pldp.attacks has no rule for {type(oracle).__name__}: register one with rule_for")

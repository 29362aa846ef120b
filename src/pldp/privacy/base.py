"""The interface of every privacy report, and the composition of reports.

Every mechanism's and protocol's ``privacy()`` returns a :class:`PrivacyCheck`: an *exact*
check of the notion it claims, computed from its parameters (never by sampling), with

* ``holds``: every constraint of the notion is met (within a tolerance of ``1e-12`` on
  log-ratios);
* ``slack``: the smallest ``claimed - realised`` over the constraints (``>= -tolerance`` when
  it holds);
* ``ldp_epsilon``: the plain-LDP epsilon the report satisfies (the largest realised
  log-likelihood ratio between two inputs);
* ``summary()``: one line for people.

Protocols compose mechanisms, and their reports are :class:`ComposedPrivacy`: named parts
and a composition rule. ``"max"`` (parallel composition) when each user runs *one* of the
parts (the mechanism of her budget level), so the protocol's LDP epsilon is the largest part's;
``"sum"`` (sequential composition) when every user runs *every* part (MPLDP's attributes,
PLDP-FEBSF's data and level reports), so the epsilons add (Dwork & Roth, Theorem 3.16).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from pldp.errors import ParameterError

__all__ = ["TOLERANCE", "ComposedPrivacy", "PrivacyCheck", "repeated"]

#: Absolute tolerance on log-ratios used by default.
TOLERANCE = 1e-12


def repeated(count: float, epsilon: float) -> float:
    r"""``count`` reports at ``epsilon`` each, composed sequentially: :math:`k\varepsilon`, with
    :math:`0 \cdot \infty = 0` (zero reports spend nothing, even at an infinite budget).

    >>> repeated(3, 0.5), repeated(0, float("inf"))
    (1.5, 0.0)
    """
    return 0.0 if count == 0 else count * epsilon


class PrivacyCheck(ABC):
    """An exact check of a privacy claim (see the module docstring)."""

    #: Name of the notion checked (e.g. ``"LDP"``, ``"IPLDP"``, ``"MinID-LDP"``).
    notion: str

    @property
    @abstractmethod
    def holds(self) -> bool:
        """True when every constraint of the notion is met."""

    @property
    @abstractmethod
    def slack(self) -> float:
        """Smallest ``claimed - realised`` over the constraints (``inf`` when there are none)."""

    @property
    @abstractmethod
    def ldp_epsilon(self) -> float:
        """Plain-LDP epsilon: the largest realised log-likelihood ratio between two inputs."""

    @abstractmethod
    def summary(self) -> str:
        """One human-readable line."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.summary()})"


@dataclass(frozen=True, repr=False)
class ComposedPrivacy(PrivacyCheck, Mapping[str, PrivacyCheck]):
    """The privacy of a protocol made of named parts (a read-only mapping ``name -> part``).

    Attributes
    ----------
    notion : str
        What the protocol claims, e.g. ``"LDP at each user's level"``.
    parts : dict of str to PrivacyCheck
        The parts, each checked exactly.
    rule : {"max", "sum"}
        ``"max"``: each user runs one part (parallel composition); ``"sum"``: every user runs
        every part (sequential composition). Decides :attr:`ldp_epsilon`.

    Examples
    --------
    >>> import pldp
    >>> rep = ComposedPrivacy("two attributes", {"a": pldp.KRR(1.0, 3).privacy(), "b": pldp.KRR(0.5, 3).privacy()},
    ...                       "sum")
    >>> rep.holds, list(rep)
    (True, ['a', 'b'])

    The epsilons add; each part runs on the ``2**-32`` grid, a hair below its budget:

    >>> rep.ldp_epsilon <= 1.5, round(rep.ldp_epsilon, 6)
    (True, 1.5)
    """

    notion: str
    parts: Mapping[str, PrivacyCheck]
    rule: Literal["max", "sum"] = "max"

    def __post_init__(self) -> None:
        if self.rule not in ("max", "sum"):
            raise ParameterError(f"rule must be 'max' or 'sum', got {self.rule!r}")
        if not self.parts or not all(isinstance(p, PrivacyCheck) for p in self.parts.values()):
            raise ParameterError("a composed privacy report needs at least one part, each a PrivacyCheck")

    def __getitem__(self, key: str) -> PrivacyCheck:
        return self.parts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    @property
    def holds(self) -> bool:
        return all(p.holds for p in self.parts.values())

    @property
    def slack(self) -> float:
        return min((p.slack for p in self.parts.values()), default=math.inf)

    @property
    def ldp_epsilon(self) -> float:
        eps = [p.ldp_epsilon for p in self.parts.values()]
        return float(sum(eps)) if self.rule == "sum" else float(max(eps))

    @property
    def violations(self) -> list[str]:
        """Names of the parts that fail."""
        return [name for name, p in self.parts.items() if not p.holds]

    def summary(self) -> str:
        state = "holds" if self.holds else f"FAILS in {self.violations[:5]}"
        how = "each user runs one part" if self.rule == "max" else "every user runs every part"
        return (
            f"{self.notion} {state}; {len(self.parts)} part(s), {how}; slack={self.slack:.3g}, "
            f"LDP eps={self.ldp_epsilon:.6g}"
        )

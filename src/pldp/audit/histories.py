"""The pairs of histories the audit over time compares (:mod:`pldp.audit.longitudinal`): segments of
rounds in which each history holds one value, and the numbers of rounds a game may run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pldp.errors import ParameterError

__all__ = ["MAX_ROUNDS", "SCENARIOS", "Segment", "blocks", "parse_rounds", "same_pattern", "segments"]

#: The pairs of histories a device may have (:mod:`pldp.audit.longitudinal`).
SCENARIOS = ("same", "change", "split")
#: Most rounds per device in one game.
MAX_ROUNDS = 1000


@dataclass(frozen=True)
class Segment:
    """Rounds ``start .. stop-1`` in which history 0 holds ``v0`` and history 1 holds ``v1``."""

    start: int
    stop: int
    v0: int
    v1: int

    @property
    def length(self) -> int:
        """Rounds in the segment."""
        return self.stop - self.start


def segments(scenario: str, rounds: int, a: int, b: int) -> list[Segment]:
    """The segments of the two histories of ``scenario`` over ``rounds`` rounds (module docstring).

    Parameters
    ----------
    scenario : {"same", "change", "split"}
    rounds : int
    a, b : int
        The audited items.

    Returns
    -------
    list of Segment
        In round order; history 0 holds ``v0`` and history 1 ``v1`` in each.

    Raises
    ------
    ParameterError
        An unknown scenario.

    Examples
    --------
    >>> [(s.start, s.stop, s.v0, s.v1) for s in segments("change", 5, 0, 1)]
    [(0, 3, 0, 1), (3, 5, 1, 0)]
    >>> [(s.start, s.stop, s.v0, s.v1) for s in segments("split", 5, 0, 1)]  # a a b b b against a^5
    [(0, 2, 0, 0), (2, 5, 1, 0)]
    """
    if scenario not in SCENARIOS:
        raise ParameterError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    if scenario == "split":
        g = rounds // 2
        return ([Segment(0, g, a, a)] if g else []) + [Segment(g, rounds, b, a)]
    if scenario == "same" or rounds == 1:
        return [Segment(0, rounds, a, b)]
    h = -(-rounds // 2)
    return [Segment(0, h, a, b), Segment(h, rounds, b, a)]


def blocks(segs: Sequence[Segment], side: int) -> dict[int, list[int]]:
    """The segments of history ``side`` grouped by the value it holds in them: one memo per group."""
    out: dict[int, list[int]] = {}
    for i, seg in enumerate(segs):
        out.setdefault(seg.v1 if side else seg.v0, []).append(i)
    return out


def same_pattern(segs: Sequence[Segment]) -> bool:
    """Whether the two histories share their change pattern: they hold one value in the same rounds,
    so each draws its permanent responses for the same groups of rounds (module docstring).

    Parameters
    ----------
    segs : sequence of Segment
        The two histories, as :func:`segments` gives them.

    Returns
    -------
    bool

    Examples
    --------
    >>> same_pattern(segments("change", 6, 0, 1)), same_pattern(segments("split", 6, 0, 1))
    (True, False)
    """
    parts = [{tuple(v) for v in blocks(segs, side).values()} for side in (0, 1)]
    return parts[0] == parts[1]


def parse_rounds(text: str | Sequence[int]) -> tuple[int, ...]:
    """Numbers of rounds: ``"1,2,5,10,30"`` or a sequence of ints, each in ``1 .. MAX_ROUNDS``, sorted
    and without repeats.

    Raises
    ------
    ParameterError
        Anything else, naming the bad part.
    """
    parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else list(text)
    out: set[int] = set()
    for p in parts:
        ok = isinstance(p, str) and p.isascii() and p.isdigit()
        ok = ok or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
        if not ok or not 1 <= int(p) <= MAX_ROUNDS:
            raise ParameterError(f"rounds are whole numbers 1 .. {MAX_ROUNDS} (e.g. 1,2,5,10,30), got {p!r}")
        out.add(int(p))
    if not out:
        raise ParameterError("rounds is empty: give e.g. 1,2,5,10,30")
    return tuple(sorted(out))

"""The search the optimising attacker runs over its splits (:mod:`pldp.attacks.optimal`, and per
attribute :mod:`pldp.attacks.across`): greedy by chunks, then single-chunk moves.

The fakes come in chunks; an *assignment* gives each chunk an atom (a claimed level, a report
strategy). The greedy pass gives each chunk in turn the atom that raises the objective most given the
chunks before it; then each pass of moves tries every chunk on every other atom, the rest fixed, and
keeps any move that raises the objective, until a pass changes nothing (or ``passes`` ran). The
result is the best of that and the starting assignment (the best fixed strategy): never worse than it.
Cost: ``chunks * atoms`` evaluations per pass.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = ["Objective", "climb"]


class Objective(Protocol):
    """The attacker's objective on its shadow tallies, chunk by chunk."""

    fakes: Any  # fakes[j][i]: the tally of chunk j's fakes at atom i

    def of(self, fake: Any) -> float:
        """The objective with the fakes' tally ``fake``."""

    def fake(self, assign: list[int], skip: int = -1) -> Any:
        """The fakes' tally of an assignment (without chunk ``skip``)."""

    def plus(self, base: Any, j: int, atom: int) -> float:
        """The objective with chunk ``j`` at ``atom`` added to the tally ``base`` (None: no fakes)."""


def climb(
    obj: Objective, atoms: int, best: list[int], best_value: float, how: str, passes: int
) -> tuple[list[int], float, str]:
    """The best assignment found from ``best`` (worth ``best_value``, found by ``how``): module docstring.

    Returns
    -------
    (list of int, float, str)
        The assignment, its objective, and how it was found (``how``, ``"greedy"`` or ``"moves"``).
    """
    greedy: list[int] = []
    prefix = None
    for j in range(len(obj.fakes)):
        greedy.append(int(np.argmax([obj.plus(prefix, j, i) for i in range(atoms)])))
        chunk = obj.fakes[j][greedy[-1]]
        prefix = chunk if prefix is None else prefix + chunk
    value = obj.of(prefix)
    if value > best_value:
        best, best_value, how = greedy, value, "greedy"
    current, current_value = list(best), best_value
    for _ in range(int(passes)):
        changed = False
        for j in range(len(current)):
            rest = obj.fake(current, skip=j)
            values = [obj.plus(rest, j, i) if i != current[j] else current_value for i in range(atoms)]
            i = int(np.argmax(values))
            if values[i] > current_value + 1e-15:
                current[j], current_value, changed = i, values[i], True
        if not changed:
            break
    if current_value > best_value:
        best, best_value, how = current, current_value, "moves"
    return best, best_value, how

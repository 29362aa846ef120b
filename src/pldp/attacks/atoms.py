"""What the optimising attacker's fakes are split over: the *atoms* of an oracle
(:mod:`pldp.attacks.optimal`'s module docstring says what each does), and a split's shapes.

For a levelled protocol (RCF, APLDP, LLevels, PBP, PPDA, PLDP-FEBSF) the atoms are the claimed
levels, ``"level i"``, then ``"level i alone"`` for each level whose reports are unary; a split over
them becomes ``Attack.split`` by :func:`level_split`. For MPLDP the (attribute, level) pairs, each
also with the target bits alone (:mod:`pldp.attacks.across`); for a single mechanism the report
strategies (:data:`PURE_ATOMS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.attacks.base import rule_of
from pldp.errors import ParameterError

__all__ = [
    "PURE_ATOMS",
    "across_attributes",
    "atoms_of",
    "fakes_of",
    "is_levelled",
    "level_split",
    "padded_split",
    "unary_levels",
]

#: The report strategies a single mechanism's fakes may mix (unary; direct encoding: ``"mga"`` and
#: ``"knows_defence"``); ``"alone"``: the target bits and nothing else, the fewest ones a report can have.
PURE_ATOMS = ("mga", "adaptive", "knows_defence", "alone")


def across_attributes(oracle: Any) -> bool:
    """MPLDP: a split over (attribute, level) pairs."""
    from pldp.attacks.leveled import MPLDPRule

    return isinstance(rule_of(oracle), MPLDPRule)


def is_levelled(oracle: Any) -> bool:
    from pldp.attacks.leveled import LeveledRule

    return isinstance(rule_of(oracle), LeveledRule) and not across_attributes(oracle)


def fakes_of(oracle: Any, split: Any) -> int:
    """The number of fakes a split holds (MPLDP: the fakes of each attribute's row, which must agree)."""
    if across_attributes(oracle):
        from pldp.attacks.leveled import split_rows

        return int(split_rows(oracle, split)[0].sum())
    return int(np.sum(split))


def unary_levels(oracle: Any) -> list[int]:
    """The levels whose mechanism sends unary reports (their fakes may set the target bits alone)."""
    from pldp.attacks.pure import UnaryRule

    return [i for i, mech in enumerate(oracle.mechanisms) if isinstance(rule_of(mech), UnaryRule)]


def level_split(oracle: Any, counts: Any) -> np.ndarray:
    """A levelled protocol's split over :func:`atoms_of` as ``Attack.split``: fakes per level
    (shape ``(t,)``), or with unary levels ``(2, t)``, the second row the fakes that set the
    target bits alone."""
    c = np.asarray(counts, dtype=np.int64)
    unary = unary_levels(oracle)
    if not unary:
        return c
    out = np.zeros((2, oracle.t), dtype=np.int64)
    out[0] = c[: oracle.t]
    out[1, unary] = c[oracle.t :]
    return out


def padded_split(oracle: Any, counts: np.ndarray) -> np.ndarray:
    """A levelled protocol's split given per level only (``t`` counts) as counts of every atom (no
    fake setting the target bits alone); other splits unchanged."""
    if is_levelled(oracle) and counts.shape == (oracle.t,) and len(atoms_of(oracle)) > oracle.t:
        return np.concatenate([counts, np.zeros(len(atoms_of(oracle)) - oracle.t, dtype=counts.dtype)])
    return counts


def atoms_of(oracle: Any) -> tuple[str, ...]:
    """The atoms the fakes of ``oracle`` are split over (module docstring)."""
    from pldp.attacks.pure import DirectRule, PaddingRule

    if across_attributes(oracle):
        from pldp.attacks.across import atom_names

        return atom_names(oracle)
    if is_levelled(oracle):
        alone = tuple(f"level {i} alone" for i in unary_levels(oracle))
        return tuple(f"level {i}" for i in range(oracle.t)) + alone
    rule = rule_of(oracle)
    if isinstance(rule, PaddingRule):
        raise ParameterError("strategy 'optimal' does not search padding-and-sampling: use a fixed strategy")
    if isinstance(rule, DirectRule):
        return ("mga", "knows_defence")
    return PURE_ATOMS

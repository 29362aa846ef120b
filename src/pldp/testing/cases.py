"""Every shipped mechanism and protocol as an :class:`~pldp.testing.OracleCase`: the conformance suite.

:func:`standard_cases` builds, for each public :class:`pldp.FrequencyOracle` (and each IDUE model
and pair rule, each padding base, each PLDP-FEBSF data oracle), a small configuration, the true
data of a small population, a *variant* with budgets :data:`VARIANT` times larger (the power
checks must tell it apart) and constructions with bad parameters. ``tests/test_conformance.py``
runs every check on every case; adding an entry here gives an oracle all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.itemsets import ItemSets
from pldp.oracle import FrequencyOracle
from pldp.registry import ENTRIES
from pldp.testing.case import OracleCase

__all__ = ["CELLS", "COUNTS", "LEVELS", "VARIANT", "standard_cases"]

#: How much larger the budgets of each case's variant are: the power checks must detect this.
VARIANT = 1.25
#: Budget levels of the leveled protocols.
LEVELS = [0.5, 1.0, 2.0]
#: The leveled protocols' users: counts per (level, item).
CELLS = np.array([[300, 200, 100, 50, 50], [250, 150, 100, 100, 50], [200, 200, 100, 100, 100]])
#: The mechanisms' users: counts per item.
COUNTS = np.array([400, 250, 150, 100, 100])
BUDGETS = ItemBudgets.from_array([0.5, 1.0, 1.0, 2.0, 2.0])
FIG1 = ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])  # Li et al., Fig. 1
RHO = [0.5, 0.3, 0.2]

Bad = tuple[Callable[[], Any], ...]


def _itemsets() -> tuple[ItemSets]:
    rng = np.random.default_rng(3)
    sets = [rng.choice(5, size=rng.integers(0, 4), replace=False).tolist() for _ in range(1500)]
    return (ItemSets.from_lists(sets, 5),)


def _mpldp_users() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    values = np.stack([rng.integers(0, 3, 1500), rng.integers(0, 4, 1500)], axis=1)
    return values, rng.integers(0, 3, size=values.shape)


def _scaled(budgets: ItemBudgets, scale: float) -> ItemBudgets:
    return ItemBudgets.from_array(budgets.epsilons * scale)


def longitudinal(mechanism: Callable[[str, Callable[[float], FrequencyOracle], Bad], OracleCase]) -> list[OracleCase]:
    """The memoized chains: :math:`\\varepsilon_\\infty` twice :math:`\\varepsilon_1` (the variant scales both)."""
    import pldp

    uniform = [
        ("lgrr", pldp.LGRR),
        ("loue", pldp.LOUE),
        ("losue", pldp.LOSUE),
        ("lsue", pldp.LSUE),
        ("lsoue", pldp.LSOUE),
    ]

    def chain(name: str, cls: Callable[[float, float, int], FrequencyOracle]) -> OracleCase:
        def make(s: float) -> FrequencyOracle:
            return cls(2.0 * s, s, 5)

        return mechanism(name, make, (lambda: cls(1.0, 1.0, 5), lambda: cls(2.0, 0.0, 5), lambda: cls(2.0, 1.0, 1)))

    cases = [chain(name, cls) for name, cls in uniform]
    cases.append(
        mechanism(
            "liprr",
            lambda s: pldp.LIPRR(_scaled(FIG1, 2.0 * s), _scaled(FIG1, s)),
            (lambda: pldp.LIPRR(FIG1, _scaled(FIG1, 2.0)), lambda: pldp.LIPRR(FIG1, BUDGETS)),
        )
    )
    cases.append(
        mechanism(
            "lidue",
            lambda s: pldp.LIDUE(_scaled(BUDGETS, 2.0 * s), _scaled(BUDGETS, s)),
            (lambda: pldp.LIDUE(BUDGETS, _scaled(BUDGETS, 2.0)), lambda: pldp.LIDUE(FIG1, FIG1)),
        )
    )
    return cases


def standard_cases() -> dict[str, OracleCase]:
    """Name -> case of every shipped mechanism and protocol (oracles are built on first use): each
    mechanism of one budget over ``d`` items (:attr:`pldp.registry.Entry.one_budget`, in the
    registry's order) as that alone says, the others as written here.

    Examples
    --------
    >>> cases = standard_cases()
    >>> cases["krr"].oracle, cases["krr"].variant
    (KRR(epsilon=1, d=5), KRR(epsilon=1.25, d=5))
    """
    import pldp
    from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF, LLevels, PaddingSampling

    def mechanism(name: str, make: Callable[[float], FrequencyOracle], bad: Bad) -> OracleCase:
        return OracleCase(lambda: make(1.0), data=(COUNTS,), variant=lambda: make(VARIANT), bad=bad, name=name)

    def idue(model: str, rule: str) -> OracleCase:
        return mechanism(
            f"idue-{model}-{rule}",
            lambda s: pldp.IDUE(_scaled(BUDGETS, s), model, rule),  # type: ignore[arg-type]
            (
                lambda: pldp.IDUE(BUDGETS, "opt3"),  # type: ignore[arg-type]
                lambda: pldp.IDUE(BUDGETS, pair_rule="max"),  # type: ignore[arg-type]
                lambda: pldp.IDUE(FIG1),
            ),
        )

    def padding(name: str, base: Callable[[float], pldp.UnaryEncoding]) -> OracleCase:
        bad: Bad = (lambda: PaddingSampling(base(1.0), 0), lambda: PaddingSampling(pldp.KRR(1.0, 5), 2))  # type: ignore[arg-type]
        return OracleCase(
            lambda: PaddingSampling(base(1.0), 2),
            data=_itemsets,
            variant=lambda: PaddingSampling(base(VARIANT), 2),
            bad=bad,
            name=name,
        )

    def leveled(name: str, make: Callable[[list[float]], FrequencyOracle], bad: Bad) -> OracleCase:
        return OracleCase(
            lambda: make(LEVELS), data=(CELLS,), variant=lambda: make([VARIANT * e for e in LEVELS]), bad=bad, name=name
        )

    def febsf(oracle: str) -> OracleCase:
        return leveled(
            f"febsf-{oracle}",
            lambda lv: FEBSF(lv, 0.5, 5, oracle=oracle),  # type: ignore[arg-type]
            (
                lambda: FEBSF(LEVELS, 0.0, 5),
                lambda: FEBSF([1.0, 0.5], 0.5, 5),
                lambda: FEBSF(LEVELS, 0.5, 5, oracle="grr"),  # type: ignore[arg-type]
            ),
        )

    leveled_bad: Bad = (lambda: RCF([0.0, 1.0], 5), lambda: RCF(LEVELS, 1))

    def llevels(chain: str) -> OracleCase:
        """Memoized chains per level: eps_perm twice eps_1 (the variant scales both)."""
        return leveled(
            f"llevels-{chain}",
            lambda lv: LLevels([2.0 * e for e in lv], lv, 5, chain=chain),  # type: ignore[arg-type]
            (
                lambda: LLevels(LEVELS, LEVELS, 5, chain=chain),  # type: ignore[arg-type]
                lambda: LLevels([1.0, 2.0], LEVELS, 5, chain=chain),  # type: ignore[arg-type]
                lambda: LLevels([2.0, 1.0, 4.0], LEVELS, 5, chain=chain),  # type: ignore[arg-type]
                lambda: LLevels(LEVELS, [0.1, 0.2, 0.3], 5, chain="grr"),  # type: ignore[arg-type]
            ),
        )

    def one_budget(cls: Any) -> OracleCase:
        """A mechanism of one budget over ``d`` items (:attr:`pldp.registry.Entry.one_budget`): at
        epsilon 1 over 5 items; refused at epsilon 0 or NaN, over 1 item or a non-integer ``d``."""
        bad: Bad = (lambda: cls(0.0, 5), lambda: cls(float("nan"), 5), lambda: cls(1.0, 1), lambda: cls(1.0, 2.5))
        return mechanism(cls.__name__.lower(), lambda e: cls(e, 5), bad)

    cases = [
        *(one_budget(e.load()) for e in ENTRIES if e.one_budget),
        mechanism(
            "urr",
            lambda e: pldp.URR(e, np.array([True, True, True, False, False])),
            (lambda: pldp.URR(1.0, [1, 1, 0]), lambda: pldp.URR(-1.0, np.array([True, False]))),
        ),
        mechanism(
            "urap",
            lambda e: pldp.URAP(e, np.array([True, True, True, False, False])),
            (lambda: pldp.URAP(1.0, [1, 1, 0]), lambda: pldp.URAP(1.0, np.array([False, False]))),
        ),
        mechanism(
            "iprr",
            lambda e: pldp.IPRR(_scaled(FIG1, e)),
            (lambda: pldp.IPRR(ItemBudgets.from_array([np.inf, np.inf])), lambda: pldp.IPRR([0.1, 0.2])),  # type: ignore[arg-type]
        ),
        *(idue(m, r) for m in ("opt0", "opt1", "opt2") for r in ("min", "avg")),
        *longitudinal(mechanism),
        padding("idue-ps", lambda e: pldp.IDUE(_scaled(BUDGETS, e), same_level="always")),
        padding("oue-ps", lambda e: pldp.OUE(e, 5)),
        padding("rappor-ps", lambda e: pldp.RAPPOR(e, 5)),
        *(febsf(o) for o in ("krr", "rappor", "oue")),
        leveled("rcf", lambda lv: RCF(lv, 5, oracle="oue"), leveled_bad),
        # a large-domain oracle at every level, each its own g (3, 4, 8), the level in the clear
        leveled("rcf-olh", lambda lv: RCF(lv, 5, oracle="olh"), (lambda: RCF(LEVELS, 5, oracle="blh"),)),  # type: ignore[arg-type]
        llevels("lgrr"),
        llevels("losue"),
        leveled("apldp", lambda lv: APLDP(lv, 5), (lambda: APLDP(LEVELS, 5, candidates=("grr",)), *leveled_bad)),
        leveled("pbp", lambda lv: PBP(lv, RHO, 5), (lambda: PBP(LEVELS, [0.5, 0.6, 0.1], 5), *leveled_bad)),
        leveled(
            "ppda",
            lambda lv: PPDA(lv, 5),
            (lambda: PPDA(LEVELS, 5, extra_bits=0), lambda: PPDA(LEVELS, 5, oracle="krr")),  # type: ignore[arg-type]
        ),
        OracleCase(
            lambda: MPLDP([3, 4], [2.0, 3.0]),
            data=_mpldp_users,
            variant=lambda: MPLDP([3, 4], [VARIANT * 2.0, VARIANT * 3.0]),
            bad=(
                lambda: MPLDP([3, 1], [2.0, 3.0]),
                lambda: MPLDP([3, 4], [2.0]),
                lambda: MPLDP([3], [1.0], [0.5, 1.5]),
            ),
            name="mpldp",
        ),
    ]
    return {case.name: case for case in cases}

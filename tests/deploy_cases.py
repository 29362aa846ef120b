"""The oracles whose campaign specs the deployment tests run: every deployable mechanism and protocol.

:func:`deploy_cases` derives them from the registry and the conformance suite: each case of
:func:`pldp.testing.standard_cases` whose class :data:`pldp.registry.ENTRIES` marks deployable
(``tests/test_registry.py`` checks that every deployable class has one, and that the others are
refused), and the pinned configurations of :func:`oracle_cases` under their own names. Those are
hand-written on purpose: ``tests/pinned.json`` holds their spec ids, reports and estimates, the
tests' expected values (an item out of ``[0, 4)``, PLDP-FEBSF's ten levels, IDUE's budgets) are
theirs, and the heavier tests (aggregation, fitting, the collector's) run only them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import pldp
from pldp.channel.sampling import GRID
from pldp.deploy import Spec
from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF, PaddingSampling
from pldp.registry import entry
from pldp.testing import standard_cases

#: PLDP-FEBSF's budget levels 0.1, ..., 1.0 (ERRATA FEBSF-6).
LEVELS = np.arange(1, 11) / 10
#: Five item budgets in three levels, for IDUE.
B5 = pldp.ItemBudgets.from_array([0.5, 0.5, 1.0, 2.0, 2.0])


def oracle_cases() -> dict[str, pldp.FrequencyOracle]:
    """The pinned configurations, by name (a new dict of the same oracles each call: they are
    immutable, and IDUE's solves are worth doing once)."""
    return dict(_oracle_cases())


def deploy_cases() -> dict[str, pldp.FrequencyOracle]:
    """The pinned configurations, and as ``standard/NAME`` each standard case whose class is
    deployable (the memoized chains among them)."""
    return {**oracle_cases(), **_standard_cases()}


def heavy_protocols() -> list[Any]:
    """A heavy-hitter protocol of each kind, with budget levels, a group count that is not a power of two
    (so the group's rejection can refuse a word) and small bounds: the free-text specs' cases
    (:meth:`pldp.deploy.Spec.from_heavy`)."""
    return [pldp.PEM([1.0, 4.0], max_bytes=6), pldp.TreeHist(4.0, max_bytes=6, step_bits=2), pldp.SFP(4.0, max_bytes=8)]


def oracle_kinds() -> set[str]:
    """The kinds of node a frequency oracle builds: every kind but the free-text ones (a heavy-hitter
    protocol's node, :func:`heavy_protocols`), which no oracle has."""
    from pldp.channel import NODE_KINDS

    return {kind for kind in NODE_KINDS if kind not in {p.node().kind for p in heavy_protocols()}}


def with_every_kind(cases: dict[str, pldp.FrequencyOracle]) -> dict[str, pldp.FrequencyOracle]:
    """``cases``, and a standard deploy case (``standard/NAME``) of each kind of node none of them
    has: a test driven by them covers every kind of a frequency oracle (:func:`oracle_kinds`), a new
    one too, with no edit."""
    out = dict(cases)
    kinds = {oracle.sampler().kind for oracle in out.values()}
    for name, oracle in _standard_cases().items():
        if oracle.sampler().kind not in kinds:
            out[name] = oracle
            kinds.add(oracle.sampler().kind)
    assert kinds == oracle_kinds(), sorted(oracle_kinds() - kinds)
    return out


@functools.cache
def _standard_cases() -> dict[str, pldp.FrequencyOracle]:
    oracles = {name: case.oracle for name, case in standard_cases().items()}
    return {f"standard/{name}": o for name, o in oracles.items() if entry(type(o).__name__).deployable}


@functools.cache
def _oracle_cases() -> dict[str, pldp.FrequencyOracle]:
    return {
        "krr": pldp.KRR(1.0, 4),
        "urr": pldp.URR(1.0, np.array([True, True, False, False])),
        "urap": pldp.URAP(1.0, np.array([True, True, False, False])),
        "iprr": pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])),
        "rappor": pldp.RAPPOR(1.0, 6),
        "oue": pldp.OUE(1.0, 5),
        "idue-opt0": pldp.IDUE(B5, model="opt0"),
        "idue-opt1-avg": pldp.IDUE(B5, model="opt1", pair_rule="avg"),
        "idue-opt2": pldp.IDUE(B5, model="opt2"),
        "idue-ps": PaddingSampling(pldp.IDUE(B5, model="opt2", same_level="always"), 2),
        "oue-ps": PaddingSampling(pldp.OUE(1.0, 5), 2),
        "febsf-krr": FEBSF(LEVELS, 0.3, 16, "krr"),
        "febsf-oue": FEBSF(LEVELS, 0.3, 16, "oue"),
        "febsf-rappor": FEBSF([0.5, 1.0, 2.0], 0.5, 6, "rappor"),
        "rcf": RCF([0.5, 1.0, 2.0], 6),
        "apldp": APLDP([0.5, 4.0], 16),
        "pbp": PBP([0.5, 1.0, 2.0], [0.3, 0.3, 0.4], 6),
        "ppda": PPDA([0.5, 1.0, 2.0], 6),
        "mpldp": MPLDP([3, 4], [1.0, 2.0]),
    }


def spec_of(oracle: pldp.FrequencyOracle, name: str) -> Spec:
    """The spec of a case, with a question (one per attribute for MPLDP)."""
    question: Any = ["first?", "second?"] if isinstance(oracle, MPLDP) else f"{name}?"
    return Spec.from_mechanism(oracle, question=question)


def answers_of(name: str, oracle: pldp.FrequencyOracle, n: int, rng: np.random.Generator) -> tuple[Any, dict]:
    """``n`` random answers for a case, and the keyword arguments (levels) of ``Client.reports``."""
    if isinstance(oracle, PaddingSampling):
        return [list(rng.choice(oracle.d, size=int(rng.integers(0, 4)), replace=False)) for _ in range(n)], {}
    if isinstance(oracle, MPLDP):
        return rng.integers(0, 3, size=(n, 2)).tolist(), {"levels": rng.integers(0, 3, size=(n, 2))}
    kw = {"level": rng.integers(0, len(oracle.levels), n)} if hasattr(oracle, "levels") else {}
    return rng.integers(0, oracle.d, n), kw


def words(seed: int) -> Any:
    """A seeded source of 32-bit random words for :class:`pldp.client.Client` (reproducible reports)."""
    rng = np.random.default_rng(seed)
    return lambda n: rng.integers(0, GRID, size=n, dtype=np.uint64).astype(np.uint32)

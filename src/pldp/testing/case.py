"""One oracle under test: :class:`OracleCase`, and the data the checks run it on by default.

A check needs more than the oracle: the users' true data (what ``simulate`` takes), optionally
a *variant* of the same kind with other parameters (for the power checks), constructions that
must be refused, and a seed. :class:`OracleCase` holds them; :func:`as_case` wraps a bare oracle
with the defaults.

Default data follow the oracle's input, read off its sampler node (the exact description of the
randomizer, :mod:`pldp.channel`) rather than its class:

=======================  ==========================================================
node kind                default data (``simulate``'s arguments)
=======================  ==========================================================
direct, unary            counts per item: 1,000 users, Zipf over the ``d`` items
padding                  item-sets of 1,500 users, sizes 0 to ``ell + 1``
leveled                  a ``(t, d)`` table of counts per (level, item), 2,000 users
attributes               values and levels per attribute (MPLDP), 1,500 users
no node                  counts per item, as a mechanism takes them
=======================  ==========================================================
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.errors import ParameterError
from pldp.itemsets import ItemSets
from pldp.oracle import FrequencyOracle
from pldp.testing._deploy import sampler_node

__all__ = ["OracleCase", "as_case", "default_data"]

#: An oracle, or a function of no argument that builds one (called when a check first needs it).
OracleLike = FrequencyOracle | Callable[[], FrequencyOracle]

#: Users in the default data of each node kind.
DEFAULT_USERS = {"counts": 1000, "padding": 1500, "leveled": 2000, "attributes": 1500}


def _zipf_counts(d: int, n: int) -> np.ndarray:
    """``n`` users over ``d`` items with Zipf (s = 1) frequencies, rounded to integers summing to ``n``."""
    w = 1.0 / np.arange(1, d + 1)
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts[: n - int(counts.sum())] += 1
    return counts


def _itemsets(d: int, ell: int, n: int, rng: np.random.Generator) -> ItemSets:
    """``n`` users with uniform random item-sets of uniform sizes ``0 .. min(ell + 1, d)``."""
    sizes = rng.integers(0, min(ell + 1, d) + 1, size=n)
    ranks = rng.random((n, d)).argsort(axis=1).argsort(axis=1)
    chosen = ranks < sizes[:, None]
    return ItemSets(np.concatenate([[0], np.cumsum(sizes)]), np.nonzero(chosen)[1], d)


def _attributes(node: Any, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform values and levels of ``n`` users, one column per attribute."""
    values = np.stack([rng.integers(0, p.d, n) for p in node.parts], axis=1)
    levels = np.stack([rng.integers(0, len(p.levels), n) for p in node.parts], axis=1)
    return values, levels


def _counts(oracle: FrequencyOracle) -> tuple[Any, ...]:
    return (_zipf_counts(oracle.d, DEFAULT_USERS["counts"]),)


class _Data(NodeVisitor[tuple[Any, ...]]):
    """The default data of an oracle with a node of each kind: ``node.accept(_DATA, oracle, rng)``."""

    def direct(self, node: DirectNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return _counts(oracle)

    def unary(self, node: UnaryNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return _counts(oracle)

    def memo(self, node: MemoNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return _counts(oracle)

    def leaf(self, node: Node, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return _counts(oracle)  # one item per user, as direct and unary

    def padding(self, node: PaddingNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return (_itemsets(node.d, node.ell, DEFAULT_USERS["padding"], rng),)

    def leveled(self, node: LeveledNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        t = len(node.levels)
        return (np.stack([_zipf_counts(node.d, DEFAULT_USERS["leveled"] // t)] * t),)

    def attributes(self, node: AttributesNode, oracle: FrequencyOracle, rng: np.random.Generator) -> tuple[Any, ...]:
        return _attributes(node, DEFAULT_USERS["attributes"], rng)


_DATA = _Data()


def default_data(oracle: FrequencyOracle, seed: int = 0) -> tuple[Any, ...]:
    """The data the checks give ``oracle.simulate`` when none is given (module docstring).

    Parameters
    ----------
    oracle : FrequencyOracle
    seed : int
        Seeds the random item-sets, values and levels (counts are deterministic).

    Returns
    -------
    tuple
        ``simulate``'s arguments before the generator.

    Examples
    --------
    >>> import pldp
    >>> default_data(pldp.KRR(1.0, 4))[0].tolist()
    [480, 240, 160, 120]
    >>> default_data(pldp.protocols.RCF([0.5, 1.0], 3))[0].shape
    (2, 3)
    """
    node = sampler_node(oracle)
    if node is None:
        return _counts(oracle)
    return node.accept(_DATA, oracle, np.random.default_rng(seed))


def _stable_seed(text: str) -> int:
    """A seed from a string that is the same in every process (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


class OracleCase:
    """An oracle under test and what the checks need besides it.

    Parameters
    ----------
    oracle : FrequencyOracle or callable
        The oracle, or a function of no argument that builds it (then :meth:`rebuild` builds it
        again, and the fingerprint check compares the two).
    data : tuple or callable, optional
        The true data of a small population, as ``oracle.simulate`` takes them (before the
        generator), or a function returning them. Default: :func:`default_data`.
    variant : FrequencyOracle or callable, optional
        An oracle of the same kind with other parameters (e.g. budgets 1.25 times larger). The
        power checks (the distribution test tells it apart; the audit flags a sampler that runs
        it) run only when it is given.
    bad : sequence of callables
        Constructions with bad parameters: each must raise :class:`pldp.PLDPError`.
    name : str, optional
        How reports and test ids name the case. Default: the oracle's ``repr``.
    seed : int, optional
        Seeds every check (each check draws from its own stream of it). Default:
        ``zlib.crc32`` of the oracle's fingerprint, the same in every process.
    quick : bool
        Fewer repeats and audit trials, and no power checks against the variant
        (:data:`pldp.testing.checks.QUICK`): faster, with less power against small deviations.

    Examples
    --------
    >>> import pldp
    >>> case = OracleCase(lambda: pldp.KRR(1.0, 5), variant=lambda: pldp.KRR(1.25, 5), name="krr")
    >>> case.name, case.oracle == case.rebuild(), case.variant.epsilon
    ('krr', True, 1.25)
    """

    def __init__(
        self,
        oracle: OracleLike,
        *,
        data: tuple[Any, ...] | Callable[[], tuple[Any, ...]] | None = None,
        variant: OracleLike | None = None,
        bad: Sequence[Callable[[], Any]] = (),
        name: str | None = None,
        seed: int | None = None,
        quick: bool = False,
    ) -> None:
        if not isinstance(oracle, FrequencyOracle) and not callable(oracle):
            raise ParameterError(f"expected a pldp mechanism or protocol (or a function building one), got {oracle!r}")
        self._oracle, self._data, self._variant = oracle, data, variant
        self.bad = tuple(bad)
        self._name, self._seed = name, seed
        self.quick = bool(quick)

    @staticmethod
    def _build(what: OracleLike) -> FrequencyOracle:
        oracle = what if isinstance(what, FrequencyOracle) else what()
        if not isinstance(oracle, FrequencyOracle):
            raise ParameterError(f"expected a pldp mechanism or protocol, got {type(oracle).__name__}")
        return oracle

    @cached_property
    def oracle(self) -> FrequencyOracle:
        """The oracle under test (built on first use)."""
        return self._build(self._oracle)

    @cached_property
    def variant(self) -> FrequencyOracle | None:
        """The variant, or ``None``."""
        return None if self._variant is None else self._build(self._variant)

    @cached_property
    def data(self) -> tuple[Any, ...]:
        """The true data (``simulate``'s arguments before the generator)."""
        if self._data is None:
            return default_data(self.oracle, self.seed)
        data = self._data() if callable(self._data) else self._data
        return tuple(data)

    def rebuild(self) -> FrequencyOracle | None:
        """A second oracle built the same way, or ``None`` when the case holds an instance."""
        return None if isinstance(self._oracle, FrequencyOracle) else self._build(self._oracle)

    @property
    def name(self) -> str:
        """The case's name."""
        return self._name if self._name is not None else repr(self.oracle)

    @property
    def seed(self) -> int:
        """The seed of every check of this case."""
        return self._seed if self._seed is not None else _stable_seed(self.oracle.fingerprint)

    def rng(self, check: str) -> np.random.Generator:
        """The generator of one check: its own stream of :attr:`seed` (keyed by the check's name)."""
        return np.random.default_rng([self.seed, _stable_seed(check)])

    def __repr__(self) -> str:
        return f"OracleCase({self.name})"


def as_case(obj: OracleCase | FrequencyOracle) -> OracleCase:
    """``obj`` if it is a case, else a case of the oracle with every default."""
    return obj if isinstance(obj, OracleCase) else OracleCase(obj)

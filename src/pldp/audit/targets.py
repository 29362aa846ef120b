"""What an audit runs: the sampler of a mechanism, a protocol, a spec, the Python or the JS client.

Every target is reduced to its sampler node (:mod:`pldp.channel`; a mechanism's or
protocol's is :meth:`~pldp.FrequencyOracle.sampler`), which gives the exact channel and the
claims, and to a way of drawing ``n`` reports of one input as report columns (the columns of
:class:`pldp.deploy.wire.ReportBatch`):

=====================  ===================================================================  ========
target                 sampler run                                                          seeded
=====================  ===================================================================  ========
mechanism, protocol    its ``perturb`` (the library's vectorised code)                      yes
:class:`~pldp.deploy.Spec`  :class:`pldp.client.Client`, fed words from the audit's generator   yes
:class:`pldp.client.Client`  that client, with its own word source (the OS CSPRNG by default)   no
:class:`~pldp.audit.JSClient`  the JS client in Node, with its own CSPRNG                       no
=====================  ===================================================================  ========
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from pldp.audit.pairs import Input
from pldp.channel import AttributesNode, DirectNode, LeveledNode, MemoNode, Node, NodeVisitor, PaddingNode, UnaryNode
from pldp.errors import ParameterError
from pldp.itemsets import ItemSets

__all__ = ["ClientTarget", "OracleTarget", "SpecTarget", "Target", "as_target"]


class Target(ABC):
    """A sampler under audit: its node, its claims and a way to draw reports (module docstring)."""

    #: The sampler node: exact channel and claims.
    node: Node
    #: What the paper claims for the level when it differs from the node's ``level_epsilon``.
    level_claim: float | None = None
    #: Whether draws come from the audit's generator (reproducible, and may run on Dask).
    seeded: bool = True

    @abstractmethod
    def describe(self) -> str:
        """One line naming the target."""

    @abstractmethod
    def sample(self, inp: Input, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Columns of ``n`` reports of the input ``inp``."""

    def close(self) -> None:  # noqa: B027 - most targets hold nothing
        """Release what the target holds (a subprocess)."""


def _one_item(inp: Input, n: int) -> tuple[Any, ...]:
    """``perturb``'s arguments for ``n`` users of one item each, ``inp``'s."""
    return (np.full(n, inp.item, dtype=np.int64),)


class _Users(NodeVisitor[tuple[Any, ...]]):
    """The arguments of ``perturb`` for ``n`` users with one input: ``node.accept(_USERS, inp, n)``."""

    def direct(self, node: DirectNode, inp: Input, n: int) -> tuple[Any, ...]:
        return _one_item(inp, n)

    def unary(self, node: UnaryNode, inp: Input, n: int) -> tuple[Any, ...]:
        return _one_item(inp, n)

    def leaf(self, node: Node, inp: Input, n: int) -> tuple[Any, ...]:
        return _one_item(inp, n)

    def padding(self, node: PaddingNode, inp: Input, n: int) -> tuple[Any, ...]:
        s = np.asarray(inp.item, dtype=np.int64)
        return (ItemSets(np.arange(n + 1, dtype=np.int64) * s.size, np.tile(s, n), node.d),)

    def leveled(self, node: LeveledNode, inp: Input, n: int) -> tuple[Any, ...]:
        return np.full(n, inp.item, dtype=np.int64), np.full(n, inp.level, dtype=np.int64)

    def attributes(self, node: AttributesNode, inp: Input, n: int) -> tuple[Any, ...]:
        values = np.tile(np.asarray(inp.item, dtype=np.int64), (n, 1))
        return values, np.tile(np.asarray(inp.level, dtype=np.int64), (n, 1))

    def memo(self, node: MemoNode, inp: Input, n: int) -> tuple[Any, ...]:
        return _one_item(inp, n)  # one report each: a fresh permanent response


_USERS = _Users()


class OracleTarget(Target):
    """A pldp mechanism or protocol, run by its ``perturb``."""

    def __init__(self, oracle: Any) -> None:
        self.oracle = oracle
        self.node = oracle.sampler()
        self.level_claim = getattr(oracle, "level_claim", None)  # the paper's claim (ERRATA FEBSF-6)

    def describe(self) -> str:
        return repr(self.oracle)

    def sample(self, inp: Input, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        reports = self.oracle.perturb(*self.node.accept(_USERS, inp, n), rng)
        return self.oracle.report_columns(reports)


class _Answer(NodeVisitor[tuple[Any, dict[str, Any]]]):
    """One report's ``(answer, choices)`` as both clients take them: ``node.accept(_ANSWER, inp)``."""

    def direct(self, node: DirectNode, inp: Input) -> tuple[Any, dict[str, Any]]:
        return inp.item, {}

    def unary(self, node: UnaryNode, inp: Input) -> tuple[Any, dict[str, Any]]:
        return inp.item, {}

    def leaf(self, node: Node, inp: Input) -> tuple[Any, dict[str, Any]]:
        return inp.item, {}

    def padding(self, node: PaddingNode, inp: Input) -> tuple[Any, dict[str, Any]]:
        return list(inp.item), {}

    def leveled(self, node: LeveledNode, inp: Input) -> tuple[Any, dict[str, Any]]:
        return inp.item, {"level": inp.level}

    def attributes(self, node: AttributesNode, inp: Input) -> tuple[Any, dict[str, Any]]:
        return list(inp.item), {"levels": list(inp.level)}


_ANSWER = _Answer()


def client_answer(node: Node, inp: Input) -> tuple[Any, dict[str, Any]]:
    """One report's ``(answer, choices)`` as both clients take them (JSON-able): an item index, a
    list (item-set; one item per attribute), and ``{"level": t}`` or ``{"levels": [...]}``."""
    return node.accept(_ANSWER, inp)


def client_arguments(node: Node, inp: Input, n: int) -> tuple[Any, dict[str, Any]]:
    """``(answers, choices)`` of :meth:`pldp.client.Client.reports` for ``n`` copies of ``inp``."""
    answer, choices = client_answer(node, inp)
    if isinstance(answer, list):
        answers: Any = [answer] * n
    else:
        answers = np.full(n, answer, dtype=np.int64)
    if "levels" in choices:  # one row per report; a part without levels takes any index (it is unused)
        row = np.asarray([-1 if v is None else v for v in choices["levels"]], dtype=np.int64)
        choices = {"levels": np.tile(row, (n, 1)) if any(v is not None for v in choices["levels"]) else None}
    return answers, choices


def _client_columns(client: Any, node: Node, inp: Input, n: int) -> dict[str, np.ndarray]:
    answers, choices = client_arguments(node, inp, n)
    return dict(client.reports(answers, **choices).columns)


class ClientTarget(Target):
    """The Python device client (:class:`pldp.client.Client`) with its own word source."""

    seeded = False

    def __init__(self, client: Any) -> None:
        self.client = client
        self.node = client.spec.root

    def describe(self) -> str:
        return f"Python client of spec {self.client.spec.id}"

    def sample(self, inp: Input, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return _client_columns(self.client, self.node, inp, n)


class SpecTarget(Target):
    """A campaign spec (read and verified by :meth:`pldp.deploy.Spec.from_json`), run by the Python
    client on words from the audit's generator."""

    def __init__(self, spec: Any) -> None:
        from pldp.deploy import Spec

        self.spec = spec if isinstance(spec, Spec) else Spec.from_json(spec)
        self.node = self.spec.root

    def describe(self) -> str:
        return f"spec {self.spec.id} (Python client)"

    def sample(self, inp: Input, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        from pldp.client import Client

        def words(k: int) -> np.ndarray:
            return rng.integers(0, 1 << 32, size=k, dtype=np.uint64).astype(np.uint32)

        return _client_columns(Client(self.spec, random=words), self.node, inp, n)


class JSTarget(Target):
    """The JS client (:class:`pldp.audit.JSClient`), in Node, with its own CSPRNG."""

    seeded = False

    def __init__(self, js: Any) -> None:
        self.js = js
        self.node = js.spec.root

    def describe(self) -> str:
        return f"JS client of spec {self.js.spec.id}"

    def sample(self, inp: Input, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        answer, choices = client_answer(self.node, inp)
        return dict(self.js.columns(answer, choices, n))

    def close(self) -> None:
        self.js.close()


def as_target(target: Any) -> Target:
    """The :class:`Target` of a mechanism, protocol, spec (object, dict or JSON text), client or JS client."""
    from pldp.audit.jsclient import JSClient
    from pldp.client import Client
    from pldp.deploy import Spec
    from pldp.oracle import FrequencyOracle

    if isinstance(target, Target):
        return target
    if isinstance(target, FrequencyOracle):
        return OracleTarget(target)
    if isinstance(target, Client):
        return ClientTarget(target)
    if isinstance(target, (Spec, dict, str)):
        return SpecTarget(target)
    if isinstance(target, JSClient):
        return JSTarget(target)
    raise ParameterError(
        f"cannot audit a {type(target).__name__}: give a mechanism, a protocol, a spec, a pldp.client.Client "
        "or a pldp.audit.JSClient"
    )

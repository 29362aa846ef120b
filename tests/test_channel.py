"""The channel layer and the oracles' side of it: each oracle builds its node (``sampler()``), is
rebuilt from its parameters (``from_params``, one registry), and maps its reports to and from the
payload columns of its node."""

from __future__ import annotations

from inspect import isabstract

import numpy as np
import pytest

import pldp
from pldp.channel import NODE_KINDS, DirectNode, Node, NodeVisitor, parse_node
from pldp.client import Client
from pldp.errors import SpecError
from pldp.experiments.paths import users_of
from pldp.oracle import FrequencyOracle
from pldp.registry import oracle_class, oracle_from_params, register, registered
from tests.deploy_cases import deploy_cases, spec_of, words

CASES = deploy_cases()


def _public_oracles() -> set[str]:
    """Every oracle class pldp exports (``pldp.X``, ``pldp.protocols.X``), by its name."""
    import pldp.protocols

    names = [(pldp, n) for n in pldp.__all__] + [(pldp.protocols, n) for n in pldp.protocols.__all__]
    found = {getattr(module, n) for module, n in names}
    return {c.__name__ for c in found if isinstance(c, type) and issubclass(c, FrequencyOracle) and not isabstract(c)}


def test_the_registry_holds_every_public_oracle() -> None:
    """What the registry rebuilds from parameters is what pldp exports: every exported oracle class
    that is not abstract, and nothing else."""
    public = _public_oracles()
    assert {"KRR", "OUE", "MPLDP", "LIDUE"} <= public and set(registered()) == public


@pytest.mark.parametrize("name", list(CASES))
def test_params_rebuild_the_oracle_and_its_sampler(name: str) -> None:
    oracle = CASES[name]
    again = oracle_from_params(oracle.params())
    assert type(again) is type(oracle) and again == oracle
    assert again.sampler() == oracle.sampler()
    assert type(oracle).from_params(oracle.params()) == oracle
    assert oracle_class(oracle.params()) is type(oracle)


@pytest.mark.parametrize("name", list(CASES))
def test_a_node_reads_back_its_json(name: str) -> None:
    node = CASES[name].sampler()
    assert parse_node(node.to_json()) == node
    assert NODE_KINDS[node.kind] is type(node)


@pytest.mark.parametrize("name", list(CASES))
def test_the_nodes_columns_are_those_of_the_clients_reports(name: str) -> None:
    oracle = CASES[name]
    spec = spec_of(oracle, name)
    from tests.deploy_cases import answers_of

    answers, kw = answers_of(name, oracle, 20, np.random.default_rng(1))
    batch = Client(spec, random=words(2)).reports(answers, **kw)
    node = oracle.sampler()
    assert list(batch.columns) == [c.name for c in node.columns()]
    empty = node.empty_columns(3)
    assert {k: (v.shape, v.dtype) for k, v in empty.items()} == {
        k: ((3, *v.shape[1:]), v.dtype) for k, v in batch.columns.items()
    }


def _data(name: str, oracle: pldp.FrequencyOracle) -> tuple:
    rng = np.random.default_rng(5)
    if isinstance(oracle, pldp.protocols.PaddingSampling):
        sets = [list(rng.choice(5, size=int(rng.integers(0, 4)), replace=False)) for _ in range(200)]
        return (pldp.ItemSets.from_lists(sets, 5),)
    if isinstance(oracle, pldp.protocols.MPLDP):
        return (rng.integers(0, 3, size=(200, 2)), rng.integers(0, 3, size=(200, 2)))
    if hasattr(oracle, "levels"):
        return users_of(rng.integers(0, 30, size=(len(oracle.levels), oracle.d)))
    return (rng.integers(0, oracle.d, 200),)


@pytest.mark.parametrize("name", list(CASES))
def test_report_columns_and_reports_from_columns_are_inverse(name: str) -> None:
    """perturb -> columns -> reports tallies exactly as perturb does: what the collector counts is what
    the library counts."""
    oracle = CASES[name]
    reports = oracle.perturb(*_data(name, oracle), np.random.default_rng(6))
    columns = oracle.report_columns(reports)
    assert set(columns) <= {c.name for c in oracle.sampler().columns()}
    assert oracle.tally(*oracle.reports_from_columns(columns)) == oracle.tally(reports)


def test_a_class_registers_once_under_its_name() -> None:
    class KRR(pldp.KRR):  # the same name as pldp's KRR
        pass

    with pytest.raises(TypeError, match="another class is registered as the mechanism 'KRR'"):
        register(KRR)
    assert register(pldp.KRR) is pldp.KRR  # registering the same class again is harmless


def test_unknown_and_foreign_names_are_refused() -> None:
    with pytest.raises(SpecError, match="unknown mechanism 'FEBSF'"):
        oracle_from_params({"mechanism": "FEBSF"})
    with pytest.raises(SpecError, match="unknown protocol 'KRR'"):
        oracle_from_params({"protocol": "KRR"})
    with pytest.raises(SpecError, match="neither"):
        oracle_from_params({"labels": [1, 2]})
    params = pldp.KRR(1.0, 3).params()
    with pytest.raises(SpecError, match="differ in"):
        oracle_from_params({**params, "keep_threshold": params["keep_threshold"] + 1})


def test_an_oracle_without_a_sampler_says_so() -> None:
    class Plain(pldp.FrequencyOracle):
        domain = pldp.Domain.range(2)  # type: ignore[assignment]
        params = perturb = tally = simulate = estimate = privacy = lambda self, *a, **k: None  # type: ignore[assignment]

    with pytest.raises(NotImplementedError, match="Plain has no sampler"):
        Plain().sampler()
    with pytest.raises(NotImplementedError, match="Plain cannot be rebuilt"):
        Plain.from_params({})


def test_a_visitor_without_a_rule_names_the_kind() -> None:
    class OnlyDirect(NodeVisitor[int]):
        def direct(self, node: DirectNode) -> int:
            return node.d

    node: Node = pldp.KRR(1.0, 3).sampler()
    assert node.accept(OnlyDirect()) == 3
    with pytest.raises(TypeError, match="OnlyDirect has no rule for a unary node"):
        pldp.OUE(1.0, 3).sampler().accept(OnlyDirect())


def test_a_leveled_protocol_claims_what_the_whole_report_gives_its_level() -> None:
    """The node's level_epsilon is the exact level ratio rounded up (ERRATA FEBSF-6), not eps_p."""
    node = CASES["febsf-oue"].sampler().as_leveled()
    assert node is not None and node.hides_level
    num, den = node.level_ratio()
    assert node.level_epsilon is not None and node.level_epsilon > 0.3
    assert num / den <= np.exp(node.level_epsilon) < num / den * np.exp(1e-6)
    assert CASES["rcf"].sampler().as_leveled() is not None and not CASES["rcf"].sampler().hides_level
    assert CASES["krr"].sampler().as_leveled() is None

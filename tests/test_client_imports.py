"""The device client stands alone: a fresh interpreter that imports :mod:`pldp.client` reads specs
and reports by them without loading the oracles, the estimators or scipy; what relied on
``import pldp`` loading every oracle (the registry's lookups by name, unpickling an oracle) still
works in a fresh interpreter.

Each check runs its code in a new interpreter, since this one has loaded whatever the suite has.
"""

from __future__ import annotations

import json
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import Spec, spec_id
from pldp.deploy.memostore import MemoryStore
from pldp.errors import SpecError
from pldp.oracle import FrequencyOracle
from pldp.protocols import FEBSF, PaddingSampling
from pldp.registry import BUILTIN, registered
from tests.deploy_cases import answers_of, deploy_cases, spec_of, words

#: What a device never runs: scipy, the oracle interface and registry, the mechanisms and protocols,
#: the estimators and the parts built on them, and the privacy reports (its ledger composes with
#: :mod:`pldp.privacy.base` only).
NOT_ON_A_DEVICE = (
    "scipy",
    "pldp.privacy.channel",
    "pldp.privacy.itemsets",
    "pldp.privacy.levels",
    "pldp.privacy.longitudinal",
    "pldp.privacy.pairs",
    "pldp.privacy.rounds",
    "pldp.oracle",
    "pldp.registry",
    "pldp.mechanisms",
    "pldp.protocols",
    "pldp.estimation",
    "pldp.theory",
    "pldp.robustness",
    "pldp.attacks",
    "pldp.datasets",
    "pldp.experiments",
    "pldp.audit",
)

#: The child's side of :func:`test_a_fresh_client_reports_by_every_kind_of_spec_without_the_oracles`:
#: every case's reports as the parent would draw them (the word source of ``tests.deploy_cases.words``).
CHILD = """
import json, sys
import numpy as np
import pldp.client
from pldp.channel.sampling import GRID
from pldp.deploy.memostore import MemoryStore

def words(seed):
    rng = np.random.default_rng(seed)
    return lambda n: rng.integers(0, GRID, size=n, dtype=np.uint64).astype(np.uint32)

out = {}
for name, case in json.loads(open(sys.argv[1], encoding="utf-8").read()).items():
    client = pldp.client.Client(case["spec"], random=words(case["seed"]), store=MemoryStore())
    out[name] = client.reports(case["answers"], **case["kw"]).to_json()
print(json.dumps({"reports": out, "modules": sorted(sys.modules)}))
"""


def _run(code: str, *args: str, stdin: bytes | None = None) -> Any:
    """The JSON a fresh interpreter prints last after running ``code`` with ``args``."""
    out = subprocess.run([sys.executable, "-c", code, *args], input=stdin, capture_output=True, timeout=300, check=True)
    return json.loads(out.stdout.decode().splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in NOT_ON_A_DEVICE)]


def _jsonable(value: Any) -> Any:
    """Answers and levels as JSON values (numpy arrays and integers as lists and ints)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return int(value) if isinstance(value, np.integer) else value


def test_a_fresh_client_reports_by_every_kind_of_spec_without_the_oracles(tmp_path: Path) -> None:
    """Every deployable mechanism and protocol (:func:`tests.deploy_cases.deploy_cases`, the memoized
    chains among them): the specs are written here by
    ``Spec.from_mechanism``, the child reads their JSON and reports, the same bytes as this
    interpreter's client with the same words, and has loaded none of :data:`NOT_ON_A_DEVICE`."""
    cases: dict[str, FrequencyOracle] = deploy_cases()
    rng = np.random.default_rng(20261130)
    inputs, want = {}, {}
    for seed, (name, oracle) in enumerate(cases.items()):
        spec = spec_of(oracle, name)
        answers, kw = answers_of(name, oracle, 7, rng)
        case = {"spec": spec.to_json(), "seed": seed, "answers": _jsonable(answers)}
        case["kw"] = {k: _jsonable(v) for k, v in kw.items()}
        inputs[name] = case
        client = Client(spec, random=words(seed), store=MemoryStore())
        want[name] = client.reports(case["answers"], **case["kw"]).to_json()
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(inputs), encoding="utf-8")
    got = _run(CHILD, str(path))
    assert _heavy(got["modules"]) == []
    assert set(got["reports"]) == set(want)
    for name in want:
        assert got["reports"][name] == json.loads(json.dumps(want[name])), name


def test_import_pldp_and_pldp_client_load_no_scipy() -> None:
    for code in ("import pldp", "import pldp.client"):
        modules = _run(code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))")
        assert [m for m in modules if m.split(".")[0] == "scipy"] == [], code
        assert _heavy(modules) == [], code


def test_every_public_name_of_the_lazy_packages_resolves_in_a_fresh_interpreter() -> None:
    """``pldp`` and :mod:`pldp.privacy` load names on first use: each name of
    their ``__all__`` resolves (and is listed by ``dir``) where nothing has loaded it before."""
    code = """
import importlib, json
out = {}
for package in ("pldp", "pldp.privacy"):
    module = importlib.import_module(package)
    out[package] = [n for n in module.__all__ if getattr(module, n, None) is None or n not in dir(module)]
print(json.dumps(out))
"""
    assert _run(code) == {"pldp": [], "pldp.privacy": []}


@pytest.mark.parametrize("package", [pldp, pldp.privacy], ids=lambda p: p.__name__)
def test_no_lazy_name_is_also_a_submodule(package: Any) -> None:
    """Importing a submodule sets the package's attribute of its name to the module, which the lazy
    ``__getattr__`` never sees (``pldp.deploy.decode`` is both: it is imported eagerly)."""
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert set(package._LAZY) & submodules == set()


def test_a_device_spec_checks_its_oracle_on_first_use() -> None:
    """A spec read with ``check_oracle=False`` (the client's reading) whose sampler is more private
    than its oracle's: the device reports by it, the oracle is refused when first asked for, and
    the default reading refuses the spec outright."""
    data = Spec.from_mechanism(pldp.KRR(1.0, 3), question="q", labels=["a", "b", "c"]).to_dict()
    data["sampler"]["root"]["keep"] -= 5
    data["sampler"]["root"]["weights"][0] += 5
    data["id"] = spec_id(data)
    with pytest.raises(SpecError, match="not those of the spec's oracle"):
        Spec.from_json(data)
    spec = Spec.from_json(data, check_oracle=False)
    assert Client(spec, random=words(1)).report("b")["spec"] == data["id"]
    for _ in range(2):  # refused each time, not once and then cached
        with pytest.raises(SpecError, match="not those of the spec's oracle"):
            spec.mechanism()


def test_a_spec_read_without_its_oracle_builds_the_same_one_later() -> None:
    spec = Spec.from_mechanism(pldp.OUE(1.0, 5), question="q")
    lazy = Spec.from_json(spec.to_json(), check_oracle=False)
    assert lazy == spec and lazy.to_json() == spec.to_json()
    assert lazy.mechanism().fingerprint == spec.id == spec.mechanism().fingerprint
    assert lazy.mechanism() == spec.mechanism()


def test_a_fresh_registry_finds_every_builtin_oracle_by_name() -> None:
    """In an interpreter that has imported no oracle, each name of :data:`pldp.registry.BUILTIN`
    resolves to its class, defined in the module the table names."""
    code = """
import json
from pldp.registry import BUILTIN, oracle_class
print(json.dumps([[key, name, oracle_class({key: name}).__module__] for key, name in BUILTIN]))
"""
    got = {(key, name): module for key, name, module in _run(code)}
    assert got == BUILTIN


def test_the_registry_table_and_the_facade_agree() -> None:
    """Every oracle class the facade exports is registered under its name, and the table names the
    module that defines it, inside the facade's own module for that name; every mechanism of the
    table is in the facade, and every protocol in :mod:`pldp.protocols`."""
    classes = registered()
    exported = {
        name: obj
        for name in pldp.__all__
        if isinstance(obj := getattr(pldp, name), type) and issubclass(obj, FrequencyOracle) and name in classes
    }
    for name, cls in exported.items():
        assert classes[name] is cls
        assert BUILTIN[(cls.params_key, name)] == cls.__module__
        assert cls.__module__.startswith(pldp._LAZY[name] + "."), name
    assert {name for key, name in BUILTIN if key == "mechanism"} <= set(exported)
    assert {name for key, name in BUILTIN if key == "protocol"} <= set(pldp.protocols.__all__)


def test_oracles_unpickle_in_a_fresh_interpreter() -> None:
    """What the experiments send to worker processes: a mechanism, a protocol nesting another oracle
    by its parameters, and a leveled protocol, rebuilt with the same fingerprints."""
    oracles = [pldp.KRR(1.0, 4), PaddingSampling(pldp.OUE(1.0, 5), 2), FEBSF([0.5, 1.0, 2.0], 0.5, 6, "rappor")]
    code = "import json, pickle, sys\nprint(json.dumps([o.fingerprint for o in pickle.loads(sys.stdin.buffer.read())]))"
    assert _run(code, stdin=pickle.dumps(oracles)) == [o.fingerprint for o in oracles]

"""What starting pldp costs: the facade loads names on first use, so a device client, the command's
help and the collector load neither scipy nor the oracles they do not run.

Each check runs a fresh interpreter (``sys.modules`` of this one holds everything the suite imported)
and lists the modules it loaded; each fails on a facade that imports every oracle (``import pldp``
used to take about 2 s and 104 modules, scipy among them).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import pldp
from pldp.registry import BUILTIN, registered

#: Loaded by none of the paths below: scipy, and the parts of pldp a device or ``--help`` never runs.
HEAVY = ("scipy", "pldp.protocols", "pldp.experiments", "pldp.audit", "pldp.attacks")


def _loaded(code: str) -> list[str]:
    """The modules of :data:`HEAVY` a fresh interpreter has loaded after running ``code``."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    names = json.loads(out.stdout.splitlines()[-1])
    return [m for m in names if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_import_pldp_client_loads_no_scipy() -> None:
    assert _loaded("import pldp.client") == []


def test_a_device_reports_by_a_direct_unary_and_memoized_spec_without_scipy() -> None:
    code = """
import pldp
from pldp.client import Client
from pldp.deploy import Spec
for oracle in (pldp.KRR(1.0, 3), pldp.OUE(1.0, 4), pldp.LGRR(2.0, 1.0, 3)):
    Client(Spec.from_json(Spec.from_mechanism(oracle, question="q").to_json())).report(1)
"""
    assert _loaded(code) == []


def test_the_command_help_loads_no_scipy_nor_the_library() -> None:
    code = """
from pldp.cli import main
for argv in (["--help"], ["campaign", "--help"], ["serve", "--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
"""
    assert _loaded(code) == []


def test_the_collector_app_loads_no_scipy() -> None:
    assert _loaded("import pldp.service.app, pldp.service.server") == []


def test_import_pldp_loads_only_the_errors() -> None:
    code = "import pldp"
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('pldp'))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == ["pldp", "pldp._lazy", "pldp.errors"]


@pytest.mark.parametrize("name", sorted(pldp.__all__))
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(pldp, name) is not None
    assert name in dir(pldp)


def test_a_subpackage_is_an_attribute_of_the_facade_and_a_typo_is_an_attribute_error() -> None:
    assert pldp.estimation.estimate is pldp.estimate
    with pytest.raises(AttributeError, match="no attribute 'KRRR'"):
        _ = pldp.KRRR  # type: ignore[attr-defined]


def test_the_table_of_builtin_oracles_names_the_module_of_every_registered_class() -> None:
    classes = registered()
    assert {name for _, name in BUILTIN} == set(classes)
    for (key, name), module in BUILTIN.items():
        assert classes[name].__module__ == module and classes[name].params_key == key

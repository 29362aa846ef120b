"""The table of estimation methods (:mod:`pldp.methods`) serves the oracles, the command line, the
dashboard and the docs: each of them is checked against it here, so a method added, renamed or
reworded in one place alone fails."""

from __future__ import annotations

import argparse
import html
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.cli.main import build_parser
from pldp.estimation.pure import estimate_counts
from pldp.estimation.result import EstimateSet
from pldp.heavy import PROTOCOLS
from pldp.methods import ESTIMATION_METHODS, STANDARD_METHODS, dashboard_module, markdown_table, method_help
from pldp.registry import registered
from tests.deploy_cases import oracle_cases

ROOT = Path(__file__).parents[1]
STATIC = ROOT / "src" / "pldp" / "service" / "static"
GUIDE = ROOT / "docs" / "guide" / "estimation.md"
#: The generated block of the guide, between its two marker comments.
BLOCK = re.compile(r"<!-- methods table: [^\n]*-->\n(.*?)<!-- end of the methods table -->", re.S)


def _support() -> dict[str, list[str]]:
    """Each method's oracles: pldp's own classes that list it in ``methods`` (the heavy-hitter protocols
    too), "every mechanism" for all the mechanisms (``pldp.X``) when each offers it (a new one changes no row)."""
    classes: dict[str, Any] = {**registered(), **PROTOCOLS}
    mechanisms = {c for c, cls in classes.items() if getattr(cls, "params_key", None) == "mechanism"}
    out = {}
    for name in ESTIMATION_METHODS:
        who = [c for c, cls in classes.items() if name in cls.methods]
        out[name] = ["every mechanism", *(c for c in who if c not in mechanisms)] if mechanisms <= set(who) else who
    return out


def test_every_oracle_offers_the_standard_methods_first_and_only_methods_of_the_table() -> None:
    for name, cls in registered().items():
        assert cls.methods[: len(STANDARD_METHODS)] == STANDARD_METHODS, name
        assert set(cls.methods) <= set(ESTIMATION_METHODS), f"{name} offers methods outside the table"
    unused = [name for name, oracles in _support().items() if not oracles]
    assert not unused, f"methods no oracle offers: {unused}"


def test_the_docs_table_is_the_table() -> None:
    found = BLOCK.search(GUIDE.read_text(encoding="utf-8"))
    assert found, f"{GUIDE} has no methods table between its markers"
    assert found.group(1) == markdown_table(_support()), (
        "docs/guide/estimation.md's methods table differs from pldp.methods; write it anew from "
        "markdown_table (this test's _support gives its argument)"
    )
    for name in ESTIMATION_METHODS:
        assert f'`"{name}"`' in found.group(1)


def _method_helps() -> dict[str, str]:
    """The ``--method`` help of every command that has one, by command path."""
    helps: dict[str, str] = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if "--method" in action.option_strings:
                helps[path] = str(action.help)
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")

    walk(build_parser(), "pldp")
    return helps


def test_every_method_option_names_every_method_of_the_table() -> None:
    helps = _method_helps()
    expected = {"pldp aggregate", "pldp campaign estimate", "pldp campaign series"}
    assert expected <= set(helps), f"commands with --method: {sorted(helps)}"
    for path in expected:
        assert helps[path] == method_help(), path
        for name in ESTIMATION_METHODS:
            assert re.search(rf"\b{name}\b", helps[path]), f"{path} --method help does not name {name}"


def test_the_dashboard_words_are_the_table() -> None:
    written = (STATIC / "method-table.mjs").read_text(encoding="utf-8")
    assert written == dashboard_module(), "method-table.mjs differs from pldp.methods: run `python -m pldp.methods`"
    # the page's first menu, before an estimate names the campaign's methods, says the same
    page = (STATIC / "dashboard.html").read_text(encoding="utf-8")
    menu = re.search(r'<select id="method"[^>]*>(.*?)</select>', page, re.S)
    assert menu
    options = re.findall(r'<option value="(\w+)"[^>]*>([^<]*)</option>', menu.group(1))
    assert [value for value, _ in options] == list(STANDARD_METHODS)
    for value, text in options:
        assert html.unescape(text) == ESTIMATION_METHODS[value].label, value


def test_the_table_module_loads_no_oracle_and_no_scipy() -> None:
    code = (
        "import sys, pldp.methods; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy' or m.startswith(('pldp.oracle', "
        "'pldp.estimation', 'pldp.mechanisms', 'pldp.protocols'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("name", ["krr", "oue", "rcf", "pbp", "ppda", "mpldp"])
def test_an_unknown_method_is_refused_naming_the_oracles_methods(name: str) -> None:
    oracle = oracle_cases()[name]
    tally = oracle.simulate(*_data(name, oracle), np.random.default_rng(7))
    with pytest.raises(pldp.EstimationError, match="unknown method 'nope'") as refused:
        pldp.estimate(oracle, tally, "nope")
    assert str(oracle.methods) in str(refused.value)


def test_estimate_counts_refuses_an_unknown_method_naming_its_methods() -> None:
    krr = pldp.KRR(1.0, 3)
    with pytest.raises(pldp.EstimationError, match=r"unknown method 'nope'.*'unbiased', 'norm_sub', 'mle', 'recover'"):
        estimate_counts("direct", krr.support, krr.domain, 10, np.array([4, 3, 3]), "nope")


def _data(name: str, oracle: pldp.FrequencyOracle) -> tuple[object, ...]:
    """True data of a case for ``simulate``: 300 users (a level), spread unevenly over the items
    (MPLDP: 600 users with every value and level in turn)."""
    if name == "mpldp":
        users = np.arange(600)
        return np.stack([users % 3, users % 4], axis=1), np.stack([users % 2, (users // 2) % 2], axis=1)
    counts = np.arange(1, oracle.d + 1) * 300 // oracle.d
    if hasattr(oracle, "levels"):
        return (np.tile(counts, (len(oracle.levels), 1)),)
    return (counts,)


@pytest.mark.parametrize("name", ["krr", "oue", "rcf", "pbp", "ppda", "mpldp", "febsf-rappor"])
def test_a_method_the_table_puts_on_the_simplex_gives_estimates_on_it(name: str) -> None:
    """``on_simplex`` in the table is a promise: every such estimate says so and is non-negative,
    summing to 1 (to 1e-9: a projection's sum is exact up to rounding of d terms)."""
    oracle = oracle_cases()[name]
    tally = oracle.simulate(*_data(name, oracle), np.random.default_rng(11))
    for method in oracle.methods:
        result = pldp.estimate(oracle, tally, method)
        for est in result if isinstance(result, EstimateSet) else [result]:
            if ESTIMATION_METHODS[method].on_simplex:
                assert est.on_simplex, (name, method)
                assert est.frequencies.min() >= 0 and abs(est.frequencies.sum() - 1) <= 1e-9, (name, method)

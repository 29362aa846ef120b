"""The registry is pldp's one list of oracles (:data:`pldp.registry.ENTRIES`): every entry has its
CLI options (a named mechanism), its audit catalog rows (or a stated reason it has none), its
deployment test case (a deployable class) and its row in the docs' table of oracles
(``docs/oracles.md``, written from the registry by ``python -m tests.test_registry``).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from pldp.audit.catalog import catalog, configurations, not_audited
from pldp.cli.options import MECHANISM_NAMES, PARAMETER_OPTIONS, add_mechanism_arguments, mechanism_from_args
from pldp.deploy import Spec
from pldp.errors import ParameterError, SpecError
from pldp.registry import ENTRIES, Entry, entry
from pldp.testing import standard_cases
from tests.deploy_cases import deploy_cases

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "oracles.md"
BEGIN = "<!-- oracles: written from pldp.registry.ENTRIES by `python -m tests.test_registry` -->"
END = "<!-- end of the oracles -->"
#: Options that set every constructor parameter of :data:`PARAMETER_OPTIONS` (four items each).
ALL_OPTIONS = ["--eps", "1", "--eps-perm", "2", "--d", "4", "--sensitive", "1,1,0,0", "--budgets", "0.5,1,1,2"]
ALL_OPTIONS += ["--perm-budgets", "1,2,2,4", "--model", "opt1", "--pair-rule", "avg"]


def _markdown(text: str) -> str:
    """A docstring's summary as Markdown: ``:math:`x``` as ``$x$``, other roles as code, ``|`` escaped,
    and no pointer to the module docstring (the page is not beside it)."""
    text = re.sub(r" ?\((?:see )?module doc(?:string)?\)|module docstring; ", "", text)
    text = re.sub(r":math:`([^`]+)`", r"$\1$", text)
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`").replace("|", "\\|")


def _path(e: Entry) -> str:
    return f"pldp.{e.name}" if e.family == "mechanism" else f"pldp.protocols.{e.name}"


def oracle_table() -> str:
    """The docs' table of oracles: one row per registry entry, in its order."""
    rows = [
        "| oracle | family | `pldp mechanism show` / `pldp audit` | campaign spec | summary |",
        "|---|---|---|---|---|",
    ]
    for e in ENTRIES:
        family = f"{e.family} (generic core)" if e.generic else e.family
        cli = f"`{e.cli_name}`" if e.cli_name else "–"
        rows.append(
            f"| `{_path(e)}` | {family} | {cli} | {'yes' if e.deployable else 'no'} | {_markdown(e.summary())} |"
        )
    return "\n".join(rows)


def _page_table() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def test_the_docs_table_of_oracles_is_the_registrys() -> None:
    table = _page_table()
    listed = set(re.findall(r"^\| `pldp\.(?:protocols\.)?(\w+)`", table, re.M))
    missing = [e.name for e in ENTRIES if e.name not in listed]
    assert not missing, f"docs/oracles.md lacks {missing}: run python -m tests.test_registry"
    assert table == oracle_table(), "docs/oracles.md is not the registry's table: run python -m tests.test_registry"


def test_the_readme_names_every_named_oracle() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [e.name for e in ENTRIES if not e.generic and not re.search(rf"`(protocols\.)?{e.name}`", text)]
    assert not missing, f"README.md names none of {missing}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_mechanism_arguments(parser)
    return parser


@pytest.mark.parametrize("e", [e for e in ENTRIES if e.cli_name], ids=lambda e: e.name)
def test_every_named_mechanism_is_built_from_its_options(e: Entry) -> None:
    required = [name for name, p in e.parameters().items() if p.default is p.empty]
    assert set(required) <= set(PARAMETER_OPTIONS), f"{e.name}: parameters without an option"
    built = mechanism_from_args(e.name, _parser().parse_args(ALL_OPTIONS))
    assert type(built) is e.load()
    with pytest.raises(ParameterError, match=rf"^{e.cli_name} needs {re.escape(PARAMETER_OPTIONS[required[0]].needs)}"):
        mechanism_from_args(e.name, _parser().parse_args([]))


def test_only_named_mechanisms_have_cli_names() -> None:
    assert len(set(MECHANISM_NAMES)) == len(MECHANISM_NAMES) > 0  # one mechanism per name
    assert all(entry(n).cli_name == n for n in MECHANISM_NAMES)  # each name finds its own entry
    assert {e.family for e in ENTRIES if e.cli_name} == {"mechanism"}
    for e in ENTRIES:
        if not e.cli_name:
            with pytest.raises(ParameterError, match=f"unknown mechanism '{e.name}'"):
                mechanism_from_args(e.name, _parser().parse_args(ALL_OPTIONS))


def test_a_generic_core_is_the_base_of_named_entries() -> None:
    classes = {e.name: e.load() for e in ENTRIES}
    for e in ENTRIES:
        if e.generic:
            named = [n for n, c in classes.items() if c is not classes[e.name] and issubclass(c, classes[e.name])]
            assert named and not any(entry(n).generic for n in named), e.name


def test_every_entry_has_audit_rows_or_a_reason() -> None:
    configs, reasons = configurations(), not_audited()
    assert set(configs) | set(reasons) == {e.name for e in ENTRIES}
    assert not set(configs) & set(reasons)
    for name, rows in configs.items():
        assert rows, name
        assert all(type(make()) is entry(name).load() for make in rows.values()), name
    assert list(catalog()) == [row for e in ENTRIES for row in configs.get(e.name, {})]


def test_every_deployable_entry_has_a_deploy_case_and_the_others_are_refused() -> None:
    deployed = {type(o).__name__ for o in deploy_cases().values()}
    assert deployed == {e.name for e in ENTRIES if e.deployable and not e.generic}
    for case in standard_cases().values():
        e = entry(type(case.oracle).__name__)
        if not e.deployable:
            with pytest.raises(SpecError, match="cannot be deployed"):
                Spec.from_mechanism(case.oracle, question="q?")


def test_every_entry_has_a_standard_case_or_is_generic() -> None:
    covered = {type(case.oracle).__name__ for case in standard_cases().values()}
    assert covered == {e.name for e in ENTRIES if not e.generic}


def write_page() -> None:
    """Rewrite the table of ``docs/oracles.md`` from the registry."""
    text = PAGE.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    PAGE.write_text(f"{head}{BEGIN}\n\n{oracle_table()}\n\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")


if __name__ == "__main__":
    write_page()

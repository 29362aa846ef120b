"""``make dist`` builds a wheel that installs and holds the collector's pages and the bundled data;
``make test-fast`` skips the tests marked slow and lists the slowest."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _make(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    # PY: this environment's Python; STAMP empty: no venv check (the targets' commands alone)
    cmd = [make, *args, f"PY={sys.executable}", "STAMP="]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def test_make_test_fast_skips_the_slow_tests_and_lists_durations() -> None:
    out = _make("-n", "test-fast")
    assert out.returncode == 0, out.stderr
    assert '-m "not slow"' in out.stdout and "--durations=15" in out.stdout
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)  # registered (--strict-markers refuses unknown ones)


def _package_data() -> set[str]:
    """The files the package data patterns of pyproject.toml name, relative to src/."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["pldp"]
    base = ROOT / "src" / "pldp"
    return {str(p.relative_to(ROOT / "src")) for pattern in patterns for p in base.glob(pattern) if p.is_file()}


@pytest.mark.slow  # a wheel build: about 20 s, most of it pip setting up the build backend
def test_make_dist_builds_an_installable_wheel_with_the_pages_and_the_data(tmp_path: Path) -> None:
    tree = tmp_path / "tree"  # a clean copy of what the wheel is built from: no stale build/ of this tree
    tree.mkdir()
    for name in ("Makefile", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    built = _make("dist", cwd=tree, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tree / "dist").glob("pldp-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = _package_data()
    assert {"pldp/service/static/respondent.html", "pldp/service/static/pldp-client.mjs"} <= data
    assert any(n.startswith("pldp/datasets/data/") and n.endswith(".gz") for n in data)
    assert data <= names, sorted(data - names)
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    check = (
        "import importlib.resources, pldp, pldp.datasets, sys\n"
        f"assert pldp.__file__.startswith({str(site)!r}), pldp.__file__\n"
        "page = importlib.resources.files('pldp.service') / 'static' / 'respondent.html'\n"
        "assert '<html' in page.read_text().lower()\n"
        "print(len(pldp.datasets.load_bank_job().items))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0 and int(run.stdout) > 1000, run.stderr
    cli = subprocess.run([sys.executable, "-m", "pldp.cli", "--version"], capture_output=True, text=True, env=env)
    assert cli.returncode == 0 and cli.stdout.startswith("pldp "), cli.stderr


# ------------------------------------------------------------------ declared dependencies
def _deps() -> object:
    """``.ci/deps.py``, the script that reads the declared dependencies (not a package module)."""
    spec = importlib.util.spec_from_file_location("ci_deps", ROOT / ".ci" / "deps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _third_party_imports() -> dict[str, list[str]]:
    """Each top-level module that ``src/pldp`` imports from outside the standard library, and where."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "src" / "pldp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top != "pldp" and top not in sys.stdlib_module_names:
                    found.setdefault(top, []).append(str(path.relative_to(ROOT)))
    return found


#: Imported by the package and not its dependency on purpose: pytest by ``pldp.testing.run`` (the
#: conformance checks run under pytest where the caller has it), and typing_extensions by
#: ``pldp.service.models`` before Python 3.12 (pydantic needs its ``TypedDict`` there, and depends on it).
UNDECLARED = {"pytest", "typing_extensions"}


def test_every_module_the_package_imports_is_declared_with_a_lower_bound() -> None:
    deps: Any = _deps()
    extras = list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    runtime = [e for e in extras if e not in ("test", "dev", "docs", "bench")]
    bounds = deps.lower_bounds(runtime)
    distributions = importlib.metadata.packages_distributions()
    missing = {}
    for module, where in _third_party_imports().items():
        if module in UNDECLARED:
            continue
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & set(bounds):
            missing[module] = where[0]
    assert not missing, f"imported by pldp but not declared with a lower bound in pyproject.toml: {missing}"
    assert {"numpy", "scipy"} <= set(deps.lower_bounds([]))  # the core: no extra needed


def test_the_lower_bounds_are_a_constraints_file_of_exact_pins() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "deps.py"), "lower", "experiments", "distributed", "deploy", "service"],
        capture_output=True,
        text=True,
        check=True,
    )
    pins = dict(line.split("==") for line in out.stdout.split())
    assert pins["numpy"] == "1.26" and pins["fastapi"] == "0.110" and pins["scipy"] == "1.11.1"
    assert set(pins) >= {"pandas", "pyarrow", "dask", "uvicorn", "pydantic", "starlette", "matplotlib"}

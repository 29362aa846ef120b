"""Every ``pldp`` command with the core dependencies only (numpy, scipy), as a plain ``pip install .``
leaves it: a command that needs an extra prints one line naming the extra and exits with 2, before it
does any work (no store, no report file, no collector started); every other command runs.

The environment is a venv built in well under a second: ``python -m venv --without-pip`` and a
``.pth`` file that puts this tree's ``src`` and links to the runner's own numpy and scipy (nothing
copied or installed) on its path; the test first checks that no extra's module can be imported
there, so that it cannot pass vacuously. The commands run in one test, four at once, the
``campaign`` and ``token`` ones wave by wave against one real collector (this environment's, with
the service extra; they need no extra to talk to it). The parser, the help and the README's table
are checked in this process."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi")  # the collector the campaign commands talk to
pytest.importorskip("pyarrow")

import pldp
from pldp.cli import build_parser, main
from pldp.client import Client
from pldp.deploy import Spec
from tests.service_server import Server

ROOT = Path(__file__).resolve().parents[1]
#: The modules of the extras; none of them may be importable in the core-only venv.
ABSENT = (
    *("fastapi", "starlette", "pydantic", "uvicorn", "httptools", "pyarrow"),
    *("pandas", "matplotlib", "tqdm", "dask", "distributed", "fsspec"),
)
#: The campaigns' specs: open, invited (codes), and with manual rounds.
SPECS = {
    "open": Spec.from_mechanism(pldp.KRR(1.0, 3), question="core?", labels=["a", "b", "c"]),
    "invited": Spec.from_mechanism(pldp.KRR(1.0, 4), question="core?", labels=["a", "b", "c", "d"]),
    "rounds": Spec.from_mechanism(pldp.KRR(1.0, 5), question="core?", labels=["a", "b", "c", "d", "e"]),
}
OPEN, INVITED, ROUNDS = (SPECS[k].id for k in ("open", "invited", "rounds"))


@dataclass
class Case:
    """A command run in the core-only venv: ``pldp ARGV``, and the extras its one line must name
    (``""``: none, it runs and exits with 0)."""

    argv: list[str]
    extras: str = ""


SCHEDULER = ["--scheduler", "tcp://127.0.0.1:1"]
#: Commands that need an extra, with the extras their line names. ``serve`` would create s.db,
#: ``clients simulate`` out.parquet, ``campaign export`` the folder exported/, ``reproduce`` results/:
#: the fixture checks that none exists afterwards.
REFUSED = {
    "serve": Case(["serve", "--db", "s.db", "--port", "1"], "service"),
    "demo-collection": Case(["demo-collection", "--n", "100", "--batch", "50"], "service"),
    "reproduce": Case(["reproduce", "all", "--quick", "--out", "results"], "experiments"),
    "reproduce --scheduler": Case(["reproduce", "iprr", *SCHEDULER], "experiments,distributed"),
    "attack": Case(["attack", "krr", "--n", "1000", "--repeats", "2"], "experiments"),
    "aggregate": Case(["aggregate", "open.json", "reports.parquet"], "deploy"),
    "aggregate --scheduler": Case(["aggregate", "open.json", "reports.parquet", *SCHEDULER], "deploy,distributed"),
    "audit --scheduler": Case(["audit", "krr", "--eps", "1", "--d", "3", *SCHEDULER], "distributed"),
    "clients simulate parquet": Case(
        ["clients", "simulate", "open.json", "--answers", "answers.csv", "--out", "out.parquet"], "deploy"
    ),
    "campaign submit parquet": Case(["campaign", "submit", OPEN, "reports.parquet"], "deploy"),
    "campaign export --out-dir": Case(["campaign", "export", OPEN, "--out-dir", "exported"], "deploy"),
}
#: Written by no command of :data:`REFUSED`.
NOT_WRITTEN = ("s.db", "results", "out.parquet", "exported")

#: Commands that run with numpy and scipy alone (and no collector).
OFFLINE = {
    "demo": Case(["demo", "--n", "1000", "--trials", "20"]),
    "datasets list": Case(["datasets", "list"]),
    "mechanism show": Case(["mechanism", "show", "krr", "--eps", "1", "--d", "3"]),
    "spec new": Case(["spec", "new", "krr", "--labels", "a,b,c", "--question", "q", "--eps", "1"]),
    "spec verify": Case(["spec", "verify", "open.json"]),
    "clients simulate json": Case(["clients", "simulate", "open.json", "--answers", "answers.csv", "--out", "s.json"]),
    # --out without matplotlib: the figure is left out, with a word
    "audit": Case(["audit", "krr", "--eps", "1", "--d", "3", "--trials", "2000", "--seed", "1", "--out", "aud"]),
    "token new": Case(["token", "new"]),
}

ADMIN = ["--token-file", "admin.token"]
ANALYST = ["--token-file", "analyst.token"]
#: The commands that talk to the collector, wave by wave (a wave needs what the waves before did).
#: ``{token}``: the id of the token that ``token create`` made in the wave before.
REMOTE: list[dict[str, Case]] = [
    {
        "campaign create": Case(["campaign", "create", "open.json", "-q", *ADMIN]),
        "campaign create --invited": Case(["campaign", "create", "invited.json", "--invited", "-q", *ADMIN]),
        "campaign create --rounds": Case(["campaign", "create", "rounds.json", "--rounds", "manual", "-q", *ADMIN]),
        "token create": Case(["token", "create", *ADMIN]),
    },
    {
        "campaign list": Case(["campaign", "list", *ADMIN]),
        "campaign submit json": Case(["campaign", "submit", OPEN, "reports.json"]),
        "campaign token": Case(["campaign", "token", OPEN, *ADMIN]),
        "campaign invite": Case(["campaign", "invite", INVITED, "--count", "3", "--out", "codes.csv", *ADMIN]),
        "campaign round": Case(["campaign", "round", ROUNDS, *ADMIN]),
        "token list": Case(["token", "list", *ADMIN]),
        "token revoke": Case(["token", "revoke", "{token}", *ADMIN]),
    },
    {
        "campaign estimate": Case(["campaign", "estimate", OPEN, *ANALYST]),
        "campaign series": Case(["campaign", "series", OPEN, *ANALYST]),
        "campaign export": Case(["campaign", "export", OPEN, "--out", "e.parquet", *ANALYST]),
        "campaign codes": Case(["campaign", "codes", INVITED, *ADMIN]),
        "campaign revoke-codes": Case(["campaign", "revoke-codes", INVITED, "--unused", *ADMIN]),
    },
    {"campaign close": Case(["campaign", "close", OPEN, *ADMIN])},
    {"token rotate": Case(["token", "rotate", "--token-file", "admin.token"])},  # last: the old admin token dies
]


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def _core_venv(where: Path) -> Path:
    """A venv with numpy, scipy and this tree's pldp only; returns its Python."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    links = where / "core"
    links.mkdir()
    for name in ("numpy", "scipy"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        site = Path(spec.origin).parent.parent
        for entry in site.iterdir():  # the package, its bundled libraries, its metadata
            if entry.name in (name, f"{name}.libs") or re.fullmatch(rf"{name}-[^-]+\.dist-info", entry.name):
                (links / entry.name).symlink_to(entry)
    _site_packages(venv).joinpath("pldp-core.pth").write_text(f"{links}\n{ROOT / 'src'}\n")
    return venv / "bin" / "python"


def _env(server: str = "http://127.0.0.1:1") -> dict[str, str]:
    """This environment without what could lead the venv to other packages, with ``PLDP_SERVER``
    the collector of the tests (no command may reach one at the default address)."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**base, "PLDP_SERVER": server}


def _run(python: Path, cwd: Path, case: Case, **fill: str) -> subprocess.CompletedProcess[str]:
    """``pldp ARGV`` in the core-only venv (``{token}`` in ARGV filled in), ``PLDP_SERVER`` ``fill["url"]``."""
    argv = [a.format(**fill) for a in case.argv]
    cmd = [str(python), "-m", "pldp.cli", *argv]
    env = _env(fill["url"])
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False)


def _files(cwd: Path) -> None:
    """The specs, answers and report files the commands read."""
    for name, spec in SPECS.items():
        (cwd / f"{name}.json").write_text(spec.to_json())
    (cwd / "answers.csv").write_text("answer\na\nb\nc\na\n")
    batch = Client(SPECS["open"]).reports(["a", "b", "c", "a", "a"])
    (cwd / "reports.json").write_text(json.dumps(batch.to_json()))
    import pyarrow.parquet as pq

    pq.write_table(batch.to_arrow(), cwd / "reports.parquet")


def _core_python(where: Path) -> Path:
    """The Python of a core-only venv in ``where``, checked: numpy, scipy and this pldp, no extra."""
    python = _core_venv(where)
    probe = (
        "import importlib.util, json, numpy, scipy.optimize, pldp\n"
        f"print(json.dumps([pldp.__file__, [m for m in {ABSENT!r} if importlib.util.find_spec(m)]]))"
    )
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    where_from, present = json.loads(out.stdout)
    assert Path(where_from).is_relative_to(ROOT / "src"), where_from
    assert present == [], f"the core-only venv can import {present}: the test would prove nothing"
    return python


def _run_all(python: Path, cwd: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every command of the tables run by ``python`` in ``cwd``, by name: four at once, the remote
    ones wave by wave against a collector started meanwhile."""
    _files(cwd)
    server = Server(cwd / "collector.db")
    shutil.copy(server.token_file, cwd / "admin.token")
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    fill = {"url": server.url, "token": ""}
    try:
        with ThreadPoolExecutor(4) as pool:
            started = pool.submit(server.start)
            futures = {
                name: pool.submit(_run, python, cwd, case, **fill) for name, case in {**REFUSED, **OFFLINE}.items()
            }
            started.result()
            for wave in REMOTE:
                futures |= {name: pool.submit(_run, python, cwd, case, **fill) for name, case in wave.items()}
                done |= {name: futures[name].result() for name in wave}
                if "campaign token" in wave:  # the analyst token the next wave reads
                    (cwd / "analyst.token").write_text(done["campaign token"].stdout)
                if "token create" in wave:  # the token the next wave revokes
                    made = re.search(r"analyst token (\S+) ", done["token create"].stderr)
                    fill["token"] = made.group(1) if made else "?"
            return {name: f.result() for name, f in futures.items()}
    finally:
        server.stop()


def _refusal_fault(case: Case, out: subprocess.CompletedProcess[str]) -> str | None:
    """What is wrong with a refusal: anything but exit 2 and one line naming the command and its extras."""
    lines = out.stderr.splitlines()
    command = " ".join(case.argv[: 2 if case.argv[0] in ("clients", "campaign") else 1])
    fix = f'pip install "pldp[{case.extras}]"'
    if "Traceback" in out.stdout + out.stderr or out.returncode != 2 or out.stdout or len(lines) != 1:
        return f"exit {out.returncode}, {len(lines)} lines on stderr: {out.stderr[-1500:]}"
    if not lines[0].startswith(f"pldp: error: pldp {command} ") or fix not in lines[0]:
        return f"not naming {command!r} and {fix}: {lines[0]}"
    return None


def test_every_command_in_a_venv_of_numpy_and_scipy_runs_or_names_its_extra_in_one_line(tmp_path: Path) -> None:
    """One test, so that the venv and the collector are made once even when the suite runs on
    several xdist workers; it lists every command that fails, not only the first."""
    python = _core_python(tmp_path / "core")
    (tmp_path / "work").mkdir()
    runs = _run_all(python, tmp_path / "work")
    faults = [f"{name}: {fault}" for name, case in REFUSED.items() if (fault := _refusal_fault(case, runs[name]))]
    for name in [*OFFLINE, *(name for wave in REMOTE for name in wave)]:
        out = runs[name]
        if out.returncode != 0 or "Traceback" in out.stdout + out.stderr:
            faults.append(f"{name}: exit {out.returncode}: {out.stderr[-1500:]}")
    faults += [f"a refused command wrote {name}" for name in NOT_WRITTEN if (tmp_path / "work" / name).exists()]
    assert not faults, "\n".join(faults)
    # not only exit 0: the reports arrived, and what was read came back
    assert runs["campaign create"].stdout.strip() == OPEN
    assert "5 accepted" in runs["campaign submit json"].stdout
    assert "n = 5" in runs["campaign estimate"].stdout
    assert "issued=3" in runs["campaign codes"].stdout
    assert "3 codes revoked" in runs["campaign revoke-codes"].stderr
    assert "revoked" in runs["token revoke"].stderr
    assert "admin token rotated" in runs["token rotate"].stderr


def _leaves(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[str]:
    """Every command of ``parser``, as typed after ``pldp``."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix.strip()
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, f"{prefix} {name}")


def test_every_command_of_pldp_help_runs_here() -> None:
    """A command added to ``pldp`` must be added to a table of this module (and declare its extra)."""
    cases = [*REFUSED.values(), *OFFLINE.values(), *(c for wave in REMOTE for c in wave.values())]
    ran = {" ".join(c.argv[:2]) for c in cases} | {c.argv[0] for c in cases}
    assert set(_leaves(build_parser())) <= ran, sorted(set(_leaves(build_parser())) - ran)


def test_every_declared_need_is_refused_here() -> None:
    from pldp.cli.extras import NEEDS

    for need in NEEDS:
        assert any(
            " ".join(c.argv).startswith(need.command) and need.extra in c.extras.split(",") for c in REFUSED.values()
        ), need


def test_the_help_and_the_readme_say_which_extra_each_command_needs(capsys: pytest.CaptureFixture[str]) -> None:
    """``pldp --help`` ends with the table of :data:`pldp.cli.extras.NEEDS`, each such command's help
    says it, and so does the README's table (a row per extra)."""
    from pldp.cli.extras import NEEDS

    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    readme = (ROOT / "README.md").read_text()
    for need in NEEDS:
        row = f"{need.command} {need.option}".strip()
        assert re.search(rf"^{re.escape(row)} +{need.extra}$", top, re.M), row
        with pytest.raises(SystemExit):
            main([*need.command.split(), "--help"])
        own = " ".join(capsys.readouterr().out.split())  # the help's lines joined
        assert f'pldp {row} needs the {need.extra} extra: pip install "pldp[{need.extra}]".' in own
        (line,) = [ln for ln in readme.splitlines() if ln.startswith("|") and f"`{need.extra}`" in ln.split("|")[-2]]
        assert f"`pldp {row}`" in line, (row, line)


def test_an_absent_module_of_an_extra_that_no_declaration_foresaw_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The safety net: a command that imports an extra's module it was not declared to need."""
    import pldp.cli.datasets

    def needs_pyarrow(args: argparse.Namespace) -> int:
        raise ModuleNotFoundError("No module named 'pyarrow.parquet'", name="pyarrow.parquet")

    monkeypatch.setattr(pldp.cli.datasets, "_datasets_list", needs_pyarrow)
    with pytest.raises(SystemExit) as exit_:
        main(["datasets", "list"])
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err
        == 'pldp: error: pldp datasets list needs the deploy extra: pip install "pldp[deploy]"\n'
    )

    def bug(args: argparse.Namespace) -> int:
        raise ModuleNotFoundError("No module named 'pldp.nowhere'", name="pldp.nowhere")

    monkeypatch.setattr(pldp.cli.datasets, "_datasets_list", bug)
    with pytest.raises(ModuleNotFoundError):  # not an extra's: a bug keeps its traceback
        main(["datasets", "list"])

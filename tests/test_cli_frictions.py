"""What a newcomer met on the command line (issue 31, item 4), each behaviour run as the real
``pldp`` command against one real collector process (started with ``--rate 0.05 --burst 100``:
one address may send 100 reports, then one every 20 s).

* ``campaign submit`` without a token meets the collector's per-address limit (429): the CLI says
  that analyst and admin tokens are exempt and to pass ``--token-file``;
* Ctrl-C in ``campaign submit``, ``aggregate`` and ``reproduce`` (SIGINT to the whole process
  group, as a terminal sends it) prints one line saying what was done, exit 130: no traceback, no
  Dask ``CancelledError``;
* ``campaign create`` of a closed campaign's spec is refused (exit 1), saying how to start anew;
* ``campaign create``, ``close`` and ``round`` print words with ISO 8601 times, JSON with ``--json``;
* an estimate says nothing about a detection screen that did not run and was not asked for;
* bad values are one line: ``--budgets -1,1,inf``, a port beyond 65535, a 401 names
  ``--token-file``, a missing folder for ``aggregate``; ``spec verify`` names answers by label.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("pyarrow")

import pldp
from pldp.cli import main
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.estimates import estimate_text
from tests.cli_run import main_error, one_line, pldp_cmd
from tests.service_server import Server

#: The campaign the submit tests send to (reports of 300 answers).
SPEC = Spec.from_mechanism(
    pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, np.inf])), question="frictions?", labels=["flu", "covid", "none"]
)
#: A campaign with reports sent by the admin (exempt from the limit), for the estimate.
PLAIN = Spec.from_mechanism(pldp.KRR(1.0, 3), question="plain?", labels=["a", "b", "c"])
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
#: A line of a tqdm progress bar (the commands draw one on standard error).
BAR = re.compile(r"^\s*(aggregate|experiments):\s+\d+%")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("frictions") / "c.db"
    with Server(db, "--rate", "0.05", "--burst", "100") as srv:
        admin = srv.admin()
        admin.create_campaign(SPEC)
        admin.create_campaign(PLAIN)
        admin.submit(PLAIN.id, Client(PLAIN).reports(["a", "b", "c", "a"] * 100))  # a token: not limited
        yield srv


@pytest.fixture(scope="module")
def files(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The spec, an analyst token file, and the reports of 300 simulated answers (``reports.parquet``)."""
    work = tmp_path_factory.mktemp("files")
    (work / "spec.json").write_text(SPEC.to_json())
    (work / "answers.csv").write_text("answer\n" + "flu\ncovid\nnone\n" * 100)
    (work / "analyst.token").write_text(server.admin().create_token("frictions", [SPEC.id, PLAIN.id])["token"])
    out = str(work / "reports.parquet")
    assert (
        main(["clients", "simulate", str(work / "spec.json"), "--answers", str(work / "answers.csv"), "--out", out])
        == 0
    )
    return {p.name: p for p in work.iterdir()}


def start(*args: str, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """``pldp ARGS`` in its own process group (as a terminal runs it: Ctrl-C signals the whole group)."""
    env = {k: v for k, v in os.environ.items() if k != "PLDP_SERVER"}
    cmd = [sys.executable, "-m", "pldp.cli", *args]
    return subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def read_until(proc: subprocess.Popen[bytes], pattern: str, timeout: float = 180) -> str:
    """What ``proc`` writes on standard error, read until ``pattern`` shows in it: the proof that it is mid-run."""
    assert proc.stderr is not None
    seen, deadline = b"", time.monotonic() + timeout
    while not re.search(pattern, seen.decode(errors="replace")):
        assert time.monotonic() < deadline, f"no {pattern!r} in {timeout} s: {seen!r}"
        if select.select([proc.stderr], [], [], 0.5)[0]:
            chunk = os.read(proc.stderr.fileno(), 65536)
            assert chunk, f"the command ended before {pattern!r}: {seen!r}"
            seen += chunk
    return seen.decode(errors="replace")


def ctrl_c(proc: subprocess.Popen[bytes], before: str) -> tuple[str, str]:
    """SIGINT to the process group; assert exit 130 and ONE line on standard error after it (besides
    a progress bar's last redraw), no traceback, no Dask ``CancelledError``. Returns the line and stdout."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, rest = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # nothing left running
        out, rest = proc.communicate()
        raise AssertionError(f"still running 120 s after Ctrl-C: {before}{rest.decode(errors='replace')}") from None
    after, everything = rest.decode(errors="replace"), before + rest.decode(errors="replace")
    assert proc.returncode == 130, (proc.returncode, everything)
    assert "Traceback" not in everything and "CancelledError" not in everything, everything
    lines = [x for x in after.replace("\r", "\n").split("\n") if x.strip() and not BAR.match(x)]
    assert len(lines) == 1 and lines[0].startswith("pldp: interrupted"), everything
    return lines[0], out.decode()


# ----------------------------------------------------------------------------- the limit, Ctrl-C


def test_submit_meets_the_limit_says_tokens_are_exempt_and_ctrl_c_says_what_was_acknowledged(
    server: Server, files: dict[str, Path]
) -> None:
    at = ("--server", server.url)
    reports = str(files["reports.parquet"])
    sending = start("campaign", "submit", SPEC.id, reports, "--batch", "100", "--no-progress", *at)
    # the first 100 reports pass, the next 100 meet the limit: the CLI waits, and says why and what to do
    first = read_until(sending, r"sending again in .*\n")
    assert "429 rate_limited" in first and "analyst and admin tokens are exempt: pass --token-file" in first, first
    line, out = ctrl_c(sending, first)
    assert line == (
        "pldp: interrupted after 100 of 300 reports were acknowledged; running the same command again counts each "
        "report once"
    )
    assert out == ""
    refused = pldp_cmd("campaign", "submit", SPEC.id, reports, "--batch", "100", "--retries", "0", "--no-progress", *at)
    said = one_line(refused.stderr, 1, refused.returncode, "pldp: the collector refused: 429 rate_limited")
    assert said.endswith(
        "; the collector limits reports per address (429); analyst and admin tokens are exempt: pass --token-file FILE"
    )
    token = ("--token-file", str(files["analyst.token"]))
    sent = pldp_cmd("campaign", "submit", SPEC.id, reports, "--batch", "100", "--no-progress", *at, *token)
    assert sent.returncode == 0 and sent.stderr == "", sent.stderr
    assert sent.stdout.strip().endswith("200 accepted, 100 duplicates (held already)"), sent.stdout
    assert [c["n"] for c in server.admin().campaigns() if c["id"] == SPEC.id] == [300]  # each report once


def test_ctrl_c_in_aggregate_on_dask_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    (tmp_path / "spec.json").write_text(PLAIN.to_json())
    table = Client(PLAIN).reports(np.arange(10_000) % 3).to_arrow()
    pq.write_table(table, tmp_path / "reports.parquet", row_group_size=10)  # 1,000 parts: one Dask task each
    out = tmp_path / "estimate.json"
    cmd = ("aggregate", "spec.json", "reports.parquet", "--workers", "2", "--json", str(out))
    running = start(*cmd, cwd=tmp_path)
    seen = read_until(running, r"aggregate:\s+\d+%.*\|\s*[1-9]\d*/1000")  # some parts tallied, on the workers
    line, printed = ctrl_c(running, seen)
    assert line == "pldp: interrupted while tallying the report files: no estimate was printed or written"
    assert printed == "" and not out.exists()


def test_ctrl_c_in_reproduce_on_dask_is_one_line_and_says_nothing_was_written(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("dask.distributed")
    results = tmp_path / "results"
    running = start("reproduce", "iprr", "--quick", "--workers", "2", "--out", str(results))
    seen = read_until(running, r"experiments:\s+\d+%.*\|\s*[1-9]\d*/\d+")  # some experiments done
    line, printed = ctrl_c(running, seen)
    assert re.fullmatch(
        rf"pldp: interrupted after \d+ s of experiments; nothing was written to {re.escape(str(results))} "
        r"\(the tables, figures and report are written once every experiment has run\)",
        line,
    ), line
    assert printed == "" and not results.exists()


# ----------------------------------------------------------------------------- create, close, round


def test_create_close_and_round_print_words_and_refuse_a_closed_campaign(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = Spec.from_mechanism(pldp.KRR(2.0, 3), question="words?", labels=["x", "y", "z"])
    (tmp_path / "spec.json").write_text(spec.to_json())
    at, admin = ("--server", server.url), ("--token-file", str(server.token_file))
    made = pldp_cmd("campaign", "create", "spec.json", "--rounds", "manual", *at, *admin, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0] == f"campaign: {spec.id}" and "{" not in made.stdout, made.stdout
    assert "question: words?" in made.stdout and "rounds:   manual, now round 1" in made.stdout
    assert re.search(rf"^created:  {ISO}$", made.stdout, re.M), made.stdout
    assert f"survey page: {server.url}/c/{spec.id}" in made.stderr
    args = ["campaign", "create", str(tmp_path / "spec.json"), "--rounds", "manual", *at, *admin]
    assert main([*args, "--json"]) == 0  # the same, as the collector's JSON (in this process: no new behaviour)
    assert json.loads(capsys.readouterr().out)["id"] == spec.id

    assert main(["campaign", "round", spec.id, *at, *admin]) == 0
    said = capsys.readouterr().out
    assert re.fullmatch(rf"campaign {spec.id}: round 2 opened at {ISO}; reports may answer round 1 or 2 now\n", said)
    assert main(["campaign", "round", spec.id, "--json", *at, *admin]) == 0
    assert json.loads(capsys.readouterr().out)["round"] == 3

    closed = pldp_cmd("campaign", "close", spec.id, *at, *admin)
    assert closed.returncode == 0, closed.stderr
    assert re.fullmatch(rf"campaign {spec.id} closed at {ISO}: it takes no more reports\n", closed.stdout)
    assert main(["campaign", "close", spec.id, "--json", *at, *admin]) == 0
    assert isinstance(json.loads(capsys.readouterr().out)["closed_at"], float)

    again = pldp_cmd("campaign", "create", "spec.json", "--rounds", "manual", "-q", *at, *admin, cwd=tmp_path)
    one_line(again.stderr, 1, again.returncode, spec.id, "is closed", "never reopened", "new spec", "--question")
    assert again.stdout == ""  # ID=$(pldp campaign create ... -q) gets nothing, and the script stops


# ----------------------------------------------------------------------------- estimates, 401


def test_an_estimate_says_nothing_of_a_screen_that_did_not_run(server: Server, files: dict[str, Path]) -> None:
    token = ("--token-file", str(files["analyst.token"]))
    out = pldp_cmd("campaign", "estimate", PLAIN.id, "--server", server.url, *token)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"campaign {PLAIN.id}: n = 400") and len(lines) == 4, lines
    assert "detection" not in out.stdout and "Screening" not in out.stdout
    # asked for (the method that drops screened reports), a missing screen is said
    est = json.loads(pldp_cmd("campaign", "estimate", PLAIN.id, "--json", "--server", server.url, *token).stdout)
    assert not est["detection"]["available"]
    assert "detection: Screening for fake reports is not available here" in estimate_text({**est, "method": "detect"})


def test_an_estimate_names_hashed_buckets_by_candidates(
    server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--candidates FILE``: each bucket a candidate reaches is followed by every candidate of it
    (two spellings of one answer share theirs); refused, in one line, for answers that are not hashed."""
    from pldp.deploy.labels import text_bucket

    spec = Spec.from_mechanism(pldp.KRR(2.0, 50), question="a word?", labels="hashed")
    admin = server.admin()
    admin.create_campaign(spec)
    admin.submit(spec.id, Client(spec).reports(["tea", "café"] * 100))
    (tmp_path / "t").write_text(admin.create_token("hashed", [spec.id, PLAIN.id])["token"])
    (tmp_path / "words.txt").write_text("café\ncafe\u0301\n\ntea\n", encoding="utf-8")
    args = ["--candidates", str(tmp_path / "words.txt"), "--server", server.url, "--token-file", str(tmp_path / "t")]
    assert main(["campaign", "estimate", spec.id, *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    bucket = text_bucket("café", 50)
    (line,) = [x for x in lines if re.match(rf"^  {bucket} ", x)]
    assert line.endswith("  café, cafe\u0301")
    assert sum(x.endswith(("café, cafe\u0301", "  tea")) for x in lines) == 2 - (bucket == text_bucket("tea", 50))
    main_error(capsys, ["campaign", "estimate", PLAIN.id, *args], "this campaign's answers are not hashed")


def test_a_401_names_token_file(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = pldp_cmd("campaign", "estimate", PLAIN.id, "--server", server.url)
    line = one_line(out.stderr, 1, out.returncode, "401 unauthorized")
    assert line.endswith("; this needs a token: pass --token-file FILE (a file holding it)"), line
    wrong = tmp_path / "old.token"
    wrong.write_text("x" * 43)
    assert main(["campaign", "list", "--server", server.url, "--token-file", str(wrong)]) == 1
    line = one_line(capsys.readouterr().err, 1, 1, "401 unauthorized")
    assert line.endswith(
        f"the collector does not accept the token in --token-file {wrong} (expired, revoked, or another collector's)"
    )


# ----------------------------------------------------------------------------- bad values


def test_bad_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    budgets = "budgets must be > 0"
    main_error(capsys, ["mechanism", "show", "iprr", "--budgets", "-1,1,inf"], budgets)  # not "expected one argument"
    main_error(
        capsys, ["spec", "new", "iprr", "--labels", "a,b,c", "--budgets", "-1,1,inf", "--question", "q"], budgets
    )
    main_error(capsys, ["spec", "new", "rcf", "--labels", "a,b", "--levels", "-.5,1", "--question", "q"], "levels")
    for url in ("http://localhost:99999", "http://localhost:port"):
        main_error(capsys, ["campaign", "list", "--server", url], url, "http(s)://host:port")
    (tmp_path / "spec.json").write_text(PLAIN.to_json())
    folder = str(tmp_path / "reports")
    main_error(capsys, ["aggregate", str(tmp_path / "spec.json"), folder], f"{folder}: no such file or folder")


def test_spec_verify_names_the_answers_by_their_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "spec.json").write_text(SPEC.to_json())
    assert main(["spec", "verify", str(tmp_path / "spec.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["where", "what", "is", "protected", "claimed", "realised", "holds"]
    assert lines[2].split() == ["every", "report", "a", "report", "of", "“flu”", "0.5", "0.5", "yes"]
    assert lines[3].split() == ["every", "report", "a", "report", "of", "“covid”", "1", "1", "yes"]
    assert lines[4] == "every claim holds; the whole report is inf-LDP" and "output" not in "\n".join(lines)


def test_spec_new_makes_large_domain_and_leveled_specs_and_range_labels(capsys: pytest.CaptureFixture[str]) -> None:
    """``spec new`` reaches the large-domain oracles and uRAP, the leveled protocols over them, and
    answers without labels (``--labels range:D``); a protocol that cannot take an oracle says why."""
    made = {}
    for name, args in {
        "olh": ["olh", "--labels", "range:10000", "--eps", "1"],
        "olh-hashed": ["olh", "--labels", "hashed:1000", "--eps", "1"],
        "olh-toeplitz": ["olh", "--labels", "range:10000", "--eps", "4", "--hash", "toeplitz"],
        "rcf": ["rcf", "--labels", "range:1000", "--levels", "0.5,1,2", "--oracle", "olh"],
        "pbp": ["pbp", "--labels", "a,b,c", "--levels", "0.5,1", "--rho", "0.5,0.5", "--oracle", "hr"],
        "urap": ["urap", "--labels", "a,b,c", "--sensitive", "1,0,0", "--eps", "1"],
    }.items():
        assert main(["spec", "new", *args, "--question", "q"]) == 0
        made[name] = Spec.from_json(capsys.readouterr().out)
    assert made["olh"].to_dict()["labels"] == {"range": 10000} and len(made["olh"].labels) == 10000
    assert made["olh"].root == pldp.OLH(1.0, 10000).sampler()
    assert (
        made["olh-toeplitz"].root == pldp.OLH(4.0, 10000, hash="toeplitz").sampler()
        and made["olh-toeplitz"].root.g == 64
    )
    assert made["olh-hashed"].to_dict()["labels"] == {"hashed": 1000, "hash": "xxh32", "normalize": "NFC"}
    assert [m.g for m in made["rcf"].mechanism().mechanisms] == [3, 4, 8]  # each level its own g, in the clear
    assert made["pbp"].mechanism().oracle == "hr"
    assert made["urap"].root == pldp.URAP(1.0, np.array([True, False, False])).sampler()
    febsf = ["spec", "new", "febsf", "--labels", "a,b", "--levels", "0.5,1", "--eps-p", "1", "--oracle", "ss"]
    main_error(capsys, [*febsf, "--question", "q"], "derived for k-RR and unary reports only")
    main_error(capsys, ["spec", "new", "olh", "--labels", "range:x", "--eps", "1", "--question", "q"], "range:D")
    rcf_toeplitz = ["spec", "new", "rcf", "--labels", "a,b", "--levels", "1,2", "--oracle", "olh", "--hash", "toeplitz"]
    main_error(capsys, [*rcf_toeplitz, "--question", "q"], "--hash chooses OLH's hash family")
    main_error(capsys, ["spec", "new", "olh", "--labels", "hashed:1", "--eps", "1", "--question", "q"], "hashed:D")

"""The ``pldp`` command as a newcomer meets it: one line and exit 2 for bad input (never a
traceback), ``campaign submit``, ``PLDP_SERVER``, the pages' URLs, ``serve --help``, labels, and HTTPS.

Each behaviour runs the real ``pldp`` command in a subprocess; the campaign commands talk to one
real collector process per module (started with ``--max-reports 1000``, so that ``submit``'s
batches of 5,000 must split). The audit of every other command and file argument for the same
kinds of traceback calls :func:`pldp.cli.main` in this process (the same code, without the second
of import time a subprocess costs each).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("pyarrow")

import pldp
from pldp.cli import build_parser, main
from pldp.client import Client
from pldp.deploy import Spec
from pldp.deploy.remote import Collector, RemoteError, UnreachableError
from tests.cli_run import main_error, one_line_error, pldp_cmd
from tests.service_server import Server, free_port

SPEC = Spec.from_mechanism(
    pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, np.inf])), question="workflow?", labels=["flu", "covid", "none"]
)
#: Another spec (other budgets): its reports are refused by SPEC's campaign.
OTHER = Spec.from_mechanism(
    pldp.IPRR(pldp.ItemBudgets.from_array([0.25, 1.0, np.inf])), question="workflow?", labels=["flu", "covid", "none"]
)


def dead_url() -> str:
    """The URL of a port that nobody listens on."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("workflow") / "c.db"
    with Server(db, "--max-reports", "1000") as srv:
        srv.admin().create_campaign(SPEC)
        srv.client().submit(SPEC.id, Client(SPEC).reports(["flu", "none"] * 50))  # 100 reports to start with
        yield srv


@pytest.fixture(scope="module")
def files(server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A spec file, an analyst token file, and report files of 3,000 simulated answers
    (``pldp clients simulate``, each format), all in one directory."""
    work = tmp_path_factory.mktemp("files")
    (work / "spec.json").write_text(SPEC.to_json())
    (work / "other.json").write_text(OTHER.to_json())
    (work / "answers.csv").write_text("answer\n" + "flu\ncovid\nnone\n" * 1000)
    token = server.admin().create_token("workflow", [SPEC.id])["token"]
    (work / "analyst.token").write_text(token)
    jobs = [("spec.json", f"reports{suffix}") for suffix in (".json", ".jsonl", ".parquet")]
    jobs.append(("other.json", "other.parquet"))
    for spec, out in jobs:  # pldp clients simulate, in this process
        answers = str(work / "answers.csv")
        assert main(["clients", "simulate", str(work / spec), "--answers", answers, "--out", str(work / out)]) == 0
    return {p.name: p for p in work.iterdir()}


# ----------------------------------------------------------------------------- one line, exit 2


def test_spec_verify_of_a_missing_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2, not 1: 1 is a failed privacy claim (``tests/test_deploy.py`` checks that one)."""
    one_line_error(pldp_cmd("spec", "verify", "nonexist.json", cwd=tmp_path), "nonexist.json", "no such file")
    main_error(capsys, ["spec", "verify", str(tmp_path)], str(tmp_path), "directory")
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe not text")
    main_error(capsys, ["spec", "verify", str(tmp_path / "bad.json")], "bad.json", "UTF-8")


def test_a_missing_token_file_is_one_line_naming_it(tmp_path: Path) -> None:
    one_line_error(pldp_cmd("campaign", "estimate", "x", "--token-file", "nope.token", cwd=tmp_path), "nope.token")


FILE_CASES = [
    (["clients", "simulate", "nope.json", "--answers", "a.csv", "--out", "r.parquet"], "nope.json"),
    (["clients", "simulate", "spec.json", "--answers", "nope.csv", "--out", "r.parquet"], "nope.csv"),
    (["clients", "simulate", "spec.json", "--answers", "answers.csv", "--out", "no/r.parquet"], "no/r.parquet"),
    (["campaign", "create", "nope.json", "--server", "http://127.0.0.1:9"], "nope.json"),
    (["campaign", "submit", SPEC.id, "nope.parquet", "--server", "http://127.0.0.1:9"], "nope.parquet"),
    (["campaign", "submit", SPEC.id, "answers.csv", "--server", "http://127.0.0.1:9"], "answers.csv"),
    (["campaign", "list", "--token-file", "spec.json"], "at least 32 characters"),
    (["audit", "nope.json", "--trials", "10"], "nope.json"),
    (["aggregate", "nope.json", "r.parquet"], "nope.json"),
    (["serve", "--db", "pldp.db", "--ssl-certfile", "nope.pem"], "nope.pem"),
    (["serve", "--db", "pldp.db", "--ssl-keyfile", "key.pem"], "--ssl-certfile"),
    (["serve", "--db", ".", "--port", "0"], "directory"),
    (["serve", "--db", "no/x.db", "--port", "0"], "does not exist"),
    (["serve", "--db", "pldp.db", "--retain-days", "3"], "--export-dir"),
    (["spec", "new", "iprr", "--labels", "a,b", "--budgets", "0.5,x", "--question", "q"], "'x'"),
    (["spec", "new", "mpldp", "--labels", "a,b;c,d", "--k", "2,x2", "--eps-list", "1,2", "--question", "q;r"], "'x2'"),
    (["clients", "simulate", "spec.json", "--answers", "noanswer.csv", "--out", "r.parquet"], "'answer'"),
    (["clients", "simulate", "spec.json", "--answers", "badlevel.csv", "--out", "r.parquet"], "'level'"),
    (["clients", "simulate", "spec.json", "--answers", "answers.csv", "--out", "r.txt"], "r.txt"),
    (["campaign", "list", "--server", "localhost:8000"], "http(s)://host:port"),
    (["campaign", "submit", SPEC.id, "answers.csv", "--batch", "0"], "--batch"),
]


@pytest.mark.parametrize(("args", "word"), FILE_CASES, ids=[" ".join(a[:2]) + f" {w}" for a, w in FILE_CASES])
def test_every_other_bad_file_or_value_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], word: str
) -> None:
    """The audit of the other commands: missing files for every file argument, bad values."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.json").write_text(SPEC.to_json())
    (tmp_path / "answers.csv").write_text("answer\nflu\n")
    (tmp_path / "noanswer.csv").write_text("reply\nflu\n")
    (tmp_path / "badlevel.csv").write_text("answer,level\nflu,high\n")
    (tmp_path / "key.pem").write_text("not a key")
    main_error(capsys, args, word)
    assert not (tmp_path / "pldp.db").exists()


CAMPAIGN_COMMANDS = [
    ["create", "spec.json"],
    ["list"],
    ["submit", SPEC.id, "r.json", "--retries", "0"],
    ["estimate", SPEC.id],
    ["export", SPEC.id, "--out", "x.parquet"],
    ["export", SPEC.id, "--out-dir", "days"],
    ["close", SPEC.id],
    ["token", SPEC.id],
]


def test_an_unreachable_collector_is_one_line_naming_the_url_and_its_source(tmp_path: Path) -> None:
    by_flag, by_env = dead_url(), dead_url()
    by_env_out = pldp_cmd("campaign", "estimate", SPEC.id, env={"PLDP_SERVER": by_env})
    one_line_error(by_env_out, by_env, "PLDP_SERVER", "Connection refused")
    one_line_error(pldp_cmd("campaign", "list", "--server", by_flag, env={"PLDP_SERVER": by_env}), by_flag, "--server")


@pytest.mark.parametrize("command", CAMPAIGN_COMMANDS, ids=[" ".join(c[:1] + c[2:3]) for c in CAMPAIGN_COMMANDS])
def test_every_campaign_command_names_an_unreachable_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.json").write_text(SPEC.to_json())
    (tmp_path / "r.json").write_text("[]")
    url = dead_url()
    monkeypatch.setenv("PLDP_SERVER", url)
    main_error(capsys, ["campaign", *command], url, "from PLDP_SERVER", "Connection refused")
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "days").exists()


def test_the_default_url_says_how_to_set_another() -> None:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", 8000)) == 0:
            pytest.skip("something listens on port 8000 here")
    one_line_error(pldp_cmd("campaign", "list"), "http://127.0.0.1:8000", "the default", "PLDP_SERVER", "--server")


def test_a_closed_standard_output_ends_the_command_quietly(server: Server, files: dict[str, Path]) -> None:
    """``pldp ... | head -1``: the reader is gone before pldp writes; no traceback, exit 141 (128 + SIGPIPE)."""
    env = {**os.environ, "PLDP_SERVER": server.url}
    commands = [
        ["campaign", "estimate", SPEC.id, "--token-file", str(files["analyst.token"])],
        ["spec", "new", "krr", "--labels", "a,b", "--eps", "1", "--question", "q"],
    ]
    for args in commands:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pldp.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # as head does after its line
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 141 and err == "", (proc.returncode, err)


def test_serve_on_a_garbage_store_is_one_line_and_announces_nothing(tmp_path: Path) -> None:
    """A directory or a missing directory as ``--db``: see ``test_every_other_bad_file_or_value_is_one_line``."""
    db = tmp_path / "g.db"
    db.write_bytes(b"this is not a database, but a newcomer's typo\n" * 100)
    out = pldp_cmd("serve", "--db", str(db), "--port", str(free_port()), timeout=60)
    one_line_error(out, str(db), "not a database")
    assert "collector on" not in out.stdout + out.stderr and "admin token" not in out.stdout


def test_serve_on_a_port_in_use_fails_before_announcing_or_creating_anything(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = pldp_cmd("serve", "--db", str(tmp_path / "new.db"), "--port", str(port), timeout=30)
    one_line_error(out, f"127.0.0.1:{port}", "in use", "another port")
    assert "collector on" not in out.stderr and out.stdout == ""
    assert not (tmp_path / "new.db").exists()


# ----------------------------------------------------------------------------- campaign submit


def test_submit_sends_each_format_in_batches_and_a_resend_counts_once(server: Server, files: dict[str, Path]) -> None:
    analyst = Collector(server.url, files["analyst.token"].read_text().strip())
    before = analyst.estimate(SPEC.id)["n"]
    env = {"PLDP_SERVER": server.url}  # no --server: PLDP_SERVER tells where
    for name in ("reports.json", "reports.jsonl", "reports.parquet"):
        # 3,000 reports in requests of 5,000: the collector takes at most 1,000 (413), so they split
        out = pldp_cmd("campaign", "submit", SPEC.id, str(files[name]), env=env)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip().endswith("3,000 accepted, 0 duplicates (held already)"), out.stdout
    again = pldp_cmd("campaign", "submit", SPEC.id, str(files["reports.parquet"]), "--batch", "700", env=env)
    assert again.returncode == 0 and "0 accepted, 3,000 duplicates" in again.stdout, again.stderr
    assert "submit" in again.stderr  # the progress bar
    assert analyst.estimate(SPEC.id)["n"] == before + 9000


def test_submit_refuses_reports_of_another_spec_before_sending(server: Server, files: dict[str, Path]) -> None:
    n = [c["n"] for c in server.admin().campaigns() if c["id"] == SPEC.id]
    out = pldp_cmd("campaign", "submit", SPEC.id, str(files["other.parquet"]), "--server", server.url)
    one_line_error(out, "other.parquet", OTHER.id, SPEC.id)
    assert [c["n"] for c in server.admin().campaigns() if c["id"] == SPEC.id] == n


def test_submit_retries_until_the_collector_is_back(tmp_path: Path) -> None:
    srv = Server(tmp_path / "r.db").start()
    try:
        srv.admin().create_campaign(SPEC)
        (tmp_path / "spec.json").write_text(SPEC.to_json())
        (tmp_path / "answers.csv").write_text("answer\n" + "flu\nnone\n" * 300)
        simulate = ["clients", "simulate", "spec.json", "--answers", "answers.csv", "--out", "r.jsonl"]
        assert main([str(tmp_path / a) if a.endswith((".json", ".csv", ".jsonl")) else a for a in simulate]) == 0
        srv.stop()
        cmd = [sys.executable, "-m", "pldp.cli", "campaign", "submit", SPEC.id, "r.jsonl", "--server", srv.url]
        sub = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert sub.stderr is not None
        first = sub.stderr.readline()  # the first failed attempt, and the wait before the next
        assert "Connection refused" in first and "sending again in 0.5 s" in first, first
        srv.start()
        out, err = sub.communicate(timeout=60)
        assert sub.returncode == 0, err
        assert out.strip().endswith("600 accepted, 0 duplicates (held already)"), out
        assert [c["n"] for c in srv.admin().campaigns()] == [600]
    finally:
        srv.stop()


def test_retrying_resends_after_a_503_or_no_answer_and_not_after_a_refusal() -> None:
    """:meth:`Collector.retrying`, the loop behind every resend of ``submit``."""
    collector = Collector("http://127.0.0.1:9")
    failures: list[Exception] = [
        UnreachableError(collector.url, "Connection refused"),
        RemoteError(503, "store_unavailable", "disk full; nothing was stored, send it again"),
    ]
    waits: list[float] = []

    def call() -> str:
        if failures:
            raise failures.pop(0)
        return "stored"

    assert collector.retrying(call, retries=2, backoff=0.01, on_retry=lambda e, w: waits.append(w)) == "stored"
    assert waits == [0.01, 0.02]
    failures[:] = [RemoteError(409, "closed", "the campaign is closed")] * 3
    with pytest.raises(RemoteError, match="409"):
        collector.retrying(call, retries=2, backoff=0.01)
    assert len(failures) == 2  # not retried


# ----------------------------------------------------------------------------- URLs and help


def test_create_prints_the_pages_urls_and_reads_pldp_server(server: Server, tmp_path: Path) -> None:
    spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="urls?", labels=["a", "b", "c"])
    (tmp_path / "spec.json").write_text(spec.to_json())
    env = {"PLDP_SERVER": server.url}
    admin = str(server.token_file)
    made = pldp_cmd("campaign", "create", "spec.json", "--token-file", admin, cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0] == f"campaign: {spec.id}"  # standard output stays the answer alone
    survey, dashboard = f"{server.url}/c/{spec.id}", f"{server.url}/dashboard/{spec.id}"
    assert survey in made.stderr and dashboard in made.stderr
    for url in (survey, dashboard):
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and "text/html" in page.headers["content-type"]
    quiet = pldp_cmd("campaign", "create", "spec.json", "-q", "--token-file", admin, cwd=tmp_path, env=env)
    assert quiet.returncode == 0 and quiet.stdout == f"{spec.id}\n", quiet.stderr


def test_help_shows_serve_defaults_and_pldp_server() -> None:
    serve = pldp_cmd("serve", "--help")
    assert serve.returncode == 0
    text = " ".join(serve.stdout.split())
    assert "--host HOST the address to listen on (default 127.0.0.1" in text, text
    assert "--port PORT the TCP port to listen on (default 8000)" in text, text
    assert "--ssl-certfile" in text and "--ssl-keyfile" in text
    campaign = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "campaign")[1]
    commands = campaign._subparsers._group_actions[0].choices
    assert set(commands) == {
        "create",
        "list",
        "submit",
        "estimate",
        "export",
        "close",
        "token",
        "invite",
        "codes",
        "revoke-codes",
        "round",
        "series",
    }
    for name, command in commands.items():
        assert "$PLDP_SERVER" in command.format_help(), name


# ----------------------------------------------------------------------------- labels


def test_spec_new_strips_labels_and_refuses_empty_or_repeated_ones(capsys: pytest.CaptureFixture[str]) -> None:
    made = pldp_cmd("spec", "new", "krr", "--labels", " flu, covid ,none", "--eps", "1", "--question", "q")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["labels"] == ["flu", "covid", "none"]
    one_line_error(pldp_cmd("spec", "new", "krr", "--labels", "a,,b", "--eps", "1", "--question", "q"), "empty", "2")
    krr = ["spec", "new", "krr", "--eps", "1", "--question", "q"]
    main_error(capsys, [*krr, "--labels", "flu, covid,flu "], "'flu'", "twice")
    main_error(capsys, [*krr, "--labels", "flu,"], "empty")
    mpldp = ["spec", "new", "mpldp", "--k", "2,2", "--eps-list", "1,2", "--question", "x;y"]
    main_error(capsys, [*mpldp, "--labels", "a,b;c, c"], "attribute 2", "'c'", "twice")
    main_error(capsys, [*mpldp, "--labels", "a, ;c,d"], "attribute 1", "empty")


# ----------------------------------------------------------------------------- HTTPS


#: The self-signed certificate's name (127.0.0.1) and files.
TLS_FILES = ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "key.pem", "-out", "cert.pem"]


def test_serve_speaks_https_with_a_certificate(tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is not installed")
    made = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", *TLS_FILES],
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "pldp.cli", "serve", "--db", "t.db", "--port", str(port)]
    cmd += ["--admin-token-file", "admin.token", "--ssl-certfile", "cert.pem", "--ssl-keyfile", "key.pem"]
    log = open(tmp_path / "serve.log", "wb")  # the child writes it until stopped
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=log, stderr=log, start_new_session=True)
    try:
        list_cmd = ["campaign", "list", "--server", url, "--token-file", "admin.token", "--wait", "60"]
        trusted = {"SSL_CERT_FILE": str(tmp_path / "cert.pem")}  # how Python's TLS trusts a private CA
        listed = pldp_cmd(*list_cmd, cwd=tmp_path, env=trusted)
        assert listed.returncode == 0 and listed.stdout == "", listed.stderr  # no campaign yet, no error
        assert f"pldp collector on {url} " in (tmp_path / "serve.log").read_text()
        plain = pldp_cmd(*list_cmd[:-2], cwd=tmp_path)
        one_line_error(plain, url, "TLS certificate is not trusted", "SSL_CERT_FILE")
        import ssl

        context = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        with urllib.request.urlopen(f"{url}/v1/health", context=context, timeout=30) as health:
            assert health.status == 200
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)
        log.close()


def test_a_wait_follows_a_collector_started_a_moment_ago_and_its_new_admin_token(tmp_path: Path) -> None:
    """The README's start: ``pldp serve --admin-token-file admin.token &`` makes the file, and the
    next command, with ``--wait``, waits for the collector and then reads it."""
    srv = Server(tmp_path / "w.db")
    srv.token_file.unlink()  # the harness made one; here pldp serve makes it
    cmd = [sys.executable, "-m", "pldp.cli", "campaign", "list", "--server", srv.url, "--wait", "60"]
    waiting = subprocess.Popen(
        [*cmd, "--token-file", str(srv.token_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(0.5)
    srv.start()
    try:
        out, err = waiting.communicate(timeout=60)
        assert waiting.returncode == 0 and out == "", err
        assert srv.token_file.stat().st_mode & 0o777 == 0o600
        assert f"a new admin token is in {srv.token_file}" in srv.log()
    finally:
        srv.stop()

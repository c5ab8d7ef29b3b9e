"""The guard in front of deployments the harness did not start, and credentials kept out of every output.

Nothing here sends traffic off the loopback interface: the remote host is a name under ``.invalid``, and name
resolution and connecting are replaced by recorders for the tests that reach that far.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.app import cli
from harness.targets.safety import DestructiveTargetRefused, check_destructive, is_loopback_host, remote_hosts
from tests.helpers import FAILING, LEGACY_HEADER, PASSING

PASSWORD = "Pa55wordSecret"
REMOTE = f"mongodb://certuser:{PASSWORD}@db.example.invalid/?serverSelectionTimeoutMS=300&connectTimeoutMS=300"


class NetworkRecorder:
    """Stands in for name resolution and connecting: records every attempt and lets none through."""

    def __init__(self) -> None:
        self.resolved: list[str] = []
        self.connected: list[object] = []

    def getaddrinfo(self, host, *args, **kwargs):
        self.resolved.append(str(host))
        raise socket.gaierror(socket.EAI_NONAME, "resolution refused by the test")

    def create_connection(self, address, *args, **kwargs):
        self.connected.append(address)
        raise OSError("connecting refused by the test")

    def connect(self, sock, address):
        self.connected.append(address)
        raise OSError("connecting refused by the test")


@pytest.fixture
def network(monkeypatch) -> NetworkRecorder:
    recorder = NetworkRecorder()
    monkeypatch.setattr(socket, "getaddrinfo", recorder.getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", recorder.create_connection)
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: recorder.connect(sock, address))
    return recorder


def _spec(tmp_path: Path, body: str = PASSING) -> Path:
    path = tmp_path / "safety.yml"
    path.write_text(LEGACY_HEADER + body)
    return path


# -- which hosts are local -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["localhost:27017", "LOCALHOST:1", "127.0.0.1:5000", "127.8.9.10:1", "[::1]:27017", "%2Ftmp%2Fm.sock"]
)
def test_loopback_hosts_are_local(host):
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    "host", ["db.example.invalid:27017", "10.0.0.1:27017", "[2001:db8::1]:27017", "localhost.example.invalid:1"]
)
def test_other_hosts_are_remote_without_resolving_them(host, network):
    assert not is_loopback_host(host)
    assert network.resolved == []


def test_one_remote_member_makes_the_deployment_remote_and_an_srv_record_is_always_remote():
    assert remote_hosts("mongodb://127.0.0.1:1,db.example.invalid:2/") == ["db.example.invalid:2"]
    assert remote_hosts("mongodb+srv://cluster.example.invalid/") == ["cluster.example.invalid"]
    assert remote_hosts("mongodb://localhost,127.0.0.1:2/?replicaSet=rs") == []


def test_the_refusal_says_why_and_what_to_do_and_hides_the_password():
    with pytest.raises(DestructiveTargetRefused) as refused:
        check_destructive(REMOTE, allowed=False)
    words = str(refused.value)
    assert "db.example.invalid" in words and "--allow-destructive" in words and "loopback" in words
    assert PASSWORD not in words and "certuser:***@" in words
    check_destructive(REMOTE, allowed=True)  # the flag lets it through


# -- the guard in a run --------------------------------------------------------------------------------------


def test_a_remote_target_is_refused_before_any_connection(tmp_path, network, capsys):
    status = cli.main(["run", "--specs", str(_spec(tmp_path)), "--target", f"uri={REMOTE}", "-q"])
    err = capsys.readouterr().err
    assert status == 2
    assert network.resolved == [] and network.connected == []
    refusal = [line for line in err.splitlines() if "refusing" in line]
    assert len(refusal) == 1 and "--allow-destructive" in refusal[0] and "db.example.invalid" in refusal[0]
    assert PASSWORD not in err and "Traceback" not in err


def test_with_allow_destructive_the_run_connects_and_fails_cleanly(tmp_path, network, capsys):
    results = tmp_path / "out.jsonl"
    status = cli.main(
        [
            "run",
            "--specs",
            str(_spec(tmp_path)),
            "--target",
            f"uri={REMOTE}",
            "--allow-destructive",
            "--results",
            str(results),
            "-q",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 2
    assert "db.example.invalid" in network.resolved  # it went on to connect: resolving the name came first
    assert all(address[0] in ("127.0.0.1", "::1") for address in network.connected if isinstance(address, tuple))
    assert "--allow-destructive" not in err  # not the guard's refusal: the connection's own failure
    assert "certuser:***@db.example.invalid" in err and "Traceback" not in err
    assert PASSWORD not in out + err
    assert not results.exists() or PASSWORD not in results.read_text()


def test_the_pytest_front_end_declares_allow_destructive():
    from harness.app.options import RUN_OPTIONS, run_options

    [row] = [option for option in RUN_OPTIONS if option.dest == "allow_destructive"]
    assert row.pytest == "--allow-destructive" and row.default is False
    values = {option.dest: option.default for option in RUN_OPTIONS}  # as pytest's: the attempt options undeclared
    assert "allow_destructive" not in run_options(lambda option: values.get(option.dest, option.default)).provenance
    values["allow_destructive"] = True
    assert run_options(lambda option: values.get(option.dest, option.default)).provenance == {"allow_destructive": True}


def test_a_loopback_target_the_harness_did_not_start_needs_no_flag(tmp_path):
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    try:
        results = tmp_path / "out.jsonl"
        status = cli.main(
            ["run", "--specs", str(_spec(tmp_path)), "--target", f"uri={server.uri}", "--results", str(results), "-q"]
        )
    finally:
        server.stop()
    assert status == 0
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["target"]["details"]["allow_destructive"] is False


def test_a_run_touches_only_the_databases_and_collections_its_tests_name(tmp_path):
    """The runners drop what a test names (``database_name``, ``database2_name``, ``initialData``), nothing else."""
    from secantus import SecantusDBServer

    from harness.shared.target_base import MongoClient

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    try:
        with MongoClient(server.uri) as client:
            client["bystander"]["kept"].insert_one({"_id": 1})
            client["harness-selftest"]["coll"].insert_one({"_id": "stale"})
            status = cli.main(["run", "--specs", str(_spec(tmp_path)), "--target", f"uri={server.uri}", "-q"])
            bystander = list(client["bystander"]["kept"].find())
            stale = client["harness-selftest"]["coll"].find_one({"_id": "stale"})
    finally:
        server.stop()
    assert status == 0
    assert bystander == [{"_id": 1}]
    assert stale is None  # the test's own database was reset, as its file says


# -- credentials never leak ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "$ harness run --target uri=mongodb://u:p@ss@h:1,h2/db?x=1 -q",
            "$ harness run --target uri=mongodb://u:***@h:1,h2/db?x=1 -q",
        ),
        (
            "seen mongodb+srv://a:b@c.example.invalid/ twice: mongodb://a:b@h/",
            "seen mongodb+srv://a:***@c.example.invalid/ twice: mongodb://a:***@h/",
        ),
        (
            "mongodb://user-only@h/ and mongodb://h:1/ stay as they are",
            "mongodb://user-only@h/ and mongodb://h:1/ stay as they are",
        ),
    ],
)
def test_every_connection_string_in_free_text_has_its_password_hidden(text, shown):
    from harness.shared.connection_strings import redact_text

    assert redact_text(text) == shown


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_credentials_never_reach_stderr_when_the_target_is_down(tmp_path):
    closed = f"mongodb://certuser:{PASSWORD}@127.0.0.1:{_free_port()}/?serverSelectionTimeoutMS=300"
    results = tmp_path / "out.jsonl"
    done = _harness(
        "run", "--specs", str(_spec(tmp_path, FAILING)), "--target", f"uri={closed}", "--results", str(results),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Connection refused" in done.stderr and "certuser:***@127.0.0.1" in done.stderr
    outputs = [done.stdout, done.stderr, results.read_text() if results.exists() else ""]
    assert all(PASSWORD not in text for text in outputs)


def test_credentials_never_reach_results_notes_or_stdout_of_a_failing_run(tmp_path):
    from harness.targets.embedded import EmbeddedSecantus

    server = EmbeddedSecantus()
    server.start()
    try:
        server.admin.admin.command("createUser", "certuser", pwd=PASSWORD, roles=["root"])
        uri = f"mongodb://certuser:{PASSWORD}@127.0.0.1:{server.server.port}/"
        results = tmp_path / "out.jsonl"
        done = _harness(
            "run", "--specs", str(_spec(tmp_path, FAILING)), "--target", f"uri={uri}", "--results", str(results),
            "--label", f"where={uri}", cwd=tmp_path,
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 1, done.stdout + done.stderr
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["outcome"] == "failed" and record["target"]["uri"].startswith("mongodb://certuser:***@127.0.0.1:")
    everything = done.stdout + done.stderr + results.read_text()
    assert PASSWORD not in everything, [line for line in everything.splitlines() if PASSWORD in line]


def test_executor_check_refuses_a_remote_uri_before_starting_anything(capsys):
    """``harness executor-check --uri`` writes to the deployment too: the same guard, before any process or socket."""
    from harness.app.cli import main

    status = main(["executor-check", "no-such-executor-command", "--uri", "mongodb://u:secret@db.example.invalid/"])
    out = capsys.readouterr().out
    assert status == 2 and "--allow-destructive" in out and "db.example.invalid" in out
    assert "secret" not in out

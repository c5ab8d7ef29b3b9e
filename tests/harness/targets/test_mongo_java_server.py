"""mongo-java-server as a target: its argument, its process, detection that needs no more than it offers, the
replica set PRESENTED in front of it, spec tests getting verdicts, and the deviations reproduced without the harness.

The tests that start the server need java and mvn (the jars come from Maven Central once, then the cache); they
are skipped only when those are absent. The argument, detection and presentation tests need neither.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from harness.app import cli
from harness.core.ports import TargetUnavailable
from harness.shared.target_base import describe
from harness.shared.wire.presented_topology import PRESENTED_SET_NAME, presented_hello
from harness.targets import mongo_java_server
from harness.targets.mongo_java_server import MongoJavaServer, Options, parse_argument
from tests.paths import REPO, SHARED_SPECS

needs_java = pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None or shutil.which("mvn") is None,
    reason="mongo-java-server needs java, javac and mvn",
)
REPRO = REPO / "tests" / "repro" / "mongo_java_server" / "mongo_java_server_deviations.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not running; Popen.wait reaped ours, so any entry left is a live process
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


# -- the argument ---------------------------------------------------------------------------------


def test_the_argument_names_release_reported_version_and_presentation_in_any_order():
    assert parse_argument(None) == Options()
    assert parse_argument("1.46.0") == Options(release="1.46.0")
    assert parse_argument("1.47.0,server=4.4,present=replicaset") == Options("1.47.0", "4.4", "replicaset")
    assert parse_argument("present=replicaset,server=library") == Options(server="library", present="replicaset")


@pytest.mark.parametrize(
    ("argument", "words"),
    [
        ("server=9.9", "server=9.9 is not one of"),
        ("present=sharded", "present=sharded is not one of"),
        ("1.47.0,1.46.0", "needs a name"),
        ("server=6.0,server=7.0", "repeated option 'server'"),
        ("colour=blue", "unknown or repeated option 'colour'"),
    ],
)
def test_a_bad_argument_is_refused_before_anything_starts(argument, words):
    with pytest.raises(TargetUnavailable, match=words):
        parse_argument(argument)


def test_the_reported_wire_version_is_the_librarys_for_its_versions_and_the_releases_otherwise():
    assert Options(server="5.0").wire_version is None and Options(server="5.0").reported_wire_version == 8
    assert Options(server="6.0").wire_version == 17 and Options(server="6.0").reported_wire_version == 17
    assert Options(server="library").reported_wire_version is None


# -- detection needs no more than the target offers ----------------------------------------------


class _OnlyIsMaster:
    """The harness's admin client as a server that knows isMaster and buildInfo but not hello sees it."""

    class options:  # the attribute pymongo's MongoClient has
        load_balanced = False

    def __init__(self, refuse: tuple[str, ...] = ("hello",)) -> None:
        self.sent: list[str] = []
        self.refuse = refuse
        self.admin = self

    def command(self, name: str) -> dict[str, Any]:
        self.sent.append(name)
        if name in self.refuse:
            words = f"no such command: '{name}'"
            raise OperationFailure(words, 59, {"ok": 0, "errmsg": words, "code": 59, "codeName": "CommandNotFound"})
        if name == "buildInfo":
            return {"version": "6.0.0", "ok": 1}
        return {"ismaster": True, "maxWireVersion": 17, "ok": 1}


def test_a_server_that_refuses_hello_is_detected_with_ismaster_and_the_refusal_is_a_finding():
    admin = _OnlyIsMaster()
    info = describe(admin, "uri", "only-ismaster", "mongodb://user:secret@127.0.0.1:1/")  # type: ignore[arg-type]
    assert admin.sent == ["hello", "isMaster", "buildInfo"]
    assert (info.version, info.topology, info.max_wire_version) == ("6.0.0", "single", 17)
    assert info.details["detection_findings"] == [
        (
            "the target refuses 'hello' (code 59 CommandNotFound: no such command: 'hello'); "
            "detection used 'isMaster' instead"
        )
    ]
    assert "secret" not in json.dumps(info.as_record())


def test_a_server_that_answers_no_handshake_stops_the_run_naming_both_refusals():
    with pytest.raises(TargetUnavailable, match="answers none of \\['hello', 'isMaster'\\]") as raised:
        describe(_OnlyIsMaster(("hello", "isMaster")), "uri", "mute", "mongodb://127.0.0.1:1/")  # type: ignore[arg-type]
    assert "'hello'" in str(raised.value) and "'isMaster'" in str(raised.value)


def test_a_refused_build_info_leaves_the_version_unknown_with_a_finding():
    info = describe(_OnlyIsMaster(("buildInfo",)), "uri", "x", "mongodb://127.0.0.1:1/")  # type: ignore[arg-type]
    assert info.version == "unknown"
    assert info.details["detection_findings"][0].startswith("the target refuses 'buildInfo'")


# -- the presentation (no server needed) -------------------------------------------------------------


def test_a_presented_hello_names_one_primary_member_and_keeps_the_servers_capabilities():
    server = {"ismaster": True, "maxWireVersion": 17, "minWireVersion": 0, "compression": ["zlib"], "ok": 1}
    shown = presented_hello(server, me="127.0.0.1:5")
    assert shown["setName"] == PRESENTED_SET_NAME and shown["hosts"] == ["127.0.0.1:5"]
    assert (shown["primary"], shown["me"], shown["ismaster"], shown["secondary"]) == (
        "127.0.0.1:5",
        "127.0.0.1:5",
        True,
        False,
    )
    assert "isWritablePrimary" not in shown  # a legacy isMaster reply keeps its own key
    assert "compression" not in shown and "logicalSessionTimeoutMinutes" not in shown
    assert presented_hello({"isWritablePrimary": True, "ok": 1}, me="h:1")["isWritablePrimary"] is True
    refused = {"ok": 0, "code": 59, "errmsg": "no such command: 'hello'"}
    assert presented_hello(refused, me="h:1") == refused  # the server's error, not a member's hello


# -- the process ---------------------------------------------------------------------------------------


@needs_java
def test_the_launcher_starts_reports_its_provenance_and_stops_leaving_no_process():
    target = MongoJavaServer(parse_argument("server=6.0"))
    info = target.start()
    pid = info.details["pid"]
    try:
        assert _alive(pid)
        assert (info.name, info.kind, info.version, info.topology, info.max_wire_version) == (
            "mongo-java-server",
            "mongo-java-server",
            "6.0.0",
            "single",
            17,
        )
        assert info.details["release"] == mongo_java_server.DEFAULT_RELEASE
        assert info.details["server_version_option"] == "6.0" and info.details["topology_native"] == "single"
        jars = info.details["jars_sha256"]
        for name, digest in mongo_java_server.PINNED_SHA256.items():
            assert jars[name] == digest
        assert "the target refuses 'hello'" in info.details["detection_findings"][0]
        with MongoClient(target.uri, directConnection=True, serverSelectionTimeoutMS=5000) as client:
            client.t.c.insert_one({"_id": 1})
            assert client.t.c.find_one() == {"_id": 1}
    finally:
        target.stop()
    assert not _alive(pid)


@needs_java
def test_a_launcher_that_never_says_ready_is_killed_with_its_process_group(monkeypatch):
    monkeypatch.setattr(mongo_java_server, "READY_PREFIX", "a line the launcher never prints")
    monkeypatch.setattr(mongo_java_server, "START_TIMEOUT_S", 5.0)
    started: list[subprocess.Popen[str]] = []
    real_popen = subprocess.Popen

    def recording_popen(*args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        process = real_popen(*args, **kwargs)
        started.append(process)
        return process

    from harness.engine import child_processes

    child_processes.ensure_lifeline()  # started first when a worker runs this test first: not the launcher's process
    monkeypatch.setattr(mongo_java_server.subprocess, "Popen", recording_popen)
    target = MongoJavaServer()
    with pytest.raises(TargetUnavailable, match="not ready within 5s"):
        target.start()
    assert len(started) == 1 and started[0].returncode == -signal.SIGKILL
    assert not _alive(started[0].pid) and target.process is None


@needs_java
def test_the_launcher_exits_by_itself_when_the_harness_end_of_its_stdin_closes():
    """So a harness that dies, however it dies, leaves no server behind."""
    target = MongoJavaServer()
    target.start()
    process = target.process
    assert process is not None and process.stdin is not None
    process.stdin.close()
    assert process.wait(10) == 0  # a clean shutdown, not a kill
    target.stop()


# -- the presented replica set -----------------------------------------------------------------------


@needs_java
def test_present_replicaset_is_opt_in_recorded_as_presented_and_seen_as_a_set_by_a_driver():
    target = MongoJavaServer(parse_argument("present=replicaset"))
    info = target.start()
    try:
        assert info.name == "mongo-java-server-presented" and info.topology == "replicaset"
        assert info.details["topology_presented"] == "replicaset" and info.details["topology_native"] == "single"
        assert "presented" in info.details["topology_note"] and f"replicaSet={PRESENTED_SET_NAME}" in target.uri
        with MongoClient(target.uri, serverSelectionTimeoutMS=5000) as client:
            client.admin.command("ping")
            description = client.topology_description
            assert description.topology_type_name == "ReplicaSetWithPrimary"
            assert [s.server_type_name for s in description.server_descriptions().values()] == ["RSPrimary"]
        assert target.presentation.member.hello_replies > 0
    finally:
        target.stop()


@needs_java
@pytest.mark.parametrize(
    ("argument", "failpoints", "recorded"),
    [
        ("present=replicaset", "auto", "emulated-by-presenting-proxy"),
        ("present=replicaset", "native", "emulated-by-presenting-proxy"),
        ("present=replicaset", "emulated", "emulated"),
        ("", "auto", "emulated"),  # natively: the server refuses the probe, so the run's own proxy emulates them
    ],
)
def test_the_record_says_how_fail_points_were_applied(argument, failpoints, recorded):
    """Never ``native`` here: mongo-java-server has no configureFailPoint; the presenting proxy answers it."""
    from harness.engine.run import HarnessRun, RunOptions

    target = f"mongo-java-server={argument}" if argument else "mongo-java-server"
    with HarnessRun(RunOptions(target=target, expected="none", failpoints=failpoints)) as run:
        assert run.provenance is not None and run.provenance.as_fields()["failpoints"] == recorded
        if argument:
            assert run.target.server_address() == ("127.0.0.1", run.target.port)  # past the presentation
            assert "configureFailPoint" in run.target.info.details["failpoints_answered_by"]


@needs_java
def test_spec_tests_get_verdicts_through_the_presented_set_with_the_real_cause_in_the_message(tmp_path):
    results = tmp_path / "results.jsonl"
    spec = SHARED_SPECS / "upstream" / "unified" / "change-streams-errors.json"
    if not spec.exists():
        spec = SHARED_SPECS / "upstream" / "unified" / "change-streams-errors.yml"
    code = cli.main(
        ["run", "--specs", str(spec.parent), "-k", "change-streams-errors::", "--target",
         "mongo-java-server=present=replicaset", "--expected", "auto", "--results", str(results), "-q"]
    )  # fmt: skip
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert code == 0 and records
    assert {r["target"]["details"]["topology_presented"] for r in records} == {"replicaset"}
    assert {r["failpoints"] for r in records} == {"emulated-by-presenting-proxy"}
    outcomes = {r["test"]: r for r in records}
    assert outcomes["Change Stream should error when an invalid aggregation stage is passed in"]["outcome"] == "passed"
    failed = [r for r in records if r["outcome"] == "failed"]
    assert failed and all("operationTime" in r["message"] for r in failed)
    assert all(r["expectation"]["kind"].startswith("known") for r in failed)


# -- the deviations, without the harness ------------------------------------------------------------------


@needs_java
def test_every_listed_deviation_reproduces_with_raw_commands():
    done = subprocess.run([sys.executable, str(REPRO)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(_repro_module().CHECKS) and all(line.startswith("REPRODUCED ") for line in lines)
    listed = (REPO / "specs" / "expectations" / "mongo-java-server-presented.yml").read_text()
    listed += (REPO / "specs" / "expectations" / "mongo-java-server.yml").read_text()
    named = {name for name in _repro_module().CHECKS if f"(repro: {name})" in listed}
    assert named <= set(_repro_module().CHECKS) and len(named) >= 8


def _repro_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mongo_java_server_deviations", REPRO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_reported_version_the_harness_client_refuses_stops_the_start_naming_the_versions_that_work():
    with pytest.raises(
        TargetUnavailable, match=r"server=library reports wire version 8.*\['4.4', '6.0', '7.0', '8.0'\]"
    ):
        MongoJavaServer(parse_argument("server=library"))._check_wire_version()
    MongoJavaServer(parse_argument("server=4.4"))._check_wire_version()  # wire 9: pymongo 4.20's floor

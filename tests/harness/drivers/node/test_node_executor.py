"""The Node.js executor (``--driver node``, harness/drivers/node/): executor-check passes it, spec tests run
through it with the driver named in every record, it loads the driver release it is pointed at, hands
createCollection's options over with their BSON types, swallows what ``close`` raises, and refuses every argument
it cannot hand to the driver."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bson import Int64

from harness.drivers.executor.checks.runner import run_checks
from harness.drivers.executor.process import ExecutorProcess
from tests.conftest import LEGACY_DIR, UNIFIED_DIR, require_shared_specs
from tests.paths import REPO

NODE_DIR = REPO / "harness" / "drivers" / "node"
DRIVER_DIR = NODE_DIR / "node_modules" / "mongodb"
EXECUTOR = ["node", str(NODE_DIR / "executor.js")]


def require_installed(missing: str | None) -> None:
    """Skip, saying what is missing, on a developer's machine; fail on CI (``CI`` set), where .ci/run installs
    Node and the executor's packages, so a missing one is a broken set-up, never a reason to test nothing."""
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{missing}, but CI is set and .ci/run installs it", pytrace=False)
    pytest.skip(missing)


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not DRIVER_DIR.is_dir():
        return "the Node executor's packages are not installed (npm ci --prefix harness/drivers/node)"
    return None


@pytest.fixture(autouse=True)
def _node_installed() -> None:
    require_installed(_node_missing())


def _pinned_version() -> str:
    return str(json.loads((DRIVER_DIR / "package.json").read_text())["version"])


def _hello(process: ExecutorProcess) -> dict:
    reply = process.request("hello", {"protocolVersion": 1}, 30.0)
    assert reply["ok"], reply
    return reply["result"]


def test_executor_check_passes_the_node_executor(embedded_run, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_checks(EXECUTOR, embedded_run.target.uri) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out and "SKIP" not in out, out


def test_spec_tests_run_through_the_node_driver(tmp_path: Path) -> None:
    require_shared_specs()
    results = tmp_path / "node.jsonl"
    specs = [
        LEGACY_DIR / "change-streams-errors.yml",
        UNIFIED_DIR / "change-streams-clusterTime.yml",
        UNIFIED_DIR / "change-streams-errors.yml",
        REPO / "specs" / "scenarios" / "supplementary" / "timeouts.yml",
    ]
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "node", "--results", str(results)]
    for spec in specs:
        command += ["--specs", str(spec)]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    named = {(r["driver"]["name"], r["driver"]["language"], r["driver"]["version"]) for r in records}
    assert named == {("node", "javascript", _pinned_version())}
    outcomes = {r["test_id"]: r["outcome"] for r in records}
    assert list(outcomes.values()).count("error") == 0, outcomes
    assert outcomes["unified/change-streams-clusterTime::clusterTime is present"] == "passed"
    errors_files = ("legacy/", "unified/change-streams-errors")
    passed = [t for t, o in outcomes.items() if o == "passed" and t.startswith(errors_files)]
    assert len(passed) >= 4, outcomes
    # The Node driver's real deviation (specs/expectations/drivers/node.yml): timeoutMS is a no-op on watch().
    timeouts = [o for t, o in outcomes.items() if t.startswith("unified/timeouts::")]
    assert timeouts and set(timeouts) == {"failed"}, outcomes


def test_node_at_a_release_spec_installs_it_once_and_runs_it(tmp_path: Path) -> None:
    """``--driver node@6.x``: npm's 6.x release, installed into the harness's cache folder, named in the records."""
    npm_missing = "npm is not installed (node@SPEC installs the release with it)"
    require_installed(None if shutil.which("npm") else npm_missing)
    require_shared_specs()
    results = tmp_path / "node6.jsonl"
    command = [sys.executable, "-m", "harness.app.cli", "run", "--driver", "node@6.x", "--results", str(results)]
    command += ["--specs", str(UNIFIED_DIR / "change-streams-clusterTime.yml")]
    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert records and {r["outcome"] for r in records} == {"passed"}, records
    drivers = {(r["driver"]["name"], r["driver"]["version"].split(".")[0]) for r in records}
    assert drivers == {("node", "6")}, drivers
    assert "--driver-module" in records[0]["driver"]["executor"] and "node-drivers" in records[0]["driver"]["executor"]
    module = Path(records[0]["driver"]["executor"].split("--driver-module ", 1)[1])
    assert module.is_dir() and json.loads((module / "package.json").read_text())["version"].startswith("6.")


def test_node_at_a_path_loads_that_driver_folder() -> None:
    """``--driver node=PATH``: the Node driver in a ``node_modules/mongodb`` folder of one's own."""
    from harness.app import compose

    adapter = compose.plugins().make_driver(f"node={DRIVER_DIR}")
    try:
        assert (adapter.name, adapter.version) == ("node", _pinned_version())
        assert adapter.executor is not None and adapter.executor.endswith(f"--driver-module {DRIVER_DIR}")
    finally:
        adapter.close()


def test_the_executor_loads_the_driver_release_it_is_pointed_at(tmp_path: Path) -> None:
    other = tmp_path / "mongodb"
    other.mkdir()
    (other / "package.json").write_text(json.dumps({"name": "mongodb", "version": "0.0.0-matrix", "main": "index.js"}))
    (other / "index.js").write_text(f"module.exports = require({json.dumps(str(DRIVER_DIR))});\n")
    by_argument = ExecutorProcess([*EXECUTOR, "--driver-module", str(other)])
    by_environment = ExecutorProcess(EXECUTOR, env={"HARNESS_NODE_DRIVER_MODULE": str(other)})
    pinned = ExecutorProcess(EXECUTOR)
    try:
        assert _hello(by_argument)["driver"]["version"] == "0.0.0-matrix"
        assert _hello(by_environment)["driver"]["version"] == "0.0.0-matrix"
        assert _hello(pinned)["driver"] == {"name": "node", "version": _pinned_version(), "language": "javascript"}
    finally:
        for process in (by_argument, by_environment, pinned):
            assert process.finish() == 0


def test_an_operation_the_executor_lacks_is_not_implemented() -> None:
    process = ExecutorProcess(EXECUTOR)
    try:
        assert "listSearchIndexes" not in _hello(process)["operations"]
        scope = {"scope": "s1"}
        open_params = {**scope, "uri": "mongodb://127.0.0.1:1/", "iterationTimeoutMS": 1000}
        opened = process.request("openScope", open_params, 10)
        assert opened["ok"], opened
        reply = process.request(
            "run", {**scope, "operation": {"name": "listSearchIndexes", "object": "collection0", "arguments": {}}}, 10
        )
        assert reply["error"]["kind"] == "notImplemented" and "listSearchIndexes" in reply["error"]["message"]
    finally:
        assert process.finish() == 0


class _Scope:
    """One scope of a Node executor on the embedded server: a client observing its commands, a database, a
    collection, a session and a change stream (``stream``)."""

    def __init__(self, process: ExecutorProcess, uri: str, name: str) -> None:
        self.process, self.params = process, {"scope": name}
        self.call("openScope", uri=uri, iterationTimeoutMS=1000, heartbeatFrequencyMS=None)
        for entity in (
            {"client": {"id": "client0", "observeEvents": ["commandStartedEvent"]}},
            {"database": {"id": "db0", "client": "client0", "databaseName": "node_executor"}},
            {"collection": {"id": "coll0", "database": "db0", "collectionName": name}},
            {"session": {"id": "session0", "client": "client0"}},
        ):
            self.call("createEntity", entity=entity)
        for ready in (
            self.run("deleteMany", "coll0", filter={}),
            self.run("createChangeStream", "coll0", saveResultAsEntity="stream", pipeline=[]),
        ):
            assert ready["ok"], ready

    def request(self, method: str, **params: object) -> dict:
        return self.process.request(method, {**self.params, **params}, 30.0)

    def call(self, method: str, **params: object) -> dict:
        reply = self.request(method, **params)
        assert reply["ok"], reply
        return reply

    def run(self, name: str, obj: str, saveResultAsEntity: str | None = None, **arguments: object) -> dict:
        operation: dict[str, object] = {"name": name, "object": obj, "arguments": arguments}
        if saveResultAsEntity is not None:
            operation["saveResultAsEntity"] = saveResultAsEntity
        return self.request("run", operation=operation)

    def commands(self) -> list[dict]:
        return self.call("events", client="client0", eventType="command")["result"]


@pytest.fixture
def node_process():
    process = ExecutorProcess(EXECUTOR)
    _hello(process)
    yield process
    assert process.finish() == 0


def test_create_collection_options_keep_their_bson_types(node_process: ExecutorProcess, embedded_run) -> None:
    """Node copies createCollection's options into the ``create`` command as they are, so the executor hands them
    over as decoded (section 2.1): a Double stays a Double and an Int64 an Int64, at the top and inside a validator,
    where converting options to JS numbers sent both as Int32."""
    scope = _Scope(node_process, embedded_run.target.uri, "typed_options")
    assert scope.run("dropCollection", "db0", collection="typed")["ok"]
    validator = {"n": {"$gte": 1.0}, "big": {"$lt": Int64(5)}}
    created = scope.run("createCollection", "db0", collection="typed", capped=True, size=4096.0, validator=validator)
    assert created["ok"], created
    [create] = [event["command"] for event in scope.commands() if event["commandName"] == "create"]
    sent = {"size": create["size"], "gte": create["validator"]["n"]["$gte"], "lt": create["validator"]["big"]["$lt"]}
    assert {key: type(value) for key, value in sent.items()} == {"size": float, "gte": float, "lt": Int64}, create
    assert sent == {"size": 4096.0, "gte": 1.0, "lt": 5}
    scope.call("closeScope")


def _driver_whose_close_raises(where: Path) -> Path:
    """A ``node_modules/mongodb`` folder loading the pinned driver with one change: a change stream's ``close`` does
    its real work (the killCursors is sent) and then raises, as a driver that passes a failed killCursors on does
    (Go's ``Close``). The pinned Node driver swallows that error itself, so only such a driver shows whether the
    executor swallows what ``close`` raises."""
    where.mkdir()
    manifest = {"name": "mongodb", "version": _pinned_version(), "main": "index.js"}
    (where / "package.json").write_text(json.dumps(manifest))
    (where / "index.js").write_text(
        f"const mongodb = require({json.dumps(str(DRIVER_DIR))});\n"
        "const close = mongodb.ChangeStream.prototype.close;\n"
        "mongodb.ChangeStream.prototype.close = async function () {\n"
        "  await close.call(this);\n"
        "  throw new mongodb.MongoServerError({ ok: 0, code: 2, errmsg: 'killCursors failed (raised by the test)' });\n"
        "};\n"
        "module.exports = mongodb;\n"
    )
    return where


def test_close_swallows_every_error_the_driver_raises(tmp_path: Path, embedded_run) -> None:
    """Section 6.4 (clarification 25): ``close`` answers null whatever the driver raises while closing, and logs it;
    the stream's killCursors was still sent."""
    process = ExecutorProcess([*EXECUTOR, "--driver-module", str(_driver_whose_close_raises(tmp_path / "mongodb"))])
    try:
        _hello(process)
        scope = _Scope(process, embedded_run.target.uri, "close_raises")
        closed = scope.run("close", "stream")
        assert closed == {"id": closed["id"], "ok": True, "result": None}, closed
        assert [event["commandName"] for event in scope.commands()][-1:] == ["killCursors"]
        assert "killCursors failed (raised by the test)" in process.stderr_tail()
        scope.call("closeScope")
    finally:
        assert process.finish() == 0


#: Arguments the Node driver's API has no place for on that operation (its options type in mongodb.d.ts does not
#: declare them, and the driver would drop them unread): (operation, object, arguments, the refused argument).
REFUSED = [
    ("iterateOnce", "stream", {"maxAwaitTimeMS": 100}, "maxAwaitTimeMS"),
    ("iterateUntilDocumentOrError", "stream", {"timeoutMS": 100}, "timeoutMS"),
    ("getResumeToken", "stream", {"comment": "c"}, "comment"),
    ("close", "stream", {"comment": "c"}, "comment"),
    ("insertOne", "coll0", {"document": {"_id": 1}, "hint": "_id_"}, "hint"),
    ("insertMany", "coll0", {"documents": [{"_id": 2}], "hint": "_id_"}, "hint"),
    ("deleteOne", "coll0", {"filter": {}, "bypassDocumentValidation": True}, "bypassDocumentValidation"),
    ("updateMany", "coll0", {"filter": {}, "update": {"$set": {"x": 1}}, "sort": {"_id": 1}}, "sort"),
    ("replaceOne", "coll0", {"filter": {}, "replacement": {"x": 1}, "arrayFilters": [{"a": 1}]}, "arrayFilters"),
    ("findOneAndDelete", "coll0", {"filter": {}, "returnDocument": "After"}, "returnDocument"),
    ("findOneAndReplace", "coll0", {"filter": {}, "replacement": {"x": 1}, "arrayFilters": [{"a": 1}]}, "arrayFilters"),
    ("runCommand", "db0", {"command": {"ping": 1}, "commandName": "ping", "comment": "c"}, "comment"),
    ("startTransaction", "session0", {"timeoutMS": 100}, "timeoutMS"),
    ("commitTransaction", "session0", {"comment": "c"}, "comment"),
    ("endSession", "session0", {"comment": "c"}, "comment"),
]


@pytest.mark.parametrize(("name", "obj", "arguments", "refused"), REFUSED, ids=[f"{r[0]}-{r[3]}" for r in REFUSED])
def test_an_argument_the_driver_would_drop_is_refused(
    name: str, obj: str, arguments: dict, refused: str, node_process: ExecutorProcess, embedded_run
) -> None:
    """Section 6.2: an argument the executor cannot pass to its driver is ``notImplemented``, naming it, and the
    operation is not run (no command is sent), where it used to run without it."""
    scope = _Scope(node_process, embedded_run.target.uri, "refused")
    sent = len(scope.commands())
    reply = scope.run(name, obj, **arguments)
    assert not reply["ok"] and reply["error"]["kind"] == "notImplemented", reply
    assert refused in reply["error"]["message"], reply
    assert [event["commandName"] for event in scope.commands()[sent:]] == []
    scope.call("closeScope")


#: Entity options Node's API has no place for: its Db has no maxCommitTimeMS, its TransactionOptions no timeoutMS.
REFUSED_ENTITY_OPTIONS = {
    "databaseOptions-maxCommitTimeMS": (
        {
            "database": {
                "id": "db1",
                "client": "client0",
                "databaseName": "d",
                "databaseOptions": {"maxCommitTimeMS": 1},
            }
        },
        "maxCommitTimeMS",
    ),
    "defaultTransactionOptions-timeoutMS": (
        {
            "session": {
                "id": "s1",
                "client": "client0",
                "sessionOptions": {"defaultTransactionOptions": {"timeoutMS": 1}},
            }
        },
        "timeoutMS",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED_ENTITY_OPTIONS))
def test_an_entity_option_the_driver_would_drop_is_refused(
    case: str, node_process: ExecutorProcess, embedded_run
) -> None:
    """Section 6.1: an entity option the executor cannot hand to the driver is refused, never dropped."""
    entity, refused = REFUSED_ENTITY_OPTIONS[case]
    scope = _Scope(node_process, embedded_run.target.uri, "refused_entity")
    reply = scope.request("createEntity", entity=entity)
    assert not reply["ok"] and reply["error"]["kind"] == "notImplemented", reply
    assert refused in reply["error"]["message"], reply
    scope.call("closeScope")

"""The upstream unified tests that check a rule (``specs/coverage/test-rules.yml``) fail for a pymongo that breaks it.

Some rules are checked only by the spec's own tests (an unknown ``operationType``, extra ``ns`` fields, the
pipeline's first stage, the client helper's database, a second resume, a single server). A check that no
broken driver fails proves nothing, so each breakage here patches pymongo in this process, runs every test
that checks the breakage's rules (the upstream tests the mapping names, and the supplementary scenarios that
name them), and asserts that at least one fails and none errors, while the unbroken driver passes them.

pymongo has two APIs (``MongoClient`` and ``AsyncMongoClient``), and the harness certifies both (``--driver
pymongo`` and ``--driver pymongo-async``). A breakage marked ``async`` patches only
``pymongo.asynchronous.change_stream``: the run through the asynchronous API must catch it, and the run
through the synchronous API must still pass the same tests, which shows the patch touched one path only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from pymongo.asynchronous import change_stream as async_change_stream
from pymongo.errors import InvalidOperation
from pymongo.synchronous import change_stream as sync_change_stream

from harness.engine.run import HarnessRun, RunOptions
from harness.engine.run_settings import RunSettings
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_mapping
from tests.paths import SHARED_SPECS
from tests.specs.scenarios.test_supplementary import all_scenarios, rule_ids

UPSTREAM = SHARED_SPECS / "upstream" / "unified"
#: The event types the spec's Response Format lists today; a driver accepting only these breaks forward compatibility.
KNOWN_OPERATION_TYPES = {
    "insert",
    "update",
    "replace",
    "delete",
    "invalidate",
    "drop",
    "dropDatabase",
    "rename",
    "createIndexes",
    "dropIndexes",
    "modify",
    "create",
    "shardCollection",
    "reshardCollection",
    "refineCollectionShardKey",
}
#: The stages the spec lists as those change streams support today.
LISTED_STAGES = {"$match", "$project", "$addFields", "$replaceRoot", "$redact"}
#: The fields a typed change event would require (what a too-strict ChangeStreamDocument parser insists on).
TYPED_EVENT_FIELDS = {"_id", "operationType"}

Patch = Callable[[pytest.MonkeyPatch, Any], None]


class Api:
    """One of pymongo's two APIs: the change-stream classes a breakage patches."""

    def __init__(self, name: str, module: Any, prefix: str) -> None:
        self.name = name
        self.stream = getattr(module, f"{prefix}ChangeStream")
        self.cluster_stream = getattr(module, f"{prefix}ClusterChangeStream")
        self.collection_stream = getattr(module, f"{prefix}CollectionChangeStream")


SYNC = Api("sync", sync_change_stream, "")
ASYNC = Api("async", async_change_stream, "Async")


def wrap_result(owner: type, method: str, after: Callable[[Any, Any], Any]) -> Callable[[pytest.MonkeyPatch], None]:
    """Patch ``owner.method`` so its result goes through ``after(self, result)``, for a plain or a coroutine method."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = getattr(owner, method)
        if inspect.iscoroutinefunction(original):

            async def patched_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                return after(self, await original(self, *args, **kwargs))

            mp.setattr(owner, method, patched_async)
        else:
            mp.setattr(owner, method, lambda self, *args, **kwargs: after(self, original(self, *args, **kwargs)))

    return apply


def _refuse_events(problem: Callable[[dict[str, Any]], str | None]) -> Patch:
    """A driver whose iteration raises a client-side error for an event ``problem`` objects to."""

    def check(stream: Any, document: Any) -> Any:
        if document is not None and (message := problem(dict(document))):
            raise InvalidOperation(message)
        return document

    return lambda mp, api: wrap_result(api.stream, "try_next", check)(mp)


def _unknown_operation_type(event: dict[str, Any]) -> str | None:
    kind = event.get("operationType")
    return None if kind is None or kind in KNOWN_OPERATION_TYPES else f"unknown operationType {kind!r}"


def _skip_unknown_operation_types(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A driver whose iteration passes over events of an operationType it does not know, raising nothing."""

    def skip(stream: Any, document: Any) -> Any:
        while document is not None and _unknown_operation_type(dict(document)):
            document = original(stream)
        return document

    original = api.stream.try_next
    wrap_result(api.stream, "try_next", skip)(mp)


def _extra_ns_fields(event: dict[str, Any]) -> str | None:
    extra = set(event.get("ns") or {}) - {"db", "coll"} if isinstance(event.get("ns"), dict) else set()
    return f"unexpected ns fields {sorted(extra)}" if extra else None


def _not_a_typed_event(event: dict[str, Any]) -> str | None:
    missing = TYPED_EVENT_FIELDS - set(event)
    return f"a change event needs {sorted(missing)}" if missing else None


def _edit_pipeline(edit: Callable[[Any, list[dict[str, Any]]], list[dict[str, Any]]]) -> Patch:
    """A driver whose aggregate pipeline goes through ``edit(stream, pipeline)`` (the stage options included)."""
    return lambda mp, api: wrap_result(api.stream, "_aggregation_pipeline", edit)(mp)


def _stage_option_dropped(key: str) -> Patch:
    """One option of the ``$changeStream`` stage the caller gave, left out."""

    def edit(stream: Any, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
        stage = {k: v for k, v in pipeline[0]["$changeStream"].items() if k != key}
        return [{"$changeStream": stage}, *pipeline[1:]]

    return _edit_pipeline(edit)


def _change_stream_stage_last(stream: Any, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [*pipeline[1:], pipeline[0]]


def _refuse_streams(problem: Callable[[Any], str | None]) -> Patch:
    """A driver whose watch helpers raise a client-side error, before any command, when ``problem(stream)`` objects."""

    def apply(mp: pytest.MonkeyPatch, api: Any) -> None:
        original = api.stream._initialize_cursor
        if inspect.iscoroutinefunction(original):

            async def initialize_async(self: Any) -> None:
                if message := problem(self):
                    raise InvalidOperation(message)
                await original(self)

            mp.setattr(api.stream, "_initialize_cursor", initialize_async)
        else:

            def initialize(self: Any) -> None:
                if message := problem(self):
                    raise InvalidOperation(message)
                original(self)

            mp.setattr(api.stream, "_initialize_cursor", initialize)

    return apply


def _empty_pipeline(stream: Any) -> str | None:
    return "a change stream needs a pipeline" if not stream._pipeline else None


def _unlisted_stage(stream: Any) -> str | None:
    unlisted = sorted({name for stage in stream._pipeline for name in stage} - LISTED_STAGES)
    return f"change streams do not support {unlisted}" if unlisted else None


def _project_stage(stream: Any) -> str | None:
    return "$project would change the change event's shape" if any("$project" in s for s in stream._pipeline) else None


def _single_server(stream: Any) -> str | None:
    """The deployment is one standalone server. The client's topology is looked at once discovered (a new client's
    is still Unknown), with no command sent: the monitors' handshakes do the discovery."""
    from pymongo.server_selectors import any_server_selector

    stream._client._get_topology().select_server(any_server_selector, "aggregate")
    topology = stream._client.topology_description.topology_type_name
    return "change streams need a replica set or a sharded cluster" if topology == "Single" else None


def _client_stream_off_admin(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A client-wide stream that runs its aggregate on a database of its own choosing instead of ``admin``."""
    original = api.stream._run_aggregation_cmd

    def moved(self: Any) -> None:
        if isinstance(self, api.cluster_stream) and self._target.name == "admin":
            self._target = self._target.client.get_database("cluster", codec_options=self._target.codec_options)

    if inspect.iscoroutinefunction(original):

        async def run_async(self: Any, session: Any) -> Any:
            moved(self)
            return await original(self, session)

        mp.setattr(api.stream, "_run_aggregation_cmd", run_async)
    else:

        def run(self: Any, session: Any) -> Any:
            moved(self)
            return original(self, session)

        mp.setattr(api.stream, "_run_aggregation_cmd", run)


def _collection_watch_widened(mp: pytest.MonkeyPatch, api: Any) -> None:
    """``Collection.watch`` returns a stream on the collection's whole database, not on the collection."""
    database_stream = (
        async_change_stream.AsyncDatabaseChangeStream if api is ASYNC else sync_change_stream.DatabaseChangeStream
    )
    original = api.collection_stream.__init__

    def init(self: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        original(self, target, *args, **kwargs)
        self.__class__ = database_stream
        self._target = target.database

    mp.setattr(api.collection_stream, "__init__", init)


def _one_resume_per_stream(mp: pytest.MonkeyPatch, api: Any) -> None:
    """A stream that resumes once in its life: a later resumable error is raised, even after a good resume."""
    original = api.stream._resume

    def spent(self: Any) -> None:
        if getattr(self, "_harness_resumed", False):
            raise InvalidOperation("this change stream has already resumed once")
        self._harness_resumed = True

    if inspect.iscoroutinefunction(original):

        async def resume_async(self: Any) -> None:
            spent(self)
            await original(self)

        mp.setattr(api.stream, "_resume", resume_async)
    else:

        def resume(self: Any) -> None:
            spent(self)
            original(self)

        mp.setattr(api.stream, "_resume", resume)


#: breakage -> (the rules its checks must catch (ids joined by ", "), the patch, the API it patches, the target:
#: "replicaset" (the embedded SecantusDB) or "single" (the same server as a standalone: embedded-standalone))
BROKEN_UPSTREAM: dict[str, tuple[str, Patch, Api, str]] = {
    "unknown operationType refused": (
        "CS-EVENT-UNKNOWNTYPE",
        _refuse_events(_unknown_operation_type),
        SYNC,
        "replicaset",
    ),
    "unknown operationType refused (async)": (
        "CS-EVENT-UNKNOWNTYPE",
        _refuse_events(_unknown_operation_type),
        ASYNC,
        "replicaset",
    ),
    "unknown operationType events skipped": ("CS-EVENT-UNKNOWNTYPE", _skip_unknown_operation_types, SYNC, "replicaset"),
    "extra ns fields refused": ("CS-EVENT-NSFIELDS", _refuse_events(_extra_ns_fields), SYNC, "replicaset"),
    "extra ns fields refused (async)": ("CS-EVENT-NSFIELDS", _refuse_events(_extra_ns_fields), ASYNC, "replicaset"),
    "fullDocument left out of the stage": ("CS-OPT-STAGE", _stage_option_dropped("fullDocument"), SYNC, "replicaset"),
    "fullDocumentBeforeChange left out of the stage": (
        "CS-OPT-STAGE",
        _stage_option_dropped("fullDocumentBeforeChange"),
        SYNC,
        "replicaset",
    ),
    "showExpandedEvents left out of the stage (async)": (
        "CS-OPT-STAGE",
        _stage_option_dropped("showExpandedEvents"),
        ASYNC,
        "replicaset",
    ),
    "startAtOperationTime left out of the stage": (
        "CS-OPT-STAGE",
        _stage_option_dropped("startAtOperationTime"),
        SYNC,
        "replicaset",
    ),
    "resumeAfter left out of the stage (async)": (
        "CS-OPT-STAGE",
        _stage_option_dropped("resumeAfter"),
        ASYNC,
        "replicaset",
    ),
    "Collection.watch watches the whole database": ("CS-API-RETURNS", _collection_watch_widened, SYNC, "replicaset"),
    "$changeStream stage after the user's stages": (
        "CS-PIPE-INITIAL",
        _edit_pipeline(_change_stream_stage_last),
        SYNC,
        "replicaset",
    ),
    "$changeStream stage after the user's stages (async)": (
        "CS-PIPE-INITIAL",
        _edit_pipeline(_change_stream_stage_last),
        ASYNC,
        "replicaset",
    ),
    "empty pipeline refused": ("CS-PIPE-EMPTY", _refuse_streams(_empty_pipeline), SYNC, "replicaset"),
    "stages outside the listed subset refused": (
        "CS-PIPE-UNSUPPORTED",
        _refuse_streams(_unlisted_stage),
        SYNC,
        "replicaset",
    ),
    "$project refused": ("CS-PIPE-PROJECT", _refuse_streams(_project_stage), SYNC, "replicaset"),
    "reshaped events refused": ("CS-PIPE-PROJECT", _refuse_events(_not_a_typed_event), SYNC, "replicaset"),
    "client stream off the admin database": ("CS-API-CLIENT-ADMIN", _client_stream_off_admin, SYNC, "replicaset"),
    "client stream off the admin database (async)": (
        "CS-API-CLIENT-ADMIN",
        _client_stream_off_admin,
        ASYNC,
        "replicaset",
    ),
    "single server refused by the driver": ("CS-STARTUP-SINGLESERVER", _refuse_streams(_single_server), SYNC, "single"),
    "one resume per stream": ("CS-RESUME-REPEAT", _one_resume_per_stream, SYNC, "replicaset"),
    "one resume per stream (async)": ("CS-RESUME-REPEAT", _one_resume_per_stream, ASYNC, "replicaset"),
}


@functools.cache
def upstream_tests() -> tuple[Any, ...]:
    return tuple(load_paths(sorted(UPSTREAM.glob("*.yml"))))


def checks_of(rule: str) -> list[Any]:
    """Every test that checks ``rule``: upstream tests by the mapping's ``checks``, scenarios by their description."""
    mapping = load_mapping()
    found = [test for test in upstream_tests() if rule in mapping.checks(test.test_id, test.description)]
    found += [test for test in all_scenarios() if rule in rule_ids(test)]
    assert found, f"no test checks {rule}"
    return found


def _fresh(run: HarnessRun) -> None:
    """Drop what earlier tests left (upstream tests write to collections their initialData does not reset)."""
    admin = run.target.admin
    for name in admin.list_database_names():
        if name not in ("admin", "config", "local"):
            admin.drop_database(name)


def verdicts(run: HarnessRun, tests: Iterable[Any]) -> dict[str, Any]:
    """Each test's verdict on ``run``, each from a clean server; skipped tests (another topology) left out."""
    found = {}
    for test in tests:
        _fresh(run)
        verdict = run.verdict(test)
        if verdict.outcome != "skipped":
            found[test.test_id] = verdict
    return found


def _run(driver: str, target: str) -> Any:
    name = "embedded-standalone" if target == "single" else "embedded"
    # A broken driver that waits for a change that never comes fails at the iteration timeout: keep it short.
    settings = RunSettings(test_timeout_s=20.0, iteration_timeout_s=1.0)
    return HarnessRun(RunOptions(target=name, driver=driver, expected="none", settings=settings))


def open_runs() -> Iterator[Callable[[Api, str], HarnessRun]]:
    """One run per API and topology, opened when first asked for, all closed at the end (a fixture's body)."""
    opened: dict[tuple[str, str], HarnessRun] = {}

    def get(api: Api, target: str) -> HarnessRun:
        key = (api.name, target)
        if key not in opened:
            opened[key] = _run("pymongo-async" if api is ASYNC else "pymongo", target).__enter__()
        return opened[key]

    try:
        yield get
    finally:
        for run in opened.values():
            run.__exit__(None, None, None)


@pytest.fixture(scope="module")
def runs():
    yield from open_runs()


def checks_of_rules(rules: str) -> list[Any]:
    """The checks of each rule of ``rules`` (ids joined by ", "), without repeats."""
    found: dict[str, Any] = {}
    for rule in rules.split(", "):
        found.update((test.test_id, test) for test in checks_of(rule))
    return list(found.values())


def assert_caught(runs: Callable[[Api, str], HarnessRun], mp: pytest.MonkeyPatch, breakage: str, entry: tuple) -> None:
    """``entry`` = (rules, patch, api, target): the rules' checks pass unbroken, fail broken (none erroring),
    and, for a patch of the asynchronous API only, still pass through the synchronous one."""
    rules, patch, api, target = entry
    run = runs(api, target)
    tests = checks_of_rules(rules)
    unbroken = verdicts(run, tests)
    assert unbroken, f"{breakage}: no check of {rules} runs on {target}"
    assert {k: v.message for k, v in unbroken.items() if v.outcome != "passed"} == {}
    patch(mp, api)
    broken = verdicts(run, tests)
    assert any(v.outcome == "failed" for v in broken.values()), f"{breakage}: every check of {rules} still passed"
    assert {k: v.message for k, v in broken.items() if v.outcome not in ("passed", "failed")} == {}
    if api is ASYNC:  # the other API, untouched, still passes the same checks: the patch changed one path only
        other = verdicts(runs(SYNC, target), tests)
        assert {k: v.message for k, v in other.items() if v.outcome != "passed"} == {}


@pytest.mark.parametrize("breakage", sorted(BROKEN_UPSTREAM))
def test_the_checks_of_the_rule_fail_for_a_driver_that_breaks_it(runs, monkeypatch, breakage):
    assert_caught(runs, monkeypatch, breakage, BROKEN_UPSTREAM[breakage])

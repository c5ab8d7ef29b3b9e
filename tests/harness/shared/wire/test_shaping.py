"""Reply shaping: the pure state, the proxy in front of the embedded SecantusDB, the scenario file, clean-up.

The shaping state is checked on hand-made replies (no sockets); the proxy is
checked with a real pymongo client on the embedded target; the scenario file
runs through the real runner with ``--failpoints emulated`` (a proxy in the
path) and is skipped with the reason without one.
"""

from __future__ import annotations

import pytest
from bson import Int64
from pymongo import MongoClient

from harness.core.errors import HarnessError
from harness.core.model import TEST_RUNNER, Operation, SpecTest
from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_file
from harness.shared.wire import PROFILES, WireProxy
from harness.shared.wire.shaping import ReplyShaping, ShapingConfig, ShapingConfigError
from harness.shared.wire.shaping_ops import OPERATIONS
from harness.shared.wire.shaping_owner import EMULATION_NOTE, ReplyShapingOwner, clear_after_test, owner_for
from tests.paths import REPO

SCENARIO = REPO / "specs" / "scenarios" / "reply-shaping.yml"
CURSOR = Int64(77)


def reply(documents, token="pbrt", key="nextBatch", cursor_id=CURSOR):
    cursor = {"id": cursor_id, "ns": "db.c", key: documents}
    if token is not None:
        cursor["postBatchResumeToken"] = {"_data": token}
    return {"cursor": cursor, "ok": 1.0, "operationTime": 5}


def events(*ids):
    return [{"_id": {"_data": str(i)}, "n": i} for i in ids]


def armed(**document):
    shaping = ReplyShaping()
    shaping.arm(ShapingConfig.parse(document))
    return shaping


# -- configuration --------------------------------------------------------------------------------
def test_profiles_and_shapings_merge():
    config = ShapingConfig.parse({"profile": "pre-4.0.7-cursor-replies", "shapings": {"splitBatches": 2}})
    assert config.names == ["removePostBatchResumeToken", "splitBatches"] and config.split_batches == 2
    assert config.describe()["profile"] == "pre-4.0.7-cursor-replies"
    assert all(ShapingConfig.parse({"profile": name}).names for name in PROFILES)


@pytest.mark.parametrize(
    "document,words",
    [
        ({}, "nothing to shape"),
        ({"profile": "mongod-3.6"}, "unknown profile"),
        ({"shapings": {"dropEverything": True}}, "unknown shaping"),
        ({"shapings": {"splitBatches": 0}}, "positive"),
        ({"shapings": {"removeEventIds": "yes"}}, "true or false"),
        ({"profile": "small-batches", "times": 1}, "unknown field"),
        ({"shapings": {"maxWireVersion": -1}}, "non-negative"),
        ({"shapings": {"handshakeMaxWireVersion": "8"}}, "integer"),
        ({"shapings": {"removeOperationTime": 1}}, "true or false"),
    ],
)
def test_bad_configuration_is_refused_with_the_reason(document, words):
    with pytest.raises(ShapingConfigError, match=words):
        ShapingConfig.parse(document)


# -- the shaping state ------------------------------------------------------------------------------
def test_remove_post_batch_resume_token_and_ids():
    shaped = armed(shapings={"removePostBatchResumeToken": True, "removeEventIds": True}).shape(reply(events(1, 2)))
    assert "postBatchResumeToken" not in shaped["cursor"]
    assert shaped["cursor"]["nextBatch"] == [{"n": 1}, {"n": 2}]


def test_nothing_armed_changes_nothing():
    assert ReplyShaping().shape(reply(events(1))) is None


def test_split_batches_serve_the_rest_on_later_get_mores_with_the_servers_tokens():
    shaping = armed(profile="small-batches")
    first = shaping.shape(reply(events(1, 2, 3), key="firstBatch"))
    assert first["cursor"]["firstBatch"] == events(1)
    assert first["cursor"]["postBatchResumeToken"] == {"_data": "1"}  # a cut batch ends at its last event
    second, third = shaping.held_reply(CURSOR), shaping.held_reply(CURSOR)
    assert second["cursor"]["nextBatch"] == events(2) and second["cursor"]["postBatchResumeToken"] == {"_data": "2"}
    assert third["cursor"]["nextBatch"] == events(3) and third["cursor"]["postBatchResumeToken"] == {"_data": "pbrt"}
    assert third["operationTime"] == 5 and shaping.held_reply(CURSOR) is None and not shaping.holds(CURSOR)


def test_empty_batch_first_then_the_real_one_without_tokens_when_removed():
    shaping = armed(profile="pre-4.0.7-cursor-replies", shapings={"emptyBatchFirst": True})
    empty = shaping.shape(reply(events(1, 2)))
    assert empty["cursor"]["nextBatch"] == [] and "postBatchResumeToken" not in empty["cursor"]
    real = shaping.held_reply(CURSOR)
    assert real["cursor"]["nextBatch"] == events(1, 2) and "postBatchResumeToken" not in real["cursor"]


def test_a_closed_cursor_holds_nothing_and_kill_cursors_forgets():
    shaping = armed(profile="small-batches")
    assert shaping.shape(reply(events(1, 2), cursor_id=Int64(0))) is None
    shaping.shape(reply(events(1, 2)))
    assert shaping.holds(CURSOR)
    shaping.forget([CURSOR])
    assert not shaping.holds(CURSOR) and shaping.armed() == ["splitBatches"]


def test_clearing_mid_test_keeps_held_documents_after_the_test_drops_them():
    shaping = armed(profile="small-batches")
    shaping.shape(reply(events(1, 2)))
    shaping.clear(forget_held=False)
    assert shaping.armed() == [f"held documents of cursor {CURSOR}"]
    shaping.clear()
    assert shaping.armed() == []


def test_remove_operation_time_also_from_replies_made_of_held_documents():
    shaping = armed(profile="no-resume-point", shapings={"splitBatches": 1})
    first = shaping.shape(reply(events(1, 2), key="firstBatch"))
    assert "operationTime" not in first and "postBatchResumeToken" not in first["cursor"]
    held = shaping.held_reply(CURSOR)
    assert "operationTime" not in held and held["cursor"]["nextBatch"] == events(2)
    assert shaping.applied["removeOperationTime"] == 1
    assert armed(profile="no-resume-point").shape({"cursor": {"id": 0, "firstBatch": []}, "ok": 1.0}) is None


HELLO = {"isWritablePrimary": True, "maxWireVersion": 25, "minWireVersion": 17, "ok": 1.0}


def test_hello_shaping_every_reply_or_only_the_handshake():
    every = armed(shapings={"maxWireVersion": 8})
    assert every.shape_hello(HELLO, None, first_reply=True) == {**HELLO, "maxWireVersion": 8, "minWireVersion": 8}
    assert every.shape_hello(HELLO, None, first_reply=False)["maxWireVersion"] == 8
    handshakes = armed(profile="wire-version-8-connections")
    assert handshakes.shape_hello(HELLO, None, first_reply=True)["maxWireVersion"] == 8
    assert handshakes.shape_hello(HELLO, None, first_reply=False) is None  # a heartbeat keeps the server's own
    assert handshakes.applied == {"handshakeMaxWireVersion": 1}


def test_hello_shaping_only_for_the_named_client_and_never_an_error_reply():
    shaping = armed(shapings={"maxWireVersion": 8}, appName="old")
    assert shaping.shape_hello(HELLO, "other", first_reply=True) is None
    assert shaping.shape_hello({"ok": 0.0, "code": 1}, "old", first_reply=True) is None
    assert shaping.shape_hello(HELLO, "old", first_reply=True)["maxWireVersion"] == 8
    assert ReplyShaping().shape_hello(HELLO, None, first_reply=True) is None
    assert armed(profile="small-batches").shape_hello(HELLO, None, first_reply=True) is None


# -- through the proxy, with pymongo ----------------------------------------------------------------
@pytest.fixture(scope="module")
def embedded():
    with HarnessRun(RunOptions(expected="none")) as run:
        yield run


def test_proxy_shapes_only_the_named_clients_change_streams(embedded):
    host, port = embedded.target.admin.address
    with WireProxy(host, port) as proxy:
        shaped = MongoClient(proxy.uri, appName="shaped")
        plain = MongoClient(proxy.uri, appName="plain")
        try:
            proxy.shape_replies({"profile": "unchecked-event-ids", "appName": "shaped"})
            collection = embedded.target.admin.shaping_db.c
            collection.drop()
            streams = [c.shaping_db.c.watch(max_await_time_ms=100) for c in (shaped, plain)]
            collection.insert_one({"n": 1})
            with pytest.raises(Exception, match="resume token is missing"):
                while streams[0].try_next() is None:
                    pass
            change = None
            while change is None:
                change = streams[1].try_next()
            assert "_id" in change and change["fullDocument"]["n"] == 1
            assert proxy.shaping.applied["removeEventIds"] == 1
        finally:
            shaped.close()
            plain.close()


def test_handshake_shaping_gives_new_connections_the_version_and_leaves_the_monitor_alone(embedded):
    host, port = embedded.target.admin.address
    with WireProxy(host, port) as proxy:
        client = MongoClient(proxy.uri, appName="old-connections")
        try:
            server = client._topology.select_server(lambda servers: servers, "test")  # the monitor has checked it
            real = server.description.max_wire_version
            proxy.shape_replies({"profile": "wire-version-8-connections", "appName": "old-connections"})
            with server.pool.checkout() as connection:  # a new application connection, handshaken now
                assert connection.max_wire_version == 8
            assert (
                real > 8
                and client._topology.description.server_descriptions()[server.description.address].max_wire_version
                == real
            )
        finally:
            client.close()


# -- ownership and clean-up ---------------------------------------------------------------------------
def test_owner_clears_and_confirms_and_the_record_gets_the_final_counts(embedded):
    host, port = embedded.target.admin.address
    with WireProxy(host, port) as proxy:
        owner = ReplyShapingOwner(proxy, object())
        details: dict = {}
        owner.arm({"profile": "small-batches"})
        owner.attach(details)
        proxy.shaping.applied["splitBatches"] += 2  # as if two replies had been cut
        assert owner.clear_all() == []
        assert details["reply_shaping"]["applied"] == {"splitBatches": 2}
        assert details["reply_shaping"]["note"] == EMULATION_NOTE and proxy.shaping.armed() == []


def test_teardown_reports_shaping_that_will_not_go_off(embedded):
    class Stuck:
        shaping = ReplyShaping()

        def shape_replies(self, config):
            parsed = ShapingConfig.parse(config)
            self.shaping.arm(parsed)
            return parsed

        def clear_shaping(self, forget_held=True):
            pass  # a broken proxy: nothing goes off

    owner = ReplyShapingOwner(Stuck(), object())
    owner.arm({"profile": "unchecked-event-ids"})
    assert owner.clear_all() == ["reply shaping still in effect after clean-up: ['removeEventIds']"]


# -- the scenario file ----------------------------------------------------------------------------------
def scenario_tests() -> list[SpecTest]:
    return load_file(SCENARIO)


@pytest.fixture(scope="module")
def emulated():
    with HarnessRun(RunOptions(expected="none", failpoints="emulated")) as run:
        assert owner_for(run.target) is not None
        yield run


@pytest.mark.parametrize("test", scenario_tests(), ids=lambda t: t.description[:50])
def test_scenario_passes_with_the_proxy_and_leaves_no_shaping(emulated, test):
    verdict = emulated.verdict(test)
    assert verdict.outcome == "passed", verdict.message
    assert verdict.details["reply_shaping"]["armed"] and verdict.details["reply_shaping"]["note"] == EMULATION_NOTE
    assert owner_for(emulated.target).proxy.shaping.armed() == []
    assert clear_after_test(emulated.target) == []


def test_without_a_run_wide_proxy_a_scenario_gets_a_proxy_of_its_own(embedded):
    test = scenario_tests()[0]
    verdict = embedded.verdict(test)
    assert verdict.outcome == "passed", verdict.message
    assert verdict.details["reply_shaping"]["applied"] and owner_for(embedded.target) is None


def test_operations_refuse_bad_arguments_naming_the_operation(emulated):
    class Context:
        target, driver, details = emulated.target, emulated.driver, {}

        def guarded(self):
            import contextlib

            return contextlib.nullcontext()

    bad = Operation(name="shapeReplies", object=TEST_RUNNER, arguments={"profile": "nope"}, label="operations[3]")
    with pytest.raises(HarnessError, match=r"operations\[3\]: shapeReplies: unknown profile"):
        OPERATIONS["shapeReplies"](Context(), bad)
    with pytest.raises(HarnessError, match="takes no arguments"):
        OPERATIONS["clearReplyShaping"](
            Context(),
            Operation(name="clearReplyShaping", object=TEST_RUNNER, arguments={"x": 1}, label="operations[4]"),
        )
    assert clear_after_test(emulated.target) == []


# -- one test's proxy (harness/shared/wire/shaping_route.py) -----------------------------------------------------------
def test_a_shaping_test_gets_a_proxy_of_its_own_on_a_run_without_one(embedded):
    from harness.shared.wire.shaping_route import route_for

    shaping_test = scenario_tests()[0]
    plain = SpecTest(file="f.yml", format="unified", description="d", comparator="unified")
    assert route_for(plain, embedded.target, embedded.driver_uri) is None
    route = route_for(shaping_test, embedded.target, embedded.driver_uri)
    try:
        assert route.uri != embedded.driver_uri and owner_for(embedded.target) is route.owner
        route.owner.arm({"profile": "small-batches"})
        route.arm_fail_point(
            {"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {"failCommands": ["killCursors"]}}
        )
    finally:
        problems = route.close()
    assert problems == [] and owner_for(embedded.target) is None
    assert route.own_proxy.shaping.armed() == [] and route.own_proxy.armed() == []


def test_a_run_with_a_proxy_lends_it_and_keeps_ownership(emulated):
    from harness.shared.wire.shaping_route import route_for

    route = route_for(scenario_tests()[0], emulated.target, emulated.driver_uri)
    assert route.uri == emulated.driver_uri and route.own_proxy is None
    assert route.close() == [] and owner_for(emulated.target) is route.owner


def test_a_failed_get_more_comes_before_held_documents_and_a_resume_loses_and_repeats_nothing(embedded):
    host, port = embedded.target.admin.address
    with WireProxy(host, port) as proxy:
        client = MongoClient(proxy.uri, appName="split")
        try:
            collection = embedded.target.admin.shaping_db.split
            collection.drop()
            stream = client.shaping_db.split.watch(max_await_time_ms=100)
            proxy.shape_replies({"profile": "small-batches"})
            collection.insert_many([{"n": n} for n in (1, 2, 3)])
            seen = []

            def next_n():
                for _ in range(50):
                    change = stream.try_next()
                    if change is not None:
                        return change["fullDocument"]["n"]
                raise AssertionError(f"no change; seen {seen}")

            seen.append(next_n())
            assert proxy.shaping.armed() == ["splitBatches", f"held documents of cursor {stream._cursor.cursor_id}"]
            proxy.configure_fail_point(
                {
                    "configureFailPoint": "failCommand",
                    "mode": {"times": 1},
                    "data": {"failCommands": ["getMore"], "errorCode": 43},
                }
            )
            seen += [next_n(), next_n()]
            assert seen == [1, 2, 3] and stream.try_next() is None
            assert proxy.fail_points.armed() == []
        finally:
            client.close()

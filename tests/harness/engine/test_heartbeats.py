"""Fast heartbeats for tests that configure fail points, as the unified format allows, never where it forbids.

Whether verdicts stay the same is shown test by test on the whole corpus
(issue notes, benchmarks/RESULTS-runner.md); here: the rule, the adapter's
options, the process-wide minimum restored, and the record saying so.
"""

from __future__ import annotations

import pymongo.common

from harness.core.model import TEST_RUNNER, EntitySpec, Operation, SpecTest
from harness.drivers.pymongo.adapter import PyMongoAdapter
from harness.engine.spec_case import wants_fast_heartbeats

FAIL_POINT = Operation(
    "failPoint", TEST_RUNNER, {"client": "c", "failPoint": {"configureFailPoint": "failCommand", "mode": "off"}}
)


def _test(operations, entities=()):
    return SpecTest(
        file="hb.yml",
        format="unified",
        description="d",
        comparator="unified",
        operations=list(operations),
        entities=list(entities),
    )


def _client(**uri_options):
    return EntitySpec("client", "c", {"uriOptions": uri_options} if uri_options else {})


def test_only_tests_that_configure_fail_points_get_fast_heartbeats():
    assert wants_fast_heartbeats(_test([FAIL_POINT], [_client()]))
    assert not wants_fast_heartbeats(_test([Operation("insertOne", "coll", {})], [_client()]))


def test_a_client_that_sets_heartbeat_frequency_keeps_the_whole_test_on_defaults():
    assert not wants_fast_heartbeats(_test([FAIL_POINT], [_client(heartbeatFrequencyMS=2000)]))
    created = Operation("createEntities", TEST_RUNNER, {"entities": [_client(heartbeatfrequencyms=2000)]})
    assert not wants_fast_heartbeats(_test([created, FAIL_POINT], [_client()]))


def test_the_pymongo_scope_lowers_heartbeats_only_where_allowed_and_restores_the_minimum(embedded_run):
    uri = embedded_run.target.uri
    default_minimum = pymongo.common.MIN_HEARTBEAT_INTERVAL
    scope = PyMongoAdapter().open_scope(uri, iteration_timeout_s=1, fast_heartbeats=True)
    try:
        assert pymongo.common.MIN_HEARTBEAT_INTERVAL == 0.1
        scope.create_entity(_client())
        scope.create_entity(EntitySpec("client", "own", {"uriOptions": {"heartbeatFrequencyMS": 2000}}))
        assert scope.entity("c")._topology_settings.heartbeat_frequency == 0.1
        assert scope.entity("own")._topology_settings.heartbeat_frequency == 2.0
    finally:
        scope.close()
    assert pymongo.common.MIN_HEARTBEAT_INTERVAL == default_minimum
    plain = PyMongoAdapter().open_scope(uri, iteration_timeout_s=1)
    try:
        plain.create_entity(_client())
        assert plain.entity("c")._topology_settings.heartbeat_frequency == 10
    finally:
        plain.close()


def test_the_record_says_when_heartbeats_were_lowered(embedded_run):
    verdict = embedded_run.verdict(_test([FAIL_POINT], [_client()]))
    assert verdict.outcome == "passed", verdict.message
    assert verdict.details == {"fast_heartbeat_ms": 100}
    assert embedded_run.verdict(_test([], [_client()])).details == {}

"""Driver capabilities: the engine asks a driver scope only what its adapter declares.

A test that needs a capability the adapter does not list (``DRIVER_CAPABILITIES``) is ``skipped`` with a
reason naming it, never an ``error`` and never a probe of the scope's attributes: the adapter below keeps
pymongo's scopes, which do have every method, and only narrows what it declares; the verdict must follow
the declaration. With the full declaration the same tests pass, so each check can tell the two apart.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.core.ports import DRIVER_CAPABILITIES
from harness.drivers.pymongo.adapter import PyMongoAdapter
from harness.formats.loaders import load_file

SPEC = """
description: capabilities
schemaVersion: "1.9"
runOnRequirements:
  - topologies: [ replicaset ]
createEntities:
  - client: { id: client0, observeEvents: [ commandStartedEvent, connectionCheckedOutEvent ] }
  - database: { id: database0, client: client0, databaseName: capabilities }
  - collection: { id: collection0, database: database0, collectionName: coll }
  - session: { id: session0, client: client0 }
initialData:
  - { collectionName: coll, databaseName: capabilities, documents: [] }
tests:
  - description: session_state
    operations:
      - { name: assertSessionTransactionState, object: testRunner, arguments: { session: session0, state: none } }
  - description: connections_checked_out
    operations:
      - { name: assertNumberConnectionsCheckedOut, object: testRunner, arguments: { client: client0, connections: 0 } }
  - description: session_lsid
    operations:
      - name: insertOne
        object: collection0
        arguments: { session: session0, document: { _id: 1 } }
    expectEvents:
      - client: client0
        events:
          - commandStartedEvent: { command: { insert: coll, lsid: { $$sessionLsid: session0 } } }
  - description: cmap_events
    operations:
      - { name: insertOne, object: collection0, arguments: { document: { _id: 2 } } }
    expectEvents:
      - client: client0
        eventType: cmap
        ignoreExtraEvents: true
        events: [ { connectionCheckedOutEvent: {} } ]
"""


class NarrowedAdapter(PyMongoAdapter):
    """pymongo, declaring every capability but one."""

    def __init__(self, lacking: str) -> None:
        self.capabilities = DRIVER_CAPABILITIES - {lacking}


@pytest.fixture
def tests_by_name(tmp_path):
    spec = tmp_path / "capabilities.yml"
    spec.write_text(SPEC)
    return {test.description: test for test in load_file(spec)}


@pytest.mark.parametrize("capability", ["session_state", "connections_checked_out", "session_lsid", "cmap_events"])
def test_a_capability_the_adapter_does_not_declare_skips_the_test_with_its_name(
    embedded_run, tests_by_name, capability
):
    runner = embedded_run.runner
    assert embedded_run.verdict(tests_by_name[capability]).outcome == "passed"  # the full declaration passes
    full = runner.services
    runner.services = replace(full, driver=NarrowedAdapter(capability))  # what every case is handed
    try:
        verdict = embedded_run.verdict(tests_by_name[capability])
    finally:
        runner.services = full
    assert verdict.outcome == "skipped", verdict.message
    assert f"lacks the capability {capability!r}" in verdict.message


def test_the_pymongo_adapter_declares_every_capability_and_its_language():
    assert PyMongoAdapter.capabilities == DRIVER_CAPABILITIES and PyMongoAdapter.language == "python"

"""The pymongo adapter leaves a test's arguments as loaded: pymongo writes into what it is given.

``insert_one`` adds an ``_id`` to the document it inserts. Were the loaded test's own document handed over, a
second run of the same test (a repeat, a campaign, a rerun in one process) would insert the first run's ``_id``
again and fail on a duplicate key that has nothing to do with the rule under test.
"""

from __future__ import annotations

from harness.core.model import EntitySpec, Operation


def test_insert_one_leaves_the_test_s_document_without_an_id(embedded_run):
    scope = embedded_run.driver.open_scope(embedded_run.driver_uri, iteration_timeout_s=5.0)
    try:
        scope.create_entity(EntitySpec("client", "client0", {"id": "client0"}))
        scope.create_entity(
            EntitySpec("database", "db0", {"id": "db0", "client": "client0", "databaseName": "arguments_unchanged"})
        )
        scope.create_entity(
            EntitySpec("collection", "coll0", {"id": "coll0", "database": "db0", "collectionName": "c"})
        )
        document = {"written": 1, "nested": {"a": [1]}}
        insert = Operation("insertOne", "coll0", {"document": document})
        first, second = scope.run(insert), scope.run(insert)
        assert document == {"written": 1, "nested": {"a": [1]}}
        assert first["insertedId"] != second["insertedId"]
    finally:
        scope.close()

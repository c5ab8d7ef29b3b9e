"""The unified format's operations, per entity type, with the argument names each one takes.

The unified test format lists its test-runner operations itself and defers the
entity operations to the specs that define them (CRUD, change streams, sessions,
the convenient transactions API, index management, enumerating collections and
databases, GridFS). This table is what those specs name, so a test is checked
when its file is loaded: a misspelt operation or argument is an ``error`` naming
the file, the test and ``operations[i]``, even in an operation the test never
reaches. A name the table knows but a driver adapter does not implement is a
different thing: the test runs up to it and is ``skipped`` with the reason.

Every operation on a client, database, collection or bucket may also take
``session``, ``timeoutMS`` (client-side operation timeouts) and ``comment``.

The table itself is the executors' shared vocabulary (``harness/core/vocabulary.json``): this module
only shapes it for the loader's checks.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.core.vocabulary import operations, vocabulary

_VOCABULARY = vocabulary()
_ON_ENTITIES = tuple(_VOCABULARY["commonArguments"]["arguments"])

CLIENT = operations("client")
DATABASE = operations("database")
COLLECTION = operations("collection")
SESSION = operations("session")
BUCKET = operations("bucket")
#: Change streams and cursors (``saveResultAsEntity`` of the operations in :data:`RESULT_KINDS`).
ITERABLE = operations("changeStream")
#: ``object: testRunner`` (the unified format's "Special Test Operations").
TEST_RUNNER = operations("testRunner")

#: Entity type -> its operations. ``session``/``timeoutMS``/``comment`` are added for these types.
ENTITY_OPERATIONS: dict[str, dict[str, frozenset[str]]] = {
    kind: operations(kind) for kind in _VOCABULARY["operations"] if kind != "testRunner"
}
_WITH_COMMON = frozenset(_VOCABULARY["commonArguments"]["entities"])

#: Operations whose result, saved with ``saveResultAsEntity``, is an entity of this type.
RESULT_KINDS: dict[str, str] = dict(_VOCABULARY["resultEntities"])

#: Arguments that hold a list of operations run by the test runner (``withTransaction``'s callback).
NESTED_OPERATIONS: dict[str, str] = dict(_VOCABULARY["nestedOperations"])


def arguments_of(kind: str, name: str) -> frozenset[str] | None:
    """The argument names operation ``name`` takes on an entity of type ``kind``; None if it has no such operation."""
    table = ENTITY_OPERATIONS.get(kind)
    if table is None or name not in table:
        return None
    return table[name] | frozenset(_ON_ENTITIES) if kind in _WITH_COMMON else table[name]


def any_arguments_of(name: str) -> frozenset[str] | None:
    """For an entity of unknown type: the arguments ``name`` takes on any type that has it (None: none has it)."""
    found = [arguments_of(kind, name) for kind in ENTITY_OPERATIONS]
    known = [a for a in found if a is not None]
    return frozenset().union(*known) if known else None


def kinds_with(name: str) -> list[str]:
    """The entity types that have an operation ``name``."""
    return [kind for kind, table in ENTITY_OPERATIONS.items() if name in table]


def unknown_arguments(given: Iterable[str], allowed: frozenset[str]) -> list[str]:
    return sorted(set(given) - allowed)

"""The executors' shared vocabulary file (``harness/core/vocabulary.json``) and what the Python side reads from it."""

from __future__ import annotations

from harness.core import vocabulary
from harness.core.constants import CMAP_EVENTS
from harness.core.observations import SDAM_EVENTS
from harness.formats.unified_operations import ENTITY_OPERATIONS, arguments_of


def test_every_argument_of_every_operation_has_a_type() -> None:
    typed = vocabulary.vocabulary()["argumentTypes"]
    for kind, table in vocabulary.vocabulary()["operations"].items():
        for name, spec in table.items():
            assert not set(spec["required"]) & set(spec["optional"]), (kind, name)
            untyped = (set(spec["required"]) | set(spec["optional"])) - set(typed)
            assert not untyped, (kind, name, untyped)


def test_the_loader_reads_its_operations_from_the_file() -> None:
    assert set(ENTITY_OPERATIONS) == set(vocabulary.vocabulary()["operations"]) - {"testRunner"}
    allowed = arguments_of("collection", "insertOne")
    assert allowed is not None and {"document", "session", "comment"} <= allowed
    assert vocabulary.required_arguments("collection", "insertOne") == {"document"}
    assert vocabulary.required_arguments("collection", "noSuchOperation") == frozenset()


def test_event_names_agree_with_the_python_side() -> None:
    assert vocabulary.event_names("cmap") == tuple(CMAP_EVENTS.values())
    assert vocabulary.event_names("sdam") == SDAM_EVENTS


def test_sensitive_command_recognises_authentication_and_not_ordinary_commands() -> None:
    assert vocabulary.sensitive_command("saslStart", {"saslStart": 1})
    assert vocabulary.sensitive_command("hello", {"hello": 1, "speculativeAuthenticate": {}})
    assert vocabulary.sensitive_command("isMaster", {})
    assert not vocabulary.sensitive_command("hello", {"hello": 1})
    assert not vocabulary.sensitive_command("hello", None)
    assert not vocabulary.sensitive_command("find", {})


def test_a_hello_may_list_only_operations_the_vocabulary_names() -> None:
    from harness.drivers.executor.adapter import hello_problems

    hello = {
        "protocolVersion": 1,
        "driver": {"name": "d", "version": "1", "language": "l"},
        "capabilities": [],
        "operations": ["insertOne", "createChangeStream", "iterateOnce", "getResumeToken"],
    }
    assert hello_problems(hello) == []
    for stray in ("insertOen", "failPoint"):
        problems = hello_problems({**hello, "operations": [*hello["operations"], stray]})
        assert problems == [f"operations [{stray!r}] are not in the vocabulary (harness/core/vocabulary.json)"]

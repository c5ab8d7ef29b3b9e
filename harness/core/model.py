"""The one test model every spec format loads into.

A loaded test is unified-shaped: entities, initial data, a list of operations,
expected events. A legacy-format test is expressed in the same terms (its
change stream becomes a ``createChangeStream`` operation, its ``result.success``
becomes one ``iterateUntilDocumentOrError`` per expected change) and differs only
in the *comparator* it names and in expecting its error at test level. Nothing
after the loaders asks which format a test came from; ``format`` is carried
for provenance in result records and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class _Marker:
    """A named singleton that survives copying (``dataclasses.asdict`` deep-copies)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __copy__(self) -> _Marker:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Marker:
        return self

    def __reduce__(self) -> str:
        return self._name


#: Marker for "no expected result given" (``None`` is a legitimate expectation).
NOT_GIVEN: Any = _Marker("NOT_GIVEN")

#: Object name of operations the test runner performs itself (``failPoint`` etc.).
TEST_RUNNER = "testRunner"


@dataclass(frozen=True)
class Requirement:
    """One ``runOnRequirements`` entry; a test runs if any entry of each group holds."""

    min_server_version: str | None = None
    max_server_version: str | None = None
    topologies: tuple[str, ...] | None = None
    serverless: str | None = None  # "require" | "forbid" | "allow"
    server_parameters: dict[str, Any] | None = None
    auth: bool | None = None
    csfle: bool | None = None


@dataclass
class EntitySpec:
    """An entity to create before the operations run: client, database, collection, session."""

    kind: str
    id: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class CollectionData:
    """A collection dropped, recreated and seeded before the test (``initialData``)."""

    database: str
    collection: str
    documents: list[dict[str, Any]] = field(default_factory=list)
    create_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Operation:
    """One step of a test, run against an entity or the test runner."""

    name: str
    object: str
    arguments: dict[str, Any] = field(default_factory=dict)
    expect_result: Any = NOT_GIVEN
    expect_error: dict[str, Any] | None = None
    save_result_as_entity: str | None = None
    ignore_result_and_error: bool = False
    #: Where a mismatch is reported, e.g. ``operations[3]`` or ``success[1]``.
    label: str = ""


@dataclass
class EventExpectation:
    """Events one client must have published, in order."""

    client: str
    events: list[dict[str, Any]]
    event_type: str = "command"
    ignore_extra_events: bool = False
    #: Observed commands skipped while comparing (legacy skips ``killCursors``).
    skip_commands: tuple[str, ...] = ()
    label: str = "expectEvents"


@dataclass
class LogExpectation:
    """Log messages one client must have emitted, in order (the unified format's ``expectLogMessages``)."""

    client: str
    messages: list[dict[str, Any]]
    #: Messages left out before comparing (any that matches one of these).
    ignore_messages: list[dict[str, Any]] = field(default_factory=list)
    ignore_extra_messages: bool = False
    label: str = "expectLogMessages"


@dataclass
class SpecTest:
    """A test ready to run, whatever file format it was written in."""

    file: str
    format: str
    description: str
    comparator: str
    line: int | None = None
    requirements: list[list[Requirement]] = field(default_factory=list)
    skip_reason: str | None = None
    entities: list[EntitySpec] = field(default_factory=list)
    reset_databases: list[str] = field(default_factory=list)
    initial_data: list[CollectionData] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    #: Test-level error expectation: the first error any operation raises ends
    #: the operations and must match this; no error at all fails the test.
    expect_error: dict[str, Any] | None = None
    expect_events: list[EventExpectation] = field(default_factory=list)
    #: Structured log messages clients must emit (``expectLogMessages``).
    expect_log_messages: list[LogExpectation] = field(default_factory=list)
    #: Collections whose exact contents are checked after the test (``outcome``).
    expected_data: list[CollectionData] = field(default_factory=list)
    #: Set when the file or test could not be loaded; the test is then an ``error``.
    load_error: str | None = None
    #: What the runner must provide (e.g. ``failpoints``), for reporting.
    uses_failpoints: bool = False
    #: The JSON schema its file was checked against (a file name); ``"none"`` when the file's format has
    #: a schema and none was found, so the file was loaded unchecked; None for formats without one.
    schema: str | None = None

    @property
    def file_stem(self) -> str:
        """File name without directory or extension: ``.yml`` and ``.json`` share it."""
        name = self.file.replace("\\", "/").rsplit("/", 1)[-1]
        for ext in (".json", ".yml", ".yaml"):
            if name.endswith(ext):
                return name[: -len(ext)]
        return name

    @property
    def test_id(self) -> str:
        """Stable identity used by expected-outcome files: ``format/file::description``."""
        return f"{self.format}/{self.file_stem}::{self.description}"

    # -- the runnable port (harness.core.ports.Runnable): what a run asks any test --------------------------------

    @property
    def name(self) -> str:
        return self.description

    @property
    def spec_file(self) -> str:
        return self.file

    @property
    def clauses(self) -> tuple[str, ...]:
        from harness.core.causes import clauses_of  # causes reads the model: imported when asked

        return clauses_of(self)

    @property
    def ends_with_target(self) -> bool:
        return True  # a spec test never restarts its target

    def early_verdict(self, run: Any) -> Any:
        """The run's spec runner's preflight (requirements, skip rules)."""
        return run.runner.preflight(self)

    def open_case(self, run: Any) -> Any:
        return run.runner.case(self)

    def deadline_s(self, run: Any) -> float | None:
        return None  # the run's per-test timeout

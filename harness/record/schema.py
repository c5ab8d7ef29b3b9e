"""The result record ``cs-harness.result/1``, field by field, described once.

:data:`RESULT` is what :func:`harness.core.records.make_record` writes (a test holds every written record to
it, and to nothing more) and what ``reports/schema.py`` turns into the Spark schema the report parses with (the
fields marked ``reported``). docs/record.md is this description in words. A record's provenance fields (the
run's, repeated in every record of it) come after the test's own.
"""

from __future__ import annotations

from harness.record.causes import CAUSE
from harness.record.fields import (
    Field,
    Type,
    boolean,
    double,
    json_value,
    list_of,
    long,
    map_of,
    string,
    struct,
)

#: The ``record`` of every result record: its schema's name and version.
RESULT_KIND = "cs-harness.result/1"
#: The ``record`` of a matrix cell that could not be built or run (harness/matrix/scheduler.py).
CELL_KIND = "cs-harness.cell/1"

EXPECTATION = struct(
    Field("expected", boolean, "the outcome is as the expected-outcomes files say", reported=True),
    Field("kind", string, "pass, skip, known-<word>, unexpected-<word>, unexpected-pass...", reported=True),
    Field("reason", string, "the entries' reasons, or why it is unexpected", reported=True),
    Field("entries", list_of(string), "FILE#id of each entry that explained a cause", reported=True),
    Field("unexplained", long, "how many causes no entry explains", reported=True),
)

#: Facts of how the test was run; a fault campaign's counts are the ones the report reads.
DETAILS = struct(
    Field("events", long, "a campaign's change events", required=False, reported=True),
    Field("resumes", long, "a campaign's driver resumes", required=False, reported=True),
    Field("disallowed_errors", long, "a campaign's errors the driver must not raise", required=False, reported=True),
    Field("faults", list_of(json_value), "a campaign's faults applied", required=False, reported=True),
    Field("anomalies", list_of(json_value), "a campaign's anomalies", required=False, reported=True),
    open=True,
)

TARGET = struct(
    Field("kind", string, "the target plug-in's kind", reported=True),
    Field("name", string, "the target's name (its expected-outcomes file is named after it)", reported=True),
    Field("version", string, "the server version it reports", reported=True),
    Field("topology", string, "single, replicaset, sharded...", reported=True),
    Field("uri", string, "its connection string, secrets redacted"),
    Field("max_wire_version", long, "the wire version it reports", nullable=True),
    Field(
        "details",
        struct(
            Field("package", string, "the package the target runs", required=False, reported=True),
            Field("package_version", string, "that package's version", required=False, reported=True),
            Field("release", string, "the release asked for", required=False, reported=True),
            Field("network_faults", json_value, "the Toxiproxy in front of it", required=False, reported=True),
            open=True,
        ),
        "the target's own facts",
        reported=True,
    ),
)

DRIVER = struct(
    Field("name", string, "the driver under test", reported=True),
    Field("version", string, "its version", reported=True),
    Field("language", string, "its programming language", reported=True),
    Field("iteration_mode", string, "how its change streams were consumed (executor protocol 6.4.1)", reported=True),
    Field("executor", string, "the executor's command line; absent in process", required=False, reported=True),
)


def _test(name: str, kind: Type, doc: str, **flags: bool) -> Field:
    return Field(name, kind, doc, per_test=True, **flags)


def _run(name: str, kind: Type, doc: str, **flags: bool) -> Field:
    return Field(name, kind, doc, **flags)


RESULT = struct(
    _test("record", string, f"the schema: {RESULT_KIND}", reported=True),
    _test("format", string, "unified, legacy, prose, campaign...", reported=True),
    _test("file", string, "the spec file (or code-defined suite) the test comes from", reported=True),
    _test("test", string, "the test's description", reported=True),
    _test("test_id", string, "FORMAT/FILE::DESCRIPTION, unique in a run", reported=True),
    _test("line", long, "the test's line in its file; null for a code-defined check", nullable=True, reported=True),
    _test("rules", list_of(string), "the ids of the rules the test checks", reported=True),
    _test("outcome", string, "passed, failed, error or skipped (harness.record.outcomes)", reported=True),
    _test(
        "attempt",
        long,
        "which run of the test in this run, from 1 (--retry-unexpected, --repeat); absent before it: 1",
        reported=True,
    ),
    _test("message", string, "why it failed, errored or was skipped; empty for a pass", reported=True),
    _test("mismatches", list_of(string), "the comparator's mismatches, one line each"),
    _test("causes", list_of(CAUSE), "why it failed, one per broken check (docs/causes.md)", reported=True),
    _test("not_reached", list_of(string), "the checks a flow-breaking cause left unreached", reported=True),
    _test("started_at", string, "when the attempt started (ISO 8601, UTC)", reported=True),
    _test("duration_s", double, "how long it took", reported=True),
    _test("expectation", EXPECTATION, "how the expected outcomes classify it", required=False, reported=True),
    _test("details", DETAILS, "facts of how it was run", required=False, reported=True),
    _run("run_id", string, "the run's id, shared by its parallel workers", reported=True),
    _run("target", TARGET, "the target's provenance", reported=True),
    _run("driver", DRIVER, "the driver's provenance", reported=True),
    _run("failpoints", string, "native or emulated: how fail points were applied", reported=True),
    _run("harness", struct(Field("name", string, "the harness"), Field("version", string, "its version")), "harness"),
    _run(
        "python",
        struct(Field("implementation", string, "CPython, PyPy"), Field("version", string, "its version")),
        "the harness's Python",
    ),
    _run("host", struct(Field("name", string, "host name"), Field("platform", string, "OS")), "the machine"),
    _run("expectations_file", string, "the expected-outcomes files read"),
    _run("labels", map_of(string), "--label KEY=VALUE (a matrix's cell and repeat)", reported=True),
    _run("strict", boolean, "--strict: every note fails the run"),
    _run("plugin_problems", list_of(string), "plug-ins that could not be installed", required=False),
    _run("adjustments", list_of(json_value), "URI options a pair's file adds, with why", required=False),
    _run("spec_sources", json_value, "the --specs roots read", required=False),
    _run("schema", json_value, "the unified schemas that checked the files ('none': some unchecked)", required=False),
    _run("pins", json_value, "how many spec files are pinned, and which are not", required=False),
    _run("rules_problem", string, "why the test-to-rule mapping could not be read", required=False),
    _run("rule_levels_problem", string, "why rule levels could not be read", required=False),
    _run("allow_destructive", boolean, "--allow-destructive was given", required=False),
    _run("target_restarted_after", string, "a parallel worker's target was lost and restarted", required=False),
    _run(
        "retries", long, "--retry-unexpected N: a failure no entry explains is run again up to N times", required=False
    ),
    _run("repeat", long, "--repeat N: every test run N times", required=False),
)

#: The fields that are the test's own; the others are the run's provenance (the same in each of its records).
PER_TEST_FIELDS = frozenset(f.name for f in RESULT.fields if f.per_test)

#: ``cs-harness.cell/1``: a matrix cell that could not be built or run.
CELL = struct(
    Field("record", string, f"the schema: {CELL_KIND}", reported=True),
    Field("matrix", string, "the matrix id", reported=True),
    Field("cell", string, "the cell's id", reported=True),
    Field("labels", map_of(json_value), "the cell's labels (its repeat a number)", reported=True),
    Field("requested", json_value, "what the cell asked for"),
    Field("stage", string, "install, probe, run...: where it stopped", reported=True),
    Field("reason", string, "why", reported=True),
    Field("at", string, "when (ISO 8601, UTC)", reported=True),
)

"""The composition root: where the front ends get their plug-ins and their run.

The ``harness`` CLI, the pytest plugin and the prose tests' conftest build
runs only here, from one options table (:mod:`harness.app.options`) and the
plug-in table (:mod:`harness.engine.plugins`), so the three cannot drift
apart: same options, same plug-ins, same verdicts and records.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from harness.app.options import from_namespace
from harness.core.ports import chosen_iteration_mode
from harness.engine.plugins import FrontEnd, Registry, load_plugins
from harness.engine.run import HarnessRun, RunOptions


def plugins() -> Registry:
    return load_plugins()


def new_run(options: RunOptions) -> HarnessRun:
    """A run (not yet started: use it as a context manager) with every installed plug-in.

    Its records name the rules each test checks (``rules``), from the project's mapping. Raises
    :class:`~harness.core.ports.DriverUnavailable` when the driver does not offer the run's ``--iteration-mode``.
    """
    if options.rules is None:
        options.rules = rule_index(options.provenance)
    run = HarnessRun(options, plugins())
    # A mode the driver does not offer is refused before the target starts (DriverUnavailable: exit 2), naming the
    # driver's modes; the executor's are known once its hello is in, which making the driver waited for.
    chosen_iteration_mode(run.driver, options.settings.iteration_mode)
    return run


def front_end(args: Any) -> FrontEnd:
    """What a plug-in's command (``harness campaign``) gets from the app: its run options, read by the one
    options table, and :func:`new_run`."""
    return FrontEnd(from_namespace(args), new_run)


def rule_index(provenance: dict[str, Any], stream: TextIO | None = None) -> Any:
    """The project's test-to-rule mapping; a broken mapping is said aloud and recorded, and only the ids
    tests name in their descriptions are used.

    It knows each rule's level from the catalogues and the traces, so that an unlisted failure of a test that
    checks only SHOULD-level rules is a recommendation not followed; levels that cannot be read are said aloud
    and recorded, and every rule then counts as a MUST."""
    from harness.core.rules import RuleIndex
    from harness.formats.rule_files import RuleFileError, load_catalogues, load_mapping
    from harness.formats.rule_traces import load_traces

    try:
        index = load_mapping()
    except RuleFileError as exc:
        print(
            f"harness: WARNING: {exc}; records name only the rule ids in test descriptions", file=stream or sys.stderr
        )
        provenance["rules_problem"] = str(exc)
        return RuleIndex()
    try:
        levels = {rule.id: rule.level for catalogue in load_catalogues() for rule in catalogue.rules}
        traced = {trace.test: tuple((a.rule, a.level) for a in trace.asserts) for trace in load_traces().tests}
    except RuleFileError as exc:
        print(f"harness: WARNING: {exc}; every rule counts as a MUST", file=stream or sys.stderr)
        provenance["rule_levels_problem"] = str(exc)
        return index
    return index.with_levels(levels, traced)


def warn_plugin_problems(stream: TextIO = sys.stderr) -> None:
    """Say which plug-ins could not be installed; the run's records say it too (``plugin_problems``)."""
    for problem in plugins().problems:
        print(f"harness: plug-in not installed: {problem}", file=stream)


def note_plugin_problems(options: Any) -> None:
    """The plug-ins that could not be installed, as the run's notes (a failure under ``--strict``)."""
    for problem in plugins().problems:
        options.notes.add("plugin-not-installed", f"plug-in not installed: {problem}")


def collect(suite: str, specs: list[Any]) -> list[Any]:
    """The tests of ``--suite NAME[,NAME...]`` (``all``: every suite that belongs in it), in the suites' order."""
    table = plugins().suites
    names = set(suite.split(","))
    chosen = sorted(
        (s for s in table.values() if s.name in names or ("all" in names and s.in_all)), key=lambda s: s.order
    )
    return [test for entry in chosen for test in entry.collect(specs)]


def unselected_suite_files(suite: str) -> set[str]:
    """The files (test id parts before ``::``) of the code-defined suites of ``--suite all`` that ``--suite`` did
    not choose (prose, checks): the run's notes tell an expected-outcomes entry for one of them (another suite's)
    from a stale one. A suite asked for by name only (a campaign, which needs the ``faults`` extra) is not
    collected: its entries are judged as before."""
    names = set(suite.split(","))
    if "all" in names:
        return set()
    return {
        test.test_id.split("::", 1)[0]
        for entry in plugins().suites.values()
        if entry.in_all and entry.name != "spec" and entry.name not in names
        for test in entry.collect([])
    }


def prepare(job: Any) -> Any:
    """A :class:`~harness.app.run_job.RunJob`'s options, with its ``--specs`` sources resolved (fetched if need be,
    in place: ``job.specs`` are paths after) and named in the provenance."""
    from harness.app.spec_sources import resolve

    job.specs = [resolve(str(spec)).path for spec in job.specs or []]
    options = job.options
    if job.specs:
        note_spec_sources(options, job.specs)
    note_plugin_problems(options)
    plugins().check_driver(options.driver)  # a driver this machine cannot run is refused before anything starts
    return options


def note_spec_sources(options: Any, specs: list[Any]) -> None:
    """The ``--specs`` roots in the provenance; entries of their folders never opened (not regular files) are said
    now, and a strict run fails on them."""
    from harness.app.spec_sources import provenance

    def unread(words: str) -> None:
        print(words, file=sys.stderr)
        options.notes.add("spec-entry-not-read", words.removeprefix("harness: note: "))

    options.provenance["spec_sources"] = provenance(specs, say=unread)


def select(args: Any) -> list[Any]:
    """The tests ``harness run`` runs: ``--suite``'s, narrowed by ``-k``; the same in every worker."""
    return selection(args)[1]


def selection(args: Any) -> tuple[list[Any], list[Any]]:
    """Every test ``harness run`` loads, and the ones it runs: narrowed by ``-k``, where a miscounted file's pin
    error (:mod:`harness.formats.pins`) stays while any test of that file does."""
    from harness.formats.pins import PIN_ERROR

    loaded = collect(args.suite, args.specs)
    if not args.keyword:
        return loaded, loaded
    files = {t.file for t in loaded if args.keyword in t.test_id}
    return loaded, [
        t
        for t in loaded
        if args.keyword in t.test_id or (t.spec_file is not None and t.name == PIN_ERROR and t.file in files)
    ]


def note_schemas(options: Any, tests: list[Any], warn: Any = None) -> None:
    """Which schemas checked the run's files, in the provenance; files loaded unchecked are said aloud.

    ``schema: none`` in the provenance means at least one file was loaded without its schema.
    """
    used = sorted({test.schema for test in tests if test.schema})
    if not used:
        return
    unchecked = sorted({test.file for test in tests if test.schema == "none"})
    options.provenance["schema"] = "none" if unchecked else used
    if unchecked:
        consequence = (
            "their tests are errors (--require-schema)"
            if options.settings.require_schema
            else "a file that should be rejected may pass; --require-schema makes this an error"
        )
        words = (
            f"no unified-format JSON schema found for {len(unchecked)} file(s) (e.g. {unchecked[0]}): loaded "
            f"without schema validation; {consequence}. Give the schema folder with HARNESS_UNIFIED_SCHEMA_DIR, "
            "or fetch it: git:https://github.com/mongodb/specifications@COMMIT#source/unified-test-format"
        )
        options.notes.add("no-schema", words)
        if warn is not None:
            warn(f"harness: WARNING: {words}")


def note_pins(options: Any, tests: list[Any], warn: Any = None) -> None:
    """Which of the run's spec files are pinned (docs/pins.md), in the provenance (``pins``); files no pin knows
    are said aloud, and each pinned file's selected tests must each produce a result (``--strict``)."""
    from collections import Counter

    from harness.formats.pins import CHANGED, MISCOUNTED, PINNED, UNPINNED, PinIndex, file_statuses

    index = PinIndex.load()
    options.notes.pinned_stems = index.stems()  # an expected-outcomes entry for a file no pin knows is stale
    statuses = file_statuses(tests, index)
    if not statuses:
        return
    by_status = {
        status: [file for file, found in statuses.items() if found == status]
        for status in (PINNED, MISCOUNTED, CHANGED, UNPINNED)
    }
    unsettled = {status: files for status, files in by_status.items() if files and status != PINNED}
    options.provenance["pins"] = {"pinned": len(by_status[PINNED]), **unsettled}
    selected = Counter(test.file for test in tests)
    options.notes.pinned = {file: selected[file] for file in by_status[PINNED]}
    said = {
        UNPINNED: ("unpinned", "not pinned in specs/pins/ (a newer corpus?): run, their test counts unchecked"),
        CHANGED: (
            "pin-changed",
            (
                "differ from the pinned file at their path (a newer corpus?): run as "
                "unpinned; harness specs pin SOURCE refreshes a pin"
            ),
        ),
    }
    for status, (kind, meaning) in said.items():
        files = by_status[status]
        if files:
            words = f"{len(files)} spec file(s) {meaning}: {', '.join(files[:3])}{', ...' if len(files) > 3 else ''}"
            options.notes.add(kind, words)
            if warn is not None:
                warn(f"harness: note: {words}")

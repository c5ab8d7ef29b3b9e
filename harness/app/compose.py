"""The composition root: where the front ends get their plug-ins and their run.

The ``harness`` CLI, the pytest plugin and the prose tests' conftest build
runs only here, from one options table (:mod:`harness.app.options`) and the
plug-in table (:mod:`harness.engine.plugins`), so the three cannot drift
apart: same options, same plug-ins, same verdicts and records.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from harness.engine.plugins import Registry, load_plugins
from harness.engine.run import HarnessRun, RunOptions


def plugins() -> Registry:
    return load_plugins()


def new_run(options: RunOptions) -> HarnessRun:
    """A run (not yet started: use it as a context manager) with every installed plug-in.

    Its records name the rules each test checks (``rules``), from the project's mapping.
    """
    if options.rules is None:
        options.rules = rule_index(options.provenance)
    return HarnessRun(options, plugins())


def rule_index(provenance: dict[str, Any], stream: TextIO | None = None) -> Any:
    """The project's test-to-rule mapping; a broken mapping is said aloud and recorded, and only the ids
    tests name in their descriptions are used."""
    from harness.core.rules import RuleIndex
    from harness.formats.rule_files import RuleFileError, load_mapping

    try:
        return load_mapping()
    except RuleFileError as exc:
        print(f"harness: WARNING: {exc}; records name only the rule ids in test descriptions",
              file=stream or sys.stderr)
        provenance["rules_problem"] = str(exc)
        return RuleIndex()


def warn_plugin_problems(stream: TextIO = sys.stderr) -> None:
    """Say which plug-ins could not be installed; the run's records say it too (``plugin_problems``)."""
    for problem in plugins().problems:
        print(f"harness: plug-in not installed: {problem}", file=stream)


def collect(suite: str, specs: list[Any]) -> list[Any]:
    """The tests of ``--suite NAME`` (``all``: every suite that belongs in it, in their order)."""
    table = plugins().suites
    if suite == "all":
        chosen = sorted((s for s in table.values() if s.in_all), key=lambda s: s.order)
    else:
        chosen = [table[suite]]
    return [test for entry in chosen for test in entry.collect(specs)]


def prepare(args: Any) -> Any:
    """``harness run``'s options: ``--specs`` sources resolved (fetched if need be) and named in the provenance."""
    from harness.app.options import from_namespace
    from harness.app.spec_sources import provenance, resolve

    args.specs = [resolve(str(spec)).path for spec in args.specs or []]
    options = from_namespace(args)
    if args.specs:
        options.provenance["spec_sources"] = provenance(args.specs)
    return options


def select(args: Any) -> list[Any]:
    """The tests ``harness run`` runs: ``--suite``'s, narrowed by ``-k``; the same in every worker."""
    tests = collect(args.suite, args.specs)
    if args.keyword:
        tests = [t for t in tests if args.keyword in t.test_id]
    return tests


def note_schemas(options: Any, tests: list[Any], warn: Any = None) -> None:
    """Which schemas checked the run's files, in the provenance; files loaded unchecked are said aloud.

    ``schema: none`` in the provenance means at least one file was loaded without its schema.
    """
    used = sorted({test.schema for test in tests if getattr(test, "schema", None)})
    if not used:
        return
    unchecked = sorted({test.file for test in tests if getattr(test, "schema", None) == "none"})
    options.provenance["schema"] = "none" if unchecked else used
    if unchecked and warn is not None:
        consequence = ("their tests are errors (--require-schema)" if options.settings.require_schema else
                       "a file that should be rejected may pass; --require-schema makes this an error")
        warn(f"harness: WARNING: no unified-format JSON schema found for {len(unchecked)} file(s) (e.g. "
             f"{unchecked[0]}): loaded without schema validation; {consequence}. Give the schema folder with "
             "HARNESS_UNIFIED_SCHEMA_DIR, or fetch it: git:https://github.com/mongodb/specifications@COMMIT"
             "#source/unified-test-format")

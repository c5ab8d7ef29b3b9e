"""The harness's pytest plugin, once a session asks for it: ``pytest --specs DIR`` collects each spec test.

:mod:`harness.app.pytest_plugin` (the entry point pytest loads in every
session) registers this module only when the session asks for the harness;
see there.

Items are named ``<file>::<description>``, so ``-k``, ``--junitxml``, ``-x``
and the rest of pytest work as usual. Every item runs through the same
:class:`~harness.engine.run.HarnessRun` as the ``harness`` CLI (one target for
the whole session, started at the first item), so verdicts and result
records are the same. Outcomes map as:

* passed -> pass; skipped -> skip with the reason;
* a failure or error listed in the expected-outcomes file -> xfail with its reason;
* an unexpected failure or error -> fail with the harness's message;
* an unexpected pass of a listed test -> fail (the entry is stale).

Under pytest-xdist (``-n N``) each worker runs its own harness-started
target, so tests that drop and recreate databases never share a server; the
workers' records share one run id and go to the one ``--results`` file. A
target the harness does not start (``uri=``) is refused with ``-n``.

Every item that ran through the harness carries its full result record as a
JUnit ``<property name="cs-harness.result">`` (one JSON string), so
``harness report`` reads ``--junitxml`` files with the same provenance and the
harness's own outcome (an xfail is still a ``failed`` verdict there).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from harness.app.options import add_pytest_options, from_pytest_config
from harness.core.expectations import UNEXPECTED_PASS
from harness.core.model import SpecTest
from harness.core.records import record_line
from harness.core.verdicts import PASSED, SKIPPED
from harness.formats.loaders import load_file
from harness.formats.spec_reader import SPEC_SUFFIXES

_RUN_KEY = pytest.StashKey[Any]()
_XDIST_RUN_ID = pytest.StashKey[str]()
_TESTS_KEY = pytest.StashKey[list]()
_PINS_KEY = pytest.StashKey[Any]()
#: (test id, file) of every result the session produced, for the run's end-of-run notes (``--harness-strict``).
_PRODUCED_KEY = pytest.StashKey[list]()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Remember the collected spec tests: the run says which schemas checked them."""
    config.stash[_TESTS_KEY] = [item.test for item in items if isinstance(item, SpecItem)]


#: The JUnit property holding a test's result record (read by ``harness report``).
RESULT_PROPERTY = "cs-harness.result"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("changestream-harness", "change-stream conformance harness")
    add_pytest_options(group)


def _spec_roots(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getoption("specs") or []]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in SPEC_SUFFIXES:
        return None
    resolved = file_path.resolve()
    roots = _spec_roots(parent.config)
    if not any(resolved == root or root in resolved.parents for root in roots):
        return None
    explicit = resolved in roots
    if resolved.suffix == ".json" and not explicit and resolved.with_suffix(".yml").exists():
        return None  # one encoding per test file, as the CLI does (the YAML is the source)
    return SpecFile.from_parent(parent, path=file_path)


class SpecFile(pytest.File):
    def collect(self):
        from harness.formats.pins import PinIndex, pin_checked

        if _PINS_KEY not in self.config.stash:
            self.config.stash[_PINS_KEY] = PinIndex.load()
        for test in pin_checked([(self.path, load_file(self.path))], self.config.stash[_PINS_KEY]):
            yield SpecItem.from_parent(self, name=test.description, test=test)


class SpecFailure(Exception):
    """A spec test that failed or errored; its message is the harness's report."""


def report_to_pytest(result: Any, node: pytest.Item | None = None) -> None:
    """A harness result as a pytest outcome, the same for spec items and code-defined checks.

    Expected outcomes pass or skip; listed deviations are xfail with their reason;
    anything unexpected, including a pass of a listed test, fails. With ``node``,
    the result record is attached to it first (a JUnit property).
    """
    if node is not None:
        node.user_properties.append((RESULT_PROPERTY, record_line(result.record)))
        node.config.stash.setdefault(_PRODUCED_KEY, []).append(
            (result.test_id, result.file, result.outcome, result.classification.entries, result.record)
        )
    kind = result.classification.kind
    if result.classification.expected:
        if result.outcome == PASSED:
            return
        if result.outcome == SKIPPED:
            pytest.skip(result.message)
        pytest.xfail(f"{kind}: {result.classification.reason}")
    if kind == UNEXPECTED_PASS:
        raise SpecFailure(f"unexpected pass: the expected-outcomes file says {result.classification.reason}")
    raise SpecFailure(f"{result.outcome}: {result.message}")


class SpecItem(pytest.Item):
    def __init__(self, *, test: SpecTest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.test = test
        self.add_marker(pytest.mark.spec_format(test.format))

    def runtest(self) -> None:
        report_to_pytest(_harness_run(self.config).run_test(self.test), self)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, SpecFailure):
            where = f"{self.test.file}" + (f":{self.test.line}" if self.test.line else "")
            return f"{where}: {self.test.description}\n{excinfo.value}"
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, (self.test.line - 1) if self.test.line else None, f"{self.test.format}: {self.name}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spec_format(name): the spec format a collected test came from")
    _refuse_strict_under_xdist(config)


def _refuse_strict_under_xdist(config: pytest.Config) -> None:
    """``-n N --harness-strict`` does not start: each pytest-xdist worker runs a share of the tests, so no process
    sees the whole run to judge its notes, and records saying ``strict: true`` would promise checks nobody made."""
    workers = config.getoption("numprocesses", default=None)
    if workers and getattr(config, "workerinput", None) is None and config.getoption("harness_strict", default=False):
        raise pytest.UsageError(
            f"--harness-strict cannot judge a run split across pytest-xdist workers (-n {workers}): no process "
            "sees every test's result. Drop -n (or give -n 0), or run it as harness run --strict -j N"
        )


def _harness_run(config: pytest.Config) -> Any:
    """The session's :class:`~harness.engine.run.HarnessRun`, started on first use and stopped at session end."""
    run = config.stash.get(_RUN_KEY, None)
    if run is None:
        from harness.app.compose import new_run
        from harness.core.expectations import ExpectationsError
        from harness.core.ports import DriverUnavailable, TargetUnavailable

        options = from_pytest_config(config)
        from harness.app.compose import note_schemas, note_spec_sources

        if options_specs := config.getoption("specs"):
            note_spec_sources(options, options_specs)
        from harness.app.compose import note_pins, note_plugin_problems

        loaded = config.stash.get(_TESTS_KEY, [])
        note_schemas(options, loaded, lambda text: print(text, file=sys.stderr))
        note_pins(options, loaded, lambda text: print(text, file=sys.stderr))
        note_plugin_problems(options)
        options.notes.loaded = [test.test_id for test in loaded]
        from harness.shared.connection_strings import redact_text

        workerinput = getattr(config, "workerinput", None)  # a pytest-xdist worker
        if workerinput is not None:
            options.run_id = workerinput.get("harness_run_id")
            from harness.app.compose import plugins

            if not plugins().isolated(options.target):
                pytest.exit(
                    f"harness: pytest-xdist workers would share the target {redact_text(options.target)!r}, which the "
                    "harness does not start; run it with -n 0, or use a harness-started target",
                    returncode=2,
                )
        try:
            run = new_run(options)
            run.__enter__()
        except (TargetUnavailable, DriverUnavailable, ExpectationsError) as exc:  # once, not again for every item
            pytest.exit(f"harness: {exc}", returncode=2)
        config.stash[_RUN_KEY] = run
    return run


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker's records carry one run id, as ``harness run -j`` gives them."""
    from harness.core.records import new_run_id

    run_id = node.config.stash.get(_XDIST_RUN_ID, None) or new_run_id()
    node.config.stash[_XDIST_RUN_ID] = run_id
    node.workerinput["harness_run_id"] = run_id


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's notes at the end, as ``harness run`` says them; under ``--harness-strict`` the ones that fail the
    run make the session fail (exit 1). Each pinned file's tests are counted as pytest selected them (``-k``)."""
    run = session.config.stash.get(_RUN_KEY, None)
    if run is None or getattr(session.config, "workerinput", None) is not None:
        return  # a pytest-xdist worker ran a share of the tests: its notes would judge the share (docs/pins.md;
        # --harness-strict with -n is refused at start, _refuse_strict_under_xdist)
    notes = run.options.notes
    produced = session.config.stash.get(_PRODUCED_KEY, [])
    selected = [item.test.file for item in session.items if isinstance(item, SpecItem)]
    notes.pinned = {file: selected.count(file) for file in notes.pinned if file in selected}
    notes.loaded = [*(notes.loaded or []), *(test_id for test_id, *_ in produced)]
    closing = notes.said_by_the_run() + notes.close(
        run.expectations,
        [(test_id, file) for test_id, file, *_ in produced],
        {ref for *_, entries, _ in produced for ref in entries},
        {test_id for test_id, _, outcome, _, record in produced if outcome == SKIPPED or record.get("not_reached")},
    )
    failing = notes.failures()
    say = getattr(
        session.config.pluginmanager.get_plugin("terminalreporter"),
        "write_line",
        lambda text: print(text, file=sys.stderr),
    )
    for note in closing:
        if note not in failing:
            say(f"harness: note: {note.words}")
    for note in failing:
        say(f"harness: STRICT: {note.words}")
    if failing and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN_KEY, None)
    if run is not None:
        config.stash[_RUN_KEY] = None
        run.__exit__(None, None, None)


@pytest.fixture(scope="session")
def harness_run(pytestconfig: pytest.Config) -> Any:
    """The run's target, driver and fail points, for code-defined tests (prose tests)."""
    return _harness_run(pytestconfig)

"""``harness``: the command line.

``harness run --specs DIR ...`` loads every spec file under the given paths,
runs each test on the target with the driver, prints progress and a summary,
appends one result record per test to ``--results``, and exits 0 only when
every outcome is what the expected-outcomes file says (1 otherwise, or on a
note under ``--strict``; 2 when the run could not start or its results could
not be written).

Every command's output may be cut short by its reader (``harness run | head``):
the command then stops (no new test starts, the run's clean-up runs: fail
points off, targets stopped) and exits 141, as a process killed by SIGPIPE
does, without a traceback (:func:`main`, docs/outputs.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.app import compose
from harness.app.options import add_cli_options
from harness.app.reporting import ConsoleReporter
from harness.app.spec_sources import SpecSourceError
from harness.core.expectations import ExpectationsError
from harness.core.ports import DriverUnavailable, TargetUnavailable
from harness.core.terminal_text import printable
from harness.engine.results_store import ResultsUnwritable, check_writable


@dataclass(frozen=True)
class AppCommand:
    """One ``harness`` subcommand: its help, what declares its options, what runs it (its exit status)."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    #: Whether it starts processes (workers, servers, executors, builds): everything they start ends with them,
    #: however the harness process dies (harness/engine/child_processes.py).
    starts_processes: bool = False


def commands() -> dict[str, AppCommand]:
    """Every subcommand in the order ``harness --help`` lists them: the app's (:data:`COMMANDS`), then the
    plug-ins' (``harness campaign``), each declared once."""
    return {**COMMANDS, **{name: _plugin_command(command) for name, command in compose.plugins().commands.items()}}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand; with ``only``, the others are listed but their options not built (start-up time)."""
    parser = argparse.ArgumentParser(prog="harness", description="MongoDB change-stream conformance harness")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True)
    for name, command in commands().items():
        sub = subcommands.add_parser(name, help=command.help)
        if only is None or only == name:
            command.add_arguments(sub)
    return parser


def _plugin_command(command: Any) -> AppCommand:
    """A plug-in's command: the run-options rows it takes, its own options and ``--label``; run on the composed run."""

    def add_arguments(sub: argparse.ArgumentParser) -> None:
        add_cli_options(sub, only=command.run_options)
        command.add_arguments(sub)
        add_label_argument(sub)

    return AppCommand(
        command.help,
        add_arguments,
        lambda args: int(command.run(args, compose.front_end(args))),
        starts_processes=command.starts_processes,
    )


def _executor_check_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.executor_check import add_arguments

    add_arguments(sub)


def command_executor_check(args: argparse.Namespace) -> int:
    from harness.app.executor_check import command_executor_check as run_check

    return run_check(args)


def _matrix_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.matrix.cli import add_matrix_arguments

    add_matrix_arguments(sub)


def _report_arguments(sub: argparse.ArgumentParser) -> None:
    from reports.cli import add_report_arguments

    add_report_arguments(sub)


def _history_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.history_command import add_history_command_arguments

    add_history_command_arguments(sub)


def _query_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.query_command import add_query_command_arguments

    add_query_command_arguments(sub)


def _spark_arguments(sub: argparse.ArgumentParser) -> None:
    from reports.spark_command import add_spark_arguments

    add_spark_arguments(sub)


def _coverage_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.coverage import add_coverage_arguments

    add_coverage_arguments(sub)


def _certify_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.certify import add_certify_arguments

    add_certify_arguments(sub)
    add_label_argument(sub)


def add_specs_arguments(specs: argparse.ArgumentParser) -> None:
    actions = specs.add_subparsers(dest="specs_action", required=True)
    fetch = actions.add_parser("fetch", help="fetch and cache spec files; print where they are")
    fetch.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="pypi:pymongo==4.20.0 (its change-stream unified tests), pypi:pymongo==4.20.0#selftests, "
        "or git:URL@COMMIT[#PATH] (a specifications checkout)",
    )
    pin = actions.add_parser(
        "pin",
        help="write or refresh a source's manifest in specs/pins/: each spec file's "
        "SHA-256 and test count (docs/pins.md)",
    )
    pin.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a path (run from the project's top folder), project:PATH, pypi:pymongo==4.20.0 or git:URL@COMMIT[#PATH]",
    )


def command_specs(args: argparse.Namespace) -> int:
    from harness.app.pin_writer import pin_source

    actions = {"fetch": _fetch_source, "pin": pin_source}
    status = 0
    for source in args.sources:
        try:
            print(actions[args.specs_action](source))
        except SpecSourceError as exc:
            print(f"harness specs: {exc}", file=sys.stderr)
            status = 2
    return status


def _fetch_source(source: str) -> str:
    from harness.app.spec_sources import resolve

    resolved = resolve(source)
    files = sum(1 for p in resolved.path.rglob("*") if p.suffix in (".yml", ".yaml", ".json"))
    detail = resolved.origin.get("sha256") or resolved.origin.get("commit") or ""
    return f"{source}: {resolved.path} ({files} spec files; {resolved.origin.get('kind')} {detail})".rstrip()


def add_label_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--label",
        dest="labels",
        action="append",
        type=parse_label,
        default=[],
        metavar="KEY=VALUE",
        help="a provenance label written into every record (repeatable)",
    )


def parse_label(text: str) -> tuple[str, str]:
    """``KEY=VALUE``; a connection string in the value has its password hidden (labels go into every record)."""
    from harness.shared.connection_strings import redact_text

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"a label is KEY=VALUE, got {redact_text(text)!r}")
    return key.strip(), redact_text(value)


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    add_cli_options(run)
    suites = compose.plugins().suites
    run.add_argument(
        "--suite",
        type=_suite_choice([*sorted(suites), "all"]),
        default="spec",
        metavar="SUITE[,SUITE...]",
        help="; ".join(f"{name}: {suite.help}" for name, suite in sorted(suites.items()))
        + "; all: "
        + " and ".join(n for n, s in sorted(suites.items(), key=lambda i: i[1].order) if s.in_all)
        + " (default: spec; several, comma-separated, run as one run)",
    )
    run.add_argument("-k", dest="keyword", help="only tests whose id contains this text")
    run.add_argument(
        "-j",
        "--jobs",
        type=_positive,
        default=1,
        help="run tests in N worker processes, each with a target of its own (default 1)",
    )
    run.add_argument(
        "--worker-target",
        dest="worker_targets",
        action="append",
        default=[],
        metavar="TARGET",
        help="with -j and a target the harness does not start (uri=...): another deployment, one "
        "per extra worker (repeatable)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no per-test lines, only failures and the summary")
    add_label_argument(run)


def _suite_choice(names: list[str]) -> Any:
    """``--suite``'s parser: one suite name or several, comma-separated, each one the plug-in table knows."""

    def parse(text: str) -> str:
        unknown = [name for name in text.split(",") if name not in names]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(names)}")
        return text

    return parse


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number of at least 1, got {text!r}")
    return value


def command_run(args: argparse.Namespace) -> int:
    from harness.app.run_job import RunJob

    return run_job(RunJob.from_namespace(args))


def run_job(job: Any) -> int:
    """``harness run``: the tests of a :class:`~harness.app.run_job.RunJob`, one by one or in ``-j`` workers, with
    their records and summary; the exit status (``harness certify`` calls it with a job of its own)."""
    from harness.app.stopping import RunInterrupted
    from harness.formats.pins import PinFileError

    compose.warn_plugin_problems()
    try:
        options = compose.prepare(job)
        loaded, tests = compose.selection(job)
    except (SpecSourceError, PinFileError, DriverUnavailable) as exc:
        _say(f"harness: {exc}")
        return 2
    if not tests:
        selected = f" matching -k {job.keyword!r}" if job.keyword else ""
        _say(f"harness: nothing to run{selected} (give --specs PATH, or --suite prose)")
        return 2
    check_writable(options.results)  # before any target starts: a run whose verdicts cannot be kept is not begun
    compose.note_schemas(options, tests, lambda text: print(text, file=sys.stderr))
    compose.note_pins(options, tests, lambda text: print(text, file=sys.stderr))
    options.notes.loaded = [test.test_id for test in loaded]
    options.notes.unselected_files = compose.unselected_suite_files(job.suite)
    try:
        if job.jobs > 1:
            from functools import partial

            from harness.app.parallel import run_parallel, worker_targets

            targets = worker_targets(
                compose.plugins(),
                options.target,
                min(job.jobs, len(tests)),
                job.worker_targets,
                lambda text: print(text, file=sys.stderr),
            )
            if len(targets) > 1:
                options.rules = compose.rule_index(
                    options.provenance
                )  # before the fork: workers and lost tests share it
                return run_parallel(tests, options, targets, job.quiet, collect=partial(compose.select, job))
        return _run_sequentially(tests, options, job.quiet)
    except (TargetUnavailable, DriverUnavailable, ExpectationsError) as exc:
        _say(f"harness: {exc}")
        return 2
    except RunInterrupted as stop:  # before the first test or after the last (starting or stopping the target)
        print(f"harness: {stop}", file=sys.stderr)
        return stop.exit_status


def _run_sequentially(tests: list, options: Any, quiet: bool) -> int:
    """One test after another; a stop signal ends the run cleanly (:mod:`harness.app.stopping`): the test in
    flight is torn down and recorded as an ``error`` naming the signal, the summary says so, and the run's clean-up
    (every fail point off, the target stopped) runs before the exit status 128 + the signal's number."""
    from harness.app.durations import Durations
    from harness.app.stopping import RunInterrupted, stopping_on_signals

    durations = Durations.load()
    with stopping_on_signals(), compose.new_run(options) as run:
        reporter = ConsoleReporter(total=len(tests), quiet=quiet, notes=options.notes)
        reporter.start(run)
        try:  # a results file that fails or a closed output ends the loop too: the run's clean-up, no summary
            for test in tests:
                reporter.begin(test.test_id)
                try:
                    result = run.run_test(test)
                except RunInterrupted as stop:
                    cut_short = run.record_interrupted(test, str(stop))
                    if cut_short is not None:
                        reporter.report(cut_short)
                    raise
                durations.note(result.test_id, result.duration_s)
                reporter.report(result)
        except RunInterrupted as stop:
            reporter.finish(interrupted=str(stop))
            return stop.exit_status
        finally:
            reporter.stop_live()
        durations.save()
        return reporter.finish()


def command_matrix(args: argparse.Namespace) -> int:
    from harness.matrix.cli import command_matrix as run_matrix

    return run_matrix(args)


def command_report(args: argparse.Namespace) -> int:
    from harness.app.certify import with_rule_catalogue
    from reports.cli import command_report as run_report

    args.spark_server_state = spark_server_state()
    return run_report(with_class_archive(with_rule_catalogue(args)))


def spark_server_state() -> Path:
    """Where ``harness spark start`` keeps its server's record, pid file and log: the harness's cache."""
    from harness.formats import cache

    return cache.cache_dir() / "spark-connect"


def command_history(args: argparse.Namespace) -> int:
    from harness.app.history_command import command_history as run_history

    return run_history(args, spark_server_state())


def command_query(args: argparse.Namespace) -> int:
    from harness.app.query_command import command_query as run_query

    return run_query(args, spark_server_state())


def command_spark(args: argparse.Namespace) -> int:
    from reports.spark_command import command_spark as run_spark

    return run_spark(args, spark_server_state())


def with_class_archive(args: argparse.Namespace) -> argparse.Namespace:
    """``harness report``'s arguments with the folder of the JVM class archive: the harness's cache, when on."""
    from harness.formats import cache

    if args.class_archive is None and cache.enabled():
        args.class_archive = cache.cache_dir() / "spark-classes"
    return args


def command_certify(args: argparse.Namespace) -> int:
    from harness.app.certify import command_certify as run_certify

    return run_certify(args)


def command_coverage(args: argparse.Namespace) -> int:
    from harness.app.coverage import command_coverage as run_coverage

    return run_coverage(args)


def _catalogue_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.catalogue import add_catalogue_arguments

    add_catalogue_arguments(sub)


def command_catalogue(args: argparse.Namespace) -> int:
    from harness.app.catalogue import command_catalogue as show

    return show(args)


def _compare_arguments(sub: argparse.ArgumentParser) -> None:
    from harness.app.compare_results import add_compare_arguments

    add_compare_arguments(sub)


def command_compare(args: argparse.Namespace) -> int:
    from harness.app.compare_results import command_compare as compare

    return compare(args)


#: The app's own commands, one row each; plug-ins add theirs (``harness campaign``) through the plug-in table.
COMMANDS: dict[str, AppCommand] = {
    "run": AppCommand("run spec tests against a target", add_run_arguments, command_run, starts_processes=True),
    "specs": AppCommand(
        "get the spec files and pin them: harness specs fetch|pin SOURCE", add_specs_arguments, command_specs
    ),
    "matrix": AppCommand(
        "run suites over driver x target versions, each cell in its own cached environment",
        _matrix_arguments,
        command_matrix,
        starts_processes=True,
    ),
    "report": AppCommand(
        "PySpark report over results files: conformance matrix, regressions, flakiness, failure clusters, HTML page",
        _report_arguments,
        command_report,
    ),
    "history": AppCommand(
        "a test's status in every run of a history, and where it changed", _history_arguments, command_history
    ),
    "query": AppCommand(
        'Spark SQL over a history\'s named views: harness query "SELECT ..."', _query_arguments, command_query
    ),
    "compare": AppCommand(
        "do two results files give the same verdicts, test by test (outcome and causes)?",
        _compare_arguments,
        command_compare,
    ),
    "spark": AppCommand(
        "keep one Spark Connect server running on 127.0.0.1 for reports: harness spark start|stop|status",
        _spark_arguments,
        command_spark,
    ),
    "executor-check": AppCommand(
        "check a driver executor against docs/executor-protocol.md, message by message",
        _executor_check_arguments,
        command_executor_check,
        starts_processes=True,
    ),
    "coverage": AppCommand(
        "every MUST and SHOULD of the change-streams spec and the tests that check it",
        _coverage_arguments,
        command_coverage,
    ),
    "certify": AppCommand(
        "run the main job strictly and write a conformance statement for the driver and target (docs/certify.md)",
        _certify_arguments,
        command_certify,
        starts_processes=True,
    ),
    "catalogue": AppCommand(
        "the drivers, targets and suites the harness has (--markdown: docs/catalogue.md)",
        _catalogue_arguments,
        command_catalogue,
    ),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    only = argv[0] if argv and not argv[0].startswith("-") else None
    args = build_parser(only).parse_args(argv)
    command = commands()[args.command]
    if command.starts_processes:
        from harness.engine import child_processes

        child_processes.ensure_lifeline()
    try:
        return command.run(args)
    except ResultsUnwritable as exc:  # the run's clean-up has run: its fail points are off, its target stopped
        _say(f"harness: {exc}")
        return 2
    except BrokenPipeError:
        if not _output_closed():
            raise  # another pipe (a driver's executor, a worker): a fault of the harness, with its traceback
        _drop_output()
        return 128 + signal.SIGPIPE


def _say(text: str) -> None:
    """One line on stderr; it may quote a spec file or a server, so its control characters are shown."""
    print(printable(text), file=sys.stderr)


def _output_closed() -> bool:
    """Whether the reader of our stdout or stderr went away (``| head``): the write end of a pipe with no
    reader polls as an error."""
    poller = select.poll()
    for descriptor in _output_descriptors():
        poller.register(descriptor, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def _drop_output() -> None:
    """Send what is still buffered for stdout and stderr nowhere, so the interpreter's last flush at exit does
    not fail on the closed pipe again (and print a traceback about it)."""
    nowhere = os.open(os.devnull, os.O_WRONLY)
    for descriptor in _output_descriptors():
        os.dup2(nowhere, descriptor)
    os.close(nowhere)


def _output_descriptors() -> list[int]:
    """The file descriptors of the process's stdout and stderr (none for a stream with no file behind it)."""
    descriptors = []
    for stream in (sys.__stdout__, sys.__stderr__):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                descriptors.append(stream.fileno())
    return descriptors


if __name__ == "__main__":
    sys.exit(main())

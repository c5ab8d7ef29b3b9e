"""``harness executor-check CMD``: tells an executor's author which parts of the protocol it gets wrong.

Each check sends a few messages (docs/executor-protocol.md) and prints ``ok`` or what was wrong with which
message; the checks live with the executor driver plug-in (:mod:`harness.drivers.executor.checks`, one module per
check group, sequenced by its ``runner``). This command chooses the executor (a command line, or the one
``--driver`` names in the catalogue), and the server: ``--uri`` when given, otherwise a ``--target`` the harness
starts itself (the run-options row ``harness run`` takes; default the embedded server), so an author needs no
deployment of their own.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from harness.core.ports import TargetUnavailable
from harness.drivers.executor.checks.runner import run_checks
from harness.shared.connection_strings import redact_text


def run_checks_on_target(command: str | list[str], target_spec: str, out: Callable[[str], None] = print) -> int:
    """Start ``--target NAME[=ARG]`` from the plug-in table (as ``harness run`` does), run every check on it, stop it;
    2 when the target cannot start."""
    from harness.app import compose

    try:
        target = compose.plugins().make_target(target_spec)
        target.start()
    except TargetUnavailable as exc:
        out(f"FAIL start the target {redact_text(target_spec)!r}: {redact_text(str(exc))}")
        return 2
    try:
        out(f"target {redact_text(target_spec)}: {redact_text(target.uri)}")
        return run_checks(command, target.uri, out)
    finally:
        target.stop()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.app.options import add_cli_options

    parser.add_argument(
        "executor", nargs="?", help="the executor's command line (one argument; split as a shell would)"
    )
    from harness.app.catalogue import executor_help
    from harness.app.compose import plugins

    parser.add_argument("--driver", help=executor_help(plugins()))
    add_cli_options(parser, only=("target", "allow_destructive"))
    parser.add_argument(
        "--uri",
        help="a running MongoDB deployment for the checks that need a server, instead of starting --target (the "
        "checks write to its executor_check database: a deployment off the loopback interface needs "
        "--allow-destructive)",
    )


def _executor_of(args: argparse.Namespace) -> str | list[str]:
    """The command line to check: given, or the one ``--driver`` names (refused with the reason, exit 2)."""
    from harness.app.catalogue import executor_names
    from harness.app.compose import plugins
    from harness.core.ports import DriverUnavailable

    if (args.executor is None) == (args.driver is None):
        raise _Refused("give the executor's command line or --driver NAME (one of them)")
    if args.executor is not None:
        if args.executor in plugins().drivers:  # `harness executor-check node` would start Node's REPL
            raise _Refused(f"{args.executor!r} is a driver's name: give --driver {args.executor}")
        return str(args.executor)
    try:
        command = plugins().executor_command(args.driver)
    except DriverUnavailable as exc:
        raise _Refused(str(exc)) from None
    if command is None:
        known = executor_names(plugins())
        in_process = [name for name in sorted(plugins().drivers) if name not in known]
        raise _Refused(
            f"--driver {args.driver}: names no driver in an executor (executors: {', '.join(known)}; "
            f"{', '.join(in_process)} run in the harness's process)"
        )
    return command


class _Refused(Exception):
    """executor-check cannot start: the message says why."""


def command_executor_check(args: argparse.Namespace) -> int:
    try:
        executor = _executor_of(args)
    except _Refused as exc:
        print(f"harness executor-check: {exc}")
        return 2
    if args.uri:
        from harness.core.ports import TargetUnavailable
        from harness.targets.safety import check_destructive
        from harness.targets.uri_target import discovers_members, probe_members

        try:  # the same guard as a run's uri= target: the seeds, then every member they report
            check_destructive(args.uri, args.allow_destructive)
            if not args.allow_destructive and discovers_members(args.uri):
                probe_members(args.uri)
        except TargetUnavailable as exc:
            print(f"harness executor-check: {exc}")
            return 2
        return run_checks(executor, args.uri)
    return run_checks_on_target(executor, args.target)

"""``harness``: the command line.

``harness run --specs DIR ...`` loads every spec file under the given paths,
runs each test on the target with the driver, prints progress and a summary,
appends one result record per test to ``--results``, and exits 0 only when
every outcome is what the expected-outcomes file says (1 otherwise, 2 when
the run could not start).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import __version__
from harness.drivers import DRIVERS
from harness.expectations import ExpectationsError
from harness.loaders import load_paths
from harness.reporting import ConsoleReporter
from harness.app.options import add_cli_options, from_namespace
from harness.session import HarnessRun
from harness.targets import TargetUnavailable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="harness", description="MongoDB change-stream conformance harness")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run spec tests against a target")
    add_run_arguments(run)
    campaign = commands.add_parser("campaign", help="a seeded fault campaign: exactly-once delivery under faults")
    add_campaign_arguments(campaign)
    from harness.matrix.cli import add_matrix_arguments
    from reports.cli import add_report_arguments

    add_matrix_arguments(commands.add_parser("matrix", help="run suites over driver x target versions, each cell "
                                                            "in its own cached environment"))
    add_report_arguments(commands.add_parser("report", help="PySpark report over results files: conformance matrix, "
                                                            "regressions, flakiness, failure clusters, HTML page"))
    return parser


def add_campaign_arguments(campaign: argparse.ArgumentParser) -> None:
    from faults.campaign.schedule import KINDS

    campaign.add_argument("--events", type=int, default=10_000, help="documents the writer inserts (default 10000)")
    campaign.add_argument("--faults", type=int, default=50, help="faults in the schedule (default 50)")
    campaign.add_argument("--seed", type=int, default=42, help="the schedule's seed; the same seed replays it")
    campaign.add_argument("--kinds", default=",".join(KINDS),
                          help=f"comma-separated fault kinds (default all: {','.join(KINDS)})")
    campaign.add_argument("--driver", default="pymongo", choices=sorted(DRIVERS), help="driver under test")
    campaign.add_argument("--results", type=Path, help="append the campaign's JSON record to this file")
    campaign.add_argument("-q", "--quiet", action="store_true", help="no per-fault lines, only the summary")
    add_label_argument(campaign)


def add_label_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--label", dest="labels", action="append", type=parse_label, default=[], metavar="KEY=VALUE",
                        help="a provenance label written into every record (repeatable)")


def parse_label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"a label is KEY=VALUE, got {text!r}")
    return key.strip(), value


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    add_cli_options(run)
    run.add_argument("--suite", choices=sorted(SUITES), default="spec",
                     help="spec: the --specs files; prose: the prose tests; all: both (default: spec)")
    run.add_argument("-k", dest="keyword", help="only tests whose id contains this text")
    run.add_argument("-q", "--quiet", action="store_true", help="no per-test lines, only failures and the summary")
    add_label_argument(run)


def _spec_tests(args: argparse.Namespace) -> list:
    return load_paths(args.specs) if args.specs else []


def _prose_tests(args: argparse.Namespace) -> list:
    from prose_tests import load_prose_checks

    return load_prose_checks()


#: What ``--suite`` selects: lists of tests, in run order.
SUITES = {
    "spec": (_spec_tests,),
    "prose": (_prose_tests,),
    "all": (_spec_tests, _prose_tests),
}


def command_run(args: argparse.Namespace) -> int:
    tests = [test for collect in SUITES[args.suite] for test in collect(args)]
    if args.keyword:
        tests = [t for t in tests if args.keyword in t.test_id]
    if not tests:
        selected = f" matching -k {args.keyword!r}" if args.keyword else ""
        print(f"harness: nothing to run{selected} (give --specs PATH, or --suite prose)", file=sys.stderr)
        return 2
    options = from_namespace(args)
    try:
        run = HarnessRun(options)
        with run:
            reporter = ConsoleReporter(total=len(tests), quiet=args.quiet)
            reporter.start(run)
            for test in tests:
                reporter.report(run.run_test(test))
            return reporter.finish()
    except (TargetUnavailable, ExpectationsError) as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return 2


def command_campaign(args: argparse.Namespace) -> int:
    from faults.campaign.campaign import CampaignOptions, run_campaign
    from faults.campaign.report import print_summary

    options = CampaignOptions(events=args.events, faults=args.faults, seed=args.seed,
                              kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
                              driver=args.driver, results=args.results, labels=dict(args.labels),
                              progress=(lambda line: None) if args.quiet else (lambda line: print(line, flush=True)))
    try:
        result = run_campaign(options)
    except (TargetUnavailable, ValueError) as exc:
        print(f"harness campaign: {exc}", file=sys.stderr)
        return 2
    print_summary(result)
    return 0 if result.outcome == "passed" else 1


def command_matrix(args: argparse.Namespace) -> int:
    from harness.matrix.cli import command_matrix as run_matrix

    return run_matrix(args)


def command_report(args: argparse.Namespace) -> int:
    from reports.cli import command_report as run_report

    return run_report(args)


COMMANDS = {"run": command_run, "campaign": command_campaign, "matrix": command_matrix, "report": command_report}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

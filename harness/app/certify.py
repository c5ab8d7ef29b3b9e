"""``harness certify``: a conformance statement for one driver and target pair.

It runs the main job strictly (the spec sources as for ``harness run``; by default the ones the project
pins, :func:`harness.app.spec_sources.main_job_sources`), through ``harness run``'s own code path in this
process, so the statement's verdicts are the run's, record for record. The results file is written too
(``OUT/<pair>.results.jsonl``); the statement is then built from its records and the rule catalogue of
``harness coverage`` over the same sources (:mod:`reports.statements`, which the matrix report uses for
its cells): ``OUT/<pair>.json``, ``OUT/<pair>.html``, ``OUT/<pair>.badge.json``, and the badge line on
stdout. docs/certify.md is the statement's schema.

This module also hands ``harness report`` the catalogue (:func:`with_rule_catalogue`), since the report
may not import the harness: the rules with the project's expected-outcomes entries, as one JSON file.

Exit status: 0 when the run had only expected outcomes and no strict note, 1 when it had either (the
statement is written all the same: it says what was seen), 2 when the run could not start or the
catalogue could not be read (no statement).
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import shlex
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.app.options import add_cli_options
from harness.engine.results_store import read_records

DEFAULT_OUT = Path("out") / "certify"
#: The run options certify takes from the one options table; it always runs strictly, with ``--expected auto``
#: and its own results file, so a statement never rests on a relaxed or re-pointed run.
RUN_OPTION_ROWS = ("specs", "target", "driver", "failpoints", "timeout", "iteration_timeout", "allow_destructive")
#: The name of the catalogue ``harness report`` is handed (and copies into ``OUT/statements/``).
REPORT_CATALOGUE = "rule-catalogue.json"


def add_certify_arguments(parser: argparse.ArgumentParser) -> None:
    add_cli_options(parser, only=RUN_OPTION_ROWS)
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where the statement (.json, .html, .badge.json) and the run's results go (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "-k", dest="keyword", help="only tests whose id contains this text (rules of the others: not checked here)"
    )
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes, as for harness run (default 1)")
    parser.add_argument(
        "--spec-text",
        default=None,
        metavar="PATH",
        help="the change-streams spec text for the rule catalogue, as for harness coverage",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per test (default: failures only)")


def pair_stem(driver: str, target: str) -> str:
    """The statement's file name for ``--driver D --target T``: ``pymongo-async-on-embedded``."""
    from reports.statement_files import file_stem

    return file_stem(f"{driver}-on-{target}")


def command_certify(args: argparse.Namespace) -> int:
    from harness.app.coverage import CoverageInputError

    sources = list(args.specs or []) or _default_sources()
    stem = pair_stem(args.driver, args.target)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / f"{stem}.results.jsonl"
    results.unlink(missing_ok=True)  # the statement is about this run only: the file is certify's own
    status = _run_main_job(args, sources, results)
    records = read_records(results) if results.is_file() else []
    if status == 2 or not records:
        print(f"harness certify: the run produced no results (exit {status}); no statement written", file=sys.stderr)
        return 2
    try:
        catalogue = rule_catalogue(sources, args.spec_text)
    except CoverageInputError as exc:
        print(f"harness certify: {exc}", file=sys.stderr)
        return 2
    options = {"driver": args.driver, "target": args.target, "failpoints": args.failpoints, "jobs": args.jobs}
    statement = statement_from_records(
        catalogue,
        records,
        exit_status=status,
        selection=args.keyword,
        results=results,
        sources=sources,
        options=options,
    )
    from reports.statement_files import write_statement

    paths = write_statement(statement, out, stem)
    print(f"statement: {paths['html']} ({paths['json'].name}, {paths['badge'].name}; results: {results.name})")
    print(statement["summary"]["badge"])
    return status


def _default_sources() -> list[str]:
    from harness.app.spec_sources import main_job_sources

    return main_job_sources()


def _run_main_job(args: argparse.Namespace, sources: list[str], results: Path) -> int:
    """``harness run --suite all --strict`` with certify's options, parsed by run's own parser and run in process."""
    from harness.app.cli import build_parser, command_run

    argv = ["run", *[a for s in sources for a in ("--specs", s)], "--suite", "all", "--strict"]
    argv += ["--target", args.target, "--driver", args.driver, "--failpoints", args.failpoints]
    argv += ["--timeout", str(args.timeout), "--iteration-timeout", str(args.iteration_timeout)]
    argv += ["--results", str(results), "-j", str(args.jobs)]
    argv += ["--allow-destructive"] if args.allow_destructive else []
    argv += ["-k", args.keyword] if args.keyword else []
    argv += [] if args.verbose else ["-q"]
    for key, value in getattr(args, "labels", []):
        argv += ["--label", f"{key}={value}"]
    print(f"harness certify: harness {shlex.join(argv)}", file=sys.stderr)
    return command_run(build_parser("run").parse_args(argv))


def rule_catalogue(sources: list[str], spec_text: str | None = None) -> dict[str, Any]:
    """``harness coverage --format json``'s document over ``sources`` (the tests that count; none: coverage's own
    default, the shared upstream folders of a checkout), with every expected-outcomes entry of the project
    (``expectations``: by target, driver and pair), as plain data."""
    from harness.app.coverage import SUPPLEMENTARY, coverage_map
    from harness.app.coverage_map import as_json
    from harness.app.spec_sources import resolve

    supplementary = Path(SUPPLEMENTARY).resolve()
    others = [s for s in sources if Path(resolve(s).path).resolve() != supplementary]  # coverage always counts it
    catalogue = as_json(coverage_map(argparse.Namespace(spec_text=spec_text, specs=others)))
    catalogue["expectations"] = expectation_entries()
    return catalogue


def expectation_entries() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every expected-outcomes file of the project as ``{targets|drivers|pairs: {name: [entries]}}``; each entry
    ``{ref, id, rule, kind, signature, tests, outcome, reason, reproduction, file}`` (docs/causes.md), in file order
    (the order a run reads them)."""
    from harness.engine.run import EXPECTATIONS_DIR
    from harness.formats.expectations_file import load_expectations

    folders = {
        "targets": EXPECTATIONS_DIR,
        "drivers": EXPECTATIONS_DIR / "drivers",
        "pairs": EXPECTATIONS_DIR / "pairs",
    }
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for scope, folder in folders.items():
        found[scope] = {
            path.stem: [
                {
                    "ref": k.ref,
                    "id": k.id,
                    "rule": k.rule,
                    "kind": k.kind,
                    "signature": k.signature.describe(),
                    "tests": list(k.tests),
                    "outcome": k.outcome,
                    "reason": k.reason,
                    "reproduction": k.reproduction,
                    "file": _shown_path(path),
                }
                for k in load_expectations(path).known
            ]
            for path in sorted(Path(folder).glob("*.yml"))
        }
    return found


def _shown_path(path: Path) -> str:
    from harness.core.project_data import data_root

    try:
        return f"specs/{path.relative_to(data_root())}"
    except ValueError:
        return str(path)


def statement_from_records(
    catalogue: dict[str, Any],
    records: list[dict[str, Any]],
    *,
    exit_status: int,
    selection: str | None,
    results: Path,
    sources: list[str],
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The statement for a run's records: every rule's verdict, the pair's deviations, the run's provenance."""
    from reports.statements import build_statement, deviations_for, provenance_of, rows_from_records

    provenance = provenance_of(records)
    target, driver = provenance.get("target") or {}, provenance.get("driver") or {}
    details = target.get("details") or {}
    subject = {
        "driver": {k: driver[k] for k in ("name", "version", "language", "executor") if k in driver},
        "target": {
            "name": target.get("name"),
            "version": details.get("package_version") or target.get("version"),
            "kind": target.get("kind"),
            "topology": target.get("topology"),
            "server_version": target.get("version"),
        },
        "cell": None,
    }
    deviations = deviations_for(catalogue.get("expectations") or {}, str(target.get("name")), str(driver.get("name")))
    run = {
        "command": "harness certify",
        "strict": True,
        "suite": "all",
        "sources": sources,
        "options": dict(options or {}),
        "selection": f"-k {selection}" if selection else None,
        "exit_status": exit_status,
        "exit_meaning": {
            0: "every outcome as expected, no strict note",
            1: "an unexpected outcome or a strict note",
        }.get(exit_status, "the run could not finish"),
        "results_file": str(results),
        "results_sha256": hashlib.sha256(results.read_bytes()).hexdigest(),
    }
    return build_statement(
        catalogue,
        rows_from_records(records),
        subject=subject,
        provenance=provenance,
        deviations=deviations,
        run=run,
        generated_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def with_rule_catalogue(args: argparse.Namespace) -> argparse.Namespace:
    """``harness report``'s arguments with the rule catalogue it writes statements from (``--rule-catalogue``),
    computed here as ``harness coverage`` computes it by default when not given (nothing is fetched); when it
    cannot be, the report goes on without statements and says why."""
    from harness.app.coverage import CoverageInputError

    if getattr(args, "rule_catalogue", None) is not None or not hasattr(args, "rule_catalogue"):
        return args
    try:
        catalogue = rule_catalogue([])  # harness coverage's own default: nothing is fetched for a report
    except (CoverageInputError, OSError) as exc:
        print(f"harness report: no conformance statements: the rule catalogue cannot be read: {exc}", file=sys.stderr)
        return args
    # Not in --out: a report that finds nothing to read leaves no folder behind; the report copies it beside
    # the statements it writes.
    folder = Path(tempfile.mkdtemp(prefix="harness-report-catalogue-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / REPORT_CATALOGUE
    path.write_text(json.dumps(catalogue, indent=1) + "\n", encoding="utf-8")
    args.rule_catalogue = path
    return args

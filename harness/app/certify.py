"""``harness certify``: a conformance statement for one driver and target pair.

It runs the main job strictly (the spec sources as for ``harness run``; by default the ones the project
pins, :func:`harness.formats.source_names.main_job_sources`), through ``harness run``'s own function in this
process (:func:`harness.app.cli.run_job`, handed a typed :class:`~harness.app.run_job.RunJob`), so the
statement's verdicts are the run's, record for record. The results file is written too
(``OUT/<pair>.results.jsonl``), and what the run printed (``OUT/<pair>.log``); the statement is then built from
its records and the rule catalogue of ``harness coverage`` over the same sources (:mod:`reports.statements`,
which the matrix report uses for its cells): ``OUT/<pair>.json``, ``OUT/<pair>.html``, ``OUT/<pair>.badge.json``,
and the badge line on stdout. ``OUT`` is a certification bundle with its ``manifest.json``
(:mod:`harness.app.certify_bundle`), which ``--verify`` checks (:mod:`harness.app.certify_verify`).
docs/certify.md is the statement's schema and the bundle's format.

This module also hands ``harness report`` the catalogue (:func:`with_rule_catalogue`), since the report
may not import the harness: the rules with the project's expected-outcomes entries, as one JSON file.

A driver is certified on each public way it offers to consume a change stream (its iteration modes,
docs/executor-protocol.md 6.4.1): the main job runs once per mode the driver declares, each run's records say
their mode (``driver.iteration_mode``), and each mode gets a statement of its own, the default mode's under the
pair's plain name (``pymongo-on-embedded``), another's with the mode in it (``pymongo-tryNext-on-embedded``).
Every statement lists all of them (``run.iteration_modes``). ``--iteration-mode NAME`` certifies that mode only.

Exit status: 0 when every mode's run had only expected outcomes and no strict note, 1 when one had either (the
statements are written all the same: they say what was seen), 2 when the driver or a run could not start or
the catalogue could not be read (no statement for that run).
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
RUN_OPTION_ROWS = (
    "specs",
    "target",
    "driver",
    "failpoints",
    "timeout",
    "iteration_timeout",
    "iteration_mode",
    "allow_destructive",
)
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
    parser.add_argument(
        "--archive",
        action="store_true",
        help="also pack the bundle (--out) as OUT.tar.gz beside it (docs/certify.md, Certification bundles)",
    )
    parser.add_argument(
        "--verify",
        metavar="BUNDLE",
        default=None,
        help="check a bundle (its folder or .tar.gz) offline instead of certifying: hashes, pins, versions, every "
        "test's record, the statement recomputed; prints 'verified' (exit 0) or each discrepancy (exit 1)",
    )


def pair_stem(driver: str, target: str, iteration_mode: str | None = None) -> str:
    """The statement's file name for ``--driver D --target T``: ``pymongo-async-on-embedded``; for a mode other
    than the driver's default, with the mode: ``pymongo-tryNext-on-embedded``."""
    from reports.statement_files import file_stem

    return file_stem(f"{driver}-{iteration_mode}-on-{target}" if iteration_mode else f"{driver}-on-{target}")


def certified_modes(driver: str, requested: str | None) -> list[tuple[str, bool]]:
    """The modes to certify, each with whether it is the driver's default: ``requested`` alone, or every mode the
    driver declares, its default first. Making the driver is how its modes are known (an executor's ``hello``);
    :class:`~harness.core.ports.DriverUnavailable` when it cannot be made or does not offer ``requested``."""
    from harness.app.compose import plugins
    from harness.core.ports import chosen_iteration_mode

    registry = plugins()
    registry.check_driver(driver)
    adapter = registry.make_driver(driver)
    default = adapter.iteration_modes[0]
    if requested is not None:
        return [(chosen_iteration_mode(adapter, requested), requested == default)]
    return [(mode, mode == default) for mode in adapter.iteration_modes]


def command_certify(args: argparse.Namespace) -> int:
    if args.verify is not None:
        from harness.app.certify_verify import command_verify

        return command_verify(Path(args.verify))
    from harness.app.certify_bundle import RUN_FILES, CertifiedRun, logged_output, write_archive, write_manifest
    from harness.app.coverage import CoverageInputError
    from harness.core.ports import DriverUnavailable

    sources = list(args.specs or []) or _default_sources()
    try:
        modes = certified_modes(args.driver, args.iteration_mode)
    except DriverUnavailable as exc:
        print(f"harness certify: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for mode, default in modes:
        stem = pair_stem(args.driver, args.target, None if default else mode)
        results = out / f"{stem}{RUN_FILES['results']}"
        results.unlink(missing_ok=True)  # the statement is about this run only: the file is certify's own
        with logged_output(out / f"{stem}{RUN_FILES['log']}"):
            status = run_main_job(args, sources, results, None if default else mode)
        records = read_records(results) if results.is_file() else []
        if status == 2 or not records:
            print(
                f"harness certify: the run in iteration mode {mode} produced no results (exit {status}); no "
                "statement written for it",
                file=sys.stderr,
            )
            return 2
        runs.append(CertifiedRun(mode, default, stem, status, records))
    try:
        catalogue = rule_catalogue(sources, args.spec_text)
    except CoverageInputError as exc:
        print(f"harness certify: {exc}", file=sys.stderr)
        return 2
    command = certify_command(args, sources)
    from reports.statement_files import write_statement

    statements = statements_for(catalogue, runs, command, out)
    for run, statement in zip(runs, statements, strict=True):
        paths = write_statement(statement, out, run.stem)
        files = f"{paths['json'].name}, {paths['badge'].name}; results: {run.file('results')}"
        print(f"statement: {paths['html']} ({files})")
    manifest = write_manifest(out, runs, command=command, spec_text=catalogue.get("spec_text"))
    print(f"bundle: {out} ({manifest.name}; harness certify --verify {out})")
    if args.archive:
        print(f"bundle archive: {write_archive(out)}")
    for statement in reversed(statements):  # the default mode's badge last: the pair's own
        mode = statement["run"]["options"]["iteration_mode"]
        prefix = "" if statement is statements[0] else f"[{mode}] "
        print(prefix + statement["summary"]["badge"])
    return max(run.exit_status for run in runs)


def certify_command(args: argparse.Namespace, sources: list[str]) -> dict[str, Any]:
    """How certify was called, as the bundle's manifest keeps it (``command``) and the verifier reads it back."""
    return {
        "sources": sources,
        "suite": "all",
        "strict": True,
        "expected": "auto",
        "selection": args.keyword,
        "options": {
            "driver": args.driver,
            "target": args.target,
            "failpoints": args.failpoints,
            "jobs": args.jobs,
            "timeout": args.timeout,
            "iteration_timeout": args.iteration_timeout,
            "allow_destructive": args.allow_destructive,
            "labels": dict(getattr(args, "labels", [])),
        },
        "spec_text": args.spec_text,
    }


def statements_for(
    catalogue: dict[str, Any], runs: list[Any], command: dict[str, Any], folder: Path
) -> list[dict[str, Any]]:
    """Each run's statement (:class:`~harness.app.certify_bundle.CertifiedRun`, results file in ``folder``), every
    one listing all of them (``run.iteration_modes``): what certify writes and what ``--verify`` recomputes."""
    options = {key: command["options"][key] for key in ("driver", "target", "failpoints", "jobs")}
    statements = [
        statement_from_records(
            catalogue,
            run.records,
            exit_status=run.exit_status,
            selection=command["selection"],
            results=folder / run.file("results"),
            sources=command["sources"],
            options={**options, "iteration_mode": run.mode},
        )
        for run in runs
    ]
    every_mode = [_mode_line(run.stem, statement) for run, statement in zip(runs, statements, strict=True)]
    for statement in statements:
        statement["run"]["iteration_modes"] = every_mode
    return statements


def _mode_line(stem: str, statement: dict[str, Any]) -> dict[str, Any]:
    """One mode's figures, as every statement of the driver lists them (``run.iteration_modes``)."""
    summary = statement["summary"]
    return {
        "mode": statement["run"]["options"]["iteration_mode"],
        "statement": stem,
        "exit_status": statement["run"]["exit_status"],
        **{key: summary[key] for key in ("met", "not_met", "not_judged", "not_checked")},
    }


def _default_sources() -> list[str]:
    from harness.formats.source_names import main_job_sources

    return main_job_sources()


def run_main_job(args: argparse.Namespace, sources: list[str], results: Path, iteration_mode: str | None) -> int:
    """The main job, strictly, with certify's options, through ``harness run``'s own function (no command line is
    parsed again); in ``iteration_mode`` (None: the driver's default)."""
    from harness.app.cli import run_job
    from harness.app.options import run_options
    from harness.app.run_job import RunJob

    values = {
        "target": args.target,
        "driver": args.driver,
        "results": results,
        "expected": "auto",
        "failpoints": args.failpoints,
        "iteration_mode": iteration_mode,
        "strict": True,
        "timeout": args.timeout,
        "iteration_timeout": args.iteration_timeout,
        "allow_destructive": args.allow_destructive,
    }
    job = RunJob(
        run_options(lambda option: values.get(option.dest, option.default), labels=dict(getattr(args, "labels", []))),
        specs=list(sources),
        suite="all",
        keyword=args.keyword,
        jobs=args.jobs,
        quiet=not args.verbose,
    )
    print(f"harness certify: {_as_run_command(values, sources, args)}", file=sys.stderr)
    return int(run_job(job))


def _as_run_command(values: dict[str, Any], sources: list[str], args: argparse.Namespace) -> str:
    """The ``harness run`` command line that runs the same job, for the reader (nothing parses it)."""
    words = ["harness", "run", *[w for s in sources for w in ("--specs", s)], "--suite", "all", "--strict"]
    for key in ("target", "driver", "failpoints", "iteration_mode", "timeout", "iteration_timeout", "results"):
        if values[key] is not None:
            words += [f"--{key.replace('_', '-')}", str(values[key])]
    words += ["-j", str(args.jobs)] + (["--allow-destructive"] if args.allow_destructive else [])
    words += (["-k", args.keyword] if args.keyword else []) + ([] if args.verbose else ["-q"])
    return shlex.join(words)


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


def expectation_entries(root: Path | None = None) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Every expected-outcomes file of the project as ``{targets|drivers|pairs: {name: [entries]}}``; each entry
    ``{ref, id, rule, kind, signature, tests, outcome, reason, reproduction, iteration_modes, file}`` (docs/causes.md),
    in file order
    (the order a run reads them)."""
    from harness.engine.run import EXPECTATIONS_DIR
    from harness.formats.expectations_file import load_expectations

    root = Path(EXPECTATIONS_DIR) if root is None else root
    folders = {"targets": root, "drivers": root / "drivers", "pairs": root / "pairs"}
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
                    "iteration_modes": list(k.iteration_modes),
                    "file": f"specs/expectations/{path.relative_to(root).as_posix()}",
                }
                for k in load_expectations(path).known
            ]
            for path in sorted(Path(folder).glob("*.yml"))
        }
    return found


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
        "driver": {k: driver[k] for k in ("name", "version", "language", "executor", "iteration_mode") if k in driver},
        "target": {
            "name": target.get("name"),
            "version": details.get("package_version") or target.get("version"),
            "kind": target.get("kind"),
            "topology": target.get("topology"),
            "server_version": target.get("version"),
        },
        "cell": None,
    }
    deviations = deviations_for(
        catalogue.get("expectations") or {},
        str(target.get("name")),
        str(driver.get("name")),
        driver.get("iteration_mode"),
    )
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
        "results_file": results.name,
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

"""``harness certify --verify BUNDLE``: check a certification bundle offline, trusting nothing of its maker.

Each check of docs/certify.md ("What --verify checks") is one function here; every one runs (a failed check
does not hide another) and says each discrepancy in one line naming the file, the test or the field. Nothing is
run again and nothing is fetched: the bundle, the spec files its manifest names (read where it says: a bundle
never carries them) and this harness's own data (rule catalogue, pins) are all it reads.
"""

from __future__ import annotations

import contextlib
import json
import re
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from harness.app.certify_bundle import (
    BUNDLE_SCHEMA,
    EXPECTATIONS,
    MANIFEST,
    RUN_FILES,
    CertifiedRun,
    observed_driver,
    observed_target,
    sha256_file,
    source_files,
)

MANIFEST_KEYS = (
    "bundle",
    "created_at",
    "harness",
    "driver",
    "target",
    "machine",
    "command",
    "catalogue",
    "runs",
    "spec_sources",
    "expectations",
    "files",
)
#: The reporter's first line (harness/app/reporting.py), which the log must hold for each run.
LOG_START = re.compile(
    r"^harness run (?P<run_id>\S+): \d+ test\(s\) on (?P<target>\S+) \((?P<kind>[^,]*), server (?P<server>\S+), "
    r"(?P<topology>[^)]*)\) with (?P<driver>.+?) (?P<version>\S+?)(?: in \d+ workers \(one target each\))?$",
    re.MULTILINE,
)
#: How many differing fields of a statement are named when no rule's verdict differs.
SHOWN_DIFFERENCES = 5


class Findings:
    """The discrepancies (each fails the verification) and notes (each does not) found so far."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.notes: list[str] = []

    def problem(self, what: str, why: str) -> None:
        self.problems.append(f"{what}: {why}")

    def note(self, what: str, why: str) -> None:
        self.notes.append(f"{what}: {why}")


def command_verify(bundle: Path) -> int:
    """Verify ``bundle`` (a folder or ``.tar.gz``); 0 when verified, 1 when not, each discrepancy said."""
    findings = Findings()
    summary = ""
    try:
        with opened(bundle) as folder:
            summary = verify_folder(folder, findings)
    except BundleUnreadable as exc:
        findings.problem(str(bundle), str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a field of the wrong shape, or none
        findings.problem(MANIFEST, f"malformed: a field is missing or not of its type ({type(exc).__name__}: {exc})")
    for line in findings.notes:
        print(f"{bundle}: note: {line}")
    for line in findings.problems:
        print(f"{bundle}: {line}")
    if findings.problems:
        print(f"not verified: {len(findings.problems)} discrepancies")
        return 1
    print(f"verified: {bundle} ({summary})")
    return 0


class BundleUnreadable(Exception):
    """A bundle that cannot be opened at all (no such folder, an archive that does not unpack)."""


@contextlib.contextmanager
def opened(bundle: Path) -> Iterator[Path]:
    """The bundle's folder: itself, or an archive unpacked into a temporary folder (removed after)."""
    if bundle.is_dir():
        yield bundle
        return
    if not bundle.is_file():
        raise BundleUnreadable("no such folder or archive")
    with tempfile.TemporaryDirectory(prefix="harness-verify-") as scratch:
        try:
            with tarfile.open(bundle, "r:*") as archive:
                tops = _checked_members(archive)
                archive.extractall(scratch, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise BundleUnreadable(f"not a readable archive: {exc}") from exc
        if len(tops) != 1:
            raise BundleUnreadable(f"an archive holds one top folder; this one holds {sorted(tops) or 'none'}")
        yield Path(scratch) / tops.pop()


def _checked_members(archive: tarfile.TarFile) -> set[str]:
    """The archive's top folders; a member that is not a file or folder, or leaves its top folder, is refused."""
    tops = set()
    for member in archive.getmembers():
        parts = PurePosixPath(member.name).parts
        if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()):
            raise BundleUnreadable(f"archive member {member.name!r} is not a plain file inside the bundle's folder")
        tops.add(parts[0])
    return tops


def verify_folder(folder: Path, findings: Findings) -> str:
    """Every check on the bundle in ``folder``; a one-line summary of what was verified."""
    manifest = read_manifest(folder, findings)
    if manifest is None:
        return ""
    check_hashes(folder, manifest, findings)
    check_expectations(folder, manifest, findings)
    runs = read_runs(folder, manifest, findings)
    check_versions(folder, manifest, runs, findings)
    roots = locate_spec_sources(manifest, findings)
    if roots is not None:
        check_spec_files(manifest, roots, findings)
        check_every_test_recorded(manifest, runs, roots, findings)
        check_statements(folder, manifest, runs, roots, findings)
    records = sum(len(run.records) for run in runs)
    spec_files = sum(len(source.get("files") or []) for source in manifest["spec_sources"])
    driver, target = manifest["driver"], manifest["target"]
    return (
        f"{driver.get('name')} {driver.get('version')} on {target.get('name')} "
        f"{target.get('package_version') or target.get('version')}: {len(runs)} run(s), {records} records, "
        f"{spec_files} spec files, {len(manifest['files'])} files hashed"
    )


# -- 1. the manifest ------------------------------------------------------------------------------------
def read_manifest(folder: Path, findings: Findings) -> dict[str, Any] | None:
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        findings.problem(MANIFEST, "missing: a bundle's folder holds manifest.json (docs/certify.md)")
        return None
    except (OSError, ValueError) as exc:
        findings.problem(MANIFEST, f"not readable JSON: {exc}")
        return None
    if not isinstance(manifest, dict) or manifest.get("bundle") != BUNDLE_SCHEMA:
        found = manifest.get("bundle") if isinstance(manifest, dict) else type(manifest).__name__
        findings.problem(MANIFEST, f"not a {BUNDLE_SCHEMA} manifest (bundle: {found!r})")
        return None
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        findings.problem(MANIFEST, f"lacks {', '.join(missing)}")
        return None
    return manifest


# -- 2. hashes ------------------------------------------------------------------------------------------
def check_hashes(folder: Path, manifest: dict[str, Any], findings: Findings) -> None:
    files: dict[str, str] = manifest["files"]
    for name, digest in sorted(files.items()):
        path = folder / name
        if not path.is_file():
            findings.problem(name, "missing from the bundle (the manifest lists it)")
        elif sha256_file(path) != digest:
            kind = "expected-outcomes file changed" if name.startswith(f"{EXPECTATIONS}/") else "changed"
            findings.problem(name, f"{kind}: its SHA-256 is {sha256_file(path)}, the manifest says {digest}")
    named = [run[kind] for run in manifest["runs"] for kind in RUN_FILES] + [
        entry["file"] for entry in manifest["expectations"]
    ]
    for name in named:
        if name not in files:
            findings.problem(name, "named by the manifest but not hashed in its 'files'")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {MANIFEST}
    for name in sorted(present - set(files)):
        findings.note(name, "not listed in the manifest: not part of the bundle")


# -- 3. expected-outcomes files -------------------------------------------------------------------------
def check_expectations(folder: Path, manifest: dict[str, Any], findings: Findings) -> None:
    """Each entry's SHA-256 is the one ``files`` gives its file (whose content the hashes check)."""
    for entry in manifest["expectations"]:
        listed = manifest["files"].get(entry["file"])
        if listed is not None and listed != entry["sha256"]:
            findings.problem(
                entry["file"],
                f"the manifest's expectations[] says SHA-256 {entry['sha256']}, its files says {listed} (shipped as "
                f"{entry['shipped_as']})",
            )


# -- 4. records ------------------------------------------------------------------------------------------
def read_runs(folder: Path, manifest: dict[str, Any], findings: Findings) -> list[CertifiedRun]:
    from harness.core.records import RECORD_SCHEMA

    runs = []
    for entry in manifest["runs"]:
        name = entry["results"]
        records = []
        try:
            lines = (folder / name).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            findings.problem(name, f"cannot be read: {exc}")
            lines = []
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
            except ValueError as exc:
                findings.problem(f"{name}:{number}", f"not a JSON record: {exc}")
                continue
            if not isinstance(record, dict) or record.get("record") != RECORD_SCHEMA:
                findings.problem(f"{name}:{number}", f"not a {RECORD_SCHEMA} record")
                continue
            records.append(record)
        for record in records:
            where = f"{name}: {record.get('test_id')}"
            if record.get("run_id") != entry["run_id"]:
                findings.problem(where, f"run_id {record.get('run_id')!r}, the manifest's run is {entry['run_id']!r}")
            mode = (record.get("driver") or {}).get("iteration_mode")
            if mode != entry["mode"]:
                findings.problem(where, f"iteration mode {mode!r}, the manifest's run is in {entry['mode']!r}")
        for test_id, count in Counter(r.get("test_id") for r in records).items():
            if count > 1:
                findings.problem(f"{name}: {test_id}", f"{count} records of one test")
        if len(records) != entry["records"]:
            findings.problem(name, f"{len(records)} records, the manifest says {entry['records']}")
        runs.append(CertifiedRun(entry["mode"], entry["default"], _stem(entry), entry["exit_status"], records))
    return runs


def _stem(run: dict[str, Any]) -> str:
    return str(run["statement"]).removesuffix(RUN_FILES["statement"])


# -- 5. versions -----------------------------------------------------------------------------------------
def check_versions(folder: Path, manifest: dict[str, Any], runs: list[CertifiedRun], findings: Findings) -> None:
    claimed = {
        **{f"harness.{k}": v for k, v in (manifest["harness"] or {}).items()},
        **{f"driver.{k}": v for k, v in manifest["driver"].items()},
        **{f"target.{k}": v for k, v in manifest["target"].items() if k in ("name", "version", "package_version")},
    }
    for run, entry in zip(runs, manifest["runs"], strict=True):
        seen: dict[str, Counter[Any]] = {key: Counter() for key in claimed}
        for record in run.records:
            observed = {
                **{f"harness.{k}": v for k, v in (record.get("harness") or {}).items()},
                **{f"driver.{k}": v for k, v in observed_driver(record).items()},
                **{f"target.{k}": v for k, v in observed_target(record).items()},
            }
            for key in claimed:
                seen[key][json.dumps(observed.get(key))] += 1
        for key, values in seen.items():
            for value, count in values.items():
                if json.loads(value) != claimed[key]:
                    findings.problem(
                        f"{entry['results']}: {key}",
                        f"the manifest says {claimed[key]!r}, {count} record(s) say {json.loads(value)!r}",
                    )
        check_log(folder, manifest, entry, findings)


def check_log(folder: Path, manifest: dict[str, Any], run: dict[str, Any], findings: Findings) -> None:
    """The log's start line names the run, the target's server version and the driver as the manifest does."""
    try:
        text = (folder / run["log"]).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return  # said by the hashes
    starts = list(LOG_START.finditer(text))
    if not starts:
        findings.problem(run["log"], "holds no 'harness run RUN_ID: N test(s) on ...' line: not this run's log")
        return
    start = starts[0]
    said = {
        "run_id": (start["run_id"], run["run_id"]),
        "server version": (start["server"], manifest["target"].get("version")),
        "driver": (start["driver"], manifest["driver"].get("name")),
        "driver version": (start["version"], manifest["driver"].get("version")),
    }
    for what, (in_log, claimed) in said.items():
        if in_log != str(claimed):
            findings.problem(run["log"], f"its {what} is {in_log!r}, the manifest says {claimed!r}")


# -- 6. spec files and pins --------------------------------------------------------------------------------
def locate_spec_sources(manifest: dict[str, Any], findings: Findings) -> list[Path] | None:
    """Each source's folder on this machine (None when one is not here: said as a discrepancy)."""
    from harness.app.spec_sources import SpecSourceError, resolve

    roots: list[Path] = []
    for source in manifest["spec_sources"]:
        try:
            root = Path(source["path"]) if source["kind"] == "path" else resolve(source["source"], fetch=False).path
        except SpecSourceError as exc:
            findings.problem(f"spec source {source['source']}", f"not available here: {exc}")
            continue
        if not root.exists():
            findings.problem(
                f"spec source {source['source']}",
                f"not found at {root}: verification reads the spec files the bundle names (a bundle never carries "
                "them); put the source there (or fetch it: harness specs fetch SOURCE) and verify again",
            )
            continue
        roots.append(root)
    return roots if len(roots) == len(manifest["spec_sources"]) else None


def check_spec_files(manifest: dict[str, Any], roots: list[Path], findings: Findings) -> None:
    for source, root in zip(manifest["spec_sources"], roots, strict=True):
        claimed = {entry["path"]: entry for entry in source["files"]}
        found = {entry["path"]: entry for entry in source_files(root)}
        for path in sorted(claimed.keys() - found.keys()):
            findings.problem(f"spec file {root / path}", "missing (the manifest lists it)")
        for path in sorted(found.keys() - claimed.keys()):
            findings.problem(f"spec file {root / path}", "not in the manifest (a file added to the source)")
        for path in sorted(claimed.keys() & found.keys()):
            was, now = claimed[path], found[path]
            if was["sha256"] != now["sha256"]:
                findings.problem(
                    f"spec file {root / path}",
                    f"changed: its SHA-256 is {now['sha256']}, the manifest says {was['sha256']}",
                )
                continue
            for key in ("tests", "pin", "pinned_by"):
                if was.get(key) != now[key]:
                    findings.problem(
                        f"spec file {root / path}", f"{key} is {now[key]!r} here, the manifest says {was.get(key)!r}"
                    )


# -- 7. every test recorded -----------------------------------------------------------------------------------
def check_every_test_recorded(
    manifest: dict[str, Any], runs: list[CertifiedRun], roots: list[Path], findings: Findings
) -> None:
    from harness.app import compose
    from harness.app.run_job import RunJob
    from harness.engine.run import RunOptions
    from harness.formats.pins import PinFileError

    command = manifest["command"]
    job = RunJob(RunOptions(), specs=list(roots), suite=command["suite"], keyword=command["selection"])
    try:
        expected = [test.test_id for test in compose.selection(job)[1]]
    except (PinFileError, OSError) as exc:  # the test list cannot be known
        findings.problem("tests", f"the sources' tests cannot be loaded here: {exc}")
        return
    for run, entry in zip(runs, manifest["runs"], strict=True):
        recorded = {record.get("test_id") for record in run.records}
        for test_id in [t for t in expected if t not in recorded]:
            findings.problem(f"{entry['results']}: {test_id}", "missing record: the run loaded this test")
        for test_id in sorted(str(t) for t in recorded - set(expected)):
            findings.problem(f"{entry['results']}: {test_id}", "record of no test the sources hold (or -k selects)")


# -- 8. the statement -------------------------------------------------------------------------------------------
def check_statements(
    folder: Path, manifest: dict[str, Any], runs: list[CertifiedRun], roots: list[Path], findings: Findings
) -> None:
    from harness import __version__
    from harness.app.certify import expectation_entries, rule_catalogue, statements_for
    from harness.app.coverage import CoverageInputError
    from harness.core.expectations import ExpectationsError

    command = manifest["command"]
    spec_text = manifest["catalogue"].get("spec_text")
    if spec_text and Path(spec_text).is_file() and sha256_file(Path(spec_text)) != manifest["catalogue"]["sha256"]:
        findings.problem(f"catalogue text {spec_text}", f"changed: the manifest says {manifest['catalogue']['sha256']}")
    try:
        catalogue = rule_catalogue([str(root) for root in roots], command["spec_text"])
        catalogue["expectations"] = expectation_entries(folder / EXPECTATIONS)
    except (CoverageInputError, ExpectationsError, OSError) as exc:
        findings.problem("statement", f"cannot be recomputed: {exc}")
        return
    if not all(run.records for run in runs):
        findings.problem("statement", "cannot be recomputed: a run has no records")
        return
    made_by = (manifest["harness"] or {}).get("version")
    hint = f" (the bundle was made by harness {made_by}, this is {__version__}: the catalogue may differ)"
    hint = hint if made_by != __version__ else ""
    for run, recomputed in zip(runs, statements_for(catalogue, runs, command, folder), strict=True):
        name = run.file("statement")
        try:
            bundled = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            findings.problem(name, f"not a readable statement: {exc}")
            continue
        recomputed = json.loads(json.dumps(recomputed, default=str))
        for line in statement_differences(bundled, recomputed):
            findings.problem(name, f"differs from the statement recomputed from the records: {line}{hint}")
        check_page_and_badge(folder, run, bundled, findings)


def check_page_and_badge(folder: Path, run: CertifiedRun, statement: dict[str, Any], findings: Findings) -> None:
    """The page and badge are the statement's (made from it as certify makes them)."""
    from reports.statement_files import shields_endpoint
    from reports.statement_page import render_html

    made = {
        run.file("page"): render_html(statement),
        run.file("badge"): json.dumps(shields_endpoint(statement)) + "\n",
    }
    for name, text in made.items():
        path = folder / name
        if path.is_file() and path.read_text(encoding="utf-8") != text:
            findings.problem(name, "is not the one its statement makes")


def statement_differences(bundled: Any, recomputed: Any) -> list[str]:
    """Each rule whose verdict differs; else the first differing fields (``generated_at`` aside)."""
    if not (isinstance(bundled, dict) and isinstance(recomputed, dict)):
        return ["not a JSON object"]
    bundled, recomputed = dict(bundled), dict(recomputed)
    bundled.pop("generated_at", None)
    recomputed.pop("generated_at", None)
    if bundled == recomputed:
        return []
    verdicts = {rule.get("id"): rule.get("verdict") for rule in bundled.get("rules") or [] if isinstance(rule, dict)}
    lines = [
        f"rule {rule['id']}: the bundle says {verdicts.get(rule['id'])}, the records give {rule['verdict']}"
        for rule in recomputed.get("rules") or []
        if verdicts.get(rule["id"]) != rule["verdict"]
    ]
    differing = _differing(bundled, recomputed, "")
    return (
        lines
        or [f"{path}: the bundle says {was}, the records give {now}" for path, was, now in differing][
            :SHOWN_DIFFERENCES
        ]
    )


def _differing(a: Any, b: Any, path: str) -> Iterator[tuple[str, str, str]]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            yield from _differing(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differing(x, y, f"{path}[{index}]")
    elif a != b:
        yield path, _short(a), _short(b)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."

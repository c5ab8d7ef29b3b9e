"""What the records of a repeat say actually ran, checked against what the cell asked for.

A cell's label is a request; the records carry what the run read at run time
(``driver.version`` is ``pymongo.version`` in the running process, and
``target.details.package_version`` the SecantusDB distribution it started; a
real server reports its own version). A difference means the environment is
not what the matrix claims to certify, so it is flagged, never papered over.
An axis the records do not describe is ``unverified``, said as loudly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from harness.core.records import RECORD_SCHEMA
from harness.core.verdicts import OUTCOMES
from harness.engine.results_store import read_records
from harness.matrix import catalogue
from harness.matrix.cells import Cell

OK, MISMATCH, UNVERIFIED, RECORDED = "ok", "MISMATCH", "unverified", "recorded"
#: Stands in the list of actual versions for records that do not state one.
NOT_RECORDED = "not recorded"


@dataclass
class Observation:
    records: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    driver_versions: list[str] = field(default_factory=list)
    target_versions: list[str] = field(default_factory=list)


def _package_version(record: dict[str, Any]) -> str | None:
    return (record.get("target") or {}).get("details", {}).get("package_version")


def _server_version(record: dict[str, Any]) -> str | None:
    return (record.get("target") or {}).get("version")


def _same_release(requested: str, actual: str) -> bool:
    try:
        return Version(requested) == Version(actual)
    except InvalidVersion:
        return requested == actual


def _same_driver_release(requested: str, actual: str) -> bool:
    """A driver states its release first, and may say more after it (pymongo's async API: ``4.20.0 (async)``)."""
    return _same_release(requested, actual.split(" ", 1)[0])


def _image_release(requested: str, actual: str) -> bool:
    """``mongo:8.0`` matches a server reporting 8.0.x."""
    return actual == requested or actual.startswith(f"{requested}.")


@dataclass(frozen=True)
class TargetAxis:
    """How a kind of target states its version in a record, what the cell asked for, and how the two compare."""

    actual: Callable[[dict[str, Any]], str | None]
    requested: Callable[[Cell, dict[str, Any]], str | None]
    matches: Callable[[str, str], bool]


def _requested_release(cell: Cell, installed: dict[str, Any]) -> str | None:
    # A cell without a release asked for "whatever the pins resolve to": what was installed is the request.
    return cell.secantusdb or installed.get("secantusdb")


def _image_tag(cell: Cell, installed: dict[str, Any]) -> str | None:
    tag = cell.target.partition("=")[2].rpartition(":")[2]
    return tag if tag[:1].isdigit() else None


def _library_release(record: dict[str, Any]) -> str | None:
    return (record.get("target") or {}).get("details", {}).get("release")


def _requested_library_release(cell: Cell, installed: dict[str, Any]) -> str | None:
    from harness.targets.mongo_java_server import parse_argument

    return parse_argument(cell.target.partition("=")[2] or None).release


_SECANTUS = TargetAxis(_package_version, _requested_release, _same_release)
#: A deployment taken as it is: the version it reports, nothing asked for.
_AS_IT_IS = TargetAxis(_server_version, lambda cell, installed: None, _image_release)
#: Targets whose argument names what they run, read as each writes it.
TARGET_AXES: dict[str, TargetAxis] = {
    "mongo-java-server": TargetAxis(_library_release, _requested_library_release, _same_release),
    "testcontainers": TargetAxis(_server_version, _image_tag, _image_release),
    "uri": _AS_IT_IS,
}


def target_axis(name: str) -> TargetAxis:
    """How a cell's target version is asked for and read back: SecantusDB's (the catalogue says which targets
    are), one of :data:`TARGET_AXES`, else as a deployment taken as it is."""
    if catalogue.is_secantus(name):
        return _SECANTUS
    return TARGET_AXES.get(name, _AS_IT_IS)


#: Characters of a release range (``6.x``, ``^6.1``), which only the built driver can turn into one release.
_RANGE = set("xX*^~<>| ")


def requested_driver(cell: Cell, installed: dict[str, Any], probed: dict[str, Any] | None) -> str | None:
    """The driver release the cell stands for: the one named, else what the environment installed (pymongo) or
    the harness built (a range, or the pinned release of an executor), as the probe saw it."""
    release = cell.driver.release
    if release is not None and not _RANGE & set(release):
        return release
    if cell.driver.package is not None and release is None and installed.get("pymongo"):
        return str(installed["pymongo"])
    return ((probed or {}).get("driver") or {}).get("version")


def observe(path: Path, cell: Cell) -> Observation:
    """Counts and versions from a repeat's results file (missing file: nothing observed)."""
    if not path.exists():
        return Observation()
    records = [r for r in read_records(path) if r.get("record") == RECORD_SCHEMA]
    counts = Counter(r.get("outcome") for r in records)
    axis = target_axis(cell.target_name)
    return Observation(
        records=len(records),
        counts={outcome: counts.get(outcome, 0) for outcome in OUTCOMES},
        driver_versions=sorted({str((r.get("driver") or {}).get("version") or NOT_RECORDED) for r in records}),
        target_versions=sorted({str(axis.actual(r) or NOT_RECORDED) for r in records}),
    )


def _verdict(requested: str | None, actual: list[str], matches: Callable[[str, str], bool]) -> str:
    """Unverified as soon as one record does not say: a version shown by some records only proves nothing."""
    if not actual or NOT_RECORDED in actual:
        return UNVERIFIED
    if requested is None:
        return RECORDED
    return OK if all(matches(requested, version) for version in actual) else MISMATCH


def check_versions(
    cell: Cell, observation: Observation, installed: dict[str, Any], probed: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Per axis: requested, actual (from the records) and ``ok``/``MISMATCH``/``unverified``/``recorded``."""
    if observation.records == 0:
        return {}
    axis = target_axis(cell.target_name)
    target_requested = axis.requested(cell, installed)
    driver_requested = requested_driver(cell, installed, probed)
    return {
        "driver": {
            "requested": driver_requested,
            "actual": observation.driver_versions,
            "verdict": _verdict(driver_requested, observation.driver_versions, _same_driver_release),
        },
        "target": {
            "requested": target_requested,
            "actual": observation.target_versions,
            "verdict": _verdict(target_requested, observation.target_versions, axis.matches),
        },
    }


def version_problems(check: dict[str, Any]) -> list[str]:
    """Lines to shout about: mismatches and axes the records do not describe."""
    return [
        f"{axis}: {item['verdict']} (requested {item['requested'] or 'nothing'}, "
        f"records say {', '.join(item['actual']) or 'nothing'})"
        for axis, item in check.items()
        if item["verdict"] in (MISMATCH, UNVERIFIED)
    ]

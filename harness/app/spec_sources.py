"""Where spec files come from, so a user without this repository's machines can get them.

``--specs`` (and ``harness specs fetch``) take any of:

``PATH``
    a file or directory, read in place;
``pypi:pymongo==4.20.0``
    pymongo's source distribution on PyPI, which ships the change-stream
    unified tests (``test/change_streams/unified``);
``pypi:pymongo==4.20.0#selftests``
    the same sdist's unified-format self-tests (``test/unified-test-format``:
    ``valid-pass``, ``valid-fail``, ``invalid``);
``git:URL@COMMIT[#PATH]``
    a checkout of the specifications repository (or a fork, or a local
    clone) at ``COMMIT``; ``PATH`` inside it defaults to
    ``source/change-streams/tests``, which holds ``unified/`` (and, at older
    commits, ``legacy/``: see docs/running.md, "Spec sources", for which commits have it);
``project:PATH``
    the harness's own data as installed (the repository's ``specs/`` folder,
    found through :mod:`harness.core.project_data`), e.g.
    ``project:scenarios/supplementary``: the same files from a wheel as from a
    checkout, nothing to fetch.

A fetched source is kept in ``$HARNESS_CACHE_DIR/sources/<name>/`` with an
``origin.json`` (the source, where it was downloaded from, its SHA-256 or
commit, when). Every result's provenance names the sources its run read
(``spec_sources``). The files are never copied into this repository: their
licence is non-commercial.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.core.project_data import DATA_FOLDERS, project_data
from harness.engine import child_processes
from harness.formats.cache import cache_dir
from harness.formats.pins import sha256_of
from harness.formats.source_names import GIT_SOURCE, PROJECT_SOURCE, PYPI_SOURCE
from harness.formats.special_files import unread_entries, unread_note

ORIGIN_FILE = "origin.json"
#: What each pypi: source takes from pymongo's sdist: name -> folders under the sdist's test/.
PYPI_PARTS = {"": ("change_streams/unified",), "selftests": ("unified-test-format",)}
DEFAULT_GIT_PATH = "source/change-streams/tests"


class SpecSourceError(Exception):
    """A source that cannot be parsed or fetched; the message says which and why."""


@dataclass(frozen=True)
class Resolved:
    path: Path
    origin: dict[str, Any]


def resolve(text: str, *, fetch: bool = True) -> Resolved:
    """The local path a ``--specs`` value names, fetching it first if it is a source not yet cached."""
    pypi, git, project = PYPI_SOURCE.match(text), GIT_SOURCE.match(text), PROJECT_SOURCE.match(text)
    if project:
        return _project_data(text, project["path"].split("/"))
    if pypi:
        part = pypi["part"] or ""
        if part not in PYPI_PARTS:
            raise SpecSourceError(f"{text}: unknown part #{part}; known: {', '.join(p for p in PYPI_PARTS if p)}")
        root = cache_dir() / "sources" / f"pypi-{pypi['project']}-{pypi['version']}"
        if not (root / ORIGIN_FILE).exists():
            if not fetch:
                raise SpecSourceError(f"{text}: not fetched yet (harness specs fetch {text})")
            _fetch_pypi(pypi["project"], pypi["version"], root)
        folder = root / (part or "unified")
    elif git:
        digest = hashlib.sha256(git["url"].encode()).hexdigest()[:12]
        root = cache_dir() / "sources" / f"git-{digest}-{git['commit']}"
        if not (root / ORIGIN_FILE).exists():
            if not fetch:
                raise SpecSourceError(f"{text}: not fetched yet (harness specs fetch {text})")
            _fetch_git(git["url"], git["commit"], root)
        folder = root / "checkout" / (git["path"] or DEFAULT_GIT_PATH)
    else:
        path = Path(text)
        return Resolved(path, {"source": text, "kind": "path"})
    if not folder.exists():
        raise SpecSourceError(f"{text}: fetched, but it has no {folder.relative_to(root)}")
    origin = json.loads((root / ORIGIN_FILE).read_text(encoding="utf-8"))
    return Resolved(folder, {**origin, "source": text, "path": str(folder)})


def _project_data(text: str, parts: list[str]) -> Resolved:
    """``project:PATH``: a file or folder of the installed project data; it never leaves that folder."""
    if ".." in parts:
        raise SpecSourceError(f"{text}: a project: path stays inside the project's data (no '..')")
    path = project_data(*parts)
    if not path.exists():
        raise SpecSourceError(
            f"{text}: the harness's data has no {'/'.join(parts)} (its folders: "
            f"{', '.join(DATA_FOLDERS)}; e.g. project:scenarios/supplementary)"
        )
    return Resolved(path, {"source": text, "kind": "project", "path": str(path)})


def provenance(paths: list[Any], say: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """What each ``--specs`` root is: its fetched origin (found by ``origin.json`` above it), or a local path.

    Both front ends call it with the run's roots before the run starts, so it also says (``say``; by default on
    stderr, as the run's other notes on its inputs) which entries of those folders are not regular files and were
    never opened (:mod:`harness.formats.special_files`), and records them in the root's origin (``not_read``).
    """
    found = []
    unread_by_run: list[tuple[Path, str]] = []
    for path in paths:
        resolved = Path(path).resolve()
        origin: dict[str, Any] = {"source": str(path), "kind": "path"}
        for folder in (resolved, *resolved.parents):
            if (folder / ORIGIN_FILE).is_file():
                origin = {**json.loads((folder / ORIGIN_FILE).read_text(encoding="utf-8")), "path": str(resolved)}
                break
        unread = unread_entries([Path(path)])
        if unread:
            origin["not_read"] = {str(entry): kind for entry, kind in unread}
            unread_by_run.extend(unread)
        found.append(origin)
    if unread_by_run:
        (say or _say_on_stderr)(f"harness: note: {unread_note(unread_by_run)}")
    return found


def _say_on_stderr(words: str) -> None:
    print(words, file=sys.stderr)


def download_sdist(project: str, version: str, folder: Path) -> Path:
    """``project==version``'s source distribution from PyPI into ``folder`` (kept there: a second call
    finds it), through pip, so the index, proxy and certificates are the user's own pip settings."""
    pattern = f"{project.replace('-', '_')}-{version}.tar.gz"
    found = sorted(folder.glob(pattern)) or sorted(folder.glob(f"{project}-{version}.tar.gz"))
    if found:
        return found[0]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    command += ["--disable-pip-version-check", f"{project}=={version}", "-d", str(folder)]
    done = child_processes.run(command, capture_output=True, text=True, check=False)
    archives = sorted(folder.glob("*.tar.gz"))
    if done.returncode != 0 or not archives:
        raise SpecSourceError(
            f"pypi:{project}=={version}: pip could not download the source distribution: "
            f"{(done.stderr or done.stdout).strip()[-500:]}"
        )
    return archives[0]


def _fetch_pypi(project: str, version: str, root: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="spec-source-") as scratch:
        archive = download_sdist(project, version, Path(scratch))
        staging = Path(tempfile.mkdtemp(prefix=".fetching-", dir=_ensure(root.parent)))
        try:
            with tarfile.open(archive) as sdist:
                members = [m for m in sdist.getmembers() if _wanted(m.name)]
                sdist.extractall(staging / "sdist", members=members, filter="data")
            tests = next((staging / "sdist").iterdir()) / "test"
            shutil.move(str(tests / "change_streams" / "unified"), staging / "unified")
            shutil.move(str(tests / "unified-test-format"), staging / "selftests")
            shutil.rmtree(staging / "sdist")
            _write_origin(
                staging,
                {
                    "kind": "pypi",
                    "project": project,
                    "version": version,
                    "archive": archive.name,
                    "sha256": sha256_of(archive),
                },
            )
            shutil.rmtree(root, ignore_errors=True)
            staging.rename(root)
        except (OSError, StopIteration, tarfile.TarError) as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise SpecSourceError(
                f"pypi:{project}=={version}: the sdist does not hold the expected test folders: {exc}"
            ) from exc


def _wanted(name: str) -> bool:
    parts = name.split("/")
    return (
        len(parts) > 3
        and parts[1] == "test"
        and (parts[2:4] == ["change_streams", "unified"] or parts[2] == "unified-test-format")
    )


def _fetch_git(url: str, commit: str, root: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=".fetching-", dir=_ensure(root.parent)))
    checkout = staging / "checkout"
    try:
        steps = {
            "clone": ["git", "clone", "--quiet", "--no-checkout", "--filter=blob:none", url, str(checkout)],
            "checkout": ["git", "-C", str(checkout), "checkout", "--quiet", commit],
        }
        for step, command in steps.items():
            done = child_processes.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SpecSourceError(
                    f"git:{url}@{commit}: git {step} failed: {(done.stderr or done.stdout).strip()[-500:]}"
                )
        full = child_processes.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
        _write_origin(staging, {"kind": "git", "url": url, "commit": full.stdout.strip() or commit})
        shutil.rmtree(root, ignore_errors=True)
        staging.rename(root)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write_origin(folder: Path, origin: dict[str, Any]) -> None:
    origin["fetched_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    (folder / ORIGIN_FILE).write_text(json.dumps(origin, indent=1) + "\n", encoding="utf-8")


def _ensure(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder

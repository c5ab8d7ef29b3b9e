"""How a ``--specs`` value names a spec source, and the main job's sources: the syntax only, nothing fetched.

:mod:`harness.app.spec_sources` resolves and fetches what these names point at; ``harness matrix`` (a layer below
the app) only needs to tell a source name from a path and to know the main job's sources, so they live here, below
both (docs/architecture.md, the layers contract).
"""

from __future__ import annotations

import re

#: ``pypi:PROJECT==VERSION[#PART]``, ``git:URL@COMMIT[#PATH]`` and ``project:PATH`` (harness.app.spec_sources).
PYPI_SOURCE = re.compile(r"^pypi:(?P<project>[A-Za-z0-9_.-]+)==(?P<version>[A-Za-z0-9_.+-]+)(?:#(?P<part>[a-z-]+))?$")
GIT_SOURCE = re.compile(r"^git:(?P<url>.+)@(?P<commit>[0-9a-fA-F]{7,40})(?:#(?P<path>.+))?$")
PROJECT_SOURCE = re.compile(r"^project:(?P<path>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)/?$")

#: The main job's sources when a command is given none: the pinned upstream legacy and unified folders
#: (``../shared/specs`` beside a checkout) and the project's supplementary scenarios; without the shared
#: folder (an installed wheel), the unified tests of the pinned pymongo sdist (``specs/pins/``) instead.
MAIN_JOB_SHARED = ("upstream/legacy", "upstream/unified")
MAIN_JOB_PROJECT = "project:scenarios/supplementary"
MAIN_JOB_FALLBACK = "pypi:pymongo==4.20.0"


def main_job_sources() -> list[str]:
    """The spec sources the main job reads by default (``harness certify``, ``harness matrix``), each as
    ``--specs`` takes it: the same files whatever the working directory."""
    from harness.core.project_data import shared_specs

    shared = shared_specs()
    if shared is not None and all((shared / part).is_dir() for part in MAIN_JOB_SHARED):
        upstream = [str(shared / part) for part in MAIN_JOB_SHARED]
    else:
        upstream = [MAIN_JOB_FALLBACK]
    return [*upstream, MAIN_JOB_PROJECT]


def is_source(text: str) -> bool:
    return bool(PYPI_SOURCE.match(text) or GIT_SOURCE.match(text) or PROJECT_SOURCE.match(text))

"""Where the harness's own tests find the repository, its test data and the team's shared spec folder.

One definition, so a test file's place in the tree (tests/ mirrors the packages) never decides what it reads.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The project's own test data (hand-made spec files).
TESTS_DATA = REPO / "tests" / "data"
#: The upstream spec files and reference texts, read in place beside the repository (never copied into it).
SHARED_SPECS = REPO.parent / "shared" / "specs"

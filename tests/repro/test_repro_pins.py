"""The reproductions live outside the product packages (tests/repro/<driver or target>/), so the Go ones are a
module of their own: its go.mod must pin exactly what the Go executor's pins, or a reproduction would show another
release's behaviour than the one the expectations file names."""

from __future__ import annotations

import re

from harness.drivers.go import build
from tests.paths import REPO

GO_REPRO = REPO / "tests" / "repro" / "go"


def requirements(go_mod: str) -> dict[str, str]:
    """Every module a go.mod requires (direct or indirect) and its version."""
    return dict(re.findall(r"^\s*(?:require\s+)?([a-z0-9.\-/]+\.[a-z]+/\S+) (v\S+)", go_mod, flags=re.M))


def test_the_go_reproductions_pin_what_the_executor_pins():
    executor = requirements((build.SOURCE_DIR / "go.mod").read_text())
    assert executor, "the executor's go.mod requires nothing: the parse is wrong"
    assert requirements((GO_REPRO / "go.mod").read_text()) == executor
    assert (GO_REPRO / "go.sum").read_text() == (build.SOURCE_DIR / "go.sum").read_text()


def test_a_different_release_is_told_apart():
    executor = (build.SOURCE_DIR / "go.mod").read_text()
    planted = re.sub(r"(go\.mongodb\.org/mongo-driver/v2) v\S+", r"\1 v2.0.0", executor)
    assert planted != executor
    assert requirements(planted) != requirements(executor)

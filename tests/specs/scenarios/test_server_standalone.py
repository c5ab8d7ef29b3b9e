"""The upstream single-server test (change-streams-errors, legacy and unified) checks SRV-NO-STANDALONE on a
standalone target (specs/coverage/test-rules-server.yml): it fails for a standalone server that opens change
streams, and passes on SecantusDB started standalone (``embedded-standalone``), which refuses them.

The breakage is SecantusDB's ``aggregate`` handler patched for one test to serve a change stream on a
standalone as it would on a replica set.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from secantus import commands as secantus_commands

from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_paths
from harness.formats.rule_files import load_mapping
from tests.conftest import LEGACY_DIR, UNIFIED_DIR, require_shared_specs
from tests.specs.scenarios.test_supplementary_server import Breakage


def standalone_tests() -> list[Any]:
    """The upstream tests the mapping says check SRV-NO-STANDALONE."""
    require_shared_specs()
    mapping = load_mapping()
    files = [LEGACY_DIR / "change-streams-errors.json", UNIFIED_DIR / "change-streams-errors.yml"]
    loaded = load_paths([path for path in files if path.exists()])
    found = [test for test in loaded if "SRV-NO-STANDALONE" in mapping.checks(test.test_id, test.description)]
    assert found, "no upstream test is mapped to SRV-NO-STANDALONE"
    return found


@pytest.fixture(scope="module")
def standalone_run():
    with HarnessRun(RunOptions(target="embedded-standalone", expected="none")) as run:
        yield run


def _change_streams_on_a_standalone(mp: pytest.MonkeyPatch) -> None:
    """A standalone that serves change streams (from its own oplog) instead of refusing them."""
    original = secantus_commands._HANDLERS["aggregate"]

    def aggregate(doc: dict[str, Any], ctx: Any) -> Any:
        pipeline = doc.get("pipeline") or []
        if ctx.replica_set_name is None and pipeline and "$changeStream" in pipeline[0]:
            ctx = dataclasses.replace(ctx, replica_set_name="rs0")
        return original(doc, ctx)

    mp.setitem(secantus_commands._HANDLERS, "aggregate", aggregate)


#: breakage -> (the rule the upstream test must catch it for, the patch)
BROKEN_STANDALONE: dict[str, tuple[str, Breakage]] = {
    "a standalone opens change streams": ("SRV-NO-STANDALONE", _change_streams_on_a_standalone),
}


def test_the_standalone_tests_pass_on_a_standalone_secantusdb(standalone_run):
    for test in standalone_tests():
        verdict = standalone_run.verdict(test)
        assert verdict.outcome == "passed", f"{test.test_id}: {verdict.outcome}: {verdict.message}"


@pytest.mark.parametrize("breakage", sorted(BROKEN_STANDALONE))
def test_a_standalone_that_opens_change_streams_fails_them(standalone_run, monkeypatch, breakage):
    BROKEN_STANDALONE[breakage][1](monkeypatch)
    for test in standalone_tests():
        verdict = standalone_run.verdict(test)
        assert verdict.outcome == "failed", f"{breakage}: {test.test_id}: {verdict.outcome}: {verdict.message}"

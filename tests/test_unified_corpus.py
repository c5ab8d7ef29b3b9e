"""The unified runner end to end on the embedded SecantusDB target.

* the change-stream corpus: every test's outcome is what
  ``specs/expectations/secantusdb.yml`` says (the ``.json`` encodings load to
  the same tests, see ``test_unified_loader``, so the ``.yml`` files are run);
* the format's self-tests: valid-pass tests pass or are skipped with a
  reason, valid-fail tests never pass.

One server serves the module; several corpus tests wait ~10 s for pymongo's
monitor after a state-change error (the server omits ``topologyVersion``),
which is most of the ~80 s this module takes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.loaders import load_paths
from harness.session import HarnessRun, RunOptions

SPECS = Path(__file__).resolve().parents[1].parent / "shared" / "specs" / "upstream"
UNIFIED = SPECS / "unified"
SELFTESTS = SPECS / "unified-format-selftests"

pytestmark = pytest.mark.skipif(not UNIFIED.is_dir(), reason=f"upstream spec files not found at {SPECS}")

CORPUS = load_paths([UNIFIED]) if UNIFIED.is_dir() else []
VALID_PASS = load_paths([SELFTESTS / "valid-pass"]) if SELFTESTS.is_dir() else []
VALID_FAIL = load_paths([SELFTESTS / "valid-fail"]) if SELFTESTS.is_dir() else []


@pytest.fixture(scope="module")
def run() -> Iterator[HarnessRun]:
    with HarnessRun(RunOptions(target="embedded", expected="auto")) as harness_run:
        yield harness_run


@pytest.mark.parametrize("test", CORPUS, ids=[t.test_id for t in CORPUS])
def test_change_stream_corpus_outcome_is_as_expected(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.classification.expected, (
        f"{result.outcome} ({result.classification.kind}): {result.message} {result.classification.reason}")


@pytest.mark.parametrize("test", VALID_PASS, ids=[t.test_id for t in VALID_PASS])
def test_valid_pass_selftest_passes_or_is_skipped_with_a_reason(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.outcome in ("passed", "skipped"), result.message
    if result.outcome == "skipped":
        assert result.message


@pytest.mark.parametrize("test", VALID_FAIL, ids=[t.test_id for t in VALID_FAIL])
def test_valid_fail_selftest_does_not_pass(run: HarnessRun, test) -> None:
    result = run.run_test(test)
    assert result.outcome in ("failed", "error")
    assert result.message


def test_an_unknown_operation_is_an_error_naming_it(run: HarnessRun) -> None:
    (test,) = [t for t in VALID_FAIL if t.file_stem == "operation-unsupported"]
    result = run.run_test(test)
    assert result.outcome == "error" and "unsupportedOperation" in result.message

"""``--driver pymongo-async``: pymongo's ``AsyncMongoClient`` through the same operation table as ``MongoClient``.

Spec tests and prose checks pass through the asynchronous API on the embedded SecantusDB, and the two
APIs' verdicts agree test by test on a set of files covering change streams, resumes, CSOT (a context
variable that must follow each call onto the event loop), structured logging, CMAP events (an async client
must be connecting once created) and ``withTransaction`` (the driver's loop on the event loop, the nested
operations in a worker thread).
"""

from __future__ import annotations

import pytest

import prose_tests
from harness.core.model import EntitySpec
from harness.engine.run import HarnessRun, RunOptions
from harness.formats.loaders import load_paths
from tests.helpers import UNIFIED_RUNNER_DATA
from tests.paths import REPO, SHARED_SPECS

SUPPLEMENTARY = REPO / "specs" / "scenarios" / "supplementary"
UNIFIED = SHARED_SPECS / "upstream" / "unified"
LEGACY = SHARED_SPECS / "upstream" / "legacy"

#: Files whose every test must get the same verdict from both APIs.
AGREEMENT_FILES = [
    UNIFIED_RUNNER_DATA / "csot.yml",
    UNIFIED_RUNNER_DATA / "log-messages.yml",
    UNIFIED_RUNNER_DATA / "with-transaction.yml",
    SUPPLEMENTARY / "timeouts.yml",
    SUPPLEMENTARY / "wire-version.yml",
    SUPPLEMENTARY / "start-options.yml",
    SUPPLEMENTARY / "change-streams-resume.yml",
    UNIFIED / "change-streams-resume-errorLabels.yml",
    LEGACY / "change-streams.yml",
]

PROSE = {prose_tests.check_id(check): check for check in prose_tests.CHECKS}


@pytest.fixture(scope="module")
def async_run():
    with HarnessRun(RunOptions(target="embedded", expected="none", driver="pymongo-async")) as run:
        yield run


def test_the_async_driver_is_asyncmongoclient_and_says_so(async_run):
    from pymongo import AsyncMongoClient

    driver = async_run.driver
    assert (driver.name, driver.language) == ("pymongo-async", "python") and driver.version.endswith("(async)")
    scope = driver.open_scope(async_run.target.uri, iteration_timeout_s=1)
    try:
        scope.create_entity(EntitySpec("client", "client0", {}))
        assert isinstance(scope.entity("client0"), AsyncMongoClient)
    finally:
        scope.close()
    assert scope.api.loop.is_closed(), "the scope's event loop outlived the scope"


@pytest.mark.parametrize(
    "path",
    [UNIFIED / "change-streams.yml", LEGACY / "change-streams.yml", UNIFIED_RUNNER_DATA / "with-transaction.yml"],
)
def test_spec_tests_pass_through_the_async_api(async_run, path):
    results = [async_run.run_test(test) for test in load_paths([path])]
    assert results and any(r.outcome == "passed" for r in results)
    bad = [(r.test_id, r.message) for r in results if r.outcome in ("failed", "error")]
    assert bad == []
    assert {r.record["driver"]["name"] for r in results} == {"pymongo-async"}


@pytest.mark.parametrize("check", ["1", "19"])
def test_prose_checks_pass_through_the_async_api(async_run, check):
    result = async_run.run_test(PROSE[check])
    assert result.outcome == "passed", result.message


def test_sync_and_async_verdicts_agree_test_by_test(embedded_run, async_run):
    tests = load_paths(AGREEMENT_FILES)
    sync = {t.test_id: embedded_run.verdict(t).outcome for t in tests}
    asynchronous = {t.test_id: async_run.verdict(t).outcome for t in load_paths(AGREEMENT_FILES)}
    assert len(sync) > 30 and {"passed", "failed", "skipped"} <= set(sync.values())
    assert {k: (v, asynchronous[k]) for k, v in sync.items() if asynchronous[k] != v} == {}

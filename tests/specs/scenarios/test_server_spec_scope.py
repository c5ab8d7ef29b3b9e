"""SRV-SPEC-SCOPE (specs/scenarios/supplementary/server-spec-scope.yml): database and cluster streams leave out
system collections, and cluster streams the admin, config and local databases.

SecantusDB 0.7 reports them (a known deviation, reproduced by
tests/repro/pymongo/secantus_cluster_scope_and_stages.py), so as shipped both scenarios fail; patched
to leave them out (``secantus.changestreams._scope_matches``) both pass; patched to leave out only system
collections, the cluster scenario still fails (a breakage of one path of two).
"""

from __future__ import annotations

from typing import Any

import pytest
from secantus import changestreams

from tests.specs.scenarios.test_supplementary import scenarios_of

INTERNAL_DATABASES = ("admin", "config", "local")


def _leaves_out(*, internal_databases: bool):
    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams._scope_matches

        def matches(ns: str, scope: Any) -> bool:
            db, _, coll = ns.partition(".")
            if coll.startswith("system."):
                return False
            if internal_databases and scope.get("kind") == "cluster" and db in INTERNAL_DATABASES:
                return False
            return original(ns, scope)

        mp.setattr(changestreams, "_scope_matches", matches)

    return apply


def _outcomes(run) -> dict[str, Any]:
    return {test.description.split(": ", 1)[1]: run.verdict(test) for test in scenarios_of("SRV-SPEC-SCOPE")}


def test_secantusdb_as_shipped_reports_what_the_streams_leave_out(embedded_run):
    """The deviation, pinned: a SecantusDB that fixes it shows up here and as an unexpected pass in runs."""
    outcomes = _outcomes(embedded_run)
    assert {name: v.outcome for name, v in outcomes.items()} == dict.fromkeys(outcomes, "failed"), outcomes
    assert len(outcomes) == 2


def test_a_server_that_leaves_them_out_passes(embedded_run, monkeypatch):
    _leaves_out(internal_databases=True)(monkeypatch)
    outcomes = _outcomes(embedded_run)
    assert all(v.outcome == "passed" for v in outcomes.values()), {n: v.message for n, v in outcomes.items()}


def test_a_server_that_leaves_out_only_system_collections_fails_the_cluster_scenario(embedded_run, monkeypatch):
    _leaves_out(internal_databases=False)(monkeypatch)
    outcomes = {name: v.outcome for name, v in _outcomes(embedded_run).items()}
    assert outcomes == {
        "a database stream leaves out writes to a system collection of its database": "passed",
        "a cluster stream leaves out writes to the admin, config and local databases": "failed",
    }

"""Prose check 19 (a change larger than a BSON document arrives in fragments) fails for a server that splits
large events wrongly: it checks SRV-SPLIT-LARGE as well as the driver's part (specs/coverage/test-rules-server.yml).

Each breakage is SecantusDB's event splitter (``secantus.changestreams.stamp_split_event``) patched for one
test: the fragments numbered from 0, or one fragment more announced than sent. The check must fail under
each and pass without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from secantus import changestreams

import prose_tests
from tests.specs.scenarios.test_supplementary_server import Breakage, overview_run_settings

Fragments = list[dict[str, Any]]
SPLIT_CHECK = next(check for check in prose_tests.CHECKS if prose_tests.check_id(check) == "19")


@pytest.fixture(scope="module")
def overview_run():
    with overview_run_settings() as run:
        yield run


def _split_markers(change: Callable[[int, int], dict[str, int]]) -> Breakage:
    """Every fragment's splitEvent rewritten as ``change(fragment, of)``."""

    def apply(mp: pytest.MonkeyPatch) -> None:
        original = changestreams.stamp_split_event

        def stamp_split_event(event: dict[str, Any]) -> Fragments:
            fragments = original(event)
            for fragment in fragments:
                marker = fragment["splitEvent"]
                fragment["splitEvent"] = change(marker["fragment"], marker["of"])
            return fragments

        mp.setattr(changestreams, "stamp_split_event", stamp_split_event)

    return apply


#: breakage -> (the rule the check must catch it for, the patch)
BROKEN_SPLIT: dict[str, tuple[str, Breakage]] = {
    "fragments numbered from 0": ("SRV-SPLIT-LARGE", _split_markers(lambda n, of: {"fragment": n - 1, "of": of})),
    "one fragment more announced than sent": (
        "SRV-SPLIT-LARGE",
        _split_markers(lambda n, of: {"fragment": n, "of": of + 1}),
    ),
}


def test_the_split_check_passes_on_secantusdb(overview_run):
    verdict = overview_run.verdict(SPLIT_CHECK)
    assert verdict.outcome == "passed", verdict.message


@pytest.mark.parametrize("breakage", sorted(BROKEN_SPLIT))
def test_a_server_that_splits_large_events_wrongly_fails_the_split_check(overview_run, monkeypatch, breakage):
    BROKEN_SPLIT[breakage][1](monkeypatch)
    verdict = overview_run.verdict(SPLIT_CHECK)
    assert verdict.outcome == "failed", f"{breakage}: {verdict.outcome}: {verdict.message}"

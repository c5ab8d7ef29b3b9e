"""In a push mode the getMores read ahead are left out of the comparison, and nothing else is
(harness/engine/read_ahead.py, docs/executor-protocol.md 6.4.1)."""

from __future__ import annotations

from harness.core.observations import ObservedEvent
from harness.engine.read_ahead import aligned


def started(name: str) -> ObservedEvent:
    return ObservedEvent("commandStartedEvent", name)


def succeeded(name: str) -> ObservedEvent:
    return ObservedEvent("commandSucceededEvent", name)


def expect(name: str | None, kind: str = "commandStartedEvent") -> dict:
    return {kind: {} if name is None else {"commandName": name}}


def names(events: list[ObservedEvent]) -> list[str]:
    return [f"{e.kind[7:-5]}:{e.command_name}" for e in events]


def test_a_get_more_between_a_write_and_the_resume_is_left_out_and_the_resume_is_still_compared():
    observed = [started("aggregate"), started("getMore"), started("getMore"), started("aggregate"), started("getMore")]
    wanted = [expect("aggregate"), expect("getMore"), expect("aggregate"), expect("getMore")]
    kept, skipped = aligned(wanted, observed)
    assert names(kept) == ["Started:aggregate", "Started:getMore", "Started:aggregate", "Started:getMore"]
    assert skipped == 1


def test_trailing_get_mores_are_left_out_but_any_other_trailing_event_stays_to_be_reported_extra():
    observed = [started("aggregate"), started("getMore"), started("getMore"), started("killCursors")]
    kept, skipped = aligned([expect("aggregate"), expect("getMore")], observed)
    assert names(kept) == ["Started:aggregate", "Started:getMore", "Started:killCursors"]
    assert skipped == 1


def test_a_missing_resume_is_still_missing():
    """A driver that never resumes shows no aggregate after its getMores: leaving the getMores out cannot make one."""
    observed = [started("aggregate"), started("getMore"), started("getMore"), started("getMore")]
    kept, _ = aligned([expect("aggregate"), expect("getMore"), expect("aggregate")], observed)
    assert names(kept) == ["Started:aggregate", "Started:getMore"]


def test_an_expected_event_that_may_be_a_get_more_takes_the_next_event_as_it_comes():
    observed = [started("aggregate"), succeeded("aggregate"), started("getMore"), succeeded("getMore")]
    wanted = [
        expect("aggregate"),
        expect(None, "commandSucceededEvent"),
        expect(None),
        expect(None, "commandSucceededEvent"),
    ]
    kept, skipped = aligned(wanted, observed)
    assert kept == observed and skipped == 0


def test_nothing_is_left_out_when_nothing_was_read_ahead():
    observed = [started("aggregate"), started("insert"), started("getMore")]
    kept, skipped = aligned([expect("aggregate"), expect("insert"), expect("getMore")], observed)
    assert kept == observed and skipped == 0


def test_a_read_ahead_reply_where_the_next_get_more_s_start_is_expected_is_left_out():
    observed = [started("getMore"), started("insert"), succeeded("getMore"), started("getMore")]
    kept, skipped = aligned([expect("insert"), expect("getMore")], observed)
    assert names(kept) == ["Started:insert", "Started:getMore"]
    assert skipped == 2


def test_a_get_more_expected_after_a_write_may_have_been_sent_before_it():
    """The getMore a pull-mode driver sends after the insert was read ahead before it: it stands for the expected
    one, and each expected getMore still needs one of its own."""
    observed = [started("aggregate"), started("getMore"), started("insert"), succeeded("insert"), succeeded("getMore")]
    wanted = [expect("aggregate"), expect("insert"), expect("insert", "commandSucceededEvent"), expect("getMore")]
    kept, skipped = aligned(wanted, observed)
    assert names(kept) == ["Started:aggregate", "Started:insert", "Succeeded:insert", "Started:getMore"]
    assert skipped == 1
    twice = [*wanted, expect("getMore")]
    kept, _ = aligned(twice, observed)
    assert names(kept) == ["Started:aggregate", "Started:insert", "Succeeded:insert", "Started:getMore"], (
        "one getMore cannot stand for two"
    )

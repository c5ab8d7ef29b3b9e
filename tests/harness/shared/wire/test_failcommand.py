"""The emulated fail points' rules, without sockets: modes, predicates, actions, labels."""

from __future__ import annotations

import pytest

from harness.shared.wire.failcommand import CommandContext, FailPointConfigError, FailPointSet

INSERT = CommandContext("insert", "db", "coll")
FIND = CommandContext("find", "db", "coll")


def armed(mode, seed=None, name="failCommand", **data):
    points = FailPointSet(seed)
    data.setdefault("failCommands", ["insert"])
    if name != "failCommand":
        data.pop("failCommands")
    points.configure({"configureFailPoint": name, "mode": mode, "data": data})
    return points


def fires(points, context=INSERT, n=1):
    return [points.decide(context) is not None for _ in range(n)]


def test_always_on_fires_on_every_matching_command_only():
    points = armed("alwaysOn", errorCode=2)
    assert fires(points, n=3) == [True] * 3
    assert fires(points, FIND) == [False]


def test_times_fires_n_times_then_turns_itself_off():
    points = armed({"times": 2}, errorCode=2)
    assert fires(points, n=4) == [True, True, False, False]
    assert points.armed() == []


def test_skip_lets_n_matching_commands_through_then_fires():
    points = armed({"skip": 2}, errorCode=2)
    assert fires(points, FIND, n=3) == [False] * 3  # non-matching commands consume nothing
    assert fires(points, n=4) == [False, False, True, True]


def test_activation_probability_is_replayable_from_the_seed():
    first = fires(armed({"activationProbability": 0.5}, seed=7, errorCode=2), n=200)
    again = fires(armed({"activationProbability": 0.5}, seed=7, errorCode=2), n=200)
    assert first == again
    assert 60 < sum(first) < 140
    assert fires(armed({"activationProbability": 0}, seed=1, errorCode=2), n=50) == [False] * 50
    assert fires(armed({"activationProbability": 1}, seed=1, errorCode=2), n=50) == [True] * 50


def test_off_and_disable_turn_the_point_off():
    points = armed("alwaysOn", errorCode=2)
    assert points.configure({"configureFailPoint": "failCommand", "mode": "off"}) == {"count": 0, "ok": 1.0}
    assert fires(points) == [False] and points.armed() == []
    points = armed("alwaysOn", errorCode=2)
    points.disable("failCommand")
    assert fires(points) == [False]


def test_configure_reply_counts_previous_activations():
    points = armed("alwaysOn", errorCode=2)
    fires(points, n=3)
    assert points.configure({"configureFailPoint": "failCommand", "mode": "off"})["count"] == 3


def test_app_name_restricts_the_point_to_one_client():
    points = armed("alwaysOn", errorCode=2, appName="victim")
    assert fires(points, CommandContext("insert", "db", "coll", app_name="bystander")) == [False]
    assert fires(points, CommandContext("insert", "db", "coll", app_name=None)) == [False]
    assert fires(points, CommandContext("insert", "db", "coll", app_name="victim")) == [True]


def test_namespace_restricts_the_point_to_one_collection():
    points = armed("alwaysOn", errorCode=2, namespace="db.other")
    assert fires(points) == [False]
    assert fires(points, CommandContext("insert", "db", "other")) == [True]


@pytest.mark.parametrize("name", ["hello", "isMaster", "ismaster", "configureFailPoint"])
def test_handshake_and_control_commands_are_exempt(name):
    points = armed("alwaysOn", errorCode=2, failCommands=[name])
    assert fires(points, CommandContext(name, "admin")) == [False]


def test_error_reply_names_the_code():
    action = armed("alwaysOn", errorCode=11000).decide(INSERT)
    assert action.error["ok"] == 0 and action.error["code"] == 11000
    assert action.error["codeName"] == "DuplicateKey" and "errorLabels" not in action.error
    assert not action.forwards


def test_close_connection_wins_over_error_and_block_adds_up():
    action = armed("alwaysOn", closeConnection=True, errorCode=2, blockConnection=True, blockTimeMS=30).decide(INSERT)
    assert action.close_connection and action.block_ms == 30 and action.error is None


def test_block_alone_forwards_after_the_delay():
    action = armed("alwaysOn", blockConnection=True, blockTimeMS=50).decide(INSERT)
    assert action.forwards and action.block_ms == 50


def test_write_concern_error_is_spliced_not_replied():
    wce = {"code": 100, "errmsg": "Not enough data-bearing nodes"}
    action = armed("alwaysOn", writeConcernError=wce).decide(INSERT)
    assert action.forwards and action.write_concern_error == wce and action.reply_labels == []


CHANGE_STREAM_GET_MORE = CommandContext("getMore", "db", "coll", change_stream_cursor=True)


def test_fail_command_never_implies_resumable_label():
    """The legacy spec test 'does not resume if error does not contain ResumableChangeStreamError'."""
    action = armed("alwaysOn", failCommands=["getMore"], errorCode=6).decide(CHANGE_STREAM_GET_MORE)
    assert "errorLabels" not in action.error


def test_fail_get_more_after_checkout_implies_resumable_label_for_resumable_codes():
    points = armed("alwaysOn", name="failGetMoreAfterCursorCheckout", errorCode=6)
    assert points.decide(CHANGE_STREAM_GET_MORE).error["errorLabels"] == ["ResumableChangeStreamError"]
    points = armed("alwaysOn", name="failGetMoreAfterCursorCheckout", errorCode=50)
    assert "errorLabels" not in points.decide(CHANGE_STREAM_GET_MORE).error
    points = armed("alwaysOn", name="failGetMoreAfterCursorCheckout", errorCode=6)
    assert "errorLabels" not in points.decide(CommandContext("getMore", "db", "coll")).error  # not a change stream
    assert points.decide(INSERT) is None


def test_explicit_error_labels_are_used_exactly():
    action = armed(
        "alwaysOn", failCommands=["getMore"], errorCode=50, errorLabels=["ResumableChangeStreamError"]
    ).decide(CHANGE_STREAM_GET_MORE)
    assert action.error["errorLabels"] == ["ResumableChangeStreamError"]
    action = armed("alwaysOn", name="failGetMoreAfterCursorCheckout", errorCode=6, errorLabels=[]).decide(
        CHANGE_STREAM_GET_MORE
    )
    assert "errorLabels" not in action.error


def test_retryable_write_label_only_for_retryable_writes_with_retryable_codes():
    retryable = CommandContext("insert", "db", "coll", retryable_write=True)
    assert armed("alwaysOn", errorCode=91).decide(retryable).error["errorLabels"] == ["RetryableWriteError"]
    assert "errorLabels" not in armed("alwaysOn", errorCode=91).decide(INSERT).error
    assert "errorLabels" not in armed("alwaysOn", errorCode=2).decide(retryable).error


def test_fail_command_is_checked_before_the_get_more_point():
    points = armed({"times": 1}, failCommands=["getMore"], errorCode=2)
    points.configure(
        {"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": {"times": 1}, "data": {"errorCode": 6}}
    )
    assert points.decide(CHANGE_STREAM_GET_MORE).error["code"] == 2
    assert points.decide(CHANGE_STREAM_GET_MORE).error["code"] == 6
    assert points.decide(CHANGE_STREAM_GET_MORE) is None


@pytest.mark.parametrize(
    "command",
    [
        {"configureFailPoint": "rsSyncApplyStop", "mode": "alwaysOn"},
        {"configureFailPoint": "failCommand", "mode": "sometimes"},
        {"configureFailPoint": "failCommand", "mode": {"activationProbability": 2}},
        {"configureFailPoint": "failCommand", "mode": {"times": 1, "skip": 1}},
        {"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": [1]},
    ],
)
def test_bad_configurations_are_refused_with_bad_value(command):
    with pytest.raises(FailPointConfigError) as caught:
        FailPointSet().configure(command)
    assert caught.value.code == 2


def test_watches_lets_unarmed_commands_skip_decoding():
    points = armed("alwaysOn", errorCode=2)
    assert points.watches("insert") and not points.watches("find") and not points.watches("getMore")
    assert not FailPointSet().watches("insert")

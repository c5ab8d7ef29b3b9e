"""``expectLogMessages`` through pymongo's structured logging (``tests/data/unified-runner/log-messages.yml``).

Each file test passes on the embedded SecantusDB; each is shown able to fail (a wrong level, a missing
expected message, an extra message, ``failureIsRedacted`` flipped); a client's list holds only its own
messages (the first test's other client logs nothing into it); and a driver adapter without structured
logging makes the test ``skipped`` with the reason.
"""

from __future__ import annotations

import pytest

from harness.core.matching.log_messages import failure_is_redacted, match_log_messages
from harness.core.model import LogExpectation
from harness.core.observations import ObservedLogMessage
from tests.helpers import runner_file_test


def _test(description: str):
    return runner_file_test("log-messages.yml", description)


def test_a_wrong_level_fails(embedded_run):
    test = _test("a command is logged")
    test.expect_log_messages[0].messages[0]["level"] = "info"
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "messages[0].level" in verdict.message, verdict.message


def test_an_unlogged_expected_message_fails_and_an_extra_one_fails(embedded_run):
    test = _test("a command is logged")
    test.expect_log_messages[0].messages.append(dict(test.expect_log_messages[0].messages[1]))
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "only 2 message(s)" in verdict.message, verdict.message
    test = _test("a command is logged")
    del test.expect_log_messages[0].messages[1]
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "unexpected extra message" in verdict.message, verdict.message


@pytest.mark.parametrize("description", ["a server error", "a network error"])
def test_failure_is_redacted_flipped_fails(embedded_run, description):
    test = _test(description)
    message = test.expect_log_messages[0].messages[0]
    message["failureIsRedacted"] = not message["failureIsRedacted"]
    verdict = embedded_run.verdict(test)
    assert verdict.outcome == "failed" and "failureIsRedacted" in verdict.message, verdict.message


def test_a_driver_adapter_without_structured_logging_is_skipped(embedded_run, monkeypatch):
    from harness.drivers.pymongo import adapter

    monkeypatch.setattr(adapter, "_CLIENT_KEYS", adapter._CLIENT_KEYS - {"observeLogMessages"})
    verdict = embedded_run.verdict(_test("a command is logged"))
    assert verdict.outcome == "skipped" and "observeLogMessages" in verdict.message, verdict.message


def _message(text: str, **data) -> ObservedLogMessage:
    return ObservedLogMessage("debug", "command", {"message": text, **data})


def test_ignored_messages_are_left_out_before_matching_in_order():
    observed = [_message("Command started"), _message("Command succeeded"), _message("Command started")]
    expectation = LogExpectation(
        "c",
        [{"level": "debug", "component": "command", "data": {"message": "Command succeeded"}}],
        ignore_messages=[{"level": "debug", "component": "command", "data": {"message": "Command started"}}],
    )
    assert match_log_messages(expectation, observed, "expectLogMessages[0]") == []
    expectation.ignore_messages = []
    assert match_log_messages(expectation, observed, "expectLogMessages[0]")


def test_redaction_is_read_from_the_logged_failure():
    assert failure_is_redacted('{"code": 2, "codeName": "BadValue"}') is True
    assert failure_is_redacted('{"code": 2, "errmsg": "secret"}') is False
    assert failure_is_redacted("AutoReconnect('connection closed')") is False
    assert failure_is_redacted(None) is None

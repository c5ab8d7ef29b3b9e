"""A cause's shape: the clauses a cause can come from and the fields a record's ``causes`` element holds.

docs/causes.md is the contract (what each clause means, which fields it sets); the engine builds causes
(:mod:`harness.core.causes`) and the report reads them (``reports/schema.py``), both from this description.
"""

from __future__ import annotations

from harness.record.fields import Field, boolean, double, list_of, long, string, struct

#: The kinds of check a cause can come from (docs/causes.md, "Clauses").
RESULT = "result"
ERROR_MATCH = "error-match"
ERROR_NOT_RAISED = "error-not-raised"
ERROR_RAISED = "error-raised"
NO_CHANGE = "no-change"
EVENT = "event"
EVENT_MISSING = "event-missing"
EXTRA_EVENTS = "extra-events"
LOG_MESSAGES = "log-messages"
OUTCOME = "outcome"
CHECK = "check"
SET_UP = "set-up"
TIMEOUT = "timeout"
CLAUSES = (
    RESULT,
    ERROR_MATCH,
    ERROR_NOT_RAISED,
    ERROR_RAISED,
    NO_CHANGE,
    EVENT,
    EVENT_MISSING,
    EXTRA_EVENTS,
    LOG_MESSAGES,
    OUTCOME,
    CHECK,
    SET_UP,
    TIMEOUT,
)
#: Clauses that say the harness could not carry the test out: they judge no rule.
UNJUDGED_CLAUSES = (SET_UP, TIMEOUT)

#: An error as a cause holds it: what an expected-outcomes entry's signature can name.
ERROR = struct(
    Field("type", string, "the error's class (the driver's or the executor's name for it)"),
    Field("code", long, "the server's error code", nullable=True),
    Field("code_name", string, "the server's error code name", nullable=True),
    Field("labels", list_of(string), "the error's labels"),
    Field("client_error", boolean, "raised by the driver, not the server"),
    Field("timeout_error", boolean, "a timeout (CSOT)"),
    Field("message", string, "the error's message"),
)

#: One element of a record's ``causes`` (docs/causes.md, section 1).
CAUSE = struct(
    Field("clause", string, "which kind of check broke (CLAUSES)", reported=True),
    Field("step", string, "where in the test", reported=True),
    Field("path", string, "a mismatch's path; empty otherwise", reported=True),
    Field("expected", string, "what the test expected there (relaxed Extended JSON), or empty"),
    Field("actual", string, "what was observed there, or empty"),
    Field("error", ERROR, "the error involved", nullable=True),
    Field("waited_s", double, "for no-change: how long the stream was watched", nullable=True),
    Field("fact", string, "the observed fact in words", reported=True),
    Field("rules", list_of(string), "the rules this cause can stand for", reported=True),
    Field(
        "known",
        string,
        "FILE#id of the expected-outcomes entry that explains it; null: unexplained",
        nullable=True,
        reported=True,
    ),
)

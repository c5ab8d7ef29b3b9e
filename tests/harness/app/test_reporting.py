"""What a person sees: a live line naming what runs (on a terminal only), and the slowest tests at the end."""

from __future__ import annotations

import io
from types import SimpleNamespace

from harness.app.reporting import ConsoleReporter
from harness.core.expectations import Classification, Expectations


def _run():
    info = SimpleNamespace(name="t", kind="k", version="1", topology="single")
    return SimpleNamespace(
        run_id="r",
        target=SimpleNamespace(info=info),
        driver=SimpleNamespace(name="d", version="1"),
        expectations=Expectations.empty(),
    )


def _result(test_id, seconds):
    return SimpleNamespace(
        test_id=test_id,
        file="f",
        outcome="passed",
        message="",
        duration_s=seconds,
        classification=Classification(True, "pass"),
        record={},
    )


def test_the_live_line_names_the_running_tests_and_is_cleared_before_a_result():
    stream = io.StringIO()
    reporter = ConsoleReporter(total=2, stream=stream, live=True)
    reporter.start(_run())
    reporter.begin("unified/a::first")
    reporter.begin("unified/b::second")
    reporter._draw_live()
    drawn = stream.getvalue().splitlines()[-1]
    assert "running: unified/a::first (" in drawn and "unified/b::second" in drawn
    reporter.report(_result("unified/a::first", 0.5))
    after = stream.getvalue()
    assert after.rindex("\r\033[K") > after.rindex("running:")  # cleared, then the result line
    reporter._draw_live()
    assert "unified/a::first (" not in stream.getvalue().split("running:")[-1]  # only what still runs
    reporter.report(_result("unified/b::second", 2.0))
    assert reporter.finish() == 0


def test_plain_output_when_not_a_terminal_and_the_slowest_tests_in_the_summary():
    stream = io.StringIO()
    reporter = ConsoleReporter(total=3, stream=stream)
    assert reporter.live is False
    reporter.start(_run())
    for test_id, seconds in (("fast", 0.1), ("slow", 3.0), ("middling", 1.0)):
        reporter.begin(test_id)
        reporter.report(_result(test_id, seconds))
    reporter.finish()
    text = stream.getvalue()
    assert "\r" not in text and "running:" not in text
    assert "slowest: slow (3.00s), middling (1.00s), fast (0.10s)" in text

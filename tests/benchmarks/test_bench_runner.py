"""benchmarks/bench_runner.py's own logic: pymongo's test names mapped onto ours, verdicts compared.

The measuring itself downloads pymongo's sdist, so it runs only by hand
(python -m benchmarks.bench_runner); these tests never leave the machine.
"""

from __future__ import annotations

import json

from benchmarks.bench_runner import agreement, pymongo_names, pymongo_verdicts

ERRORS_CLASS = "test.test_change_stream.TestUnifiedChangeStreamsErrors"
JUNIT = f"""<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="{ERRORS_CLASS}" name="test_change_stream_errors_on_a_thing"/>
<testcase classname="{ERRORS_CLASS}" name="test_skipped_one"><skipped message="no"/></testcase>
<testcase classname="{ERRORS_CLASS}" name="test_it_fails"><failure message="x"/></testcase>
<testcase classname="test.test_change_stream.TestHandWritten" name="test_not_unified"/>
</testsuite></testsuites>"""


def test_pymongo_names_and_verdicts_map_onto_harness_test_ids(tmp_path):
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "change-streams-errors.json").write_text(
        json.dumps(
            {
                "tests": [
                    {"description": "change stream errors on a thing."},
                    {"description": "skipped one"},
                    {"description": "it fails"},
                ]
            }
        )
    )
    names = pymongo_names(unified)
    assert (
        names[("TestUnifiedChangeStreamsErrors", "test_change_stream_errors_on_a_thing")]
        == "unified/change-streams-errors::change stream errors on a thing."
    )
    junit = tmp_path / "j.xml"
    junit.write_text(JUNIT)
    assert pymongo_verdicts(junit, unified) == {
        "unified/change-streams-errors::change stream errors on a thing.": "passed",
        "unified/change-streams-errors::skipped one": "skipped",
        "unified/change-streams-errors::it fails": "failed",
    }


def test_agreement_names_every_difference(tmp_path, monkeypatch):
    import benchmarks.bench_runner as bench

    monkeypatch.setattr(
        bench, "pymongo_verdicts", lambda junit, unified: {"unified/a::x": "passed", "unified/a::y": "skipped"}
    )
    figures = {
        "j1": {"verdicts": {"unified/a::x": "passed", "unified/a::y": "passed", "prose/p::1": "passed"}},
        "j4": {"verdicts": {"unified/a::x": "passed", "unified/a::y": "failed", "prose/p::1": "passed"}},
        "pymongo_unified": {"junit": "unused"},
    }
    suite = type("Suite", (), {"unified_dir": tmp_path})()
    found = agreement(figures, [1, 4], suite, tmp_path)
    assert found["parallel_vs_sequential"] == {"j4": ["unified/a::y"]}
    assert found["pymongo_vs_harness_differ"] == [("unified/a::y", "skipped", "passed")]

"""``pytest --specs``: one item per spec test, same verdicts as the CLI, JUnit XML and -k work."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

from tests.harness.app.test_cli import FAILING, PASSING
from tests.helpers import LEGACY_HEADER, known_yaml

SKIPPED = """
  - description: sharded only
    target: collection
    topology: [sharded]
    result: {success: []}
"""


def _pytest(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_spec_tests_become_items_with_cli_verdicts(tmp_path):
    spec = tmp_path / "plugin.yml"
    spec.write_text(LEGACY_HEADER + PASSING + FAILING + SKIPPED)
    junit = tmp_path / "junit.xml"
    done = _pytest(
        tmp_path,
        "--specs",
        str(spec),
        "--expected",
        "none",
        f"--junitxml={junit}",
        "--results",
        str(tmp_path / "r.jsonl"),
    )
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 passed, 1 skipped" in done.stdout
    assert "success[0].operationType" in done.stdout
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"passes", "fails", "sharded only"}
    assert cases["fails"].find("failure") is not None
    assert cases["sharded only"].find("skipped") is not None
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 3
    # each testcase carries the very record the results file holds, for `harness report`
    properties = {name: {p.get("name"): p.get("value") for p in case.iter("property")} for name, case in cases.items()}
    assert sorted(p["cs-harness.result"] for p in properties.values()) == sorted(lines)
    recorded = json.loads(properties["fails"]["cs-harness.result"])
    assert recorded["outcome"] == "failed" and recorded["driver"]["name"] == "pymongo"


def test_keyword_selection_and_known_failures(tmp_path):
    spec = tmp_path / "plugin.yml"
    spec.write_text(LEGACY_HEADER + PASSING + FAILING)
    expected = tmp_path / "expected.yml"
    expected.write_text(known_yaml("legacy/plugin::fails"))
    done = _pytest(tmp_path, "--specs", str(spec), "--expected", str(expected), f"--junitxml={tmp_path / 'j.xml'}")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 1 xfailed" in done.stdout
    # pytest writes the xfail as <skipped>; the record property keeps the harness's verdict
    case = next(c for c in ET.parse(tmp_path / "j.xml").getroot().iter("testcase") if c.get("name") == "fails")
    assert case.find("skipped") is not None
    record = json.loads(next(p.get("value") for p in case.iter("property") if p.get("name") == "cs-harness.result"))
    assert record["outcome"] == "failed" and record["expectation"]["expected"] is True
    done = _pytest(tmp_path, "--specs", str(spec), "--expected", "none", "-k", "passes")
    assert done.returncode == 0 and "1 passed, 1 deselected" in done.stdout


INERT_PROBE = """
import sys


def test_the_harness_stayed_out_of_this_session(pytestconfig):
    heavy = [name for name in ("pymongo", "bson", "secantus", "harness.engine", "harness.app.pytest_harness",
                               "yaml", "requests") if name in sys.modules]
    assert heavy == []
    assert not pytestconfig.pluginmanager.has_plugin("changestream_harness_session")
    for flag in ("specs", "target", "driver", "results"):
        try:
            pytestconfig.getoption(flag)
        except ValueError:
            continue
        raise AssertionError(f"--{flag} is declared in a session that did not ask for the harness")
"""


def test_the_plugin_is_inert_in_a_session_that_does_not_ask_for_it(tmp_path):
    (tmp_path / "test_probe.py").write_text(INERT_PROBE)
    done = _pytest(tmp_path, "-q", "test_probe.py")
    assert done.returncode == 0, done.stdout + done.stderr
    helped = _pytest(tmp_path, "--help")
    assert "--specs" not in helped.stdout and "--failpoints" not in helped.stdout


def test_an_inert_probe_notices_an_active_harness(tmp_path):
    """The probe above can fail: asking for the harness (one of its options) activates it."""
    (tmp_path / "test_probe.py").write_text(INERT_PROBE)
    done = _pytest(tmp_path, "-q", "test_probe.py", "--target", "embedded")
    assert done.returncode == 1 and "stayed_out" in done.stdout, done.stdout + done.stderr


def test_asking_for_the_harness_declares_every_row_of_the_options_table(tmp_path):
    from harness.app.options import RUN_OPTIONS

    (tmp_path / "test_rows.py").write_text(
        "def test_rows(pytestconfig):\n"
        + "".join(f"    pytestconfig.getoption({option.pytest_dest!r})\n" for option in RUN_OPTIONS)
    )
    done = _pytest(tmp_path, "-q", "test_rows.py", "--driver", "pymongo")
    assert done.returncode == 0, done.stdout + done.stderr
    helped = _pytest(tmp_path, "--help", "--target", "embedded")
    assert all(option.pytest in helped.stdout for option in RUN_OPTIONS)

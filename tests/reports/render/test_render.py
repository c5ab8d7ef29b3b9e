"""reports.render: one self-contained page (no scripts, links or URLs) from small tables, every value escaped."""

from __future__ import annotations

import re
from datetime import datetime

from reports.collect import TableRows
from reports.render import render_report
from reports.render.sections import SECTIONS

EVIL = "unified/x::<script>alert(1)</script>"
CELLS = ["pymongo 4.9.0 / secantusdb 0.7.0 replicaset native", "pymongo 4.10.0 / secantusdb 0.7.0 replicaset native"]


def counts(passed, failed=0, error=0, skipped=0):
    decided = passed + failed + error
    return {
        "passed": passed,
        "failed": failed,
        "error": error,
        "skipped": skipped,
        "decided": decided,
        "verdicts": decided + skipped,
        "runs": 1,
        "pass_rate": passed / decided if decided else None,
    }


def small_tables() -> dict[str, TableRows]:
    cell_tests = [
        dict(cell=c, test_id=t, status=s, **counts(*n))
        for c, t, s, n in [
            (CELLS[0], "u/a::1", "pass", (1,)),
            (CELLS[1], "u/a::1", "pass", (1,)),
            (CELLS[0], EVIL, "pass", (1,)),
            (CELLS[1], EVIL, "flaky", (1, 1)),
            (CELLS[0], "u/b::2", "fail", (0, 1)),
            (CELLS[1], "u/b::2", "fail", (0, 1)),
        ]
    ]
    return {
        "cells": TableRows([dict(cell=CELLS[0], **counts(2)), dict(cell=CELLS[1], **counts(1, 2))], 2),
        "cell_tests": TableRows(cell_tests, 6),
        "transitions": TableRows(
            [
                {
                    "change": "regression",
                    "axis": "driver_version",
                    "context": "pymongo / x",
                    "test_id": "u/a::1",
                    "previous_version": "4.9.0",
                    "version": "4.10.0",
                    "status": "fail",
                    "message": "code 280 (ChangeStreamFatalError): & <boom>",
                }
            ],
            1,
        ),
        "flakiness": TableRows(
            [
                {
                    "cell": CELLS[1],
                    "test_id": EVIL,
                    "runs": 2,
                    "failures": 1,
                    "flake_rate": 0.5,
                    "transitions": 1,
                    "wilson_low": 0.09,
                    "wilson_high": 0.91,
                    "classification": "flaky",
                    "message": "timeout",
                }
            ],
            1,
        ),
        "runs": TableRows(
            [
                {
                    "run_id": f"r{n}",
                    "started_at": datetime(2026, 1, 5, 10, n),
                    "cell": CELLS[n % 2],
                    "cell_label": None,
                    "repeat": None,
                    "sources": "jsonl",
                    **counts(3 - n, n),
                }
                for n in range(3)
            ],
            3,
        ),
        "input_problems": TableRows(
            [{"file": "/r/bad.jsonl", "problem": "malformed line", "lines": 2, "example": '{"torn'}], 1
        ),
    }


def test_the_page_is_self_contained_and_escapes_everything(tmp_path):
    page = render_report(small_tables(), tmp_path / "out" / "report.html", title="Nightly <matrix>").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>Nightly &lt;matrix&gt;</title>" in page
    for fetches in ("<script", "<link", "src=", "url(", "@import", "http://", "https://", "//fonts"):
        assert fetches not in page.lower(), fetches
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "code 280 (ChangeStreamFatalError): &amp; &lt;boom&gt;" in page


def test_every_section_is_there_and_empty_ones_say_so(tmp_path):
    page = render_report(small_tables(), tmp_path / "report.html").read_text()
    for element_id, _, _ in SECTIONS:
        assert f'<section id="{element_id}">' in page
    assert "no campaign records" in page and "no baseline given, or nothing changed" in page
    assert 'id="regressions-table"' in page and "4.9.0 \u2192 4.10.0" in page


def test_the_heat_map_has_one_square_per_test_and_cell_coloured_by_status(tmp_path):
    page = render_report(small_tables(), tmp_path / "report.html").read_text()
    heat_map = re.search(r'<svg id="heatmap".*?</svg>', page, re.S).group(0)
    squares = re.findall(r'<rect class="hm hm-(\w+)"', heat_map)
    # rows: the test with the most trouble first (u/b::2, then the flaky one); columns in cell order
    assert squares == ["fail", "fail", "pass", "flaky", "pass", "pass"]
    width, height = map(float, re.search(r'<svg id="heatmap" width="(\d+)" height="(\d+)"', heat_map).groups())
    assert width > 100 and height > 40


def test_headline_figures_come_from_the_tables(tmp_path):
    page = render_report(small_tables(), tmp_path / "report.html").read_text()
    figures = {label: value for value, label in re.findall(r'<div class="figure"><b>([^<]+)</b><span>([^<]+)', page)}
    assert figures["pass rate"] == "60.0%" and figures["regressions"] == "1" and figures["flaky tests"] == "1"
    assert figures["input problems"] == "1" and figures["cells"] == "2"

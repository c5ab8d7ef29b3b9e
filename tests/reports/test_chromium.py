"""The report page as a person sees it: rendered by headless Chromium (Debian's ``chromium``) through selenium.

Asserts on the visible text (the regression, its test and its message), that
the heat map is drawn with a real size, and that opening the page made no
network request at all (Chromium's own network log). A full-page screenshot
is saved beside the page (``report.png``) for a person to look at. Selenium
is given ``/usr/bin/chromedriver`` explicitly and runs offline, so it never
downloads a driver or a browser.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.spark_support import REGRESSED, REGRESSION_MESSAGE, matrix_records, write_jsonl

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def _missing() -> str | None:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return "Debian chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)"
    try:
        import selenium  # noqa: F401 - imported only to learn whether it is installed
    except ImportError:
        return "selenium is not installed (pip install -e '.[reports-test]')"
    return None


@pytest.fixture(scope="module")
def page(spark, tmp_path_factory):
    from reports.job import run_report

    work = tmp_path_factory.mktemp("chromium")
    write_jsonl(work / "runs" / "results.jsonl", matrix_records())
    return run_report(spark, [str(work / "runs")], work / "out", title="Nightly matrix").page


@pytest.fixture
def browser(tmp_path, monkeypatch):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium-manager, should anything reach it, must not download
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for, from Chromium's DevTools network log."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_a_person_sees_the_regression_the_heat_map_and_nothing_is_fetched(page, browser):
    from selenium.webdriver.common.by import By

    url = page.resolve().as_uri()
    browser.get("about:blank")
    requested_urls(browser)  # drain what the browser's own start page asked for
    browser.get(url)
    assert browser.title == "Nightly matrix"
    text = browser.find_element(By.TAG_NAME, "body").text
    for heading in (
        "Pass rate per cell",
        "Tests x cells",
        "Regressions",
        "Flaky tests",
        "Failures by cause",
        "Fault survival (campaigns)",
        "Run history",
    ):
        assert heading in text

    regressions = browser.find_element(By.ID, "regressions-table")
    assert regressions.is_displayed()
    first_row = regressions.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text
    assert REGRESSED in first_row.replace("\n", " ") and "4.9.0 \u2192 4.10.0" in first_row
    assert REGRESSION_MESSAGE in regressions.text.replace("\n", " ")

    heat_map = browser.find_element(By.ID, "heatmap")
    assert heat_map.is_displayed() and heat_map.size["width"] > 200 and heat_map.size["height"] > 100
    squares = heat_map.find_elements(By.CSS_SELECTOR, "rect.hm")
    assert len(squares) == 10 * 6  # 9 tests and a campaign, in 6 cells
    failing = heat_map.find_elements(By.CSS_SELECTOR, "rect.hm-fail")
    assert failing and failing[0].size["width"] > 10 and failing[0].value_of_css_property("fill") == "rgb(198, 40, 40)"
    assert browser.find_element(By.ID, "pass-rate-chart").size["height"] > 50

    assert requested_urls(browser) == [url]

    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, height + 120)
    screenshot = page.with_name("report.png")
    assert browser.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 20_000
    keep = os.environ.get("REPORT_SCREENSHOT")  # a copy to look at after the run
    if keep:
        shutil.copy(screenshot, keep)

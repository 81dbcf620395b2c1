"""One real browser: open a model page, change the context control.

The table then changes in place.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _require_browser() -> None:
    present = os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)
    try:
        import selenium  # noqa: F401
    except ImportError:
        present = False
    if not present:
        if os.environ.get("CI"):
            pytest.fail("chromium, chromedriver and selenium are required when CI is set")
        pytest.skip("chromium/chromedriver/selenium not installed")


@pytest.fixture()
def server_url() -> Iterator[str]:
    """uvicorn on a free 127.0.0.1 port in a thread (same process, so the test catalog applies)."""
    import uvicorn

    from tpscalc.web.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture()
def browser() -> Iterator[object]:
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="tpscalc-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_context_control_swaps_the_table(browser, server_url: str) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    def wait_for(text: str, element_id: str) -> None:
        # The table is replaced in place: an element found a moment ago may be gone already.
        WebDriverWait(browser, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: text in d.find_element(By.ID, element_id).text)

    browser.get(f"{server_url}/en/models/starcoder-2-15b")
    table = browser.find_element(By.ID, "results-table")
    before = table.text
    assert "Does not fit" not in before
    browser.find_element(By.NAME, "all").click()  # also show cards that can't run it
    wait_for("Does not fit", "results-table")
    Select(browser.find_element(By.NAME, "context")).select_by_value("16384")  # its limit
    wait_for("16,384 tokens", "results")
    after = browser.find_element(By.ID, "results-table").text
    assert after != before
    assert browser.current_url.endswith("/en/models/starcoder-2-15b?context=16384&all=1")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"


def test_section_navigation_and_table_pages(browser, server_url: str, many_cards: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{server_url}/en/models/starcoder-2-15b?context=8192")
    assert "Page 1 of 3" in browser.find_element(By.CSS_SELECTOR, "nav.pager").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")
    first_card = rows[0].text
    browser.find_element(By.CSS_SELECTOR, "nav.sections a[href='#faq']").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("#faq"))
    assert browser.execute_script("return window.scrollY") > 0  # the FAQ scrolled into view
    browser.find_element(By.CSS_SELECTOR, "nav.pager a[rel='next']").click()
    WebDriverWait(browser, 10).until(lambda d: "page=2" in d.current_url)
    assert "Page 2 of 3" in browser.find_element(By.CSS_SELECTOR, "nav.pager").text
    assert "context=8192" in browser.current_url
    assert browser.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")[0].text != first_card


def test_exported_page_search_filters_the_table(browser, tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from typer.testing import CliRunner

    from tpscalc.cli.main import app

    site = tmp_path / "site"
    assert CliRunner().invoke(app, ["export-site", str(site), "--lang", "en"]).exit_code == 0
    browser.get((site / "en" / "cards" / "geforce-rtx-4090.html").as_uri())
    search = browser.find_element(By.CSS_SELECTOR, "#controls input[type=search]")
    assert search.is_displayed()  # the script shows the form; without it the form stays hidden
    assert not browser.find_elements(By.NAME, "context")  # no server-only control
    rows = browser.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")
    assert len(rows) > 1
    WebDriverWait(browser, 10).until(  # the data file loaded (from file://, no server)
        lambda d: d.execute_script("return !!(window.tpscalcData && window.tpscalcData.rows)"))
    search.send_keys("starcoder")
    WebDriverWait(browser, 10).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")) < len(rows))
    shown = browser.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")
    assert shown and all("starcoder" in r.text.lower() for r in shown)


def test_exported_page_pages_through_every_row(browser, tmp_path, many_cards: int) -> None:
    """The page holds the first 20 rows; the script pages through all of them 50 at a time,
    rendered as the server renders its rows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from typer.testing import CliRunner

    from tpscalc.cli.main import app

    site = tmp_path / "site"
    assert CliRunner().invoke(app, ["export-site", str(site), "--lang", "nl"]).exit_code == 0
    browser.get((site / "nl" / "models" / "starcoder-2-15b.html").as_uri())
    html = (site / "nl" / "models" / "starcoder-2-15b.html").read_text(encoding="utf-8")
    first_page = browser.execute_script(  # the file's own rows, as the browser parses them
        "var doc = new DOMParser().parseFromString(arguments[0], 'text/html');"
        "return Array.from(doc.querySelectorAll('#results-table tbody tr'))"
        ".map(function (r) { return r.outerHTML; });", html)
    WebDriverWait(browser, 10).until(lambda d: "1 van 3" in d.find_element(
        By.CSS_SELECTOR, "nav.pager").text)
    rendered = [r.get_attribute("outerHTML") for r in
                browser.find_elements(By.CSS_SELECTOR, "#results-table tbody tr")]
    assert len(first_page) == 20 and len(rendered) == 50
    assert rendered[:20] == first_page  # the script's rows read exactly as the server's
    assert not browser.find_element(By.CSS_SELECTOR, ".static-more").is_displayed()
    seen = set()
    for page in (1, 2, 3):
        assert f"{page} van 3" in browser.find_element(By.CSS_SELECTOR, "nav.pager").text
        seen |= {r.text for r in browser.find_elements(By.CSS_SELECTOR,
                                                       "#results-table tbody tr td:nth-child(2)")}
        if page < 3:
            browser.find_elements(By.CSS_SELECTOR, "nav.pager button")[-1].click()
    assert len(seen) == many_cards


def test_rig_controls_change_the_table(browser, server_url: str) -> None:
    """"cards: 2" and "system RAM: 64" on a model page: the GTX 1650 (4 GiB) that could not
    hold StarCoder 2 15B now runs it with part of the weights in RAM, and the row says so."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    def table_text() -> str:
        return str(browser.find_element(By.ID, "results-table").text)

    browser.get(f"{server_url}/en/models/starcoder-2-15b")
    before = table_text()
    assert "in RAM" not in before and "GTX 1650" not in before  # it does not fit alone
    Select(browser.find_element(By.NAME, "gpus")).select_by_value("2")
    WebDriverWait(browser, 15).until(lambda d: "gpus=2" in d.current_url)
    Select(browser.find_element(By.NAME, "ram")).select_by_value("64")
    WebDriverWait(browser, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: "in RAM" in table_text())
    after = table_text()
    assert after != before
    assert "GTX 1650" in after and "Offload" in after
    assert browser.current_url.endswith("gpus=2&ram=64")

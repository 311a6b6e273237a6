"""The web console in a real headless browser (Debian's chromium driven through its chromedriver by
Selenium), against a real server on loopback running on the simulated cloud: pages load, a reader
sees no button, an operator's Retry button resumes a FAILED_TEMP instantiation, and the operation
page's progress grows while the retry runs, until the page shows COMPLETED.

Skips, saying why, where chromium or chromedriver is missing (.ci/integration-deps.sh installs them).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from vnfm.config import Settings
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread
from vnfm.examples import example_csar

from ..api.conftest import seed_body
from ..api.test_oauth2 import SECRETS, clients

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WAIT = 20.0  # seconds any one page condition may take

pytestmark = pytest.mark.skipif(not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)),
                                reason="needs Debian's chromium and chromium-driver (.ci/integration-deps.sh)")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    # servers take 1 s to boot and node steps 0.25 s: a retry runs ~4 s, long enough to watch
    settings = Settings(data_dir=tmp_path, host="127.0.0.1", port=0, probe_callbacks=False, sim_boot_time=1.0,
                        sim_step_time=0, sim_node_step_time=0.25, auth_token="", fault_injection=True,
                        oauth2_clients=clients("ops-a", "reader-a", "admin"))
    handle = start_in_thread(settings)
    try:
        yield handle
    finally:
        handle.stop()


def _token(c: httpx.Client, name: str) -> str:
    r = c.post("/oauth2/token", data={"grant_type": "client_credentials"}, auth=(name, SECRETS[name]))
    r.raise_for_status()
    return str(r.json()["access_token"])


def failed_instantiation(base: str) -> str:
    """Onboard the example package as tenant-a, instantiate it with a worker that fails to build:
    the occurrence's id (FAILED_TEMP); the fault is cleared again."""
    with httpx.Client(base_url=base, timeout=30) as c:
        ops = {"Authorization": f"Bearer {_token(c, 'ops-a')}"}
        admin = {"Authorization": f"Bearer {_token(c, 'admin')}"}
        pkg = c.post("/vnfpkgm/v1/vnf_packages", json={}, headers=ops).json()["id"]
        c.put(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", content=example_csar(),
              headers={**ops, "Content-Type": "application/zip"}).raise_for_status()
        vnfd = c.get(f"/vnfpkgm/v1/vnf_packages/{pkg}", headers=ops).json()["vnfdId"]
        inst = c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd}, headers=ops).json()["id"]
        c.post("/sim/v1/faults", json={"fail_build": {"workerNode": 1}}, headers=admin).raise_for_status()
        loc = c.post(f"/vnflcm/v1/vnf_instances/{inst}/instantiate", json=seed_body(), headers=ops)
        loc.raise_for_status()
        op_url = loc.headers["Location"]
        deadline = time.monotonic() + WAIT
        while (state := c.get(op_url, headers=ops).json()["operationState"]) != "FAILED_TEMP":
            assert state in ("STARTING", "PROCESSING") and time.monotonic() < deadline, state
            time.sleep(0.05)
        c.delete("/sim/v1/faults", headers=admin).raise_for_status()
        return op_url.rsplit("/", 1)[1]


@pytest.fixture
def browser() -> Iterator[Any]:
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for a driver online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def log_in(driver: Any, base: str, name: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.delete_all_cookies()
    driver.get(f"{base}/console/")
    WebDriverWait(driver, WAIT).until(ec.url_to_be(f"{base}/console/login"))
    driver.find_element(By.NAME, "client_id").send_keys(name)
    driver.find_element(By.NAME, "client_secret").send_keys(SECRETS[name])
    driver.find_element(By.NAME, "client_secret").submit()
    WebDriverWait(driver, WAIT).until(ec.url_to_be(f"{base}/console/"))


def test_console_in_a_browser(server: ServerHandle, browser: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base = server.url
    op_id = failed_instantiation(base)
    # the page navigates (a form's answer, its own reload at the end): an element may go stale mid-check
    wait = WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException))

    log_in(browser, base, "reader-a")
    assert "FAILED_TEMP" in browser.find_element(By.TAG_NAME, "main").text
    for path, heading in (("/console/packages", "VNF packages"), ("/console/vims", "VIMs")):
        browser.get(base + path)
        assert browser.find_element(By.TAG_NAME, "h1").text == heading
    browser.get(f"{base}/console/ops/{op_id}")
    assert "What to do next" in browser.page_source
    assert not browser.find_elements(By.CSS_SELECTOR, "main button"), "a reader sees a button"
    assert "Only an operator can act on it" in browser.find_element(By.TAG_NAME, "main").text

    log_in(browser, base, "ops-a")
    browser.find_element(By.LINK_TEXT, "INSTANTIATE").click()
    wait.until(ec.url_to_be(f"{base}/console/ops/{op_id}"))
    before = len(browser.find_elements(By.CSS_SELECTOR, "#progress li"))
    button = browser.find_element(By.ID, "retry-button")
    button.click()
    wait.until(ec.staleness_of(button))  # the form's answer replaced the page
    # the retry runs: the page polls and its progress list grows while the state is PROCESSING
    wait.until(lambda d: d.find_element(By.ID, "progress").get_attribute("data-state") == "PROCESSING")
    seen = len(browser.find_elements(By.CSS_SELECTOR, "#progress li"))
    grew_while_running = []

    def grown_or_done(d: Any) -> bool:
        state = d.find_element(By.ID, "state").text
        if state == "PROCESSING" and len(d.find_elements(By.CSS_SELECTOR, "#progress li")) > max(seen, before):
            grew_while_running.append(state)
            return True
        return bool(state == "COMPLETED")

    wait.until(grown_or_done)
    wait.until(lambda d: d.find_element(By.ID, "state").text == "COMPLETED")
    assert grew_while_running, "the progress list did not grow while the retry ran"
    assert not browser.find_elements(By.ID, "retry-button")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#progress li")) > before
    browser.save_screenshot(str(tmp_path / "operation.png"))

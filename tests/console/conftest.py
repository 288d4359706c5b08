"""The console's browser tests: a real agentgov (`agentgov.testing.LocalServer`, the binary
in `AGENTGOV_BIN`) and Debian's Chromium driven by Selenium through Debian's chromedriver
(nothing downloaded: the system browser and driver, Selenium Manager off)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from agentgov import Agentgov
from agentgov.testing import LocalServer
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

HERE = Path(__file__).resolve().parent
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")

POLICY = """package console.tests
import rego.v1

require_approval contains "sending e-mail needs a person" if input.action == "send_email"
"""


@dataclass
class Tenant:
    id: str
    url: str
    api_key: str
    email: str
    password: str
    agent_id: str
    admin: Agentgov

    def user(self, role: str) -> tuple[str, str]:
        """A new user of the tenant with `role`: (email, password)."""
        email = f"{role}-{uuid.uuid4().hex[:6]}@agentgov.test"
        password = "console-password-1"
        r = self.admin.api.get_httpx_client().post(
            "/api/v1/users", json={"email": email, "password": password, "role": role}
        )
        r.raise_for_status()
        return email, password


@pytest.fixture(scope="session")
def server() -> Iterator[LocalServer]:
    binary = os.environ.get("AGENTGOV_BIN")
    if not binary:
        pytest.fail("set AGENTGOV_BIN to the agentgov binary (cargo xtask console does)")
    s = LocalServer(binary)
    s.start()
    yield s
    s.remove()


def make_tenant(server: LocalServer, name: str) -> Tenant:
    t = server.create_tenant(name, agent=f"{name}-mailer", policy=POLICY)
    admin = Agentgov.login(server.url, t["email"], t["password"])
    return Tenant(t["id"], server.url, t["api_key"], t["email"], t["password"], t["agent_id"], admin)


@pytest.fixture
def tenant(server: LocalServer) -> Tenant:
    return make_tenant(server, "acme")


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} and {CHROMEDRIVER} are needed (apt-get install chromium chromium-driver)")
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(arg)
    os.environ["SE_OFFLINE"] = "true"
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def wait(browser: WebDriver, seconds: float = 5) -> WebDriverWait[WebDriver]:
    return WebDriverWait(browser, seconds, poll_frequency=0.05)


def click(browser: WebDriver, by: str, selector: str) -> None:
    """Clicks the element, looking it up again while the view re-renders it (a list reloads
    after a save, replacing the element just found)."""

    def attempt(b: WebDriver) -> bool:
        try:
            b.find_element(by, selector).click()
        except (StaleElementReferenceException, NoSuchElementException):
            return False
        return True

    wait(browser).until(attempt)


def sign_in(browser: WebDriver, url: str, email: str, password: str) -> None:
    browser.get(f"{url}/console")
    wait(browser).until(ec.visibility_of_element_located((By.ID, "signin-form")))
    browser.find_element(By.NAME, "email").send_keys(email)
    browser.find_element(By.NAME, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "#signin-form button[type=submit]").click()
    wait(browser).until(ec.visibility_of_element_located((By.ID, "approvals")))


def screenshot(browser: WebDriver, name: str) -> None:
    """Saves the view as `<name>.png` in `$CONSOLE_SCREENSHOTS` (docs/console when
    `cargo xtask console --screenshots` runs the tests), else nowhere."""
    folder = os.environ.get("CONSOLE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / f"{name}.png"))


def axe_violations(browser: WebDriver) -> list[dict[str, object]]:
    """axe-core's serious and critical violations on the page as it is."""
    browser.execute_script(AXE.read_text())
    result = browser.execute_async_script("const done = arguments[0]; axe.run().then(done);")
    return [v for v in result["violations"] if v.get("impact") in ("serious", "critical")]

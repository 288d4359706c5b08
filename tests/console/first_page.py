"""How long the console's audit view takes to show its first page, in Debian's headless
Chromium: `cargo xtask bench` runs it against a server whose log it has just filled.

Each run is a full page load of `/console/#audit` with the session cookie already set: the
modules, the session check, `GET /audit?limit=50` and the chain verification of the 50
records shown, until the badge says "Chain verified". The time is the page's own
`performance.now()` (from the start of the navigation). Prints one JSON object:
`{"runs_ms": [...], "rows": 50, "badge": "..."}`.
"""

from __future__ import annotations

import argparse
import json
import os

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

READY = """
const done = arguments[0];
const poll = () => {
  const badge = document.getElementById("chain");
  const rows = document.querySelectorAll("#records tr").length;
  if (badge && badge.textContent.startsWith("Chain") && rows > 0) done([performance.now(), rows, badge.textContent]);
  else setTimeout(poll, 2);
};
poll();
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"):
        options.add_argument(arg)
    os.environ["SE_OFFLINE"] = "true"
    service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    browser = webdriver.Chrome(service=service, options=options)
    browser.set_script_timeout(60)
    try:
        browser.get(f"{args.url}/console")
        wait = WebDriverWait(browser, 30, poll_frequency=0.05)
        wait.until(ec.visibility_of_element_located((By.ID, "signin-form")))
        browser.find_element(By.NAME, "email").send_keys(args.email)
        browser.find_element(By.NAME, "password").send_keys(args.password)
        browser.find_element(By.CSS_SELECTOR, "#signin-form button[type=submit]").click()
        wait.until(ec.visibility_of_element_located((By.ID, "approvals")))
        runs, rows, badge = [], 0, ""
        for _ in range(args.runs):
            browser.get("about:blank")
            browser.get(f"{args.url}/console/#audit")
            ms, rows, badge = browser.execute_async_script(READY)
            runs.append(round(ms, 1))
        print(json.dumps({"runs_ms": runs, "rows": rows, "badge": badge}))
    finally:
        browser.quit()


if __name__ == "__main__":
    main()

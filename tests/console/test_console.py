"""The analyst console in a real headless Chromium against a real agentgov."""

from __future__ import annotations

import threading
import time
from typing import Any

from agentgov import Agentgov
from agentgov.testing import LocalServer
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec

from .conftest import Tenant, axe_violations, make_tenant, screenshot, sign_in, wait


def fetch(browser: WebDriver, method: str, path: str, csrf: bool) -> Any:
    """A request made by the page itself (its cookies), with or without the CSRF token."""
    script = """
        const [method, path, withToken, done] = arguments;
        const token = (document.cookie.match(/(?:^|; )agentgov_csrf=([^;]*)/) || [])[1] || "";
        const headers = withToken ? {"X-CSRF-Token": token} : {};
        fetch(path, {method, headers, credentials: "same-origin"}).then(r => done(r.status));
    """
    return browser.execute_async_script(script, method, path, csrf)


def test_password_sign_in_and_sign_out(browser: WebDriver, tenant: Tenant) -> None:
    browser.get(f"{tenant.url}/console")
    wait(browser).until(ec.visibility_of_element_located((By.ID, "signin-form")))
    screenshot(browser, "sign-in")
    sign_in(browser, tenant.url, tenant.email, tenant.password)
    assert tenant.email in browser.find_element(By.ID, "user").text
    assert axe_violations(browser) == []
    browser.find_element(By.ID, "signout").click()
    wait(browser).until(ec.visibility_of_element_located((By.ID, "signin-form")))
    assert axe_violations(browser) == []
    # The session is over on the server, not only in the page.
    assert fetch(browser, "GET", "/api/v1/auth/me", csrf=False) == 401
    browser.refresh()
    wait(browser).until(ec.visibility_of_element_located((By.ID, "signin-form")))


def test_a_check_that_needs_approval_appears_live_and_approving_releases_the_waiting_client(
    browser: WebDriver, tenant: Tenant
) -> None:
    sign_in(browser, tenant.url, tenant.email, tenant.password)
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "approvals-status"), "Nothing is waiting"))
    gov = Agentgov(tenant.url, api_key=tenant.api_key)
    decision = gov.check(tenant.agent_id, "send_email", "mail/all", {"subject": "quarterly numbers"})
    assert decision.required_approval and decision.hitl_request_id
    asked = time.monotonic()
    row = f'#queue li[data-id="{decision.hitl_request_id}"]'
    wait(browser, 1.0).until(ec.visibility_of_element_located((By.CSS_SELECTOR, row)))
    appeared = time.monotonic() - asked
    assert appeared < 1.0, appeared
    assert "quarterly numbers" in browser.find_element(By.CSS_SELECTOR, row).text
    assert axe_violations(browser) == []
    screenshot(browser, "approvals")

    outcome: dict[str, str] = {}
    waiting = threading.Thread(
        target=lambda: outcome.update(status=gov.hitl.wait(decision.hitl_request_id or "", timeout=20).status.value)
    )
    waiting.start()
    browser.find_element(By.CSS_SELECTOR, f"{row} button").click()  # Approve comes first
    waiting.join()
    assert outcome["status"] == "approved"
    wait(browser).until(ec.invisibility_of_element_located((By.CSS_SELECTOR, row)))


def test_a_viewer_cannot_decide_and_a_forged_request_is_refused(browser: WebDriver, tenant: Tenant) -> None:
    email, password = tenant.user("viewer")
    gov = Agentgov(tenant.url, api_key=tenant.api_key)
    decision = gov.check(tenant.agent_id, "send_email", "mail/all")
    sign_in(browser, tenant.url, email, password)
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "approvals-status"), "analyst"))
    assert browser.find_elements(By.CSS_SELECTOR, "#queue button") == []
    assert fetch(browser, "POST", f"/api/v1/hitl/approve/{decision.hitl_request_id}", csrf=True) == 403
    assert gov.hitl.status(decision.hitl_request_id or "").status.value == "pending"


def test_state_changes_need_the_csrf_token(browser: WebDriver, tenant: Tenant) -> None:
    gov = Agentgov(tenant.url, api_key=tenant.api_key)
    decision = gov.check(tenant.agent_id, "send_email", "mail/all")
    sign_in(browser, tenant.url, tenant.email, tenant.password)
    assert fetch(browser, "POST", f"/api/v1/hitl/reject/{decision.hitl_request_id}", csrf=False) == 403
    assert gov.hitl.status(decision.hitl_request_id or "").status.value == "pending"
    assert fetch(browser, "POST", f"/api/v1/hitl/reject/{decision.hitl_request_id}", csrf=True) == 200


def test_two_tenants_never_see_each_others_rows(browser: WebDriver, server: LocalServer, tenant: Tenant) -> None:
    other = make_tenant(server, "globex")
    theirs = Agentgov(other.url, api_key=other.api_key).check(other.agent_id, "send_email", "mail/x")
    ours = Agentgov(tenant.url, api_key=tenant.api_key).check(tenant.agent_id, "send_email", "mail/y")
    sign_in(browser, tenant.url, tenant.email, tenant.password)
    wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, f'li[data-id="{ours.hitl_request_id}"]')))
    rows = [li.get_attribute("data-id") for li in browser.find_elements(By.CSS_SELECTOR, "#queue li")]
    assert theirs.hitl_request_id not in rows and rows == [ours.hitl_request_id]


def test_the_audit_view_pages_filters_and_shows_the_chain_verified(browser: WebDriver, tenant: Tenant) -> None:
    gov = Agentgov(tenant.url, api_key=tenant.api_key)
    for i in range(60):
        gov.audit.log("app.console_test", agent=tenant.agent_id, action=f"step-{i}", resource="ledger")
    gov.check(tenant.agent_id, "send_email", "mail/audit")
    sign_in(browser, tenant.url, tenant.email, tenant.password)
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="#audit"]').click()
    wait(browser).until(ec.text_to_be_present_in_element((By.ID, "chain"), "Chain verified"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#records tr")
    # Newest first: the sign-in itself heads the log.
    assert len(rows) == 50 and "auth.login" in rows[0].text
    assert "ok" in (browser.find_element(By.ID, "chain").get_attribute("class") or "")
    browser.find_element(By.ID, "audit-more").click()
    wait(browser).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#records tr")) > 50)
    event_type = browser.find_element(By.NAME, "event_type")
    event_type.send_keys("policy.decision")
    browser.find_element(By.CSS_SELECTOR, "#audit-filters button").click()
    wait(browser).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#records tr")) == 1)
    assert "send_email" in browser.find_element(By.CSS_SELECTOR, "#records tr").text
    assert axe_violations(browser) == []
    screenshot(browser, "audit")


def test_single_sign_on_through_the_test_provider(browser: WebDriver) -> None:
    """The provider of tests/oidc (node oidc-provider, `npm ci --prefix tests/oidc`), which
    completes its login by itself; the server restarted with it configured for the tenant."""
    import json
    import os
    import subprocess
    from pathlib import Path

    idp_dir = Path(__file__).resolve().parents[1] / "oidc"
    if not (idp_dir / "node_modules").exists():
        if os.environ.get("CI"):
            raise AssertionError("tests/oidc needs `npm ci --prefix tests/oidc`")
        import pytest

        pytest.skip("the test OpenID provider is not installed (npm ci --prefix tests/oidc)")
    server = LocalServer(os.environ["AGENTGOV_BIN"])
    server.start()
    tenant = make_tenant(server, "sso")
    redirect = f"{server.url}/console/"
    secret = "console-sso-secret-0123456789"
    config = {
        "clients": [{"client_id": "console", "client_secret": secret, "redirect_uris": [redirect]}],
        "accounts": [{"sub": "u-1", "email": tenant.email, "email_verified": True, "name": "Ada"}],
    }
    idp = subprocess.Popen(
        ["node", "server.mjs", "--port", "0", "--exit-on-stdin-close"],
        cwd=idp_dir,
        env={**os.environ, "IDP_CONFIG": json.dumps(config)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert idp.stdout is not None
        issuer = json.loads(idp.stdout.readline())["issuer"]
        server.stop()
        server.extra_env["AGENTGOV_SSO_PROVIDERS"] = (
            f'[{{id="test", name="Test IdP", issuer="{issuer}", client_id="console", '
            f'client_secret="{secret}", redirect_uris=["{redirect}"], tenant_id="{tenant.id}"}}]'
        )
        server.start()
        browser.get(f"{server.url}/console")
        button = wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#sso button")))
        assert button.text == "Sign in with Test IdP"
        button.click()
        wait(browser, 15).until(ec.visibility_of_element_located((By.ID, "approvals")))
        assert tenant.email in browser.find_element(By.ID, "user").text
        assert browser.current_url == redirect, "the code and state are gone from the address"
        assert axe_violations(browser) == []
    finally:
        browser.get("about:blank")
        idp.kill()
        server.remove()

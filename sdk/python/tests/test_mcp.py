"""agentgov.mcp with a real FastMCP server, its in-memory client and a real agentgov server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("fastmcp")

from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError

from agentgov import Agentgov, RetryPolicy
from agentgov.mcp import AgentgovMiddleware

from .conftest import INJECTION, Tenant


def server(gov: Agentgov, tenant: Tenant, runs: dict[str, int], **options: Any) -> FastMCP:
    mcp = FastMCP("tools", middleware=[AgentgovMiddleware(gov, tenant.agent_id, **options)])

    def count(name: str) -> None:
        runs[name] = runs.get(name, 0) + 1

    @mcp.tool
    def read_file(path: str) -> str:
        count("read_file")
        return f"contents of {path}"

    @mcp.tool
    def delete_files(path: str) -> str:
        count("delete_files")
        return f"deleted {path}"

    @mcp.tool
    def send_email(to: str, body: str) -> str:
        count("send_email")
        return f"sent to {to}: {body}"

    @mcp.tool
    def fetch_page(url: str) -> str:
        count("fetch_page")
        return f"<p>{INJECTION}</p>"

    return mcp


def test_denied_tools_are_hidden_and_fail_and_allowed_ones_run_once_audited(tenant: Tenant) -> None:
    runs: dict[str, int] = {}

    async def scenario() -> None:
        async with Client(server(tenant.client(), tenant, runs), mode="legacy") as c:
            names = {t.name for t in await c.list_tools()}
            assert names == {"read_file", "send_email", "fetch_page"}
            r = await c.call_tool("read_file", {"path": "README.md"})
            assert r.data == "contents of README.md"
            with pytest.raises(ToolError, match="deleting files is not allowed"):
                await c.call_tool("delete_files", {"path": "/home"})

    asyncio.run(scenario())
    assert runs == {"read_file": 1}
    deny, allow = tenant.decisions()
    assert (allow["decision"], deny["decision"]) == ("allow", "deny")
    assert allow["details"]["session_id"] and allow["details"]["tool_call_id"]  # type: ignore[index]


@pytest.mark.parametrize("verdict", ["approve", "reject"])
def test_an_approval_waits_for_the_analyst(tenant: Tenant, verdict: str) -> None:
    runs: dict[str, int] = {}
    gov = tenant.client()

    async def scenario() -> Any:
        async with Client(server(gov, tenant, runs, approval_timeout=20), mode="legacy") as c:
            return await c.call_tool("send_email", {"to": "all@corp.test", "body": "hi"}, raise_on_error=False)

    t = tenant.analyst_decides(verdict)
    result = asyncio.run(scenario())
    t.join()
    if verdict == "approve":
        assert runs == {"send_email": 1} and result.data == "sent to all@corp.test: hi"
    else:
        assert runs == {} and result.is_error and "rejected" in result.content[0].text


def test_an_edit_the_analyst_approves_is_what_runs(tenant: Tenant) -> None:
    runs: dict[str, int] = {}
    gov = tenant.client()

    async def scenario() -> Any:
        async with Client(server(gov, tenant, runs, approval_timeout=20), mode="legacy") as c:
            return await c.call_tool("send_email", {"to": "all@corp.test", "body": "hi"})

    t = tenant.analyst_decides("approve", edit={"to": "one@corp.test", "body": "hi"})
    result = asyncio.run(scenario())
    t.join()
    assert runs == {"send_email": 1} and result.data == "sent to one@corp.test: hi"


def test_an_approval_can_answer_pending_and_the_repeated_call_runs_once_approved(tenant: Tenant) -> None:
    runs: dict[str, int] = {}

    async def scenario() -> None:
        async with Client(server(tenant.client(), tenant, runs, approval="pending"), mode="legacy") as c:
            args = {"to": "all@corp.test", "body": "hi"}
            first = await c.call_tool("send_email", args, raise_on_error=False)
            body = json.loads(first.content[0].text)
            assert first.is_error and body["error"] == "approval_pending" and runs == {}
            again = await c.call_tool("send_email", args, raise_on_error=False)
            assert again.is_error and json.loads(again.content[0].text)["hitl_request_id"] == body["hitl_request_id"]
            tenant.analyst.hitl.approve(body["hitl_request_id"])
            done = await c.call_tool("send_email", args)
            assert done.data == "sent to all@corp.test: hi"
            # Approved once: the next identical call asks again.
            later = await c.call_tool("send_email", args, raise_on_error=False)
            assert later.is_error and json.loads(later.content[0].text)["hitl_request_id"] != body["hitl_request_id"]

    asyncio.run(scenario())
    assert runs == {"send_email": 1}


def test_an_injection_in_a_tool_result_is_withheld(tenant: Tenant) -> None:
    runs: dict[str, int] = {}

    async def scenario() -> Any:
        async with Client(server(tenant.client(), tenant, runs), mode="legacy") as c:
            return await c.call_tool("fetch_page", {"url": "https://example.test"}, raise_on_error=False)

    result = asyncio.run(scenario())
    assert runs == {"fetch_page": 1} and result.is_error
    assert "withheld" in result.content[0].text and INJECTION not in result.content[0].text


def test_with_the_server_unreachable_calls_are_denied(tenant: Tenant) -> None:
    runs: dict[str, int] = {}

    async def scenario(url: str) -> Any:
        down = Agentgov(url, api_key=tenant.api_key, timeout=2, retry=RetryPolicy(retries=0))
        async with Client(server(down, tenant, runs), mode="legacy") as c:
            return await c.call_tool("read_file", {"path": "README.md"}, raise_on_error=False)

    with tenant.stopped() as url:
        result = asyncio.run(scenario(url))
    assert runs == {} and result.is_error and "fail-closed" in result.content[0].text

"""agentgov.openai_agents with the real OpenAI Agents SDK, its scripted model
(`agents.testing.ScriptedModel`, no LLM) and a real agentgov server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    InputGuardrailTripwireTriggered,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
    set_tracing_disabled,
)
from agents.items import ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call

from agentgov import Agentgov, RetryPolicy
from agentgov.openai_agents import AgentgovGuardrails

from .conftest import INJECTION, Tenant

# Traces kept in process (they carry the run's group id), exported nowhere.
set_tracing_disabled(False)
set_trace_processors([])


class Tools:
    def __init__(self) -> None:
        self.runs: dict[str, int] = {}

        def count(name: str) -> None:
            self.runs[name] = self.runs.get(name, 0) + 1

        @function_tool
        def read_file(path: str) -> str:
            """Read a file."""
            count("read_file")
            return f"contents of {path}"

        @function_tool
        def delete_files(path: str) -> str:
            """Delete files."""
            count("delete_files")
            return f"deleted {path}"

        @function_tool
        def send_email(to: str, body: str) -> str:
            """Send an e-mail."""
            count("send_email")
            return f"sent to {to}: {body}"

        @function_tool
        def fetch_page(url: str) -> str:
            """Fetch a web page."""
            count("fetch_page")
            return f"<p>{INJECTION}</p>"

        self.all = [read_file, delete_files, send_email, fetch_page]


def make(
    gov: Agentgov,
    tenant: Tenant,
    tools: Tools,
    name: str,
    args: dict[str, Any],
    call_id: str,
    screen_input: bool = True,
) -> Any:
    guardrails = AgentgovGuardrails(gov, tenant.agent_id)
    model = ScriptedModel([[function_call(name, args, call_id=call_id)], [assistant_message("done")]])
    screens = [guardrails.prompt_guard] if screen_input else []
    agent = Agent(name="ops", tools=guardrails.govern(tools.all), model=model, input_guardrails=screens)
    return agent, guardrails


def tool_output(result: Any) -> str:
    return str(next(i.output for i in result.new_items if isinstance(i, ToolCallOutputItem)))


def run(agent: Any, prompt: str = "go", group: str = "oa-run") -> Any:
    return asyncio.run(Runner.run(agent, prompt, run_config=RunConfig(group_id=group)))


def test_an_allowed_call_runs_once_and_is_audited_with_session_and_tool_call(tenant: Tenant) -> None:
    tools = Tools()
    agent, _ = make(tenant.client(), tenant, tools, "read_file", {"path": "README.md"}, "call-oa-1")
    result = run(agent, group="oa-allow")
    assert tools.runs == {"read_file": 1} and tool_output(result) == "contents of README.md"
    (record,) = tenant.decisions()
    assert record["decision"] == "allow"
    assert record["details"]["session_id"] == "oa-allow"  # type: ignore[index]
    assert record["details"]["tool_call_id"] == "call-oa-1"  # type: ignore[index]


def test_a_denied_call_never_runs_and_the_model_reads_the_reason(tenant: Tenant) -> None:
    tools = Tools()
    agent, _ = make(tenant.client(), tenant, tools, "delete_files", {"path": "/home"}, "call-oa-2")
    result = run(agent)
    assert tools.runs == {} and "deleting files is not allowed" in tool_output(result)


@pytest.mark.parametrize("verdict", ["approve", "reject"])
def test_an_approval_interrupts_and_resumes_on_the_analysts_decision(tenant: Tenant, verdict: str) -> None:
    tools = Tools()
    gov = tenant.client()
    agent, guardrails = make(gov, tenant, tools, "send_email", {"to": "all@corp.test", "body": "hi"}, "call-oa-3")

    async def scenario() -> Any:
        result = await Runner.run(agent, "go", run_config=RunConfig(group_id="oa-approval"))
        assert result.interruptions and tools.runs == {}
        request_id = guardrails._decided["call-oa-3"].hitl_request_id
        assert request_id is not None

        t = tenant.analyst_decides(verdict, request_id)
        state = await guardrails.resolve(result, timeout=20)
        t.join()
        return await Runner.run(agent, state)

    resumed = asyncio.run(scenario())
    if verdict == "approve":
        assert tools.runs == {"send_email": 1} and tool_output(resumed) == "sent to all@corp.test: hi"
    else:
        assert tools.runs == {} and "rejected" in tool_output(resumed)
    # Approved, the guardrail spent the request's token with the call.
    spent = ["allow"] if verdict == "approve" else []
    assert [d["decision"] for d in tenant.decisions()] == [*spent, "require_approval"]


def test_an_edited_approval_is_refused_since_a_guardrail_cannot_change_arguments(tenant: Tenant) -> None:
    tools = Tools()
    gov = tenant.client()
    agent, guardrails = make(gov, tenant, tools, "send_email", {"to": "all@corp.test", "body": "hi"}, "call-oa-9")

    async def scenario() -> Any:
        result = await Runner.run(agent, "go", run_config=RunConfig(group_id="oa-edit"))
        request_id = guardrails._decided["call-oa-9"].hitl_request_id
        t = tenant.analyst_decides("approve", request_id, edit={"to": "one@corp.test", "body": "hi"})
        state = await guardrails.resolve(result, timeout=20)
        t.join()
        return request_id, await Runner.run(agent, state)

    request_id, resumed = asyncio.run(scenario())
    assert tools.runs == {} and "edited arguments" in tool_output(resumed)
    # Refused before the token was spent.
    assert isinstance(gov.hitl.status(request_id).approval_token, str)


def test_approving_in_the_sdk_alone_does_not_run_the_tool(tenant: Tenant) -> None:
    tools = Tools()
    agent, _ = make(tenant.client(), tenant, tools, "send_email", {"to": "x@corp.test", "body": "b"}, "call-oa-4")

    async def scenario() -> Any:
        result = await Runner.run(agent, "go")
        state = result.to_state()
        for item in state.get_interruptions():
            state.approve(item)
        return await Runner.run(agent, state)

    resumed = asyncio.run(scenario())
    assert tools.runs == {} and "pending" in tool_output(resumed)


def test_prompt_guard_screens_tool_output_and_user_input(tenant: Tenant) -> None:
    tools = Tools()
    agent, _ = make(tenant.client(), tenant, tools, "fetch_page", {"url": "https://example.test"}, "call-oa-5")
    result = run(agent)
    assert tools.runs == {"fetch_page": 1}
    assert "withheld" in tool_output(result) and INJECTION not in tool_output(result)
    agent, _ = make(tenant.client(), tenant, Tools(), "read_file", {"path": "a"}, "call-oa-6")
    with pytest.raises(InputGuardrailTripwireTriggered):
        run(agent, prompt=INJECTION)


def test_with_the_server_unreachable_calls_are_denied(tenant: Tenant) -> None:
    tools = Tools()
    with tenant.stopped() as url:
        down = Agentgov(url, api_key=tenant.api_key, timeout=2, retry=RetryPolicy(retries=0))
        # The user's input cannot be screened: the run stops before any tool.
        agent, _ = make(down, tenant, tools, "read_file", {"path": "README.md"}, "call-oa-7")
        with pytest.raises(InputGuardrailTripwireTriggered):
            run(agent)
        # Without the input guardrail, the tool call itself is denied.
        agent, _ = make(down, tenant, tools, "read_file", {"path": "README.md"}, "call-oa-8", screen_input=False)
        result = run(agent)
    assert tools.runs == {} and "fail-closed" in tool_output(result)

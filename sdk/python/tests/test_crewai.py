"""agentgov.crewai with the real CrewAI (its own virtual environment: it pins an older openai
than the OpenAI Agents SDK), a scripted LLM and a real agentgov server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

for name, value in (
    ("CREWAI_DISABLE_TELEMETRY", "true"),
    ("OTEL_SDK_DISABLED", "true"),
    ("CREWAI_TRACING_ENABLED", "false"),
):
    os.environ.setdefault(name, value)

pytest.importorskip("crewai")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

from agentgov import Agentgov, RetryPolicy
from agentgov.crewai import AgentgovHooks

from .conftest import INJECTION, Tenant

RUNS: dict[str, int] = {}
#: The addressees of the e-mails sent.
SENT: list[str] = []


def count(name: str) -> None:
    RUNS[name] = RUNS.get(name, 0) + 1


@tool("read_file")
def read_file(path: str) -> str:
    """Read a file."""
    count("read_file")
    return f"contents of {path}"


@tool("delete_files")
def delete_files(path: str) -> str:
    """Delete files."""
    count("delete_files")
    return f"deleted {path}"


@tool("send_email")
def send_email(to: str, body: str) -> str:
    """Send an e-mail."""
    count("send_email")
    SENT.append(to)
    return f"sent to {to}: {body}"


@tool("fetch_page")
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    count("fetch_page")
    return f"<p>{INJECTION}</p>"


class ScriptedLLM(BaseLLM):
    """Calls one tool (OpenAI-style native tool call), then answers with what it read."""

    script: list[Any] = []  # noqa: RUF012 - a pydantic field: each instance gets its own
    seen: list[str] = []  # noqa: RUF012

    def supports_function_calling(self) -> bool:
        return True

    def call(
        self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None, **kw: Any
    ) -> Any:
        if self.script:
            return self.script.pop(0)
        last = messages[-1]["content"] if isinstance(messages, list) else messages
        self.seen.append(str(last))
        return "Thought: done\nFinal Answer: finished"


def kickoff(name: str, args: dict[str, Any]) -> ScriptedLLM:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    llm = ScriptedLLM(model="scripted", script=[[call]], seen=[])
    agent = Agent(
        role="ops",
        goal="run a tool",
        backstory="test",
        llm=llm,
        tools=[read_file, delete_files, send_email, fetch_page],
    )
    Crew(agents=[agent], tasks=[Task(description="do it", expected_output="status", agent=agent)]).kickoff()
    return llm


@pytest.fixture
def hooks(tenant: Tenant) -> Iterator[AgentgovHooks]:
    RUNS.clear()
    h = AgentgovHooks(tenant.client(), tenant.agent_id, approval_timeout=20).register()
    yield h
    h.unregister()


def test_an_allowed_call_runs_once_and_is_audited_with_session_and_tool_call(
    tenant: Tenant, hooks: AgentgovHooks
) -> None:
    kickoff("read_file", {"path": "README.md"})
    assert RUNS == {"read_file": 1}
    (record,) = tenant.decisions()
    assert record["decision"] == "allow"
    assert record["details"]["session_id"] and str(record["details"]["tool_call_id"]).startswith("crewai-")  # type: ignore[index]


def test_a_denied_call_never_runs_and_the_agent_reads_the_reason(tenant: Tenant, hooks: AgentgovHooks) -> None:
    llm = kickoff("delete_files", {"path": "/home"})
    assert RUNS == {}
    assert any("deleting files is not allowed" in s for s in llm.seen), llm.seen


@pytest.mark.parametrize("verdict", ["approve", "reject"])
def test_an_approval_waits_for_the_analyst(tenant: Tenant, hooks: AgentgovHooks, verdict: str) -> None:
    t = tenant.analyst_decides(verdict)
    llm = kickoff("send_email", {"to": "all@corp.test", "body": "hi"})
    t.join()
    if verdict == "approve":
        assert RUNS == {"send_email": 1}
    else:
        assert RUNS == {} and any("rejected" in s for s in llm.seen), llm.seen


def test_an_edit_the_analyst_approves_is_what_runs(tenant: Tenant, hooks: AgentgovHooks) -> None:
    SENT.clear()
    t = tenant.analyst_decides("approve", edit={"to": "one@corp.test", "body": "hi"})
    kickoff("send_email", {"to": "all@corp.test", "body": "hi"})
    t.join()
    assert RUNS == {"send_email": 1} and SENT == ["one@corp.test"]
    allowed = tenant.decisions()[0]
    assert allowed["decision"] == "allow" and allowed["details"]["approved_by_request"]  # type: ignore[index]


def test_an_injection_in_a_tool_result_is_withheld(hooks: AgentgovHooks) -> None:
    llm = kickoff("fetch_page", {"url": "https://example.test"})
    assert RUNS == {"fetch_page": 1}
    assert any("withheld" in s for s in llm.seen) and not any(INJECTION in s for s in llm.seen), llm.seen


def test_with_the_server_unreachable_calls_are_denied(tenant: Tenant) -> None:
    RUNS.clear()
    with tenant.stopped() as url:
        down = Agentgov(url, api_key=tenant.api_key, timeout=2, retry=RetryPolicy(retries=0))
        h = AgentgovHooks(down, tenant.agent_id).register()
        try:
            llm = kickoff("read_file", {"path": "README.md"})
        finally:
            h.unregister()
    assert RUNS == {} and any("fail-closed" in s for s in llm.seen), llm.seen

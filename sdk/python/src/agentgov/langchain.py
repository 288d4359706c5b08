"""LangChain 1.x: agent middleware for `create_agent` (`pip install 'agentgov[langchain]'`).

    from agentgov import Agentgov
    from agentgov.langchain import AgentgovMiddleware, resume_when_decided

    gov = Agentgov(url, api_key=key)
    agent = create_agent(model, tools, middleware=[AgentgovMiddleware(gov, agent_id)],
                         checkpointer=InMemorySaver())
    out = agent.invoke({"messages": [...]}, config)          # may stop at an approval
    while "__interrupt__" in out:
        out = agent.invoke(resume_when_decided(gov, out["__interrupt__"]), config)

Every tool call is checked (the tool's name is the action, its arguments are in the context,
the LangGraph `thread_id` is the session, the tool call's id goes along). A denial becomes
the tool's result (an error `ToolMessage` with the reason), so the model sees it. A call that
needs approval interrupts the graph (`approval="interrupt"`, needs a checkpointer) with
`{"agentgov": "approval", "hitl_request_id", "tool", "args", "reason"}`; resume it with
`resume_when_decided` (which waits for the analyst) or with `{"hitl_request_id": id}` once
decided: the middleware asks agentgov for the outcome itself and runs the tool only when it
was approved and agentgov takes the request's single-use approval token for this very call.
Arguments are edited by the analyst, in agentgov (`gov.hitl.approve(id, context=...)`, checked
again under policy there): the tool then runs with the edit. A resume that carries other
`args` than the call's is refused, since no one approved them. `approval="wait"` blocks the
tool call until the analyst decides instead. With `guard_outputs`, a tool's output that Prompt Guard flags is
withheld from the model.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, Interrupt, interrupt

from ._gate import Gate, ResourceOf, ToolCall, denial, withheld
from .client import Agentgov, Decision

__all__ = ["AgentgovMiddleware", "resume_when_decided"]

#: Decisions kept per (thread, tool call): LangGraph runs the middleware again from the top
#: when it resumes an interrupt, and the call must not be checked (nor a request opened) twice.
_KEPT = 1024


class AgentgovMiddleware(AgentMiddleware):
    def __init__(
        self,
        gov: Agentgov,
        agent_id: str,
        *,
        resource: ResourceOf | None = None,
        context: Mapping[str, Any] | None = None,
        approval: Literal["interrupt", "wait"] = "interrupt",
        approval_timeout: float = 300.0,
        guard_outputs: bool = True,
        fail_open: bool | None = None,
    ) -> None:
        super().__init__()
        self.gate = Gate(
            gov,
            agent_id,
            resource=resource,
            context=context,
            fail_open=fail_open,
            approval_timeout=approval_timeout,
            framework="langchain",
        )
        self.approval = approval
        self.guard_outputs = guard_outputs
        # LangGraph runs a turn's tool calls in parallel threads.
        self._decided: OrderedDict[tuple[str | None, str | None], Decision] = OrderedDict()
        self._lock = threading.Lock()

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = _call(request)
        decision = self._decision(call)
        if decision.required_approval and decision.hitl_request_id:
            if self.approval == "wait":
                outcome = self.gate.wait(decision.hitl_request_id, call)
                if not outcome.approved:
                    return _error(call, outcome.message)
                request = _with_arguments(request, outcome.arguments)
            else:
                answer = interrupt(_payload(call, decision))
                request, refusal = self._resumed(request, call, decision, answer)
                if refusal is not None:
                    return refusal
        elif not decision.allowed:
            return _error(call, decision.reason)
        self._forget(call)
        result = handler(request)
        return self._screened(call, result)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = _call(request)
        decision = await asyncio.to_thread(self._decision, call)
        if decision.required_approval and decision.hitl_request_id:
            if self.approval == "wait":
                outcome = await asyncio.to_thread(self.gate.wait, decision.hitl_request_id, call)
                if not outcome.approved:
                    return _error(call, outcome.message)
                request = _with_arguments(request, outcome.arguments)
            else:
                answer = interrupt(_payload(call, decision))
                request, refusal = await asyncio.to_thread(self._resumed, request, call, decision, answer)
                if refusal is not None:
                    return refusal
        elif not decision.allowed:
            return _error(call, decision.reason)
        self._forget(call)
        result = await handler(request)
        return await asyncio.to_thread(self._screened, call, result)

    def _decision(self, call: ToolCall) -> Decision:
        key = (call.session, call.call_id)
        with self._lock:
            kept = self._decided.get(key)
        if kept is not None:
            return kept
        decision = self.gate.decide(call)
        if call.call_id is not None:
            with self._lock:
                self._decided[key] = decision
                while len(self._decided) > _KEPT:
                    self._decided.popitem(last=False)
        return decision

    def _forget(self, call: ToolCall) -> None:
        with self._lock:
            self._decided.pop((call.session, call.call_id), None)

    def _resumed(
        self, request: ToolCallRequest, call: ToolCall, decision: Decision, answer: Any
    ) -> tuple[ToolCallRequest, ToolMessage | None]:
        """The request to run after an approval interrupt, or the refusal to answer."""
        self._forget(call)
        assert decision.hitl_request_id is not None
        edited = answer.get("args") if isinstance(answer, Mapping) else None
        if isinstance(edited, Mapping) and dict(edited) != dict(call.args):
            # Checked before the token is spent: the analyst edits in agentgov, not the resumer.
            return request, _error(
                call,
                "the resume edited the arguments, which no one approved: "
                "edit them when approving in agentgov (hitl.approve(id, context=...))",
            )
        outcome = self.gate.status(decision.hitl_request_id, call)
        if not outcome.approved:
            return request, _error(call, outcome.message)
        return _with_arguments(request, outcome.arguments), None

    def _screened(self, call: ToolCall, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        if not self.guard_outputs or not isinstance(result, ToolMessage):
            return result
        text = result.content if isinstance(result.content, str) else str(result.content)
        if not text.strip():
            return result
        verdict = self.gate.screen(text, call)
        if verdict.safe:
            return result
        return _error(call, None, withheld(call, verdict))


def resume_when_decided(gov: Agentgov, interrupts: Sequence[Interrupt], timeout: float = 300.0) -> Command[Any]:
    """Waits for the analyst's decision on each agentgov approval among `interrupts` and
    answers the `Command` that resumes them (the middleware checks the outcome itself)."""
    values: dict[str, Any] = {}
    for i in interrupts:
        value = i.value
        if isinstance(value, Mapping) and value.get("agentgov") == "approval":
            gov.hitl.wait(str(value["hitl_request_id"]), timeout=timeout)
            values[i.id] = {"hitl_request_id": value["hitl_request_id"]}
    return Command(resume=values)


def _with_arguments(request: ToolCallRequest, arguments: Mapping[str, Any] | None) -> ToolCallRequest:
    """`request`, with the arguments the analyst approved if they edited them."""
    if arguments is None:
        return request
    return request.override(tool_call={**request.tool_call, "args": dict(arguments)})


def _call(request: ToolCallRequest) -> ToolCall:
    tc = request.tool_call
    config = getattr(request.runtime, "config", None) or {}
    thread = config.get("configurable", {}).get("thread_id")
    return ToolCall(tc["name"], tc.get("args") or {}, tc.get("id"), str(thread) if thread is not None else None)


def _payload(call: ToolCall, decision: Decision) -> dict[str, Any]:
    return {
        "agentgov": "approval",
        "hitl_request_id": decision.hitl_request_id,
        "tool": call.name,
        "args": dict(call.args),
        "reason": decision.reason,
        "tool_call_id": call.call_id,
    }


def _error(call: ToolCall, reason: str | None, content: str | None = None) -> ToolMessage:
    return ToolMessage(
        content=content if content is not None else denial(call, reason or ""),
        tool_call_id=call.call_id or "",
        name=call.name,
        status="error",
    )

"""FastMCP server middleware (`pip install 'agentgov[mcp]'`).

    from fastmcp import FastMCP
    from agentgov.mcp import AgentgovMiddleware

    mcp = FastMCP("tools", middleware=[AgentgovMiddleware(gov, agent_id)])

Every `tools/call` is checked (the tool's name is the action, its arguments are in the
context, the MCP session is the session, the JSON-RPC request id is the tool call's id). A
denied call fails with the reason (`isError`), and a tool that would be denied whatever its
arguments is hidden from `tools/list` (a dry-run check per tool, which records nothing). A
call that needs approval either waits for the analyst's decision (`approval="wait"`, the
default, up to `approval_timeout`) or fails at once with a structured error
`{"error": "approval_pending", "hitl_request_id", "reason"}` (`approval="pending"`); the same
call made again after the analyst approved runs (once). Either way the call runs only when
agentgov takes the request's single-use approval token for it; if the analyst edited the
arguments, the tool runs with the edit. With `guard_outputs`, a tool result
that Prompt Guard flags is withheld.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import mcp.types as mt
from fastmcp.exceptions import ToolError
from fastmcp.server.context import Context
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult

from ._gate import Approval, Gate, ResourceOf, ToolCall, denial, withheld
from .client import Agentgov
from .errors import AgentgovError

__all__ = ["AgentgovMiddleware"]

#: Approval requests remembered for a repeated call (`approval="pending"`).
_KEPT = 1024


class AgentgovMiddleware(Middleware):
    def __init__(
        self,
        gov: Agentgov,
        agent_id: str,
        *,
        resource: ResourceOf | None = None,
        context: Mapping[str, Any] | None = None,
        approval: Literal["wait", "pending"] = "wait",
        approval_timeout: float = 300.0,
        hide_denied: bool = True,
        guard_outputs: bool = True,
        session: Callable[[Context], str | None] | None = None,
        fail_open: bool | None = None,
    ) -> None:
        self.gate = Gate(
            gov,
            agent_id,
            resource=resource,
            context=context,
            fail_open=fail_open,
            approval_timeout=approval_timeout,
            framework="mcp",
        )
        self.approval = approval
        self.hide_denied = hide_denied
        self.guard_outputs = guard_outputs
        self._session = session
        self._pending: OrderedDict[str, str] = OrderedDict()

    async def on_list_tools(
        self,
        context: MiddlewareContext[mt.ListToolsRequest],
        call_next: CallNext[mt.ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        if not self.hide_denied:
            return tools
        shown = await asyncio.gather(*(asyncio.to_thread(self._shown, t.name) for t in tools))
        return [t for t, show in zip(tools, shown, strict=True) if show]

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        params = context.message
        ctx = context.fastmcp_context
        session = (self._session(ctx) if self._session else ctx.session_id) if ctx is not None else None
        call = ToolCall(params.name, params.arguments or {}, ctx.request_id if ctx is not None else None, session)
        remembered = self._pending.pop(_digest(call), None)
        outcome: Approval | None = None
        if remembered is not None:
            outcome = await asyncio.to_thread(self.gate.status, remembered, call)
            if outcome.status == "pending":
                self._remember(call, remembered)
                return _pending(remembered, "still waiting for a person's approval")
            if not outcome.approved:
                raise ToolError(denial(call, outcome.message))
        else:
            decision = await asyncio.to_thread(self.gate.decide, call)
            if decision.required_approval and decision.hitl_request_id:
                if self.approval == "pending":
                    self._remember(call, decision.hitl_request_id)
                    return _pending(decision.hitl_request_id, decision.reason)
                outcome = await asyncio.to_thread(self.gate.wait, decision.hitl_request_id, call)
                if not outcome.approved:
                    raise ToolError(denial(call, outcome.message))
            elif not decision.allowed:
                raise ToolError(denial(call, decision.reason))
        if outcome is not None and outcome.arguments is not None:
            # The tool runs with the arguments the analyst approved.
            context = context.copy(message=params.model_copy(update={"arguments": dict(outcome.arguments)}))
        result = await call_next(context)
        if self.guard_outputs:
            text = "\n".join(getattr(block, "text", "") for block in result.content)
            if text.strip():
                verdict = await asyncio.to_thread(self.gate.screen, text, call)
                if not verdict.safe:
                    raise ToolError(withheld(call, verdict))
        return result

    def _shown(self, name: str) -> bool:
        """Whether a tool may be listed: a dry-run check with no arguments is not denied."""
        try:
            d = self.gate.gov.check(self.gate.agent_id, name, self.gate.resource_of(ToolCall(name, {})), dry_run=True)
        except AgentgovError:
            # Listed: calling it is checked (and denied) all the same.
            return True
        return d.allowed or d.required_approval or d.fallback

    def _remember(self, call: ToolCall, hitl_request_id: str) -> None:
        self._pending[_digest(call)] = hitl_request_id
        while len(self._pending) > _KEPT:
            self._pending.popitem(last=False)


def _digest(call: ToolCall) -> str:
    """The call's identity for a repeat: session, tool and arguments."""
    text = json.dumps([call.session, call.name, call.args], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _pending(hitl_request_id: str, reason: str) -> ToolResult:
    body = {"error": "approval_pending", "hitl_request_id": hitl_request_id, "reason": reason}
    return ToolResult(content=json.dumps(body), is_error=True)

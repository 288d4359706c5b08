"""CrewAI: before/after tool-call hooks (`pip install 'agentgov[crewai]'`).

    from agentgov.crewai import AgentgovHooks

    hooks = AgentgovHooks(gov, agent_id).register()   # every crew of the process
    crew.kickoff()

Every tool call is checked before it runs (the tool's name is the action, its arguments are in
the context, the crew's id is the session; CrewAI has no tool-call id, so each call gets a
fresh one). A denied call does not run and the agent reads agentgov's reason as the tool's
result. A call that needs approval waits for the analyst's decision (up to
`approval_timeout`) and runs only if approved and agentgov takes the request's approval token
for this very call (single-use, bound to the arguments); if the analyst edited the arguments,
the tool runs with the edit. With `guard_outputs`, a result that Prompt Guard
flags is replaced before the agent reads it. CrewAI runs a tool when a hook raises, so these
hooks never raise: anything unexpected denies.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from crewai.hooks import (
    ToolCallHookContext,
    register_after_tool_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_tool_call_hook,
)

from ._gate import Gate, ResourceOf, ToolCall, denial, withheld
from .client import Agentgov

__all__ = ["AgentgovHooks"]

log = logging.getLogger("agentgov")

#: Refusals waiting for their after hook.
_KEPT = 1024


class AgentgovHooks:
    def __init__(
        self,
        gov: Agentgov,
        agent_id: str,
        *,
        resource: ResourceOf | None = None,
        context: Mapping[str, Any] | None = None,
        approval_timeout: float = 300.0,
        guard_outputs: bool = True,
        fail_open: bool | None = None,
    ) -> None:
        self.gate = Gate(
            gov,
            agent_id,
            resource=resource,
            context=context,
            fail_open=fail_open,
            approval_timeout=approval_timeout,
            framework="crewai",
        )
        self.guard_outputs = guard_outputs
        # What the agent reads instead of a blocked call's result, by the call's argument
        # dict (the one object CrewAI passes to both hooks of a call; kept with the entry, so
        # that its id is not reused while the entry lives).
        self._refused: OrderedDict[int, tuple[dict[str, Any], str]] = OrderedDict()

    def register(self) -> AgentgovHooks:
        register_before_tool_call_hook(self.before)
        register_after_tool_call_hook(self.after)
        return self

    def unregister(self) -> None:
        unregister_before_tool_call_hook(self.before)
        unregister_after_tool_call_hook(self.after)

    def before(self, ctx: ToolCallHookContext) -> bool | None:
        """`False` blocks the call; `None` lets it run."""
        try:
            call = ToolCall(ctx.tool_name, dict(ctx.tool_input), f"crewai-{uuid.uuid4()}", _session(ctx))
            decision = self.gate.decide(call)
            if decision.allowed:
                return None
            reason = decision.reason
            if decision.required_approval and decision.hitl_request_id:
                outcome = self.gate.wait(decision.hitl_request_id, call)
                if outcome.approved:
                    if outcome.arguments is not None:
                        # CrewAI runs the tool with this very dict.
                        ctx.tool_input.clear()
                        ctx.tool_input.update(outcome.arguments)
                    return None
                reason = outcome.message
            self._refuse(ctx, denial(call, reason))
            return False
        except Exception as e:  # noqa: BLE001 - CrewAI would run the tool on an exception
            log.warning("agentgov: the tool call %s was denied: %s", ctx.tool_name, e)
            self._refuse(ctx, denial(ToolCall(ctx.tool_name, {}), f"agentgov failed: {e}"))
            return False

    def after(self, ctx: ToolCallHookContext) -> str | None:
        """The text the agent reads instead of the result, or `None` to keep it."""
        refused = self._refused.pop(id(ctx.tool_input), None)
        if refused is not None and refused[0] is ctx.tool_input:
            return refused[1]
        if not self.guard_outputs or not ctx.tool_result or not str(ctx.tool_result).strip():
            return None
        call = ToolCall(ctx.tool_name, {}, None, _session(ctx))
        try:
            verdict = self.gate.screen(str(ctx.tool_result), call)
        except Exception as e:  # noqa: BLE001 - never let an unscreened result through
            return f"agentgov could not screen the output of {ctx.tool_name}: {e}"
        return None if verdict.safe else withheld(call, verdict)

    def _refuse(self, ctx: ToolCallHookContext, message: str) -> None:
        self._refused[id(ctx.tool_input)] = (ctx.tool_input, message)
        while len(self._refused) > _KEPT:
            self._refused.popitem(last=False)


def _session(ctx: ToolCallHookContext) -> str | None:
    for owner in (ctx.crew, ctx.task, ctx.agent):
        ident = getattr(owner, "id", None)
        if ident is not None:
            return str(ident)
    return None

"""OpenAI Agents SDK: tool guardrails, `needs_approval` and Prompt Guard guardrails
(`pip install 'agentgov[openai-agents]'`).

    from agentgov.openai_agents import AgentgovGuardrails

    gov_tools = AgentgovGuardrails(gov, agent_id)
    agent = Agent(name="ops", tools=gov_tools.govern([read_file, send_email]),
                  input_guardrails=[gov_tools.prompt_guard])
    result = await Runner.run(agent, "…", run_config=RunConfig(group_id="conversation-42"))
    while result.interruptions:                        # an analyst must approve
        result = await Runner.run(agent, await gov_tools.resolve(result))

`govern` gives each function tool a `needs_approval` policy and a tool input guardrail that
ask agentgov (the tool's name is the action, its arguments are in the context; the session is
`RunConfig.group_id`, else the trace id; the tool call's id goes along): a denied call is
rejected with the reason as its result (the model reads it, the tool never runs); a call that
needs approval interrupts the run. `resolve` waits for the analyst's decision through
agentgov and approves or rejects the run's interruptions accordingly; before the tool runs the
guardrail presents the request's single-use approval token with the call, and the tool runs
only if agentgov takes it (approving in the SDK alone is not enough). A tool guardrail cannot
change a call's arguments, so an approval the analyst edited is refused here (the model reads
why and may call again). A tool output guardrail withholds an output Prompt Guard flags; `prompt_guard` is an
agent input guardrail that trips on an injection in the user's input.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    GuardrailFunctionOutput,
    InputGuardrail,
    RunContextWrapper,
    RunResult,
    RunState,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
    input_guardrail,
    tool_input_guardrail,
    tool_output_guardrail,
)
from agents.tracing import get_current_trace

from ._gate import Gate, ResourceOf, ToolCall, denial, withheld
from .client import Agentgov, Decision

__all__ = ["AgentgovGuardrails"]

_KEPT = 1024


class AgentgovGuardrails:
    def __init__(
        self,
        gov: Agentgov,
        agent_id: str,
        *,
        resource: ResourceOf | None = None,
        context: Mapping[str, Any] | None = None,
        session: str | None = None,
        guard_outputs: bool = True,
        approval_timeout: float = 300.0,
        fail_open: bool | None = None,
    ) -> None:
        self.gate = Gate(
            gov,
            agent_id,
            resource=resource,
            context=context,
            fail_open=fail_open,
            approval_timeout=approval_timeout,
            framework="openai-agents",
        )
        self.session = session
        self.guard_outputs = guard_outputs
        # Decisions by tool call id, from `needs_approval` to the input guardrail (the oldest
        # dropped past `_KEPT`: a rejected call never reaches the guardrail).
        self._decided: OrderedDict[str, Decision] = OrderedDict()
        self.check_input: ToolInputGuardrail[Any] = tool_input_guardrail(name="agentgov_policy")(self._check_input)
        self.screen_output: ToolOutputGuardrail[Any] = tool_output_guardrail(name="agentgov_prompt_guard")(
            self._screen_output
        )
        self.prompt_guard: InputGuardrail[Any] = input_guardrail(name="agentgov_prompt_guard")(self._prompt_guard)

    def govern(self, tools: Sequence[FunctionTool]) -> list[FunctionTool]:
        """`tools`, each with agentgov's approval policy and guardrails added (in place)."""
        for tool in tools:
            tool.needs_approval = self._approval_policy(tool.name)
            tool.tool_input_guardrails = [*(tool.tool_input_guardrails or []), self.check_input]
            if self.guard_outputs:
                tool.tool_output_guardrails = [*(tool.tool_output_guardrails or []), self.screen_output]
        return list(tools)

    async def resolve(self, result: RunResult, timeout: float | None = None) -> RunState[Any]:
        """The run's state with each interruption approved or rejected as the analyst decided
        in agentgov (waiting for the decision); run it again with `Runner.run(agent, state)`."""
        state = result.to_state()
        for item in state.get_interruptions():
            decision = self._decided.get(item.call_id or "")
            if decision is None or decision.hitl_request_id is None:
                continue
            outcome = await asyncio.to_thread(self.gate.decided, decision.hitl_request_id, timeout)
            if outcome.approved:
                state.approve(item)
            else:
                state.reject(item, rejection_message=denial(_named(item.name), outcome.message))
        return state

    def _approval_policy(self, name: str) -> Any:
        async def needs_approval(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            call = ToolCall(name, params, call_id, self._session(ctx))
            decision = await asyncio.to_thread(self.gate.decide, call)
            self._decided[call_id] = decision
            while len(self._decided) > _KEPT:
                self._decided.popitem(last=False)
            return decision.required_approval

        return needs_approval

    async def _check_input(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        c = data.context
        call = ToolCall(c.tool_name, _arguments(c.tool_arguments), c.tool_call_id, self._session(c))
        decision = self._decided.pop(c.tool_call_id, None)
        if decision is None:
            decision = await asyncio.to_thread(self.gate.decide, call)
        if decision.allowed:
            return ToolGuardrailFunctionOutput.allow()
        if decision.required_approval and decision.hitl_request_id:
            outcome = await asyncio.to_thread(
                lambda: self.gate.status(decision.hitl_request_id or "", call, editable=False)
            )
            if outcome.approved:
                return ToolGuardrailFunctionOutput.allow()
            return ToolGuardrailFunctionOutput.reject_content(denial(call, outcome.message))
        return ToolGuardrailFunctionOutput.reject_content(denial(call, decision.reason))

    async def _screen_output(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        text = data.output if isinstance(data.output, str) else json.dumps(data.output, default=str)
        if not text.strip():
            return ToolGuardrailFunctionOutput.allow()
        c = data.context
        call = ToolCall(c.tool_name, {}, c.tool_call_id, self._session(c))
        verdict = await asyncio.to_thread(self.gate.screen, text, call)
        if verdict.safe:
            return ToolGuardrailFunctionOutput.allow()
        return ToolGuardrailFunctionOutput.reject_content(withheld(call, verdict))

    async def _prompt_guard(
        self, ctx: RunContextWrapper[Any], agent: Agent[Any], input: str | list[Any]
    ) -> GuardrailFunctionOutput:
        text = input if isinstance(input, str) else json.dumps(input, default=str)
        verdict = await asyncio.to_thread(self.gate.screen_request, text, self._session(ctx))
        return GuardrailFunctionOutput(output_info=verdict, tripwire_triggered=not verdict.safe)

    def _session(self, ctx: Any) -> str | None:
        """The run's session: the one given, else the run's `group_id` (from the run config
        or the current trace), else the trace's id."""
        if self.session is not None:
            return self.session
        group = getattr(getattr(ctx, "run_config", None), "group_id", None)
        trace = get_current_trace()
        group = group or getattr(trace, "group_id", None)
        if group:
            return str(group)
        if trace is not None and trace.trace_id != "no-op":
            return trace.trace_id
        return None


def _arguments(text: str) -> Mapping[str, Any]:
    try:
        parsed = json.loads(text or "{}")
    except ValueError:
        return {"raw": text}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _named(name: str | None) -> ToolCall:
    return ToolCall(name or "tool", {})

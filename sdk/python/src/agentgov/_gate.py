"""What every framework adapter does with a tool call, written once: ask agentgov (the tool's
name as the action, its arguments in the context, a resource from the user's mapping, the
run's session and the framework's tool-call id), wait for a person when approval is needed,
and screen a tool's output with Prompt Guard."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import errors
from .client import Agentgov, Decision, GuardResult

#: How a tool call's resource is named: a fixed mapping from tool name, or a function of the
#: tool's name and arguments. Unmapped tools are `tool/<name>`.
ResourceOf = Mapping[str, str] | Callable[[str, Mapping[str, Any]], str]


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: Mapping[str, Any]
    call_id: str | None = None
    session: str | None = None


@dataclass(frozen=True)
class Approval:
    """How an approval request ended: `approved`, or why not (`status`, `message`)."""

    approved: bool
    status: str
    message: str


class Gate:
    """The adapters' shared core (synchronous; async adapters run it in a thread)."""

    def __init__(
        self,
        gov: Agentgov,
        agent_id: str,
        *,
        resource: ResourceOf | None = None,
        context: Mapping[str, Any] | None = None,
        fail_open: bool | None = None,
        approval_timeout: float = 300.0,
        framework: str = "",
    ) -> None:
        self.gov = gov
        self.agent_id = agent_id
        self._resource = resource
        self._context = dict(context or {})
        self.fail_open = fail_open
        self.approval_timeout = approval_timeout
        self.framework = framework

    def resource_of(self, call: ToolCall) -> str:
        if callable(self._resource):
            return self._resource(call.name, call.args)
        if self._resource is not None and call.name in self._resource:
            return self._resource[call.name]
        return f"tool/{call.name}"

    def decide(self, call: ToolCall, *, dry_run: bool = False) -> Decision:
        """agentgov's decision on `call` (`dry_run`: evaluated, not recorded). A request
        agentgov refuses (e.g. arguments past the context's 16 KiB) is a denial with the
        problem as its reason: the tool never runs."""
        context = {**self._context, "arguments": _jsonable(call.args)}
        if self.framework:
            context.setdefault("framework", self.framework)
        try:
            return self.gov.check(
                self.agent_id,
                call.name,
                self.resource_of(call),
                context,
                session=call.session,
                tool_call_id=call.call_id,
                dry_run=dry_run,
                fail_open=self.fail_open,
            )
        except errors.AgentgovError as e:
            return Decision(allowed=False, required_approval=False, reason=f"agentgov refused the check: {e}")

    def wait(self, hitl_request_id: str, timeout: float | None = None) -> Approval:
        """Waits for the analyst's decision on a request (long-poll)."""
        try:
            request = self.gov.hitl.wait(hitl_request_id, timeout=self.approval_timeout if timeout is None else timeout)
        except errors.AgentgovError as e:
            return Approval(False, "unavailable", f"agentgov could not tell the approval's outcome: {e}")
        return self.outcome(request.status.value, request.comment if isinstance(request.comment, str) else None)

    def status(self, hitl_request_id: str) -> Approval:
        """The request's outcome as agentgov has it now (never trusts a caller's word)."""
        try:
            request = self.gov.hitl.status(hitl_request_id)
        except errors.AgentgovError as e:
            return Approval(False, "unavailable", f"agentgov could not tell the approval's outcome: {e}")
        return self.outcome(request.status.value, request.comment if isinstance(request.comment, str) else None)

    @staticmethod
    def outcome(status: str, comment: str | None) -> Approval:
        if status == "approved":
            return Approval(True, status, "approved")
        note = f": {comment}" if comment else ""
        return Approval(False, status, f"the approval request was {status}{note}")

    def screen(self, text: str) -> GuardResult:
        """Prompt Guard on a tool's output (text the model will read: screened as input)."""
        try:
            return self.gov.guard.validate(text, direction="input", agent=self.agent_id, fail_open=self.fail_open)
        except errors.AgentgovError as e:
            return GuardResult(safe=False, verdict="unknown", score=0.0, reasons=[str(e)], fallback=True)


def denial(call: ToolCall, reason: str) -> str:
    """What the agent reads instead of a denied tool's result."""
    return f"agentgov denied the tool call {call.name}: {reason}"


def withheld(call: ToolCall, verdict: GuardResult) -> str:
    """What the agent reads instead of a tool output the guard flagged."""
    why = ", ".join(verdict.reasons) or verdict.verdict
    return f"agentgov withheld the output of {call.name}: flagged as {verdict.verdict} ({why})"


def _jsonable(args: Mapping[str, Any]) -> Any:
    """The arguments as JSON values (anything else as its text)."""
    return json.loads(json.dumps(dict(args), default=str))

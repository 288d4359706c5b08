"""What every framework adapter does with a tool call, written once: ask agentgov (the tool's
name as the action, its arguments in the context, a resource from the user's mapping, the
run's session and the framework's tool-call id), wait for a person when approval is needed
and run what the person approved through the request's approval token, and screen a tool's
output with Prompt Guard.

An approval is never taken on the request's status alone: agentgov binds it to the exact
action (agent, tool, resource, arguments, policy versions), and the adapter presents the
single-use approval token with the same call. Only a check that spends the token runs the
tool; if the analyst edited the arguments, the tool runs with the edit."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import errors
from .api.models.hitl_request import HitlRequest
from .api.models.hitl_request_approved_context_type_0 import HitlRequestApprovedContextType0
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
    """How an approval request ended: `approved` (its token spent on the call), or why not
    (`status`: the request's, or `unusable` / `refused` when its token was not taken;
    `message`)."""

    approved: bool
    status: str
    message: str
    #: The arguments to run the tool with when the analyst approved an edited call; `None`:
    #: the call's own.
    arguments: Mapping[str, Any] | None = None


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

    def context_of(self, call: ToolCall) -> dict[str, Any]:
        """The check's context for `call`: the adapter's fixed context, the framework and the
        call's arguments."""
        context = {**self._context, "arguments": _jsonable(call.args)}
        if self.framework:
            context.setdefault("framework", self.framework)
        return context

    def decide(
        self,
        call: ToolCall,
        *,
        dry_run: bool = False,
        context: Mapping[str, Any] | None = None,
        approval_token: str | None = None,
    ) -> Decision:
        """agentgov's decision on `call` (`dry_run`: evaluated, not recorded; `context`:
        instead of `context_of(call)`). A request agentgov refuses (e.g. arguments past the
        context's 16 KiB) is a denial with the problem as its reason: the tool never runs.
        Presenting an approval token never falls back open."""
        context = dict(context) if context is not None else self.context_of(call)
        try:
            return self.gov.check(
                self.agent_id,
                call.name,
                self.resource_of(call),
                context,
                session=call.session,
                tool_call_id=call.call_id,
                dry_run=dry_run,
                fail_open=False if approval_token is not None else self.fail_open,
                approval_token=approval_token,
            )
        except errors.AgentgovError as e:
            return Decision(allowed=False, required_approval=False, reason=f"agentgov refused the check: {e}")

    def wait(self, hitl_request_id: str, call: ToolCall, timeout: float | None = None) -> Approval:
        """Waits for the analyst's decision on the request opened for `call` (long-poll), and
        if it was approved, redeems its token with the call (`redeem`)."""
        request = self._waited(hitl_request_id, timeout)
        return request if isinstance(request, Approval) else self.redeem(call, request)

    def status(self, hitl_request_id: str, call: ToolCall, *, editable: bool = True) -> Approval:
        """The outcome of the request opened for `call` as agentgov has it now (never a
        caller's word), its token redeemed if it was approved."""
        try:
            request = self.gov.hitl.status(hitl_request_id)
        except errors.AgentgovError as e:
            return _unavailable(e)
        return self.redeem(call, request, editable=editable)

    def decided(self, hitl_request_id: str, timeout: float | None = None) -> Approval:
        """Waits for the analyst's decision, without redeeming it: `approved` here says only
        that a person approved; the call runs once `status` or `redeem` takes the token."""
        request = self._waited(hitl_request_id, timeout)
        if isinstance(request, Approval):
            return request
        if request.status.value == "approved":
            return Approval(True, "approved", "approved")
        return _not_approved(request)

    def _waited(self, hitl_request_id: str, timeout: float | None) -> HitlRequest | Approval:
        try:
            return self.gov.hitl.wait(hitl_request_id, timeout=self.approval_timeout if timeout is None else timeout)
        except errors.AgentgovError as e:
            return _unavailable(e)

    def redeem(self, call: ToolCall, request: HitlRequest, *, editable: bool = True) -> Approval:
        """Runs `call` as `request` approved it: a check presenting the request's approval
        token, with the analyst's edited context if they edited it. Approved only if the check
        spends the token (the same action, once, unexpired, and no policy denies it now).
        `editable=False`: the framework cannot run the tool with other arguments, so an edited
        approval is refused before its token is spent."""
        status = request.status.value
        if status != "approved":
            return _not_approved(request)
        token = request.approval_token
        if not isinstance(token, str):
            return Approval(
                False,
                "unusable",
                "the approval request was approved, but its approval token is used already or expired "
                "(or this key lacks policies:check)",
            )
        context: dict[str, Any] | None = None
        arguments: Mapping[str, Any] | None = None
        if isinstance(request.approved_context, HitlRequestApprovedContextType0):
            if not editable:
                return Approval(
                    False,
                    "refused",
                    f"the analyst approved {call.name} only with edited arguments, which {self.framework or 'this framework'}"
                    " cannot run in place of the model's: the model must call again",
                )
            context = request.approved_context.to_dict()
            edited = context.get("arguments")
            if not isinstance(edited, Mapping):
                return Approval(False, "unusable", "the analyst's edit has no `arguments` object to run the tool with")
            arguments = edited
        decision = self.decide(call, context=context, approval_token=token)
        if decision.allowed and decision.approved_by_request and not decision.fallback:
            message = "approved with edited arguments" if arguments is not None else "approved"
            return Approval(True, status, message, arguments)
        return Approval(False, "refused", f"agentgov did not run the approved call: {decision.reason}")

    def screen_request(self, text: str, session: str | None) -> GuardResult:
        """The user's own request, shown to `session` as trusted content (the values it
        names are the user's); without a session, screened."""
        return self.screen(text, ToolCall("user", {}, None, session), trusted=True)

    def screen(self, text: str, call: ToolCall | None = None, *, trusted: bool = False) -> GuardResult:
        """Prompt Guard on text the model will read (screened as input): a tool's output, or
        with `trusted` the user's own request. In a session (`call.session`), the text is
        shown to the session (`sessions.observe`), which screens it the same way and keeps
        its labels and the values it told the agent to use, for the session's next checks."""
        try:
            if call is not None and call.session:
                observed = self.gov.sessions.observe(
                    call.session,
                    self.agent_id,
                    text,
                    source=call.name or None,
                    tool_call_id=call.call_id,
                    trusted=trusted,
                )
                return GuardResult.observed(observed)
            return self.gov.guard.validate(text, direction="input", agent=self.agent_id, fail_open=self.fail_open)
        except errors.AgentgovError as e:
            return GuardResult(safe=False, verdict="unknown", score=0.0, reasons=[str(e)], fallback=True)


def _unavailable(error: errors.AgentgovError) -> Approval:
    return Approval(False, "unavailable", f"agentgov could not tell the approval's outcome: {error}")


def _not_approved(request: HitlRequest) -> Approval:
    status = request.status.value
    note = f": {request.comment}" if isinstance(request.comment, str) and request.comment else ""
    return Approval(False, status, f"the approval request was {status}{note}")


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

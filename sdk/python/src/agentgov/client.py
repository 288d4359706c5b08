"""The ergonomic client: `Agentgov` (sync) and `AsyncAgentgov` (asyncio), over the client
generated from docs/openapi.json (`agentgov.api`, reachable as `gov.api` for every other
operation).

Decisions fail closed: when agentgov cannot be reached, times out or answers 5xx, `check`
answers a denial and `guard.validate` an unsafe verdict, each marked `fallback=True` and
logged. A client (or one call) may choose `fail_open=True` instead; that fallback is logged
as a warning too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar
from uuid import UUID

import httpx

from . import errors
from ._transport import AsyncRetryTransport, RetryPolicy, RetryTransport
from .api import AuthenticatedClient, Client
from .api.api.audit import write as audit_write
from .api.api.auth import login as auth_login
from .api.api.discovery import discovery_ingest
from .api.api.guard import guard_validate
from .api.api.hitl import (
    hitl_approve,
    hitl_cancel,
    hitl_reject,
    hitl_request,
    hitl_status,
)
from .api.api.policies import check as policies_check
from .api.api.sessions import sessions_observe
from .api.models.audit_record import AuditRecord
from .api.models.check_request import CheckRequest
from .api.models.check_request_context import CheckRequestContext
from .api.models.check_response import CheckResponse
from .api.models.discovery_event import DiscoveryEvent
from .api.models.guard_direction import GuardDirection
from .api.models.hitl_approval import HitlApproval
from .api.models.hitl_approval_context_type_0 import HitlApprovalContextType0
from .api.models.hitl_decision import HitlDecision
from .api.models.hitl_request import HitlRequest
from .api.models.hitl_status import HitlStatus
from .api.models.ingest_event import IngestEvent
from .api.models.login_request import LoginRequest
from .api.models.login_result import LoginResult
from .api.models.matched_policy import MatchedPolicy
from .api.models.new_audit_entry import NewAuditEntry
from .api.models.new_audit_entry_details_type_0 import NewAuditEntryDetailsType0
from .api.models.new_hitl_request import NewHitlRequest
from .api.models.new_hitl_request_context import NewHitlRequestContext
from .api.models.observation import Observation
from .api.models.observe_request import ObserveRequest
from .api.models.validate_request import ValidateRequest
from .api.models.validation import Validation
from .api.types import UNSET, Response, Unset

log = logging.getLogger("agentgov")

T = TypeVar("T")
AgentRef = str | UUID

#: The longest a single long-poll of `hitl.wait` lasts (the server's limit).
MAX_WAIT_SECS = 60


@dataclass(frozen=True)
class Decision:
    """A check's answer, or the fail policy's when agentgov could not answer (`fallback`)."""

    allowed: bool
    required_approval: bool
    reason: str
    risk_score: float | None = None
    risk: str | None = None
    decision_id: str | None = None
    hitl_request_id: str | None = None
    #: The approval request whose token this check spent (it ran as approved).
    approved_by_request: str | None = None
    matched_policies: list[MatchedPolicy] = field(default_factory=list)
    #: True when agentgov did not answer and the fail policy decided (closed: denied).
    fallback: bool = False
    response: CheckResponse | None = None

    @property
    def denied(self) -> bool:
        """Denied outright (not waiting for a person)."""
        return not self.allowed and not self.required_approval

    @staticmethod
    def of(r: CheckResponse) -> Decision:
        return Decision(
            allowed=r.allowed,
            required_approval=r.required_approval,
            reason=r.reason,
            risk_score=r.risk_score,
            risk=r.risk.value,
            decision_id=_text(r.decision_id),
            hitl_request_id=_text(r.hitl_request_id),
            approved_by_request=_text(r.approved_by_request),
            matched_policies=list(r.matched_policies),
            response=r,
        )

    @staticmethod
    def fallen_back(allow: bool, why: str) -> Decision:
        return Decision(allowed=allow, required_approval=False, reason=why, fallback=True)


@dataclass(frozen=True)
class GuardResult:
    """Prompt Guard's verdict on a text, or the fail policy's (`fallback`)."""

    safe: bool
    verdict: str
    score: float
    reasons: list[str]
    validation_id: str | None = None
    fallback: bool = False
    response: Validation | None = None

    @staticmethod
    def of(v: Validation) -> GuardResult:
        return GuardResult(
            safe=v.safe,
            verdict=v.verdict.value,
            score=v.score,
            reasons=list(v.reasons),
            validation_id=str(v.validation_id),
            response=v,
        )

    @staticmethod
    def observed(o: Observation) -> GuardResult:
        """The verdict of an observation (`sessions.observe`), which screens as validate does."""
        return GuardResult(safe=not o.flagged, verdict=o.verdict.value, score=o.score, reasons=list(o.reasons))

    @staticmethod
    def fallen_back(safe: bool, why: str) -> GuardResult:
        return GuardResult(
            safe=safe,
            verdict="benign" if safe else "unknown",
            score=0.0,
            reasons=[why],
            fallback=True,
        )


def _text(v: UUID | None | Unset) -> str | None:
    return None if v is None or isinstance(v, Unset) else str(v)


def _uuid(v: AgentRef, name: str) -> UUID:
    if isinstance(v, UUID):
        return v
    try:
        return UUID(str(v))
    except ValueError:
        raise errors.ValidationFailed(
            422,
            title="Unprocessable Entity",
            detail=f"{name} must be a UUID",
            errors=[errors.FieldError(name, "must be a UUID")],
        ) from None


def _unwrap(response: Response[Any], expect: type[T]) -> T:
    """The parsed body of a success, or the typed exception of a problem."""
    status = int(response.status_code)
    if status >= 500:
        raise errors.Unavailable(f"agentgov answered {status}", status=status) from errors.ApiError.from_response(
            _raw(response)
        )
    if status >= 400:
        raise errors.ApiError.from_response(_raw(response))
    if not isinstance(response.parsed, expect):
        raise errors.Unavailable(f"agentgov answered {status} with an unexpected body", status=status)
    return response.parsed


def _raw(response: Response[Any]) -> httpx.Response:
    return httpx.Response(int(response.status_code), headers=response.headers, content=response.content)


def _guarded(call: Callable[[], Response[Any]]) -> Response[Any]:
    """Runs a generated call; transport failures and unreadable answers become `Unavailable`."""
    try:
        return call()
    except httpx.TransportError as e:
        raise errors.Unavailable(f"agentgov is unreachable: {type(e).__name__}: {e}") from e
    except ValueError as e:
        raise errors.Unavailable(f"agentgov answered something that is not its JSON: {e}") from e


async def _aguarded(call: Callable[[], Any]) -> Response[Any]:
    try:
        result: Response[Any] = await call()
        return result
    except httpx.TransportError as e:
        raise errors.Unavailable(f"agentgov is unreachable: {type(e).__name__}: {e}") from e
    except ValueError as e:
        raise errors.Unavailable(f"agentgov answered something that is not its JSON: {e}") from e


# Request bodies, shared by both clients.


def _check_body(
    agent: AgentRef,
    action: str,
    resource: str,
    context: Mapping[str, Any] | None,
    session: str | None,
    tool_call_id: str | None,
    dry_run: bool,
    approval_token: str | None,
) -> CheckRequest:
    return CheckRequest(
        agent_id=_uuid(agent, "agent_id"),
        action=action,
        resource=resource,
        context=CheckRequestContext.from_dict(dict(context)) if context else UNSET,
        dry_run=dry_run or UNSET,
        session_id=session if session is not None else UNSET,
        tool_call_id=tool_call_id if tool_call_id is not None else UNSET,
        approval_token=approval_token if approval_token is not None else UNSET,
    )


def _validate_body(text: str, direction: str, agent: AgentRef | None, system_prompt: str | None) -> ValidateRequest:
    return ValidateRequest(
        prompt=text,
        direction=GuardDirection(direction),
        agent_id=_uuid(agent, "agent_id") if agent is not None else UNSET,
        system_prompt=system_prompt if system_prompt is not None else UNSET,
    )


def _observe_body(
    agent: AgentRef,
    content: str,
    source: str | None,
    tool_call_id: str | None,
    labels: list[str] | None,
    trusted: bool,
) -> ObserveRequest:
    return ObserveRequest(
        agent_id=_uuid(agent, "agent_id"),
        content=content,
        source=source if source is not None else UNSET,
        tool_call_id=tool_call_id if tool_call_id is not None else UNSET,
        labels=list(labels) if labels else UNSET,
        trusted=trusted,
    )


def _hitl_body(
    agent: AgentRef,
    action: str,
    resource: str,
    reason: str,
    context: Mapping[str, Any] | None,
    timeout_seconds: int | None,
    callback_url: str | None,
) -> NewHitlRequest:
    return NewHitlRequest(
        agent_id=_uuid(agent, "agent_id"),
        action=action,
        resource=resource,
        reason=reason,
        context=NewHitlRequestContext.from_dict(dict(context)) if context else UNSET,
        timeout_seconds=timeout_seconds if timeout_seconds is not None else UNSET,
        callback_url=callback_url if callback_url is not None else UNSET,
    )


def _audit_body(
    event_type: str,
    agent: AgentRef | None,
    action: str | None,
    resource: str | None,
    decision: str | None,
    details: Mapping[str, Any] | None,
    risk_score: float | None,
) -> NewAuditEntry:
    return NewAuditEntry(
        event_type=event_type,
        agent_id=_uuid(agent, "agent_id") if agent is not None else UNSET,
        action=action if action is not None else UNSET,
        resource=resource if resource is not None else UNSET,
        decision=decision if decision is not None else UNSET,
        details=NewAuditEntryDetailsType0.from_dict(dict(details)) if details is not None else UNSET,
        risk_score=risk_score if risk_score is not None else UNSET,
    )


def _ingest_body(source: str, fields: Mapping[str, Any]) -> IngestEvent:
    return IngestEvent.from_dict({"source": source, **fields})


def _approval(comment: str | None, context: Mapping[str, Any] | None) -> HitlApproval | None:
    if comment is None and context is None:
        return None
    return HitlApproval(
        comment=comment if comment is not None else UNSET,
        context=HitlApprovalContextType0.from_dict(dict(context)) if context is not None else UNSET,
    )


def _comment(comment: str | None) -> HitlDecision | None:
    # `null` and no body are alike to the server.
    return HitlDecision(comment=comment) if comment is not None else None


def _ws_url(base: str) -> str:
    if base.startswith("https://"):
        return "wss://" + base[len("https://") :] + "/api/v1/ws"
    if base.startswith("http://"):
        return "ws://" + base[len("http://") :] + "/api/v1/ws"
    raise ValueError(f"the base URL must be http:// or https://, not {base!r}")


def _subscribe(events: list[str] | None) -> str | None:
    return None if events is None else json.dumps({"type": "subscribe", "events": events})


def _fallback_note(what: str, fail_open: bool, error: errors.AgentgovError) -> str:
    outcome = "allowed (fail-open)" if fail_open else "denied (fail-closed)"
    message = f"agentgov unavailable, {what} {outcome}: {error}"
    log.warning(message)
    return message


@dataclass
class _Settings:
    url: str
    api_key: str | None
    token: str | None
    timeout: float
    fail_open: bool
    retry: RetryPolicy


def _clients(s: _Settings, transport: Any) -> tuple[AuthenticatedClient | None, AuthenticatedClient | None]:
    """The API-key client and the bearer (JWT) client, each over `transport`."""
    timeout = httpx.Timeout(s.timeout)
    key = (
        AuthenticatedClient(
            base_url=s.url,
            token=s.api_key,
            prefix="",
            auth_header_name="X-API-Key",
            timeout=timeout,
            httpx_args={"transport": transport},
        )
        if s.api_key
        else None
    )
    bearer = (
        AuthenticatedClient(
            base_url=s.url,
            token=s.token,
            timeout=timeout,
            httpx_args={"transport": transport},
        )
        if s.token
        else None
    )
    return key, bearer


class Agentgov:
    """The synchronous client.

    >>> gov = Agentgov("http://127.0.0.1:8080", api_key="agk_...")
    >>> d = gov.check(agent_id, "read", "crm/contacts", {"environment": "production"}, session="run-1")
    >>> if d.allowed: ...
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        token: str | None = None,
        timeout: float = 10.0,
        fail_open: bool = False,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not api_key and not token:
            raise ValueError("give an api_key or a token (the access_token of a sign-in)")
        self._s = _Settings(url.rstrip("/"), api_key, token, timeout, fail_open, retry or RetryPolicy())
        transport = RetryTransport(httpx.HTTPTransport(), self._s.retry)
        self._key, self._bearer = _clients(self._s, transport)
        self.guard = _Guard(self)
        self.hitl = _Hitl(self)
        self.audit = _Audit(self)
        self.discovery = _Discovery(self)
        self.sessions = _Sessions(self)

    @classmethod
    def login(cls, url: str, email: str, password: str, **kwargs: Any) -> Agentgov:
        """A client signed in as a user (for analysts' operations and the feed)."""
        with Client(base_url=url.rstrip("/"), timeout=httpx.Timeout(kwargs.get("timeout", 10.0))) as anon:
            body = LoginRequest(email=email, password=password)
            r = _unwrap(_guarded(lambda: auth_login.sync_detailed(client=anon, body=body)), LoginResult)
        return cls(url, token=r.access_token, **kwargs)

    @property
    def api(self) -> AuthenticatedClient:
        """The generated client for any operation (`agentgov.api.api.<tag>.<operation>`)."""
        client = self._key or self._bearer
        assert client is not None
        return client

    def _user(self) -> AuthenticatedClient:
        if self._bearer is None:
            raise errors.AgentgovError("this operation needs a signed-in user: Agentgov.login(...) or token=")
        return self._bearer

    def close(self) -> None:
        for c in (self._key, self._bearer):
            if c is not None:
                c.get_httpx_client().close()

    def __enter__(self) -> Agentgov:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def check(
        self,
        agent: AgentRef,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
        tool_call_id: str | None = None,
        dry_run: bool = False,
        fail_open: bool | None = None,
        approval_token: str | None = None,
    ) -> Decision:
        """May `agent` do `action` to `resource`? Never raises for an unreachable server: the
        fail policy answers (`fallback=True`). A bad request raises `ApiError`.

        `approval_token` (from an approved request's `approval_token`) runs the action the
        analyst approved: the answer is allowed with `approved_by_request` set only when the
        token is good for exactly this action and unspent; it is spent then. A fallback never
        counts as approved."""
        body = _check_body(agent, action, resource, context, session, tool_call_id, dry_run, approval_token)
        try:
            r = _guarded(lambda: policies_check.sync_detailed(client=self.api, body=body))
            return Decision.of(_unwrap(r, CheckResponse))
        except errors.Unavailable as e:
            allow = self._s.fail_open if fail_open is None else fail_open
            return Decision.fallen_back(allow, _fallback_note(f"{action} on {resource}", allow, e))

    def feed(self, events: list[str] | None = None) -> Iterator[dict[str, Any]]:
        """The live feed's events (dicts `{id, type, tenant_id, ts, data}`), optionally
        filtered by patterns such as `["hitl.*"]`. Needs a signed-in user."""
        from websockets.sync.client import connect

        token = self._s.token
        if not token:
            raise errors.AgentgovError("the feed needs a signed-in user: Agentgov.login(...) or token=")
        with connect(
            _ws_url(self._s.url),
            additional_headers={"Authorization": f"Bearer {token}"},
        ) as ws:
            subscribe = _subscribe(events)
            if subscribe is not None:
                ws.send(subscribe)
            for message in ws:
                event = json.loads(message)
                if isinstance(event, dict) and "tenant_id" in event:
                    yield event


class _Guard:
    def __init__(self, gov: Agentgov) -> None:
        self._gov = gov

    def validate(
        self,
        text: str,
        *,
        direction: str = "input",
        agent: AgentRef | None = None,
        system_prompt: str | None = None,
        fail_open: bool | None = None,
    ) -> GuardResult:
        """Prompt Guard's verdict on `text` (`direction`: `input` or `output`)."""
        body = _validate_body(text, direction, agent, system_prompt)
        try:
            r = _guarded(lambda: guard_validate.sync_detailed(client=self._gov.api, body=body))
            return GuardResult.of(_unwrap(r, Validation))
        except errors.Unavailable as e:
            allow = self._gov._s.fail_open if fail_open is None else fail_open
            return GuardResult.fallen_back(allow, _fallback_note("text", allow, e))


class _Sessions:
    def __init__(self, gov: Agentgov) -> None:
        self._gov = gov

    def observe(
        self,
        session: str,
        agent: AgentRef,
        content: str,
        *,
        source: str | None = None,
        tool_call_id: str | None = None,
        labels: list[str] | None = None,
        trusted: bool = False,
    ) -> Observation:
        """Shows the session what its agent was shown: a tool's result, a page, a message
        (`trusted=True` for the user's own request). Prompt Guard screens it (`flagged`), the
        session keeps its labels and the values it told the agent to use (`instructed`);
        later checks of the session read them."""
        body = _observe_body(agent, content, source, tool_call_id, labels, trusted)
        return _unwrap(
            _guarded(lambda: sessions_observe.sync_detailed(session, client=self._gov.api, body=body)),
            Observation,
        )


class _Hitl:
    def __init__(self, gov: Agentgov) -> None:
        self._gov = gov

    def request(
        self,
        agent: AgentRef,
        action: str,
        resource: str,
        reason: str,
        context: Mapping[str, Any] | None = None,
        *,
        timeout_seconds: int | None = None,
        callback_url: str | None = None,
    ) -> HitlRequest:
        body = _hitl_body(agent, action, resource, reason, context, timeout_seconds, callback_url)
        return _unwrap(
            _guarded(lambda: hitl_request.sync_detailed(client=self._gov.api, body=body)),
            HitlRequest,
        )

    def status(self, id: AgentRef) -> HitlRequest:
        rid = _uuid(id, "id")
        return _unwrap(
            _guarded(lambda: hitl_status.sync_detailed(rid, client=self._gov.api)),
            HitlRequest,
        )

    def wait(self, id: AgentRef, timeout: float = 300.0) -> HitlRequest:
        """The request once decided, cancelled or expired, or as it is after `timeout`
        seconds (still `pending`), by long-polling."""
        rid = _uuid(id, "id")
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            wait = max(0, min(MAX_WAIT_SECS, int(left)))
            r = _guarded(partial(hitl_status.sync_detailed, rid, client=self._gov.api, wait=wait))
            request = _unwrap(r, HitlRequest)
            if request.status != HitlStatus.PENDING or left <= 1:
                return request

    def approve(
        self, id: AgentRef, comment: str | None = None, *, context: Mapping[str, Any] | None = None
    ) -> HitlRequest:
        """Approves the request; with `context`, approves an edited action instead (agentgov
        checks the edit under the tenant's policies first: a denial raises `ApiError`, 409)."""
        rid, body = _uuid(id, "id"), _approval(comment, context)
        client = self._gov._user()
        return _unwrap(
            _guarded(lambda: hitl_approve.sync_detailed(rid, client=client, body=body)),
            HitlRequest,
        )

    def reject(self, id: AgentRef, comment: str | None = None) -> HitlRequest:
        rid, body = _uuid(id, "id"), _comment(comment)
        client = self._gov._user()
        return _unwrap(
            _guarded(lambda: hitl_reject.sync_detailed(rid, client=client, body=body)),
            HitlRequest,
        )

    def cancel(self, id: AgentRef) -> HitlRequest:
        rid = _uuid(id, "id")
        return _unwrap(
            _guarded(lambda: hitl_cancel.sync_detailed(rid, client=self._gov.api)),
            HitlRequest,
        )


class _Audit:
    def __init__(self, gov: Agentgov) -> None:
        self._gov = gov

    def log(
        self,
        event_type: str,
        *,
        agent: AgentRef | None = None,
        action: str | None = None,
        resource: str | None = None,
        decision: str | None = None,
        details: Mapping[str, Any] | None = None,
        risk_score: float | None = None,
    ) -> AuditRecord:
        """Writes an entry (answered once durable) in a namespace of the client's own, e.g.
        `app.tool_result`."""
        body = _audit_body(event_type, agent, action, resource, decision, details, risk_score)
        return _unwrap(
            _guarded(lambda: audit_write.sync_detailed(client=self._gov.api, body=body)),
            AuditRecord,
        )


class _Discovery:
    def __init__(self, gov: Agentgov) -> None:
        self._gov = gov

    def ingest(self, source: str, **fields: Any) -> DiscoveryEvent:
        """Reports one observed event (`host`, `process`, `endpoint`, `model`, `tool_calls`…)."""
        body = _ingest_body(source, fields)
        return _unwrap(
            _guarded(lambda: discovery_ingest.sync_detailed(client=self._gov.api, body=body)),
            DiscoveryEvent,
        )


class AsyncAgentgov:
    """The asyncio client: the same operations as `Agentgov`, awaited."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        token: str | None = None,
        timeout: float = 10.0,
        fail_open: bool = False,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not api_key and not token:
            raise ValueError("give an api_key or a token (the access_token of a sign-in)")
        self._s = _Settings(url.rstrip("/"), api_key, token, timeout, fail_open, retry or RetryPolicy())
        self._key, self._bearer = _clients(self._s, AsyncRetryTransport(httpx.AsyncHTTPTransport(), self._s.retry))
        self.guard = _AsyncGuard(self)
        self.hitl = _AsyncHitl(self)
        self.audit = _AsyncAudit(self)
        self.discovery = _AsyncDiscovery(self)
        self.sessions = _AsyncSessions(self)

    @property
    def api(self) -> AuthenticatedClient:
        client = self._key or self._bearer
        assert client is not None
        return client

    def _user(self) -> AuthenticatedClient:
        if self._bearer is None:
            raise errors.AgentgovError("this operation needs a signed-in user: token=")
        return self._bearer

    async def aclose(self) -> None:
        for c in (self._key, self._bearer):
            if c is not None:
                await c.get_async_httpx_client().aclose()

    async def __aenter__(self) -> AsyncAgentgov:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def check(
        self,
        agent: AgentRef,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None = None,
        *,
        session: str | None = None,
        tool_call_id: str | None = None,
        dry_run: bool = False,
        fail_open: bool | None = None,
        approval_token: str | None = None,
    ) -> Decision:
        body = _check_body(agent, action, resource, context, session, tool_call_id, dry_run, approval_token)
        try:
            r = await _aguarded(lambda: policies_check.asyncio_detailed(client=self.api, body=body))
            return Decision.of(_unwrap(r, CheckResponse))
        except errors.Unavailable as e:
            allow = self._s.fail_open if fail_open is None else fail_open
            return Decision.fallen_back(allow, _fallback_note(f"{action} on {resource}", allow, e))

    async def feed(self, events: list[str] | None = None) -> AsyncIterator[dict[str, Any]]:
        from websockets.asyncio.client import connect

        token = self._s.token
        if not token:
            raise errors.AgentgovError("the feed needs a signed-in user: token=")
        async with connect(
            _ws_url(self._s.url),
            additional_headers={"Authorization": f"Bearer {token}"},
        ) as ws:
            subscribe = _subscribe(events)
            if subscribe is not None:
                await ws.send(subscribe)
            async for message in ws:
                event = json.loads(message)
                if isinstance(event, dict) and "tenant_id" in event:
                    yield event


class _AsyncSessions:
    def __init__(self, gov: AsyncAgentgov) -> None:
        self._gov = gov

    async def observe(
        self,
        session: str,
        agent: AgentRef,
        content: str,
        *,
        source: str | None = None,
        tool_call_id: str | None = None,
        labels: list[str] | None = None,
        trusted: bool = False,
    ) -> Observation:
        body = _observe_body(agent, content, source, tool_call_id, labels, trusted)
        return _unwrap(
            await _aguarded(lambda: sessions_observe.asyncio_detailed(session, client=self._gov.api, body=body)),
            Observation,
        )


class _AsyncGuard:
    def __init__(self, gov: AsyncAgentgov) -> None:
        self._gov = gov

    async def validate(
        self,
        text: str,
        *,
        direction: str = "input",
        agent: AgentRef | None = None,
        system_prompt: str | None = None,
        fail_open: bool | None = None,
    ) -> GuardResult:
        body = _validate_body(text, direction, agent, system_prompt)
        try:
            r = await _aguarded(lambda: guard_validate.asyncio_detailed(client=self._gov.api, body=body))
            return GuardResult.of(_unwrap(r, Validation))
        except errors.Unavailable as e:
            allow = self._gov._s.fail_open if fail_open is None else fail_open
            return GuardResult.fallen_back(allow, _fallback_note("text", allow, e))


class _AsyncHitl:
    def __init__(self, gov: AsyncAgentgov) -> None:
        self._gov = gov

    async def request(
        self,
        agent: AgentRef,
        action: str,
        resource: str,
        reason: str,
        context: Mapping[str, Any] | None = None,
        *,
        timeout_seconds: int | None = None,
        callback_url: str | None = None,
    ) -> HitlRequest:
        body = _hitl_body(agent, action, resource, reason, context, timeout_seconds, callback_url)
        r = await _aguarded(lambda: hitl_request.asyncio_detailed(client=self._gov.api, body=body))
        return _unwrap(r, HitlRequest)

    async def status(self, id: AgentRef) -> HitlRequest:
        rid = _uuid(id, "id")
        return _unwrap(
            await _aguarded(lambda: hitl_status.asyncio_detailed(rid, client=self._gov.api)),
            HitlRequest,
        )

    async def wait(self, id: AgentRef, timeout: float = 300.0) -> HitlRequest:
        rid = _uuid(id, "id")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            wait = max(0, min(MAX_WAIT_SECS, int(left)))
            r = await _aguarded(partial(hitl_status.asyncio_detailed, rid, client=self._gov.api, wait=wait))
            request = _unwrap(r, HitlRequest)
            if request.status != HitlStatus.PENDING or left <= 1:
                return request

    async def approve(
        self, id: AgentRef, comment: str | None = None, *, context: Mapping[str, Any] | None = None
    ) -> HitlRequest:
        rid, body, client = _uuid(id, "id"), _approval(comment, context), self._gov._user()
        return _unwrap(
            await _aguarded(lambda: hitl_approve.asyncio_detailed(rid, client=client, body=body)),
            HitlRequest,
        )

    async def reject(self, id: AgentRef, comment: str | None = None) -> HitlRequest:
        rid, body, client = _uuid(id, "id"), _comment(comment), self._gov._user()
        return _unwrap(
            await _aguarded(lambda: hitl_reject.asyncio_detailed(rid, client=client, body=body)),
            HitlRequest,
        )

    async def cancel(self, id: AgentRef) -> HitlRequest:
        rid = _uuid(id, "id")
        return _unwrap(await _aguarded(lambda: hitl_cancel.asyncio_detailed(rid, client=self._gov.api)), HitlRequest)


class _AsyncAudit:
    def __init__(self, gov: AsyncAgentgov) -> None:
        self._gov = gov

    async def log(
        self,
        event_type: str,
        *,
        agent: AgentRef | None = None,
        action: str | None = None,
        resource: str | None = None,
        decision: str | None = None,
        details: Mapping[str, Any] | None = None,
        risk_score: float | None = None,
    ) -> AuditRecord:
        body = _audit_body(event_type, agent, action, resource, decision, details, risk_score)
        return _unwrap(
            await _aguarded(lambda: audit_write.asyncio_detailed(client=self._gov.api, body=body)),
            AuditRecord,
        )


class _AsyncDiscovery:
    def __init__(self, gov: AsyncAgentgov) -> None:
        self._gov = gov

    async def ingest(self, source: str, **fields: Any) -> DiscoveryEvent:
        body = _ingest_body(source, fields)
        r = await _aguarded(lambda: discovery_ingest.asyncio_detailed(client=self._gov.api, body=body))
        return _unwrap(r, DiscoveryEvent)

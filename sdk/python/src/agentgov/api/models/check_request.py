from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.check_request_context import CheckRequestContext


T = TypeVar("T", bound="CheckRequest")


@_attrs_define
class CheckRequest:
    """`POST /policies/check` (spec 2.4).

    Attributes:
        action (str): What the agent wants to do, e.g. `delete`; 1 to 200 characters.
        agent_id (UUID): The acting agent (a UUID of the caller's tenant).
        resource (str): What it wants to do it to, e.g. `prod/db/customers`; 1 to 1,000 characters.
        approval_token (None | str | Unset): The approval token of an approved request (`GET /hitl/status/{id}` serves
            it): the
            check is then allowed (unless a policy denies it) only if it is the exact action
            approved, and the token is spent. A token refused (another action, used already,
            expired, not valid) denies the check, saying why. A compact JWS (three base64url
            parts), at most 4,096 characters.
        context (CheckRequestContext | Unset): Free-form facts, e.g. `{"consent": true, "environment": "production",
            "record_count": 20}`; at most 16 KiB.
        dry_run (bool | Unset): Evaluate without recording the decision (for policy authors): no audit record, no
            event, `decision_id` null.
        session_id (None | str | Unset): The conversation or run the action belongs to (the SDK's adapters send it),
            kept in
            the decision's audit record so that one run can be followed; 1 to 200 characters.
        tool_call_id (None | str | Unset): The agent framework's id of this tool call, kept in the decision's audit
            record; 1 to
            200 characters.
    """

    action: str
    agent_id: UUID
    resource: str
    approval_token: None | str | Unset = UNSET
    context: CheckRequestContext | Unset = UNSET
    dry_run: bool | Unset = UNSET
    session_id: None | str | Unset = UNSET
    tool_call_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        agent_id = str(self.agent_id)

        resource = self.resource

        approval_token: None | str | Unset
        if isinstance(self.approval_token, Unset):
            approval_token = UNSET
        else:
            approval_token = self.approval_token

        context: dict[str, Any] | Unset = UNSET
        if not isinstance(self.context, Unset):
            context = self.context.to_dict()

        dry_run = self.dry_run

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        tool_call_id: None | str | Unset
        if isinstance(self.tool_call_id, Unset):
            tool_call_id = UNSET
        else:
            tool_call_id = self.tool_call_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "agent_id": agent_id,
                "resource": resource,
            }
        )
        if approval_token is not UNSET:
            field_dict["approval_token"] = approval_token
        if context is not UNSET:
            field_dict["context"] = context
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if tool_call_id is not UNSET:
            field_dict["tool_call_id"] = tool_call_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.check_request_context import CheckRequestContext

        d = dict(src_dict)
        action = d.pop("action")

        agent_id = UUID(d.pop("agent_id"))

        resource = d.pop("resource")

        def _parse_approval_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        approval_token = _parse_approval_token(d.pop("approval_token", UNSET))

        _context = d.pop("context", UNSET)
        context: CheckRequestContext | Unset
        if isinstance(_context, Unset):
            context = UNSET
        else:
            context = CheckRequestContext.from_dict(_context)

        dry_run = d.pop("dry_run", UNSET)

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))

        def _parse_tool_call_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tool_call_id = _parse_tool_call_id(d.pop("tool_call_id", UNSET))

        check_request = cls(
            action=action,
            agent_id=agent_id,
            resource=resource,
            approval_token=approval_token,
            context=context,
            dry_run=dry_run,
            session_id=session_id,
            tool_call_id=tool_call_id,
        )

        return check_request

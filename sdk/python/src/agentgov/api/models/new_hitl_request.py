from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.new_hitl_request_context import NewHitlRequestContext


T = TypeVar("T", bound="NewHitlRequest")


@_attrs_define
class NewHitlRequest:
    """`POST /hitl/request`.

    Attributes:
        action (str): 1 to 200 characters.
        agent_id (UUID): The agent that wants to act (a UUID of the caller's tenant).
        reason (str): Why approval is needed; 1 to 2,000 characters.
        resource (str): 1 to 1,000 characters.
        callback_url (None | str | Unset): `http` or `https` URL that receives the outcome as a signed POST. Its host
            must be
            public (loopback, private, link-local and other internal addresses, and names such
            as `localhost` or `*.internal`, are refused unless the operator allows the range).
        context (NewHitlRequestContext | Unset): Free-form facts for the approver; at most 16 KiB.
        timeout_seconds (int | None | Unset): 1 to 604,800; the tenant's `hitl_timeout_secs` (an hour unless set) when
            left out.
    """

    action: str
    agent_id: UUID
    reason: str
    resource: str
    callback_url: None | str | Unset = UNSET
    context: NewHitlRequestContext | Unset = UNSET
    timeout_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        agent_id = str(self.agent_id)

        reason = self.reason

        resource = self.resource

        callback_url: None | str | Unset
        if isinstance(self.callback_url, Unset):
            callback_url = UNSET
        else:
            callback_url = self.callback_url

        context: dict[str, Any] | Unset = UNSET
        if not isinstance(self.context, Unset):
            context = self.context.to_dict()

        timeout_seconds: int | None | Unset
        if isinstance(self.timeout_seconds, Unset):
            timeout_seconds = UNSET
        else:
            timeout_seconds = self.timeout_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "agent_id": agent_id,
                "reason": reason,
                "resource": resource,
            }
        )
        if callback_url is not UNSET:
            field_dict["callback_url"] = callback_url
        if context is not UNSET:
            field_dict["context"] = context
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_hitl_request_context import NewHitlRequestContext

        d = dict(src_dict)
        action = d.pop("action")

        agent_id = UUID(d.pop("agent_id"))

        reason = d.pop("reason")

        resource = d.pop("resource")

        def _parse_callback_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        callback_url = _parse_callback_url(d.pop("callback_url", UNSET))

        _context = d.pop("context", UNSET)
        context: NewHitlRequestContext | Unset
        if isinstance(_context, Unset):
            context = UNSET
        else:
            context = NewHitlRequestContext.from_dict(_context)

        def _parse_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_seconds = _parse_timeout_seconds(d.pop("timeout_seconds", UNSET))

        new_hitl_request = cls(
            action=action,
            agent_id=agent_id,
            reason=reason,
            resource=resource,
            callback_url=callback_url,
            context=context,
            timeout_seconds=timeout_seconds,
        )

        return new_hitl_request

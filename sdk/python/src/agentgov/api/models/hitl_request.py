from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.hitl_status import HitlStatus
from ..models.risk_level import RiskLevel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.approval_grant import ApprovalGrant
    from ..models.hitl_callback import HitlCallback
    from ..models.hitl_escalation import HitlEscalation
    from ..models.hitl_request_approved_context_type_0 import HitlRequestApprovedContextType0
    from ..models.hitl_request_context import HitlRequestContext


T = TypeVar("T", bound="HitlRequest")


@_attrs_define
class HitlRequest:
    """An approval request, as stored and served.

    Adapters keep `id`, `tenant_id`, `status`, `expires_at` and the callback's due time
    ([`HitlRequest::callback_due_at`]) in columns and the whole record as the JSON text of
    its `Serialize` form (which leaves out `tenant_id`); reading it back, they set
    `tenant_id` from its column.

        Attributes:
            action (str):
            agent_id (UUID): A registered agent of one tenant.
            agent_name (str): The agent's name when the request was made.
            context (HitlRequestContext):
            created_at (datetime.datetime):
            expires_at (datetime.datetime):
            id (UUID): A human-in-the-loop approval request.
            reason (str): Why approval is asked for.
            requested_by (Actor): `{"type": "user", "id": "0193…"}`.
            resource (str):
            risk (RiskLevel): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high` (< 0.85), `critical`;
                a tenant may move the bounds ([`RiskLevels`]).
            risk_score (float): From 0 to 1: the policy check's score, or the risk model's for a direct request.
            status (HitlStatus): A request's state. `pending` is the only one that changes.
            updated_at (datetime.datetime):
            action_digest (None | str | Unset): SHA-256 (hex) of the RFC 8785 canonical JSON of the exact action asked
                about: tenant,
                agent, action, resource, arguments (the context) and the versions of the tenant's
                enforced policies ([`action_digest`]). An approval token is bound to it. `null` on
                requests made before actions were bound.
            approval_token (None | str | Unset): The approval token (`approved` requests with an unused, unexpired grant,
                served to
                callers that may check, and in the callback): present it as `approval_token` in
                `POST /policies/check` to run exactly the approved action, once. Never stored.
            approved_context (HitlRequestApprovedContextType0 | None | Unset): When the approver edited the arguments: the
                context the agent must act with instead
                (checked again under policy when approved; the approval is bound to it).
            callback (HitlCallback | None | Unset):
            comment (None | str | Unset): The decider's note.
            decided_at (datetime.datetime | None | Unset):
            decided_by (Actor | None | Unset):
            decision_id (None | Unset | UUID):
            escalation (HitlEscalation | None | Unset):
            grant (ApprovalGrant | None | Unset):
            session_id (None | str | Unset): The agent session of the check that asked, if it named one: the request's audit
                records carry it (an approval counts in the session's `approvals`), and an edited
                approval is checked in it.
    """

    action: str
    agent_id: UUID
    agent_name: str
    context: HitlRequestContext
    created_at: datetime.datetime
    expires_at: datetime.datetime
    id: UUID
    reason: str
    requested_by: Actor
    resource: str
    risk: RiskLevel
    risk_score: float
    status: HitlStatus
    updated_at: datetime.datetime
    action_digest: None | str | Unset = UNSET
    approval_token: None | str | Unset = UNSET
    approved_context: HitlRequestApprovedContextType0 | None | Unset = UNSET
    callback: HitlCallback | None | Unset = UNSET
    comment: None | str | Unset = UNSET
    decided_at: datetime.datetime | None | Unset = UNSET
    decided_by: Actor | None | Unset = UNSET
    decision_id: None | Unset | UUID = UNSET
    escalation: HitlEscalation | None | Unset = UNSET
    grant: ApprovalGrant | None | Unset = UNSET
    session_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor
        from ..models.approval_grant import ApprovalGrant
        from ..models.hitl_callback import HitlCallback
        from ..models.hitl_escalation import HitlEscalation
        from ..models.hitl_request_approved_context_type_0 import HitlRequestApprovedContextType0

        action = self.action

        agent_id = str(self.agent_id)

        agent_name = self.agent_name

        context = self.context.to_dict()

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        id = str(self.id)

        reason = self.reason

        requested_by = self.requested_by.to_dict()

        resource = self.resource

        risk = self.risk.value

        risk_score = self.risk_score

        status = self.status.value

        updated_at = self.updated_at.isoformat()

        action_digest: None | str | Unset
        if isinstance(self.action_digest, Unset):
            action_digest = UNSET
        else:
            action_digest = self.action_digest

        approval_token: None | str | Unset
        if isinstance(self.approval_token, Unset):
            approval_token = UNSET
        else:
            approval_token = self.approval_token

        approved_context: dict[str, Any] | None | Unset
        if isinstance(self.approved_context, Unset):
            approved_context = UNSET
        elif isinstance(self.approved_context, HitlRequestApprovedContextType0):
            approved_context = self.approved_context.to_dict()
        else:
            approved_context = self.approved_context

        callback: dict[str, Any] | None | Unset
        if isinstance(self.callback, Unset):
            callback = UNSET
        elif isinstance(self.callback, HitlCallback):
            callback = self.callback.to_dict()
        else:
            callback = self.callback

        comment: None | str | Unset
        if isinstance(self.comment, Unset):
            comment = UNSET
        else:
            comment = self.comment

        decided_at: None | str | Unset
        if isinstance(self.decided_at, Unset):
            decided_at = UNSET
        elif isinstance(self.decided_at, datetime.datetime):
            decided_at = self.decided_at.isoformat()
        else:
            decided_at = self.decided_at

        decided_by: dict[str, Any] | None | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        elif isinstance(self.decided_by, Actor):
            decided_by = self.decided_by.to_dict()
        else:
            decided_by = self.decided_by

        decision_id: None | str | Unset
        if isinstance(self.decision_id, Unset):
            decision_id = UNSET
        elif isinstance(self.decision_id, UUID):
            decision_id = str(self.decision_id)
        else:
            decision_id = self.decision_id

        escalation: dict[str, Any] | None | Unset
        if isinstance(self.escalation, Unset):
            escalation = UNSET
        elif isinstance(self.escalation, HitlEscalation):
            escalation = self.escalation.to_dict()
        else:
            escalation = self.escalation

        grant: dict[str, Any] | None | Unset
        if isinstance(self.grant, Unset):
            grant = UNSET
        elif isinstance(self.grant, ApprovalGrant):
            grant = self.grant.to_dict()
        else:
            grant = self.grant

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "agent_id": agent_id,
                "agent_name": agent_name,
                "context": context,
                "created_at": created_at,
                "expires_at": expires_at,
                "id": id,
                "reason": reason,
                "requested_by": requested_by,
                "resource": resource,
                "risk": risk,
                "risk_score": risk_score,
                "status": status,
                "updated_at": updated_at,
            }
        )
        if action_digest is not UNSET:
            field_dict["action_digest"] = action_digest
        if approval_token is not UNSET:
            field_dict["approval_token"] = approval_token
        if approved_context is not UNSET:
            field_dict["approved_context"] = approved_context
        if callback is not UNSET:
            field_dict["callback"] = callback
        if comment is not UNSET:
            field_dict["comment"] = comment
        if decided_at is not UNSET:
            field_dict["decided_at"] = decided_at
        if decided_by is not UNSET:
            field_dict["decided_by"] = decided_by
        if decision_id is not UNSET:
            field_dict["decision_id"] = decision_id
        if escalation is not UNSET:
            field_dict["escalation"] = escalation
        if grant is not UNSET:
            field_dict["grant"] = grant
        if session_id is not UNSET:
            field_dict["session_id"] = session_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.approval_grant import ApprovalGrant
        from ..models.hitl_callback import HitlCallback
        from ..models.hitl_escalation import HitlEscalation
        from ..models.hitl_request_approved_context_type_0 import HitlRequestApprovedContextType0
        from ..models.hitl_request_context import HitlRequestContext

        d = dict(src_dict)
        action = d.pop("action")

        agent_id = UUID(d.pop("agent_id"))

        agent_name = d.pop("agent_name")

        context = HitlRequestContext.from_dict(d.pop("context"))

        created_at = isoparse(d.pop("created_at"))

        expires_at = isoparse(d.pop("expires_at"))

        id = UUID(d.pop("id"))

        reason = d.pop("reason")

        requested_by = Actor.from_dict(d.pop("requested_by"))

        resource = d.pop("resource")

        risk = RiskLevel(d.pop("risk"))

        risk_score = d.pop("risk_score")

        status = HitlStatus(d.pop("status"))

        updated_at = isoparse(d.pop("updated_at"))

        def _parse_action_digest(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        action_digest = _parse_action_digest(d.pop("action_digest", UNSET))

        def _parse_approval_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        approval_token = _parse_approval_token(d.pop("approval_token", UNSET))

        def _parse_approved_context(data: object) -> HitlRequestApprovedContextType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approved_context_type_0 = HitlRequestApprovedContextType0.from_dict(data)

                return approved_context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HitlRequestApprovedContextType0 | None | Unset, data)

        approved_context = _parse_approved_context(d.pop("approved_context", UNSET))

        def _parse_callback(data: object) -> HitlCallback | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                callback_type_0 = HitlCallback.from_dict(data)

                return callback_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HitlCallback | None | Unset, data)

        callback = _parse_callback(d.pop("callback", UNSET))

        def _parse_comment(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        comment = _parse_comment(d.pop("comment", UNSET))

        def _parse_decided_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decided_at_type_0 = isoparse(data)

                return decided_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        decided_at = _parse_decided_at(d.pop("decided_at", UNSET))

        def _parse_decided_by(data: object) -> Actor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                decided_by_type_0 = Actor.from_dict(data)

                return decided_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Actor | None | Unset, data)

        decided_by = _parse_decided_by(d.pop("decided_by", UNSET))

        def _parse_decision_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decision_id_type_0 = UUID(data)

                return decision_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        decision_id = _parse_decision_id(d.pop("decision_id", UNSET))

        def _parse_escalation(data: object) -> HitlEscalation | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                escalation_type_0 = HitlEscalation.from_dict(data)

                return escalation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HitlEscalation | None | Unset, data)

        escalation = _parse_escalation(d.pop("escalation", UNSET))

        def _parse_grant(data: object) -> ApprovalGrant | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                grant_type_0 = ApprovalGrant.from_dict(data)

                return grant_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalGrant | None | Unset, data)

        grant = _parse_grant(d.pop("grant", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))

        hitl_request = cls(
            action=action,
            agent_id=agent_id,
            agent_name=agent_name,
            context=context,
            created_at=created_at,
            expires_at=expires_at,
            id=id,
            reason=reason,
            requested_by=requested_by,
            resource=resource,
            risk=risk,
            risk_score=risk_score,
            status=status,
            updated_at=updated_at,
            action_digest=action_digest,
            approval_token=approval_token,
            approved_context=approved_context,
            callback=callback,
            comment=comment,
            decided_at=decided_at,
            decided_by=decided_by,
            decision_id=decision_id,
            escalation=escalation,
            grant=grant,
            session_id=session_id,
        )

        hitl_request.additional_properties = d
        return hitl_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.new_audit_entry_details_type_0 import NewAuditEntryDetailsType0


T = TypeVar("T", bound="NewAuditEntry")


@_attrs_define
class NewAuditEntry:
    """
    Attributes:
        event_type (str): Dotted lower-case name in a namespace of the client's own, e.g. `app.tool_call`. The
            namespaces of the service's own events (`agent.`, `anomaly.`, `api_key.`, `audit.`,
            `auth.`, `discovery.`, `guard.`, `hitl.`, `policy.`, `tenant.`, `user.`, and
            `agentgov.`, `export.`, `service.`, `siem.`, `sso.`, `system.`, `webhook.`) are
            reserved (422): the record's `origin` is `client`.
        action (None | str | Unset):
        agent_id (None | Unset | UUID):
        decision (None | str | Unset): E.g. `allow`, `deny`, `approval_required`.
        details (NewAuditEntryDetailsType0 | None | Unset): A JSON object: input, output, reasoning, context…
        resource (None | str | Unset):
        risk_score (float | None | Unset): From 0 to 1.
    """

    event_type: str
    action: None | str | Unset = UNSET
    agent_id: None | Unset | UUID = UNSET
    decision: None | str | Unset = UNSET
    details: NewAuditEntryDetailsType0 | None | Unset = UNSET
    resource: None | str | Unset = UNSET
    risk_score: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.new_audit_entry_details_type_0 import NewAuditEntryDetailsType0

        event_type = self.event_type

        action: None | str | Unset
        if isinstance(self.action, Unset):
            action = UNSET
        else:
            action = self.action

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        elif isinstance(self.agent_id, UUID):
            agent_id = str(self.agent_id)
        else:
            agent_id = self.agent_id

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        else:
            decision = self.decision

        details: dict[str, Any] | None | Unset
        if isinstance(self.details, Unset):
            details = UNSET
        elif isinstance(self.details, NewAuditEntryDetailsType0):
            details = self.details.to_dict()
        else:
            details = self.details

        resource: None | str | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        else:
            resource = self.resource

        risk_score: float | None | Unset
        if isinstance(self.risk_score, Unset):
            risk_score = UNSET
        else:
            risk_score = self.risk_score

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_type": event_type,
            }
        )
        if action is not UNSET:
            field_dict["action"] = action
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if decision is not UNSET:
            field_dict["decision"] = decision
        if details is not UNSET:
            field_dict["details"] = details
        if resource is not UNSET:
            field_dict["resource"] = resource
        if risk_score is not UNSET:
            field_dict["risk_score"] = risk_score

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_audit_entry_details_type_0 import NewAuditEntryDetailsType0

        d = dict(src_dict)
        event_type = d.pop("event_type")

        def _parse_action(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        action = _parse_action(d.pop("action", UNSET))

        def _parse_agent_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                agent_id_type_0 = UUID(data)

                return agent_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))

        def _parse_decision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))

        def _parse_details(data: object) -> NewAuditEntryDetailsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                details_type_0 = NewAuditEntryDetailsType0.from_dict(data)

                return details_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NewAuditEntryDetailsType0 | None | Unset, data)

        details = _parse_details(d.pop("details", UNSET))

        def _parse_resource(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        def _parse_risk_score(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        risk_score = _parse_risk_score(d.pop("risk_score", UNSET))

        new_audit_entry = cls(
            event_type=event_type,
            action=action,
            agent_id=agent_id,
            decision=decision,
            details=details,
            resource=resource,
            risk_score=risk_score,
        )

        new_audit_entry.additional_properties = d
        return new_audit_entry

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

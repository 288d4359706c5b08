from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

T = TypeVar("T", bound="ShadowExample")


@_attrs_define
class ShadowExample:
    """
    Attributes:
        decision_id (UUID): A record of the audit log.
        effect (str): `would_deny`, `would_require_approval` or `would_error`.
        messages (list[str]):
        timestamp (datetime.datetime):
        action (None | str | Unset):
        agent_id (None | Unset | UUID):
        decision (None | str | Unset): The decision as it was made.
        resource (None | str | Unset):
    """

    decision_id: UUID
    effect: str
    messages: list[str]
    timestamp: datetime.datetime
    action: None | str | Unset = UNSET
    agent_id: None | Unset | UUID = UNSET
    decision: None | str | Unset = UNSET
    resource: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        decision_id = str(self.decision_id)

        effect = self.effect

        messages = self.messages

        timestamp = self.timestamp.isoformat()

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

        resource: None | str | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        else:
            resource = self.resource

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "decision_id": decision_id,
                "effect": effect,
                "messages": messages,
                "timestamp": timestamp,
            }
        )
        if action is not UNSET:
            field_dict["action"] = action
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if decision is not UNSET:
            field_dict["decision"] = decision
        if resource is not UNSET:
            field_dict["resource"] = resource

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        decision_id = UUID(d.pop("decision_id"))

        effect = d.pop("effect")

        messages = cast(list[str], d.pop("messages"))

        timestamp = isoparse(d.pop("timestamp"))

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

        def _parse_resource(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        shadow_example = cls(
            decision_id=decision_id,
            effect=effect,
            messages=messages,
            timestamp=timestamp,
            action=action,
            agent_id=agent_id,
            decision=decision,
            resource=resource,
        )

        shadow_example.additional_properties = d
        return shadow_example

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

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.replay_change import ReplayChange
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplayExample")


@_attrs_define
class ReplayExample:
    """One decision whose outcome the candidate changes.

    Attributes:
        after (str):
        before (str): The baseline's outcome and the candidate's: `allow`, `deny`, `require_approval`,
            `error`.
        change (ReplayChange): How a replay's candidate changes a recorded input's outcome.
        decision_id (UUID): A record of the audit log.
        messages (list[str]): The candidate's messages (or its error).
        timestamp (datetime.datetime):
        action (None | str | Unset):
        agent_id (None | Unset | UUID):
        resource (None | str | Unset):
    """

    after: str
    before: str
    change: ReplayChange
    decision_id: UUID
    messages: list[str]
    timestamp: datetime.datetime
    action: None | str | Unset = UNSET
    agent_id: None | Unset | UUID = UNSET
    resource: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        after = self.after

        before = self.before

        change = self.change.value

        decision_id = str(self.decision_id)

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

        resource: None | str | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        else:
            resource = self.resource

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "after": after,
                "before": before,
                "change": change,
                "decision_id": decision_id,
                "messages": messages,
                "timestamp": timestamp,
            }
        )
        if action is not UNSET:
            field_dict["action"] = action
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if resource is not UNSET:
            field_dict["resource"] = resource

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        after = d.pop("after")

        before = d.pop("before")

        change = ReplayChange(d.pop("change"))

        decision_id = UUID(d.pop("decision_id"))

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

        def _parse_resource(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        replay_example = cls(
            after=after,
            before=before,
            change=change,
            decision_id=decision_id,
            messages=messages,
            timestamp=timestamp,
            action=action,
            agent_id=agent_id,
            resource=resource,
        )

        replay_example.additional_properties = d
        return replay_example

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

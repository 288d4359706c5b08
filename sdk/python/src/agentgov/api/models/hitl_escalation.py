from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.role import Role
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.escalation_step import EscalationStep


T = TypeVar("T", bound="HitlEscalation")


@_attrs_define
class HitlEscalation:
    """Where a pending request stands on its escalation chain.

    Attributes:
        level (int): How many steps were taken (0: none yet).
        steps (list[EscalationStep]): The chain, as the tenant had it when the request was made.
        escalated_at (datetime.datetime | None | Unset): When the last step was taken.
        next_at (datetime.datetime | None | Unset): When the next step is due; `null` once the chain is done.
        role (None | Role | Unset):
    """

    level: int
    steps: list[EscalationStep]
    escalated_at: datetime.datetime | None | Unset = UNSET
    next_at: datetime.datetime | None | Unset = UNSET
    role: None | Role | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        level = self.level

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        escalated_at: None | str | Unset
        if isinstance(self.escalated_at, Unset):
            escalated_at = UNSET
        elif isinstance(self.escalated_at, datetime.datetime):
            escalated_at = self.escalated_at.isoformat()
        else:
            escalated_at = self.escalated_at

        next_at: None | str | Unset
        if isinstance(self.next_at, Unset):
            next_at = UNSET
        elif isinstance(self.next_at, datetime.datetime):
            next_at = self.next_at.isoformat()
        else:
            next_at = self.next_at

        role: None | str | Unset
        if isinstance(self.role, Unset):
            role = UNSET
        elif isinstance(self.role, Role):
            role = self.role.value
        else:
            role = self.role

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "level": level,
                "steps": steps,
            }
        )
        if escalated_at is not UNSET:
            field_dict["escalated_at"] = escalated_at
        if next_at is not UNSET:
            field_dict["next_at"] = next_at
        if role is not UNSET:
            field_dict["role"] = role

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.escalation_step import EscalationStep

        d = dict(src_dict)
        level = d.pop("level")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = EscalationStep.from_dict(steps_item_data)

            steps.append(steps_item)

        def _parse_escalated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                escalated_at_type_0 = isoparse(data)

                return escalated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        escalated_at = _parse_escalated_at(d.pop("escalated_at", UNSET))

        def _parse_next_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_at_type_0 = isoparse(data)

                return next_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_at = _parse_next_at(d.pop("next_at", UNSET))

        def _parse_role(data: object) -> None | Role | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                role_type_0 = Role(data)

                return role_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Role | Unset, data)

        role = _parse_role(d.pop("role", UNSET))

        hitl_escalation = cls(
            level=level,
            steps=steps,
            escalated_at=escalated_at,
            next_at=next_at,
            role=role,
        )

        hitl_escalation.additional_properties = d
        return hitl_escalation

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

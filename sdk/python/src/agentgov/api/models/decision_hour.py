from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.decision_hour_by_decision import DecisionHourByDecision


T = TypeVar("T", bound="DecisionHour")


@_attrs_define
class DecisionHour:
    """One hour of [`DecisionStats`].

    Attributes:
        by_decision (DecisionHourByDecision):
        hour (datetime.datetime): The hour's first instant.
        total (int):
    """

    by_decision: DecisionHourByDecision
    hour: datetime.datetime
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_decision = self.by_decision.to_dict()

        hour = self.hour.isoformat()

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_decision": by_decision,
                "hour": hour,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.decision_hour_by_decision import DecisionHourByDecision

        d = dict(src_dict)
        by_decision = DecisionHourByDecision.from_dict(d.pop("by_decision"))

        hour = isoparse(d.pop("hour"))

        total = d.pop("total")

        decision_hour = cls(
            by_decision=by_decision,
            hour=hour,
            total=total,
        )

        decision_hour.additional_properties = d
        return decision_hour

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

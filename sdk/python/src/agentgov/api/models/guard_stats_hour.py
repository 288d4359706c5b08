from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.guard_stats_hour_by_verdict import GuardStatsHourByVerdict


T = TypeVar("T", bound="GuardStatsHour")


@_attrs_define
class GuardStatsHour:
    """One hour of [`GuardStats`].

    Attributes:
        by_verdict (GuardStatsHourByVerdict): Screenings per verdict, every verdict named.
        hour (datetime.datetime): The hour's first instant.
        total (int):
    """

    by_verdict: GuardStatsHourByVerdict
    hour: datetime.datetime
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_verdict = self.by_verdict.to_dict()

        hour = self.hour.isoformat()

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_verdict": by_verdict,
                "hour": hour,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_stats_hour_by_verdict import GuardStatsHourByVerdict

        d = dict(src_dict)
        by_verdict = GuardStatsHourByVerdict.from_dict(d.pop("by_verdict"))

        hour = isoparse(d.pop("hour"))

        total = d.pop("total")

        guard_stats_hour = cls(
            by_verdict=by_verdict,
            hour=hour,
            total=total,
        )

        guard_stats_hour.additional_properties = d
        return guard_stats_hour

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

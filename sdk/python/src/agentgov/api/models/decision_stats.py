from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.decision_hour import DecisionHour
    from ..models.decision_stats_by_decision import DecisionStatsByDecision


T = TypeVar("T", bound="DecisionStats")


@_attrs_define
class DecisionStats:
    """Answered checks (each a `policy.decision` record) over the last 24 hours.

    Attributes:
        by_decision (DecisionStatsByDecision): Per decision (`allow`, `deny`, `require_approval`), each named.
        series (list[DecisionHour]): Every hour of the window, oldest first, empty ones included.
        total (int):
        window_hours (int):
    """

    by_decision: DecisionStatsByDecision
    series: list[DecisionHour]
    total: int
    window_hours: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_decision = self.by_decision.to_dict()

        series = []
        for series_item_data in self.series:
            series_item = series_item_data.to_dict()
            series.append(series_item)

        total = self.total

        window_hours = self.window_hours

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_decision": by_decision,
                "series": series,
                "total": total,
                "window_hours": window_hours,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.decision_hour import DecisionHour
        from ..models.decision_stats_by_decision import DecisionStatsByDecision

        d = dict(src_dict)
        by_decision = DecisionStatsByDecision.from_dict(d.pop("by_decision"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = DecisionHour.from_dict(series_item_data)

            series.append(series_item)

        total = d.pop("total")

        window_hours = d.pop("window_hours")

        decision_stats = cls(
            by_decision=by_decision,
            series=series,
            total=total,
            window_hours=window_hours,
        )

        decision_stats.additional_properties = d
        return decision_stats

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

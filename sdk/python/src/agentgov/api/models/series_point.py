from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.series_point_by_severity import SeriesPointBySeverity


T = TypeVar("T", bound="SeriesPoint")


@_attrs_define
class SeriesPoint:
    """One bucket of `series`.

    Attributes:
        by_severity (SeriesPointBySeverity): Per severity, every severity named.
        count (int):
        start (datetime.datetime): The bucket's first instant.
    """

    by_severity: SeriesPointBySeverity
    count: int
    start: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_severity = self.by_severity.to_dict()

        count = self.count

        start = self.start.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_severity": by_severity,
                "count": count,
                "start": start,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.series_point_by_severity import SeriesPointBySeverity

        d = dict(src_dict)
        by_severity = SeriesPointBySeverity.from_dict(d.pop("by_severity"))

        count = d.pop("count")

        start = isoparse(d.pop("start"))

        series_point = cls(
            by_severity=by_severity,
            count=count,
            start=start,
        )

        series_point.additional_properties = d
        return series_point

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

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.bucket import Bucket

if TYPE_CHECKING:
    from ..models.agent_count import AgentCount
    from ..models.anomaly_stats_by_severity import AnomalyStatsBySeverity
    from ..models.anomaly_stats_by_status import AnomalyStatsByStatus
    from ..models.anomaly_stats_by_type import AnomalyStatsByType
    from ..models.series_point import SeriesPoint


T = TypeVar("T", bound="AnomalyStats")


@_attrs_define
class AnomalyStats:
    """`GET /anomalies/stats`.

    Attributes:
        bucket (Bucket): The width of a `series` bucket.
        by_severity (AnomalyStatsBySeverity): Every severity, type and status named, with 0 for none.
        by_status (AnomalyStatsByStatus):
        by_type (AnomalyStatsByType):
        from_ (datetime.datetime):
        series (list[SeriesPoint]): Every bucket from the one holding `from` to the one holding the instant before
            `to`, oldest first, empty ones included.
        to (datetime.datetime):
        top_agents (list[AgentCount]): The agents with the most reports (at most 10), most first.
        total (int):
    """

    bucket: Bucket
    by_severity: AnomalyStatsBySeverity
    by_status: AnomalyStatsByStatus
    by_type: AnomalyStatsByType
    from_: datetime.datetime
    series: list[SeriesPoint]
    to: datetime.datetime
    top_agents: list[AgentCount]
    total: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bucket = self.bucket.value

        by_severity = self.by_severity.to_dict()

        by_status = self.by_status.to_dict()

        by_type = self.by_type.to_dict()

        from_ = self.from_.isoformat()

        series = []
        for series_item_data in self.series:
            series_item = series_item_data.to_dict()
            series.append(series_item)

        to = self.to.isoformat()

        top_agents = []
        for top_agents_item_data in self.top_agents:
            top_agents_item = top_agents_item_data.to_dict()
            top_agents.append(top_agents_item)

        total = self.total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bucket": bucket,
                "by_severity": by_severity,
                "by_status": by_status,
                "by_type": by_type,
                "from": from_,
                "series": series,
                "to": to,
                "top_agents": top_agents,
                "total": total,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_count import AgentCount
        from ..models.anomaly_stats_by_severity import AnomalyStatsBySeverity
        from ..models.anomaly_stats_by_status import AnomalyStatsByStatus
        from ..models.anomaly_stats_by_type import AnomalyStatsByType
        from ..models.series_point import SeriesPoint

        d = dict(src_dict)
        bucket = Bucket(d.pop("bucket"))

        by_severity = AnomalyStatsBySeverity.from_dict(d.pop("by_severity"))

        by_status = AnomalyStatsByStatus.from_dict(d.pop("by_status"))

        by_type = AnomalyStatsByType.from_dict(d.pop("by_type"))

        from_ = isoparse(d.pop("from"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = SeriesPoint.from_dict(series_item_data)

            series.append(series_item)

        to = isoparse(d.pop("to"))

        top_agents = []
        _top_agents = d.pop("top_agents")
        for top_agents_item_data in _top_agents:
            top_agents_item = AgentCount.from_dict(top_agents_item_data)

            top_agents.append(top_agents_item)

        total = d.pop("total")

        anomaly_stats = cls(
            bucket=bucket,
            by_severity=by_severity,
            by_status=by_status,
            by_type=by_type,
            from_=from_,
            series=series,
            to=to,
            top_agents=top_agents,
            total=total,
        )

        anomaly_stats.additional_properties = d
        return anomaly_stats

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

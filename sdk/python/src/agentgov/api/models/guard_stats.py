from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.guard_stats_by_verdict import GuardStatsByVerdict
    from ..models.guard_stats_hour import GuardStatsHour


T = TypeVar("T", bound="GuardStats")


@_attrs_define
class GuardStats:
    """`GET /guard/stats`.

    Attributes:
        block_rate (float): `blocked / total` (0 when there were none).
        blocked (int):
        by_verdict (GuardStatsByVerdict): Screenings per verdict.
        series (list[GuardStatsHour]): Every hour of the window, oldest first, empty ones included.
        total (int):
        window_hours (int): The window counted: the last `window_hours` hours, this one included.
        latency_ms_p50 (float | None | Unset): Latency percentiles in milliseconds, as the upper bound of their bucket
            (`null`
            when there were no screenings).
        latency_ms_p99 (float | None | Unset):
    """

    block_rate: float
    blocked: int
    by_verdict: GuardStatsByVerdict
    series: list[GuardStatsHour]
    total: int
    window_hours: int
    latency_ms_p50: float | None | Unset = UNSET
    latency_ms_p99: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        block_rate = self.block_rate

        blocked = self.blocked

        by_verdict = self.by_verdict.to_dict()

        series = []
        for series_item_data in self.series:
            series_item = series_item_data.to_dict()
            series.append(series_item)

        total = self.total

        window_hours = self.window_hours

        latency_ms_p50: float | None | Unset
        if isinstance(self.latency_ms_p50, Unset):
            latency_ms_p50 = UNSET
        else:
            latency_ms_p50 = self.latency_ms_p50

        latency_ms_p99: float | None | Unset
        if isinstance(self.latency_ms_p99, Unset):
            latency_ms_p99 = UNSET
        else:
            latency_ms_p99 = self.latency_ms_p99

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "block_rate": block_rate,
                "blocked": blocked,
                "by_verdict": by_verdict,
                "series": series,
                "total": total,
                "window_hours": window_hours,
            }
        )
        if latency_ms_p50 is not UNSET:
            field_dict["latency_ms_p50"] = latency_ms_p50
        if latency_ms_p99 is not UNSET:
            field_dict["latency_ms_p99"] = latency_ms_p99

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_stats_by_verdict import GuardStatsByVerdict
        from ..models.guard_stats_hour import GuardStatsHour

        d = dict(src_dict)
        block_rate = d.pop("block_rate")

        blocked = d.pop("blocked")

        by_verdict = GuardStatsByVerdict.from_dict(d.pop("by_verdict"))

        series = []
        _series = d.pop("series")
        for series_item_data in _series:
            series_item = GuardStatsHour.from_dict(series_item_data)

            series.append(series_item)

        total = d.pop("total")

        window_hours = d.pop("window_hours")

        def _parse_latency_ms_p50(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        latency_ms_p50 = _parse_latency_ms_p50(d.pop("latency_ms_p50", UNSET))

        def _parse_latency_ms_p99(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        latency_ms_p99 = _parse_latency_ms_p99(d.pop("latency_ms_p99", UNSET))

        guard_stats = cls(
            block_rate=block_rate,
            blocked=blocked,
            by_verdict=by_verdict,
            series=series,
            total=total,
            window_hours=window_hours,
            latency_ms_p50=latency_ms_p50,
            latency_ms_p99=latency_ms_p99,
        )

        guard_stats.additional_properties = d
        return guard_stats

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

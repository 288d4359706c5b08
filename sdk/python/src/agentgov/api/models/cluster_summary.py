from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ClusterSummary")


@_attrs_define
class ClusterSummary:
    """Counts of a finished clustering job.

    Attributes:
        candidates_created (int):
        candidates_removed (int):
        candidates_updated (int):
        duration_ms (int): Time spent clustering (reading the events and grouping them), in milliseconds.
        events (int): Shadow events read.
        matched_decided (int): Shadow events left out because they match a decided candidate.
        noise_events (int): Of those, events in no candidate (too sparse to be an agent).
    """

    candidates_created: int
    candidates_removed: int
    candidates_updated: int
    duration_ms: int
    events: int
    matched_decided: int
    noise_events: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidates_created = self.candidates_created

        candidates_removed = self.candidates_removed

        candidates_updated = self.candidates_updated

        duration_ms = self.duration_ms

        events = self.events

        matched_decided = self.matched_decided

        noise_events = self.noise_events

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidates_created": candidates_created,
                "candidates_removed": candidates_removed,
                "candidates_updated": candidates_updated,
                "duration_ms": duration_ms,
                "events": events,
                "matched_decided": matched_decided,
                "noise_events": noise_events,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        candidates_created = d.pop("candidates_created")

        candidates_removed = d.pop("candidates_removed")

        candidates_updated = d.pop("candidates_updated")

        duration_ms = d.pop("duration_ms")

        events = d.pop("events")

        matched_decided = d.pop("matched_decided")

        noise_events = d.pop("noise_events")

        cluster_summary = cls(
            candidates_created=candidates_created,
            candidates_removed=candidates_removed,
            candidates_updated=candidates_updated,
            duration_ms=duration_ms,
            events=events,
            matched_decided=matched_decided,
            noise_events=noise_events,
        )

        cluster_summary.additional_properties = d
        return cluster_summary

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

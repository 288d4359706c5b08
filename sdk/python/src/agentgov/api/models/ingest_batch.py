from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="IngestBatch")


@_attrs_define
class IngestBatch:
    """`POST /discovery/ingest/batch`.

    Attributes:
        events (list[Any]): 1 to 10,000 events, each as for `/discovery/ingest` (an `IngestEvent`); invalid ones
            (of any JSON value) are reported and the rest kept, so the list takes any value.
    """

    events: list[Any]

    def to_dict(self) -> dict[str, Any]:
        events = self.events

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        events = cast(list[Any], d.pop("events"))

        ingest_batch = cls(
            events=events,
        )

        return ingest_batch

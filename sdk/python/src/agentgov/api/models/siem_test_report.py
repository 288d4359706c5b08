from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.sink_test_result import SinkTestResult


T = TypeVar("T", bound="SiemTestReport")


@_attrs_define
class SiemTestReport:
    """`POST /siem/test`.

    Attributes:
        event_id (UUID): The id of the test event (`siem.test`), to find it in the SIEM. It is not part of
            any tenant's audit log.
        results (list[SinkTestResult]):
    """

    event_id: UUID
    results: list[SinkTestResult]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_id = str(self.event_id)

        results = []
        for results_item_data in self.results:
            results_item = results_item_data.to_dict()
            results.append(results_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_id": event_id,
                "results": results,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sink_test_result import SinkTestResult

        d = dict(src_dict)
        event_id = UUID(d.pop("event_id"))

        results = []
        _results = d.pop("results")
        for results_item_data in _results:
            results_item = SinkTestResult.from_dict(results_item_data)

            results.append(results_item)

        siem_test_report = cls(
            event_id=event_id,
            results=results,
        )

        siem_test_report.additional_properties = d
        return siem_test_report

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

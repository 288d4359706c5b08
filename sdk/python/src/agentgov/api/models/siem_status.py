from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.sink_status import SinkStatus


T = TypeVar("T", bound="SiemStatus")


@_attrs_define
class SiemStatus:
    """`GET /siem/status`.

    Attributes:
        enabled (bool): Whether any sink is configured.
        scope (str): `platform` for the operator, `tenant` for a tenant's Super Admin.
        sinks (list[SinkStatus]):
    """

    enabled: bool
    scope: str
    sinks: list[SinkStatus]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        scope = self.scope

        sinks = []
        for sinks_item_data in self.sinks:
            sinks_item = sinks_item_data.to_dict()
            sinks.append(sinks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "enabled": enabled,
                "scope": scope,
                "sinks": sinks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sink_status import SinkStatus

        d = dict(src_dict)
        enabled = d.pop("enabled")

        scope = d.pop("scope")

        sinks = []
        _sinks = d.pop("sinks")
        for sinks_item_data in _sinks:
            sinks_item = SinkStatus.from_dict(sinks_item_data)

            sinks.append(sinks_item)

        siem_status = cls(
            enabled=enabled,
            scope=scope,
            sinks=sinks,
        )

        siem_status.additional_properties = d
        return siem_status

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.component_health import ComponentHealth
    from ..models.tenant import Tenant


T = TypeVar("T", bound="PlatformStatus")


@_attrs_define
class PlatformStatus:
    """`GET /status`.

    Attributes:
        components (list[ComponentHealth]):
        mode (str): `embedded` or `distributed`.
        status (str): `ok`, or `degraded` when a component is down.
        tenant (Tenant): A customer organisation; every other record belongs to exactly one tenant.
        uptime_seconds (int):
        version (str):
    """

    components: list[ComponentHealth]
    mode: str
    status: str
    tenant: Tenant
    uptime_seconds: int
    version: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        components = []
        for components_item_data in self.components:
            components_item = components_item_data.to_dict()
            components.append(components_item)

        mode = self.mode

        status = self.status

        tenant = self.tenant.to_dict()

        uptime_seconds = self.uptime_seconds

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "components": components,
                "mode": mode,
                "status": status,
                "tenant": tenant,
                "uptime_seconds": uptime_seconds,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.component_health import ComponentHealth
        from ..models.tenant import Tenant

        d = dict(src_dict)
        components = []
        _components = d.pop("components")
        for components_item_data in _components:
            components_item = ComponentHealth.from_dict(components_item_data)

            components.append(components_item)

        mode = d.pop("mode")

        status = d.pop("status")

        tenant = Tenant.from_dict(d.pop("tenant"))

        uptime_seconds = d.pop("uptime_seconds")

        version = d.pop("version")

        platform_status = cls(
            components=components,
            mode=mode,
            status=status,
            tenant=tenant,
            uptime_seconds=uptime_seconds,
            version=version,
        )

        platform_status.additional_properties = d
        return platform_status

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

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.effective_settings import EffectiveSettings
    from ..models.tenant_settings import TenantSettings


T = TypeVar("T", bound="TenantView")


@_attrs_define
class TenantView:
    """A tenant as the API shows it: its record and the settings in force.

    Attributes:
        created_at (datetime.datetime):
        id (UUID): A tenant: the unit of isolation.
        name (str): Unique across the server.
        settings (TenantSettings): What a tenant chose for itself (stored as JSON; a field left out follows the server).
        updated_at (datetime.datetime):
        effective_settings (EffectiveSettings): The settings a tenant's policy checks and agents use.
    """

    created_at: datetime.datetime
    id: UUID
    name: str
    settings: TenantSettings
    updated_at: datetime.datetime
    effective_settings: EffectiveSettings
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = str(self.id)

        name = self.name

        settings = self.settings.to_dict()

        updated_at = self.updated_at.isoformat()

        effective_settings = self.effective_settings.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "name": name,
                "settings": settings,
                "updated_at": updated_at,
                "effective_settings": effective_settings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.effective_settings import EffectiveSettings
        from ..models.tenant_settings import TenantSettings

        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        id = UUID(d.pop("id"))

        name = d.pop("name")

        settings = TenantSettings.from_dict(d.pop("settings"))

        updated_at = isoparse(d.pop("updated_at"))

        effective_settings = EffectiveSettings.from_dict(d.pop("effective_settings"))

        tenant_view = cls(
            created_at=created_at,
            id=id,
            name=name,
            settings=settings,
            updated_at=updated_at,
            effective_settings=effective_settings,
        )

        tenant_view.additional_properties = d
        return tenant_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.settings_change import SettingsChange


T = TypeVar("T", bound="UpdateTenant")


@_attrs_define
class UpdateTenant:
    """`PATCH /tenant` and `PATCH /tenants/{id}`: what is left out stays as it is.

    Attributes:
        name (None | str | Unset): Unique across the server; 1 to 200 characters.
        settings (None | SettingsChange | Unset):
    """

    name: None | str | Unset = UNSET
    settings: None | SettingsChange | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.settings_change import SettingsChange

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        settings: dict[str, Any] | None | Unset
        if isinstance(self.settings, Unset):
            settings = UNSET
        elif isinstance(self.settings, SettingsChange):
            settings = self.settings.to_dict()
        else:
            settings = self.settings

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if settings is not UNSET:
            field_dict["settings"] = settings

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.settings_change import SettingsChange

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_settings(data: object) -> None | SettingsChange | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                settings_type_0 = SettingsChange.from_dict(data)

                return settings_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SettingsChange | Unset, data)

        settings = _parse_settings(d.pop("settings", UNSET))

        update_tenant = cls(
            name=name,
            settings=settings,
        )

        return update_tenant

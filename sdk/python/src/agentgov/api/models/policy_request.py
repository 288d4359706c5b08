from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.policy_mode import PolicyMode
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.template_use import TemplateUse


T = TypeVar("T", bound="PolicyRequest")


@_attrs_define
class PolicyRequest:
    """
    Attributes:
        name (str): Unique within the tenant; 1 to 200 characters.
        description (None | str | Unset): At most 2,000 characters.
        enabled (bool | None | Unset): Default `true`; `false` is `mode: "off"`.
        mode (None | PolicyMode | Unset):
        rego (None | str | Unset): A Rego module (see docs/policies.md); at most 64 KiB.
        template (None | TemplateUse | Unset):
        version (int | None | Unset): On update: the version the change was made from; 409 if the policy has moved on.
    """

    name: str
    description: None | str | Unset = UNSET
    enabled: bool | None | Unset = UNSET
    mode: None | PolicyMode | Unset = UNSET
    rego: None | str | Unset = UNSET
    template: None | TemplateUse | Unset = UNSET
    version: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.template_use import TemplateUse

        name = self.name

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        enabled: bool | None | Unset
        if isinstance(self.enabled, Unset):
            enabled = UNSET
        else:
            enabled = self.enabled

        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        elif isinstance(self.mode, PolicyMode):
            mode = self.mode.value
        else:
            mode = self.mode

        rego: None | str | Unset
        if isinstance(self.rego, Unset):
            rego = UNSET
        else:
            rego = self.rego

        template: dict[str, Any] | None | Unset
        if isinstance(self.template, Unset):
            template = UNSET
        elif isinstance(self.template, TemplateUse):
            template = self.template.to_dict()
        else:
            template = self.template

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if enabled is not UNSET:
            field_dict["enabled"] = enabled
        if mode is not UNSET:
            field_dict["mode"] = mode
        if rego is not UNSET:
            field_dict["rego"] = rego
        if template is not UNSET:
            field_dict["template"] = template
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.template_use import TemplateUse

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_enabled(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        enabled = _parse_enabled(d.pop("enabled", UNSET))

        def _parse_mode(data: object) -> None | PolicyMode | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_type_0 = PolicyMode(data)

                return mode_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PolicyMode | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))

        def _parse_rego(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        rego = _parse_rego(d.pop("rego", UNSET))

        def _parse_template(data: object) -> None | TemplateUse | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                template_type_0 = TemplateUse.from_dict(data)

                return template_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TemplateUse | Unset, data)

        template = _parse_template(d.pop("template", UNSET))

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        policy_request = cls(
            name=name,
            description=description,
            enabled=enabled,
            mode=mode,
            rego=rego,
            template=template,
            version=version,
        )

        policy_request.additional_properties = d
        return policy_request

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

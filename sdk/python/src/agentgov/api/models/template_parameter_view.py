from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.parameter_kind import ParameterKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="TemplateParameterView")


@_attrs_define
class TemplateParameterView:
    """
    Attributes:
        default (Any): Of the parameter's `type`: a string, number, boolean or list.
        description (str):
        name (str):
        type_ (ParameterKind): The JSON type a parameter takes.
        one_of (list[str] | Unset): The values allowed, when only some are.
    """

    default: Any
    description: str
    name: str
    type_: ParameterKind
    one_of: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        default = self.default

        description = self.description

        name = self.name

        type_ = self.type_.value

        one_of: list[str] | Unset = UNSET
        if not isinstance(self.one_of, Unset):
            one_of = self.one_of

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "default": default,
                "description": description,
                "name": name,
                "type": type_,
            }
        )
        if one_of is not UNSET:
            field_dict["one_of"] = one_of

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        default = d.pop("default")

        description = d.pop("description")

        name = d.pop("name")

        type_ = ParameterKind(d.pop("type"))

        one_of = cast(list[str], d.pop("one_of", UNSET))

        template_parameter_view = cls(
            default=default,
            description=description,
            name=name,
            type_=type_,
            one_of=one_of,
        )

        template_parameter_view.additional_properties = d
        return template_parameter_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.template_parameter_view import TemplateParameterView


T = TypeVar("T", bound="TemplateView")


@_attrs_define
class TemplateView:
    """A template as `GET /policies/templates` lists it.

    Attributes:
        description (str):
        id (str):
        name (str):
        parameters (list[TemplateParameterView]):
        rego (str): The module with every parameter at its default: a valid policy as it stands.
    """

    description: str
    id: str
    name: str
    parameters: list[TemplateParameterView]
    rego: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        id = self.id

        name = self.name

        parameters = []
        for parameters_item_data in self.parameters:
            parameters_item = parameters_item_data.to_dict()
            parameters.append(parameters_item)

        rego = self.rego

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "description": description,
                "id": id,
                "name": name,
                "parameters": parameters,
                "rego": rego,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.template_parameter_view import TemplateParameterView

        d = dict(src_dict)
        description = d.pop("description")

        id = d.pop("id")

        name = d.pop("name")

        parameters = []
        _parameters = d.pop("parameters")
        for parameters_item_data in _parameters:
            parameters_item = TemplateParameterView.from_dict(parameters_item_data)

            parameters.append(parameters_item)

        rego = d.pop("rego")

        template_view = cls(
            description=description,
            id=id,
            name=name,
            parameters=parameters,
            rego=rego,
        )

        template_view.additional_properties = d
        return template_view

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.template_use_parameters import TemplateUseParameters


T = TypeVar("T", bound="TemplateUse")


@_attrs_define
class TemplateUse:
    """A template and the values of its parameters, in place of `rego`.

    Attributes:
        id (str): A template id from `GET /policies/templates`.
        parameters (TemplateUseParameters | Unset): Values for some or all of its parameters; the rest take their
            defaults.
    """

    id: str
    parameters: TemplateUseParameters | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
            }
        )
        if parameters is not UNSET:
            field_dict["parameters"] = parameters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.template_use_parameters import TemplateUseParameters

        d = dict(src_dict)
        id = d.pop("id")

        _parameters = d.pop("parameters", UNSET)
        parameters: TemplateUseParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = TemplateUseParameters.from_dict(_parameters)

        template_use = cls(
            id=id,
            parameters=parameters,
        )

        return template_use

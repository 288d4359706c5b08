from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_error import FieldError
    from ..models.problem_components_type_0 import ProblemComponentsType0


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """The body of every error response.

    Attributes:
        detail (str): What went wrong, for a person.
        status (int):
        title (str): The HTTP status phrase.
        type_ (str): A URN naming the kind of problem, e.g. `urn:agentgov:problem:not-found`.
        components (None | ProblemComponentsType0 | Unset): Extra facts some problems carry (e.g. the readiness
            components of a 503).
        errors (list[FieldError] | None | Unset): The invalid fields (422 only).
    """

    detail: str
    status: int
    title: str
    type_: str
    components: None | ProblemComponentsType0 | Unset = UNSET
    errors: list[FieldError] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.problem_components_type_0 import ProblemComponentsType0

        detail = self.detail

        status = self.status

        title = self.title

        type_ = self.type_

        components: dict[str, Any] | None | Unset
        if isinstance(self.components, Unset):
            components = UNSET
        elif isinstance(self.components, ProblemComponentsType0):
            components = self.components.to_dict()
        else:
            components = self.components

        errors: list[dict[str, Any]] | None | Unset
        if isinstance(self.errors, Unset):
            errors = UNSET
        elif isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)

        else:
            errors = self.errors

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "detail": detail,
                "status": status,
                "title": title,
                "type": type_,
            }
        )
        if components is not UNSET:
            field_dict["components"] = components
        if errors is not UNSET:
            field_dict["errors"] = errors

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError
        from ..models.problem_components_type_0 import ProblemComponentsType0

        d = dict(src_dict)
        detail = d.pop("detail")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        def _parse_components(data: object) -> None | ProblemComponentsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                components_type_0 = ProblemComponentsType0.from_dict(data)

                return components_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ProblemComponentsType0 | Unset, data)

        components = _parse_components(d.pop("components", UNSET))

        def _parse_errors(data: object) -> list[FieldError] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in _errors_type_0:
                    errors_type_0_item = FieldError.from_dict(errors_type_0_item_data)

                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FieldError] | None | Unset, data)

        errors = _parse_errors(d.pop("errors", UNSET))

        problem = cls(
            detail=detail,
            status=status,
            title=title,
            type_=type_,
            components=components,
            errors=errors,
        )

        problem.additional_properties = d
        return problem

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

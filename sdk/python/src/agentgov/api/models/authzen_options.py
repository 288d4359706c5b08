from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AuthzenOptions")


@_attrs_define
class AuthzenOptions:
    """How a batch is evaluated.

    Attributes:
        evaluations_semantic (None | str | Unset): `execute_all` (default), `deny_on_first_deny` or
            `permit_on_first_permit`.
    """

    evaluations_semantic: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        evaluations_semantic: None | str | Unset
        if isinstance(self.evaluations_semantic, Unset):
            evaluations_semantic = UNSET
        else:
            evaluations_semantic = self.evaluations_semantic

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if evaluations_semantic is not UNSET:
            field_dict["evaluations_semantic"] = evaluations_semantic

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_evaluations_semantic(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        evaluations_semantic = _parse_evaluations_semantic(d.pop("evaluations_semantic", UNSET))

        authzen_options = cls(
            evaluations_semantic=evaluations_semantic,
        )

        authzen_options.additional_properties = d
        return authzen_options

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

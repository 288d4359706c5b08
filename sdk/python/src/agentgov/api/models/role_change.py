from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.role import Role

T = TypeVar("T", bound="RoleChange")


@_attrs_define
class RoleChange:
    """`PUT /users/{id}/role`.

    Attributes:
        role (Role): A user's role, ordered lowest to highest: `viewer < analyst < admin < super_admin`.
    """

    role: Role

    def to_dict(self) -> dict[str, Any]:
        role = self.role.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "role": role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        role = Role(d.pop("role"))

        role_change = cls(
            role=role,
        )

        return role_change

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="NewTenant")


@_attrs_define
class NewTenant:
    """`POST /tenants`.

    Attributes:
        admin_email (str):
        admin_password (str): At least 12 characters.
        name (str):
    """

    admin_email: str
    admin_password: str
    name: str

    def to_dict(self) -> dict[str, Any]:
        admin_email = self.admin_email

        admin_password = self.admin_password

        name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "admin_email": admin_email,
                "admin_password": admin_password,
                "name": name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        admin_email = d.pop("admin_email")

        admin_password = d.pop("admin_password")

        name = d.pop("name")

        new_tenant = cls(
            admin_email=admin_email,
            admin_password=admin_password,
            name=name,
        )

        return new_tenant

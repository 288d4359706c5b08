from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.role import Role
from ..models.user_status import UserStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="User")


@_attrs_define
class User:
    """A person who signs in to one tenant.

    Attributes:
        created_at (datetime.datetime):
        email (str): Lower-cased; unique across the platform (login takes no tenant).
        id (UUID): A user of one tenant.
        role (Role): A user's role, ordered lowest to highest: `viewer < analyst < admin < super_admin`.
        status (UserStatus):
        tenant_id (UUID): A tenant: the unit of isolation.
        updated_at (datetime.datetime):
        last_login_at (datetime.datetime | None | Unset):
        name (None | str | Unset):
    """

    created_at: datetime.datetime
    email: str
    id: UUID
    role: Role
    status: UserStatus
    tenant_id: UUID
    updated_at: datetime.datetime
    last_login_at: datetime.datetime | None | Unset = UNSET
    name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        email = self.email

        id = str(self.id)

        role = self.role.value

        status = self.status.value

        tenant_id = str(self.tenant_id)

        updated_at = self.updated_at.isoformat()

        last_login_at: None | str | Unset
        if isinstance(self.last_login_at, Unset):
            last_login_at = UNSET
        elif isinstance(self.last_login_at, datetime.datetime):
            last_login_at = self.last_login_at.isoformat()
        else:
            last_login_at = self.last_login_at

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "email": email,
                "id": id,
                "role": role,
                "status": status,
                "tenant_id": tenant_id,
                "updated_at": updated_at,
            }
        )
        if last_login_at is not UNSET:
            field_dict["last_login_at"] = last_login_at
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        email = d.pop("email")

        id = UUID(d.pop("id"))

        role = Role(d.pop("role"))

        status = UserStatus(d.pop("status"))

        tenant_id = UUID(d.pop("tenant_id"))

        updated_at = isoparse(d.pop("updated_at"))

        def _parse_last_login_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_login_at_type_0 = isoparse(data)

                return last_login_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_login_at = _parse_last_login_at(d.pop("last_login_at", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        user = cls(
            created_at=created_at,
            email=email,
            id=id,
            role=role,
            status=status,
            tenant_id=tenant_id,
            updated_at=updated_at,
            last_login_at=last_login_at,
            name=name,
        )

        user.additional_properties = d
        return user

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ResourceCounts")


@_attrs_define
class ResourceCounts:
    """Counts of a tenant's resources, for `/stats`.

    Attributes:
        active_users (int):
        api_keys (int): API keys not revoked (standard and session keys).
        blocked_users (int):
        users (int):
    """

    active_users: int
    api_keys: int
    blocked_users: int
    users: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active_users = self.active_users

        api_keys = self.api_keys

        blocked_users = self.blocked_users

        users = self.users

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active_users": active_users,
                "api_keys": api_keys,
                "blocked_users": blocked_users,
                "users": users,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active_users = d.pop("active_users")

        api_keys = d.pop("api_keys")

        blocked_users = d.pop("blocked_users")

        users = d.pop("users")

        resource_counts = cls(
            active_users=active_users,
            api_keys=api_keys,
            blocked_users=blocked_users,
            users=users,
        )

        resource_counts.additional_properties = d
        return resource_counts

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

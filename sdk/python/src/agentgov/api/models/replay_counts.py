from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReplayCounts")


@_attrs_define
class ReplayCounts:
    """How often each outcome came out: a policy's own outcome on an input (`allow` when none
    of its rules applied).

        Attributes:
            allow (int):
            deny (int):
            error (int):
            require_approval (int):
    """

    allow: int
    deny: int
    error: int
    require_approval: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allow = self.allow

        deny = self.deny

        error = self.error

        require_approval = self.require_approval

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allow": allow,
                "deny": deny,
                "error": error,
                "require_approval": require_approval,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow = d.pop("allow")

        deny = d.pop("deny")

        error = d.pop("error")

        require_approval = d.pop("require_approval")

        replay_counts = cls(
            allow=allow,
            deny=deny,
            error=error,
            require_approval=require_approval,
        )

        replay_counts.additional_properties = d
        return replay_counts

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

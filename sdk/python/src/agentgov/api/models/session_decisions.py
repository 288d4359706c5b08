from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SessionDecisions")


@_attrs_define
class SessionDecisions:
    """Decisions of a session, by outcome.

    Attributes:
        allow (int):
        deny (int):
        require_approval (int):
    """

    allow: int
    deny: int
    require_approval: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allow = self.allow

        deny = self.deny

        require_approval = self.require_approval

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allow": allow,
                "deny": deny,
                "require_approval": require_approval,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow = d.pop("allow")

        deny = d.pop("deny")

        require_approval = d.pop("require_approval")

        session_decisions = cls(
            allow=allow,
            deny=deny,
            require_approval=require_approval,
        )

        session_decisions.additional_properties = d
        return session_decisions

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.role import Role

T = TypeVar("T", bound="EscalationStep")


@_attrs_define
class EscalationStep:
    """One step of a tenant's escalation chain: once a request has waited `after_secs` without
    a decision, the `role` is notified (the `hitl.escalated` audit record and feed event
    name it).

        Attributes:
            after_secs (int): Seconds after the request was made, 1 to 604,800, rising along the chain.
            role (Role): A user's role, ordered lowest to highest: `viewer < analyst < admin < super_admin`.
    """

    after_secs: int
    role: Role

    def to_dict(self) -> dict[str, Any]:
        after_secs = self.after_secs

        role = self.role.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "after_secs": after_secs,
                "role": role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        after_secs = d.pop("after_secs")

        role = Role(d.pop("role"))

        escalation_step = cls(
            after_secs=after_secs,
            role=role,
        )

        return escalation_step

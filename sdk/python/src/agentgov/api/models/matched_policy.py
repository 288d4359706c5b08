from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MatchedPolicy")


@_attrs_define
class MatchedPolicy:
    """A policy that took part in a decision.

    Attributes:
        effect (str): `deny`, `require_approval`, `risk_adjustment` or `error`; for a policy in `shadow`
            mode, what it would have done and was not acted on: `would_deny`,
            `would_require_approval` or `would_error`.
        id (UUID): A Rego policy of one tenant.
        messages (list[str]): The messages of its rule (or the error).
        name (str):
        version (int):
        risk_adjustment (float | None | Unset): Its risk adjustment, when that is the effect.
    """

    effect: str
    id: UUID
    messages: list[str]
    name: str
    version: int
    risk_adjustment: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        effect = self.effect

        id = str(self.id)

        messages = self.messages

        name = self.name

        version = self.version

        risk_adjustment: float | None | Unset
        if isinstance(self.risk_adjustment, Unset):
            risk_adjustment = UNSET
        else:
            risk_adjustment = self.risk_adjustment

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "effect": effect,
                "id": id,
                "messages": messages,
                "name": name,
                "version": version,
            }
        )
        if risk_adjustment is not UNSET:
            field_dict["risk_adjustment"] = risk_adjustment

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        effect = d.pop("effect")

        id = UUID(d.pop("id"))

        messages = cast(list[str], d.pop("messages"))

        name = d.pop("name")

        version = d.pop("version")

        def _parse_risk_adjustment(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        risk_adjustment = _parse_risk_adjustment(d.pop("risk_adjustment", UNSET))

        matched_policy = cls(
            effect=effect,
            id=id,
            messages=messages,
            name=name,
            version=version,
            risk_adjustment=risk_adjustment,
        )

        matched_policy.additional_properties = d
        return matched_policy

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

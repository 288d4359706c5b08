from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RiskFactor")


@_attrs_define
class RiskFactor:
    """One reason an agent's risk is what it is.

    Attributes:
        code (str): The category, e.g. `payments`, `deletion`, `shell`, `credentials`, `pii`.
        evidence (str): The capability or permission that raised it, verbatim.
        reason (str):
        weight (float): Its contribution, 0 to 1 (combined as 1 - Π(1 - weight)).
    """

    code: str
    evidence: str
    reason: str
    weight: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        evidence = self.evidence

        reason = self.reason

        weight = self.weight

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "evidence": evidence,
                "reason": reason,
                "weight": weight,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        evidence = d.pop("evidence")

        reason = d.pop("reason")

        weight = d.pop("weight")

        risk_factor = cls(
            code=code,
            evidence=evidence,
            reason=reason,
            weight=weight,
        )

        risk_factor.additional_properties = d
        return risk_factor

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

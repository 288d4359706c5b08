from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="CheckRiskFactor")


@_attrs_define
class CheckRiskFactor:
    """One reason for the check's risk score.

    Attributes:
        code (str): `payments`, `deletion`, `production`, `agent_risk`, `no_consent`, `bulk`,
            `anomaly`, `policy`, … (see docs/policies.md).
        evidence (str):
        reason (str):
        weight (float):
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

        check_risk_factor = cls(
            code=code,
            evidence=evidence,
            reason=reason,
            weight=weight,
        )

        check_risk_factor.additional_properties = d
        return check_risk_factor

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

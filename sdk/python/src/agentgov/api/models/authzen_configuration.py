from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AuthzenConfiguration")


@_attrs_define
class AuthzenConfiguration:
    """The PDP's metadata (AuthZEN 1.0 § 9).

    Attributes:
        access_evaluation_endpoint (str):
        access_evaluations_endpoint (str):
        policy_decision_point (str):
    """

    access_evaluation_endpoint: str
    access_evaluations_endpoint: str
    policy_decision_point: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_evaluation_endpoint = self.access_evaluation_endpoint

        access_evaluations_endpoint = self.access_evaluations_endpoint

        policy_decision_point = self.policy_decision_point

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_evaluation_endpoint": access_evaluation_endpoint,
                "access_evaluations_endpoint": access_evaluations_endpoint,
                "policy_decision_point": policy_decision_point,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access_evaluation_endpoint = d.pop("access_evaluation_endpoint")

        access_evaluations_endpoint = d.pop("access_evaluations_endpoint")

        policy_decision_point = d.pop("policy_decision_point")

        authzen_configuration = cls(
            access_evaluation_endpoint=access_evaluation_endpoint,
            access_evaluations_endpoint=access_evaluations_endpoint,
            policy_decision_point=policy_decision_point,
        )

        authzen_configuration.additional_properties = d
        return authzen_configuration

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.risk_levels import RiskLevels


T = TypeVar("T", bound="EffectiveSettings")


@_attrs_define
class EffectiveSettings:
    """The settings a tenant's policy checks and agents use.

    Attributes:
        approval_threshold (float):
        hitl_timeout_secs (int): The approval window of a request that names none, in seconds.
        risk_levels (RiskLevels): Where the levels above `low` begin: a score below `medium` is low, below `high`
            medium,
            below `critical` high, and the rest critical. Each is above the one before, within (0, 1].
    """

    approval_threshold: float
    hitl_timeout_secs: int
    risk_levels: RiskLevels
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        approval_threshold = self.approval_threshold

        hitl_timeout_secs = self.hitl_timeout_secs

        risk_levels = self.risk_levels.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "approval_threshold": approval_threshold,
                "hitl_timeout_secs": hitl_timeout_secs,
                "risk_levels": risk_levels,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.risk_levels import RiskLevels

        d = dict(src_dict)
        approval_threshold = d.pop("approval_threshold")

        hitl_timeout_secs = d.pop("hitl_timeout_secs")

        risk_levels = RiskLevels.from_dict(d.pop("risk_levels"))

        effective_settings = cls(
            approval_threshold=approval_threshold,
            hitl_timeout_secs=hitl_timeout_secs,
            risk_levels=risk_levels,
        )

        effective_settings.additional_properties = d
        return effective_settings

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

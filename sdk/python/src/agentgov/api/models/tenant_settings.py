from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.escalation_step import EscalationStep
    from ..models.risk_levels import RiskLevels


T = TypeVar("T", bound="TenantSettings")


@_attrs_define
class TenantSettings:
    """What a tenant chose for itself (stored as JSON; a field left out follows the server).

    Attributes:
        approval_threshold (float | None | Unset): A policy check whose risk score is at or above this needs approval (0
            < t ≤ 1).
        guard_threshold (float | None | Unset): The Prompt Guard blocks a text scoring at or above this (0 < t < 1),
            over the
            threshold its model was calibrated with.
        hitl_escalation (list[EscalationStep] | None | Unset): Who is notified as an approval request keeps waiting: up
            to five steps, each a role
            and the seconds after the request was made (rising). Requests keep the chain they
            were made under.
        hitl_timeout_secs (int | None | Unset): How long an approval request waits for a decision before it expires, in
            seconds,
            when the request names no `timeout_seconds` (1 to 604,800).
        risk_levels (None | RiskLevels | Unset):
    """

    approval_threshold: float | None | Unset = UNSET
    guard_threshold: float | None | Unset = UNSET
    hitl_escalation: list[EscalationStep] | None | Unset = UNSET
    hitl_timeout_secs: int | None | Unset = UNSET
    risk_levels: None | RiskLevels | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.risk_levels import RiskLevels

        approval_threshold: float | None | Unset
        if isinstance(self.approval_threshold, Unset):
            approval_threshold = UNSET
        else:
            approval_threshold = self.approval_threshold

        guard_threshold: float | None | Unset
        if isinstance(self.guard_threshold, Unset):
            guard_threshold = UNSET
        else:
            guard_threshold = self.guard_threshold

        hitl_escalation: list[dict[str, Any]] | None | Unset
        if isinstance(self.hitl_escalation, Unset):
            hitl_escalation = UNSET
        elif isinstance(self.hitl_escalation, list):
            hitl_escalation = []
            for hitl_escalation_type_0_item_data in self.hitl_escalation:
                hitl_escalation_type_0_item = hitl_escalation_type_0_item_data.to_dict()
                hitl_escalation.append(hitl_escalation_type_0_item)

        else:
            hitl_escalation = self.hitl_escalation

        hitl_timeout_secs: int | None | Unset
        if isinstance(self.hitl_timeout_secs, Unset):
            hitl_timeout_secs = UNSET
        else:
            hitl_timeout_secs = self.hitl_timeout_secs

        risk_levels: dict[str, Any] | None | Unset
        if isinstance(self.risk_levels, Unset):
            risk_levels = UNSET
        elif isinstance(self.risk_levels, RiskLevels):
            risk_levels = self.risk_levels.to_dict()
        else:
            risk_levels = self.risk_levels

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if approval_threshold is not UNSET:
            field_dict["approval_threshold"] = approval_threshold
        if guard_threshold is not UNSET:
            field_dict["guard_threshold"] = guard_threshold
        if hitl_escalation is not UNSET:
            field_dict["hitl_escalation"] = hitl_escalation
        if hitl_timeout_secs is not UNSET:
            field_dict["hitl_timeout_secs"] = hitl_timeout_secs
        if risk_levels is not UNSET:
            field_dict["risk_levels"] = risk_levels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.escalation_step import EscalationStep
        from ..models.risk_levels import RiskLevels

        d = dict(src_dict)

        def _parse_approval_threshold(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        approval_threshold = _parse_approval_threshold(d.pop("approval_threshold", UNSET))

        def _parse_guard_threshold(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        guard_threshold = _parse_guard_threshold(d.pop("guard_threshold", UNSET))

        def _parse_hitl_escalation(data: object) -> list[EscalationStep] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                hitl_escalation_type_0 = []
                _hitl_escalation_type_0 = data
                for hitl_escalation_type_0_item_data in _hitl_escalation_type_0:
                    hitl_escalation_type_0_item = EscalationStep.from_dict(hitl_escalation_type_0_item_data)

                    hitl_escalation_type_0.append(hitl_escalation_type_0_item)

                return hitl_escalation_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[EscalationStep] | None | Unset, data)

        hitl_escalation = _parse_hitl_escalation(d.pop("hitl_escalation", UNSET))

        def _parse_hitl_timeout_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        hitl_timeout_secs = _parse_hitl_timeout_secs(d.pop("hitl_timeout_secs", UNSET))

        def _parse_risk_levels(data: object) -> None | RiskLevels | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                risk_levels_type_0 = RiskLevels.from_dict(data)

                return risk_levels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RiskLevels | Unset, data)

        risk_levels = _parse_risk_levels(d.pop("risk_levels", UNSET))

        tenant_settings = cls(
            approval_threshold=approval_threshold,
            guard_threshold=guard_threshold,
            hitl_escalation=hitl_escalation,
            hitl_timeout_secs=hitl_timeout_secs,
            risk_levels=risk_levels,
        )

        tenant_settings.additional_properties = d
        return tenant_settings

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

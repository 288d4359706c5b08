from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.guard_calibration import GuardCalibration
    from ..models.guard_stage import GuardStage


T = TypeVar("T", bound="GuardHealth")


@_attrs_define
class GuardHealth:
    """`GET /guard/health`.

    Attributes:
        builtin_model (str):
        calibration (GuardCalibration): The benign texts a model's thresholds were calibrated on.
        default_threshold (float): The built-in model's calibrated threshold (a tenant's model has its own).
        detectors (list[str]):
        max_prompt_bytes (int):
        rules (int):
        stages (list[GuardStage]): The stages this process runs with the built-in model.
        status (str):
    """

    builtin_model: str
    calibration: GuardCalibration
    default_threshold: float
    detectors: list[str]
    max_prompt_bytes: int
    rules: int
    stages: list[GuardStage]
    status: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        builtin_model = self.builtin_model

        calibration = self.calibration.to_dict()

        default_threshold = self.default_threshold

        detectors = self.detectors

        max_prompt_bytes = self.max_prompt_bytes

        rules = self.rules

        stages = []
        for stages_item_data in self.stages:
            stages_item = stages_item_data.to_dict()
            stages.append(stages_item)

        status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "builtin_model": builtin_model,
                "calibration": calibration,
                "default_threshold": default_threshold,
                "detectors": detectors,
                "max_prompt_bytes": max_prompt_bytes,
                "rules": rules,
                "stages": stages,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_calibration import GuardCalibration
        from ..models.guard_stage import GuardStage

        d = dict(src_dict)
        builtin_model = d.pop("builtin_model")

        calibration = GuardCalibration.from_dict(d.pop("calibration"))

        default_threshold = d.pop("default_threshold")

        detectors = cast(list[str], d.pop("detectors"))

        max_prompt_bytes = d.pop("max_prompt_bytes")

        rules = d.pop("rules")

        stages = []
        _stages = d.pop("stages")
        for stages_item_data in _stages:
            stages_item = GuardStage.from_dict(stages_item_data)

            stages.append(stages_item)

        status = d.pop("status")

        guard_health = cls(
            builtin_model=builtin_model,
            calibration=calibration,
            default_threshold=default_threshold,
            detectors=detectors,
            max_prompt_bytes=max_prompt_bytes,
            rules=rules,
            stages=stages,
            status=status,
        )

        guard_health.additional_properties = d
        return guard_health

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.guard_calibration import GuardCalibration
    from ..models.guard_metrics import GuardMetrics
    from ..models.guard_stage import GuardStage


T = TypeVar("T", bound="GuardDetectorMetrics")


@_attrs_define
class GuardDetectorMetrics:
    """`GET /guard/detector/metrics`: the active model on the held-out split of its data.

    Attributes:
        calibration (GuardCalibration): The benign texts a model's thresholds were calibrated on.
        metrics (GuardMetrics): How a model did on the held-out split of its training data, at its threshold.
        stages (list[GuardStage]): The stages this process runs with the active model.
        version (int):
    """

    calibration: GuardCalibration
    metrics: GuardMetrics
    stages: list[GuardStage]
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        calibration = self.calibration.to_dict()

        metrics = self.metrics.to_dict()

        stages = []
        for stages_item_data in self.stages:
            stages_item = stages_item_data.to_dict()
            stages.append(stages_item)

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "calibration": calibration,
                "metrics": metrics,
                "stages": stages,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_calibration import GuardCalibration
        from ..models.guard_metrics import GuardMetrics
        from ..models.guard_stage import GuardStage

        d = dict(src_dict)
        calibration = GuardCalibration.from_dict(d.pop("calibration"))

        metrics = GuardMetrics.from_dict(d.pop("metrics"))

        stages = []
        _stages = d.pop("stages")
        for stages_item_data in _stages:
            stages_item = GuardStage.from_dict(stages_item_data)

            stages.append(stages_item)

        version = d.pop("version")

        guard_detector_metrics = cls(
            calibration=calibration,
            metrics=metrics,
            stages=stages,
            version=version,
        )

        guard_detector_metrics.additional_properties = d
        return guard_detector_metrics

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

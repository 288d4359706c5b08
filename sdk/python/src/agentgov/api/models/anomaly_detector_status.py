from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.anomaly_task import AnomalyTask


T = TypeVar("T", bound="AnomalyDetectorStatus")


@_attrs_define
class AnomalyDetectorStatus:
    """`GET /anomalies/detector/status`.

    Attributes:
        agents (int): Agents with a baseline of their own.
        samples (int): Policy checks the active version learnt from.
        state (str): `off`, `active`, or `training` (a task is queued or running).
        version (int): The active version; 0 when the detector is off (never trained, or rolled back to 0).
        task (AnomalyTask | None | Unset):
        threshold (float | None | Unset): Scores at or above it are anomalies; `null` when off.
        threshold_source (None | str | Unset): `labelled` or `contamination`; `null` when off.
        trained_at (datetime.datetime | None | Unset):
    """

    agents: int
    samples: int
    state: str
    version: int
    task: AnomalyTask | None | Unset = UNSET
    threshold: float | None | Unset = UNSET
    threshold_source: None | str | Unset = UNSET
    trained_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.anomaly_task import AnomalyTask

        agents = self.agents

        samples = self.samples

        state = self.state

        version = self.version

        task: dict[str, Any] | None | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        elif isinstance(self.task, AnomalyTask):
            task = self.task.to_dict()
        else:
            task = self.task

        threshold: float | None | Unset
        if isinstance(self.threshold, Unset):
            threshold = UNSET
        else:
            threshold = self.threshold

        threshold_source: None | str | Unset
        if isinstance(self.threshold_source, Unset):
            threshold_source = UNSET
        else:
            threshold_source = self.threshold_source

        trained_at: None | str | Unset
        if isinstance(self.trained_at, Unset):
            trained_at = UNSET
        elif isinstance(self.trained_at, datetime.datetime):
            trained_at = self.trained_at.isoformat()
        else:
            trained_at = self.trained_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agents": agents,
                "samples": samples,
                "state": state,
                "version": version,
            }
        )
        if task is not UNSET:
            field_dict["task"] = task
        if threshold is not UNSET:
            field_dict["threshold"] = threshold
        if threshold_source is not UNSET:
            field_dict["threshold_source"] = threshold_source
        if trained_at is not UNSET:
            field_dict["trained_at"] = trained_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.anomaly_task import AnomalyTask

        d = dict(src_dict)
        agents = d.pop("agents")

        samples = d.pop("samples")

        state = d.pop("state")

        version = d.pop("version")

        def _parse_task(data: object) -> AnomalyTask | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                task_type_0 = AnomalyTask.from_dict(data)

                return task_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AnomalyTask | None | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        def _parse_threshold(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        threshold = _parse_threshold(d.pop("threshold", UNSET))

        def _parse_threshold_source(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        threshold_source = _parse_threshold_source(d.pop("threshold_source", UNSET))

        def _parse_trained_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                trained_at_type_0 = isoparse(data)

                return trained_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        trained_at = _parse_trained_at(d.pop("trained_at", UNSET))

        anomaly_detector_status = cls(
            agents=agents,
            samples=samples,
            state=state,
            version=version,
            task=task,
            threshold=threshold,
            threshold_source=threshold_source,
            trained_at=trained_at,
        )

        anomaly_detector_status.additional_properties = d
        return anomaly_detector_status

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

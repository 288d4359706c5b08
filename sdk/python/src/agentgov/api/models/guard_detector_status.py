from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.guard_task import GuardTask


T = TypeVar("T", bound="GuardDetectorStatus")


@_attrs_define
class GuardDetectorStatus:
    """`GET /guard/detector/status`.

    Attributes:
        builtin_model (str): The built-in model's name (the corpus and training it came from).
        model_threshold (float): The model's own threshold, calibrated at training.
        samples (int): Examples the active model was fitted on.
        source (str): `builtin` or `trained`.
        state (str): `idle`, or `training` while a task is queued or running.
        threshold (float): The threshold in force: the tenant's `settings.guard_threshold`, else the model's.
        version (int): The active version (0: the built-in default).
        task (GuardTask | None | Unset):
        trained_at (datetime.datetime | None | Unset):
    """

    builtin_model: str
    model_threshold: float
    samples: int
    source: str
    state: str
    threshold: float
    version: int
    task: GuardTask | None | Unset = UNSET
    trained_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.guard_task import GuardTask

        builtin_model = self.builtin_model

        model_threshold = self.model_threshold

        samples = self.samples

        source = self.source

        state = self.state

        threshold = self.threshold

        version = self.version

        task: dict[str, Any] | None | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        elif isinstance(self.task, GuardTask):
            task = self.task.to_dict()
        else:
            task = self.task

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
                "builtin_model": builtin_model,
                "model_threshold": model_threshold,
                "samples": samples,
                "source": source,
                "state": state,
                "threshold": threshold,
                "version": version,
            }
        )
        if task is not UNSET:
            field_dict["task"] = task
        if trained_at is not UNSET:
            field_dict["trained_at"] = trained_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_task import GuardTask

        d = dict(src_dict)
        builtin_model = d.pop("builtin_model")

        model_threshold = d.pop("model_threshold")

        samples = d.pop("samples")

        source = d.pop("source")

        state = d.pop("state")

        threshold = d.pop("threshold")

        version = d.pop("version")

        def _parse_task(data: object) -> GuardTask | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                task_type_0 = GuardTask.from_dict(data)

                return task_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(GuardTask | None | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

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

        guard_detector_status = cls(
            builtin_model=builtin_model,
            model_threshold=model_threshold,
            samples=samples,
            source=source,
            state=state,
            threshold=threshold,
            version=version,
            task=task,
            trained_at=trained_at,
        )

        guard_detector_status.additional_properties = d
        return guard_detector_status

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

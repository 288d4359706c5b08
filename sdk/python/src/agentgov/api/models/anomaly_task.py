from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.job_status import JobStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor


T = TypeVar("T", bound="AnomalyTask")


@_attrs_define
class AnomalyTask:
    """An asynchronous training run of a tenant's anomaly detector.

    Attributes:
        created_at (datetime.datetime):
        progress (float): From 0 to 1.
        requested_by (Actor): `{"type": "user", "id": "0193…"}`.
        status (JobStatus): States of an asynchronous job.
        task_id (UUID): A training run of a tenant's anomaly detector.
        window_days (int): Days of audit history it trains on.
        error (None | str | Unset):
        finished_at (datetime.datetime | None | Unset):
        model_version (int | None | Unset): The version it produced, once completed.
        started_at (datetime.datetime | None | Unset):
    """

    created_at: datetime.datetime
    progress: float
    requested_by: Actor
    status: JobStatus
    task_id: UUID
    window_days: int
    error: None | str | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    model_version: int | None | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        progress = self.progress

        requested_by = self.requested_by.to_dict()

        status = self.status.value

        task_id = str(self.task_id)

        window_days = self.window_days

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        model_version: int | None | Unset
        if isinstance(self.model_version, Unset):
            model_version = UNSET
        else:
            model_version = self.model_version

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "progress": progress,
                "requested_by": requested_by,
                "status": status,
                "task_id": task_id,
                "window_days": window_days,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if model_version is not UNSET:
            field_dict["model_version"] = model_version
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor

        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        progress = d.pop("progress")

        requested_by = Actor.from_dict(d.pop("requested_by"))

        status = JobStatus(d.pop("status"))

        task_id = UUID(d.pop("task_id"))

        window_days = d.pop("window_days")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = isoparse(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_model_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        model_version = _parse_model_version(d.pop("model_version", UNSET))

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = isoparse(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        anomaly_task = cls(
            created_at=created_at,
            progress=progress,
            requested_by=requested_by,
            status=status,
            task_id=task_id,
            window_days=window_days,
            error=error,
            finished_at=finished_at,
            model_version=model_version,
            started_at=started_at,
        )

        anomaly_task.additional_properties = d
        return anomaly_task

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

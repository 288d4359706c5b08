from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.export_format import ExportFormat
from ..models.job_status import JobStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.audit_filter import AuditFilter


T = TypeVar("T", bound="ExportJob")


@_attrs_define
class ExportJob:
    """An asynchronous export of the audit log.

    Attributes:
        bytes_ (int): Bytes written so far.
        created_at (datetime.datetime):
        filters (AuditFilter): Which records of a tenant a list, export or count covers. Every field narrows; `from` is
            inclusive and `to` exclusive; `min_seq`/`max_seq` are inclusive.
        format_ (ExportFormat): File formats of an export.
        id (UUID): An asynchronous export of the audit log.
        progress (float): From 0 to 1.
        requested_by (Actor): `{"type": "user", "id": "0193…"}`.
        rows (int): Records written so far.
        status (JobStatus): States of an asynchronous job.
        error (None | str | Unset): Why the job failed.
        expires_at (datetime.datetime | None | Unset): When the file (and this job) will be deleted.
        finished_at (datetime.datetime | None | Unset):
        started_at (datetime.datetime | None | Unset):
    """

    bytes_: int
    created_at: datetime.datetime
    filters: AuditFilter
    format_: ExportFormat
    id: UUID
    progress: float
    requested_by: Actor
    rows: int
    status: JobStatus
    error: None | str | Unset = UNSET
    expires_at: datetime.datetime | None | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_ = self.bytes_

        created_at = self.created_at.isoformat()

        filters = self.filters.to_dict()

        format_ = self.format_.value

        id = str(self.id)

        progress = self.progress

        requested_by = self.requested_by.to_dict()

        rows = self.rows

        status = self.status.value

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

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
                "bytes": bytes_,
                "created_at": created_at,
                "filters": filters,
                "format": format_,
                "id": id,
                "progress": progress,
                "requested_by": requested_by,
                "rows": rows,
                "status": status,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.audit_filter import AuditFilter

        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        created_at = isoparse(d.pop("created_at"))

        filters = AuditFilter.from_dict(d.pop("filters"))

        format_ = ExportFormat(d.pop("format"))

        id = UUID(d.pop("id"))

        progress = d.pop("progress")

        requested_by = Actor.from_dict(d.pop("requested_by"))

        rows = d.pop("rows")

        status = JobStatus(d.pop("status"))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = isoparse(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

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

        export_job = cls(
            bytes_=bytes_,
            created_at=created_at,
            filters=filters,
            format_=format_,
            id=id,
            progress=progress,
            requested_by=requested_by,
            rows=rows,
            status=status,
            error=error,
            expires_at=expires_at,
            finished_at=finished_at,
            started_at=started_at,
        )

        export_job.additional_properties = d
        return export_job

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

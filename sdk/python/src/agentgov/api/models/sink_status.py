from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

T = TypeVar("T", bound="SinkStatus")


@_attrs_define
class SinkStatus:
    """A sink as `GET /siem/status` shows it. The operator (`X-Admin-Key`) sees the sink's
    platform-wide state; a tenant's Super Admin sees what concerns its own tenant only: the
    sink's filter and its tenant's backlog, never the destination, the totals over every
    tenant or the last error (which another tenant's records may have caused).

        Attributes:
            event_types (list[str]): Event types sent (empty: all).
            format_ (str): What each record is written as: `cef`, `json` or `ocsf`.
            kind (str): `syslog-tcp`, `syslog-udp`, `syslog-tls` or `splunk-hec`.
            min_severity (int):
            name (str): The configured name.
            queue_depth (int): Audit records not yet examined: over every tenant for the operator, of the caller's
                tenant for a Super Admin.
            cursor (int | None | Unset): A Super Admin only: the last `seq` of its tenant's log the sink has forwarded or
                passed over by its filter.
            destination (None | str | Unset): Where it sends, credentials masked. The operator only.
            failed_total (int | None | Unset): Records in delivery attempts that failed (each retry counts again). The
                operator only.
            forwarded_total (int | None | Unset): Records delivered since the sink was first configured. The operator only.
            last_error (None | str | Unset): The operator only.
            last_error_at (datetime.datetime | None | Unset): The operator only.
            last_success_at (datetime.datetime | None | Unset): The operator only.
    """

    event_types: list[str]
    format_: str
    kind: str
    min_severity: int
    name: str
    queue_depth: int
    cursor: int | None | Unset = UNSET
    destination: None | str | Unset = UNSET
    failed_total: int | None | Unset = UNSET
    forwarded_total: int | None | Unset = UNSET
    last_error: None | str | Unset = UNSET
    last_error_at: datetime.datetime | None | Unset = UNSET
    last_success_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        event_types = self.event_types

        format_ = self.format_

        kind = self.kind

        min_severity = self.min_severity

        name = self.name

        queue_depth = self.queue_depth

        cursor: int | None | Unset
        if isinstance(self.cursor, Unset):
            cursor = UNSET
        else:
            cursor = self.cursor

        destination: None | str | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        else:
            destination = self.destination

        failed_total: int | None | Unset
        if isinstance(self.failed_total, Unset):
            failed_total = UNSET
        else:
            failed_total = self.failed_total

        forwarded_total: int | None | Unset
        if isinstance(self.forwarded_total, Unset):
            forwarded_total = UNSET
        else:
            forwarded_total = self.forwarded_total

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_error_at: None | str | Unset
        if isinstance(self.last_error_at, Unset):
            last_error_at = UNSET
        elif isinstance(self.last_error_at, datetime.datetime):
            last_error_at = self.last_error_at.isoformat()
        else:
            last_error_at = self.last_error_at

        last_success_at: None | str | Unset
        if isinstance(self.last_success_at, Unset):
            last_success_at = UNSET
        elif isinstance(self.last_success_at, datetime.datetime):
            last_success_at = self.last_success_at.isoformat()
        else:
            last_success_at = self.last_success_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "event_types": event_types,
                "format": format_,
                "kind": kind,
                "min_severity": min_severity,
                "name": name,
                "queue_depth": queue_depth,
            }
        )
        if cursor is not UNSET:
            field_dict["cursor"] = cursor
        if destination is not UNSET:
            field_dict["destination"] = destination
        if failed_total is not UNSET:
            field_dict["failed_total"] = failed_total
        if forwarded_total is not UNSET:
            field_dict["forwarded_total"] = forwarded_total
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_error_at is not UNSET:
            field_dict["last_error_at"] = last_error_at
        if last_success_at is not UNSET:
            field_dict["last_success_at"] = last_success_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_types = cast(list[str], d.pop("event_types"))

        format_ = d.pop("format")

        kind = d.pop("kind")

        min_severity = d.pop("min_severity")

        name = d.pop("name")

        queue_depth = d.pop("queue_depth")

        def _parse_cursor(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cursor = _parse_cursor(d.pop("cursor", UNSET))

        def _parse_destination(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))

        def _parse_failed_total(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        failed_total = _parse_failed_total(d.pop("failed_total", UNSET))

        def _parse_forwarded_total(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        forwarded_total = _parse_forwarded_total(d.pop("forwarded_total", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_error_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_error_at_type_0 = isoparse(data)

                return last_error_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_error_at = _parse_last_error_at(d.pop("last_error_at", UNSET))

        def _parse_last_success_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_success_at_type_0 = isoparse(data)

                return last_success_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_success_at = _parse_last_success_at(d.pop("last_success_at", UNSET))

        sink_status = cls(
            event_types=event_types,
            format_=format_,
            kind=kind,
            min_severity=min_severity,
            name=name,
            queue_depth=queue_depth,
            cursor=cursor,
            destination=destination,
            failed_total=failed_total,
            forwarded_total=forwarded_total,
            last_error=last_error,
            last_error_at=last_error_at,
            last_success_at=last_success_at,
        )

        sink_status.additional_properties = d
        return sink_status

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SinkTestResult")


@_attrs_define
class SinkTestResult:
    """One sink's answer to the test event.

    Attributes:
        kind (str):
        latency_ms (float): How long the send took, in milliseconds.
        name (str):
        ok (bool): Whether the sink took the event.
        destination (None | str | Unset): Where it sends, credentials masked. The operator only.
        error (None | str | Unset): Why it failed: the sink's own error for the operator; for a tenant's Super Admin
            only that it failed (the error can name the destination).
    """

    kind: str
    latency_ms: float
    name: str
    ok: bool
    destination: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        latency_ms = self.latency_ms

        name = self.name

        ok = self.ok

        destination: None | str | Unset
        if isinstance(self.destination, Unset):
            destination = UNSET
        else:
            destination = self.destination

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "latency_ms": latency_ms,
                "name": name,
                "ok": ok,
            }
        )
        if destination is not UNSET:
            field_dict["destination"] = destination
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind")

        latency_ms = d.pop("latency_ms")

        name = d.pop("name")

        ok = d.pop("ok")

        def _parse_destination(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        destination = _parse_destination(d.pop("destination", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        sink_test_result = cls(
            kind=kind,
            latency_ms=latency_ms,
            name=name,
            ok=ok,
            destination=destination,
            error=error,
        )

        sink_test_result.additional_properties = d
        return sink_test_result

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

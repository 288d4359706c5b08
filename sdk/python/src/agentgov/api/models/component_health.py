from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ComponentHealth")


@_attrs_define
class ComponentHealth:
    """The health of one backing component.

    Attributes:
        backend (str): The adapter behind it (`sqlite`, `postgres`, `memory`, `redis`, `regorus`).
        latency_ms (int):
        name (str): `database`, `cache` or `policy_engine`.
        up (bool):
        error (None | str | Unset): Why it is down; never internals.
    """

    backend: str
    latency_ms: int
    name: str
    up: bool
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        backend = self.backend

        latency_ms = self.latency_ms

        name = self.name

        up = self.up

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "backend": backend,
                "latency_ms": latency_ms,
                "name": name,
                "up": up,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        backend = d.pop("backend")

        latency_ms = d.pop("latency_ms")

        name = d.pop("name")

        up = d.pop("up")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        component_health = cls(
            backend=backend,
            latency_ms=latency_ms,
            name=name,
            up=up,
            error=error,
        )

        component_health.additional_properties = d
        return component_health

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

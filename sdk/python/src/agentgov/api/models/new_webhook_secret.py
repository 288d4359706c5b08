from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NewWebhookSecret")


@_attrs_define
class NewWebhookSecret:
    """`POST /tenant/webhook-secret`.

    Attributes:
        require_timestamp (bool | None | Unset): Refuse the untimestamped `sha256=` form for this tenant (default true:
            only
            `t=…,v1=…`, which a replay outside five minutes cannot pass).
    """

    require_timestamp: bool | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        require_timestamp: bool | None | Unset
        if isinstance(self.require_timestamp, Unset):
            require_timestamp = UNSET
        else:
            require_timestamp = self.require_timestamp

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if require_timestamp is not UNSET:
            field_dict["require_timestamp"] = require_timestamp

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_require_timestamp(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        require_timestamp = _parse_require_timestamp(d.pop("require_timestamp", UNSET))

        new_webhook_secret = cls(
            require_timestamp=require_timestamp,
        )

        return new_webhook_secret

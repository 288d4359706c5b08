from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.secret_purpose import SecretPurpose
from ..types import UNSET, Unset

T = TypeVar("T", bound="SecretInfo")


@_attrs_define
class SecretInfo:
    """A tenant's signing secret, without its value.

    Attributes:
        created_at (datetime.datetime):
        purpose (SecretPurpose): What a tenant's signing secret is for: `callback` signs the HITL callbacks sent to
            its receivers; `webhook` (optional) is the key its senders sign `POST
            /webhooks/agent` with, instead of the server's `WEBHOOK_SECRET`.
        require_timestamp (bool): `webhook`: whether this tenant's senders must use the timestamped form
            (`t=…,v1=…`); `sha256=` is refused. Always false for `callback`.
        previous_valid_until (datetime.datetime | None | Unset): Until when the secret this one replaced still signs
            callbacks beside it (`callback`)
            or is still accepted (`webhook`); `null` when there is none.
    """

    created_at: datetime.datetime
    purpose: SecretPurpose
    require_timestamp: bool
    previous_valid_until: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        purpose = self.purpose.value

        require_timestamp = self.require_timestamp

        previous_valid_until: None | str | Unset
        if isinstance(self.previous_valid_until, Unset):
            previous_valid_until = UNSET
        elif isinstance(self.previous_valid_until, datetime.datetime):
            previous_valid_until = self.previous_valid_until.isoformat()
        else:
            previous_valid_until = self.previous_valid_until

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "purpose": purpose,
                "require_timestamp": require_timestamp,
            }
        )
        if previous_valid_until is not UNSET:
            field_dict["previous_valid_until"] = previous_valid_until

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        purpose = SecretPurpose(d.pop("purpose"))

        require_timestamp = d.pop("require_timestamp")

        def _parse_previous_valid_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_valid_until_type_0 = isoparse(data)

                return previous_valid_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        previous_valid_until = _parse_previous_valid_until(d.pop("previous_valid_until", UNSET))

        secret_info = cls(
            created_at=created_at,
            purpose=purpose,
            require_timestamp=require_timestamp,
            previous_valid_until=previous_valid_until,
        )

        secret_info.additional_properties = d
        return secret_info

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

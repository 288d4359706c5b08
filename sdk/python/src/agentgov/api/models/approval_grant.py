from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalGrant")


@_attrs_define
class ApprovalGrant:
    """What approving a request granted: a single-use approval token bound to `digest`.

    Attributes:
        digest (str): The action digest the token is bound to: the request's, or the edited action's.
        expires_at (datetime.datetime): After this the token is refused, and the action needs a new approval.
        token_id (UUID): The token's id (`jti`).
        used_at (datetime.datetime | None | Unset): When a check presented it (it is spent then).
    """

    digest: str
    expires_at: datetime.datetime
    token_id: UUID
    used_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        digest = self.digest

        expires_at = self.expires_at.isoformat()

        token_id = str(self.token_id)

        used_at: None | str | Unset
        if isinstance(self.used_at, Unset):
            used_at = UNSET
        elif isinstance(self.used_at, datetime.datetime):
            used_at = self.used_at.isoformat()
        else:
            used_at = self.used_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "digest": digest,
                "expires_at": expires_at,
                "token_id": token_id,
            }
        )
        if used_at is not UNSET:
            field_dict["used_at"] = used_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        digest = d.pop("digest")

        expires_at = isoparse(d.pop("expires_at"))

        token_id = UUID(d.pop("token_id"))

        def _parse_used_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                used_at_type_0 = isoparse(data)

                return used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        used_at = _parse_used_at(d.pop("used_at", UNSET))

        approval_grant = cls(
            digest=digest,
            expires_at=expires_at,
            token_id=token_id,
            used_at=used_at,
        )

        approval_grant.additional_properties = d
        return approval_grant

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

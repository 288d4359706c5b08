from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ExchangeRequest")


@_attrs_define
class ExchangeRequest:
    """`POST /auth/sso/exchange`.

    Attributes:
        code (str): The `code` the provider sent back.
        state (str): The `state` the provider sent back.
        provider (None | str | Unset): The provider the sign-in was started with; refused (401) when it is not.
    """

    code: str
    state: str
    provider: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        state = self.state

        provider: None | str | Unset
        if isinstance(self.provider, Unset):
            provider = UNSET
        else:
            provider = self.provider

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "code": code,
                "state": state,
            }
        )
        if provider is not UNSET:
            field_dict["provider"] = provider

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        state = d.pop("state")

        def _parse_provider(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider = _parse_provider(d.pop("provider", UNSET))

        exchange_request = cls(
            code=code,
            state=state,
            provider=provider,
        )

        return exchange_request

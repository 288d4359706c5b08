from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.secret_info import SecretInfo


T = TypeVar("T", bound="TenantSecrets")


@_attrs_define
class TenantSecrets:
    """`GET /tenant/secrets`: which signing secrets the tenant has.

    Attributes:
        callback (None | SecretInfo | Unset):
        webhook (None | SecretInfo | Unset):
    """

    callback: None | SecretInfo | Unset = UNSET
    webhook: None | SecretInfo | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.secret_info import SecretInfo

        callback: dict[str, Any] | None | Unset
        if isinstance(self.callback, Unset):
            callback = UNSET
        elif isinstance(self.callback, SecretInfo):
            callback = self.callback.to_dict()
        else:
            callback = self.callback

        webhook: dict[str, Any] | None | Unset
        if isinstance(self.webhook, Unset):
            webhook = UNSET
        elif isinstance(self.webhook, SecretInfo):
            webhook = self.webhook.to_dict()
        else:
            webhook = self.webhook

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if callback is not UNSET:
            field_dict["callback"] = callback
        if webhook is not UNSET:
            field_dict["webhook"] = webhook

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.secret_info import SecretInfo

        d = dict(src_dict)

        def _parse_callback(data: object) -> None | SecretInfo | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                callback_type_0 = SecretInfo.from_dict(data)

                return callback_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SecretInfo | Unset, data)

        callback = _parse_callback(d.pop("callback", UNSET))

        def _parse_webhook(data: object) -> None | SecretInfo | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                webhook_type_0 = SecretInfo.from_dict(data)

                return webhook_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SecretInfo | Unset, data)

        webhook = _parse_webhook(d.pop("webhook", UNSET))

        tenant_secrets = cls(
            callback=callback,
            webhook=webhook,
        )

        tenant_secrets.additional_properties = d
        return tenant_secrets

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

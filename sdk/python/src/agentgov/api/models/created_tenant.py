from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.api_key import ApiKey
    from ..models.tenant_view import TenantView
    from ..models.user import User


T = TypeVar("T", bound="CreatedTenant")


@_attrs_define
class CreatedTenant:
    """`201` of `POST /tenants`: the tenant, its first admin, and an API key and callback
    signing secret shown this once.

        Attributes:
            admin_user (User): A person who signs in to one tenant.
            api_key (str):
            api_key_info (ApiKey): An API key. The secret itself is never stored: only its SHA-256 (`key_hash`).
            callback_secret (str): `whsec_…`: the key the tenant's HITL callbacks are signed with (docs/API.md,
                "Signatures"). Shown only here; `POST /tenant/callback-secret` makes a new one.
            tenant (TenantView): A tenant as the API shows it: its record and the settings in force.
    """

    admin_user: User
    api_key: str
    api_key_info: ApiKey
    callback_secret: str
    tenant: TenantView
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        admin_user = self.admin_user.to_dict()

        api_key = self.api_key

        api_key_info = self.api_key_info.to_dict()

        callback_secret = self.callback_secret

        tenant = self.tenant.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "admin_user": admin_user,
                "api_key": api_key,
                "api_key_info": api_key_info,
                "callback_secret": callback_secret,
                "tenant": tenant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.api_key import ApiKey
        from ..models.tenant_view import TenantView
        from ..models.user import User

        d = dict(src_dict)
        admin_user = User.from_dict(d.pop("admin_user"))

        api_key = d.pop("api_key")

        api_key_info = ApiKey.from_dict(d.pop("api_key_info"))

        callback_secret = d.pop("callback_secret")

        tenant = TenantView.from_dict(d.pop("tenant"))

        created_tenant = cls(
            admin_user=admin_user,
            api_key=api_key,
            api_key_info=api_key_info,
            callback_secret=callback_secret,
            tenant=tenant,
        )

        created_tenant.additional_properties = d
        return created_tenant

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

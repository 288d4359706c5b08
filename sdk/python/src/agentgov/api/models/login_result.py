from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.login_user import LoginUser


T = TypeVar("T", bound="LoginResult")


@_attrs_define
class LoginResult:
    """What a successful login hands out (spec 2.2).

    Attributes:
        access_token (str):
        api_key (str): An API key bound to this session: same lifetime, the user's role's permissions,
            revoked by logout. Shown only here.
        expires_in (int): Seconds until `access_token` (and `api_key`) expire.
        token_type (str): Always `Bearer`.
        user (LoginUser): The user part of a login response.
    """

    access_token: str
    api_key: str
    expires_in: int
    token_type: str
    user: LoginUser
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        access_token = self.access_token

        api_key = self.api_key

        expires_in = self.expires_in

        token_type = self.token_type

        user = self.user.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "access_token": access_token,
                "api_key": api_key,
                "expires_in": expires_in,
                "token_type": token_type,
                "user": user,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.login_user import LoginUser

        d = dict(src_dict)
        access_token = d.pop("access_token")

        api_key = d.pop("api_key")

        expires_in = d.pop("expires_in")

        token_type = d.pop("token_type")

        user = LoginUser.from_dict(d.pop("user"))

        login_result = cls(
            access_token=access_token,
            api_key=api_key,
            expires_in=expires_in,
            token_type=token_type,
            user=user,
        )

        login_result.additional_properties = d
        return login_result

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

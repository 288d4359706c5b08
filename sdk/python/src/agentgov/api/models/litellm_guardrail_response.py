from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="LitellmGuardrailResponse")


@_attrs_define
class LitellmGuardrailResponse:
    """What LiteLLM does next: `NONE` (go on), `BLOCKED` (refuse the call with
    `blocked_reason`) or `GUARDRAIL_INTERVENED` (go on with `texts` in place of its own).

        Attributes:
            action (str):
            blocked_reason (None | str | Unset):
            texts (list[str] | None | Unset): The texts to use instead, as many and in the same order as sent.
    """

    action: str
    blocked_reason: None | str | Unset = UNSET
    texts: list[str] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        blocked_reason: None | str | Unset
        if isinstance(self.blocked_reason, Unset):
            blocked_reason = UNSET
        else:
            blocked_reason = self.blocked_reason

        texts: list[str] | None | Unset
        if isinstance(self.texts, Unset):
            texts = UNSET
        elif isinstance(self.texts, list):
            texts = self.texts

        else:
            texts = self.texts

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
            }
        )
        if blocked_reason is not UNSET:
            field_dict["blocked_reason"] = blocked_reason
        if texts is not UNSET:
            field_dict["texts"] = texts

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = d.pop("action")

        def _parse_blocked_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        blocked_reason = _parse_blocked_reason(d.pop("blocked_reason", UNSET))

        def _parse_texts(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                texts_type_0 = cast(list[str], data)

                return texts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        texts = _parse_texts(d.pop("texts", UNSET))

        litellm_guardrail_response = cls(
            action=action,
            blocked_reason=blocked_reason,
            texts=texts,
        )

        litellm_guardrail_response.additional_properties = d
        return litellm_guardrail_response

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

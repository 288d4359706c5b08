from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attack_category import AttackCategory
from ..models.guard_feedback_kind import GuardFeedbackKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="FeedbackRequest")


@_attrs_define
class FeedbackRequest:
    """
    Attributes:
        label (GuardFeedbackKind): What feedback says of a text.
        category (AttackCategory | None | Unset):
        prompt (None | str | Unset): The text itself, at most 16 KiB (required for a validation that was not blocked).
        validation_id (None | Unset | UUID): A blocked validation of the tenant (its text is taken from its audit
            record).
    """

    label: GuardFeedbackKind
    category: AttackCategory | None | Unset = UNSET
    prompt: None | str | Unset = UNSET
    validation_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        label = self.label.value

        category: None | str | Unset
        if isinstance(self.category, Unset):
            category = UNSET
        elif isinstance(self.category, AttackCategory):
            category = self.category.value
        else:
            category = self.category

        prompt: None | str | Unset
        if isinstance(self.prompt, Unset):
            prompt = UNSET
        else:
            prompt = self.prompt

        validation_id: None | str | Unset
        if isinstance(self.validation_id, Unset):
            validation_id = UNSET
        elif isinstance(self.validation_id, UUID):
            validation_id = str(self.validation_id)
        else:
            validation_id = self.validation_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "label": label,
            }
        )
        if category is not UNSET:
            field_dict["category"] = category
        if prompt is not UNSET:
            field_dict["prompt"] = prompt
        if validation_id is not UNSET:
            field_dict["validation_id"] = validation_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        label = GuardFeedbackKind(d.pop("label"))

        def _parse_category(data: object) -> AttackCategory | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                category_type_0 = AttackCategory(data)

                return category_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AttackCategory | None | Unset, data)

        category = _parse_category(d.pop("category", UNSET))

        def _parse_prompt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        prompt = _parse_prompt(d.pop("prompt", UNSET))

        def _parse_validation_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                validation_id_type_0 = UUID(data)

                return validation_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        validation_id = _parse_validation_id(d.pop("validation_id", UNSET))

        feedback_request = cls(
            label=label,
            category=category,
            prompt=prompt,
            validation_id=validation_id,
        )

        feedback_request.additional_properties = d
        return feedback_request

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

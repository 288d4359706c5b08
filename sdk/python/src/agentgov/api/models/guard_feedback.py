from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.guard_feedback_kind import GuardFeedbackKind
from ..models.guard_label import GuardLabel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor


T = TypeVar("T", bound="GuardFeedback")


@_attrs_define
class GuardFeedback:
    """A labelled text a tenant's next model learns from.

    Attributes:
        created_at (datetime.datetime):
        created_by (Actor): `{"type": "user", "id": "0193…"}`.
        id (UUID): A labelled text given as feedback to a tenant's Prompt Guard.
        kind (GuardFeedbackKind): What feedback says of a text.
        label (GuardLabel): What a text is: benign, or one of the three kinds of attack.
        validation_id (None | Unset | UUID): The validation it is about, when given by id.
    """

    created_at: datetime.datetime
    created_by: Actor
    id: UUID
    kind: GuardFeedbackKind
    label: GuardLabel
    validation_id: None | Unset | UUID = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by.to_dict()

        id = str(self.id)

        kind = self.kind.value

        label = self.label.value

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
                "created_at": created_at,
                "created_by": created_by,
                "id": id,
                "kind": kind,
                "label": label,
            }
        )
        if validation_id is not UNSET:
            field_dict["validation_id"] = validation_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor

        d = dict(src_dict)
        created_at = isoparse(d.pop("created_at"))

        created_by = Actor.from_dict(d.pop("created_by"))

        id = UUID(d.pop("id"))

        kind = GuardFeedbackKind(d.pop("kind"))

        label = GuardLabel(d.pop("label"))

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

        guard_feedback = cls(
            created_at=created_at,
            created_by=created_by,
            id=id,
            kind=kind,
            label=label,
            validation_id=validation_id,
        )

        guard_feedback.additional_properties = d
        return guard_feedback

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

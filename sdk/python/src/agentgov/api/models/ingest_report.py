from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.item_error import ItemError


T = TypeVar("T", bound="IngestReport")


@_attrs_define
class IngestReport:
    """The answer of `POST /discovery/ingest/batch`.

    Attributes:
        accepted (int): Events stored.
        attributed (int): Of those stored: attributed to a registered agent, suppressed by a dismissed
            candidate, or shadow activity for clustering.
        errors (list[ItemError]):
        rejected (int): Events refused (listed in `errors`).
        shadow (int):
        suppressed (int):
    """

    accepted: int
    attributed: int
    errors: list[ItemError]
    rejected: int
    shadow: int
    suppressed: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        attributed = self.attributed

        errors = []
        for errors_item_data in self.errors:
            errors_item = errors_item_data.to_dict()
            errors.append(errors_item)

        rejected = self.rejected

        shadow = self.shadow

        suppressed = self.suppressed

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accepted": accepted,
                "attributed": attributed,
                "errors": errors,
                "rejected": rejected,
                "shadow": shadow,
                "suppressed": suppressed,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.item_error import ItemError

        d = dict(src_dict)
        accepted = d.pop("accepted")

        attributed = d.pop("attributed")

        errors = []
        _errors = d.pop("errors")
        for errors_item_data in _errors:
            errors_item = ItemError.from_dict(errors_item_data)

            errors.append(errors_item)

        rejected = d.pop("rejected")

        shadow = d.pop("shadow")

        suppressed = d.pop("suppressed")

        ingest_report = cls(
            accepted=accepted,
            attributed=attributed,
            errors=errors,
            rejected=rejected,
            shadow=shadow,
            suppressed=suppressed,
        )

        ingest_report.additional_properties = d
        return ingest_report

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

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.guard_label import GuardLabel

T = TypeVar("T", bound="GuardClassMetrics")


@_attrs_define
class GuardClassMetrics:
    """Precision, recall and F1 of one class on a held-out split.

    Attributes:
        f1 (float):
        label (GuardLabel): What a text is: benign, or one of the three kinds of attack.
        precision (float):
        recall (float):
        support (int): Held-out texts of this class.
    """

    f1: float
    label: GuardLabel
    precision: float
    recall: float
    support: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        f1 = self.f1

        label = self.label.value

        precision = self.precision

        recall = self.recall

        support = self.support

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "f1": f1,
                "label": label,
                "precision": precision,
                "recall": recall,
                "support": support,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        f1 = d.pop("f1")

        label = GuardLabel(d.pop("label"))

        precision = d.pop("precision")

        recall = d.pop("recall")

        support = d.pop("support")

        guard_class_metrics = cls(
            f1=f1,
            label=label,
            precision=precision,
            recall=recall,
            support=support,
        )

        guard_class_metrics.additional_properties = d
        return guard_class_metrics

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

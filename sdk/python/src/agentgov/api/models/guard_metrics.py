from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.guard_class_metrics import GuardClassMetrics
    from ..models.guard_scores import GuardScores


T = TypeVar("T", bound="GuardMetrics")


@_attrs_define
class GuardMetrics:
    """How a model did on the held-out split of its training data, at its threshold.

    Attributes:
        attack_recall (float): Share of held-out attacks flagged as some attack.
        classes (list[GuardClassMetrics]):
        false_positive_rate (float): Share of held-out benign texts flagged.
        false_positive_rates (GuardScores): A score per kind of attack (0..1).
        holdout_size (int): Held-out texts.
        threshold (float):
    """

    attack_recall: float
    classes: list[GuardClassMetrics]
    false_positive_rate: float
    false_positive_rates: GuardScores
    holdout_size: int
    threshold: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attack_recall = self.attack_recall

        classes = []
        for classes_item_data in self.classes:
            classes_item = classes_item_data.to_dict()
            classes.append(classes_item)

        false_positive_rate = self.false_positive_rate

        false_positive_rates = self.false_positive_rates.to_dict()

        holdout_size = self.holdout_size

        threshold = self.threshold

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attack_recall": attack_recall,
                "classes": classes,
                "false_positive_rate": false_positive_rate,
                "false_positive_rates": false_positive_rates,
                "holdout_size": holdout_size,
                "threshold": threshold,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.guard_class_metrics import GuardClassMetrics
        from ..models.guard_scores import GuardScores

        d = dict(src_dict)
        attack_recall = d.pop("attack_recall")

        classes = []
        _classes = d.pop("classes")
        for classes_item_data in _classes:
            classes_item = GuardClassMetrics.from_dict(classes_item_data)

            classes.append(classes_item)

        false_positive_rate = d.pop("false_positive_rate")

        false_positive_rates = GuardScores.from_dict(d.pop("false_positive_rates"))

        holdout_size = d.pop("holdout_size")

        threshold = d.pop("threshold")

        guard_metrics = cls(
            attack_recall=attack_recall,
            classes=classes,
            false_positive_rate=false_positive_rate,
            false_positive_rates=false_positive_rates,
            holdout_size=holdout_size,
            threshold=threshold,
        )

        guard_metrics.additional_properties = d
        return guard_metrics

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

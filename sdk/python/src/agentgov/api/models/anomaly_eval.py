from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AnomalyEval")


@_attrs_define
class AnomalyEval:
    """How well a detector version separates anomalies from ordinary behaviour on one set.

    Attributes:
        negatives (int): Ordinary items in the set (labelled `false_positive`, or not injected).
        positives (int): Anomalies in the set (labelled `resolved`, or injected).
        auc (float | None | Unset): Area under the ROC curve; `null` without both positives and negatives.
        f1 (float | None | Unset):
        precision (float | None | Unset): At the version's threshold; `null` when nothing was flagged.
        recall (float | None | Unset): At the version's threshold; `null` without positives.
    """

    negatives: int
    positives: int
    auc: float | None | Unset = UNSET
    f1: float | None | Unset = UNSET
    precision: float | None | Unset = UNSET
    recall: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        negatives = self.negatives

        positives = self.positives

        auc: float | None | Unset
        if isinstance(self.auc, Unset):
            auc = UNSET
        else:
            auc = self.auc

        f1: float | None | Unset
        if isinstance(self.f1, Unset):
            f1 = UNSET
        else:
            f1 = self.f1

        precision: float | None | Unset
        if isinstance(self.precision, Unset):
            precision = UNSET
        else:
            precision = self.precision

        recall: float | None | Unset
        if isinstance(self.recall, Unset):
            recall = UNSET
        else:
            recall = self.recall

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "negatives": negatives,
                "positives": positives,
            }
        )
        if auc is not UNSET:
            field_dict["auc"] = auc
        if f1 is not UNSET:
            field_dict["f1"] = f1
        if precision is not UNSET:
            field_dict["precision"] = precision
        if recall is not UNSET:
            field_dict["recall"] = recall

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        negatives = d.pop("negatives")

        positives = d.pop("positives")

        def _parse_auc(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        auc = _parse_auc(d.pop("auc", UNSET))

        def _parse_f1(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        f1 = _parse_f1(d.pop("f1", UNSET))

        def _parse_precision(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        precision = _parse_precision(d.pop("precision", UNSET))

        def _parse_recall(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        recall = _parse_recall(d.pop("recall", UNSET))

        anomaly_eval = cls(
            negatives=negatives,
            positives=positives,
            auc=auc,
            f1=f1,
            precision=precision,
            recall=recall,
        )

        anomaly_eval.additional_properties = d
        return anomaly_eval

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

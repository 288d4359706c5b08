from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="GuardCalibration")


@_attrs_define
class GuardCalibration:
    """The benign texts a model's thresholds were calibrated on.

    Attributes:
        set_ (str):
        size (int): Texts in it (0 when not known).
        target_false_positive_rate (float): The share of them the threshold may flag.
    """

    set_: str
    size: int
    target_false_positive_rate: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        set_ = self.set_

        size = self.size

        target_false_positive_rate = self.target_false_positive_rate

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "set": set_,
                "size": size,
                "target_false_positive_rate": target_false_positive_rate,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        set_ = d.pop("set")

        size = d.pop("size")

        target_false_positive_rate = d.pop("target_false_positive_rate")

        guard_calibration = cls(
            set_=set_,
            size=size,
            target_false_positive_rate=target_false_positive_rate,
        )

        guard_calibration.additional_properties = d
        return guard_calibration

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

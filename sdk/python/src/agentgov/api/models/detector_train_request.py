from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DetectorTrainRequest")


@_attrs_define
class DetectorTrainRequest:
    """`POST /anomalies/detector/train`.

    Attributes:
        window_days (int | None | Unset): Days of audit history to learn from, 1 to 90 (default 30).
    """

    window_days: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        window_days: int | None | Unset
        if isinstance(self.window_days, Unset):
            window_days = UNSET
        else:
            window_days = self.window_days

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if window_days is not UNSET:
            field_dict["window_days"] = window_days

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_window_days(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        window_days = _parse_window_days(d.pop("window_days", UNSET))

        detector_train_request = cls(
            window_days=window_days,
        )

        return detector_train_request

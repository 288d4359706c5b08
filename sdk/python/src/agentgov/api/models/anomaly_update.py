from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.anomaly_status import AnomalyStatus

T = TypeVar("T", bound="AnomalyUpdate")


@_attrs_define
class AnomalyUpdate:
    """`PUT /anomalies/{id}`.

    Attributes:
        status (AnomalyStatus): What analysts made of it.
    """

    status: AnomalyStatus

    def to_dict(self) -> dict[str, Any]:
        status = self.status.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = AnomalyStatus(d.pop("status"))

        anomaly_update = cls(
            status=status,
        )

        return anomaly_update

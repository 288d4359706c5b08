from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RiskLevels")


@_attrs_define
class RiskLevels:
    """Where the levels above `low` begin: a score below `medium` is low, below `high` medium,
    below `critical` high, and the rest critical. Each is above the one before, within (0, 1].

        Attributes:
            critical (float):
            high (float):
            medium (float):
    """

    critical: float
    high: float
    medium: float

    def to_dict(self) -> dict[str, Any]:
        critical = self.critical

        high = self.high

        medium = self.medium

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "critical": critical,
                "high": high,
                "medium": medium,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        critical = d.pop("critical")

        high = d.pop("high")

        medium = d.pop("medium")

        risk_levels = cls(
            critical=critical,
            high=high,
            medium=medium,
        )

        return risk_levels

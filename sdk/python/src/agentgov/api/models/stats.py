from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

if TYPE_CHECKING:
    from ..models.decision_stats import DecisionStats
    from ..models.resource_counts import ResourceCounts


T = TypeVar("T", bound="Stats")


@_attrs_define
class Stats:
    """`GET /stats`: counts of the caller's tenant's resources.

    Attributes:
        audit_records (int): Records in the tenant's audit log (its chain's last sequence number).
        counts (ResourceCounts): Counts of a tenant's resources, for `/stats`.
        decisions (DecisionStats): Answered checks (each a `policy.decision` record) over the last 24 hours.
        generated_at (datetime.datetime):
        tenant_id (UUID): A tenant: the unit of isolation.
    """

    audit_records: int
    counts: ResourceCounts
    decisions: DecisionStats
    generated_at: datetime.datetime
    tenant_id: UUID
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        audit_records = self.audit_records

        counts = self.counts.to_dict()

        decisions = self.decisions.to_dict()

        generated_at = self.generated_at.isoformat()

        tenant_id = str(self.tenant_id)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "audit_records": audit_records,
                "counts": counts,
                "decisions": decisions,
                "generated_at": generated_at,
                "tenant_id": tenant_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.decision_stats import DecisionStats
        from ..models.resource_counts import ResourceCounts

        d = dict(src_dict)
        audit_records = d.pop("audit_records")

        counts = ResourceCounts.from_dict(d.pop("counts"))

        decisions = DecisionStats.from_dict(d.pop("decisions"))

        generated_at = isoparse(d.pop("generated_at"))

        tenant_id = UUID(d.pop("tenant_id"))

        stats = cls(
            audit_records=audit_records,
            counts=counts,
            decisions=decisions,
            generated_at=generated_at,
            tenant_id=tenant_id,
        )

        stats.additional_properties = d
        return stats

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

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.anomaly_source import AnomalySource
from ..models.anomaly_status import AnomalyStatus
from ..models.anomaly_type import AnomalyType
from ..models.severity import Severity
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.anomaly_report_evidence import AnomalyReportEvidence


T = TypeVar("T", bound="AnomalyReport")


@_attrs_define
class AnomalyReport:
    """A report, as stored and served.

    Adapters keep `id`, `tenant_id`, `agent_id`, `anomaly_type`, `severity`, `status` and
    `created_at` in columns (lists filter on them, statistics group by them) and the whole
    record as the JSON text of its `Serialize` form (which leaves out `tenant_id`); reading
    it back, they set `tenant_id` from its column.

        Attributes:
            agent_id (UUID): A registered agent of one tenant.
            created_at (datetime.datetime):
            description (str):
            evidence (AnomalyReportEvidence): What triggered it: the events and features behind a detector's report.
            id (UUID): An anomaly report about one agent.
            reported_by (Actor): `{"type": "user", "id": "0193…"}`.
            score (float): From 0 (ordinary) to 1 (as odd as it gets).
            severity (Severity): How bad, ordered.
            source (AnomalySource): Who found it.
            status (AnomalyStatus): What analysts made of it.
            type_ (AnomalyType): What kind of oddity.
            updated_at (datetime.datetime):
            model_version (int | None | Unset): The detector version that scored it (detector reports only).
            status_changed_at (datetime.datetime | None | Unset):
            status_changed_by (Actor | None | Unset):
    """

    agent_id: UUID
    created_at: datetime.datetime
    description: str
    evidence: AnomalyReportEvidence
    id: UUID
    reported_by: Actor
    score: float
    severity: Severity
    source: AnomalySource
    status: AnomalyStatus
    type_: AnomalyType
    updated_at: datetime.datetime
    model_version: int | None | Unset = UNSET
    status_changed_at: datetime.datetime | None | Unset = UNSET
    status_changed_by: Actor | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor

        agent_id = str(self.agent_id)

        created_at = self.created_at.isoformat()

        description = self.description

        evidence = self.evidence.to_dict()

        id = str(self.id)

        reported_by = self.reported_by.to_dict()

        score = self.score

        severity = self.severity.value

        source = self.source.value

        status = self.status.value

        type_ = self.type_.value

        updated_at = self.updated_at.isoformat()

        model_version: int | None | Unset
        if isinstance(self.model_version, Unset):
            model_version = UNSET
        else:
            model_version = self.model_version

        status_changed_at: None | str | Unset
        if isinstance(self.status_changed_at, Unset):
            status_changed_at = UNSET
        elif isinstance(self.status_changed_at, datetime.datetime):
            status_changed_at = self.status_changed_at.isoformat()
        else:
            status_changed_at = self.status_changed_at

        status_changed_by: dict[str, Any] | None | Unset
        if isinstance(self.status_changed_by, Unset):
            status_changed_by = UNSET
        elif isinstance(self.status_changed_by, Actor):
            status_changed_by = self.status_changed_by.to_dict()
        else:
            status_changed_by = self.status_changed_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent_id": agent_id,
                "created_at": created_at,
                "description": description,
                "evidence": evidence,
                "id": id,
                "reported_by": reported_by,
                "score": score,
                "severity": severity,
                "source": source,
                "status": status,
                "type": type_,
                "updated_at": updated_at,
            }
        )
        if model_version is not UNSET:
            field_dict["model_version"] = model_version
        if status_changed_at is not UNSET:
            field_dict["status_changed_at"] = status_changed_at
        if status_changed_by is not UNSET:
            field_dict["status_changed_by"] = status_changed_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.anomaly_report_evidence import AnomalyReportEvidence

        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))

        created_at = isoparse(d.pop("created_at"))

        description = d.pop("description")

        evidence = AnomalyReportEvidence.from_dict(d.pop("evidence"))

        id = UUID(d.pop("id"))

        reported_by = Actor.from_dict(d.pop("reported_by"))

        score = d.pop("score")

        severity = Severity(d.pop("severity"))

        source = AnomalySource(d.pop("source"))

        status = AnomalyStatus(d.pop("status"))

        type_ = AnomalyType(d.pop("type"))

        updated_at = isoparse(d.pop("updated_at"))

        def _parse_model_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        model_version = _parse_model_version(d.pop("model_version", UNSET))

        def _parse_status_changed_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_changed_at_type_0 = isoparse(data)

                return status_changed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        status_changed_at = _parse_status_changed_at(d.pop("status_changed_at", UNSET))

        def _parse_status_changed_by(data: object) -> Actor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                status_changed_by_type_0 = Actor.from_dict(data)

                return status_changed_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Actor | None | Unset, data)

        status_changed_by = _parse_status_changed_by(d.pop("status_changed_by", UNSET))

        anomaly_report = cls(
            agent_id=agent_id,
            created_at=created_at,
            description=description,
            evidence=evidence,
            id=id,
            reported_by=reported_by,
            score=score,
            severity=severity,
            source=source,
            status=status,
            type_=type_,
            updated_at=updated_at,
            model_version=model_version,
            status_changed_at=status_changed_at,
            status_changed_by=status_changed_by,
        )

        anomaly_report.additional_properties = d
        return anomaly_report

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.anomaly_type import AnomalyType
from ..models.report_source import ReportSource
from ..models.severity import Severity
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.new_anomaly_report_evidence import NewAnomalyReportEvidence


T = TypeVar("T", bound="NewAnomalyReport")


@_attrs_define
class NewAnomalyReport:
    """`POST /anomalies/report`.

    Attributes:
        agent_id (UUID): The agent it is about (a UUID of the caller's tenant).
        description (str): What was seen; 1 to 2,000 characters.
        severity (Severity): How bad, ordered.
        type_ (AnomalyType): What kind of oddity.
        evidence (NewAnomalyReportEvidence | Unset): What backs it (events, features); at most 64 KiB of JSON.
        score (float | None | Unset): From 0 to 1; by default from the severity (0.25, 0.5, 0.75, 0.95).
        source (None | ReportSource | Unset):
    """

    agent_id: UUID
    description: str
    severity: Severity
    type_: AnomalyType
    evidence: NewAnomalyReportEvidence | Unset = UNSET
    score: float | None | Unset = UNSET
    source: None | ReportSource | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent_id = str(self.agent_id)

        description = self.description

        severity = self.severity.value

        type_ = self.type_.value

        evidence: dict[str, Any] | Unset = UNSET
        if not isinstance(self.evidence, Unset):
            evidence = self.evidence.to_dict()

        score: float | None | Unset
        if isinstance(self.score, Unset):
            score = UNSET
        else:
            score = self.score

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, ReportSource):
            source = self.source.value
        else:
            source = self.source

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent_id": agent_id,
                "description": description,
                "severity": severity,
                "type": type_,
            }
        )
        if evidence is not UNSET:
            field_dict["evidence"] = evidence
        if score is not UNSET:
            field_dict["score"] = score
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_anomaly_report_evidence import NewAnomalyReportEvidence

        d = dict(src_dict)
        agent_id = UUID(d.pop("agent_id"))

        description = d.pop("description")

        severity = Severity(d.pop("severity"))

        type_ = AnomalyType(d.pop("type"))

        _evidence = d.pop("evidence", UNSET)
        evidence: NewAnomalyReportEvidence | Unset
        if isinstance(_evidence, Unset):
            evidence = UNSET
        else:
            evidence = NewAnomalyReportEvidence.from_dict(_evidence)

        def _parse_score(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        score = _parse_score(d.pop("score", UNSET))

        def _parse_source(data: object) -> None | ReportSource | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                source_type_0 = ReportSource(data)

                return source_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReportSource | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        new_anomaly_report = cls(
            agent_id=agent_id,
            description=description,
            severity=severity,
            type_=type_,
            evidence=evidence,
            score=score,
            source=source,
        )

        return new_anomaly_report

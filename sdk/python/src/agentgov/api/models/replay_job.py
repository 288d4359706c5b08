from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.job_status import JobStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.replay_report import ReplayReport


T = TypeVar("T", bound="ReplayJob")


@_attrs_define
class ReplayJob:
    """A replay (`POST /policies/{id}/replay`): a candidate version of a policy (an earlier
    version, or Rego given) and its present version evaluated side by side on the stored
    inputs of the tenant's past decisions, and the difference counted.

        Attributes:
            baseline_version (int): The policy's version the candidate is compared with (its present one when asked).
            created_at (datetime.datetime):
            from_ (datetime.datetime): The decisions replayed: recorded from `from` (inclusive) to `to` (exclusive).
            id (UUID): An asynchronous replay of a policy version over past decisions.
            policy_id (UUID): A Rego policy of one tenant.
            progress (float): From 0 to 1.
            requested_by (Actor): `{"type": "user", "id": "0193…"}`.
            status (JobStatus): States of an asynchronous job.
            to (datetime.datetime):
            candidate_version (int | None | Unset): The candidate's version, when it is one of the policy's; `null` for Rego
                given.
            error (None | str | Unset):
            finished_at (datetime.datetime | None | Unset):
            report (None | ReplayReport | Unset):
            started_at (datetime.datetime | None | Unset):
    """

    baseline_version: int
    created_at: datetime.datetime
    from_: datetime.datetime
    id: UUID
    policy_id: UUID
    progress: float
    requested_by: Actor
    status: JobStatus
    to: datetime.datetime
    candidate_version: int | None | Unset = UNSET
    error: None | str | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    report: None | ReplayReport | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.replay_report import ReplayReport

        baseline_version = self.baseline_version

        created_at = self.created_at.isoformat()

        from_ = self.from_.isoformat()

        id = str(self.id)

        policy_id = str(self.policy_id)

        progress = self.progress

        requested_by = self.requested_by.to_dict()

        status = self.status.value

        to = self.to.isoformat()

        candidate_version: int | None | Unset
        if isinstance(self.candidate_version, Unset):
            candidate_version = UNSET
        else:
            candidate_version = self.candidate_version

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        report: dict[str, Any] | None | Unset
        if isinstance(self.report, Unset):
            report = UNSET
        elif isinstance(self.report, ReplayReport):
            report = self.report.to_dict()
        else:
            report = self.report

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "baseline_version": baseline_version,
                "created_at": created_at,
                "from": from_,
                "id": id,
                "policy_id": policy_id,
                "progress": progress,
                "requested_by": requested_by,
                "status": status,
                "to": to,
            }
        )
        if candidate_version is not UNSET:
            field_dict["candidate_version"] = candidate_version
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if report is not UNSET:
            field_dict["report"] = report
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.replay_report import ReplayReport

        d = dict(src_dict)
        baseline_version = d.pop("baseline_version")

        created_at = isoparse(d.pop("created_at"))

        from_ = isoparse(d.pop("from"))

        id = UUID(d.pop("id"))

        policy_id = UUID(d.pop("policy_id"))

        progress = d.pop("progress")

        requested_by = Actor.from_dict(d.pop("requested_by"))

        status = JobStatus(d.pop("status"))

        to = isoparse(d.pop("to"))

        def _parse_candidate_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        candidate_version = _parse_candidate_version(d.pop("candidate_version", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = isoparse(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_report(data: object) -> None | ReplayReport | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                report_type_0 = ReplayReport.from_dict(data)

                return report_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReplayReport | Unset, data)

        report = _parse_report(d.pop("report", UNSET))

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = isoparse(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        replay_job = cls(
            baseline_version=baseline_version,
            created_at=created_at,
            from_=from_,
            id=id,
            policy_id=policy_id,
            progress=progress,
            requested_by=requested_by,
            status=status,
            to=to,
            candidate_version=candidate_version,
            error=error,
            finished_at=finished_at,
            report=report,
            started_at=started_at,
        )

        replay_job.additional_properties = d
        return replay_job

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

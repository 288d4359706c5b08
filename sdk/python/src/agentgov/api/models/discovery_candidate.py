from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.candidate_status import CandidateStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.discovery_event import DiscoveryEvent
    from ..models.fingerprint import Fingerprint


T = TypeVar("T", bound="DiscoveryCandidate")


@_attrs_define
class DiscoveryCandidate:
    """A group of shadow events that looks like one unregistered agent.

    Adapters keep `id`, `tenant_id` and `status` in columns and the whole record as the JSON
    text of its `Serialize` form, as for [`DiscoveryEvent`].

        Attributes:
            capabilities (list[str]): Inferred from the tool calls and endpoints seen.
            confidence (float): How sure clustering is that these events are one agent (0..1).
            created_at (datetime.datetime):
            event_count (int):
            fingerprint (Fingerprint): The attributes that define a candidate: per normalised field (`host`, `process`,
                `user_agent`, `ip_prefix`, `api_key_fingerprint`, `agent_id`, `endpoint`, `model`,
                `tool_calls`, `source`), its commonest values. Future events are matched against it.
            first_seen (datetime.datetime):
            id (UUID): A shadow-agent candidate found by clustering.
            last_seen (datetime.datetime):
            sample_events (list[DiscoveryEvent]): A few of its events, most typical first.
            status (CandidateStatus): A candidate's state.
            suggested_name (str):
            suggested_type (str):
            updated_at (datetime.datetime):
            agent_id (None | Unset | UUID):
            decided_at (datetime.datetime | None | Unset):
            decided_by (Actor | None | Unset):
            job_id (None | Unset | UUID):
            reason (None | str | Unset): Why it was dismissed.
    """

    capabilities: list[str]
    confidence: float
    created_at: datetime.datetime
    event_count: int
    fingerprint: Fingerprint
    first_seen: datetime.datetime
    id: UUID
    last_seen: datetime.datetime
    sample_events: list[DiscoveryEvent]
    status: CandidateStatus
    suggested_name: str
    suggested_type: str
    updated_at: datetime.datetime
    agent_id: None | Unset | UUID = UNSET
    decided_at: datetime.datetime | None | Unset = UNSET
    decided_by: Actor | None | Unset = UNSET
    job_id: None | Unset | UUID = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor

        capabilities = self.capabilities

        confidence = self.confidence

        created_at = self.created_at.isoformat()

        event_count = self.event_count

        fingerprint = self.fingerprint.to_dict()

        first_seen = self.first_seen.isoformat()

        id = str(self.id)

        last_seen = self.last_seen.isoformat()

        sample_events = []
        for sample_events_item_data in self.sample_events:
            sample_events_item = sample_events_item_data.to_dict()
            sample_events.append(sample_events_item)

        status = self.status.value

        suggested_name = self.suggested_name

        suggested_type = self.suggested_type

        updated_at = self.updated_at.isoformat()

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        elif isinstance(self.agent_id, UUID):
            agent_id = str(self.agent_id)
        else:
            agent_id = self.agent_id

        decided_at: None | str | Unset
        if isinstance(self.decided_at, Unset):
            decided_at = UNSET
        elif isinstance(self.decided_at, datetime.datetime):
            decided_at = self.decided_at.isoformat()
        else:
            decided_at = self.decided_at

        decided_by: dict[str, Any] | None | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        elif isinstance(self.decided_by, Actor):
            decided_by = self.decided_by.to_dict()
        else:
            decided_by = self.decided_by

        job_id: None | str | Unset
        if isinstance(self.job_id, Unset):
            job_id = UNSET
        elif isinstance(self.job_id, UUID):
            job_id = str(self.job_id)
        else:
            job_id = self.job_id

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "capabilities": capabilities,
                "confidence": confidence,
                "created_at": created_at,
                "event_count": event_count,
                "fingerprint": fingerprint,
                "first_seen": first_seen,
                "id": id,
                "last_seen": last_seen,
                "sample_events": sample_events,
                "status": status,
                "suggested_name": suggested_name,
                "suggested_type": suggested_type,
                "updated_at": updated_at,
            }
        )
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if decided_at is not UNSET:
            field_dict["decided_at"] = decided_at
        if decided_by is not UNSET:
            field_dict["decided_by"] = decided_by
        if job_id is not UNSET:
            field_dict["job_id"] = job_id
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.discovery_event import DiscoveryEvent
        from ..models.fingerprint import Fingerprint

        d = dict(src_dict)
        capabilities = cast(list[str], d.pop("capabilities"))

        confidence = d.pop("confidence")

        created_at = isoparse(d.pop("created_at"))

        event_count = d.pop("event_count")

        fingerprint = Fingerprint.from_dict(d.pop("fingerprint"))

        first_seen = isoparse(d.pop("first_seen"))

        id = UUID(d.pop("id"))

        last_seen = isoparse(d.pop("last_seen"))

        sample_events = []
        _sample_events = d.pop("sample_events")
        for sample_events_item_data in _sample_events:
            sample_events_item = DiscoveryEvent.from_dict(sample_events_item_data)

            sample_events.append(sample_events_item)

        status = CandidateStatus(d.pop("status"))

        suggested_name = d.pop("suggested_name")

        suggested_type = d.pop("suggested_type")

        updated_at = isoparse(d.pop("updated_at"))

        def _parse_agent_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                agent_id_type_0 = UUID(data)

                return agent_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))

        def _parse_decided_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decided_at_type_0 = isoparse(data)

                return decided_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        decided_at = _parse_decided_at(d.pop("decided_at", UNSET))

        def _parse_decided_by(data: object) -> Actor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                decided_by_type_0 = Actor.from_dict(data)

                return decided_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Actor | None | Unset, data)

        decided_by = _parse_decided_by(d.pop("decided_by", UNSET))

        def _parse_job_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                job_id_type_0 = UUID(data)

                return job_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        job_id = _parse_job_id(d.pop("job_id", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        discovery_candidate = cls(
            capabilities=capabilities,
            confidence=confidence,
            created_at=created_at,
            event_count=event_count,
            fingerprint=fingerprint,
            first_seen=first_seen,
            id=id,
            last_seen=last_seen,
            sample_events=sample_events,
            status=status,
            suggested_name=suggested_name,
            suggested_type=suggested_type,
            updated_at=updated_at,
            agent_id=agent_id,
            decided_at=decided_at,
            decided_by=decided_by,
            job_id=job_id,
            reason=reason,
        )

        discovery_candidate.additional_properties = d
        return discovery_candidate

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

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.audit_origin import AuditOrigin
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.audit_record_details import AuditRecordDetails


T = TypeVar("T", bound="AuditRecord")


@_attrs_define
class AuditRecord:
    """One record of the audit log.

    Attributes:
        actor (Actor): `{"type": "user", "id": "0193…"}`.
        details (AuditRecordDetails): Free-form JSON object: input, output, reasoning, context…
        event_type (str): E.g. `agent.action`, `hitl.approved`, `user.role_changed` (the service's own) or
            `app.tool_call` (a client's).
        hash_ (str): SHA-256 of `prev_hash` and the record's canonical bytes, hex.
        id (UUID): A record of the audit log.
        origin (AuditOrigin): Who wrote a record: the service itself, or a client through `POST /audit/log`.

            Derived from the record's `event_type` (which the hash covers), not stored: clients may
            not write event types of the service's namespaces, so a record of such a type is the
            service's. Records written before that rule (agentgov before issue 32) under a type of
            those namespaces also read `service`.
        prev_hash (str): Hash of the previous record of the tenant (64 zeros for the first). Example:
            0000000000000000000000000000000000000000000000000000000000000000.
        seq (int): Position in the tenant's chain: 1, 2, 3… without gaps.
        timestamp (datetime.datetime):
        action (None | str | Unset):
        agent_id (None | Unset | UUID):
        decision (None | str | Unset):
        resource (None | str | Unset):
        risk_score (float | None | Unset):
        session_id (None | str | Unset): The agent's session (a conversation or run id) the record belongs to: a policy
            check's `session_id`, an observation's session; `null` otherwise. Hashed when present.
    """

    actor: Actor
    details: AuditRecordDetails
    event_type: str
    hash_: str
    id: UUID
    origin: AuditOrigin
    prev_hash: str
    seq: int
    timestamp: datetime.datetime
    action: None | str | Unset = UNSET
    agent_id: None | Unset | UUID = UNSET
    decision: None | str | Unset = UNSET
    resource: None | str | Unset = UNSET
    risk_score: float | None | Unset = UNSET
    session_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        actor = self.actor.to_dict()

        details = self.details.to_dict()

        event_type = self.event_type

        hash_ = self.hash_

        id = str(self.id)

        origin = self.origin.value

        prev_hash = self.prev_hash

        seq = self.seq

        timestamp = self.timestamp.isoformat()

        action: None | str | Unset
        if isinstance(self.action, Unset):
            action = UNSET
        else:
            action = self.action

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        elif isinstance(self.agent_id, UUID):
            agent_id = str(self.agent_id)
        else:
            agent_id = self.agent_id

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        else:
            decision = self.decision

        resource: None | str | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        else:
            resource = self.resource

        risk_score: float | None | Unset
        if isinstance(self.risk_score, Unset):
            risk_score = UNSET
        else:
            risk_score = self.risk_score

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "actor": actor,
                "details": details,
                "event_type": event_type,
                "hash": hash_,
                "id": id,
                "origin": origin,
                "prev_hash": prev_hash,
                "seq": seq,
                "timestamp": timestamp,
            }
        )
        if action is not UNSET:
            field_dict["action"] = action
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if decision is not UNSET:
            field_dict["decision"] = decision
        if resource is not UNSET:
            field_dict["resource"] = resource
        if risk_score is not UNSET:
            field_dict["risk_score"] = risk_score
        if session_id is not UNSET:
            field_dict["session_id"] = session_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor
        from ..models.audit_record_details import AuditRecordDetails

        d = dict(src_dict)
        actor = Actor.from_dict(d.pop("actor"))

        details = AuditRecordDetails.from_dict(d.pop("details"))

        event_type = d.pop("event_type")

        hash_ = d.pop("hash")

        id = UUID(d.pop("id"))

        origin = AuditOrigin(d.pop("origin"))

        prev_hash = d.pop("prev_hash")

        seq = d.pop("seq")

        timestamp = isoparse(d.pop("timestamp"))

        def _parse_action(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        action = _parse_action(d.pop("action", UNSET))

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

        def _parse_decision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))

        def _parse_resource(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        def _parse_risk_score(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        risk_score = _parse_risk_score(d.pop("risk_score", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))

        audit_record = cls(
            actor=actor,
            details=details,
            event_type=event_type,
            hash_=hash_,
            id=id,
            origin=origin,
            prev_hash=prev_hash,
            seq=seq,
            timestamp=timestamp,
            action=action,
            agent_id=agent_id,
            decision=decision,
            resource=resource,
            risk_score=risk_score,
            session_id=session_id,
        )

        audit_record.additional_properties = d
        return audit_record

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

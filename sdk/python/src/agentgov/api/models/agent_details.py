from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.agent_status import AgentStatus
from ..models.risk_level import RiskLevel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_metadata import AgentMetadata
    from ..models.agent_permissions import AgentPermissions
    from ..models.embedding_summary import EmbeddingSummary
    from ..models.risk_factor import RiskFactor


T = TypeVar("T", bound="AgentDetails")


@_attrs_define
class AgentDetails:
    """`GET /agents/{id}/details`.

    Attributes:
        capabilities (list[str]):
        created_at (datetime.datetime):
        id (UUID): A registered agent of one tenant.
        metadata (AgentMetadata):
        name (str): Unique within the tenant.
        permissions (AgentPermissions): What the agent may touch, e.g. `{"payments": "write", "crm": ["read"]}`.
        predicted_type (str): The type inferred from name, description and capabilities by the built-in classifier.
        risk (RiskLevel): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high` (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        risk_score (float): From 0 to 1.
        status (AgentStatus): An agent's lifecycle state as stored. An `active` agent that has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        tenant_id (UUID): A tenant: the unit of isolation.
        type_ (str): The type the registrant declared, e.g. `llm`.
        updated_at (datetime.datetime):
        predicted_type_confidence (float): How sure the type classifier is of `predicted_type`, 0 to 1.
        risk_factors (list[RiskFactor]): Strongest first.
        description (None | str | Unset):
        last_seen_at (datetime.datetime | None | Unset): The last heartbeat; `null` before the first.
        embedding (EmbeddingSummary | None | Unset):
    """

    capabilities: list[str]
    created_at: datetime.datetime
    id: UUID
    metadata: AgentMetadata
    name: str
    permissions: AgentPermissions
    predicted_type: str
    risk: RiskLevel
    risk_score: float
    status: AgentStatus
    tenant_id: UUID
    type_: str
    updated_at: datetime.datetime
    predicted_type_confidence: float
    risk_factors: list[RiskFactor]
    description: None | str | Unset = UNSET
    last_seen_at: datetime.datetime | None | Unset = UNSET
    embedding: EmbeddingSummary | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.embedding_summary import EmbeddingSummary

        capabilities = self.capabilities

        created_at = self.created_at.isoformat()

        id = str(self.id)

        metadata = self.metadata.to_dict()

        name = self.name

        permissions = self.permissions.to_dict()

        predicted_type = self.predicted_type

        risk = self.risk.value

        risk_score = self.risk_score

        status = self.status.value

        tenant_id = str(self.tenant_id)

        type_ = self.type_

        updated_at = self.updated_at.isoformat()

        predicted_type_confidence = self.predicted_type_confidence

        risk_factors = []
        for risk_factors_item_data in self.risk_factors:
            risk_factors_item = risk_factors_item_data.to_dict()
            risk_factors.append(risk_factors_item)

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        last_seen_at: None | str | Unset
        if isinstance(self.last_seen_at, Unset):
            last_seen_at = UNSET
        elif isinstance(self.last_seen_at, datetime.datetime):
            last_seen_at = self.last_seen_at.isoformat()
        else:
            last_seen_at = self.last_seen_at

        embedding: dict[str, Any] | None | Unset
        if isinstance(self.embedding, Unset):
            embedding = UNSET
        elif isinstance(self.embedding, EmbeddingSummary):
            embedding = self.embedding.to_dict()
        else:
            embedding = self.embedding

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "capabilities": capabilities,
                "created_at": created_at,
                "id": id,
                "metadata": metadata,
                "name": name,
                "permissions": permissions,
                "predicted_type": predicted_type,
                "risk": risk,
                "risk_score": risk_score,
                "status": status,
                "tenant_id": tenant_id,
                "type": type_,
                "updated_at": updated_at,
                "predicted_type_confidence": predicted_type_confidence,
                "risk_factors": risk_factors,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if last_seen_at is not UNSET:
            field_dict["last_seen_at"] = last_seen_at
        if embedding is not UNSET:
            field_dict["embedding"] = embedding

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_metadata import AgentMetadata
        from ..models.agent_permissions import AgentPermissions
        from ..models.embedding_summary import EmbeddingSummary
        from ..models.risk_factor import RiskFactor

        d = dict(src_dict)
        capabilities = cast(list[str], d.pop("capabilities"))

        created_at = isoparse(d.pop("created_at"))

        id = UUID(d.pop("id"))

        metadata = AgentMetadata.from_dict(d.pop("metadata"))

        name = d.pop("name")

        permissions = AgentPermissions.from_dict(d.pop("permissions"))

        predicted_type = d.pop("predicted_type")

        risk = RiskLevel(d.pop("risk"))

        risk_score = d.pop("risk_score")

        status = AgentStatus(d.pop("status"))

        tenant_id = UUID(d.pop("tenant_id"))

        type_ = d.pop("type")

        updated_at = isoparse(d.pop("updated_at"))

        predicted_type_confidence = d.pop("predicted_type_confidence")

        risk_factors = []
        _risk_factors = d.pop("risk_factors")
        for risk_factors_item_data in _risk_factors:
            risk_factors_item = RiskFactor.from_dict(risk_factors_item_data)

            risk_factors.append(risk_factors_item)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_last_seen_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_seen_at_type_0 = isoparse(data)

                return last_seen_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_seen_at = _parse_last_seen_at(d.pop("last_seen_at", UNSET))

        def _parse_embedding(data: object) -> EmbeddingSummary | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                embedding_type_0 = EmbeddingSummary.from_dict(data)

                return embedding_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EmbeddingSummary | None | Unset, data)

        embedding = _parse_embedding(d.pop("embedding", UNSET))

        agent_details = cls(
            capabilities=capabilities,
            created_at=created_at,
            id=id,
            metadata=metadata,
            name=name,
            permissions=permissions,
            predicted_type=predicted_type,
            risk=risk,
            risk_score=risk_score,
            status=status,
            tenant_id=tenant_id,
            type_=type_,
            updated_at=updated_at,
            predicted_type_confidence=predicted_type_confidence,
            risk_factors=risk_factors,
            description=description,
            last_seen_at=last_seen_at,
            embedding=embedding,
        )

        agent_details.additional_properties = d
        return agent_details

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

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
    from ..models.page_agent_items_item_metadata import PageAgentItemsItemMetadata
    from ..models.page_agent_items_item_permissions import PageAgentItemsItemPermissions


T = TypeVar("T", bound="PageAgentItemsItem")


@_attrs_define
class PageAgentItemsItem:
    """A registered agent.

    Attributes:
        capabilities (list[str]):
        created_at (datetime.datetime):
        id (UUID): A registered agent of one tenant.
        metadata (PageAgentItemsItemMetadata):
        name (str): Unique within the tenant.
        permissions (PageAgentItemsItemPermissions): What the agent may touch, e.g. `{"payments": "write", "crm":
            ["read"]}`.
        predicted_type (str): The type inferred from name, description and capabilities by the built-in classifier.
        risk (RiskLevel): A risk level: by default `low` (< 0.3), `medium` (< 0.6), `high` (< 0.85), `critical`;
            a tenant may move the bounds ([`RiskLevels`]).
        risk_score (float): From 0 to 1.
        status (AgentStatus): An agent's lifecycle state as stored. An `active` agent that has not been seen for the
            configured time is *reported* as `inactive` (see [`Agent::effective_status`]).
        tenant_id (UUID): A tenant: the unit of isolation.
        type_ (str): The type the registrant declared, e.g. `llm`.
        updated_at (datetime.datetime):
        description (None | str | Unset):
        last_seen_at (datetime.datetime | None | Unset): The last heartbeat; `null` before the first.
    """

    capabilities: list[str]
    created_at: datetime.datetime
    id: UUID
    metadata: PageAgentItemsItemMetadata
    name: str
    permissions: PageAgentItemsItemPermissions
    predicted_type: str
    risk: RiskLevel
    risk_score: float
    status: AgentStatus
    tenant_id: UUID
    type_: str
    updated_at: datetime.datetime
    description: None | str | Unset = UNSET
    last_seen_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
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
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if last_seen_at is not UNSET:
            field_dict["last_seen_at"] = last_seen_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.page_agent_items_item_metadata import PageAgentItemsItemMetadata
        from ..models.page_agent_items_item_permissions import PageAgentItemsItemPermissions

        d = dict(src_dict)
        capabilities = cast(list[str], d.pop("capabilities"))

        created_at = isoparse(d.pop("created_at"))

        id = UUID(d.pop("id"))

        metadata = PageAgentItemsItemMetadata.from_dict(d.pop("metadata"))

        name = d.pop("name")

        permissions = PageAgentItemsItemPermissions.from_dict(d.pop("permissions"))

        predicted_type = d.pop("predicted_type")

        risk = RiskLevel(d.pop("risk"))

        risk_score = d.pop("risk_score")

        status = AgentStatus(d.pop("status"))

        tenant_id = UUID(d.pop("tenant_id"))

        type_ = d.pop("type")

        updated_at = isoparse(d.pop("updated_at"))

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

        page_agent_items_item = cls(
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
            description=description,
            last_seen_at=last_seen_at,
        )

        page_agent_items_item.additional_properties = d
        return page_agent_items_item

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

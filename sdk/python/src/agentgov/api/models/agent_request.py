from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.agent_status import AgentStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_request_metadata import AgentRequestMetadata
    from ..models.agent_request_permissions import AgentRequestPermissions


T = TypeVar("T", bound="AgentRequest")


@_attrs_define
class AgentRequest:
    """`POST /agents/register` and `PUT /agents/{id}` (a full update: what is left out is
    reset to its default, except `status`, which an update without it keeps).

        Attributes:
            name (str): Unique within the tenant; 1 to 200 characters, not all blank, no control characters
                (stored trimmed).
            type_ (str): The declared type, e.g. `llm`; 1 to 50 characters, as `name`.
            capabilities (list[str] | Unset): At most 100, each 1 to 200 characters without white space at either end or
                control characters, no duplicates.
            description (None | str | Unset): At most 2,000 characters; no control characters but newlines and tabs.
            metadata (AgentRequestMetadata | Unset): A JSON object; at most 16 KiB.
            permissions (AgentRequestPermissions | Unset): A JSON object of resource → access, e.g. `{"payments": "write"}`;
                at most 16 KiB.
            status (AgentStatus | None | Unset):
    """

    name: str
    type_: str
    capabilities: list[str] | Unset = UNSET
    description: None | str | Unset = UNSET
    metadata: AgentRequestMetadata | Unset = UNSET
    permissions: AgentRequestPermissions | Unset = UNSET
    status: AgentStatus | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        type_ = self.type_

        capabilities: list[str] | Unset = UNSET
        if not isinstance(self.capabilities, Unset):
            capabilities = self.capabilities

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        permissions: dict[str, Any] | Unset = UNSET
        if not isinstance(self.permissions, Unset):
            permissions = self.permissions.to_dict()

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        elif isinstance(self.status, AgentStatus):
            status = self.status.value
        else:
            status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "type": type_,
            }
        )
        if capabilities is not UNSET:
            field_dict["capabilities"] = capabilities
        if description is not UNSET:
            field_dict["description"] = description
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if permissions is not UNSET:
            field_dict["permissions"] = permissions
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.agent_request_metadata import AgentRequestMetadata
        from ..models.agent_request_permissions import AgentRequestPermissions

        d = dict(src_dict)
        name = d.pop("name")

        type_ = d.pop("type")

        capabilities = cast(list[str], d.pop("capabilities", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        _metadata = d.pop("metadata", UNSET)
        metadata: AgentRequestMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = AgentRequestMetadata.from_dict(_metadata)

        _permissions = d.pop("permissions", UNSET)
        permissions: AgentRequestPermissions | Unset
        if isinstance(_permissions, Unset):
            permissions = UNSET
        else:
            permissions = AgentRequestPermissions.from_dict(_permissions)

        def _parse_status(data: object) -> AgentStatus | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                status_type_0 = AgentStatus(data)

                return status_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentStatus | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        agent_request = cls(
            name=name,
            type_=type_,
            capabilities=capabilities,
            description=description,
            metadata=metadata,
            permissions=permissions,
            status=status,
        )

        return agent_request

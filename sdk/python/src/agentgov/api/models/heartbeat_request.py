from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.agent_status import AgentStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.heartbeat_request_metadata_type_0 import HeartbeatRequestMetadataType0


T = TypeVar("T", bound="HeartbeatRequest")


@_attrs_define
class HeartbeatRequest:
    """`POST /agents/{id}/heartbeat` (and the webhook's `agent.heartbeat`).

    Attributes:
        metadata (HeartbeatRequestMetadataType0 | None | Unset): Replaces the stored metadata.
        status (AgentStatus | None | Unset):
    """

    metadata: HeartbeatRequestMetadataType0 | None | Unset = UNSET
    status: AgentStatus | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.heartbeat_request_metadata_type_0 import HeartbeatRequestMetadataType0

        metadata: dict[str, Any] | None | Unset
        if isinstance(self.metadata, Unset):
            metadata = UNSET
        elif isinstance(self.metadata, HeartbeatRequestMetadataType0):
            metadata = self.metadata.to_dict()
        else:
            metadata = self.metadata

        status: None | str | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        elif isinstance(self.status, AgentStatus):
            status = self.status.value
        else:
            status = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.heartbeat_request_metadata_type_0 import HeartbeatRequestMetadataType0

        d = dict(src_dict)

        def _parse_metadata(data: object) -> HeartbeatRequestMetadataType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                metadata_type_0 = HeartbeatRequestMetadataType0.from_dict(data)

                return metadata_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HeartbeatRequestMetadataType0 | None | Unset, data)

        metadata = _parse_metadata(d.pop("metadata", UNSET))

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

        heartbeat_request = cls(
            metadata=metadata,
            status=status,
        )

        return heartbeat_request

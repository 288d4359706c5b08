from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field
from dateutil.parser import isoparse

from ..models.event_disposition import EventDisposition
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.discovery_event_attributes import DiscoveryEventAttributes


T = TypeVar("T", bound="DiscoveryEvent")


@_attrs_define
class DiscoveryEvent:
    """An observation of activity that looks like an AI agent, as stored.

    Adapters keep `id`, `tenant_id` and `disposition` in columns and the whole record as the
    JSON text of its `Serialize` form (which leaves out `tenant_id`); reading it back, they
    set `tenant_id` from its column.

        Attributes:
            disposition (EventDisposition): What became of an ingested event.
            id (UUID): An ingested observation of possible shadow-agent activity.
            received_at (datetime.datetime): When it was ingested.
            source (str): Who saw it: a gateway, proxy or log source.
            timestamp (datetime.datetime): When it was seen.
            agent_id (None | Unset | UUID):
            api_key_fingerprint (None | str | Unset):
            attributed_agent_id (None | Unset | UUID):
            attributes (DiscoveryEventAttributes | Unset):
            candidate_id (None | Unset | UUID):
            endpoint (None | str | Unset):
            host (None | str | Unset):
            ip (None | str | Unset):
            model (None | str | Unset):
            process (None | str | Unset):
            tool_calls (list[str] | Unset):
            user_agent (None | str | Unset):
    """

    disposition: EventDisposition
    id: UUID
    received_at: datetime.datetime
    source: str
    timestamp: datetime.datetime
    agent_id: None | Unset | UUID = UNSET
    api_key_fingerprint: None | str | Unset = UNSET
    attributed_agent_id: None | Unset | UUID = UNSET
    attributes: DiscoveryEventAttributes | Unset = UNSET
    candidate_id: None | Unset | UUID = UNSET
    endpoint: None | str | Unset = UNSET
    host: None | str | Unset = UNSET
    ip: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    process: None | str | Unset = UNSET
    tool_calls: list[str] | Unset = UNSET
    user_agent: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        disposition = self.disposition.value

        id = str(self.id)

        received_at = self.received_at.isoformat()

        source = self.source

        timestamp = self.timestamp.isoformat()

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        elif isinstance(self.agent_id, UUID):
            agent_id = str(self.agent_id)
        else:
            agent_id = self.agent_id

        api_key_fingerprint: None | str | Unset
        if isinstance(self.api_key_fingerprint, Unset):
            api_key_fingerprint = UNSET
        else:
            api_key_fingerprint = self.api_key_fingerprint

        attributed_agent_id: None | str | Unset
        if isinstance(self.attributed_agent_id, Unset):
            attributed_agent_id = UNSET
        elif isinstance(self.attributed_agent_id, UUID):
            attributed_agent_id = str(self.attributed_agent_id)
        else:
            attributed_agent_id = self.attributed_agent_id

        attributes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.attributes, Unset):
            attributes = self.attributes.to_dict()

        candidate_id: None | str | Unset
        if isinstance(self.candidate_id, Unset):
            candidate_id = UNSET
        elif isinstance(self.candidate_id, UUID):
            candidate_id = str(self.candidate_id)
        else:
            candidate_id = self.candidate_id

        endpoint: None | str | Unset
        if isinstance(self.endpoint, Unset):
            endpoint = UNSET
        else:
            endpoint = self.endpoint

        host: None | str | Unset
        if isinstance(self.host, Unset):
            host = UNSET
        else:
            host = self.host

        ip: None | str | Unset
        if isinstance(self.ip, Unset):
            ip = UNSET
        else:
            ip = self.ip

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        process: None | str | Unset
        if isinstance(self.process, Unset):
            process = UNSET
        else:
            process = self.process

        tool_calls: list[str] | Unset = UNSET
        if not isinstance(self.tool_calls, Unset):
            tool_calls = self.tool_calls

        user_agent: None | str | Unset
        if isinstance(self.user_agent, Unset):
            user_agent = UNSET
        else:
            user_agent = self.user_agent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "disposition": disposition,
                "id": id,
                "received_at": received_at,
                "source": source,
                "timestamp": timestamp,
            }
        )
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if api_key_fingerprint is not UNSET:
            field_dict["api_key_fingerprint"] = api_key_fingerprint
        if attributed_agent_id is not UNSET:
            field_dict["attributed_agent_id"] = attributed_agent_id
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
        if candidate_id is not UNSET:
            field_dict["candidate_id"] = candidate_id
        if endpoint is not UNSET:
            field_dict["endpoint"] = endpoint
        if host is not UNSET:
            field_dict["host"] = host
        if ip is not UNSET:
            field_dict["ip"] = ip
        if model is not UNSET:
            field_dict["model"] = model
        if process is not UNSET:
            field_dict["process"] = process
        if tool_calls is not UNSET:
            field_dict["tool_calls"] = tool_calls
        if user_agent is not UNSET:
            field_dict["user_agent"] = user_agent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.discovery_event_attributes import DiscoveryEventAttributes

        d = dict(src_dict)
        disposition = EventDisposition(d.pop("disposition"))

        id = UUID(d.pop("id"))

        received_at = isoparse(d.pop("received_at"))

        source = d.pop("source")

        timestamp = isoparse(d.pop("timestamp"))

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

        def _parse_api_key_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        api_key_fingerprint = _parse_api_key_fingerprint(d.pop("api_key_fingerprint", UNSET))

        def _parse_attributed_agent_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                attributed_agent_id_type_0 = UUID(data)

                return attributed_agent_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        attributed_agent_id = _parse_attributed_agent_id(d.pop("attributed_agent_id", UNSET))

        _attributes = d.pop("attributes", UNSET)
        attributes: DiscoveryEventAttributes | Unset
        if isinstance(_attributes, Unset):
            attributes = UNSET
        else:
            attributes = DiscoveryEventAttributes.from_dict(_attributes)

        def _parse_candidate_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                candidate_id_type_0 = UUID(data)

                return candidate_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        candidate_id = _parse_candidate_id(d.pop("candidate_id", UNSET))

        def _parse_endpoint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        endpoint = _parse_endpoint(d.pop("endpoint", UNSET))

        def _parse_host(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        host = _parse_host(d.pop("host", UNSET))

        def _parse_ip(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        ip = _parse_ip(d.pop("ip", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_process(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        process = _parse_process(d.pop("process", UNSET))

        tool_calls = cast(list[str], d.pop("tool_calls", UNSET))

        def _parse_user_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user_agent = _parse_user_agent(d.pop("user_agent", UNSET))

        discovery_event = cls(
            disposition=disposition,
            id=id,
            received_at=received_at,
            source=source,
            timestamp=timestamp,
            agent_id=agent_id,
            api_key_fingerprint=api_key_fingerprint,
            attributed_agent_id=attributed_agent_id,
            attributes=attributes,
            candidate_id=candidate_id,
            endpoint=endpoint,
            host=host,
            ip=ip,
            model=model,
            process=process,
            tool_calls=tool_calls,
            user_agent=user_agent,
        )

        discovery_event.additional_properties = d
        return discovery_event

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

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ingest_event_attributes import IngestEventAttributes


T = TypeVar("T", bound="IngestEvent")


@_attrs_define
class IngestEvent:
    """
    Attributes:
        source (str): Who saw it (a gateway, proxy or log source): 1 to 100 characters.
        agent_id (None | str | Unset): The registered agent, when the source knows it (a UUID).
        api_key_fingerprint (None | str | Unset): A fingerprint (e.g. a hash) of the API key used, at most 200
            characters; never the key.
        attributes (IngestEventAttributes | Unset): Anything else the source reports; a JSON object of at most 16 KiB.
        endpoint (None | str | Unset): The URL or path called (e.g. an LLM API), at most 2,048 characters.
        host (None | str | Unset): The machine (host name), at most 255 characters.
        ip (None | str | Unset): The client's IPv4 or IPv6 address.
        model (None | str | Unset): The model asked for, at most 200 characters.
        process (None | str | Unset): The process command line, at most 1,024 characters.
        timestamp (None | str | Unset): When it was seen (RFC 3339); default: when it is ingested. At most 5 minutes
            ahead.
        tool_calls (list[str] | Unset): Names of the tools the call used; at most 64, each 1 to 200 characters.
        user_agent (None | str | Unset): The HTTP user agent, at most 1,024 characters.
    """

    source: str
    agent_id: None | str | Unset = UNSET
    api_key_fingerprint: None | str | Unset = UNSET
    attributes: IngestEventAttributes | Unset = UNSET
    endpoint: None | str | Unset = UNSET
    host: None | str | Unset = UNSET
    ip: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    process: None | str | Unset = UNSET
    timestamp: None | str | Unset = UNSET
    tool_calls: list[str] | Unset = UNSET
    user_agent: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        source = self.source

        agent_id: None | str | Unset
        if isinstance(self.agent_id, Unset):
            agent_id = UNSET
        else:
            agent_id = self.agent_id

        api_key_fingerprint: None | str | Unset
        if isinstance(self.api_key_fingerprint, Unset):
            api_key_fingerprint = UNSET
        else:
            api_key_fingerprint = self.api_key_fingerprint

        attributes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.attributes, Unset):
            attributes = self.attributes.to_dict()

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

        timestamp: None | str | Unset
        if isinstance(self.timestamp, Unset):
            timestamp = UNSET
        else:
            timestamp = self.timestamp

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
                "source": source,
            }
        )
        if agent_id is not UNSET:
            field_dict["agent_id"] = agent_id
        if api_key_fingerprint is not UNSET:
            field_dict["api_key_fingerprint"] = api_key_fingerprint
        if attributes is not UNSET:
            field_dict["attributes"] = attributes
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
        if timestamp is not UNSET:
            field_dict["timestamp"] = timestamp
        if tool_calls is not UNSET:
            field_dict["tool_calls"] = tool_calls
        if user_agent is not UNSET:
            field_dict["user_agent"] = user_agent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ingest_event_attributes import IngestEventAttributes

        d = dict(src_dict)
        source = d.pop("source")

        def _parse_agent_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent_id = _parse_agent_id(d.pop("agent_id", UNSET))

        def _parse_api_key_fingerprint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        api_key_fingerprint = _parse_api_key_fingerprint(d.pop("api_key_fingerprint", UNSET))

        _attributes = d.pop("attributes", UNSET)
        attributes: IngestEventAttributes | Unset
        if isinstance(_attributes, Unset):
            attributes = UNSET
        else:
            attributes = IngestEventAttributes.from_dict(_attributes)

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

        def _parse_timestamp(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timestamp = _parse_timestamp(d.pop("timestamp", UNSET))

        tool_calls = cast(list[str], d.pop("tool_calls", UNSET))

        def _parse_user_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user_agent = _parse_user_agent(d.pop("user_agent", UNSET))

        ingest_event = cls(
            source=source,
            agent_id=agent_id,
            api_key_fingerprint=api_key_fingerprint,
            attributes=attributes,
            endpoint=endpoint,
            host=host,
            ip=ip,
            model=model,
            process=process,
            timestamp=timestamp,
            tool_calls=tool_calls,
            user_agent=user_agent,
        )

        ingest_event.additional_properties = d
        return ingest_event

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
